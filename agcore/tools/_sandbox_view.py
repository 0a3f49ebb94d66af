"""What a sandboxed command can read: the workspace, the system's programs and libraries, the Python
agcore runs from, and nothing else of the user's.

bubblewrap starts from an empty root; this module lists what is mounted into it, read-only unless
said otherwise:

- the system: ``/usr``, ``/bin``, ``/sbin``, ``/lib*`` (symlinks stay symlinks on merged-/usr
  systems), ``/etc`` (its credential files hidden by the sandbox, see ``_secrets``), ``/opt``
  (software installed for every user: toolchains, not anyone's data), ``/sys``;
- the Python installation agcore runs from and its virtualenv, and the environments and toolchains
  the command's environment names (``VIRTUAL_ENV``, ``CONDA_PREFIX``, ``JAVA_HOME``, ``GOROOT``,
  ``CARGO_HOME``, ``RUSTUP_HOME``);
- the directories on ``PATH``: the system's, and for one inside a home directory the tool directory
  holding it (``~/.pyenv`` for ``~/.pyenv/shims``, ``~/.cargo`` for ``~/.cargo/bin``), since a shim
  or proxy there runs what lies beside it; never a home directory itself;
- what the user adds (``readable=[...]``, ``--readable PATH``, ``$AGCORE_READABLE``);
- the workspace and the command's private ``HOME``, writable.

Everything else is absent, not merely read-only: the home directories (``/home/*``, ``/root``), other
projects, ``/var`` (``/var/tmp`` included), ``/run`` (service sockets), ``/mnt``, ``/media``, ``/srv``.
``/etc/resolv.conf`` is followed to its real file when it points elsewhere (``/run/systemd/...``), so
name resolution works when the network is allowed.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agcore.tools._secrets import homes

__all__ = ["SYSTEM_DIRS", "TOOLCHAIN_VARIABLES", "SandboxView", "system_mounts"]

SYSTEM_DIRS: tuple[str, ...] = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys",
)  # fmt: skip
TOOLCHAIN_VARIABLES: tuple[str, ...] = (
    "VIRTUAL_ENV", "CONDA_PREFIX", "JAVA_HOME", "GOROOT", "CARGO_HOME", "RUSTUP_HOME",
)  # fmt: skip


@functools.cache
def system_mounts() -> tuple[str, ...]:
    """bwrap arguments for the system directories that exist here (computed once per process)."""
    args: list[str] = []
    for directory in SYSTEM_DIRS:
        if os.path.islink(directory):
            args += ["--symlink", os.readlink(directory), directory]
        elif os.path.isdir(directory):
            args += ["--ro-bind", directory, directory]
    resolv = os.path.realpath("/etc/resolv.conf")
    if os.path.exists(resolv) and not _under(Path(resolv), [Path(d) for d in SYSTEM_DIRS]):
        args += ["--ro-bind", resolv, resolv]
    return tuple(args)


def python_installation() -> tuple[Path, ...]:
    """The directories of the Python running agcore: its environment and the installation behind it."""
    found: list[Path] = []
    interpreter = os.path.dirname(os.path.realpath(sys.executable))
    for raw in (sys.prefix, sys.base_prefix, sys.exec_prefix, interpreter):
        path = Path(os.path.realpath(raw))
        if path.is_dir() and not any(path.is_relative_to(seen) for seen in found):
            found.append(path)
    return tuple(found)


@dataclass(frozen=True, slots=True)
class SandboxView:
    """The read-only trees a command sees besides the system: ``readable`` (the user's) and what the
    environment and PATH name; ``paths`` resolves them for one command's environment."""

    readable: tuple[Path, ...] = ()

    def paths(self, env: Mapping[str, str], workspace: Path) -> list[Path]:
        """The extra read-only directories for a command with environment ``env``, outermost first,
        without any that another covers or that lies inside the workspace."""
        wanted: list[Path] = [*python_installation(), *self.readable]
        wanted += [Path(env[name]) for name in TOOLCHAIN_VARIABLES if env.get(name)]
        wanted += _path_directories(env.get("PATH", ""))
        return _outermost(wanted, workspace)


def _path_directories(search_path: str) -> list[Path]:
    """PATH's directories outside the system ones: as they are, or, inside a home directory, the
    home's child that holds them (a shim in ``~/.pyenv/shims`` runs ``~/.pyenv/libexec/pyenv``)."""
    system = [Path(d) for d in SYSTEM_DIRS]
    user_homes = homes()
    found: list[Path] = []
    for entry in search_path.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        path = Path(os.path.realpath(entry))
        if _under(path, system) or not path.is_dir():
            continue
        home = next((h for h in user_homes if path.is_relative_to(h)), None)
        if home is not None:
            if path == home:
                continue  # the home directory itself is never shown
            path = home / path.relative_to(home).parts[0]
        found.append(path)
    return found


def _outermost(paths: Iterable[Path], workspace: Path) -> list[Path]:
    existing = [Path(os.path.realpath(p)) for p in paths if os.path.isabs(p)]
    existing = [p for p in dict.fromkeys(existing) if p.exists() and p != Path("/")]
    kept = [p for p in existing if not p.is_relative_to(workspace)]
    kept = [p for p in kept if not any(p != q and p.is_relative_to(q) for q in kept)]
    return sorted(kept, key=lambda p: len(p.parts))


def _under(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)
