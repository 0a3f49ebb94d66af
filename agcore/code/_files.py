"""Which files of a workspace are source code, and their stamps (modification time and size).

A file is re-read only when its stamp changes: the repo map and the code index both key their
caches on it. Directories that hold no project code (VCS data, virtual environments, caches,
``node_modules``) and hidden directories are never entered; files larger than ``max_bytes`` are left
out (generated bundles and data files are not code a model should read symbol by symbol).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_EXCLUDED_DIRS", "FileStamp", "scan_sources"]

DEFAULT_EXCLUDED_DIRS: frozenset[str] = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", "env", "node_modules", "__pycache__", "build", "dist",
    "target", "site", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox",
})
DEFAULT_MAX_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What says a file changed: its modification time (ns) and size."""

    mtime_ns: int
    size: int


def scan_sources(
    root: Path,
    extensions: Iterable[str],
    *,
    excluded_dirs: frozenset[str] = DEFAULT_EXCLUDED_DIRS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> dict[str, FileStamp]:
    """Every file under ``root`` whose suffix is in ``extensions``, by POSIX path relative to
    ``root``, sorted, with its stamp. Files that vanish while scanning are skipped."""
    wanted = frozenset(e.lower() for e in extensions)
    found: dict[str, FileStamp] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in excluded_dirs and not d.startswith("."))
        for name in filenames:
            if os.path.splitext(name)[1].lower() not in wanted:
                continue
            full = os.path.join(dirpath, name)
            try:
                stat = os.stat(full)
            except OSError:
                continue
            if stat.st_size > max_bytes:
                continue
            relative = Path(full).relative_to(root).as_posix()
            found[relative] = FileStamp(stat.st_mtime_ns, stat.st_size)
    return dict(sorted(found.items()))
