"""The environment a command gets: built from an allow-list, never copied and scrubbed.

Only the variables named in ``DEFAULT_ENV_ALLOW`` (the search path, locale and terminal settings,
what interpreters and compilers read) and those the user names (``Workspace(env_allow=[...])``,
``agcore run --env NAME``, ``$AGCORE_ENV_ALLOW``) pass; everything else is dropped whatever its name,
so a secret named like nothing on a deny-list (``SECRET_KEY_BASE``, ``STRIPE_LIVE``) never reaches a
command. ``HOME`` points at a private, empty directory of the workspace's own (the user's dotfiles,
caches and credential stores stay out of reach), ``TMPDIR`` at the sandbox's private ``/tmp``.

The secret-looking name patterns (``_secrets.SECRET_ENV_PATTERNS``) and URLs with a password in a
value still matter twice: a default name whose variable looks secret is dropped (``PYTHON_API_KEY``
matches ``PYTHON*`` but is not a Python setting), and a name the user allow-lists that looks secret
passes with a warning in the log, once per name and workspace, since the user asked for it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from agcore.tools._secrets import SECRET_ENV_PATTERNS

__all__ = [
    "DEFAULT_ENV_ALLOW", "ENV_ALLOW_VAR", "SECRET_ENV_PATTERNS", "CommandEnvironment",
    "env_allow_from_environment", "looks_secret", "make_private_home", "scrub_environment",
    "write_git_identity",
]  # fmt: skip

ENV_ALLOW_VAR = "AGCORE_ENV_ALLOW"  # names (or globs) to pass, separated by commas, spaces or colons

# Case-sensitive names or globs, as programs read them.
DEFAULT_ENV_ALLOW: tuple[str, ...] = (
    # where programs are, who and where the user is (HOME, PWD and TMPDIR are set, not copied)
    "PATH", "USER", "LOGNAME", "SHELL", "TZ",
    # locale and terminal
    "LANG", "LANGUAGE", "LC_*", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
    "COLUMNS", "LINES",
    # Python: the active environment and interpreter settings
    "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYTHON*",
    # compilers, build tools and other toolchains
    "CC", "CXX", "CPP", "LD", "AR", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "MAKEFLAGS",
    "PKG_CONFIG_PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
    "JAVA_HOME", "GOROOT", "GOPATH", "GOFLAGS", "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN",
    "NODE_PATH", "SOURCE_DATE_EPOCH",
    # certificates and proxies (network stays off unless allowed; a proxy URL with a password drops)
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
    "CI", "DEBIAN_FRONTEND",
)  # fmt: skip
# Toolchains that find themselves through HOME: with HOME private, they are named explicitly (when the
# user's real home has them and the variable is unset), and the sandbox shows them read-only.
_TOOL_HOMES: tuple[tuple[str, str], ...] = (("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup"))
# A value holding a URL with a password (postgres://user:secret@host/db) is a secret whatever its name.
_URL_WITH_PASSWORD = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@", re.IGNORECASE)
_log = logging.getLogger("agcore.tools.workspace")


def looks_secret(name: str, value: str) -> bool:
    """Whether a variable's name matches a secret pattern or its value is a URL with a password."""
    upper = name.upper()
    return any(fnmatchcase(upper, p) for p in SECRET_ENV_PATTERNS) or bool(_URL_WITH_PASSWORD.search(value))


def env_allow_from_environment() -> tuple[str, ...]:
    """The names in ``$AGCORE_ENV_ALLOW`` (commas, whitespace or colons between them)."""
    return tuple(n for n in re.split(r"[,:\s]+", os.environ.get(ENV_ALLOW_VAR, "")) if n)


@dataclass(frozen=True, slots=True)
class CommandEnvironment:
    """Builds a command's environment from ``allow`` (the user's names or globs, case-insensitive,
    passed whatever they look like) on top of ``DEFAULT_ENV_ALLOW``, plus ``extra`` (set as given)."""

    allow: tuple[str, ...] = ()
    extra: tuple[tuple[str, str], ...] = ()
    warned: set[str] = field(default_factory=set, compare=False)  # said once per name, per workspace

    def build(self, environ: Mapping[str, str], *, home: str, tmpdir: str | None, cwd: str) -> dict[str, str]:
        env: dict[str, str] = {}
        for name, value in environ.items():
            if _matches(name.upper(), (a.upper() for a in self.allow)):
                if looks_secret(name, value) and name not in self.warned:
                    self.warned.add(name)
                    _warn(name)
                env[name] = value
            elif _matches(name, DEFAULT_ENV_ALLOW) and not looks_secret(name, value):
                env[name] = value
        env.setdefault("PATH", os.defpath)
        real_home = environ.get("HOME")
        for variable, directory in _TOOL_HOMES if real_home else ():
            if variable not in env and os.path.isdir(os.path.join(real_home or "", directory)):
                env[variable] = os.path.join(real_home or "", directory)
        env.setdefault("PYTHONUNBUFFERED", "1")  # so a killed Python process still shows its output
        env["HOME"] = home
        if tmpdir is not None:
            env["TMPDIR"] = tmpdir
        env.update(self.extra)
        env["PWD"] = cwd
        return env


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatchcase(name, p) for p in patterns)


def _warn(name: str) -> None:
    _log.warning(
            "the environment variable %s looks like a secret and is passed to commands because it is "
        "allow-listed (env_allow / --env / %s); commands, and through them the model, can read it",
        name,
        ENV_ALLOW_VAR,
    )


def scrub_environment(
    environ: Mapping[str, str], allow: Iterable[str] = (), patterns: Iterable[str] = SECRET_ENV_PATTERNS
) -> dict[str, str]:
    """``environ`` without the variables whose names look like secrets or whose values are URLs with a
    password, except those in ``allow`` (names or glob patterns, case-insensitive).

    A deny-list, kept for callers that filter an environment of their own: commands run by a
    ``Workspace`` get ``CommandEnvironment``'s allow-list instead, which drops what no pattern names."""
    allowed = [a.upper() for a in allow]
    secret = [p.upper() for p in patterns]
    kept: dict[str, str] = {}
    for name, value in environ.items():
        upper = name.upper()
        secret_looking = any(fnmatchcase(upper, p) for p in secret) or _URL_WITH_PASSWORD.search(value)
        if secret_looking and not any(fnmatchcase(upper, a) for a in allowed):
            continue
        kept[name] = value
    return kept


def write_git_identity(home: Path) -> None:
    """Give a private home the user's git identity (``user.name``, ``user.email``) and nothing else of
    their git configuration (aliases, credential helpers, hooks paths stay out)."""
    git = shutil.which("git")
    if git is None:
        return
    lines: list[str] = []
    for key in ("name", "email"):
        try:
            done = subprocess.run(
                [git, "config", "--global", "--get", f"user.{key}"],
                capture_output=True, text=True, timeout=5, check=False,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            return
        value = done.stdout.strip()
        if done.returncode == 0 and value and "\n" not in value:
            lines.append(f"\t{key} = {json.dumps(value, ensure_ascii=False)}")
    if lines:
        (home / ".gitconfig").write_text("[user]\n" + "\n".join(lines) + "\n", encoding="utf-8")


def make_private_home(owner: object) -> Path:
    """A fresh directory to be a command's ``HOME``, holding only the user's git identity, removed
    when ``owner`` is garbage-collected or the process exits."""
    home = Path(tempfile.mkdtemp(prefix="agcore-home-"))
    weakref.finalize(owner, shutil.rmtree, home, ignore_errors=True)
    write_git_identity(home)
    return Path(os.path.realpath(home))
