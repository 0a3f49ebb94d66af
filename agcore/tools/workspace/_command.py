"""The body of ``run_command``: runs a command in the workspace without a shell.

A string command is read with the same shell reader the ``CommandGuard`` uses, and a safe subset of
shell syntax is carried out here: ``&&``, ``||``, ``;`` and newlines between commands, ``|``
pipelines, redirections (``<``, ``>``, ``>>``, ``2>``, ``2>>``, ``2>&1``, ``&>``, ``&>>``) to files
checked by the ``PathGuard``, ``cd DIR`` (inside the workspace) and unquoted ``*``/``?``/``[...]``
globs (expanded inside the working directory, left as written when nothing matches, as bash does).
Anything else a shell would do (``$VAR`` expansion, ``$(...)``, backgrounding with ``&``, subshells,
here-documents) is refused with a message; ``bash -c '...'`` remains available and its script is
checked by the guard too. An argv list runs as given.

With a sandbox (``agcore.tools._sandbox``) every process runs inside bubblewrap, in its own PID
namespace: when the process ends or is killed, everything it started dies with it. Without one (guard-
only mode) each process starts in its own session and its whole process group is killed when it ends
or times out, and so is every process carrying the command's tag in its environment (``_leftovers``:
a ``setsid`` child too). Output is capped
(head and tail kept); the environment is the caller's (``_environment`` builds it). Standard input is empty
(``/dev/null``): a command waiting for input ends instead of hanging. A caller may give text instead
(``stdin``: an acceptance check reads the model's answer); each command of a sequence reads it from its
start, as each would read a file redirected in with ``<``.
"""

from __future__ import annotations

import contextlib
import glob as globbing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.to_thread
from anyio.abc import ByteReceiveStream, Process

from agcore.tools._errors import ToolError
from agcore.tools._path_guard import PathGuard
from agcore.tools._sandbox import BwrapSandbox
from agcore.tools._shell_syntax import ShellSyntaxError, SimpleCommand, Word, parse_script
from agcore.tools.workspace._command_result import CommandResult
from agcore.tools.workspace._fd_paths import open_redirection
from agcore.tools.workspace._leftovers import TAG_VARIABLE, kill_tagged

__all__ = ["CommandResult", "plan_command", "run_plan"]

_SEQUENCE_OPERATORS = frozenset({"", ";", "&&", "||", "\n"})
_SUPPORTED_REDIRECTS = frozenset({"<", "0<", ">", "1>", ">>", "1>>", ">|", "2>", "2>>", "&>", "&>>", "2>&"})
_SHELL_HINT = "or run it through `bash -c '...'` (the guard checks that script too)"


# ------------------------------------------------------------------------------------- planning


@dataclass(slots=True)
class _Stage:
    words: tuple[Word, ...]
    redirects: list[tuple[str, str]] = field(default_factory=list)


@dataclass(slots=True)
class _Step:
    joiner: str  # "", ";", "&&", "||"
    stages: list[_Stage]  # a pipeline; a lone "cd" stage is the built-in


def plan_command(command: str | Sequence[str]) -> list[_Step]:
    """What to run, or ``ToolError`` for syntax this runner does not carry out."""
    if not isinstance(command, str):
        return [_Step("", [_Stage(tuple(Word(a, quoted=True) for a in command))])]
    try:
        parsed = parse_script(command)
    except ShellSyntaxError as exc:
        raise ToolError(f"cannot read the command: {exc}") from exc
    if parsed.substitutions:
        raise ToolError(
            f"run_command does not use a shell, so $(...), `...` and <(...) are not supported; run the "
            f"inner command first and use its output, {_SHELL_HINT}"
        )
    steps: list[_Step] = []
    for simple in parsed.commands:
        if simple.joiner in ("|",):
            steps[-1].stages.append(_stage(simple))
        elif simple.joiner in _SEQUENCE_OPERATORS:
            steps.append(_Step(simple.joiner.replace("\n", ";"), [_stage(simple)]))
        else:
            raise ToolError(_unsupported(simple.joiner))
    for operator in parsed.operators:
        if operator not in _SEQUENCE_OPERATORS | {"|"} and operator not in _SUPPORTED_REDIRECTS:
            raise ToolError(_unsupported(operator))
    if not steps:
        raise ToolError("the command is empty; give the program to run, e.g. 'ls -la'")
    return steps


def _unsupported(operator: str) -> str:
    what = {
        "&": "running in the background (&)",
        "(": "subshells ( ... )",
        ")": "subshells ( ... )",
        "|&": "'|&'",
        ";;": "case statements",
        "<<": "here-documents (<<)",
        "<<-": "here-documents (<<-)",
        "<<<": "here-strings (<<<)",
    }.get(operator, f"the operator '{operator}'")
    return (
        f"run_command does not use a shell and does not support {what}; supported: && || ; | < > >> 2> "
        f"2>&1 &> and cd, {_SHELL_HINT}"
    )


def _stage(simple: SimpleCommand) -> _Stage:
    for word in simple.words:
        if word.expansion:
            raise ToolError(
                f"'{word.text}': run_command does not use a shell, so variables are not expanded; write the "
                f"value itself, {_SHELL_HINT}"
            )
    if not simple.words:
        raise ToolError("a redirection needs a command before it, e.g. 'echo hi > out.txt'")
    redirects: list[tuple[str, str]] = []
    for operator, target in simple.redirects:
        if operator not in _SUPPORTED_REDIRECTS:
            raise ToolError(_unsupported(operator))
        if operator == "2>&" and target.text != "1":
            raise ToolError(f"only 2>&1 is supported among descriptor copies, not {operator}{target.text}")
        if target.expansion:
            raise ToolError(f"'{target.text}': variables are not expanded in redirections; write the path")
        redirects.append((operator, target.text))
    return _Stage(simple.words, redirects)


# --------------------------------------------------------------------------------------- running


class _Capped:
    """Keeps the head and the tail of a stream, counting what falls between."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit * 2 // 3
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    def text(self) -> str:
        omitted = self.total - len(self.head) - len(self.tail)
        head = self.head.decode("utf-8", "replace")
        if omitted <= 0:
            return (self.head + self.tail).decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        limit = self.head_limit + self.tail_limit
        note = f"[... {omitted:,} bytes omitted: output is capped at {limit:,} bytes per stream ...]"
        return f"{head}\n{note}\n{tail}"


@dataclass(slots=True)
class _Run:
    guard: PathGuard
    env: dict[str, str]
    stdout: _Capped
    stderr: _Capped
    cwd: Path
    sandbox: BwrapSandbox | None = None
    allow_network: bool = False
    masked_sockets: tuple[Path, ...] = ()
    private_home: Path | None = None
    stdin: IO[bytes] | None = None  # the caller's text, read from its start by each step
    read_stdin: bool = False  # whether a step read some of it (the shared file offset moved)


async def run_plan(
    steps: list[_Step],
    *,
    guard: PathGuard,
    cwd: Path,
    env: dict[str, str],
    time_limit: float,
    max_output: int,
    sandbox: BwrapSandbox | None = None,
    allow_network: bool = False,
    masked_sockets: Sequence[Path] = (),
    private_home: Path | None = None,
    stdin: str | None = None,
) -> CommandResult:
    """Carry out ``steps``; with a ``sandbox`` each process runs inside it (see the module doc), with
    ``masked_sockets`` unreachable, and ``stdin`` (if given) as each step's standard input."""
    run = _Run(
        guard,
        env,
        _Capped(max_output),
        _Capped(max_output),
        cwd,
        sandbox,
        allow_network,
        tuple(masked_sockets),
        private_home,
    )
    with contextlib.ExitStack() as files:
        if stdin is not None:  # a file, not a pipe: any size, and no writer to keep fed
            run.stdin = files.enter_context(tempfile.TemporaryFile())
            run.stdin.write(stdin.encode("utf-8"))
            run.stdin.flush()
            run.stdin.seek(0)  # read from its start; an offset past 0 later means a command read it
        return await _run_all(run, steps, time_limit)


async def _run_all(run: _Run, steps: list[_Step], time_limit: float) -> CommandResult:
    status = 0
    timed_out = False
    with anyio.move_on_after(time_limit) as scope:
        for step in steps:
            if (step.joiner == "&&" and status != 0) or (step.joiner == "||" and status == 0):
                continue
            status = await _run_step(run, step)
    if scope.cancelled_caught:
        timed_out = True
    _input(run)  # the last step's reading counted too
    return CommandResult(
        None if timed_out else status,
        run.stdout.text(),
        run.stderr.text(),
        run.guard.relative(run.cwd),
        timed_out,
        read_stdin=run.read_stdin,
    )


async def _run_step(run: _Run, step: _Step) -> int:
    first = step.stages[0]
    if len(step.stages) == 1 and first.words[0].text == "cd" and not first.words[0].quoted:
        return _change_directory(run, first)
    files: list[IO[bytes]] = []
    fds: set[int] = set()  # pipe ends the parent still holds
    processes: list[Process] = []
    reaped = anyio.Event()  # set once _reap has killed what the stages left behind
    try:
        previous: int | None = None  # read end of the pipe from the stage before
        for index, stage in enumerate(step.stages):
            pipe_read = pipe_write = None
            if index < len(step.stages) - 1:
                pipe_read, pipe_write = os.pipe()
                fds.update((pipe_read, pipe_write))
            stdin: Any = previous if previous is not None else _input(run)
            stdout: Any = pipe_write if pipe_write is not None else subprocess.PIPE
            stderr: Any = subprocess.PIPE
            for operator, target in stage.redirects:
                if operator in ("<", "0<"):
                    stdin = _open(run, target, "rb", files)
                elif operator in (">", "1>", ">|", ">>", "1>>"):
                    stdout = _open(run, target, "ab" if ">>" in operator else "wb", files)
                elif operator in ("2>", "2>>"):
                    stderr = _open(run, target, "ab" if ">>" in operator else "wb", files)
                elif operator == "2>&":
                    stderr = subprocess.STDOUT if stdout is subprocess.PIPE else stdout
                else:  # &> and &>>: both streams to one file
                    stdout = stderr = _open(run, target, "ab" if operator == "&>>" else "wb", files)
            argv = _expand(stage.words, run.cwd, run.guard.root)
            if run.sandbox is not None:
                missing = _not_runnable(argv[0], run)
                if missing is not None:
                    run.stderr.add(missing[1].encode())
                    return missing[0]
                argv = run.sandbox.wrap(
                    argv, workspace=run.guard.root, cwd=run.cwd, allow_network=run.allow_network,
                    masked_sockets=run.masked_sockets, private_home=run.private_home, env=run.env,
                    parent_process=_running_on_trio(),
                )  # fmt: skip
            try:
                # Guard-only: a session of its own, so the whole process group can be killed. In the
                # sandbox the PID namespace does that, and a setsid here costs ~6 ms per command.
                process = await anyio.open_process(
                    argv, stdin=stdin, stdout=stdout, stderr=stderr, cwd=run.cwd, env=run.env,
                    start_new_session=run.sandbox is None,
                )  # fmt: skip
            except FileNotFoundError:
                run.stderr.add(f"{argv[0]}: command not found\n".encode())
                return 127
            except PermissionError:
                run.stderr.add(f"{argv[0]}: permission denied (not executable)\n".encode())
                return 126
            processes.append(process)
            for fd in (previous, pipe_write):  # the child holds its own copies now
                if fd is not None:
                    os.close(fd)
                    fds.discard(fd)
            previous = pipe_read
        async with anyio.create_task_group() as group:
            for process in processes:
                if process.stderr is not None:
                    group.start_soon(_drain, process.stderr, run.stderr)
            if processes[-1].stdout is not None:
                group.start_soon(_drain, processes[-1].stdout, run.stdout)
            group.start_soon(_reap, processes, run.sandbox is None, run.env.get(TAG_VARIABLE), reaped)
        codes = [await process.wait() for process in processes]
        return codes[-1]
    finally:
        for fd in fds:
            os.close(fd)
        for handle in files:
            handle.close()
        with anyio.CancelScope(shield=True):
            for process in processes:
                await _kill(process, run.sandbox is None)
            if run.sandbox is None and TAG_VARIABLE in run.env and not reaped.is_set():
                kill_tagged(run.env[TAG_VARIABLE])  # cancelled or failed before _reap got to it


def _input(run: _Run) -> Any:
    """A step's first stage's standard input: the caller's text from its start, or nothing. The
    children share the file's offset, so an offset moved since the last rewind means one read it."""
    if run.stdin is None:
        return subprocess.DEVNULL
    descriptor = run.stdin.fileno()
    run.read_stdin = run.read_stdin or os.lseek(descriptor, 0, os.SEEK_CUR) > 0
    os.lseek(descriptor, 0, os.SEEK_SET)
    return run.stdin


def _change_directory(run: _Run, stage: _Stage) -> int:
    args = [w.text for w in stage.words[1:]]
    if len(args) != 1:
        run.stderr.add(b"cd: give exactly one directory inside the workspace\n")
        return 1
    target = os.path.join(run.guard.relative(run.cwd), args[0])
    resolved = run.guard.resolve(target)
    if not resolved.is_dir():
        run.stderr.add(f"cd: {args[0]}: not a directory\n".encode())
        return 1
    run.cwd = resolved
    return 0


def _open(run: _Run, target: str, mode: str, files: list[IO[bytes]]) -> IO[bytes]:
    relative = os.path.join(run.guard.relative(run.cwd), target)
    try:
        if target in ("/dev/null",):
            handle = open(os.devnull, mode)  # noqa: SIM115  (closed by the caller's finally)
        else:
            # opened by this (unsandboxed) process: through descriptors, so a directory swapped for
            # a symlink after the guard's check is refused rather than followed out of the workspace
            path = run.guard.resolve(relative, for_write=mode != "rb")
            handle = os.fdopen(open_redirection(run.guard, path, mode), mode)
    except OSError as exc:
        raise ToolError(f"cannot open '{target}' for a redirection: {exc.strerror}") from exc
    files.append(handle)
    return handle


def _expand(words: Sequence[Word], cwd: Path, root: Path) -> list[str]:
    """The words with relative globs expanded as the shell would, on the host: so only to names whose
    directory lies inside the workspace (a symlink inside may point anywhere, and its listing would
    tell what is there); a glob that matches nothing there stays as written."""
    argv: list[str] = []
    real_root = os.path.realpath(root)
    for word in words:
        pattern = word.text
        if word.glob and not os.path.isabs(pattern) and ".." not in pattern.split("/"):
            found = sorted(
                name for name in globbing.glob(pattern, root_dir=cwd)
                if _inside(os.path.realpath(os.path.join(cwd, os.path.dirname(name))), real_root)
            )
            if found:
                argv.extend(found)
                continue
        argv.append(pattern)
    return argv


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


async def _drain(stream: ByteReceiveStream, sink: _Capped) -> None:
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        async for chunk in stream:
            sink.add(chunk)


def _running_on_trio() -> bool:
    """Whether this runs under trio, which starts processes from worker threads (see
    ``BwrapSandbox.wrap``'s ``parent_process``)."""
    trio = sys.modules.get("trio")
    if trio is None:
        return False
    try:
        trio.lowlevel.current_trio_token()
    except RuntimeError:
        return False
    return True


def _not_runnable(program: str, run: _Run) -> tuple[int, str] | None:
    """Inside bwrap a missing program is bwrap's own error; say it the way a shell would, first."""
    if "/" in program:
        path = os.path.join(run.cwd, program)
        if not os.path.exists(path):
            return 127, f"{program}: command not found\n"
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            return 126, f"{program}: permission denied (not executable)\n"
        return None
    if shutil.which(program, path=run.env.get("PATH", os.defpath)) is None:
        return 127, f"{program}: command not found\n"
    return None


async def _reap(processes: list[Process], grouped: bool, tag: str | None, reaped: anyio.Event) -> None:
    """Once every stage has exited, kill what they left behind (background children still holding
    the output pipes would otherwise keep the command running until its timeout). In the sandbox
    the kernel already did: the PID namespace died with its first process. Guard-only, the process
    groups and then every process carrying the command's tag (``_leftovers``)."""
    for process in processes:
        await process.wait()
    if grouped:
        for process in processes:
            _kill_group(process)
        if tag is not None:
            await anyio.to_thread.run_sync(kill_tagged, tag)
    reaped.set()


def _kill_group(process: Process) -> None:
    killpg = getattr(os, "killpg", None)
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if killpg is not None:
            # Also after the leader exited: its group lives on while any member does.
            killpg(process.pid, signal.SIGKILL)
        elif process.returncode is None:  # pragma: no cover - Windows has no process groups to kill
            process.kill()


async def _kill(process: Process, grouped: bool) -> None:
    if grouped:
        _kill_group(process)
    elif process.returncode is None:
        # bwrap: its --die-with-parent takes the sandbox's PID namespace, and everything in it, along.
        with contextlib.suppress(ProcessLookupError, OSError):
            process.kill()
    with contextlib.suppress(Exception):
        await process.aclose()
