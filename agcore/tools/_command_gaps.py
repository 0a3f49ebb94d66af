"""What guard-only mode used to miss (issue 24), read from what a command says: programs that write
files without looking like it, ways to change directory the guard could not follow, other processes'
environments, interpreters reaching the network, and the programs inside scripts and Makefiles.

- written files: ``gzip``/``xz``/``zstd``... replace their operands (``-c``/``-l``/``-t`` excepted),
  ``split``/``csplit`` write next to a prefix, ``patch`` writes its file operand (``-o``, ``-d``),
  ``perl -i``/``ruby -i`` rewrite their file operands, ``git init DIR`` / ``git clone URL DIR``
  create DIR;
- directories: ``env -C DIR`` runs its command in DIR; ``CDPATH`` makes ``cd sub`` go anywhere;
- environments: ``/proc/PID/environ`` (any process's secrets) and ``ps e``;
- network from an interpreter one-liner (``python3 -c 'import socket...'``) when the network is off;
- scripts the guard can read: ``bash FILE``, ``sh FILE``, ``source FILE``, ``./FILE`` with a shell
  shebang, and ``make`` (its Makefile's recipe lines): their commands are checked like any other.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from agcore.tools._command_paths import resolve_path
from agcore.tools._command_rules import SHELLS, operands, subcommand

__all__ = [
    "MAX_SCRIPT_BYTES", "awk_actions", "environment_reason", "extra_write_targets", "makefile_recipes",
    "network_code_reason", "script_file_text", "tar_commands", "wrapper_directory",
]  # fmt: skip

MAX_SCRIPT_BYTES = 256_000
_COMPRESSORS = frozenset({
    "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "unlzma", "zstd", "unzstd", "lz4", "unlz4",
    "compress", "uncompress", "pigz", "pbzip2", "lzip", "brotli",
})  # fmt: skip
_TO_STDOUT = frozenset({"-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"})
_NETWORK_CODE = re.compile(
    r"\bsocket\b|urllib|http\.client|\brequests\b|\bhttpx\b|aiohttp|\bfetch\s*\(|\bnet\.(connect|"
    r"createConnection)|/dev/(tcp|udp)/|IO::Socket|LWP|Net::|open-uri|TCPSocket|\bcurl\b|\bwget\b"
)
_AWK = re.compile(r"^(awk|gawk|mawk|nawk|busybox-awk)$")
_AWK_ACTION = re.compile(r"system\s*\(|\|&|\|\s*getline|\bprintf?\b[^;{}\n]*(>|\|)|\"\s*\|")
_AWK_SYSTEM = re.compile(r'system\s*\(\s*"((?:[^"\\]|\\.)*)"\s*\)')
_AWK_PIPE_TO = re.compile(r'\bprintf?\b[^;{}\n]*?\|\s*"((?:[^"\\]|\\.)*)"')
_AWK_PIPE_FROM = re.compile(r'"((?:[^"\\]|\\.)*)"\s*\|\s*getline')
_AWK_WRITE = re.compile(r'\bprintf?\b[^;{}\n]*?>>?\s*"((?:[^"\\]|\\.)*)"')
# the literal forms, removed before looking for computed ones
_AWK_LITERAL = re.compile(
    r'system\s*\(\s*"(?:[^"\\]|\\.)*"\s*\)|(\||>>?)\s*"(?:[^"\\]|\\.)*"|"(?:[^"\\]|\\.)*"\s*\|\s*getline'
)
_TAR_RUNS = frozenset({
    "--to-command", "--use-compress-program", "--info-script", "--new-volume-script", "--rsh-command",
})  # fmt: skip
_PROC_ENVIRON = re.compile(r"^/proc/[^/]+/(task/[^/]+/)?environ$")
_MAKE_SHELL = re.compile(r"\$\(shell\s+")
_SHELL_SHEBANG = re.compile(rb"^#!\s*(/usr)?/bin/(env\s+)?(ba|da|k|z)?sh\b")


def _name(argv: Sequence[str]) -> str:
    return (PurePosixPath(argv[0]).name or argv[0]) if argv else ""  # "." (source) has no name


def extra_write_targets(argv: Sequence[str]) -> list[str]:
    """Files these programs create or rewrite, beyond ``_command_rules.write_targets``."""
    program = _name(argv)
    args = list(argv[1:])
    if program in _COMPRESSORS:
        flags = {a for a in args if a.startswith("-")}
        short = {f"-{c}" for a in flags if not a.startswith("--") for c in a[1:]}
        if (flags | short) & _TO_STDOUT:
            return []
        found = operands(args, {"-S", "--suffix", "-o", "-b", "-p", "-T", "--threads"})
        named = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-o"]
        return found + named
    if program in ("mkfifo", "mknod"):
        found = operands(args, {"-m", "--mode", "-Z", "--context"})
        return found[:1] if program == "mknod" else found
    if program in ("tar", "bsdtar", "gtar"):
        return _tar_archive_written(args)
    if program == "split":
        found = operands(args, {"-a", "-b", "-C", "-l", "-n", "-t", "--additional-suffix", "--filter"})
        return [found[1] if len(found) >= 2 else "x"]
    if program == "csplit":
        prefix = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-f", "--prefix")), "xx")
        return [prefix]
    if program == "patch":
        return _patch_targets(args)
    if program in ("perl", "ruby") and any(
        a.startswith("-") and not a.startswith("--") and "i" in a[1:].split(".")[0] for a in args
    ):
        return _in_place_files(args)
    if program == "git":
        sub, rest = subcommand(argv, {"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
        directories = operands(rest, {"-b", "--branch", "--template", "--separate-git-dir", "-o", "--origin"})
        if sub == "init" and directories:
            return directories[-1:]
        if sub == "clone" and len(directories) >= 2:
            return directories[-1:]
    return []


def _tar_archive_written(args: Sequence[str]) -> list[str]:
    """The archive ``tar -c``/``-r``/``-u`` writes (``-cf FILE``, ``cf FILE``, ``--file=FILE``)."""
    first = args[0] if args else ""
    bundled = first if first and not first.startswith("-") else ""
    short = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--")) + bundled
    if not (set(short) & set("cru") or {"--create", "--append", "--update"} & set(args)):
        return []
    for i, arg in enumerate(args):
        if arg.startswith("--file="):
            return [arg.split("=", 1)[1]]
        letters = arg[1:] if arg.startswith("-") and not arg.startswith("--") else arg if i == 0 else ""
        if (arg == "--file" or "f" in letters) and i + 1 < len(args):
            rest = letters[letters.index("f") + 1 :] if "f" in letters else ""
            return [rest or args[i + 1]]
    return []


def tar_commands(argv: Sequence[str]) -> list[str]:
    """Commands tar runs from its options (``--to-command``, ``--checkpoint-action=exec=``,
    ``--use-compress-program``/``-I``, ``--info-script``/``-F``, ``--new-volume-script``)."""
    if _name(argv) not in ("tar", "bsdtar", "gtar"):
        return []
    found: list[str] = []
    args = list(argv[1:])
    for i, arg in enumerate(args):
        following = args[i + 1] if i + 1 < len(args) else ""
        name, equals, value = arg.partition("=")
        if name in _TAR_RUNS:
            found.append(value if equals else following)
        elif name == "--checkpoint-action" and value.startswith("exec="):
            found.append(value[len("exec="):])
        elif arg in ("-I", "-F"):
            found.append(following)
    return [command for command in found if command]


def awk_actions(argv: Sequence[str]) -> tuple[list[str], list[str], str | None]:
    """What an awk program on the command line does outside itself: the commands it runs
    (``system("...")``, ``print | "..."``, ``"..." | getline``), the files it writes (``print >
    "..."``), and, when one of those is computed at run time (``system(x)``, ``print > f``), a
    reason to refuse it: the guard can only check what is written literally."""
    if not _AWK.match(_name(argv)):
        return [], [], None
    commands: list[str] = []
    files: list[str] = []
    for program in (a for a in argv[1:] if _AWK_ACTION.search(a)):
        commands += _AWK_SYSTEM.findall(program) + _AWK_PIPE_TO.findall(program)
        commands += _AWK_PIPE_FROM.findall(program)
        files += _AWK_WRITE.findall(program)
        literal = _AWK_LITERAL.sub('""', program)  # what is left once the literal actions are gone
        if _AWK_ACTION.search(literal):
            return commands, files, (
                "the awk program runs a command or writes a file whose name it computes at run time, "
                "which the guard cannot check; write the command or file name as a literal string"
            )
    return commands, files, None


def _patch_targets(args: Sequence[str]) -> list[str]:
    found: list[str] = []
    for i, arg in enumerate(args):
        following = args[i + 1] if i + 1 < len(args) else ""
        if arg in ("-o", "--output", "-d", "--directory", "-B", "--prefix"):
            found.append(following)
        elif arg.startswith(("--output=", "--directory=")):
            found.append(arg.split("=", 1)[1])
    files = operands(args, {"-o", "--output", "-d", "--directory", "-i", "--input", "-p", "-F", "-B",
                            "-D", "-r", "-V", "-Y", "-z", "--prefix"})  # fmt: skip
    return found + files[:1]  # patch [ORIGINAL [PATCHFILE]]: only the first is written


def _in_place_files(args: Sequence[str]) -> list[str]:
    """The file operands of ``perl -pi -e CODE FILE...``: after the options and the code."""
    i = 0
    files: list[str] = []
    code_given = False
    while i < len(args):
        arg = args[i]
        if arg == "--":
            files.extend(args[i + 1 :])
            break
        if arg in ("-e", "-E", "-M", "-I", "-m", "-r"):
            code_given = code_given or arg in ("-e", "-E")
            i += 2
            continue
        if arg.startswith("-") and len(arg) > 1:
            code_given = code_given or arg.endswith(("e", "E"))
            i += 2 if arg.endswith(("e", "E")) else 1
            continue
        files.append(arg)
        i += 1
    return files if code_given else files[1:]  # without -e the first operand is the script


def wrapper_directory(argv: Sequence[str]) -> str | None:
    """The directory ``env -C DIR`` / ``env --chdir=DIR`` runs its command in."""
    if _name(argv) != "env":
        return None
    args = list(argv[1:])
    for i, arg in enumerate(args):
        if arg in ("-C", "--chdir") and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--chdir="):
            return arg.split("=", 1)[1]
        if arg.startswith("-C") and len(arg) > 2:
            return arg[2:]
        if not arg.startswith("-") and "=" not in arg:
            break
    return None


def environment_reason(argv: Sequence[str]) -> str | None:
    """``ps e``/``ps eww``/``ps auxe``: other processes' environments, where their secrets are."""
    if any(_PROC_ENVIRON.match(a) for a in argv[1:]):
        return "another process's environment holds its API keys and tokens; leave /proc/*/environ alone"
    if _name(argv) == "ps" and any(not a.startswith("-") and "e" in a for a in argv[1:]):
        return (
            "'ps' with 'e' shows every process's environment, where API keys and tokens live; "
            "leave out the 'e'"
        )
    return None


def network_code_reason(code: str) -> str | None:
    """Why an interpreter one-liner reaches the network (sockets, HTTP clients), if it seems to."""
    found = _NETWORK_CODE.search(code)
    if found is None:
        return None
    return f"the inline program uses the network ('{found.group(0)}')"


def script_file_text(argv: Sequence[str], cwd: Path) -> str | None:
    """The text of the shell script this command runs from a file (``bash x.sh``, ``sh -e x.sh``,
    ``source x.sh``, ``./x.sh`` with a shell shebang), when it can be read; None otherwise."""
    program = _name(argv)
    args = list(argv[1:])
    path: str | None = None
    if program in ("source", "."):
        path = args[0] if args else None
    elif program in SHELLS:
        found = operands(args, {"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
        if found and not any(a.startswith("-") and not a.startswith("--") and ("c" in a or "s" in a)
                             for a in args):  # fmt: skip
            path = found[0]
    elif "/" in (argv[0] if argv else ""):
        head = _read(resolve_path(argv[0], cwd), 200)
        if head is not None and _SHELL_SHEBANG.match(head):
            path = argv[0]
    if path is None or path in ("-", "/dev/stdin"):
        return None
    data = _read(resolve_path(path, cwd), MAX_SCRIPT_BYTES)
    return None if data is None else data.decode("utf-8", "replace")


def makefile_recipes(argv: Sequence[str], cwd: Path) -> list[str]:
    """The recipe lines of the Makefile ``make`` would read (``-f FILE``, ``-C DIR``), as commands."""
    if _name(argv) not in ("make", "gmake"):
        return []
    args = list(argv[1:])
    directory, files = cwd, []
    for i, arg in enumerate(args):
        following = args[i + 1] if i + 1 < len(args) else ""
        if arg in ("-C", "--directory"):
            directory = resolve_path(following, cwd)
        elif arg in ("-f", "--file", "--makefile"):
            files.append(following)
    names = files or ["GNUmakefile", "makefile", "Makefile"]
    for name in names:
        data = _read(resolve_path(name, directory), MAX_SCRIPT_BYTES)
        if data is not None:
            lines = data.decode("utf-8", "replace").splitlines()
            recipes = [line.lstrip("\t").lstrip("@-+ ") for line in lines if line.startswith("\t")]
            # $(shell ...) runs when the Makefile is read, wherever it is written
            recipes += [line for line in lines if "$(shell" in line and not line.startswith("\t")]
            return [_MAKE_SHELL.sub("$(", line).replace("$$", "$") for line in recipes]
    return []


def _read(path: Path, limit: int) -> bytes | None:
    try:
        if not path.is_file() or os.path.getsize(path) > limit:
            return None
        return path.read_bytes()[:limit]
    except OSError:
        return None
