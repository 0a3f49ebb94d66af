"""Reads are confined: a sandboxed command sees the workspace, the system's programs and libraries
and the Python it runs on, and nothing else of the user's, unless ``readable`` names it; the file
tools follow the same policy."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agcore.tools import ToolDenied
from agcore.tools.workspace import Workspace
from tests.tools.sandbox_support import require_bwrap, scratch_dir


@pytest.fixture
def layout() -> Iterator[Path]:
    """Under /var/tmp (the sandbox's private /tmp would hide /tmp anyway and flatter the result):
    ``ws/`` the workspace, ``other/`` another project, ``home/`` a home with a secret."""
    for base in scratch_dir():
        (base / "ws").mkdir()
        (base / "ws" / "where.py").write_text("import sys\nprint(sys.prefix)\n")
        (base / "other").mkdir()
        (base / "other" / "notes.txt").write_text("FAKE-OTHER-PROJECT\n")
        (base / "home" / ".aws").mkdir(parents=True)
        (base / "home" / ".aws" / "credentials").write_text("FAKE-AWS\n")
        (base / "home" / "todo.txt").write_text("FAKE-HOME-FILE\n")
        yield base


@pytest.mark.anyio
async def test_nothing_outside_the_workspace_is_readable(layout: Path) -> None:
    require_bwrap()
    ws = Workspace(layout / "ws", sandbox="required")
    script = (
        f"cat {layout}/other/notes.txt {layout}/home/todo.txt; ls /home /var/tmp /var /run /root/.bashrc; "
        f"cat ../other/notes.txt; python3 -c 'print(open(\"{layout}/other/notes.txt\").read())'; "
        "ls ~; echo END"
    )
    (layout / "ws" / "probe.sh").write_text(script)
    out = await ws.run_command("bash probe.sh")
    assert "FAKE" not in out, out
    assert "END" in out
    for missing in (f"{layout}/other/notes.txt", "/home", "/run"):
        assert f"{missing}: No such file or directory" in out or f"'{missing}': No such file" in out, missing
    # /var/tmp holds only the way down to the workspace (its mount point) and PATH's directories there
    listing = out.split("/var/tmp:\n", 1)[1].split("\n\n", 1)[0].split("END", 1)[0].split()
    on_path = {Path(p).name for p in os.environ["PATH"].split(os.pathsep) if p.startswith("/var/tmp/")}
    assert set(listing) <= {layout.name, *on_path}, listing
    assert layout.name in listing


@pytest.mark.anyio
async def test_readable_adds_a_directory_read_only(layout: Path) -> None:
    require_bwrap()
    ws = Workspace(layout / "ws", sandbox="required", readable=[layout / "other", layout / "home"])
    out = await ws.run_command(f"cat {layout}/other/notes.txt {layout}/home/todo.txt")
    assert "FAKE-OTHER-PROJECT" in out
    assert "FAKE-HOME-FILE" in out
    (layout / "ws" / "w.sh").write_text(
        f"echo x > {layout}/other/new.txt; cat {layout}/home/.aws/credentials; echo END\n"
    )
    out = await ws.run_command("bash w.sh")
    assert "Read-only file system" in out
    assert "FAKE-AWS" not in out  # a credential inside a readable directory stays hidden
    assert not (layout / "other" / "new.txt").exists()


@pytest.mark.anyio
async def test_a_virtualenv_outside_the_workspace(layout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hidden like any other directory, shown when it is the active one (VIRTUAL_ENV) or readable."""
    require_bwrap()
    venv = layout / "venv"
    await anyio.run_process([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    plain = Workspace(layout / "ws", sandbox="required")
    out = await plain.run_command(f"{python} where.py")
    assert "No such file" in out
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))  # activated
    out = await plain.run_command(f"{python} where.py")
    assert f"stdout:\n{venv}" in out, out
    monkeypatch.delenv("VIRTUAL_ENV")
    named = Workspace(layout / "ws", sandbox="required", readable=[venv])
    out = await named.run_command(f"{python} where.py")
    assert f"stdout:\n{venv}" in out, out


@pytest.mark.anyio
async def test_the_file_tools_follow_the_same_policy(layout: Path) -> None:
    ws = Workspace(layout / "ws", sandbox="off", readable=[layout / "other", layout / "home"])
    assert "FAKE-OTHER-PROJECT" in ws.read_file(f"{layout}/other/notes.txt")
    assert "notes.txt" in ws.list_dir(f"{layout}/other")
    assert "FAKE-HOME-FILE" in await ws.grep("FAKE", f"{layout}/home")
    assert "FAKE-AWS" not in await ws.grep("FAKE", f"{layout}/home")
    with pytest.raises(ToolDenied):
        ws.read_file(f"{layout}/home/.aws/credentials")
    with pytest.raises(ToolDenied):
        ws.write_file(f"{layout}/other/new.txt", "x")
    with pytest.raises(ToolDenied):
        ws.read_file("../other/notes.txt")  # relative paths stay in the workspace
    confined = Workspace(layout / "ws", sandbox="off")
    with pytest.raises(ToolDenied):
        confined.read_file(f"{layout}/other/notes.txt")


def test_a_readable_path_must_exist(layout: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        Workspace(layout / "ws", sandbox="off", readable=[layout / "nowhere"])
    with pytest.raises(ValueError, match="whole machine"):
        Workspace(layout / "ws", sandbox="off", readable=["/"])
