"""``CommandGuard``'s checks for code it cannot simply read: credentials named as operands, programs
made at run time, fed in as text or downloaded, fork bombs, and links that would redirect later paths.

Each function looks at one simple command (its parsed words) and raises ``CommandDenied`` (or
``CommandNeedsConfirmation``) with the reason, or returns.
"""

from __future__ import annotations

import glob as globbing
import itertools
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from agcore.tools._code_carriers import CODE_VARIABLES, git_inline_code, reads_program_from_stdin
from agcore.tools._command_denied import deny, needs_confirmation, program_name
from agcore.tools._command_paths import is_inside, is_system_path, is_vital, resolve_glob, resolve_path
from agcore.tools._command_rules import DOWNLOADERS, is_interpreter, link_sources, unwrap
from agcore.tools._secrets import is_secret_path
from agcore.tools._shell_syntax import ParsedScript, ShellSyntaxError, SimpleCommand, Word, parse_script

__all__ = [
    "RESERVED_WORDS", "assignment_code", "check_computed_program", "check_feeding", "check_inline_input",
    "check_not_secret", "check_secret_operands", "check_substituted_download", "code_in_arguments",
    "effective_argv", "is_fork_bomb", "makes_outside_link", "runs_a_download", "without_reserved",
]  # fmt: skip

_INLINE_INPUT = ("<<", "<<-", "<<<")
# Words that open or close a compound command; the command proper follows them.
RESERVED_WORDS = frozenset({
    "{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "coproc", "[[", "]]",
})  # fmt: skip
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_FUNCTION = re.compile(r"(?:function\s+)?([A-Za-z_:.][\w:.]*)\s*\(\s*\)\s*\{([^}]*)\}")


def without_reserved(argv: tuple[str, ...]) -> tuple[str, ...]:
    while argv and argv[0] in RESERVED_WORDS:
        argv = argv[1:]
    return argv


def assignment_code(word: Word, shown: str) -> str | None:
    """``PAGER='rm -rf ~' git log``, ``BASH_ENV='$(...)' bash``: the value of a variable some program
    runs as a command, to be checked as a script (None: not such a variable)."""
    name, _, value = word.text.partition("=")
    if not word.assignment or name not in CODE_VARIABLES:
        return None
    if word.dynamic:
        deny(shown, f"'{name}' is run as a command and its value is computed at run time; write it")
    return value


def code_in_arguments(argv: tuple[str, ...]) -> list[str]:
    """Commands given as arguments: ``env PAGER=...``, ``export GIT_SSH_COMMAND=...``, ``git -c
    core.pager=...``; each is to be checked as a script."""
    code = git_inline_code(argv)
    if program_name(argv) in ("env", "export", "declare", "typeset", "local", "readonly"):
        for arg in argv[1:]:
            name, equals, value = arg.partition("=")
            if equals and name in CODE_VARIABLES:
                code.append(value)
    return code


def check_feeding(substitution: str) -> None:
    """``echo 'rm -rf ~' > >(sh)``, ``tee >(bash)``: a substitution whose program comes from what the
    outer command writes into it is a pipe into an interpreter."""
    try:
        first = parse_script(substitution).commands[:1]
    except ShellSyntaxError:
        return  # refused when it is checked as a script
    if first and reads_program_from_stdin(effective_argv(without_reserved(first[0].argv))):
        deny(
            substitution,
            "a process substitution that runs what it is given as a program runs code the guard cannot "
            "read; write the program to a file in the workspace, then run it",
        )


def check_substituted_download(simple: SimpleCommand, program: str, parsed: ParsedScript, shown: str) -> None:
    """``bash <(curl ...)``, ``eval "$(wget ...)"``: an interpreter running what a download prints."""
    if not (is_interpreter(program) or program in ("eval", "source", ".")):
        return
    for word in simple.words[1:]:
        for index in word.substitutions:
            if runs_a_download(parsed.substitutions[index]):
                deny(
                    shown,
                    f"'{program}' would run downloaded code ({parsed.substitutions[index]!r}); download "
                    "the file, read it, then run it",
                )


def check_computed_program(words: Sequence[Word], shown: str) -> None:
    """``eval "$X"``, ``bash -c "$(...)"``, ``python3 <(...)``: the program text is made at run time."""
    argv = tuple(w.text for w in words)
    program = program_name(argv)
    wrapped = unwrap(argv)
    if wrapped is not None and wrapped[0] == "script" and (is_interpreter(program) or program == "eval"):
        code_words = words[1:] if program == "eval" else [w for w in words[1:] if w.text in wrapped[1]]
        if any(w.dynamic for w in code_words):
            deny(
                shown,
                f"the script '{program}' would run is computed at run time, so it cannot be checked; "
                "write the script literally",
            )
    if is_interpreter(program) or program in ("source", "."):
        first = next((w for w in words[1:] if not w.text.startswith("-")), None)
        if first is not None and first.substitutions:
            deny(
                shown,
                f"'{program}' would run the output of another command as its program, which the "
                "guard cannot read; write the program to a file in the workspace, then run it",
            )


def check_inline_input(simple: SimpleCommand, argv: tuple[str, ...], *, confirmed: bool, shown: str) -> None:
    """``bash <<< "..."``, ``python3 - <<EOF``: the program is the text written into the command."""
    inline = [t for op, t in simple.redirects if op.lstrip("0123456789") in _INLINE_INPUT]
    if not inline or not reads_program_from_stdin(argv):
        return
    if any(t.dynamic for t in inline):
        deny(
            shown,
            f"'{program_name(argv)}' would run a program computed at run time, which the guard cannot "
            "read; write the program to a file in the workspace, then run it",
        )
    if not confirmed:
        needs_confirmation(shown, program_name(argv))


def check_secret_operands(words: Sequence[Word], cwd: Path, homes: Iterable[Path], shown: str) -> None:
    """Refuse naming a credential anywhere among the operands (also as ``--opt=PATH``)."""
    for word in words:
        text = word.text
        if text.startswith("-"):
            if "=" not in text:
                continue
            text = text.split("=", 1)[1]
        if text and not word.dynamic:
            check_not_secret(text, cwd, homes, shown)


def check_not_secret(target: str, cwd: Path, homes: Iterable[Path], shown: str) -> None:
    try:
        paths = [resolve_glob(target, cwd), *_glob_matches(target, cwd)]
    except (OSError, ValueError):
        return
    if any(is_secret_path(path, list(homes)) for path in paths):
        deny(
            shown,
            f"'{target}' is a credential (a key, token, password store or environment file); agents "
            "may not read or change it. Ask the user if the task really needs it",
        )


def _glob_matches(target: str, cwd: Path) -> list[Path]:
    """What a glob operand names on this machine (the first ``_GLOB_CHECKED``; real paths): a
    credential must not be reachable as ``/root/.npmr?`` or ``/proc/PID/envir*`` either."""
    if not any(c in target for c in "*?["):
        return []
    pattern = os.path.expanduser(target)
    found = itertools.islice(globbing.iglob(pattern, root_dir=None if os.path.isabs(pattern) else cwd,
                                            include_hidden=True), _GLOB_CHECKED)
    return [Path(os.path.realpath(os.path.join(cwd, name))) for name in found]


#: How many matches of one glob operand are checked for credentials (a bound on the guard's work).
_GLOB_CHECKED = 2000


def makes_outside_link(
    argv: tuple[str, ...], words: Sequence[Word] | None, cwd: Path, workspace: Path | None, shown: str
) -> bool:
    """Whether this call makes a symbolic link pointing outside the workspace (or somewhere computed
    at run time); a hard link to a file outside is refused outright."""
    found = link_sources(argv)
    if found is None:
        return False
    kind, sources = found
    dynamic = words is not None and any(w.dynamic for w in words[1:])
    destination = _link_directory(argv, cwd)
    made = dynamic
    for source in sources:
        target = resolve_path(source, cwd if kind == "hard" else destination)
        outside = (
            not is_inside(target, workspace)
            if workspace is not None
            else is_system_path(str(target)) or is_vital(str(target))
        )
        if kind == "hard" and outside:
            deny(
                shown,
                f"a hard link to '{source}' (outside the workspace) would let later commands change that "
                "file from inside; copy it instead",
            )
        made = made or outside
    return made


def _link_directory(argv: tuple[str, ...], cwd: Path) -> Path:
    """The directory a relative symbolic-link target is resolved from: where the link is made."""
    operands = [a for a in argv[1:] if not a.startswith("-")]
    for i, arg in enumerate(argv):
        if arg in ("-t", "--target-directory") and i + 1 < len(argv):
            return resolve_path(argv[i + 1], cwd)
        if arg.startswith("--target-directory="):
            return resolve_path(arg.split("=", 1)[1], cwd)
    if len(operands) < 2:
        return cwd
    destination = resolve_path(operands[-1], cwd)
    return destination if destination.is_dir() else destination.parent


def is_fork_bomb(script: str) -> bool:
    """A shell function that calls itself twice, or once in the background: ``:(){ :|:& };:``."""
    for match in _FUNCTION.finditer(script):
        name, body = match.group(1), match.group(2)
        calls = re.split(r"[\s;&|()]+", body).count(name)
        if calls >= 2 or (calls and re.search(rf"(?<![\w:.]){re.escape(name)}\s*&", body)):
            return True
    return False


def effective_argv(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The program a wrapper (``env``, ``timeout``, ``nohup``...) finally runs."""
    while argv and _ASSIGNMENT.match(argv[0]):
        argv = argv[1:]
    while argv:
        wrapped = unwrap(argv)
        if wrapped is None or wrapped[0] != "argv":
            return argv
        argv = wrapped[1]
    return argv


def runs_a_download(script: str) -> bool:
    """Whether a script (the inside of ``$(...)``) runs a downloader anywhere."""
    try:
        parsed = parse_script(script)
    except ShellSyntaxError:
        return True  # unreadable: assume the worst
    return any(program_name(effective_argv(c.argv)) in DOWNLOADERS for c in parsed.commands) or any(
        runs_a_download(s) for s in parsed.substitutions
    )
