"""What programs reach through their options rather than their plain operands: files written by an
option (``sort -o``, ``find -fprint``, ``cmake -E copy``), the repository ``git -C`` works on, the
commands ``find -exec`` runs, programs ``xargs`` hands operands the guard never sees, and directories
a recursive reader walks (which must not hold a credential).

Each function takes one argv (program first, after shell parsing) and answers one question.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from agcore.tools._command_denied import deny, program_name
from agcore.tools._command_paths import is_inside, resolve_glob, resolve_path
from agcore.tools._command_rules import _short_flags, operands, rm_like_targets, write_targets
from agcore.tools._secrets import SECRET_HOME_PATHS, SECRET_SYSTEM_PATHS
from agcore.tools._shell_syntax import Word

__all__ = [
    "XARGS_WRITERS",
    "cmake_runs",
    "check_git_directories",
    "check_git_variable",
    "check_listing_piped_to_xargs",
    "check_recursive_read",
    "check_xargs_program",
    "find_exec_commands",
    "find_selects",
    "git_directories",
    "option_deletions",
    "option_write_targets",
    "recursive_read_roots",
    "secret_inside",
]

# Programs that delete, move, overwrite or re-permission their operands: run by xargs, those operands
# arrive at run time (from standard input or a file), so the guard cannot check where they point.
XARGS_WRITERS = frozenset({
    "rm", "rmdir", "unlink", "shred", "mv", "cp", "install", "ln", "link", "dd", "chmod", "chown", "chgrp",
    "truncate", "tee", "touch", "mkdir", "mkfifo", "mknod", "rsync", "patch", "split", "csplit", "unzip",
    "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd",
})  # fmt: skip
_FIND_WRITE_OPTIONS = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# find tests that narrow what -delete removes (without one, -delete removes the whole tree).
_FIND_TESTS = frozenset({
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-type",
    "-newer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size", "-empty", "-user",
    "-group", "-perm", "-lname", "-ilname", "-links", "-inum", "-samefile",
})  # fmt: skip
_CMAKE_DELETES = frozenset({"rm", "remove", "remove_directory", "rename"})
_CMAKE_CREATES = frozenset({"touch", "touch_nocreate", "make_directory"})
_CMAKE_DESTINATION = frozenset({
    "copy", "copy_directory", "copy_directory_if_different", "copy_if_different", "create_symlink",
    "create_hardlink", "rename",
})  # fmt: skip
_GREPS = frozenset({"grep", "egrep", "fgrep", "zgrep"})
_ALWAYS_RECURSIVE = frozenset({"rg", "ag", "ack", "ack-grep"})


def option_write_targets(argv: Sequence[str]) -> list[str]:
    """Files written through an option or a sub-command: ``sort -o F``, ``find -fprint F``, ``cmake -E
    copy A F``/``touch F``/``make_directory D``."""
    program = program_name(argv)
    args = list(argv[1:])
    found: list[str] = []
    if program == "sort":
        found = _sort_outputs(args)
    elif program == "find":
        found = [args[i + 1] for i, a in enumerate(args[:-1]) if a in _FIND_WRITE_OPTIONS]
    elif program == "cmake" and args[:1] == ["-E"] and len(args) > 1:
        sub, rest = args[1], operands(args[2:])
        if sub in _CMAKE_CREATES:
            found = rest
        elif sub in _CMAKE_DESTINATION and len(rest) >= 2:
            found = rest[-1:]
    return found


def _sort_outputs(args: Sequence[str]) -> list[str]:
    """``sort -o F``, ``-oF``, ``-uo F``, ``--output[=]F`` (``-t``/``-k``/``-S``/``-T`` take values too)."""
    found: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        following = args[i + 1] if i + 1 < len(args) else ""
        if arg == "--":
            break
        if arg == "--output":
            found.append(following)
            i += 1
        elif arg.startswith("--output="):
            found.append(arg.split("=", 1)[1])
        elif arg.startswith("-") and not arg.startswith("--"):
            for position, letter in enumerate(arg[1:], start=2):
                if letter in "ktSTo":
                    value = arg[position:] or following
                    if letter == "o":
                        found.append(value)
                    i += 0 if arg[position:] else 1
                    break
        i += 1
    return [f for f in found if f]


def cmake_runs(argv: Sequence[str]) -> tuple[str | None, tuple[str, ...]] | None:
    """``cmake -E env [NAME=V...] CMD`` and ``cmake -E chdir DIR CMD``: (the directory it runs in, if
    changed; the command); else None."""
    args = list(argv[1:])
    if program_name(argv) != "cmake" or args[:1] != ["-E"] or len(args) < 2:
        return None
    if args[1] == "env":
        rest = args[2:]
        while rest and (rest[0].startswith("-") or "=" in rest[0]):
            rest.pop(0)
        return None, tuple(rest)
    if args[1] == "chdir" and len(args) >= 3:
        return args[2], tuple(args[3:])
    return None


def option_deletions(argv: Sequence[str]) -> tuple[bool, list[str]] | None:
    """``cmake -E rm/remove/remove_directory/rename``: (recursive, the paths removed); else None."""
    args = list(argv[1:])
    if program_name(argv) != "cmake" or args[:1] != ["-E"] or len(args) < 2 or args[1] not in _CMAKE_DELETES:
        return None
    rest = operands(args[2:])
    recursive = args[1] == "remove_directory" or any(
        a.startswith("-") and not a.startswith("--") and set(a[1:]) & {"r", "R"} for a in args[2:]
    )
    return recursive, rest[:1] if args[1] == "rename" else rest


def find_selects(argv: Sequence[str]) -> bool:
    """Whether a ``find`` call narrows what it matches with a test (``-name``, ``-type``...), so
    ``-delete`` removes some entries rather than the whole tree."""
    return bool(_FIND_TESTS & set(argv[1:]))


def find_exec_commands(argv: Sequence[str]) -> list[tuple[str, ...]]:
    """Every command ``find -exec/-execdir/-ok/-okdir ... ;`` runs (there may be several)."""
    if program_name(argv) != "find":
        return []
    args = list(argv[1:])
    commands: list[tuple[str, ...]] = []
    i = 0
    while i < len(args):
        if args[i] in _FIND_EXEC:
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
            if end > i + 1:
                commands.append(tuple(args[i + 1 : end]))
            i = end
        i += 1
    return commands


def git_directories(argv: Sequence[str]) -> list[str]:
    """The directories git is pointed at before its sub-command: ``-C DIR`` (each one, in order),
    ``--git-dir``, ``--work-tree``."""
    if program_name(argv) != "git":
        return []
    args = list(argv[1:])
    found: list[str] = []
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg in ("-C", "--git-dir", "--work-tree") and i + 1 < len(args):
            found.append(args[i + 1])
            i += 2
            continue
        if arg.startswith(("--git-dir=", "--work-tree=")):
            found.append(arg.split("=", 1)[1])
        elif arg in ("-c", "--namespace", "--exec-path", "--config-env") and i + 1 < len(args):
            i += 1
        i += 1
    return found


def recursive_read_roots(argv: Sequence[str]) -> list[str] | None:
    """For programs that read the contents of every file under a directory (``grep -r``, ``rg``,
    ``find -exec``, ``tar c``, ``cp -r``, ``zip -r``, ``rsync -r``): the paths they walk (``.`` when
    none is named); None for anything else."""
    program = program_name(argv)
    args = list(argv[1:])
    flags = _short_flags(args)
    if program in _GREPS and ({"-r", "-R", "--recursive", "--dereference-recursive"} & flags):
        found = operands(args, {"-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "--include", "--exclude"})
        explicit = any(a in ("-e", "-f") or a.startswith(("--regexp", "--file")) for a in args)
        paths = found if explicit else found[1:]
        return paths or ["."]
    if program in _ALWAYS_RECURSIVE:
        found = operands(args, {"-e", "-f", "-g", "--glob", "-t", "-T", "--type", "-m", "-A", "-B", "-C"})
        explicit = any(a in ("-e", "-f") or a.startswith(("--regexp", "--file")) for a in args)
        paths = found if explicit else found[1:]
        return paths or ["."]
    if program == "find" and _FIND_EXEC & set(args):
        starts = []
        for arg in args:
            if arg.startswith("-") or arg in ("(", "!", ")"):
                break
            starts.append(arg)
        return starts or ["."]
    if program in ("tar", "bsdtar", "gtar"):
        first = args[0] if args else ""
        creating = (first and not first.startswith("-") and "c" in first) or bool(
            {"-c", "--create", "-r", "--append", "-u", "--update"} & flags
        )
        if creating:
            return operands(args[1:] if first and not first.startswith("-") else args, _TAR_VALUES)
        return None
    if program in ("cp", "zip", "rsync", "scp") and {"-r", "-R", "-a", "--recursive", "--archive"} & flags:
        return operands(args, {"-t", "--target-directory", "-S", "--suffix", "-e", "--exclude", "-x", "-i"})
    return None


_TAR_VALUES = frozenset({"-C", "--directory", "-X", "--exclude-from", "-T", "--files-from"})


def secret_inside(directory: Path, home_dirs: Iterable[Path]) -> str | None:
    """A known credential location lying inside ``directory`` (resolved), or None."""
    candidates = [home / relative for home in home_dirs for relative in SECRET_HOME_PATHS]
    for pattern in SECRET_SYSTEM_PATHS:
        head = pattern.split("*", 1)[0]
        candidates.append(Path(head if "*" not in pattern else str(PurePosixPath(head).parent)))
    for candidate in candidates:
        if candidate != directory and candidate.is_relative_to(directory):
            return str(candidate)
    return None


# ------------------------------------------------------------------------------------------ checks


def check_xargs_program(argv: Sequence[str], shown: str) -> None:
    """``... | xargs rm``: a program that changes files, run on operands read at run time."""
    program = program_name(argv)
    changes = (
        program in XARGS_WRITERS
        or rm_like_targets(argv)[0] is not None
        or bool(write_targets(argv) or option_write_targets(argv))
        or option_deletions(argv) is not None
        or (program == "sed" and any(_in_place(a) for a in argv[1:]))
    )
    if changes:
        deny(
            shown,
            f"'xargs' would run '{program}', which changes files, on paths it reads at run time, so the "
            "guard cannot check that they are inside the workspace; run the command on the paths "
            "themselves (list them), or use find with -delete/-exec inside the workspace",
        )


def check_git_directories(
    argv: Sequence[str], words: Sequence[Word] | None, cwd: Path, workspace: Path | None, shown: str
) -> None:
    """``git -C DIR``, ``--git-dir``, ``--work-tree`` (and git run from a directory) outside the
    workspace: git would create, change or run the configuration of a repository out there."""
    if workspace is None or program_name(argv) != "git":
        return
    computed = {w.text for w in words if w.dynamic} if words is not None else set()
    where = cwd
    for directory in git_directories(argv):
        if directory in computed or "$" in directory:
            deny(shown, f"'git' is pointed at '{directory}', computed at run time; write the directory")
        where = resolve_path(directory, where)
        if not is_inside(where, workspace):
            deny(
                shown,
                f"'git' would work on '{directory}', outside the workspace {workspace} (git creates, "
                "changes and runs the configuration of the repository it is pointed at); run git on the "
                "repository inside the workspace",
            )
    if not is_inside(where, workspace):
        deny(shown, f"'git' would run in '{where}', outside the workspace {workspace}; run it inside")


# Variables that point git at a repository or work tree (as --git-dir/--work-tree do).
GIT_PATH_VARIABLES = frozenset({"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE"})


def check_git_variable(
    name: str, value: str, *, dynamic: bool, cwd: Path, workspace: Path | None, shown: str
) -> None:
    """``GIT_DIR=/elsewhere git init``, ``env GIT_WORK_TREE=...``: like ``git --git-dir``."""
    if workspace is None or name not in GIT_PATH_VARIABLES:
        return
    if dynamic or "$" in value:
        deny(shown, f"'{name}' points git at '{value}', computed at run time; write the directory")
    if value and not is_inside(resolve_path(value, cwd), workspace):
        deny(
            shown,
            f"'{name}={value}' points git outside the workspace {workspace} (git creates, changes and "
            "runs the configuration of the repository it is pointed at); run git on the repository "
            "inside the workspace",
        )


def check_listing_piped_to_xargs(
    lister: Sequence[str], cwd: Path, home_dirs: Iterable[Path], shown: str
) -> None:
    """``find ~ -name 'id_*' | xargs cat``: names listed under a directory that holds a credential,
    handed to a program that reads them."""
    if program_name(lister) != "find":
        return
    roots = recursive_read_roots([*lister, "-exec"]) or ["."]
    home_dirs = list(home_dirs)
    for root in roots:
        try:
            path = resolve_glob(_expand_home(root), cwd)
        except (OSError, ValueError):
            continue
        secret = secret_inside(path, home_dirs)
        if secret is not None or "$" in _expand_home(root):
            deny(
                shown,
                f"'xargs' would read the files 'find' lists under '{root}', which holds the credential "
                f"'{secret or '(computed directory)'}'; agents may not read credentials. Search a "
                "narrower directory (the workspace)",
            )


def check_recursive_read(
    argv: Sequence[str], words: Sequence[Word] | None, cwd: Path, home_dirs: Iterable[Path], shown: str
) -> None:
    """``grep -r X ~``, ``tar c ~``, ``cp -r ~ x``: walking a directory that holds a credential reads
    the credential, as surely as naming it."""
    roots = recursive_read_roots(argv)
    if roots is None:
        return
    home_dirs = list(home_dirs)
    program = program_name(argv)
    computed = {w.text for w in words if w.dynamic} if words is not None else set()
    for root in roots:
        text = root
        if root in computed or "$" in root:
            text = _expand_home(root)
            if "$" in text:
                deny(
                    shown,
                    f"'{program}' reads every file under '{root}', which is computed at run time, so the "
                    "guard cannot check it holds no credential; write the directory literally",
                )
        try:
            path = resolve_glob(text, cwd)
        except (OSError, ValueError):
            continue
        secret = secret_inside(path, home_dirs)
        if secret is not None:
            deny(
                shown,
                f"'{program}' reads every file under '{root}', which holds the credential '{secret}'; "
                "agents may not read credentials. Search a narrower directory (the workspace)",
            )


def _in_place(arg: str) -> bool:
    return arg.startswith("--in-place") or (arg.startswith("-") and not arg.startswith("--") and "i" in arg)


def _expand_home(text: str) -> str:
    home = str(Path.home())
    for form in ("${HOME}", "$HOME"):
        if text == form or text.startswith(form + "/"):
            return home + text[len(form) :]
    return text
