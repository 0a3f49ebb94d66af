from __future__ import annotations

from agcore.code import chunk_source, read_symbols
from tests.code.workspace import FILES


def test_python_definitions_with_signatures_and_owners() -> None:
    found = read_symbols("shop/models.py", FILES["shop/models.py"].encode())
    by_name = {s.qualified: s for s in found.symbols}
    assert set(by_name) == {"Invoice", "Invoice.add_line", "parse_amount"}  # no local helper
    assert by_name["Invoice.add_line"].signature == "def add_line(self, description: str, cents: int) -> None"
    assert by_name["parse_amount"].kind == "def"
    assert (by_name["parse_amount"].start_line, by_name["parse_amount"].end_line) == (19, 20)
    assert (found.identifiers["total_cents"], found.identifiers[".total_cents"]) == (1, 1)  # bare, attribute


def test_typescript_go_and_rust_definitions() -> None:
    ts = read_symbols("web/client.ts", FILES["web/client.ts"].encode()).symbols
    assert [s.qualified for s in ts] == [
        "ApiClient", "ApiClient.constructor", "ApiClient.fetchInvoices", "retryWithBackoff"]
    assert ts[2].signature == "async fetchInvoices(customerId: string): Promise<string[]>"
    assert ts[3].signature == "function retryWithBackoff(attempts: number): number"
    go = read_symbols("m.go", b"package m\ntype Cart struct{}\nfunc (c *Cart) Total() int { return 0 }\n")
    assert [(s.name, s.kind) for s in go.symbols] == [("Cart", "type"), ("Total", "func")]
    rust = read_symbols("lib.rs", b"struct S;\nimpl S {\n    fn new() -> Self { S }\n}\n").symbols
    assert [s.qualified for s in rust] == ["S", "S.new"]
    assert rust[1].signature == "fn new() -> Self"


def test_a_file_no_grammar_reads_has_identifiers_only() -> None:
    found = read_symbols("notes.txt", b"def looks_like_python(): pass")
    assert found.symbols == ()
    assert found.identifiers["looks_like_python"] == 1


def test_chunks_follow_definitions_and_cover_the_code_between() -> None:
    chunks = chunk_source("shop/models.py", FILES["shop/models.py"].encode())
    spans = [(c.start_line, c.end_line, c.symbol) for c in chunks]
    # The decorator goes with its class.
    assert spans == [(1, 5, None), (6, 16, "Invoice"), (19, 20, "parse_amount")]
    assert chunks[1].text.startswith("@dataclass\nclass Invoice:")
    assert chunks[2].text.startswith("def parse_amount(text: str) -> int:")


def test_a_long_class_is_cut_into_its_head_and_methods() -> None:
    methods = "".join(f"    def m{i}(self) -> int:\n" + "        x = 1\n" * 8 + "        return x\n\n"
                      for i in range(10))
    source = f"class Big:\n    '''Many methods.'''\n\n{methods}".encode()
    chunks = chunk_source("big.py", source, max_lines=40)
    assert [c.symbol for c in chunks] == ["Big", *(f"Big.m{i}" for i in range(10))]
    assert chunks[0].end_line == chunks[1].start_line - 1
    assert all(c.end_line - c.start_line < 40 for c in chunks)


def test_text_files_fall_back_to_line_windows() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 151)).encode()
    chunks = chunk_source("notes.md", text, max_lines=80)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 80), (71, 150)]
    assert all(c.symbol is None for c in chunks)
    assert chunk_source("empty.md", b"\n\n   \n") == []
