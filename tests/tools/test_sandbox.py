"""The bubblewrap sandbox of run_command: how it is chosen (auto / required / off, said once), the
command line it builds, and what it holds with real processes: writes outside the workspace, hidden
credentials, no network, a private /tmp, and no process outliving its command."""

from __future__ import annotations

import logging
import os
import random
import shutil
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agcore.tools import ToolDenied, _sandbox
from agcore.tools._sandbox import BwrapSandbox, SandboxUnavailable, probe_bwrap, select_sandbox
from agcore.tools._sandbox_view import SandboxView
from agcore.tools.workspace import Workspace
from tests.tools.sandbox_support import processes_with, require_bwrap, scratch_dir


@pytest.fixture
def scratch() -> Iterator[Path]:
    yield from scratch_dir()


@pytest.fixture
def sandboxed(scratch: Path) -> Workspace:
    require_bwrap()
    (scratch / "ws").mkdir()
    (scratch / "ws" / "a.txt").write_text("alpha\n")
    return Workspace(scratch / "ws", sandbox="required", confirm_commands=True)


# ----------------------------------------------------------------------------------- choosing


def test_off_is_guard_only_and_said_once(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    _sandbox._warned.discard("off")
    with caplog.at_level(logging.WARNING, logger="agcore.tools.sandbox"):
        first = Workspace(tmp_path, sandbox="off")
        Workspace(tmp_path, sandbox="off")
    assert not first.sandboxed
    assert first.sandbox_description == "guard-only (sandbox off)"
    said = [r.getMessage() for r in caplog.records if "sandbox is off" in r.getMessage()]
    assert len(said) == 1
    assert "CommandGuard only" in said[0]


def test_without_bwrap_auto_warns_once_and_required_refuses(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on PATH
    probe_bwrap.cache_clear()
    _sandbox._warned.clear()
    try:
        with caplog.at_level(logging.WARNING, logger="agcore.tools.sandbox"):
            auto = select_sandbox("auto")
            select_sandbox("auto")
        assert auto.sandbox is None
        assert auto.description == "guard-only (bubblewrap (bwrap) is not installed)"
        warnings = [r.getMessage() for r in caplog.records]
        assert len(warnings) == 1
        assert "no command sandbox: bubblewrap (bwrap) is not installed" in warnings[0]
        assert "sandbox='required'" in warnings[0]
        with pytest.raises(SandboxUnavailable, match=r"apt-get install bubblewrap") as info:
            Workspace(tmp_path, sandbox="required")
        assert info.value.reason == "bubblewrap (bwrap) is not installed"
    finally:
        probe_bwrap.cache_clear()


def test_a_bwrap_that_fails_is_reported_with_its_error(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    probe = probe_bwrap(str(fake))
    assert probe.path is None
    assert "No permissions to creating new namespace" in probe.reason
    assert "user namespaces" in probe.reason


def test_the_user_namespace_flag_falls_back_only_when_needed(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"  # fails like root with CAP_SYS_ADMIN where user namespaces are off
    fake.write_text(
        '#!/bin/sh\n[ "$1" = --unshare-user ] && { echo "bwrap: setting up uid map" >&2; exit 1; }\nexit 0\n'
    )
    fake.chmod(0o755)
    probe = probe_bwrap(str(fake))
    assert (probe.path, probe.user_namespace) == (str(fake), "--unshare-user-try")
    argv = BwrapSandbox(str(fake), probe.user_namespace).wrap(["ls"], workspace=tmp_path, cwd=tmp_path,
                                                                 allow_network=False)  # fmt: skip
    assert argv[1] == "--unshare-user-try"


def test_mode_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGCORE_SANDBOX", "off")
    assert select_sandbox(None).mode == "off"
    monkeypatch.setenv("AGCORE_SANDBOX", "sometimes")
    with pytest.raises(ValueError, match="AGCORE_SANDBOX='sometimes': choose one of auto, required, off"):
        Workspace(tmp_path)
    with pytest.raises(ValueError, match="sandbox must be one of"):
        select_sandbox("maybe")  # type: ignore[arg-type]


def test_the_command_line_it_builds(scratch: Path) -> None:
    home = scratch / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".netrc").write_text("machine x password y\n")
    ws = scratch / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    argv = BwrapSandbox("/usr/bin/bwrap").wrap(
        ["ls", "-la"], workspace=ws, cwd=ws, allow_network=False, home_dirs=[home]
    )
    assert argv[0] == "/usr/bin/bwrap"
    assert argv[-3:] == ["--", "ls", "-la"]
    joined = " ".join(argv)
    for expected in (
        "--unshare-user", "--ro-bind /usr /usr", "--ro-bind /etc /etc", "--dev /dev", "--proc /proc",
        "--tmpfs /tmp", "--unshare-pid", "--unshare-net",
        "--die-with-parent", "--cap-drop ALL", f"--bind {ws} {ws}", f"--chdir {ws}",
        f"--ro-bind {ws / '.git/hooks'} {ws / '.git/hooks'}",
        f"--ro-bind {ws / '.git/config'} {ws / '.git/config'}",
    ):  # fmt: skip
        assert expected in joined, expected
    assert "--ro-bind / /" not in joined  # reads are confined: the machine is not mounted whole
    assert str(home) not in joined  # a home that is not shown needs nothing hidden in it
    shown = BwrapSandbox("/usr/bin/bwrap", view=SandboxView((home,))).wrap(
        ["ls"], workspace=ws, cwd=ws, allow_network=False, home_dirs=[home]
    )
    joined = " ".join(shown)
    for expected in (
        f"--ro-bind {home} {home}",
        f"--tmpfs {home / '.ssh'} --remount-ro {home / '.ssh'}", f"--ro-bind /dev/null {home / '.netrc'}",
    ):  # fmt: skip
        assert expected in joined, expected
    # the workspace is bound before the hidden and protected paths, so they win inside it
    assert joined.index(f"--bind {ws}") < joined.index(f"--ro-bind {ws / '.git/hooks'}")
    networked = BwrapSandbox("/usr/bin/bwrap").wrap(["ls"], workspace=ws, cwd=ws, allow_network=True)
    assert "--unshare-net" not in networked


def test_a_new_session_only_when_there_is_a_terminal_to_protect(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for terminal in (True, False):
        monkeypatch.setattr(_sandbox, "has_controlling_terminal", lambda terminal=terminal: terminal)
        argv = BwrapSandbox("bwrap").wrap(["ls"], workspace=tmp_path, cwd=tmp_path, allow_network=False)
        assert ("--new-session" in argv) is terminal


# ------------------------------------------------------------------------------ real processes


@pytest.mark.anyio
async def test_writes_outside_the_workspace_fail_inside_it_work(sandboxed: Workspace, scratch: Path) -> None:
    (scratch / "outside.txt").write_text("keep\n")
    # In a script file, so the guard cannot read it: only the sandbox stands in the way.
    out = await _script(sandboxed, f"echo PWNED > {scratch}/outside.txt; rm -f {scratch}/outside.txt")
    assert "Read-only file system" in out
    assert (scratch / "outside.txt").read_text() == "keep\n"
    out = await sandboxed.run_command(["bash", "-c", "echo made > made.txt && cat made.txt"])
    assert "stdout:\nmade" in out
    assert (sandboxed.root / "made.txt").read_text() == "made\n"


@pytest.mark.anyio
async def test_tmp_is_private_and_writable(sandboxed: Workspace) -> None:
    marker = f"agcore-private-tmp-{random.randrange(10**9)}"
    # (the guard refuses a literal write to /tmp: it is outside the workspace; programs use it freely)
    out = await _script(sandboxed, f"echo x > /tmp/{marker} && ls /tmp && echo $TMPDIR")
    assert marker in out
    assert "/tmp" in out
    assert marker not in os.listdir("/tmp")  # it lived in the sandbox's own /tmp


@pytest.mark.anyio
async def test_credentials_in_home_are_hidden(
    sandboxed: Workspace, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = scratch / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("FAKE-KEY-CONTENT\n")
    (home / ".netrc").write_text("machine x login u password FAKE-NETRC\n")
    (home / "notes.txt").write_text("ordinary file\n")
    monkeypatch.setenv("HOME", str(home))
    # (commands get a private HOME: the real one is named by its path)
    script = f"ls -A {home}/.ssh; cat {home}/.ssh/id_ed25519 {home}/.netrc; cat {home}/notes.txt"
    out = await _script(sandboxed, script)
    assert "FAKE-KEY-CONTENT" not in out
    assert "FAKE-NETRC" not in out
    assert "ordinary file" not in out  # reads are confined: the home is not there at all
    assert "notes.txt: No such file or directory" in out
    shown = Workspace(sandboxed.root, sandbox="required", readable=[home])
    out = await _script(shown, script)
    assert "FAKE-KEY-CONTENT" not in out
    assert "FAKE-NETRC" not in out
    assert "ordinary file" in out  # readable=[home]: the rest is shown, its credentials still hidden


@pytest.mark.anyio
async def test_no_network_unless_allowed(scratch: Path) -> None:
    require_bwrap()
    (scratch / "ws").mkdir()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    probe = (
        f"import socket\ntry:\n socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        " print('CONNECTED')\nexcept OSError as exc:\n print('BLOCKED', exc)\n"
    )
    (scratch / "ws" / "probe.py").write_text(probe)
    try:
        closed = Workspace(scratch / "ws", sandbox="required")
        out = await closed.run_command([sys.executable, "probe.py"])
        assert "BLOCKED" in out
        opened = Workspace(scratch / "ws", sandbox="required", allow_network=True)
        out = await opened.run_command([sys.executable, "probe.py"])
        assert "CONNECTED" in out
    finally:
        server.close()


@pytest.mark.anyio
async def test_background_children_die_with_the_command(sandboxed: Workspace) -> None:
    marker = f"{random.randrange(10**5, 10**6)}.{random.randrange(10**6)}"
    began = time.monotonic()
    out = await sandboxed.run_command(["bash", "-c", f"sleep {marker} & setsid sleep {marker} & echo hi"])
    assert "stdout:\nhi" in out
    assert time.monotonic() - began < 5  # did not wait for the children's pipes until a timeout
    await _no_process_with(marker)


@pytest.mark.anyio
async def test_a_timeout_kills_every_descendant(sandboxed: Workspace) -> None:
    marker = f"{random.randrange(10**5, 10**6)}.{random.randrange(10**6)}"
    script = f"(setsid nohup sleep {marker} >/dev/null 2>&1 &); sleep {marker} & echo started; wait"
    out = await sandboxed.run_command(["bash", "-c", script], timeout=1)
    assert "timed out after 1s; the command and every process it started were killed" in out
    assert "stdout:\nstarted" in out
    await _no_process_with(marker)


@pytest.mark.anyio
async def test_cancelling_the_tool_kills_the_sandbox(sandboxed: Workspace) -> None:
    marker = f"{random.randrange(10**5, 10**6)}.{random.randrange(10**6)}"
    with anyio.move_on_after(1):
        await sandboxed.run_command(["bash", "-c", f"setsid sleep {marker} & sleep {marker}"], timeout=60)
    await _no_process_with(marker)


@pytest.mark.anyio
async def test_guard_only_mode_kills_the_group_when_the_command_ends(scratch: Path) -> None:
    (scratch / "ws").mkdir()
    plain = Workspace(scratch / "ws", sandbox="off")
    marker = f"{random.randrange(10**5, 10**6)}.{random.randrange(10**6)}"
    began = time.monotonic()
    out = await plain.run_command(["bash", "-c", f"sleep {marker} & echo hi"], timeout=20)
    assert "stdout:\nhi" in out
    assert time.monotonic() - began < 5
    await _no_process_with(marker)


@pytest.mark.anyio
async def test_missing_programs_read_like_a_shell(sandboxed: Workspace) -> None:
    out = await sandboxed.run_command("definitely-not-a-program-xyz --help")
    assert "exit code: 127" in out
    assert "definitely-not-a-program-xyz: command not found" in out
    (sandboxed.root / "notexec.sh").write_text("echo hi\n")
    out = await sandboxed.run_command("./notexec.sh")
    assert "exit code: 126" in out


@pytest.mark.anyio
async def test_git_hooks_cannot_be_planted(sandboxed: Workspace) -> None:
    if shutil.which("git") is None:
        pytest.fail("git is needed by the sandbox tests")
    await sandboxed.run_command("git init -q")
    hooks = sandboxed.root / ".git" / "hooks"
    before = sorted(os.listdir(hooks))
    rebuilt = Workspace(sandboxed.root, sandbox="required")  # .git/hooks exists now: protected
    with pytest.raises(ToolDenied, match="git runs or reads later"):  # the guard says why
        await rebuilt.run_command(["bash", "-c", "echo 'touch /tmp/owned' > .git/hooks/pre-commit"])
    out = await _script(rebuilt, "echo 'touch /tmp/owned' > .git/hooks/pre-commit")  # the sandbox holds
    assert "Read-only file system" in out
    assert sorted(os.listdir(hooks)) == before


async def _script(workspace: Workspace, script: str) -> str:
    (workspace.root / "script.sh").write_text(script + "\n")
    return await workspace.run_command("bash script.sh")


async def _no_process_with(marker: str) -> None:
    deadline = time.monotonic() + 3
    while processes_with(marker) and time.monotonic() < deadline:  # noqa: ASYNC110  (no event for a death)
        await anyio.sleep(0.05)
    assert processes_with(marker) == []


@pytest.mark.anyio
async def test_a_python_installed_under_tmp_still_runs_inside(
    sandboxed: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fresh clone under /tmp (CI's, say) has its virtualenv there: the private /tmp hid it, and
    # every command that ran agcore's own interpreter failed with "bwrap: execvp ...: No such file".
    import tempfile

    venv = Path(tempfile.mkdtemp(prefix="agcore-venv-", dir="/tmp"))
    try:
        await anyio.run_process([sys.executable, "-m", "venv", "--without-pip", str(venv)])
        python = venv / "bin" / "python"
        monkeypatch.setattr(sys, "prefix", str(venv))  # as if agcore ran from that environment
        result = await sandboxed.run_command(f"{python} -c 'print(6 * 7)'")
        assert "42" in result, result
    finally:
        shutil.rmtree(venv, ignore_errors=True)


@pytest.mark.anyio
async def test_a_long_command_is_not_killed_when_the_thread_that_started_it_idles_out(
    sandboxed: Workspace, anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bwrap's --die-with-parent signals when the *thread* that started it ends; trio starts processes
    from worker threads that end after 10 s idle, so every sandboxed command longer than that died
    with -9 on trio. Here the idle timeout is cut to 0.2 s to show it without waiting."""
    if anyio_backend == "trio":
        from trio._core import _thread_cache  # private: only to shorten the wait in this test

        monkeypatch.setattr(_thread_cache, "IDLE_TIMEOUT", 0.2)
    out = await sandboxed.run_command("sleep 1.5", timeout=30)
    assert "exit code: 0" in out, out
