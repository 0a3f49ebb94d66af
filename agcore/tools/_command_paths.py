"""Where a command's operands point: paths resolved as the shell would (``~``, globs, symlinks), and
the places no command may write or delete (the system's directories, the user's dotfiles, ``/`` and
home themselves)."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

__all__ = ["ALLOWED_DEVICES", "is_inside", "is_system_path", "is_vital", "resolve_glob", "resolve_path"]


ALLOWED_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero")
_SYSTEM_PREFIXES = (
    "/etc", "/bin", "/sbin", "/usr", "/boot", "/lib", "/lib32", "/lib64", "/libx32", "/sys", "/proc",
    "/dev", "/var", "/root", "/opt", "/System", "/Library",
)  # fmt: skip
_HOME_PROTECTED = (".ssh", ".gnupg", ".bashrc", ".bash_profile", ".profile", ".zshrc", ".config", ".aws")


def resolve_path(target: str, cwd: Path) -> Path:
    if target.startswith("~"):
        target = os.path.expanduser(target)  # "~", "~/x" and "~user/x", as the shell does
    return Path(os.path.realpath(os.path.join(cwd, target)))


def resolve_glob(target: str, cwd: Path) -> Path:
    """The real path an operand stands for; for a glob, what it takes: ``/*`` and ``build/*`` take a
    whole directory (that directory is returned), ``build/*.o`` some entries (a stand-in child)."""
    if not any(c in target for c in "*?["):
        return resolve_path(target, cwd)
    parts = target.split("/")
    first = next(i for i, p in enumerate(parts) if any(c in p for c in "*?["))
    base = "/".join(parts[:first]) or ("/" if target.startswith("/") else ".")
    directory = resolve_path(base, cwd)
    takes_all = first == len(parts) - 1 and re.fullmatch(r"[.*?]+", parts[first]) is not None
    return directory if takes_all else directory / "_glob_"


def is_inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def is_vital(path: str) -> bool:
    """Deleting this breaks the machine or the user's account: ``/``, a top-level dir, home or above."""
    if path == "/" or len(PurePosixPath(path).parts) == 2:
        return True
    home = str(Path.home())
    return path == home or home.startswith(path.rstrip("/") + "/")


def is_system_path(path: str) -> bool:
    if any(path == p or path.startswith(p + "/") for p in _SYSTEM_PREFIXES):
        return True
    home = Path.home()
    return any(Path(path) == home / h or Path(path).is_relative_to(home / h) for h in _HOME_PROTECTED)
