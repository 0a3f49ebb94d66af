from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agcore.agent import SystemPrompt
from agcore.code import REPO_MAP_TITLE, RepoMap
from agcore.context import estimate_tokens
from tests.code.workspace import touch_later, write_workspace

pytestmark = pytest.mark.anyio


async def test_the_most_used_definitions_come_first(tmp_path: Path) -> None:
    text = await RepoMap(write_workspace(tmp_path)).render()
    lines = text.splitlines()
    # Invoice and parse_amount are used by two other files; nothing uses monthly_revenue.
    assert lines[1] == "shop/models.py:"
    assert "  6: class Invoice" in lines
    assert "    13: def add_line(self, description: str, cents: int) -> None" in lines
    assert text.index("parse_amount") < text.index("monthly_revenue")
    assert "web/client.ts:" in text
    assert "retryWithBackoff(attempts: number): number" in text


async def test_the_map_fits_the_token_budget(tmp_path: Path) -> None:
    files = {f"pkg/mod{i}.py": "".join(f"def function_{i}_{j}(argument: int) -> int:\n    return argument\n\n"
                                        for j in range(20)) for i in range(20)}
    repo_map = RepoMap(write_workspace(tmp_path, files), max_tokens=300)
    text = await repo_map.render()
    assert 0 < estimate_tokens(text) <= 300
    assert text.count("def function_") < 400
    larger = await repo_map.render(max_tokens=2000)
    assert estimate_tokens(larger) <= 2000
    assert larger.count("def function_") > text.count("def function_")


async def test_focus_names_rank_first(tmp_path: Path) -> None:
    repo_map = RepoMap(write_workspace(tmp_path), max_tokens=60)
    plain = await repo_map.render()
    focused = await repo_map.render(focus_names=["monthly_revenue"])
    assert "monthly_revenue" not in plain
    assert "monthly_revenue" in focused


async def test_changes_on_disk_show_on_the_next_render(tmp_path: Path) -> None:
    root = write_workspace(tmp_path)
    repo_map = RepoMap(root)
    await repo_map.render()
    touch_later(root / "shop/reports.py", "def yearly_revenue(year: int) -> int:\n    return year\n")
    (root / "web/client.ts").unlink()
    (root / "shop/tax.py").write_text("def vat_rate(country: str) -> float:\n    return 0.2\n")
    text = await repo_map.render()
    assert "yearly_revenue(year: int) -> int" in text
    assert "monthly_revenue" not in text
    assert "vat_rate(country: str) -> float" in text
    assert "ApiClient" not in text
    assert repo_map.files == 4
    assert repo_map.text == text


async def test_watch_keeps_the_text_fresh_and_stops_with_its_task_group(tmp_path: Path) -> None:
    root = write_workspace(tmp_path)
    repo_map = RepoMap(root)
    async with anyio.create_task_group() as tg:
        await tg.start(lambda task_status: repo_map.watch(interval=0.05, task_status=task_status))
        assert "class Invoice" in repo_map.text
        (root / "shop/tax.py").write_text("def vat_rate(country: str) -> float:\n    return 0.2\n")
        with anyio.fail_after(10):
            while "vat_rate" not in repo_map.text:  # noqa: ASYNC110
                await anyio.sleep(0.02)
        tg.cancel_scope.cancel()
    assert "vat_rate" in repo_map.text


async def test_the_map_goes_into_a_system_prompt_section(tmp_path: Path) -> None:
    repo_map = RepoMap(write_workspace(tmp_path))
    prompt = SystemPrompt("You are a coding agent.").extra(await repo_map.render(), title=REPO_MAP_TITLE)
    rendered = prompt.render()
    assert rendered.startswith("You are a coding agent.\n\n# Repository map\n")
    assert "shop/models.py:" in rendered


def test_an_empty_workspace_maps_to_nothing(tmp_path: Path) -> None:
    assert RepoMap(tmp_path).build() == ""


def test_bad_arguments_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="needs a directory"):
        RepoMap(tmp_path / "missing")
    with pytest.raises(ValueError, match="max_tokens must be at least 1"):
        RepoMap(tmp_path, max_tokens=0)


async def test_a_focused_render_does_not_stick(tmp_path: Path) -> None:
    repo_map = RepoMap(write_workspace(tmp_path), max_tokens=60)
    plain = await repo_map.render()
    assert "monthly_revenue" in await repo_map.render(focus_paths=["shop/reports.py"],
                                                      focus_names=["monthly_revenue"])
    assert await repo_map.render() == plain
    assert repo_map.text == plain


async def test_a_bare_call_ranks_the_function_not_a_method_of_the_same_name(tmp_path: Path) -> None:
    files = {
        "util.py": "def render(value: int) -> str:\n    return str(value)\n",
        "widget.py": "class Widget:\n    def render(self) -> str:\n        return ''\n",
        "a.py": "from util import render\n\nprint(render(1), render(2))\n",
        "b.py": "from util import render\n\n# render the widget: words in comments are not uses\n"
                "print(render(3))\n",
    }
    text = await RepoMap(write_workspace(tmp_path, files)).render()
    assert text.splitlines()[1:3] == ["util.py:", "  1: def render(value: int) -> str"]


async def test_the_disk_cache_spares_a_new_process_the_parsing(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    cache = tmp_path / "cache" / "repo-map.json"
    first = await RepoMap(root, cache_path=cache).render()
    # Prove the next map reads the cache: rename a symbol in it (the file's stamp is unchanged).
    cache.write_text(cache.read_text().replace('"def parse_amount(', '"def parse_cached_amount(', 1))
    second = await RepoMap(root, cache_path=cache).render()
    assert "parse_cached_amount" in second
    assert second.replace("parse_cached_amount", "parse_amount", 1) == first
    # A file changed since the cache was written is parsed again.
    models = root / "shop/models.py"
    touch_later(models, models.read_text() + "\n\ndef round_cents() -> None:\n    pass\n")
    third = await RepoMap(root, cache_path=cache).render(max_tokens=5000)
    assert "round_cents() -> None" in third
    assert "parse_amount(text: str) -> int" in third


async def test_an_unreadable_cache_is_ignored(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    cache = tmp_path / "repo-map.json"
    cache.write_text("{not json")
    text = await RepoMap(root, cache_path=cache).render()
    assert "class Invoice" in text
    assert cache.read_text().startswith('{"version":1')
