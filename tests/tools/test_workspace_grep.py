"""grep through ripgrep and through the Python fallback: same results, same format, same caps."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agcore.tools import ToolDenied, ToolError
from agcore.tools.workspace import Workspace

HAS_RG = shutil.which("rg") is not None
BACKENDS = [
    pytest.param("ripgrep", marks=pytest.mark.skipif(not HAS_RG, reason="ripgrep (rg) is not installed")),
    "python",
]


def make_tree(root: Path) -> None:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "main.py").write_text("import os\n\ndef main():\n    # TODO: more\n    return os.sep\n")
    (root / "src" / "pkg" / "util.py").write_text("def helper():\n    return 'todo later'\n")
    (root / "README.md").write_text("# Demo\nTODO: write docs\n")
    (root / "a_dir").mkdir()
    (root / "a_dir" / "z.txt").write_text("TODO in a_dir\n")
    (root / "logo.png").write_bytes(b"\x89PNG\x00\x00TODO\x00")
    (root / ".env").write_text("TODO_TOKEN=secret\n")
    (root / "keys").mkdir()
    (root / "keys" / "server.pem").write_text("TODO pem\n")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.js").write_text("// TODO vendored\n")
    (root / ".git").mkdir()
    (root / ".git" / "TODO_HEAD").write_text("TODO git internals\n")
    (root / ".github").mkdir()
    (root / ".github" / "ci.yml").write_text("# TODO: cache\n")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    make_tree(root)
    (root / "escape").symlink_to(tmp_path)
    (tmp_path / "outside.txt").write_text("TODO outside the workspace\n")
    return root


EXPECTED_TODO = [
    ".github/ci.yml:1:# TODO: cache",
    "README.md:2:TODO: write docs",
    "a_dir/z.txt:1:TODO in a_dir",
    "src/main.py:4:    # TODO: more",
]


@pytest.mark.anyio
@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_finds_matches_in_the_same_format(root: Path, backend: str) -> None:
    ws = Workspace(root, grep_backend=backend)  # type: ignore[arg-type]
    out = await ws.grep("TODO")
    # no binary file, no denied file (.env, *.pem), nothing under .git or node_modules, no symlink escape
    assert out.splitlines() == EXPECTED_TODO
    out = await ws.grep("todo", ignore_case=True, path="src")
    assert out.splitlines() == ["src/main.py:4:    # TODO: more", "src/pkg/util.py:2:    return 'todo later'"]
    assert (
        await ws.grep("def \\w+\\(", glob="*.py")
        == "src/main.py:3:def main():\nsrc/pkg/util.py:1:def helper():"
    )
    assert await ws.grep("return", path="src/pkg/util.py") == "src/pkg/util.py:2:    return 'todo later'"
    assert await ws.grep("no such text") == "No matches for 'no such text' in '.'."


@pytest.mark.anyio
@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_caps_results_and_says_so(tmp_path: Path, backend: str) -> None:
    (tmp_path / "many.txt").write_text("".join(f"hit {i}\n" for i in range(50)))
    (tmp_path / "long.txt").write_text("hit " + "x" * 1000 + "\n")
    ws = Workspace(tmp_path, grep_backend=backend, max_grep_results=20)  # type: ignore[arg-type]
    out = await ws.grep("hit", max_results=5)
    lines = out.splitlines()
    assert lines[0].startswith("long.txt:1:hit xxx")
    assert lines[0].endswith("…")
    assert len(lines[0]) < 320
    assert lines[1:5] == ["many.txt:1:hit 0", "many.txt:2:hit 1", "many.txt:3:hit 2", "many.txt:4:hit 3"]
    assert lines[5] == (
        "[showing 5 of 51 matches (max_results=5); narrow the pattern, the path or the glob, "
        "or raise max_results]"
    )
    out = await ws.grep("hit", max_results=500)  # the workspace caps what a model may ask for
    assert "[showing 20 of 51 matches (max_results=20)" in out


@pytest.mark.anyio
async def test_both_backends_agree(root: Path) -> None:
    if not HAS_RG:
        pytest.skip("ripgrep (rg) is not installed")
    for pattern, options in (("TODO", {}), ("return", {"path": "src"}), ("o", {"glob": "*.md"})):
        fast = await Workspace(root, grep_backend="ripgrep").grep(pattern, **options)  # type: ignore[arg-type]
        slow = await Workspace(root, grep_backend="python").grep(pattern, **options)  # type: ignore[arg-type]
        assert fast == slow


@pytest.mark.anyio
async def test_auto_falls_back_to_python_without_rg(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert shutil.which("rg") is None
    out = await Workspace(root).grep("TODO")
    assert out.splitlines() == EXPECTED_TODO
    with pytest.raises(ToolError, match=r"ripgrep .* is not installed"):
        await Workspace(root, grep_backend="ripgrep").grep("TODO")


@pytest.mark.anyio
@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_failures(root: Path, backend: str) -> None:
    ws = Workspace(root, grep_backend=backend)  # type: ignore[arg-type]
    with pytest.raises(ToolError, match="pattern"):
        await ws.grep("(unclosed")
    with pytest.raises(ToolError, match="empty"):
        await ws.grep("")
    with pytest.raises(ToolError, match="does not exist"):
        await ws.grep("x", path="nope")
    with pytest.raises(ToolDenied):
        await ws.grep("x", path="../")
    with pytest.raises(ToolDenied):
        await ws.grep("x", path=".env")
    with pytest.raises(ToolError, match="glob"):
        await ws.grep("x", glob="../*.txt")
    with pytest.raises(ToolError, match="max_results"):
        await ws.grep("x", max_results=0)
