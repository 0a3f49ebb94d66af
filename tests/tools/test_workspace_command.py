"""run_command with real subprocesses: operators, timeouts, caps, environment scrubbing, guards."""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

import anyio
import pytest

from agcore.llm.types import ToolUseBlock
from agcore.tools import ToolContext, ToolDenied, ToolError, ToolRegistry
from agcore.tools.workspace import Workspace, scrub_environment

PY = shlex.quote(sys.executable)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("beta\n")
    return Workspace(root)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] == "Z"  # a zombie is dead
    except (OSError, IndexError):
        return True


@pytest.mark.anyio
async def test_exit_code_stdout_and_stderr(ws: Workspace) -> None:
    out = await ws.run_command(
        f"{PY} -c \"import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)\""
    )
    assert out.splitlines()[1:] == ["exit code: 3", "stdout:", "out", "stderr:", "err"]
    assert out.startswith(f"$ {PY} -c")
    out = await ws.run_command("true")
    assert out.splitlines()[1:] == ["exit code: 0", "stdout: (empty)", "stderr: (empty)"]


@pytest.mark.anyio
async def test_operators_redirections_cd_and_globs(ws: Workspace) -> None:
    out = await ws.run_command("echo hello > out.txt && cat out.txt | tr a-z A-Z")
    assert "stdout:\nHELLO" in out
    assert (ws.root / "out.txt").read_text() == "hello\n"
    await ws.run_command("echo more >> out.txt")
    assert (ws.root / "out.txt").read_text() == "hello\nmore\n"
    out = await ws.run_command("false && echo skipped; false || echo rescued")
    assert out.endswith("exit code: 0\nstdout:\nrescued\nstderr: (empty)")  # "skipped" never printed
    out = await ws.run_command("cat *.txt")
    assert "alpha\nbeta\nhello\nmore" in out
    out = await ws.run_command("ls 'a*'")  # quoted: not expanded
    assert "exit code: 2" in out
    out = await ws.run_command("cd sub && pwd && echo x > made_here.txt")
    assert str(ws.root / "sub") in out
    assert (ws.root / "sub" / "made_here.txt").exists()
    out = await ws.run_command(f"{PY} -c \"import sys; print('e', file=sys.stderr)\" 2>&1")
    assert "stdout:\ne" in out
    assert "stderr: (empty)" in out
    await ws.run_command(f"{PY} -c \"import sys; print('to file', file=sys.stderr)\" 2> err.log")
    assert (ws.root / "err.log").read_text() == "to file\n"
    out = await ws.run_command("wc -l < a.txt")
    assert "stdout:\n1" in out
    out = await ws.run_command("pwd", cwd="sub")
    assert out.startswith("$ pwd (in sub)")
    assert str(ws.root / "sub") in out


@pytest.mark.anyio
async def test_argv_lists_run_without_a_shell(ws: Workspace) -> None:
    out = await ws.run_command([sys.executable, "-c", "import sys; print(sys.argv[1])", "a | b; $(c) > d"])
    assert "stdout:\na | b; $(c) > d" in out
    assert not (ws.root / "d").exists()


@pytest.mark.anyio
async def test_unsupported_shell_syntax_is_explained(ws: Workspace) -> None:
    for command, phrase in (
        ("echo $(whoami)", r"\$\(\.\.\.\)"),
        ("echo $HOME", "variables are not expanded"),
        ("sleep 1 &", "background"),
        ("(cd sub; ls)", "subshells"),
        ("cat <<EOF", "here-documents"),
    ):
        with pytest.raises(ToolError, match=phrase) as info:
            await ws.run_command(command)
        assert "bash -c" in info.value.message


@pytest.mark.anyio
async def test_timeout_kills_the_process_group_and_keeps_output(ws: Workspace) -> None:
    # Guard-only (the sandbox's PID namespace is tested in test_sandbox.py): the process group goes.
    ws = Workspace(ws.root, sandbox="off")
    script = "echo started; sleep 30 & echo $! > child.pid; wait"
    began = time.monotonic()
    out = await ws.run_command(["bash", "-c", script], timeout=1)
    assert time.monotonic() - began < 10
    # Changed by issue 13: the result says what was killed, and what guard-only mode cannot track.
    assert "timed out after 1s; its process group and every process carrying its tag were killed" in out
    assert "Output so far:" in out
    assert "stdout:\nstarted" in out
    child = int((ws.root / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while not _gone(child) and time.monotonic() < deadline:  # noqa: ASYNC110  (no event for a death)
        await anyio.sleep(0.05)
    assert _gone(child), "the background child of the timed-out command is still running"


@pytest.mark.anyio
async def test_cancellation_from_outside_kills_the_command(ws: Workspace) -> None:
    ws = Workspace(ws.root, sandbox="off")  # "$$" must be a host PID for the check below
    with anyio.move_on_after(1):
        await ws.run_command(["bash", "-c", "echo $$ > shell.pid; sleep 30"], timeout=60)
    pid = int((ws.root / "shell.pid").read_text())
    deadline = time.monotonic() + 5
    while not _gone(pid) and time.monotonic() < deadline:  # noqa: ASYNC110  (no event for a death)
        await anyio.sleep(0.05)
    assert _gone(pid)


@pytest.mark.anyio
async def test_output_is_capped_keeping_head_and_tail(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, max_output_bytes=900)
    out = await ws.run_command(f"{PY} -c \"print('START' + 'x' * 100000 + 'END')\"")
    assert "START" in out
    assert "END" in out
    assert "bytes omitted: output is capped at 900 bytes per stream" in out
    assert len(out) < 1500


@pytest.mark.anyio
async def test_environment_is_built_from_an_allow_list(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_API_KEY", "sk-123")
    monkeypatch.setenv("github_token", "ghp-456")
    monkeypatch.setenv("DB_PASSWORD_FILE", "/run/pw")
    monkeypatch.setenv("HARMLESS_SETTING", "dropped too")
    probe = (
        f'{PY} -c "import os; print([os.environ.get(n) for n in '
        "('FAKE_API_KEY', 'github_token', 'DB_PASSWORD_FILE', 'HARMLESS_SETTING', 'EXTRA')])\""
    )
    out = await ws.run_command(probe)
    assert "[None, None, None, None, None]" in out
    allowed = Workspace(ws.root, env_allow=["fake_api_key", "HARMLESS_*"], env={"EXTRA": "given"})
    out = await allowed.run_command(probe)
    assert "['sk-123', None, None, 'dropped too', 'given']" in out


def test_scrub_environment_patterns() -> None:
    env = {
        "OPENAI_API_KEY": "1", "AWS_SECRET_ACCESS_KEY": "2", "AWS_SESSION_TOKEN": "3", "MY_SECRET": "4",
        "DB_PASSWORD": "5", "GOOGLE_APPLICATION_CREDENTIALS": "6", "PATH": "/bin", "HOME": "/root",
        "KEYBOARD": "us", "TOKENIZERS_PARALLELISM": "false",
    }  # fmt: skip
    assert scrub_environment(env) == {
        "PATH": "/bin", "HOME": "/root", "KEYBOARD": "us", "TOKENIZERS_PARALLELISM": "false",
    }  # fmt: skip
    assert "AWS_SESSION_TOKEN" in scrub_environment(env, allow=["AWS_*"])


@pytest.mark.anyio
async def test_cwd_must_stay_inside_the_workspace(ws: Workspace, tmp_path: Path) -> None:
    (ws.root / "out_link").symlink_to(tmp_path)
    for cwd in ("..", "../", "/tmp", str(tmp_path), "out_link", "~", "sub/../.."):
        with pytest.raises(ToolDenied):
            await ws.run_command("touch escaped.txt", cwd=cwd)
    assert not (tmp_path / "escaped.txt").exists()
    with pytest.raises(ToolError, match="not a directory"):
        await ws.run_command("ls", cwd="a.txt")
    with pytest.raises(ToolDenied):
        await ws.run_command("cd .. && touch escaped.txt")
    assert not (tmp_path / "escaped.txt").exists()


@pytest.mark.anyio
async def test_the_guards_are_checked_before_anything_runs(ws: Workspace) -> None:
    with pytest.raises(ToolDenied, match="privilege escalation"):
        await ws.run_command("touch marker.txt && sudo id")
    assert not (ws.root / "marker.txt").exists()
    with pytest.raises(ToolDenied, match="network"):
        await ws.run_command("curl https://example.com")
    with pytest.raises(ToolDenied, match=r"\.env"):
        await ws.run_command("echo KEY=1 > .env")  # the path guard's deny-list covers redirections
    assert not (ws.root / ".env").exists()


@pytest.mark.anyio
async def test_missing_program_and_bad_arguments(ws: Workspace) -> None:
    out = await ws.run_command("definitely-not-a-program-xyz --help")
    assert "exit code: 127" in out
    assert "definitely-not-a-program-xyz: command not found" in out
    with pytest.raises(ToolError, match="timeout must be between 0 and 600"):
        await ws.run_command("ls", timeout=0)
    with pytest.raises(ToolError, match="timeout must be between"):
        await ws.run_command("ls", timeout=601)
    with pytest.raises(ToolError, match="empty"):
        await ws.run_command([])


@pytest.mark.anyio
async def test_run_command_through_the_registry(ws: Workspace) -> None:
    registry = ToolRegistry(ws.tools())
    assert registry["run_command"].requires_confirmation
    call = ToolUseBlock(id="r1", name="run_command", input={"command": "cat a.txt"})
    result = await registry.execute(call, ToolContext())
    assert not result.is_error
    assert result.content == "$ cat a.txt\nexit code: 0\nstdout:\nalpha\nstderr: (empty)"
    call = ToolUseBlock(id="r2", name="run_command", input={"command": "rm -rf /"})
    result = await registry.execute(call, ToolContext())
    assert result.is_error
    assert isinstance(result.content, str)
    assert "system or home directory" in result.content


@pytest.mark.anyio
@pytest.mark.parametrize("sandbox", ["auto", "off"])
async def test_a_glob_through_a_symlink_lists_nothing_outside_the_workspace(
    tmp_path: Path, sandbox: str
) -> None:
    # An attacker's trick: the glob is expanded on the host, where a link inside leads anywhere.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret-name.txt").write_text("x")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "inside.txt").write_text("y")
    os.symlink(outside, root / "lnk")
    ws = Workspace(root, sandbox=sandbox, confirm_commands=False)  # type: ignore[arg-type]
    out = await ws.run_command("echo lnk/* *.txt")
    assert "secret-name" not in out
    assert "lnk/*" in out  # no match inside the workspace: the word stays as written
    assert "inside.txt" in out


@pytest.mark.anyio
async def test_a_credential_named_by_a_glob_is_refused_in_guard_only_mode(tmp_path: Path) -> None:
    # An attacker's trick: the guard knew `cat id_rsa`, not `cat id_rs?` (nor /proc/PID/envir*).
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_rsa").write_text("PRIVATE KEY canary")
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root, sandbox="off", confirm_commands=False)
    for command in (f"cat {outside}/id_rs?", f"bash -c 'cat {outside}/id_r*'",
                    f"bash -c 'cat /proc/{os.getpid()}/envir*'"):
        with pytest.raises(ToolDenied, match="credential"):
            await ws.run_command(command)


@pytest.mark.anyio
async def test_an_optional_path_sent_empty_means_its_default(ws: Workspace) -> None:
    """Small models fill optional arguments with "": a run_command cwd, a list_dir or grep path left
    empty means the workspace root, as if it were not sent (a 1.5B model's run failed on
    `cwd: ""` before)."""
    out = await ws.run_command("pwd", cwd="")
    assert out.startswith("$ pwd\n")
    assert str(ws.root) in out
    assert "a.txt" in ws.list_dir("")
    assert "a.txt" in await ws.grep("alpha", path="")
