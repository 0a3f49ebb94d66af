"""One process at a time on a saved session: a second ``chat --session ID`` or ``plan resume ID``
while the first runs is refused, on either backend. Both would load the same history and each write
its own continuation over the other's (the store keeps the last save; LangGraph's thread forks).

The lock is an ``flock`` on a file beside the session store (``sessions.locks/ID.lock``, holding the
owner's pid for the message): the kernel releases it when its process ends, however it ends, so a
lock left by a killed process is stale at once and the next command takes it. The file is removed
on a clean exit. Where ``fcntl`` does not exist (Windows) sessions are not locked.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from pathlib import Path
from types import TracebackType
from typing import IO

from agcore.cli._errors import CliError, ExitCode
from agcore.cli._store import default_db_path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["SessionLocks", "lock_path"]

_PLAIN_ID = re.compile(r"[A-Za-z0-9_.-]{1,100}")


def lock_path(db: Path | None, session_id: str) -> Path:
    """The lock file of ``session_id`` beside the session store ``db`` (and so beside the LangGraph
    checkpoints, which ``--db`` moves too)."""
    store = db or default_db_path()
    name = session_id if _PLAIN_ID.fullmatch(session_id) and not session_id.startswith(".") else (
        hashlib.sha256(session_id.encode()).hexdigest()[:32])
    return store.with_name(f"{store.stem}.locks") / f"{name}.lock"


class SessionLocks:
    """The sessions this process runs, locked until the ``with`` block ends."""

    def __init__(self, db: Path | None) -> None:
        self.db = db
        self._held: dict[str, tuple[Path, IO[str]]] = {}

    def __enter__(self) -> SessionLocks:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        for path, file in self._held.values():
            with contextlib.suppress(OSError):
                path.unlink()  # while still locked: a process waiting on it re-opens the path
            file.close()
        self._held.clear()

    def take(self, session_id: str) -> None:
        """Lock ``session_id`` for this process (again: nothing to do); a ``CliError`` naming the
        process that holds it."""
        if fcntl is None or session_id in self._held:
            return
        path = lock_path(self.db, session_id)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            file = _locked(path)
        except OSError as exc:
            raise CliError(f"Cannot lock session {session_id!r} ({path}): {exc}", ExitCode.CONFIG) from None
        if file is None:
            raise CliError(
                f"Session {session_id!r} is in use by another agcore process{_owner(path)}: two at once "
                "would each write its own continuation over the other's. Wait for it to end (or stop "
                "it), then run this again.", ExitCode.USAGE)
        file.seek(0)
        file.truncate()
        file.write(f"{os.getpid()}\n")
        file.flush()
        self._held[session_id] = (path, file)


def _locked(path: Path) -> IO[str] | None:
    """``path`` opened and locked by this process; None when another process holds it. A file its
    owner removed as we opened it is opened again (the lock on it would guard nothing)."""
    assert fcntl is not None
    while True:
        file = path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            file.close()
            return None
        try:
            same = os.stat(path).st_ino == os.fstat(file.fileno()).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return file
        file.close()


def _owner(path: Path) -> str:
    try:
        pid = path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""
