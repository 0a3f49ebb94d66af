"""What ``CommandGuard`` knows about individual programs (which are destructive, escalating or
networked, which wrap another command, which operands they write to) and about paths (which are
vital to the machine or the user's account).

Each program function takes one argv (program first, after shell parsing) and answers one question.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from pathlib import PurePosixPath
from typing import Literal

__all__ = [
    "DOWNLOADERS",
    "NETWORK_PROGRAMS",
    "PROTECTED_BRANCHES",
    "is_interpreter",
    "SHELLS",
    "link_sources",
    "network_reason",
    "operands",
    "program_rule",
    "rm_like_targets",
    "subcommand",
    "unwrap",
    "write_targets",
]

DOWNLOADERS = frozenset({
    "curl", "wget", "fetch", "aria2c", "http", "https", "xh", "nc", "ncat", "netcat", "socat",
})  # fmt: skip
NETWORK_PROGRAMS = DOWNLOADERS | frozenset({
    "ssh", "scp", "sftp", "ftp", "lftp", "tftp", "telnet", "mosh", "ping", "ping6", "traceroute",
    "tracepath", "dig", "nslookup", "host", "whois", "smbclient", "npx", "pnpx",
})  # fmt: skip
# Sub-commands that reach the network (installers fetch and run code from package indexes).
_NETWORK_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": frozenset({
        "clone", "fetch", "pull", "push", "ls-remote", "submodule update", "remote update", "remote show",
        "remote prune",
    }),
    "pip": frozenset({"install", "download", "wheel"}),
    "uv": frozenset({
        "add", "sync", "lock", "pip install", "pip sync", "pip compile", "tool install", "tool run",
        "python install",
    }),
    "pipx": frozenset({"install", "run", "upgrade", "inject"}),
    "poetry": frozenset({"add", "install", "update", "lock"}),
    "conda": frozenset({"install", "create", "update"}),
    "mamba": frozenset({"install", "create", "update"}),
    "npm": frozenset({"install", "i", "ci", "add", "update", "up", "publish", "exec", "x"}),
    "pnpm": frozenset({"install", "i", "add", "update", "up", "dlx"}),
    "yarn": frozenset({"install", "add", "upgrade", "dlx"}),
    "cargo": frozenset({"install", "fetch", "update", "publish", "search"}),
    "go": frozenset({"get", "install", "mod download", "mod tidy", "mod vendor"}),
    "gem": frozenset({"install", "update", "fetch"}),
    "apt": frozenset({"install", "update", "upgrade", "full-upgrade", "download", "source"}),
    "apt-get": frozenset({"install", "update", "upgrade", "dist-upgrade", "download", "source"}),
    "brew": frozenset({"install", "update", "upgrade", "fetch", "tap"}),
    "docker": frozenset({"pull", "push", "login", "search"}),
    "podman": frozenset({"pull", "push", "login", "search"}),
}  # fmt: skip
# openssl sub-commands that open connections (or listen for them).
_OPENSSL_NETWORK = frozenset({"s_client", "s_server", "s_time", "ocsp"})
PROTECTED_BRANCHES = (
    "main", "master", "develop", "dev", "trunk", "production", "prod", "staging", "release/*",
)  # fmt: skip

_ESCALATION = frozenset({"sudo", "su", "doas", "pkexec", "runuser", "sg", "newgrp"})
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff", "telinit"})
_DISK = re.compile(
    r"^(mkfs(\..*)?|mke2fs|mkswap|mkdosfs|mkntfs|fdisk|sfdisk|cfdisk|gdisk|sgdisk|parted|wipefs)$"
)
_INTERPRETER = re.compile(
    r"^(sh|bash|zsh|dash|ksh|mksh|fish|csh|tcsh|ash|busybox|python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|"
    r"ruby[0-9.]*|node|nodejs|deno|bun|php[0-9.]*|pwsh|powershell|lua[0-9.]*|osascript)$"
)
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash"})
_NAMESPACES = frozenset({
    "unshare", "nsenter", "chroot", "pivot_root", "capsh", "setpriv", "systemd-run", "machinectl",
    "insmod", "modprobe", "rmmod", "mount", "umount", "swapon", "swapoff",
})  # fmt: skip
_SIMPLE_WRAPPERS = frozenset({
    "nohup", "setsid", "time", "command", "builtin", "exec", "nice", "ionice", "stdbuf", "unbuffer",
})  # fmt: skip

Unwrapped = tuple[Literal["argv", "xargs", "script"], tuple[str, ...]]


def _name(argv: Sequence[str]) -> str:
    return (PurePosixPath(argv[0]).name or argv[0]) if argv else ""  # "." (source) has no name


def is_interpreter(program: str) -> bool:
    return bool(_INTERPRETER.match(program))


def link_sources(argv: Sequence[str]) -> tuple[str, list[str]] | None:
    """For calls that create links (``ln``, ``cp -s``/``cp -l``, ``link``): ("symbolic" or "hard",
    the paths linked to); else None."""
    program = _name(argv)
    args = list(argv[1:])
    flags = _short_flags(args)
    if program == "ln":
        kind = "symbolic" if {"-s", "--symbolic"} & flags else "hard"
        found = operands(args, {"-S", "--suffix", "-t", "--target-directory"})
        explicit = any(a in ("-t", "--target-directory") or a.startswith("--target-directory=") for a in args)
        return kind, found if explicit or len(found) < 2 else found[:-1]
    if program == "cp" and {"-s", "--symbolic-link", "-l", "--link"} & flags:
        kind = "symbolic" if {"-s", "--symbolic-link"} & flags else "hard"
        found = operands(args, {"-S", "--suffix", "-t", "--target-directory"})
        return kind, found[:-1] if len(found) >= 2 else found
    if program == "link":
        return "hard", list(args[:1])
    return None


def operands(args: Sequence[str], takes_value: Collection[str] = ()) -> list[str]:
    """Non-option arguments: skips ``-x``, ``-xyz``, ``--long[=v]``, and the value of options in
    ``takes_value`` (``-n 5``); everything after ``--`` is an operand."""
    result: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            result.extend(args[i + 1 :])
            break
        if arg.startswith("-") and arg != "-":
            if arg in takes_value and "=" not in arg:
                i += 1
        else:
            result.append(arg)
        i += 1
    return result


def _short_flags(args: Sequence[str]) -> set[str]:
    flags: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--"):
            flags.add(arg.split("=", 1)[0])
        elif arg.startswith("-") and len(arg) > 1:
            flags.update(f"-{c}" for c in arg[1:])
    return flags


def subcommand(argv: Sequence[str], value_options: Collection[str] = ()) -> tuple[str, list[str]]:
    rest = list(argv[1:])
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in value_options and rest:
            rest.pop(0)
    return (rest[0], rest[1:]) if rest else ("", [])


# -------------------------------------------------------------------------------------- rules


def program_rule(argv: Sequence[str], *, allow_network: bool) -> str | None:
    """Why this program call is refused outright (escalation, power, disks, kills...), or None."""
    program = _name(argv)
    args = list(argv[1:])
    if program in _ESCALATION:
        return f"'{program}' runs commands as another user (privilege escalation); agents run unprivileged"
    if program in _NAMESPACES:
        return (
            f"'{program}' changes namespaces, mounts, the root directory or the kernel: a way out of the "
            "sandbox; agents do not need it"
        )
    if program == "alias" and any("=" in a for a in args):
        return "defining an alias hides which program runs; write the command itself"
    if program in ("shopt", "set") and "expand_aliases" in args:
        return "turning on alias expansion hides which program runs; write the command itself"
    if program in _POWER or (program == "init" and args[:1] in (["0"], ["6"])):
        return f"'{program}' would shut down or restart the machine"
    if program == "systemctl" and {"poweroff", "reboot", "halt", "suspend", "hibernate", "kexec"} & set(args):
        return "'systemctl' would shut down or restart the machine"
    if _DISK.match(program):
        return f"'{program}' formats or repartitions disks and destroys their data"
    if program in ("killall", "killall5", "pkill"):
        return f"'{program}' kills processes by name, possibly the agent's own host; use 'kill PID'"
    if program == "kill" and ("1" in args or "-1" in args[1:]):
        return "'kill' of PID 1 or -1 would kill init or every process of the user"
    if program == "crontab" and ({"-r", "-e", "-i"} & _short_flags(args) or operands(args, {"-u"})):
        return (
            "'crontab' changes would alter scheduled jobs outside the workspace; only 'crontab -l' is allowed"
        )
    if program == "rm" and "--no-preserve-root" in args:
        return "'rm --no-preserve-root' exists only to delete '/'"
    if program == "chmod" and any(_sets_id_bit(a) for a in args):
        return "'chmod' setting setuid/setgid bits creates a privilege-escalation path"
    if program == "dd":
        for arg in args:
            if arg.startswith("of=/dev/") and arg not in ("of=/dev/null", "of=/dev/stdout", "of=/dev/stderr"):
                return f"'dd {arg}' writes raw data to a device and can destroy a disk"
    if program == "git" and allow_network:
        return _git_push_rule(argv)
    return None


def _sets_id_bit(mode: str) -> bool:
    if re.fullmatch(r"[0-7]{4,}", mode):
        return bool(int(mode, 8) & 0o6000)
    return any(re.match(r"^[ugoa]*[+=][rwxXt]*s", part) for part in mode.split(","))


def _git_push_rule(argv: Sequence[str]) -> str | None:
    sub, rest = subcommand(argv, {"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
    if sub != "push":
        return None
    flags = _short_flags(rest)
    refspecs = operands(rest, {"-o", "--push-option", "--repo", "--receive-pack", "--exec"})[1:]
    forced = bool({"-f", "--force", "--force-with-lease", "--mirror"} & flags) or any(
        r.startswith("+") for r in refspecs
    )
    deleting = bool({"-d", "--delete", "--prune"} & flags) or any(r.startswith(":") for r in refspecs)
    if not (forced or deleting):
        return None
    branches = [r.lstrip("+").split(":")[-1].removeprefix("refs/heads/") for r in refspecs]
    protected = [
        b for b in branches if any(re.fullmatch(p.replace("*", ".*"), b) for p in PROTECTED_BRANCHES)
    ]
    action = "force-push" if forced else "delete"
    if not branches:
        return f"'git push' with --force/--delete and no branch named could {action} a shared branch; name it"
    if protected:
        return (
            f"'git push' would {action} the shared branch '{protected[0]}'; push to a feature branch instead"
        )
    return None


def network_reason(argv: Sequence[str]) -> str | None:
    """Why this call needs the network (the guard refuses it unless network is allowed), or None."""
    program = _name(argv)
    args = list(argv[1:])
    if program in NETWORK_PROGRAMS:
        return f"'{program}' uses the network"
    if program == "openssl" and args[:1] and args[0] in _OPENSSL_NETWORK:
        return f"'openssl {args[0]}' connects to or listens on the network"
    if program == "rsync" and any(re.match(r"^(rsync://|[\w.@-]+::?)", a) for a in operands(args, {"-e"})):
        return "'rsync' to or from a remote host uses the network"
    if is_interpreter(program) and args[:2] == ["-m", "pip"]:
        program, args = "pip", args[2:]
    if re.fullmatch(r"pip[0-9.]*", program):
        program = "pip"
        if "--no-index" in args:
            return None
    subcommands = _NETWORK_SUBCOMMANDS.get(program)
    if subcommands is None:
        return None
    sub, rest = subcommand([program, *args], {"-C", "-c", "--directory", "--project"})
    if program == "yarn" and sub == "":
        sub = "install"
    for candidate in (sub, f"{sub} {rest[0]}" if rest else sub):
        if candidate in subcommands:
            return f"'{program} {candidate}' downloads from or uploads to the network"
    return None


def unwrap(argv: Sequence[str]) -> Unwrapped | None:
    """The command a wrapper runs: ``("argv", inner)``; ``("xargs", inner)`` when operands are added
    at run time (xargs, find -exec); ``("script", text)`` for shell code (sh -c, eval, env -S)."""
    program = _name(argv)
    args = tuple(argv[1:])
    if program in SHELLS or program == "busybox":
        if program == "busybox" and args:
            return ("argv", args)
        for i, arg in enumerate(args):
            if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
                return ("script", args[i + 1 : i + 2])
        return None
    if program == "eval":
        return ("script", (" ".join(args),))
    if program == "trap" and args and not args[0].startswith("-"):
        return ("script", args[:1])
    if program == "script":
        for i, arg in enumerate(args):
            if arg == "--command" or (arg.startswith("-") and not arg.startswith("--") and "c" in arg):
                return ("script", args[i + 1 : i + 2])
            if arg.startswith("--command="):
                return ("script", (arg.split("=", 1)[1],))
        return None
    if program == "flock":
        for flag in ("-c", "--command"):
            if flag in args:
                return ("script", args[args.index(flag) + 1 : args.index(flag) + 2])
        return ("argv", _after_options(args, {"-w", "--timeout", "-E", "--conflict-exit-code"})[1:])
    if program in ("taskset", "chrt"):
        rest = _after_options(args, {"-p", "--pid"})
        return ("argv", rest[1:])
    if program == "env":
        i = 0
        while i < len(args) and (args[i].startswith("-") or "=" in args[i]):
            if args[i] in ("-S", "--split-string"):
                return ("script", args[i + 1 : i + 2])
            i += 2 if args[i] in ("-u", "--unset", "-C", "--chdir") else 1
        return ("argv", args[i:])
    if program in _SIMPLE_WRAPPERS:
        if program == "command" and {"-v", "-V"} & set(args):
            return None
        skip = {"nice": {"-n", "--adjustment"}, "ionice": {"-c", "-n", "-p"}, "stdbuf": {"-i", "-o", "-e"}}
        rest = _after_options(args, skip.get(program, {"-a"}))
        return ("argv", rest)
    if program == "timeout":
        rest = _after_options(args, {"-s", "--signal", "-k", "--kill-after"})
        return ("argv", rest[1:])
    if program == "prlimit":  # prlimit --nofile=1 CMD: limits given attached; --pid is no command
        return None if any(a in ("-p", "--pid") or a.startswith("--pid=") for a in args) else (
            "argv", _after_options(args, {"-o", "--output"}))
    if program == "watch":
        rest = _after_options(args, {"-n", "--interval", "-d"})
        return ("script", (" ".join(rest),))
    if program == "xargs":
        # -i, -l and -e take their value attached only (-i{} -l1): "xargs -i rm {}" runs rm
        rest = _after_options(args, _XARGS_VALUES)
        return ("xargs", rest or ("echo",))
    if program == "find":
        for i, arg in enumerate(args):
            if arg in ("-exec", "-execdir", "-ok", "-okdir"):
                end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
                return ("xargs", args[i + 1 : end])
        return None
    return None


_XARGS_VALUES = frozenset({
    "-I", "-n", "-P", "-d", "-L", "-s", "-a", "-E", "--delimiter", "--max-args", "--max-procs",
    "--arg-file", "--max-chars", "--process-slot-var",
})  # fmt: skip


def _after_options(args: Sequence[str], takes_value: Collection[str]) -> tuple[str, ...]:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "--":
            return tuple(args[i + 1 :])
        i += 2 if args[i] in takes_value else 1
    return tuple(args[i:])


def rm_like_targets(argv: Sequence[str]) -> tuple[bool | None, list[str]]:
    """For programs that delete or recursively rewrite paths: (recursive, the paths); else (None, [])."""
    program = _name(argv)
    args = list(argv[1:])
    flags = _short_flags(args)
    if program == "rm":
        return bool({"-r", "-R", "--recursive"} & flags), operands(args)
    if program in ("rmdir", "unlink", "shred"):
        return False, operands(args, {"-n", "--iterations", "-s", "--size"})
    if program in ("chmod", "chown", "chgrp"):
        targets = operands(args, {"--reference"})
        if not any(a.startswith("--reference") for a in args):
            targets = targets[1:]  # the mode or the owner
        return bool({"-R", "--recursive"} & flags), targets
    if program == "mv":
        found = operands(args, {"-t", "--target-directory", "-S", "--suffix"})
        explicit = any(a in ("-t", "--target-directory") or a.startswith("--target-directory=") for a in args)
        return True, found if explicit else found[:-1]
    if program == "find":
        mutating = {"-delete", "-exec", "-execdir", "-ok", "-okdir"} & set(args)
        if mutating:
            starts = []
            for arg in args:
                if arg.startswith("-") or arg in ("(", "!", ")"):
                    break
                starts.append(arg)
            return "-delete" in mutating, starts or ["."]
    return None, []


def write_targets(argv: Sequence[str]) -> list[str]:
    """Paths this call creates or overwrites (destinations, ``of=``, files it touches)."""
    program = _name(argv)
    args = list(argv[1:])
    if program in ("touch", "mkdir", "truncate", "tee"):
        return operands(args, {"-d", "-t", "-r", "-m", "-s", "--size", "--reference", "--mode", "--date"})
    if program in ("cp", "install", "ln", "mv"):
        for i, arg in enumerate(args):
            if arg in ("-t", "--target-directory") and i + 1 < len(args):
                return [args[i + 1]]
            if arg.startswith("--target-directory="):
                return [arg.split("=", 1)[1]]
        found = operands(args, {"-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"})
        return found[-1:] if len(found) >= 2 else []
    if program == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    if program == "rsync":
        found = operands(args, {"-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--chmod"})
        return found[-1:] if len(found) >= 2 else []
    if program in ("tar", "bsdtar", "gtar"):
        return _tar_extract_directory(args)
    if program == "sed":
        return _sed_in_place_files(args)
    return []


def _tar_extract_directory(args: Sequence[str]) -> list[str]:
    """Where ``tar -x`` extracts (``-C DIR``, ``--directory=DIR``, else the working directory)."""
    first = args[0] if args else ""
    bundled = first if first and not first.startswith("-") else ""  # "tar xf a.tar"
    extracting = "x" in bundled or any(
        a in ("--extract", "--get") or (a.startswith("-") and not a.startswith("--") and "x" in a)
        for a in args
    )
    if not extracting:
        return []
    for i, arg in enumerate(args):
        if arg in ("-C", "--directory") and i + 1 < len(args):
            return [args[i + 1]]
        if arg.startswith("--directory="):
            return [arg.split("=", 1)[1]]
        if arg.startswith("-C") and len(arg) > 2 and not arg.startswith("--"):
            return [arg[2:]]
    return ["."]


def _sed_in_place_files(args: Sequence[str]) -> list[str]:
    """The files ``sed -i`` rewrites: its operands, less the script when no ``-e``/``-f`` gave one."""
    in_place = any(
        a.startswith("--in-place") or (a.startswith("-") and not a.startswith("--") and "i" in a)
        for a in args
        if a != "--"
    )
    if not in_place:
        return []
    found = operands(args, {"-e", "--expression", "-f", "--file", "-l", "--line-length"})
    scripted = any(a in ("-e", "-f") or a.startswith(("--expression", "--file")) for a in args)
    return found if scripted else found[1:]
