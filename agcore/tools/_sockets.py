"""Unix sockets inside the workspace, which the sandbox masks (tryout finding 7).

A network namespace cuts network sockets, not filesystem ones: a host process listening on a socket
file inside the workspace (a dev server, a database, a forwarded agent) would take connections from
a sandboxed command, and a read-only mount does not stop ``connect()``. Mounting ``/dev/null`` over
each such socket does: a connect then finds no socket there. This module finds them.

Walking a large tree before every command would cost tens of milliseconds, so ``SocketScan`` keeps
what it saw per directory and lists again only directories whose modification time changed (making a
socket adds a directory entry, which changes it) or was too recent to trust: file system timestamps
are coarse (a few milliseconds), so a directory changed in the same tick as the last look is listed
again next time. Sockets a host process creates *while* a command runs are not masked for that
command (docs/tools.md says so).
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SocketScan"]

_TRUST_AFTER_NS = 2_000_000_000  # a directory mtime older than this (vs the scan's start) is settled


@dataclass(slots=True)
class _Directory:
    mtime_ns: int
    sockets: list[str] = field(default_factory=list)
    children: list[str] = field(default_factory=list)


class SocketScan:
    """The Unix sockets below ``root``, found incrementally (see the module doc)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._seen: dict[str, _Directory] = {}

    def sockets(self) -> list[Path]:
        """Every socket file below the root now (symlinks are not followed)."""
        # Wall-clock time compared with file system timestamps: not an id or a time agcore records,
        # so not agcore._clock (a replay clock there would make every directory look settled).
        started = time.clock_gettime_ns(time.CLOCK_REALTIME)
        found: list[Path] = []
        seen: dict[str, _Directory] = {}
        pending = [str(self.root)]
        while pending:
            path = pending.pop()
            try:
                mtime = os.lstat(path).st_mtime_ns
            except OSError:
                continue
            known = self._seen.get(path)
            if known is None or known.mtime_ns != mtime or started - mtime < _TRUST_AFTER_NS:
                known = _list(path, mtime)
            seen[path] = known
            found.extend(Path(path, name) for name in known.sockets)
            pending.extend(os.path.join(path, child) for child in known.children)
        self._seen = seen
        return sorted(found)


def _list(path: str, mtime: int) -> _Directory:
    entry = _Directory(mtime)
    try:
        with os.scandir(path) as entries:
            for item in entries:
                try:
                    if item.is_dir(follow_symlinks=False):
                        entry.children.append(item.name)
                    elif (
                        not item.is_file(follow_symlinks=False)
                        and not item.is_symlink()
                        and stat.S_ISSOCK(item.stat(follow_symlinks=False).st_mode)
                    ):
                        entry.sockets.append(item.name)
                except OSError:
                    continue
    except OSError:
        pass
    return entry
