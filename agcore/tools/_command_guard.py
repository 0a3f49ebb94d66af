"""``CommandGuard``: refuses destructive, escalating and (by default) networked shell commands.

A command string is read like a shell would read it (``agcore.tools._shell_syntax``): every
sub-command behind ``;``, ``&&``, ``||``, ``|``, ``&``, newlines, ``$(...)``, backticks and
``<(...)`` is checked, and so is the command inside ``sh -c``, ``eval``, ``env``/``timeout``/``nohup``/
``xargs`` wrappers and ``find -exec``. Every denial says which sub-command was refused, why, and what
to do instead.

This is a deny-list over what a command *says*, not a sandbox: a script can still do anything its
user may do. ``run_command`` runs every command inside an OS sandbox as well where one is available
(``agcore.tools._sandbox``): the guard explains refusals to the model, the sandbox is the boundary.

Choices worth knowing:
- Network programs (``curl``, ``wget``, ``ssh``, ...) and networked sub-commands (``git clone/fetch/
  pull/push``, ``pip install`` without ``--no-index``, ``npm install``, ...) are refused unless
  ``allow_network=True``: installing packages downloads and runs code from the internet.
- Piping a download into an interpreter (``curl ... | sh``, ``bash <(curl ...)``, ``eval "$(curl ...)"``)
  is refused even with network allowed.
- ``git push --force`` (or ``--delete``, or a ``+ref``) is refused when it targets a shared branch
  (main, master, develop, trunk, release/*, ...) or when no branch is named (it could be any).
- With a ``workspace``, commands that write files (``rm``, ``mv``, ``cp``, ``touch``, ``tee``, ``dd of=``,
  ``chmod``, redirections ...) must write inside it, and recursive deletion of the workspace root is
  refused. Without one, only system paths and the home directory are protected.
- Files written through options (``sort -o``, ``find -fprint``, ``cmake -E copy``) are writes;
  ``xargs`` running a program that changes files is refused (its operands arrive at run time);
  ``git -C``/``--git-dir``/``--work-tree`` outside the workspace is refused (``_command_reach``).
- Recursive readers (``grep -r``, ``rg``, ``tar c``, ``cp -r``, ``find -exec``) over a directory that
  holds a credential (``~``, ``/``) are refused like naming the credential.
- Naming a credential (``~/.ssh/id_ed25519``, ``.netrc``, ``/etc/shadow``, ``*.pem``, ``.env``...; the
  list is ``agcore.tools._secrets``) as an operand or redirection is refused, for reading too.
- Anything piped into a shell or interpreter that reads its program from standard input
  (``... | sh``, ``| python3``, ``| source /dev/stdin``) is refused wherever the pipe comes from, and so
  is running the output of another command as a program (``bash <(...)``, ``eval "$(...)"``).
- An interpreter one-liner (``python3 -c``, ``perl -e``, ``node -e``, awk calling ``system`` or
  redirecting its output) is a program the guard cannot read: it needs confirmation
  (``check(..., confirmed=True)``; the workspace passes its ``confirm_commands``), else
  ``CommandNeedsConfirmation``.
- A hard link to a file outside the workspace is refused (writing it would write that file), and so is
  using anything after making a symbolic link that points outside in the same command (every path
  is resolved before any part runs, so the guard cannot follow that link): make the link first.
- ``deny``/``allow`` entries match the program's basename (``deny=["rm"]`` stops ``/bin/rm``).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agcore.tools._arithmetic_code import hidden_commands
from agcore.tools._code_carriers import (
    git_config_reason,
    one_liner,
    reads_program_from_stdin,
)
from agcore.tools._command_code import (
    RESERVED_WORDS,
    assignment_code,
    check_computed_program,
    check_feeding,
    check_inline_input,
    check_secret_operands,
    check_substituted_download,
    code_in_arguments,
    effective_argv,
    is_fork_bomb,
    makes_outside_link,
    without_reserved,
)
from agcore.tools._command_denied import (
    CommandDenied,
    CommandNeedsConfirmation,
    deny,
    needs_confirmation,
    program_name,
)
from agcore.tools._command_gaps import (
    awk_actions,
    environment_reason,
    makefile_recipes,
    network_code_reason,
    script_file_text,
    tar_commands,
    wrapper_directory,
)
from agcore.tools._command_paths import resolve_path
from agcore.tools._command_reach import (
    check_git_directories,
    check_git_variable,
    check_listing_piped_to_xargs,
    check_recursive_read,
    check_xargs_program,
    cmake_runs,
    find_exec_commands,
)
from agcore.tools._command_rules import DOWNLOADERS, is_interpreter, network_reason, program_rule, unwrap
from agcore.tools._command_targets import check_redirects, check_write_path, check_write_targets
from agcore.tools._command_words import check_cdpath, entry_matches, not_code, parse_entry, shown_text
from agcore.tools._secrets import homes
from agcore.tools._shell_syntax import (
    ParsedScript,
    ShellSyntaxError,
    SimpleCommand,
    Word,
    parse_script,
)

__all__ = ["CommandDenied", "CommandGuard", "CommandNeedsConfirmation"]

_MAX_DEPTH = 6


@dataclass(slots=True)
class _Check:
    """What one ``check`` call shares across every sub-command it reads."""

    homes: list[Path]
    confirmed: bool
    read_files: bool = False  # check the scripts and Makefiles a command runs, too
    outside_link: str | None = None  # a sub-command that made a link pointing outside


@dataclass(slots=True)
class _State:
    cwd: Path
    check: _Check
    depth: int = 0
    dynamic_arguments: bool = False  # xargs: more operands arrive at run time
    unseen_operands: bool = False  # xargs (not find -exec): every operand may arrive at run time


class CommandGuard:
    """Checks a shell command (a string, or an argv list run without a shell) before it runs.

    ``mode="deny"`` (default): anything not refused by the built-in rules or ``deny`` runs.
    ``mode="allow"``: only programs in ``allow`` run (the built-in rules still apply).
    Entries in ``allow``/``deny`` are a program name or glob (``"pytest"``, ``"mkfs*"``) or a program
    with leading arguments (``"git status"``, ``"npm run"``), matched against each sub-command by the
    program's basename. ``home``: a home directory whose credentials are protected besides ``$HOME``'s
    and the account's own (``~`` in commands still means ``$HOME``).
    """

    def __init__(
        self,
        *,
        mode: Literal["deny", "allow"] = "deny",
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        allow_network: bool = False,
        workspace: str | os.PathLike[str] | None = None,
        home: str | os.PathLike[str] | None = None,
    ) -> None:
        if mode not in ("deny", "allow"):
            raise ValueError(f"mode must be 'deny' or 'allow', got {mode!r}")
        self.mode = mode
        self.allow = tuple(parse_entry(e) for e in allow)
        self.deny = tuple(parse_entry(e) for e in deny)
        self.allow_network = allow_network
        self.workspace = Path(os.path.realpath(os.fspath(workspace))) if workspace is not None else None
        # Whose credentials to protect besides $HOME's and the account's own (read at each check).
        self.home = Path(os.path.realpath(os.fspath(home))) if home is not None else None

    def __repr__(self) -> str:
        return (
            f"CommandGuard(mode={self.mode!r}, allow_network={self.allow_network}, "
            f"workspace={str(self.workspace) if self.workspace else None!r})"
        )

    def check(
        self,
        command: str | Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        confirmed: bool = False,
        read_files: bool = False,
    ) -> None:
        """Raise ``CommandDenied`` if any part of ``command`` is refused; return None if it may run.

        ``cwd`` is where the command will run (default: the workspace, else the current directory);
        relative paths in redirections and file operands are resolved against it. ``confirmed``: a
        person approved this command, so programs the guard cannot read (interpreter one-liners) may
        run; otherwise they raise ``CommandNeedsConfirmation``. ``read_files``: also check the commands
        in the script files and Makefiles the command runs (``bash x.sh``, ``make``): for guard-only
        mode, where no sandbox holds what they do; a line the reader cannot parse refuses the script.
        """
        start = Path(os.path.realpath(os.fspath(cwd))) if cwd is not None else self.workspace or Path.cwd()
        known_homes = homes() + ([self.home] if self.home is not None else [])
        state = _State(cwd=start, check=_Check(known_homes, confirmed, read_files))
        if isinstance(command, str):
            self._check_script(command, state)
        else:
            argv = list(command)
            if not argv or not all(isinstance(a, str) for a in argv):
                deny(repr(command), "an argv command must be a non-empty list of strings")
            self._check_simple(SimpleCommand(tuple(Word(a, quoted=True) for a in argv)), state, None)

    # ----------------------------------------------------------------------------------- scripts

    def _check_script(self, script: str, state: _State) -> None:
        if state.depth > _MAX_DEPTH:
            deny(script, "the command nests shells/substitutions too deeply to be checked; simplify it")
        if not script.strip():
            if state.depth == 0:
                deny(script, "the command is empty; give the program to run, e.g. 'ls -la'")
            return
        if is_fork_bomb(script):
            deny(
                script,
                "this is a fork bomb (a function that spawns itself without end); it would hang the machine",
            )
        try:
            parsed = parse_script(script)
        except ShellSyntaxError as exc:
            deny(script, f"the command cannot be parsed ({exc}), so it cannot be checked; fix the quoting")
        for substitution in parsed.substitutions:
            check_feeding(substitution)
            self._check_script(substitution, _State(cwd=state.cwd, check=state.check, depth=state.depth + 1))
        for hidden in hidden_commands(script):  # quoted text that arithmetic would run
            self._check_script(hidden, _child(state))
        in_download_pipe = False
        lister: tuple[str, ...] = ()  # the last find in this pipeline, whose names xargs may read
        for simple in parsed.commands:
            if simple.joiner not in ("|", "|&"):
                in_download_pipe = False
                lister = ()
            argv = effective_argv(without_reserved(simple.argv))
            program = program_name(argv)
            if program == "xargs" and lister:
                check_listing_piped_to_xargs(lister, state.cwd, state.check.homes, shown_text(simple))
            lister = argv if program == "find" else lister
            if in_download_pipe and (is_interpreter(program) or program in ("eval", "source", ".")):
                deny(
                    shown_text(simple),
                    "piping a download into an interpreter runs code nobody reviewed; download the file, "
                    "read it, then run it",
                )
            if simple.joiner in ("|", "|&") and reads_program_from_stdin(argv):
                deny(
                    shown_text(simple),
                    f"piping into '{program}' runs whatever the commands before it print as a program, "
                    "which the guard cannot read; write the program to a file in the workspace, then run it",
                )
            check_substituted_download(simple, program, parsed, shown_text(simple))
            self._check_simple(simple, state, parsed)
            in_download_pipe = in_download_pipe or program in DOWNLOADERS

    # ---------------------------------------------------------------------------- one command

    def _check_simple(self, simple: SimpleCommand, state: _State, parsed: ParsedScript | None) -> None:
        shown = shown_text(simple)
        made = state.check.outside_link
        if made is not None:
            deny(
                shown,
                f"'{made}' made a link to outside the workspace earlier in this command, and paths are "
                "checked before anything runs, so this part could act through it; make the link in a "
                "command of its own, then use it in the next one",
            )
        if any(w.runs_value for w in [*simple.words, *(t for _, t in simple.redirects)]):
            deny(
                shown,
                "'${NAME@P}' expands a variable like a prompt, running the $(...) its value holds, which "
                "the guard cannot read; write the value out",
            )
        check_redirects(simple, state.cwd, self.workspace, state.check.homes, shown)
        words = list(simple.words)
        while words and (words[0].assignment or (not words[0].quoted and words[0].text in RESERVED_WORDS)):
            self._check_assignment(words.pop(0), state, shown)
        if words and words[0].text == "function" and not words[0].quoted:
            words = words[2:]  # "function NAME { body": the body follows
            while words and words[0].text in ("{", "(", ")") and not words[0].quoted:
                words.pop(0)
        if not words:
            return
        if words[0].dynamic or words[0].glob:
            deny(
                shown,
                f"the program name '{words[0].text}' is computed at run time (a variable, substitution, "
                "brace or glob pattern), so it cannot be checked; write the program name literally",
            )
        check_secret_operands(not_code(words), state.cwd, state.check.homes, shown)
        check_computed_program(words, shown)
        argv = effective_argv(tuple(w.text for w in words))
        check_inline_input(simple, argv, confirmed=state.check.confirmed, shown=shown)
        self._check_argv(tuple(w.text for w in words), state, shown, words)

    def _check_assignment(self, word: Word, state: _State, shown: str) -> None:
        name, _, value = word.text.partition("=")
        check_cdpath(name, shown)
        check_git_variable(
            name, value, dynamic=word.dynamic, cwd=state.cwd, workspace=self.workspace, shown=shown
        )
        code = assignment_code(word, shown)
        if code is not None:
            self._check_script(code, _child(state))

    def _check_argv(self, argv: tuple[str, ...], state: _State, shown: str, words: list[Word] | None) -> None:
        program = program_name(argv)
        for code in [*code_in_arguments(argv), *tar_commands(argv)]:
            self._check_script(code, _child(state))
        awk_runs, awk_writes, computed = awk_actions(argv)
        if computed is not None:
            deny(shown, computed)
        for code in awk_runs:
            self._check_script(code, _child(state))
        for written in awk_writes:
            check_write_path(written, state.cwd, self.workspace, shown, what="'awk'")
        if program in ("env", "export", "declare", "typeset", "local", "readonly"):
            for arg in argv[1:]:
                name, equals, value = arg.partition("=")
                if equals:
                    check_cdpath(name, shown)
                    check_git_variable(
                        name, value, dynamic=False, cwd=state.cwd, workspace=self.workspace, shown=shown
                    )
        for entry in self.deny:
            if entry_matches(entry, argv):
                deny(shown, f"'{' '.join(entry)}' is on this agent's deny-list; do the task another way")
        if program == "cd" or program == "pushd":
            self._change_directory(argv, state, shown, words)
            return
        inline = one_liner(argv)
        if inline is not None and not state.check.confirmed:
            needs_confirmation(shown, program)
        if inline is not None and not self.allow_network:
            reason = network_code_reason(inline)
            if reason:
                deny(shown, f"{reason}; network access is disabled for this agent (allow_network=False)")
        reason = (
            program_rule(argv, allow_network=self.allow_network)
            or git_config_reason(argv)
            or environment_reason(argv)
        )
        if reason:
            deny(shown, reason)
        if not self.allow_network:
            reason = network_reason(argv)
            if reason:
                deny(shown, f"{reason}; network access is disabled for this agent (allow_network=False)")
        if state.unseen_operands:
            check_xargs_program(argv, shown)
        check_git_directories(argv, words, state.cwd, self.workspace, shown)
        check_write_targets(
            argv, words, state.cwd, self.workspace, from_xargs=state.dynamic_arguments, shown=shown
        )
        check_recursive_read(argv, words, state.cwd, state.check.homes, shown)
        ran = cmake_runs(argv)  # cmake -E env/chdir runs a command
        if ran is not None:
            directory, inner_command = ran
            child = _child(state)
            if directory is not None:
                child.cwd = resolve_path(directory, state.cwd)
            if inner_command:
                self._check_argv(inner_command, child, shlex.join(inner_command), None)
        if makes_outside_link(argv, words, state.cwd, self.workspace, shown):
            state.check.outside_link = shown
        if state.check.read_files:
            self._check_files_it_runs(argv, state, shown)
        wrapped = unwrap(argv)
        if wrapped is not None:
            kind, inner = wrapped
            if kind == "script":
                self._check_script(" ".join(inner) if len(inner) != 1 else inner[0], _child(state))
            else:
                child = _child(state)
                directory = wrapper_directory(argv)  # env -C DIR
                if directory is not None:
                    child.cwd = resolve_path(directory, state.cwd)
                child.dynamic_arguments = kind == "xargs"
                child.unseen_operands = state.unseen_operands or program == "xargs"
                if inner:
                    self._check_argv(inner, child, shlex.join(inner), None)
                for more in find_exec_commands(argv)[1:]:  # find may run several -exec commands
                    self._check_argv(more, child, shlex.join(more), None)
            if (
                self.mode == "allow"
                and program not in _TRANSPARENT
                and not any(entry_matches(e, argv) for e in self.allow)
            ):
                deny(shown, self._allow_reason(program))
            return
        if self.mode == "allow" and not any(entry_matches(e, argv) for e in self.allow):
            deny(shown, self._allow_reason(program))

    def _check_files_it_runs(self, argv: tuple[str, ...], state: _State, shown: str) -> None:
        """``bash x.sh``, ``source x.sh``, ``./x.sh``, ``make``: the commands in those files."""
        text = script_file_text(argv, state.cwd)
        if text is not None:
            try:
                self._check_script(text, _child(state))
            except CommandDenied as exc:
                deny(shown, f"the script it runs holds a refused command: {exc.reason}")
        for recipe in makefile_recipes(argv, state.cwd):
            try:
                self._check_script(recipe, _child(state))
            except CommandDenied as exc:
                deny(shown, f"the Makefile it reads holds a refused command: {exc.reason}")

    def _allow_reason(self, program: str) -> str:
        allowed = ", ".join(" ".join(e) for e in self.allow) or "nothing"
        return (
            f"'{program}' is not on this agent's allow-list (allowed: {allowed}); use one of those programs"
        )

    def _change_directory(
        self, argv: tuple[str, ...], state: _State, shown: str, words: list[Word] | None
    ) -> None:
        args = [a for a in argv[1:] if not a.startswith("-") or a == "-"]
        if words is not None and any(w.dynamic for w in words[1:]):
            deny(shown, "'cd' to a computed directory cannot be checked; write the directory literally")
        target = args[0] if args else "~"
        if target == "-":
            deny(shown, "'cd -' goes back to a directory the guard cannot know; write the directory")
        state.cwd = resolve_path(target, state.cwd)


# ------------------------------------------------------------------------------------- helpers

_TRANSPARENT = frozenset({"env", "timeout", "nice", "nohup", "time", "command", "stdbuf", "ionice", "setsid"})


def _child(state: _State) -> _State:
    return _State(
        cwd=state.cwd,
        check=state.check,
        depth=state.depth + 1,
        dynamic_arguments=state.dynamic_arguments,
        unseen_operands=state.unseen_operands,
    )
