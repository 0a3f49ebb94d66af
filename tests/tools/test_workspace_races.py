"""Symlink-swap races against the file tools (tryout findings 1 and 2), reproduced for real.

A separate process keeps swapping a workspace entry between a real directory (or file) and a symlink
to a directory outside holding a canary and a fake credential, while the tool is called again and
again. A check-then-open-by-name tool loses this race within a few hundred calls; the descriptor
walk (``_fd_paths``) must never write, read or list outside, and must say why a call failed. The
"swap at the worst moment" tests make the same race deterministic: the guard's answer is taken, then
the directory is swapped before the tool uses it.
"""

from __future__ import annotations

import os
import shutil
import time
import traceback
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from agcore.tools import PathGuard, ToolError
from agcore.tools.workspace import Workspace
from tests.tools.escape_corpus import swapping

SECRET = "FAKE-RACE-SECRET-7f3a"
RACE_SECONDS = 1.5
MIN_CALLS = 300


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "canary.txt").write_text("canary\n")
    (outside / "id_ed25519").write_text(SECRET + "\n")
    (outside / "secret.txt").write_text(SECRET + "\n")  # a name the deny list lets through
    return ws, outside


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the races are in worker threads and the file system, not the event loop


def _race(ws: Path, name: str, call: object) -> tuple[int, list[str]]:
    """Call ``call(i)`` while ``name`` is being swapped; (calls made, results and error messages)."""
    results: list[str] = []
    deadline = time.monotonic() + RACE_SECONDS
    calls = 0
    with swapping(ws, name):
        while calls < MIN_CALLS or time.monotonic() < deadline:
            try:
                results.append(call(calls))  # type: ignore[operator]
            except ToolError as exc:
                results.append("ERROR " + exc.message)
            except OSError as exc:  # asserted after the escape checks: an escape is the worse failure
                results.append(f"OSERROR {exc!r} {traceback.format_exc(limit=-3)}")
            calls += 1
    return calls, results


def _no_raw_errors(results: list[str]) -> None:
    raw = [r for r in results if r.startswith("OSERROR")]
    assert not raw, f"{len(raw)} raw OSErrors escaped the tool (each must be a ToolError): {raw[:3]}"


def _outside_untouched(outside: Path) -> None:
    # no temp files left
    assert sorted(p.name for p in outside.iterdir()) == ["canary.txt", "id_ed25519", "secret.txt"]
    assert (outside / "canary.txt").read_text() == "canary\n"


def _dir_and_link(ws: Path, outside: Path, name: str = "real") -> None:
    (ws / f".{name}.real").mkdir()
    (ws / f".{name}.real" / "canary.txt").write_text("inside\n")
    (ws / f".{name}.real" / "secret.txt").write_text("not a secret\n")
    (ws / f".{name}.link").symlink_to(outside)


def test_write_file_raced_through_a_swapped_directory_never_writes_outside(layout: tuple[Path, Path]) -> None:
    ws_root, outside = layout
    _dir_and_link(ws_root, outside)
    ws = Workspace(ws_root, sandbox="off", read_before_write=False)  # the path guard is under test
    calls, results = _race(ws_root, "real", lambda i: ws.write_file("real/canary.txt", f"PWNED {i}\n"))
    _outside_untouched(outside)
    _no_raw_errors(results)
    assert any(r.startswith("Overwrote") or r.startswith("Created") for r in results)
    refused = [r for r in results if r.startswith("ERROR")]
    assert all("symlink" in r or "changed while" in r for r in refused), refused[:3]
    print(f"\nwrite_file race: {calls} calls, {len(refused)} refused, outside untouched")


def test_read_file_raced_through_a_swapped_file_never_reads_outside(layout: tuple[Path, Path]) -> None:
    ws_root, outside = layout
    (ws_root / ".real.real").write_text("harmless\n")
    (ws_root / ".real.link").symlink_to(outside / "id_ed25519")
    ws = Workspace(ws_root, sandbox="off")
    calls, results = _race(ws_root, "real", lambda i: ws.read_file("real", 1, i + 1))
    assert not [r for r in results if SECRET in r]
    assert any("harmless" in r for r in results)
    refused = [r for r in results if r.startswith("ERROR")]
    assert any("resolves through a symlink" in r for r in refused) or any(
        "outside the workspace" in r for r in refused
    )
    _no_raw_errors(results)
    print(f"\nread_file race: {calls} calls, {len(refused)} refused, the secret never read")


def test_read_file_raced_through_a_swapped_parent_never_reads_outside(layout: tuple[Path, Path]) -> None:
    ws_root, outside = layout
    _dir_and_link(ws_root, outside)
    ws = Workspace(ws_root, sandbox="off")
    _, results = _race(ws_root, "real", lambda i: ws.read_file("real/secret.txt", 1, i + 1))
    assert not [r for r in results if SECRET in r]
    assert any("not a secret" in r for r in results)
    _no_raw_errors(results)


def test_apply_patch_raced_never_writes_outside(layout: tuple[Path, Path]) -> None:
    ws_root, outside = layout
    _dir_and_link(ws_root, outside)
    (outside / "canary.txt").write_text("inside\n")  # the same text, so the patch also fits outside
    ws = Workspace(ws_root, sandbox="off")
    patch = "--- a/real/canary.txt\n+++ b/real/canary.txt\n@@ -1 +1 @@\n-inside\n+PWNED\n"

    def call(_: int) -> str:
        result = ws.apply_patch(patch)
        ws.undo_patch()
        return result

    _, results = _race(ws_root, "real", call)
    assert sorted(p.name for p in outside.iterdir()) == ["canary.txt", "id_ed25519", "secret.txt"]
    assert (outside / "canary.txt").read_text() == "inside\n"
    _no_raw_errors(results)


def test_list_dir_and_glob_raced_never_show_outside_names(layout: tuple[Path, Path]) -> None:
    ws_root, outside = layout
    (outside / "outside-only-name.txt").write_text("x")
    _dir_and_link(ws_root, outside)
    ws = Workspace(ws_root, sandbox="off")
    _, listed = _race(ws_root, "real", lambda i: ws.list_dir("real"))
    _, globbed = _race(ws_root, "real", lambda i: ws.glob("real/*"))
    assert not [r for r in listed + globbed if "outside-only-name" in r]
    assert any("canary.txt" in r for r in listed)
    _no_raw_errors(listed + globbed)


@pytest.mark.anyio
@pytest.mark.parametrize("backend", ["python", "ripgrep"])
async def test_grep_raced_never_shows_outside_content(layout: tuple[Path, Path], backend: str) -> None:
    if backend == "ripgrep" and shutil.which("rg") is None:
        if os.environ.get("CI"):
            pytest.fail("ripgrep (rg) must be installed in CI")
        pytest.skip("ripgrep is not installed")
    ws_root, outside = layout
    _dir_and_link(ws_root, outside)
    ws = Workspace(ws_root, sandbox="off", grep_backend=backend)  # type: ignore[arg-type]
    results: list[str] = []
    deadline = time.monotonic() + RACE_SECONDS
    with swapping(ws_root, "real"):
        while len(results) < 100 or time.monotonic() < deadline:
            try:
                results.append(await ws.grep("FAKE|inside|secret", "real"))
            except ToolError as exc:
                results.append("ERROR " + exc.message)
            except OSError as exc:
                results.append(f"OSERROR {exc!r} {traceback.format_exc(limit=-3)}")
            await anyio.lowlevel.checkpoint()
    assert not [r for r in results if SECRET in r]
    assert any("inside" in r for r in results)
    _no_raw_errors(results)


class _SwappingGuard(PathGuard):
    """Answers like PathGuard, then swaps the checked directory for a symlink before the tool uses it:
    the race of findings 1 and 2, lost every time by a tool that re-opens the path by name."""

    def __init__(self, root: Path, victim: Path, target: Path) -> None:
        super().__init__(root)
        self.victim, self.target = victim, target

    def resolve(self, path: str | os.PathLike[str], *, for_write: bool = False) -> Path:
        real = super().resolve(path, for_write=for_write)
        if not self.victim.is_symlink():
            self.victim.rename(self.victim.with_name(".parked"))
            self.victim.symlink_to(self.target)
        return real


@pytest.mark.parametrize("tool", ["write_file", "read_file", "read_parent", "list_dir", "apply_patch"])
def test_a_directory_swapped_after_the_check_is_refused_as_a_symlink(
    layout: tuple[Path, Path], tool: str
) -> None:
    ws_root, outside = layout
    (ws_root / "real").mkdir()
    (ws_root / "real" / "canary.txt").write_text("canary\n")
    (ws_root / "real" / "secret.txt").write_text("not a secret\n")
    guard = _SwappingGuard(ws_root, ws_root / "real", outside)
    ws = Workspace(ws_root, sandbox="off", path_guard=guard)
    calls = {
        "write_file": lambda: ws.write_file("real/canary.txt", "PWNED"),
        "read_file": lambda: ws.read_file("real/secret.txt"),
        "read_parent": lambda: ws.read_file("real/canary.txt"),
        "list_dir": lambda: ws.list_dir("real"),
        "apply_patch": lambda: ws.apply_patch(
            "--- a/real/canary.txt\n+++ b/real/canary.txt\n@@ -1 +1 @@\n-canary\n+PWNED\n"
        ),
    }
    with pytest.raises(ToolError, match="resolves through a symlink"):
        calls[tool]()
    _outside_untouched(outside)


def test_a_file_swapped_for_a_symlink_after_the_check_is_refused(layout: tuple[Path, Path]) -> None:
    ws_root, outside = layout
    (ws_root / "notes.txt").write_text("notes\n")
    guard = _SwappingGuard(ws_root, ws_root / "notes.txt", outside / "id_ed25519")
    ws = Workspace(ws_root, sandbox="off", path_guard=guard)
    with pytest.raises(ToolError, match="resolves through a symlink"):
        ws.read_file("notes.txt")
    # a write replaces the swapped-in link itself (rename), never the file it points to
    (ws_root / "notes.txt").unlink()
    (ws_root / ".parked").rename(ws_root / "notes.txt")
    assert ws.write_file("notes.txt", "new\n").startswith(("Created", "Overwrote"))
    assert (outside / "id_ed25519").read_text() == SECRET + "\n"
    assert not (ws_root / "notes.txt").is_symlink()
    assert (ws_root / "notes.txt").read_text() == "new\n"


@pytest.mark.anyio
async def test_a_command_redirection_raced_never_writes_outside(layout: tuple[Path, Path]) -> None:
    # run_command opens redirection targets itself, outside the sandbox: the same race as write_file
    ws_root, outside = layout
    _dir_and_link(ws_root, outside)
    ws = Workspace(ws_root, sandbox="off", confirm_commands=False)
    results: list[str] = []
    deadline = time.monotonic() + RACE_SECONDS
    with swapping(ws_root, "real"):
        while len(results) < 150 or time.monotonic() < deadline:
            try:
                results.append(await ws.run_command(f"echo PWNED {len(results)} > real/canary.txt"))
            except ToolError as exc:
                results.append("ERROR " + exc.message)
            except OSError as exc:
                results.append(f"OSERROR {exc!r} {traceback.format_exc(limit=-3)}")
    _outside_untouched(outside)
    assert any("exit code: 0" in r for r in results)
    _no_raw_errors(results)
