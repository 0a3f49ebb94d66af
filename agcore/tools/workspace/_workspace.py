"""``Workspace``: a directory an agent may read, search, edit and run commands in, and its tools.

```python
from agcore.tools import ToolRegistry
from agcore.tools.workspace import Workspace

workspace = Workspace("/path/to/project", env_allow=["GITHUB_TOKEN"])
registry = ToolRegistry(workspace.tools())
```

Every path goes through a ``PathGuard`` (the workspace root, secrets denied, ``.git`` read-only) and
every command through a ``CommandGuard`` (no destruction, escalation or network by default), then runs
inside a bubblewrap sandbox where one works (``sandbox="auto"``; ``"required"`` refuses to run without
it, ``"off"`` is guard-only). Writes, patches and commands have ``requires_confirmation=True`` unless
``confirm_writes``/``confirm_commands`` say otherwise: the agent loop asks before running them.
``read_file``, ``list_dir``, ``glob`` and ``grep`` are ``read_only`` (offered while a task agent drafts
a plan read-only). Each method is also usable directly.
"""

from __future__ import annotations

import os
import shlex
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from agcore._clock import new_id
from agcore.tools._command_guard import CommandGuard
from agcore.tools._errors import ToolError
from agcore.tools._git_traps import GitTrapCheck
from agcore.tools._path_guard import PathGuard
from agcore.tools._sandbox import GUARD_ONLY_GAPS, SandboxMode, select_sandbox
from agcore.tools._sandbox_view import SandboxView
from agcore.tools._sockets import SocketScan
from agcore.tools._tool import Tool
from agcore.tools.workspace import _files
from agcore.tools.workspace._command import CommandResult, plan_command, run_plan
from agcore.tools.workspace._command_precheck import checked_command, command_refusal
from agcore.tools.workspace._dropped_definitions import DroppedDefinitions
from agcore.tools.workspace._edit import describe_edit, plan_edit
from agcore.tools.workspace._edit_miss import EditMisses
from agcore.tools.workspace._environment import (
    CommandEnvironment,
    env_allow_from_environment,
    make_private_home,
)
from agcore.tools.workspace._grep import GrepBackend, grep
from agcore.tools.workspace._leftovers import TAG_VARIABLE
from agcore.tools.workspace._patch import UndoRecord, apply_changes, plan_patch, undo
from agcore.tools.workspace._placeholder import refuse_placeholder
from agcore.tools.workspace._read_record import ReadRecord
from agcore.tools.workspace._readable import ReadableRoots
from agcore.tools.workspace._report_copy import refuse_report_copy

__all__ = ["TOOL_NAMES", "Workspace", "workspace_tools"]

TOOL_NAMES = (
    "read_file", "write_file", "edit_file", "list_dir", "glob", "grep", "apply_patch", "undo_patch",
    "run_command",
)  # fmt: skip


class Workspace:
    """A root directory and the guarded operations on it; ``tools()`` offers them to the model.

    Every path goes through a ``PathGuard`` (the root, secrets denied, ``.git`` read-only) and every
    command through a ``CommandGuard``, then runs in a bubblewrap sandbox where one works
    (``sandbox="auto"``; ``"required"`` refuses to run without it, ``"off"`` is guard-only). Writes,
    patches and commands need confirmation unless ``confirm_writes``/``confirm_commands`` say
    otherwise. Each method is also usable directly.

    Options: ``path_guard``/``command_guard`` replace the default guards (the path guard's root must
    be ``root``); ``allow_network`` is passed to the default command guard; ``env`` sets variables for
    commands; ``env_allow`` names (or globs, case-insensitive) the variables of agcore's environment
    commands see besides ``DEFAULT_ENV_ALLOW`` (everything else is dropped; ``$AGCORE_ENV_ALLOW`` adds
    more; ``env_allowlist`` is the old name); ``HOME`` is a private, empty directory of the workspace's;
    ``max_*`` cap what one call reads or returns; ``command_timeout`` is the default per command and
    ``max_command_timeout`` the most a model may ask for; ``grep_backend`` forces ``"ripgrep"`` or
    ``"python"``; ``undo_depth`` is how many patches ``undo_patch`` can take back.
    ``read_before_write`` (default True): ``write_file`` and ``edit_file`` refuse to replace an
    existing file whose current content this workspace has not read (or written): docs/tools.md.

    ``readable`` names directories (or files) outside the workspace that commands and the file tools
    may read (commands see nothing else of the user's; ``$AGCORE_READABLE`` adds more).
    ``sandbox`` chooses the command sandbox: ``"auto"`` (bubblewrap where it works, else guard-only,
    said once in the log), ``"required"`` (``SandboxUnavailable`` here if there is none), ``"off"``;
    None reads ``$AGCORE_SANDBOX`` (default ``"auto"``). ``sandbox_description`` says which is active.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        path_guard: PathGuard | None = None,
        command_guard: CommandGuard | None = None,
        allow_network: bool = False,
        env: Mapping[str, str] | None = None,
        env_allow: Iterable[str] = (),
        env_allowlist: Iterable[str] = (),
        confirm_writes: bool = True,
        confirm_commands: bool = True,
        max_read_bytes: int = 40_000,
        max_read_lines: int = 2_000,
        max_list_entries: int = 500,
        max_glob_results: int = 500,
        max_grep_results: int = 1_000,
        max_output_bytes: int = 20_000,
        command_timeout: float = 120.0,
        max_command_timeout: float = 600.0,
        grep_backend: GrepBackend = "auto",
        undo_depth: int = 20,
        sandbox: SandboxMode | None = None,
        read_before_write: bool = True,
        readable: Iterable[str | os.PathLike[str]] = (),
    ) -> None:
        self.path_guard = path_guard if path_guard is not None else PathGuard(root)
        if self.path_guard.root != Path(os.path.realpath(os.fspath(root))):
            raise ValueError(f"path_guard's root {self.path_guard.root} is not the workspace root {root}")
        self.root = self.path_guard.root
        self.command_guard = (
            command_guard
            if command_guard is not None
            else CommandGuard(workspace=self.root, allow_network=allow_network)
        )
        for name, value in (("max_read_bytes", max_read_bytes), ("max_output_bytes", max_output_bytes)):
            if value < 1:
                raise ValueError(f"{name} must be positive, got {value}")
        if not 0 < command_timeout <= max_command_timeout:
            raise ValueError("command_timeout must be positive and at most max_command_timeout")
        self.env = dict(env or {})
        self.env_allow = (*env_allow, *env_allowlist, *env_allow_from_environment())
        self._environment = CommandEnvironment(self.env_allow, tuple(self.env.items()))
        self._home: Path | None = None
        self.confirm_writes = confirm_writes
        self.confirm_commands = confirm_commands
        self.read_limits = _files.ReadLimits(max_read_bytes, max_read_lines)
        self.max_list_entries = max_list_entries
        self.max_glob_results = max_glob_results
        self.max_grep_results = max_grep_results
        self.max_output_bytes = max_output_bytes
        self.command_timeout = command_timeout
        self.max_command_timeout = max_command_timeout
        self.grep_backend: GrepBackend = grep_backend
        self.readable = ReadableRoots(readable, self.path_guard)
        self._sandbox = select_sandbox(sandbox, view=SandboxView(self.readable.roots))
        self._undo: deque[UndoRecord] = deque(maxlen=undo_depth)
        self._reads = ReadRecord(enabled=read_before_write)
        self._edit_misses = EditMisses()
        self._definitions = DroppedDefinitions()
        self._listed: dict[str, str] = {}  # list_dir/glob/grep's last results, for a placeholder write
        self._write_lock = threading.Lock()  # writes run in worker threads: one at a time
        self._socket_scan = SocketScan(self.root)

    def __repr__(self) -> str:
        return f"Workspace(root={str(self.root)!r})"

    @property
    def sandboxed(self) -> bool:
        """Whether commands run inside the OS sandbox (False: guard-only)."""
        return self._sandbox.sandbox is not None

    @property
    def protections_off(self) -> list[str]:
        """What guard-only mode does not do that the sandbox does (empty when sandboxed)."""
        return [] if self.sandboxed else list(GUARD_ONLY_GAPS)

    @property
    def sandbox_description(self) -> str:
        """Which command layer is active, for humans: ``"bubblewrap sandbox (/usr/bin/bwrap)"`` or
        ``"guard-only (...why...)"``."""
        return self._sandbox.description

    def private_home(self) -> Path:
        """The directory commands get as ``HOME``: this workspace's own, made on first use (holding only
        a ``.gitconfig`` with the user's git name and email, so ``git commit`` works), removed when
        the workspace is garbage-collected or the process exits."""
        if self._home is None:
            self._home = make_private_home(self)
        return self._home

    def tools(self, *, include: Iterable[str] | None = None) -> list[Tool]:
        """The workspace tools (all of ``TOOL_NAMES``, or those named in ``include``), ready to register."""
        names = tuple(include) if include is not None else TOOL_NAMES
        unknown = [n for n in names if n not in TOOL_NAMES]
        if unknown:
            raise ValueError(f"unknown workspace tool(s) {unknown}; choose from {', '.join(TOOL_NAMES)}")
        read_cap = self.read_limits.max_bytes + 10 * self.read_limits.max_lines + 2_000
        output_cap = 2 * self.max_output_bytes + 2_000
        options: dict[str, dict[str, Any]] = {
            "read_file": {"max_output_chars": read_cap, "read_only": True},
            "list_dir": {"read_only": True},
            "glob": {"read_only": True},
            "grep": {"read_only": True},
            "write_file": {"requires_confirmation": self.confirm_writes},
            "edit_file": {"requires_confirmation": self.confirm_writes},
            "apply_patch": {"requires_confirmation": self.confirm_writes},
            "undo_patch": {"requires_confirmation": self.confirm_writes},
            "run_command": {"requires_confirmation": self.confirm_commands, "max_output_chars": output_cap},
        }
        tools = [Tool.from_function(getattr(self, n), name=n, **options.get(n, {})) for n in names]
        for made in tools:
            if made.name == "run_command":
                made.prechecker = self.precheck_command
        return tools

    def precheck_command(self, arguments: Mapping[str, Any]) -> str | None:
        """Why ``run_command`` would refuse these arguments, or None (``command_refusal``)."""
        return command_refusal(arguments, self.path_guard, self.command_guard, read_files=not self.sandboxed)

    # ------------------------------------------------------------------------------------ tools

    def read_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        """Read a text file of the workspace. Lines come numbered (number, tab, text); long files are
        cut at a size cap and the output says which start_line to pass to read further. Binary files
        are reported, not shown.

        Args:
            path: File path relative to the workspace root, in the form "<dir>/<file>"; take real
                names from list_dir or glob.
            start_line: First line to show (1-based). Default: 1.
            end_line: Last line to show (inclusive). Default: the end of the file.
        """
        guard = self.readable.guard_for(path)
        return _files.read_text_file(
            guard, path, start_line, end_line, self.read_limits, seen=self._reads.saw
        )

    def write_file(self, path: str, content: str) -> str:
        """Create or overwrite a text file with the given content (UTF-8). Parent directories are
        created. The whole file is replaced at once; to change part of a file, use edit_file. An
        existing file must be read with read_file first. undo_patch takes the last write back.

        Args:
            path: File path relative to the workspace root.
            content: The complete new content of the file.
        """
        refuse_report_copy(path, content)
        refuse_placeholder(path, content, self._listed)
        with self._write_lock:
            change = _files.plan_write(self.path_guard, path, content)
            self._reads.check(change.path, change.rel, change.before, action="overwritten")
            assert change.after is not None
            if change.before == change.after:
                return _files.unchanged_write(change)
            self._definitions.vet(change)
            self._undo.append(_files.write_change(self.path_guard, change))
            self._reads.wrote(change.path, change.after)
            return f"{_files.describe_write(change)}\nundo_patch() takes it back."

    def edit_file(self, path: str, old: str, new: str) -> str:
        """Replace one piece of a text file: old must occur in the file exactly once, as read_file
        shows it (without the line numbers), whitespace included; it becomes new. Give a few
        lines of context in old so it matches one place. The file must be read with read_file
        first. undo_patch takes the edit back.

        Args:
            path: File path relative to the workspace root, in the form "<dir>/<file>".
            old: The exact text to replace, one or more whole lines copied from the file.
            new: The text to put in its place (empty to delete old).
        """
        with self._write_lock:
            change, first_line = plan_edit(
                self.path_guard, path, old, new, misses=self._edit_misses, seen=self._reads.saw
            )
            self._reads.check(change.path, change.rel, change.before, action="edited")
            self._undo.append(apply_changes(self.path_guard, [change]))
            self._reads.wrote(change.path, change.after)
            return describe_edit(change, first_line)

    def list_dir(self, path: str = ".", depth: int = 1) -> str:
        """List a directory of the workspace as an indented tree: directories end with "/", files show
        their size. Version-control, cache and dependency directories (.git, node_modules,
        __pycache__, .venv...) are shown but not expanded.

        Args:
            path: Directory relative to the workspace root. Default: the root.
            depth: How many levels to show; 1 lists only the directory's own entries.
        """
        path = path or "."  # an optional path sent empty (small models do) means the default
        listed = _files.list_dir(self.readable.guard_for(path), path, depth, self.max_list_entries)
        self._listed["list_dir"] = listed
        return listed

    def glob(self, pattern: str) -> str:
        """Find files and directories by glob pattern, relative to the workspace root; sorted paths,
        one per line (directories end with "/"). "*" matches within one path component, "**" any
        number of directories: "**/*.<ext>" finds every file with that extension, "<dir>/*" the entries
        directly in <dir>.

        Args:
            pattern: Glob pattern relative to the workspace root.
        """
        self._listed["glob"] = _files.glob_paths(self.path_guard, pattern, self.max_glob_results)
        return self._listed["glob"]

    async def grep(
        self,
        pattern: str,
        path: str = ".",
        glob: str | None = None,
        ignore_case: bool = False,
        max_results: int = 100,
    ) -> str:
        """Search file contents with a regular expression. Prints "path:line:text" for each matching
        line, sorted by path; binary files and .git/node_modules-style directories are skipped. The
        output says when results were capped.

        Args:
            pattern: Regular expression, in the form "<text>" or "<one>|<other>".
            path: File or directory to search, relative to the workspace root. Default: everything.
            glob: Only search files matching this glob, in the form "*.<ext>" or "<dir>/**/*.<ext>".
            ignore_case: Match without regard to letter case.
            max_results: At most this many matching lines are printed.
        """
        limit = min(max_results, self.max_grep_results)
        path = path or "."  # an optional path sent empty (small models do) means the default
        guard = self.readable.guard_for(path)
        found = await grep(guard, pattern, path, glob, ignore_case, limit, backend=self.grep_backend)
        self._listed["grep"] = found
        return found

    def apply_patch(self, patch: str, dry_run: bool = False) -> str:
        """Apply a unified diff (the format of `diff -u` / `git diff`) to workspace files. It may touch
        several files, create them (--- /dev/null) and delete them (+++ /dev/null). Every hunk is
        checked first: if one does not match, nothing is written and the error shows the lines
        actually there. Context lines must match the file exactly; a hunk may sit a few lines off
        its stated position. undo_patch takes the last patch back.

        Args:
            patch: The unified diff text, with "--- a/path" / "+++ b/path" headers and "@@" hunks.
            dry_run: Only check the patch and report what it would change; write nothing.
        """
        with self._write_lock:
            changes = plan_patch(self.path_guard, patch)
            summary = "\n".join(f"  {change.describe()}" for change in changes)
            if dry_run:
                return f"Dry run: the patch applies cleanly. It would:\n{summary}\nNothing was written."
            record = apply_changes(self.path_guard, changes)
            self._undo.append(record)
            for change in changes:  # a patch's context matched the file: the session knows the result
                self._reads.wrote(change.path, change.after)
            done = summary.replace("  create ", "  created ").replace("  modify ", "  modified ")
            done = done.replace("  delete ", "  deleted ")
            return f"Applied the patch:\n{done}\nundo_patch() takes it back."

    def undo_patch(self) -> str:
        """Take back the most recent change made with apply_patch, write_file or edit_file (call it
        again for the one before): modified files get their old content, created files are deleted,
        deleted files come back. Refused if a file was changed again since."""
        with self._write_lock:
            if not self._undo:
                raise ToolError(
                    "there is nothing to undo: no patch or write was made in this workspace session"
                )
            record = self._undo.pop()
            try:
                restored = undo(self.path_guard, record)
            except ToolError:
                self._undo.append(record)
                raise
            for change in record.changes:  # content this session did not just write: read it again
                self._reads.forget(change.path)
            return "Undid the last change:\n" + "\n".join(f"  {line}" for line in restored)

    async def run_command(
        self,
        command: str | list[str],
        timeout: float | None = None,  # noqa: ASYNC109  (the model-facing argument; enforced inside)
        cwd: str = ".",
    ) -> str:
        """Run a command in the workspace and return its exit code, stdout and stderr. No shell is
        involved: && || ; | and redirections (< > >> 2> 2>&1) to workspace files work, as does
        "cd DIR &&"; $VARIABLES and $(...) do not. Dangerous, privileged and network commands are
        refused. Commands run sandboxed where possible: only the workspace and a private /tmp are
        writable, credentials are hidden, no network unless allowed. Output is capped; a command
        running past its timeout is killed with everything it started.

        Args:
            command: The command line, in the form "<program> <arguments>", or an argv list.
            timeout: Seconds before the command is killed. Default: the workspace's setting.
            cwd: Working directory relative to the workspace root.
        """
        return (await self.execute(command, timeout=timeout, cwd=cwd)).report()

    async def execute(
        self,
        command: str | list[str],
        *,
        timeout: float | None = None,  # noqa: ASYNC109  (enforced inside, with the output kept)
        cwd: str = ".",
        confirmed: bool | None = None,
        stdin: str | None = None,
    ) -> CommandResult:
        """``run_command`` as data (guard, sandbox, timeout, output caps): a ``CommandResult``,
        ``exit_code`` None when it timed out. ``confirmed``: whether the user approved the command
        (default ``confirm_commands``; acceptance checks, the user's own, pass True). ``stdin``: text
        each command reads on its standard input (default none). Raises ``ToolError``/``ToolDenied``."""
        limit = self.command_timeout if timeout is None else timeout
        if not 0 < limit <= self.max_command_timeout:
            raise ToolError(
                f"timeout must be between 0 and {self.max_command_timeout:g} seconds, got {timeout}"
            )
        cwd = cwd or "."  # an optional directory sent empty (small models do) means the root
        directory = checked_command(
            command, cwd, self.path_guard, self.command_guard, read_files=not self.sandboxed,
            confirmed=self.confirm_commands if confirmed is None else confirmed,
        )  # fmt: skip
        steps = plan_command(command)
        sandbox = self._sandbox.sandbox
        env = self._environment.build(
            os.environ,
            home=str(self.private_home()),
            # the sandbox's private /tmp; the host's TMPDIR may be hidden or read-only there
            tmpdir="/tmp" if sandbox is not None else os.environ.get("TMPDIR"),
            cwd=str(directory),
        )
        if sandbox is None:  # guard-only: how the command's stray processes are found afterwards
            env[TAG_VARIABLE] = new_id()
        traps = await anyio.to_thread.run_sync(GitTrapCheck, self.root)  # what .git holds before
        sockets = await anyio.to_thread.run_sync(self._socket_scan.sockets) if sandbox is not None else []
        result = await run_plan(
            steps,
            guard=self.path_guard,
            cwd=directory,
            env=env,
            time_limit=limit,
            max_output=self.max_output_bytes,
            sandbox=sandbox,
            allow_network=self.command_guard.allow_network,
            masked_sockets=sockets,
            private_home=self.private_home(),
            stdin=stdin,
        )
        result.command = command if isinstance(command, str) else shlex.join(command)
        result.cwd_shown = "" if cwd in (".", "") else self.path_guard.relative(directory)
        result.time_limit = limit
        result.sandboxed = sandbox is not None
        result.undone_traps = await anyio.to_thread.run_sync(traps.undo_traps)
        return result


def workspace_tools(root: str | os.PathLike[str], **options: Any) -> list[Tool]:
    """``Workspace(root, **options).tools()``: the workspace tools bound to ``root``."""
    return Workspace(root, **options).tools()
