"""Read before write: ``write_file`` refuses to replace an existing file whose current content this
workspace session has not seen (read, or written itself); creating files stays free, and
``read_before_write=False`` turns the rule off."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agcore.llm import ToolUseBlock
from agcore.tools import ToolContext, ToolError, ToolRegistry
from agcore.tools.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "app.log").write_text("2026-01-01 started\n2026-01-02 stopped\n")
    return Workspace(tmp_path)


def test_a_blind_overwrite_is_refused_and_the_file_kept(ws: Workspace) -> None:
    with pytest.raises(ToolError) as refused:
        ws.write_file("app.log", "one line\n")
    message = str(refused.value)
    assert "'app.log' already exists and has not been read in this session" in message
    assert "Call read_file('app.log') first" in message
    assert "Nothing was written" in message
    assert (ws.root / "app.log").read_text() == "2026-01-01 started\n2026-01-02 stopped\n"


def test_after_reading_the_overwrite_goes_through(ws: Workspace) -> None:
    ws.read_file("app.log")
    assert ws.write_file("app.log", "one line\n").startswith("Overwrote 'app.log'")
    assert (ws.root / "app.log").read_text() == "one line\n"


def test_a_line_range_read_counts_as_reading_that_version(ws: Workspace) -> None:
    ws.read_file("app.log", start_line=2, end_line=2)
    ws.write_file("app.log", "replaced\n")
    assert (ws.root / "app.log").read_text() == "replaced\n"


def test_a_file_changed_on_disk_since_the_read_is_refused(ws: Workspace) -> None:
    ws.read_file("app.log")
    log = ws.root / "app.log"
    stat = log.stat()
    log.write_text("2026-01-01 started\n2026-01-02 STOPPED\n")  # same size
    os.utime(log, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the same mtime
    with pytest.raises(ToolError, match="has changed on disk since this session last read it"):
        ws.write_file("app.log", "x\n")
    ws.read_file("app.log")
    ws.write_file("app.log", "x\n")
    assert log.read_text() == "x\n"


def test_a_file_only_touched_since_the_read_is_not_refused(ws: Workspace) -> None:
    ws.read_file("app.log")
    os.utime(ws.root / "app.log", (1, 1))
    ws.write_file("app.log", "x\n")


def test_creating_a_file_needs_no_read_and_writing_it_again_needs_none(ws: Workspace) -> None:
    ws.write_file("notes/new.txt", "first\n")
    ws.write_file("notes/new.txt", "second\n")  # the session wrote the version on disk
    assert (ws.root / "notes" / "new.txt").read_text() == "second\n"


def test_a_patched_file_counts_as_seen(ws: Workspace) -> None:
    ws.apply_patch("--- a/app.log\n+++ b/app.log\n@@ -2 +2 @@\n-2026-01-02 stopped\n+2026-01-03 resumed\n")
    ws.write_file("app.log", "rewritten\n")
    assert (ws.root / "app.log").read_text() == "rewritten\n"


def test_undo_forgets_the_restored_file(ws: Workspace) -> None:
    ws.read_file("app.log")
    ws.write_file("app.log", "new\n")
    ws.undo_patch()
    with pytest.raises(ToolError, match="has not been read"):
        ws.write_file("app.log", "again\n")


def test_a_binary_file_read_counts(ws: Workspace) -> None:
    (ws.root / "blob.bin").write_bytes(b"\x00\x01\x02")
    assert "binary file" in ws.read_file("blob.bin")
    ws.write_file("blob.bin", "text now\n")


def test_the_rule_can_be_turned_off(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    Workspace(tmp_path, read_before_write=False).write_file("a.txt", "new\n")
    assert (tmp_path / "a.txt").read_text() == "new\n"


def test_each_workspace_keeps_its_own_record(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    Workspace(tmp_path).read_file("a.txt")
    with pytest.raises(ToolError, match="has not been read"):
        Workspace(tmp_path).write_file("a.txt", "new\n")


@pytest.mark.anyio
async def test_the_model_sees_the_refusal_as_an_error_result(ws: Workspace) -> None:
    registry = ToolRegistry(ws.tools())
    ctx = ToolContext(session_id="s")

    async def call(name: str, **arguments: object) -> tuple[bool, object]:
        result = await registry.execute(ToolUseBlock(id="c1", name=name, input=arguments), ctx)
        return result.is_error, result.content

    is_error, text = await call("write_file", path="app.log", content="x")
    assert is_error
    assert "read_file('app.log')" in str(text)
    await call("read_file", path="app.log")
    assert await call("write_file", path="app.log", content="x") == (
        False,
        "Overwrote 'app.log' (1 bytes; it had 38 bytes).\nundo_patch() takes it back.",
    )
