"""Keyword windows: output over budget keeps its head, its tail and the lines around the terms of
the call's arguments, tested on real large outputs (agcore's own source, a real subprocess's log)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import anyio
import pytest

from agcore.llm.types import ToolUseBlock
from agcore.tools import Tool, ToolContext, ToolRegistry, call_keywords, keyword_windows, tool

SOURCE_ROOT = Path(__file__).resolve().parents[2] / "agcore"
GAP = re.compile(r"^\[… (?:line (\d+)|lines (\d+)-(\d+)) omitted …\]$")


@pytest.fixture(scope="module")
def big_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """agcore's own source in one real file (over a megabyte, 30,000+ lines)."""
    path = tmp_path_factory.mktemp("src") / "all_sources.py"
    path.write_text("".join(p.read_text(encoding="utf-8") for p in sorted(SOURCE_ROOT.rglob("*.py"))),
                    encoding="utf-8")
    return path


def patterns(arguments: dict[str, object]) -> list[str]:
    return [k.pattern for k in call_keywords(arguments)]


def test_keywords_come_from_the_arguments_that_name_things() -> None:
    assert patterns({"pattern": r"def \w+_config", "limit": 20}) == [r"def \w+_config"]
    assert patterns({"pattern": "parse_config("}) == [re.escape("parse_config(")]  # not a regex: literal
    assert patterns({"query": "where is the retry delay set?"}) == ["retry", "delay", "set"]
    assert patterns({"query": "用户 登录 in db"}) == ["用户", "登录"]
    assert patterns({"path": "src/app/models.py", "glob": "**/*.toml"}) == [
        re.escape("models.py"), "models", re.escape(".toml")]
    assert patterns({"command": "pytest -x tests/test_parse.py"}) == [
        "pytest", "tests", re.escape("test_parse.py")]
    assert patterns({"paths": ["a/settings.yaml", 3]}) == [re.escape("settings.yaml"), "settings"]
    assert patterns({"content": "ignored", "start_line": 4}) == []


def check_faithful(original: str, cut: str) -> list[int]:
    """Every kept line is the original line at its place and every gap names the lines it stands
    for; the numbers (1-based) of the kept lines."""
    lines = original.splitlines()
    body = cut.rsplit("\n[… output of", 1)[0].splitlines()
    kept: list[int] = []
    at = 1
    for line in body:
        gap = GAP.match(line)
        if gap:
            first = int(gap.group(1) or gap.group(2))
            last = int(gap.group(1) or gap.group(3))
            assert first == at
            at = last + 1
        else:
            assert line == lines[at - 1][:400] or line.startswith(lines[at - 1][:400])
            kept.append(at)
            at += 1
    assert at == len(lines) + 1  # the whole output is accounted for
    return kept


def test_windows_around_a_rare_keyword_in_a_megabyte(big_source: Path) -> None:
    text = big_source.read_text(encoding="utf-8")
    keywords = call_keywords({"pattern": "def safe_cut_points", "path": "agcore/context/_compaction.py"})
    cut = keyword_windows(text, keywords, 4000)
    assert len(cut) <= 4000
    assert "def safe_cut_points(messages: Sequence[AnyMessage]) -> list[bool]:" in cut
    kept = check_faithful(text, cut)
    lines = text.splitlines()
    target = next(i for i, line in enumerate(lines, 1) if "def safe_cut_points" in line)
    assert {target - 3, target, target + 3} <= set(kept)  # the neighbours too
    assert kept[0] == 1
    assert kept[-1] == len(lines)  # head and tail
    assert "matching line(s) of 'def safe_cut_points'" in cut
    # the head-only cut of the same budget never reaches it
    assert "def safe_cut_points" not in text[:4000]


@pytest.mark.parametrize("budget", [50, 200, 500, 1500, 10_000, 60_000])
def test_never_over_budget_and_always_faithful(big_source: Path, budget: int) -> None:
    text = big_source.read_text(encoding="utf-8")
    cut = keyword_windows(text, call_keywords({"query": "retry_after RetryableToolError"}), budget)
    assert len(cut) <= budget
    if budget >= 500:  # smaller budgets get the head and a marker
        check_faithful(text, cut)


def test_without_a_match_head_and_tail_stay() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 2001))
    cut = keyword_windows(text, call_keywords({"query": "nowhere"}), 1000)
    kept = check_faithful(text, cut)
    assert kept[0] == 1
    assert kept[-1] == 2000
    assert "(no line matched 'nowhere')" in cut
    assert keyword_windows("short", [], 1000) == "short"


def test_a_one_line_json_output_gets_windows_too() -> None:
    records = [{"id": i, "name": f"user{i}", "email": f"user{i}@example.com"} for i in range(5000)]
    records[3777]["name"] = "Zoë Kowalski"
    text = json.dumps(records, ensure_ascii=False)  # one line, about 300,000 characters
    cut = keyword_windows(text, call_keywords({"query": "Kowalski"}), 2000)
    assert len(cut) <= 2000
    assert '"name": "Zoë Kowalski"' in cut
    assert cut.startswith('[{"id": 0,')
    assert cut.split("\n[… output of")[0].endswith('"email": "user4999@example.com"}]')  # the tail
    assert re.search(r"\[… [\d,]+ characters omitted …\]", cut)


def test_a_rare_keyword_outranks_a_common_one() -> None:
    lines = [f"import config  # {i}\n" for i in range(3000)]
    lines[2500] = "def load_config_from_env():\n"
    text = "".join(lines)
    cut = keyword_windows(text, call_keywords({"query": "config load_config_from_env"}), 1200)
    assert "def load_config_from_env():" in cut


def call(name: str, **arguments: object) -> ToolUseBlock:
    return ToolUseBlock(id="call_1", name=name, input=arguments)


@pytest.mark.anyio
async def test_the_registry_cuts_a_real_subprocess_log_around_the_command_terms(tmp_path: Path) -> None:
    script = tmp_path / "fake_pytest.py"
    script.write_text(
        "for i in range(4000):\n"
        "    if i == 2345:\n"
        "        print('tests/test_parse.py::test_dates FAILED')\n"
        "        print('E   AssertionError: 2026-13-01 is not a date')\n"
        "    print(f'tests/test_other.py::test_case_{i} PASSED')\n"
        "print('1 failed, 3999 passed in 12.3s')\n"
    )

    @tool(max_output_chars=3000)
    async def run_tests(command: str) -> str:
        """Run a test command."""
        done = await anyio.run_process([sys.executable, str(script)], check=True)
        return done.stdout.decode()

    command = "pytest -x tests/test_parse.py"
    keep = await ToolRegistry([run_tests], truncation="keywords").execute(call("run_tests", command=command),
                                                                          ToolContext())
    assert isinstance(keep.content, str)
    assert len(keep.content) <= 3000
    assert "tests/test_parse.py::test_dates FAILED" in keep.content
    assert "E   AssertionError: 2026-13-01 is not a date" in keep.content  # a neighbour
    assert "1 failed, 3999 passed" in keep.content  # the tail
    head = await ToolRegistry([run_tests]).execute(call("run_tests", command=command), ToolContext())
    assert "FAILED" not in str(head.content)  # the default cuts at the head
    assert "[… truncated" in str(head.content)


@pytest.mark.anyio
async def test_a_tool_may_choose_its_own_truncation(big_source: Path) -> None:
    def read(path: str, query: str) -> str:
        return big_source.read_text(encoding="utf-8")

    windows = Tool.from_function(read, name="search_doc", max_output_chars=5000, truncation="keywords")
    head = Tool.from_function(read, name="read_doc", max_output_chars=5000, truncation="head")
    registry = ToolRegistry([windows, head])  # the registry's default: head
    arguments = {"path": "x", "query": "bundle_resolve_provider"}
    found = await registry.execute(call("search_doc", **arguments), ToolContext())
    assert "async def bundle_resolve_provider(" in str(found.content)
    plain = await ToolRegistry([head], truncation="keywords").execute(call("read_doc", **arguments),
                                                                      ToolContext())
    assert "bundle_resolve_provider" not in str(plain.content)
    with pytest.raises(ValueError, match="truncation is 'head' or 'keywords'"):
        ToolRegistry(truncation="middle")  # type: ignore[arg-type]
