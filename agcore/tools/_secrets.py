"""Where credentials live: the one list every layer derives its own from.

``CommandGuard`` refuses a command that names one of these paths (``cat ~/.ssh/id_ed25519``), the
``PathGuard`` behind the file tools denies them (its ``DEFAULT_DENY`` is built from these lists), the
sandbox hides them (an empty directory or ``/dev/null`` mounted over them), and the environment a
command gets is checked against ``SECRET_ENV_PATTERNS``. Nothing else re-types a secret's name.

A location is recognised by its trailing path components wherever it is, not only under a home
directory: ``proj/.aws/credentials`` and ``~/.aws/credentials`` are the same kind of file, and a
workspace that *is* a home directory must not open ``.vault-token`` to one tool while another refuses it.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from fnmatch import fnmatchcase
from pathlib import Path

__all__ = [
    "NOT_SECRET_NAME_PATTERNS",
    "SECRET_ENV_PATTERNS",
    "SECRET_FILE_PATTERNS",
    "SECRET_HOME_PATHS",
    "SECRET_NAME_PATTERNS",
    "SECRET_PROC_PATHS",
    "SECRET_SYSTEM_PATHS",
    "existing_secret_paths",
    "is_secret_name",
    "is_secret_path",
    "path_deny_patterns",
]

# Relative to a home directory (and recognised below any directory): credential stores, key rings
# and token files of common tools.
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
# Other processes' environments, where API keys and tokens live (never hidden by the sandbox: its
# /proc is its own PID namespace's).
SECRET_PROC_PATHS: tuple[str, ...] = ("/proc/*/environ", "/proc/*/task/*/environ")
# File names that are private keys or credential files wherever they are (case-insensitive).
SECRET_FILE_PATTERNS: tuple[str, ...] = (
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*.pem", "*.key", "*.p12", "*.pfx", ".netrc",
    "_netrc", ".npmrc", ".pypirc", ".pgpass", ".git-credentials", "credentials", "credentials.json",
)  # fmt: skip
# Environment files: a project's own secrets.
_ENV_FILE_PATTERNS: tuple[str, ...] = (".env", ".env.*")
SECRET_NAME_PATTERNS: tuple[str, ...] = SECRET_FILE_PATTERNS + _ENV_FILE_PATTERNS
# Names the patterns above catch that hold nothing secret: public keys and environment templates.
NOT_SECRET_NAME_PATTERNS: tuple[str, ...] = (
    "*.pub", ".env*.example", ".env*.sample", ".env*.template", ".env*.dist",
)  # fmt: skip

# Case-insensitive glob patterns of environment variable names that look like secrets: keys, tokens
# and passwords, connection strings (they embed passwords), and handles on credential agents
# (SSH_AUTH_SOCK lets a command sign in as the user without ever seeing a key).
SECRET_ENV_PATTERNS: tuple[str, ...] = (
    "*_KEY", "*_KEYS", "*_APIKEY", "*_TOKEN", "*_TOKENS", "*_SECRET", "*_SECRETS", "*PASSWORD*", "*PASSWD*",
    "*_CREDENTIALS", "*_CREDENTIAL", "*SECRET_KEY*", "*_KEY_BASE",
    "*_PASS", "*_PAT", "*_AUTH", "*_PRIVATE_KEY*", "*_DSN", "*DATABASE_URL*", "*_DB_URL", "*_URI_SECRET*",
    "*CONNECTION_STRING*", "*_CONN_STR", "*COOKIE*", "*_SESSION_ID", "SSH_AUTH_SOCK", "SSH_AGENT_PID",
    "GPG_AGENT_INFO", "GNUPGHOME", "KUBECONFIG", "DOCKER_AUTH_CONFIG", "NETRC", "PGPASSFILE",
    "AWS_SHARED_CREDENTIALS_FILE",
)  # fmt: skip

_HOME_PARTS: tuple[tuple[str, ...], ...] = tuple(tuple(p.lower().split("/")) for p in SECRET_HOME_PATHS)


def homes() -> list[Path]:
    """The home directories whose secrets matter: ``$HOME`` (``Path.home()``) and the account's own."""
    found = [Path.home()]
    try:
        import pwd

        found.append(Path(pwd.getpwuid(os.getuid()).pw_dir))
    except (ImportError, KeyError):  # pragma: no cover - no passwd database (Windows, odd containers)
        pass
    return list(dict.fromkeys(Path(os.path.realpath(h)) for h in found))


def is_secret_name(name: str) -> bool:
    """Whether a file or directory name is a private key, credential or environment file."""
    lowered = name.lower()
    return (
        bool(lowered)
        and any(fnmatchcase(lowered, p) for p in SECRET_NAME_PATTERNS)
        and not any(fnmatchcase(lowered, p) for p in NOT_SECRET_NAME_PATTERNS)
    )


def is_secret_path(path: Path, home_dirs: Iterable[Path] | None = None) -> bool:
    """Whether an absolute, resolved path is, or lies in, a known credential location.

    ``home_dirs`` is accepted for callers that name homes; the home-relative locations are recognised
    below any directory (see the module doc), so it no longer narrows anything.
    """
    del home_dirs
    text = str(path)
    for pattern in (*SECRET_SYSTEM_PATHS, *SECRET_PROC_PATHS):
        if fnmatchcase(text, pattern) or text.startswith(pattern.rstrip("*") + "/"):
            return True
    parts = [part.lower() for part in path.parts]
    for end in range(1, len(parts) + 1):
        if is_secret_name(path.parts[end - 1]):
            return True
        for secret in _HOME_PARTS:
            if tuple(parts[max(0, end - len(secret)) : end]) == secret:
                return True
    return False


def path_deny_patterns() -> tuple[str, ...]:
    """The secrets as ``PathGuard`` glob patterns (a name at any depth; ``**/`` before multi-part ones)."""
    names = [*SECRET_NAME_PATTERNS, *("**/" + p if "/" in p else p for p in SECRET_HOME_PATHS)]
    return tuple(dict.fromkeys(names))


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
