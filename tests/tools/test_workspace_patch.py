"""apply_patch and undo_patch on real files: all hunks or nothing, exact undo."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agcore.llm.types import ToolUseBlock
from agcore.tools import ToolContext, ToolDenied, ToolError, ToolRegistry
from agcore.tools.workspace import Workspace

Snapshot = dict[str, tuple[bytes, int, int]]


def snapshot(root: Path) -> Snapshot:
    """Every file and directory under root: content, mtime (ns) and mode."""
    found: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath, name)
            info = path.lstat()
            content = path.read_bytes() if path.is_file() else b"<dir>"
            found[str(path.relative_to(root))] = (content, info.st_mtime_ns, info.st_mode)
    return found


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def one():\n    return 1\n\n\ndef two():\n    return 2\n")
    (root / "b.py").write_text("x = 1\ny = 2\nz = 3\n")
    (root / "old.txt").write_text("obsolete\nfile\n")
    (root / "old.txt").chmod(0o640)
    return Workspace(root)


MULTI = """\
--- a/a.py
+++ b/a.py
@@ -1,2 +1,2 @@
 def one():
-    return 1
+    return 100
@@ -5,2 +5,3 @@
 def two():
-    return 2
+    # doubled
+    return 4
--- /dev/null
+++ b/pkg/sub/new.py
@@ -0,0 +1,2 @@
+NEW = True
+print(NEW)
--- a/old.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-obsolete
-file
"""


def test_multi_file_patch_then_exact_undo(ws: Workspace) -> None:
    before = snapshot(ws.root)
    out = ws.apply_patch(MULTI)
    assert out.splitlines() == [
        "Applied the patch:",
        "  modified a.py (+3 -2, 2 hunks)",
        "  created pkg/sub/new.py (+2 -0)",
        "  deleted old.txt (+0 -2)",
        "undo_patch() takes it back.",
    ]
    assert (
        ws.root / "a.py"
    ).read_text() == "def one():\n    return 100\n\n\ndef two():\n    # doubled\n    return 4\n"
    assert (ws.root / "pkg" / "sub" / "new.py").read_text() == "NEW = True\nprint(NEW)\n"
    assert not (ws.root / "old.txt").exists()

    undone = ws.undo_patch()
    assert undone.splitlines() == [
        "Undid the last change:",
        "  restored a.py",
        "  deleted pkg/sub/new.py",
        "  recreated old.txt",
    ]
    after = snapshot(ws.root)
    assert set(after) == set(before)  # pkg/ and pkg/sub/ removed again
    for name, (content, _, mode) in before.items():
        assert after[name][0] == content, name
        assert after[name][2] == mode, name  # old.txt comes back 0o640
    assert stat.S_IMODE((ws.root / "old.txt").stat().st_mode) == 0o640
    with pytest.raises(ToolError, match="nothing to undo"):
        ws.undo_patch()


def test_a_failing_hunk_in_the_second_file_leaves_every_file_unchanged(ws: Workspace) -> None:
    patch = """\
--- a/a.py
+++ b/a.py
@@ -1,2 +1,2 @@
 def one():
-    return 1
+    return 100
--- /dev/null
+++ b/created_first.py
@@ -0,0 +1 @@
+x = 1
--- a/b.py
+++ b/b.py
@@ -1,3 +1,3 @@
 x = 1
-y = 20
+y = 200
 z = 3
--- a/old.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-obsolete
-file
"""
    before = snapshot(ws.root)
    with pytest.raises(ToolError) as info:
        ws.apply_patch(patch)
    message = info.value.message
    assert "hunk 1 of 1 for 'b.py' (@@ -1,3 +1,3 @@) does not match the file" in message
    assert "     2 | y = 20" in message  # what the hunk expected
    assert "     2 | y = 2" in message  # what is really there
    assert "No file was changed" in message
    assert snapshot(ws.root) == before  # bytes, mtimes and modes: nothing touched, nothing created


def test_dry_run_reports_and_writes_nothing(ws: Workspace) -> None:
    before = snapshot(ws.root)
    out = ws.apply_patch(MULTI, dry_run=True)
    assert out.splitlines() == [
        "Dry run: the patch applies cleanly. It would:",
        "  modify a.py (+3 -2, 2 hunks)",
        "  create pkg/sub/new.py (+2 -0)",
        "  delete old.txt (+0 -2)",
        "Nothing was written.",
    ]
    assert snapshot(ws.root) == before
    with pytest.raises(ToolError, match="nothing to undo"):
        ws.undo_patch()


def test_hunks_found_at_an_offset(ws: Workspace) -> None:
    patch = "--- a/b.py\n+++ b/b.py\n@@ -5,2 +5,2 @@\n y = 2\n-z = 3\n+z = 30\n"
    out = ws.apply_patch(patch)
    assert "hunk 1 applied at offset -3 lines" in out
    assert (ws.root / "b.py").read_text() == "x = 1\ny = 2\nz = 30\n"


def test_trailing_whitespace_tolerance_keeps_file_bytes(ws: Workspace) -> None:
    (ws.root / "t.txt").write_bytes(b"keep  \nchange\n")
    out = ws.apply_patch("--- a/t.txt\n+++ b/t.txt\n@@ -1,2 +1,2 @@\n keep\n-change\n+changed\n")
    assert "ignoring trailing whitespace" in out
    assert (ws.root / "t.txt").read_bytes() == b"keep  \nchanged\n"


def test_crlf_files_keep_their_line_endings(ws: Workspace) -> None:
    (ws.root / "dos.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    ws.apply_patch("--- a/dos.txt\n+++ b/dos.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+TWO\n+2.5\n three\n")
    assert (ws.root / "dos.txt").read_bytes() == b"one\r\nTWO\r\n2.5\r\nthree\r\n"


def test_no_newline_at_end_of_file(ws: Workspace) -> None:
    (ws.root / "n.txt").write_bytes(b"a\nb")
    ws.apply_patch(
        "--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n"
        "\\ No newline at end of file\n"
    )
    assert (ws.root / "n.txt").read_bytes() == b"a\nb\nc"
    # a sloppy patch that adds after a last line without newline must not glue lines together
    ws.apply_patch("--- a/n.txt\n+++ b/n.txt\n@@ -3 +3,2 @@\n c\n+d\n")
    assert (ws.root / "n.txt").read_bytes() == b"a\nb\nc\nd\n"


def test_the_same_file_twice_and_a_rename(ws: Workspace) -> None:
    patch = (
        "--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-x = 1\n+x = 10\n"
        "--- a/b.py\n+++ b/b.py\n@@ -3 +3 @@\n-z = 3\n+z = 30\n"
        "--- a/old.txt\n+++ b/renamed.txt\n@@ -1,2 +1,2 @@\n-obsolete\n+renewed\n file\n"
    )
    ws.apply_patch(patch)
    assert (ws.root / "b.py").read_text() == "x = 10\ny = 2\nz = 30\n"
    assert (ws.root / "renamed.txt").read_text() == "renewed\nfile\n"
    assert not (ws.root / "old.txt").exists()
    ws.undo_patch()
    assert (ws.root / "b.py").read_text() == "x = 1\ny = 2\nz = 3\n"
    assert (ws.root / "old.txt").read_text() == "obsolete\nfile\n"
    assert not (ws.root / "renamed.txt").exists()


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ("", "empty"),
        ("this is not a diff\n", "no file changes found"),
        ("--- a/b.py\n+++ b/b.py\n@@ -1,3 +1,3 @@\n x = 1\n", "the patch changes nothing"),
        ("--- a/b.py\n+++ b/b.py\n@@ -1,3 +1,3 @@\n@@ -1,3 +1,3 @@\n", "could not parse the patch"),
        ("--- /dev/null\n+++ b/b.py\n@@ -0,0 +1 @@\n+x\n", "already exists"),
        ("--- a/missing.py\n+++ b/missing.py\n@@ -1 +1 @@\n-a\n+b\n", "does not exist"),
        ("--- a/b.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n", "must remove every line"),
        ("--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-nothing like this\n+x\n", "does not match the file"),
    ],
)
def test_bad_patches_write_nothing(ws: Workspace, patch: str, message: str) -> None:
    before = snapshot(ws.root)
    with pytest.raises(ToolError, match=message):
        ws.apply_patch(patch)
    assert snapshot(ws.root) == before


def test_patches_obey_the_path_guard(ws: Workspace) -> None:
    (ws.root / ".git").mkdir()
    (ws.root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    before = snapshot(ws.root)
    for patch in (
        "--- a/.git/HEAD\n+++ b/.git/HEAD\n@@ -1 +1 @@\n-ref: refs/heads/main\n+x\n",
        "--- /dev/null\n+++ b/../escaped.py\n@@ -0,0 +1 @@\n+x\n",
        "--- /dev/null\n+++ b/.env\n@@ -0,0 +1 @@\n+KEY=1\n",
    ):
        with pytest.raises(ToolDenied):
            ws.apply_patch(patch)
    assert snapshot(ws.root) == before
    assert not (ws.root.parent / "escaped.py").exists()


def test_undo_refuses_when_a_file_changed_since(ws: Workspace) -> None:
    ws.apply_patch("--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-x = 1\n+x = 10\n")
    (ws.root / "b.py").write_text("edited by hand\n")
    with pytest.raises(ToolError, match="has changed since the patch was applied"):
        ws.undo_patch()
    assert (ws.root / "b.py").read_text() == "edited by hand\n"
    (ws.root / "b.py").write_text("x = 10\ny = 2\nz = 3\n")  # put the patched content back
    ws.undo_patch()  # the record was kept
    assert (ws.root / "b.py").read_text() == "x = 1\ny = 2\nz = 3\n"


def test_undo_takes_patches_back_in_reverse_order(ws: Workspace) -> None:
    ws.apply_patch("--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-x = 1\n+x = 10\n")
    ws.apply_patch("--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-x = 10\n+x = 100\n")
    ws.undo_patch()
    assert (ws.root / "b.py").read_text().startswith("x = 10\n")
    ws.undo_patch()
    assert (ws.root / "b.py").read_text().startswith("x = 1\n")


@pytest.mark.anyio
async def test_apply_and_undo_through_the_registry(ws: Workspace) -> None:
    registry = ToolRegistry(ws.tools())
    assert registry.get("apply_patch") is not None
    ctx = ToolContext()
    result = await registry.execute(ToolUseBlock(id="p1", name="apply_patch", input={"patch": MULTI}), ctx)
    assert not result.is_error
    assert (ws.root / "pkg" / "sub" / "new.py").exists()
    bad = "--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-nope\n+x\n"
    result = await registry.execute(ToolUseBlock(id="p2", name="apply_patch", input={"patch": bad}), ctx)
    assert result.is_error
    assert isinstance(result.content, str)
    assert "does not match" in result.content
    result = await registry.execute(ToolUseBlock(id="p3", name="undo_patch", input={}), ctx)
    assert not result.is_error
    assert not (ws.root / "pkg").exists()
    assert (ws.root / "old.txt").read_text() == "obsolete\nfile\n"


CALC = 'def average(numbers):\n    """The mean."""\n    return sum(numbers) / (len(numbers) + 1)\n'


def test_hunk_counts_that_do_not_match_the_body_are_recounted(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(CALC)
    workspace = Workspace(tmp_path)
    workspace.read_file("calc.py")
    # a 1.5B model's patch: "+1,4" over three new lines, and a blank context line without its space
    patch = (
        "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,3 +1,4 @@\n"
        " def average(numbers):\n     \"\"\"The mean.\"\"\"\n-    return sum(numbers) / (len(numbers) + 1)\n"
        "+    return sum(numbers) / len(numbers)\n"
    )
    assert "modified calc.py (+1 -1, 1 hunk)" in workspace.apply_patch(patch)
    assert (tmp_path / "calc.py").read_text() == CALC.replace("(len(numbers) + 1)", "len(numbers)")


def test_a_recounted_hunk_whose_body_does_not_match_still_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(CALC)
    workspace = Workspace(tmp_path)
    workspace.read_file("calc.py")
    patch = "--- a/calc.py\n+++ b/calc.py\n@@ -1,9 +1,9 @@\n-    return nothing like it\n+    return 0\n"
    with pytest.raises(ToolError, match="does not match the file"):
        workspace.apply_patch(patch)
    assert (tmp_path / "calc.py").read_text() == CALC


def test_recounting_keeps_the_starts_and_reads_blank_lines_as_context() -> None:
    from agcore.tools.workspace._hunk_counts import recount_hunks

    patch = "--- a/x\n+++ b/x\n@@ -4,9 +4,1 @@ def f\n a\n\n-b\n+c\n+d\n\n"
    assert recount_hunks(patch) == "--- a/x\n+++ b/x\n@@ -4,3 +4,4 @@ def f\n a\n \n-b\n+c\n+d\n"


def test_a_patch_that_changes_nothing_says_so(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(CALC)
    workspace = Workspace(tmp_path)
    workspace.read_file("calc.py")
    # a 1.5B model's patch: context lines only, a '+' at the end of a line instead of its start
    patch = (
        "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,3 +1,4 @@\n"
        " def average(numbers):\n     \"The mean.\"+\n     return sum(numbers) / (len(numbers) + 1)"
    )
    with pytest.raises(ToolError, match="the patch changes nothing") as refused:
        workspace.apply_patch(patch)
    assert "edit_file(path, old, new)" in str(refused.value)
    assert (tmp_path / "calc.py").read_text() == CALC
