"""Programs that run code handed to them rather than a file the guard could name: interpreter
one-liners (``python3 -c CODE``), shells and interpreters reading their program from standard input,
environment variables and git settings whose value is run as a command.

Each function takes one argv (program first, after shell parsing) and answers one question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agcore.tools._command_denied import program_name
from agcore.tools._command_rules import SHELLS, is_interpreter, operands, subcommand, unwrap

__all__ = ["CODE_VARIABLES", "git_config_reason", "git_inline_code", "one_liner", "reads_program_from_stdin"]

# Interpreter options whose value is the program itself: "python3 -c CODE", "perl -e CODE"...
_INLINE_OPTIONS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"^(python[0-9.]*|pypy[0-9.]*)$"), frozenset({"-c"})),
    (re.compile(r"^perl[0-9.]*$"), frozenset({"-e", "-E"})),
    (re.compile(r"^ruby[0-9.]*$"), frozenset({"-e"})),
    (re.compile(r"^(node|nodejs|bun)$"), frozenset({"-e", "--eval", "-p", "--print"})),
    (re.compile(r"^deno$"), frozenset({"eval"})),
    (re.compile(r"^php[0-9.]*$"), frozenset({"-r"})),
    (re.compile(r"^lua[0-9.]*$"), frozenset({"-e"})),
    (re.compile(r"^(pwsh|powershell)$"), frozenset({"-c", "-command", "-Command"})),
    (re.compile(r"^osascript$"), frozenset({"-e"})),
)
# Environment variables whose value a program runs as shell code (or, for BASH_ENV/ENV, expands).
CODE_VARIABLES = frozenset({
    "BASH_ENV", "ENV", "PS4", "PROMPT_COMMAND", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL",
    "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS",
    "GIT_PROXY_COMMAND", "SSH_ASKPASS", "LESSOPEN", "LESSCLOSE", "BROWSER",
})  # fmt: skip
# git configuration keys whose value git runs as a command (alias.* only when it starts with "!").
_GIT_CODE_KEY = re.compile(
    r"^(core\.(pager|editor|sshcommand|fsmonitor|askpass)|diff\.external|sequence\.editor|gpg\.program|"
    r"pager\..+|alias\..+|filter\..+\.(clean|smudge|process)|credential\.(.+\.)?helper|merge\..+\.driver|"
    r"diff\..+\.(textconv|command)|uploadpack\.packobjectshook|core\.hookspath|include\.path|includeif\..+)$",
    re.IGNORECASE,
)
_AWK = re.compile(r"^(awk|gawk|mawk|nawk|busybox-awk)$")
# awk code that runs commands or writes files: system(), pipes to/from commands, and print/printf
# output redirection ("print x > FILE", "printf ... >> FILE", "print | CMD").
_AWK_RUNS = re.compile(
    r"system\s*\(|\|\s*\"|\"\s*\||\|&|\bprintf?\b[^;{}\n]*(>|\|)|\|\s*getline|\bgetline\b[^;{}\n]*<"
)
_STDIN_NAMES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


def one_liner(argv: Sequence[str]) -> str | None:
    """The inline program an interpreter is given on its command line (``python3 -c CODE``,
    ``perl -ne CODE``, ``node --eval=CODE``), if any."""
    program = program_name(argv)
    args = list(argv[1:])
    for pattern, options in _INLINE_OPTIONS:
        if not pattern.match(program):
            continue
        letters = {o[1] for o in options if len(o) == 2 and o.startswith("-")}
        for i, arg in enumerate(args):
            following = args[i + 1] if i + 1 < len(args) else ""
            if arg in options:
                return following or arg
            if arg.startswith("--") and arg.split("=", 1)[0] in options:
                return arg.split("=", 1)[1] if "=" in arg else following
            if arg.startswith("-") and not arg.startswith("--") and letters & set(arg[1:]):
                letter = next(c for c in arg[1:] if c in letters)
                rest = arg[arg.index(letter, 1) + 1 :]
                return rest or following or arg
            if not arg.startswith("-"):
                return None  # a script file: what follows are its arguments
        return None
    if _AWK.match(program):
        # any argument, not just the first operand: "awk -v x=1 'PROGRAM'", "gawk -e 'PROGRAM'"
        return next((a for a in args if _AWK_RUNS.search(a)), None)
    return None


def reads_program_from_stdin(argv: Sequence[str]) -> bool:
    """Whether this shell or interpreter takes its program from standard input (``sh``, ``bash -s``,
    ``python3 -``, ``node``, ``source /dev/stdin``)."""
    program = program_name(argv)
    args = list(argv[1:])
    if program in ("source", "."):
        return bool(args) and args[0] in _STDIN_NAMES
    if not is_interpreter(program) or program == "busybox":
        return False
    if unwrap(argv) is not None or one_liner(argv) is not None:
        return False  # the program is on the command line (checked there)
    if program in SHELLS and any(a.startswith("-") and not a.startswith("--") and "s" in a for a in args):
        return True
    found = operands(args, {"-m", "-W", "-X", "-I", "-r", "--require", "-o", "-O"})
    if program.startswith(("python", "pypy")) and "-m" in args:
        return False
    return not found or found[0] in _STDIN_NAMES


def git_inline_code(argv: Sequence[str]) -> list[str]:
    """The commands ``git -c KEY=VALUE`` would run (``core.pager``, ``alias.x=!...``, ``core.fsmonitor``)."""
    if program_name(argv) != "git":
        return []
    code: list[str] = []
    args = list(argv[1:])
    for i, arg in enumerate(args):
        if not arg.startswith("-"):
            break
        if arg == "-c" and i + 1 < len(args) and "=" in args[i + 1]:
            key, value = args[i + 1].split("=", 1)
            if _GIT_CODE_KEY.match(key) and (not key.lower().startswith("alias.") or value.startswith("!")):
                code.append(value.removeprefix("!") or "true")
    return code


def git_config_reason(argv: Sequence[str]) -> str | None:
    """Why a ``git config`` write is refused: it changes configuration outside the workspace, or makes
    git run a command later (hooks, pagers, aliases), when the user's own git runs outside any sandbox."""
    sub, rest = subcommand(argv, {"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
    if program_name(argv) != "git" or sub != "config":
        return None
    scopes = {"--global", "--system"} & set(rest)
    reading = {"--get", "--get-all", "--get-regexp", "-l", "--list", "--show-origin", "--name-only"}
    found = operands(rest, {"-f", "--file", "--blob", "--type", "--default"})
    if reading & set(rest) or (len(found) < 2 and not {"--unset", "--unset-all", "--add"} & set(rest)):
        return None
    if scopes or any(a in ("-f", "--file") or a.startswith("--file=") for a in rest):
        return "'git config' would change git configuration outside the workspace; ask the user to do it"
    if found and _GIT_CODE_KEY.match(found[0]):
        return (
            f"'git config {found[0]}' makes git run a command later, outside any sandbox; ask the user to "
            "set it"
        )
    return None
