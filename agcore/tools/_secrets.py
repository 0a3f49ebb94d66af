"""Where credentials live on a developer's machine: the one list both layers use.

``CommandGuard`` refuses a command that names one of these paths (``cat ~/.ssh/id_ed25519``), and the
sandbox hides them (an empty directory or ``/dev/null`` mounted over them), so a command that reaches
them in a way the guard cannot read (a script, a one-liner) finds nothing there.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

__all__ = [
    "SECRET_FILE_PATTERNS",
    "SECRET_HOME_PATHS",
    "SECRET_SYSTEM_PATHS",
    "existing_secret_paths",
    "is_secret_path",
]

# Relative to a home directory: credential stores, key rings and token files of common tools.
SECRET_HOME_PATHS: tuple[str, ...] = (
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json",
    ".netrc", ".npmrc", ".pypirc", ".git-credentials", ".config/git/credentials", ".pgpass",
    ".my.cnf", ".config/gh", ".config/hub", ".cargo/credentials", ".cargo/credentials.toml",
    ".gem/credentials", ".vault-token", ".password-store", ".local/share/keyrings",
    ".terraform.d/credentials.tfrc.json", ".config/op", ".oci", ".m2/settings-security.xml",
)  # fmt: skip
# Absolute: the system's password hashes and host keys (readable by root only, and agents may run as root).
SECRET_SYSTEM_PATHS: tuple[str, ...] = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
    "/etc/ssh/ssh_host_*_key", "/etc/ssl/private", "/root/.ssh",
)  # fmt: skip
# File names that are private keys or credential files wherever they are (case-insensitive).
SECRET_FILE_PATTERNS: tuple[str, ...] = (
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*.pem", "*.key", "*.p12", "*.pfx", ".netrc",
    "_netrc", ".npmrc", ".pypirc", ".pgpass", ".git-credentials", "credentials", "credentials.json",
)  # fmt: skip
_PUBLIC_KEY = re.compile(r"\.pub$", re.IGNORECASE)


def homes() -> list[Path]:
    """The home directories whose secrets matter: ``$HOME`` (``Path.home()``) and the account's own."""
    found = [Path.home()]
    try:
        import pwd

        found.append(Path(pwd.getpwuid(os.getuid()).pw_dir))
    except (ImportError, KeyError):  # pragma: no cover - no passwd database (Windows, odd containers)
        pass
    return list(dict.fromkeys(Path(os.path.realpath(h)) for h in found))


def is_secret_path(path: Path, home_dirs: Iterable[Path] | None = None) -> bool:
    """Whether an absolute, resolved path is, or lies in, a known credential location."""
    text = str(path)
    name = PurePosixPath(text).name.lower()
    if name and not _PUBLIC_KEY.search(name) and any(fnmatchcase(name, p) for p in SECRET_FILE_PATTERNS):
        return True
    for pattern in SECRET_SYSTEM_PATHS:
        if fnmatchcase(text, pattern) or text.startswith(pattern.rstrip("*") + "/"):
            return True
    for home in home_dirs if home_dirs is not None else homes():
        for relative in SECRET_HOME_PATHS:
            secret = home / relative
            if path == secret or path.is_relative_to(secret):
                return True
    return False


def existing_secret_paths(home_dirs: Iterable[Path]) -> list[Path]:
    """The credential locations that exist on this machine (real paths), for the sandbox to hide."""
    found: list[Path] = []
    candidates: list[str] = []
    for home in home_dirs:
        candidates.extend(str(home / relative) for relative in SECRET_HOME_PATHS)
    for pattern in SECRET_SYSTEM_PATHS:
        candidates.extend(glob.glob(pattern) if "*" in pattern else [pattern])
    for candidate in candidates:
        if os.path.lexists(candidate):
            real = Path(os.path.realpath(candidate))
            if real.exists() and real not in found:
                found.append(real)
    return found
