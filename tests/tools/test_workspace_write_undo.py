"""``write_file`` keeps what it replaced: ``undo_patch`` takes back the last write as it does a patch
(one undo stack for both, newest first), refuses when the file changed since, and keeps permissions."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from agcore.tools import ToolError
from agcore.tools.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


def test_overwrite_is_undone(ws: Workspace) -> None:
    test_file = ws.root / "test_util.py"
    test_file.write_text("def test_add():\n    assert add(1, 1) == 2\n")
    test_file.chmod(0o640)
    ws.read_file("test_util.py")
    out = ws.write_file("test_util.py", "def test_add(:\n")
    assert "undo_patch() takes it back" in out
    assert test_file.read_text() == "def test_add(:\n"
    assert ws.undo_patch().splitlines() == ["Undid the last change:", "  restored test_util.py"]
    assert test_file.read_text() == "def test_add():\n    assert add(1, 1) == 2\n"
    assert stat.S_IMODE(test_file.stat().st_mode) == 0o640


def test_created_file_and_its_directories_are_removed(ws: Workspace) -> None:
    ws.write_file("pkg/sub/new.py", "NEW = 1\n")
    assert ws.undo_patch().splitlines()[1:] == ["  deleted pkg/sub/new.py"]
    assert not (ws.root / "pkg").exists()


def test_writes_and_patches_share_one_undo_stack(ws: Workspace) -> None:
    (ws.root / "a.py").write_text("x = 1\n")
    ws.read_file("a.py")
    ws.write_file("a.py", "x = 2\n")
    ws.apply_patch("--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 2\n+x = 3\n")
    ws.write_file("a.py", "x = 4\n")
    seen = []
    for _ in range(3):
        ws.undo_patch()
        seen.append((ws.root / "a.py").read_text())
    assert seen == ["x = 3\n", "x = 2\n", "x = 1\n"]
    with pytest.raises(ToolError, match="nothing to undo"):
        ws.undo_patch()


def test_undo_refuses_to_lose_a_later_edit(ws: Workspace) -> None:
    (ws.root / "a.py").write_text("old\n")
    ws.read_file("a.py")
    ws.write_file("a.py", "new\n")
    (ws.root / "a.py").write_text("edited by hand\n")
    with pytest.raises(ToolError, match="has changed since"):
        ws.undo_patch()
    assert (ws.root / "a.py").read_text() == "edited by hand\n"


def test_a_directory_is_not_overwritten(ws: Workspace) -> None:
    (ws.root / "src").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        ws.write_file("src", "x")
    with pytest.raises(ToolError, match="nothing to undo"):
        ws.undo_patch()
