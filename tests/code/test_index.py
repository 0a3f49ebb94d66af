from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest

from agcore.code import CodeHashingEmbedder, CodeHit, CodeIndex, format_hits, search_code_tool
from agcore.llm.types import ToolUseBlock
from agcore.memory import HashingEmbedder, Retriever
from agcore.tools import ToolContext, ToolRegistry
from tests.code.workspace import touch_later, write_workspace

pytestmark = pytest.mark.anyio


async def test_search_finds_functions_by_words_and_by_identifier(tmp_path: Path) -> None:
    async with CodeIndex(write_workspace(tmp_path)) as index:
        stats = await index.refresh()
        assert (stats.indexed, stats.removed) == (5, 0)
        for mode in ("hybrid", "lexical", "semantic"):
            hits = await index.search("charge the card through the payment gateway", mode=mode)
            assert (hits[0].path, hits[0].symbol) == ("shop/billing.py", "charge_customer"), mode
            assert (hits[0].start_line, hits[0].end_line) == (4, 7)
        camel = await index.search("retry with backoff", mode="lexical")
        assert camel[0].symbol == "retryWithBackoff"  # camelCase names match their words
        docs = await index.search("export invoices as CSV", limit=1)
        assert docs[0].path == "docs/guide.md"
        assert docs[0].symbol is None


async def test_search_under_a_path_keeps_only_those_files(tmp_path: Path) -> None:
    async with CodeIndex(write_workspace(tmp_path)) as index:
        await index.refresh()
        for mode in ("hybrid", "lexical", "semantic"):
            hits = await index.search("invoice", limit=10, mode=mode, under="shop/b")
            assert hits, mode
            assert {h.path for h in hits} == {"shop/billing.py"}, mode
        assert await index.search("invoice", under="nowhere/") == []


async def test_refresh_follows_edits_and_deletions(tmp_path: Path) -> None:
    root = write_workspace(tmp_path)
    async with CodeIndex(root) as index:
        await index.refresh()
        touch_later(root / "shop/reports.py",
                    "def quarterly_forecast(quarter: int) -> int:\n    return quarter\n")
        (root / "shop/billing.py").unlink()
        stats = await index.refresh()
        assert (stats.indexed, stats.removed) == (1, 1)
        assert (await index.search("quarterly forecast", limit=1))[0].symbol == "quarterly_forecast"
        assert await index.search("monthly_revenue", mode="lexical") == []
        paths = {h.path for h in await index.search("charge customer card refund", limit=20)}
        assert "shop/billing.py" not in paths
        again = await index.refresh()
        assert (again.indexed, again.removed) == (0, 0)


async def test_the_index_file_is_reused_across_processes(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    db = tmp_path / "code.sqlite"
    async with CodeIndex(root, db_path=db) as index:
        first = await index.refresh()
    async with CodeIndex(root, db_path=db) as index:
        reopened = await index.refresh()
        assert reopened.indexed == 0
        assert reopened.chunks == first.chunks
        assert (await index.search("monthly revenue", limit=1))[0].symbol == "monthly_revenue"
    # Another embedder's vectors are not comparable: everything is embedded again.
    async with CodeIndex(root, db_path=db, embedder=HashingEmbedder(1024)) as index:
        assert (await index.refresh()).indexed == 5
        nearest = await index.search("monthly revenue", limit=1, mode="semantic")
        assert nearest[0].symbol == "monthly_revenue"


async def test_watch_reindexes_changes_and_stops_with_its_task_group(tmp_path: Path) -> None:
    root = write_workspace(tmp_path)
    async with CodeIndex(root) as index, anyio.create_task_group() as tg:
        await tg.start(lambda task_status: index.watch(interval=0.05, task_status=task_status))
        assert (await index.search("monthly revenue", limit=1))[0].symbol == "monthly_revenue"
        (root / "shop/tax.py").write_text("def vat_rate(country: str) -> float:\n    return 0.2\n")
        with anyio.fail_after(10):
            while not await index.search("vat_rate", mode="lexical"):  # noqa: ASYNC110
                await anyio.sleep(0.02)
        tg.cancel_scope.cancel()


class _BrokenEmbedder:
    name = "broken"

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0]]


async def test_an_embedder_that_miscounts_is_refused(tmp_path: Path) -> None:
    async with CodeIndex(write_workspace(tmp_path), embedder=_BrokenEmbedder()) as index:
        with pytest.raises(ValueError, match="returned 1 vectors for"):
            await index.refresh()


async def test_bad_arguments_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="needs a directory"):
        CodeIndex(tmp_path / "missing")
    async with CodeIndex(tmp_path) as index:
        with pytest.raises(ValueError, match="use 'hybrid', 'semantic' or 'lexical'"):
            await index.search("x", mode="fuzzy")  # type: ignore[arg-type]
        assert await index.search("anything") == []  # nothing indexed yet


async def test_search_code_tool_returns_paths_line_ranges_and_code(tmp_path: Path) -> None:
    async with CodeIndex(write_workspace(tmp_path)) as index:
        await index.refresh()
        registry = ToolRegistry([search_code_tool(index)])
        definition = registry.definitions()[0]
        assert definition.name == "search_code"
        assert set(definition.input_schema["properties"]) == {"query", "limit", "under"}

        async def call(arguments: dict[str, object]) -> tuple[str, bool]:
            result = await registry.execute(ToolUseBlock(id="c1", name="search_code", input=arguments),
                                            ToolContext(session_id="s1"))
            return result.text, result.is_error

        text, failed = await call({"query": "payment gateway card", "limit": 2})
        assert not failed
        assert text.startswith("1. shop/billing.py:4-7 (charge_customer)\ndef charge_customer(")
        assert "\n\n2. " in text
        text, failed = await call({"query": "x", "limit": 50})
        assert failed
        assert "limit must be between 1 and 20" in text
        text, failed = await call({"query": "invoice", "under": "./web/"})
        assert not failed
        assert text.startswith("1. web/client.ts:")
        assert "shop/" not in text
        text, failed = await call({"query": "invoice", "under": "nowhere/"})
        assert (text, failed) == ("No code under 'nowhere/' matches 'invoice'.", False)


class _FlakyEmbedder(HashingEmbedder):
    """A hashing embedder whose server 'goes away' while ``down`` is set."""

    down = False

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if self.down:
            raise ConnectionError("embeddings server unreachable")
        return await super().embed(texts)


async def test_watch_survives_a_failed_refresh_and_catches_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = write_workspace(tmp_path)
    embedder = _FlakyEmbedder(256)
    async with CodeIndex(root, embedder=embedder) as index, anyio.create_task_group() as tg:
        await tg.start(lambda task_status: index.watch(interval=0.02, task_status=task_status))
        embedder.down = True
        (root / "shop/tax.py").write_text("def vat_rate(country: str) -> float:\n    return 0.2\n")
        await anyio.sleep(0.2)  # several failed refreshes
        assert "code index: refresh failed (ConnectionError: embeddings server unreachable)" in caplog.text
        # The index still answers, from its words, while the embedder is down.
        assert (await index.search("monthly revenue", limit=1))[0].symbol == "monthly_revenue"
        with pytest.raises(ConnectionError):
            await index.search("monthly revenue", mode="semantic")
        embedder.down = False
        with anyio.fail_after(10):
            while not await index.search("vat_rate", mode="lexical"):  # noqa: ASYNC110
                await anyio.sleep(0.02)
        tg.cancel_scope.cancel()


async def test_the_index_parts_are_memory_retrievers(tmp_path: Path) -> None:
    async with CodeIndex(write_workspace(tmp_path)) as index:
        await index.refresh()
        for retriever in (index.lexical, index.semantic, index.hybrid):
            assert isinstance(retriever, Retriever)
        hit = (await index.lexical.retrieve("parse_amount", limit=1))[0]
        assert hit.metadata == {"path": "shop/models.py", "start_line": 19, "end_line": 20,
                                "symbol": "parse_amount"}


def test_long_hits_are_cut_with_a_note_on_how_to_read_the_rest() -> None:
    body = "\n".join(f"    line_{i} = {i}" for i in range(100))
    hit = CodeHit("big.py", 10, 110, "big", f"def big():\n{body}", 0.5)
    text = format_hits([hit], max_hit_lines=5)
    assert text.splitlines()[0] == "1. big.py:10-110 (big)"
    assert len(text.splitlines()) == 7
    assert text.endswith("… 96 more lines (read the file for them)")
    assert format_hits([]) == ""


class _ThreadRecordingEmbedder(CodeHashingEmbedder):
    def __init__(self) -> None:
        super().__init__(256)
        self.threads: set[int] = set()

    def embed_one(self, text: str) -> list[float]:
        self.threads.add(threading.get_ident())
        return super().embed_one(text)


async def test_hashing_runs_off_the_event_loop(tmp_path: Path) -> None:
    """Hashing a whole tree takes seconds of CPU: a refresh does it in a worker thread, so the event
    loop the agent runs on is never blocked by a background re-index."""
    embedder = _ThreadRecordingEmbedder()
    async with CodeIndex(write_workspace(tmp_path), embedder=embedder) as index:
        await index.refresh()
    assert embedder.threads
    assert threading.get_ident() not in embedder.threads
