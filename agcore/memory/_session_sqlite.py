"""``SqliteSessionStore``: sessions in one SQLite file, shared by tasks, threads and processes."""

from __future__ import annotations

import builtins
import json
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio.to_thread

from agcore._clock import now as clock_now
from agcore.memory._protocols import MemoryStoreError
from agcore.memory._session_record import SessionRecord, _check_record, _check_texts, _missing, _taken

__all__ = ["SqliteSessionStore"]

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS agcore_sessions (
    session_id TEXT PRIMARY KEY,
    agent_name TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    turn_index INTEGER NOT NULL,
    usage TEXT NOT NULL,
    state TEXT NOT NULL,
    expires_at REAL
);
CREATE INDEX IF NOT EXISTS agcore_sessions_updated ON agcore_sessions (updated_at);
CREATE TABLE IF NOT EXISTS agcore_session_messages (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
"""

_COLUMNS = (
    "s.session_id, s.agent_name, s.created_at, s.updated_at, s.turn_index, s.usage, s.state, "
    "s.expires_at, (SELECT COUNT(*) FROM agcore_session_messages m WHERE m.session_id = s.session_id)"
)

# Seconds SQLite's own busy handler waits before handing a lock conflict to ``_retrying``.
_SQLITE_WAIT = 0.002


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    return getattr(exc, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or (
        "locked" in str(exc) or "busy" in str(exc)
    )


Synchronous = Literal["OFF", "NORMAL", "FULL", "EXTRA"]


def _row_record(row: tuple[Any, ...]) -> SessionRecord:
    sid, agent, created, updated, turn, usage, state, expires, count = row
    return SessionRecord(
        session_id=sid, agent_name=agent, created_at=created, updated_at=updated, turn_index=turn,
        usage=json.loads(usage), state=json.loads(state), expires_at=expires, message_count=count,
    )


class SqliteSessionStore:
    """A ``SessionStore`` in one SQLite file, shared safely by tasks, threads and processes.

    WAL mode lets readers run beside the one writer; ``busy_timeout`` (seconds) is how long a write
    waits for another connection's write before failing with ``MemoryStoreError``. Each call runs in
    a worker thread, so the event loop never blocks on the disk or a lock. ``synchronous="NORMAL"``
    (the default) keeps every committed write through a crash of the process; ``"FULL"`` also through
    a power cut, at an fsync per write. The tables (``agcore_sessions``,
    ``agcore_session_messages``) may share a file with other stores.

    The file is opened on first use; ``aclose()`` (or ``async with``) closes it.
    """

    def __init__(
        self, path: str | Path, *, busy_timeout: float = 10.0, synchronous: Synchronous = "NORMAL"
    ) -> None:
        if synchronous not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {synchronous!r}")
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self.synchronous = synchronous
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        # One connection per store, used by one worker thread at a time: sqlite3 objects are not
        # safe for concurrent use, and SQLite serialises writers anyway.
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SqliteSessionStore({str(self.path)!r})"

    async def __aenter__(self) -> SqliteSessionStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the file; the store cannot be used afterwards."""
        await anyio.to_thread.run_sync(self._close)

    def _close(self) -> None:
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -------------------------------------------------------------------------- plumbing

    def _connect(self) -> sqlite3.Connection:
        if self._closed:
            raise MemoryStoreError(f"{self!r} is closed: open a new SqliteSessionStore on the file.")
        if self._conn is None:
            conn = sqlite3.connect(
                self.path, timeout=_SQLITE_WAIT, isolation_level=None, check_same_thread=False
            )
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute(f"PRAGMA synchronous = {self.synchronous}")
                conn.executescript(_SCHEMA)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def _retrying(self, fn: Callable[[], _T]) -> _T:
        # SQLite's own busy handler sleeps in steps growing to 100 ms, so writers from several
        # processes queue behind long naps; short jittered retries here keep the file busy instead.
        deadline = time.monotonic() + self.busy_timeout  # noqa: TID251 (a real-time wait)
        nap = 0.0005
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or time.monotonic() >= deadline:  # noqa: TID251
                    raise
            time.sleep(random.uniform(0.0, nap))
            nap = min(nap * 2, 0.01)

    async def _run(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        def call() -> _T:
            with self._lock:
                try:
                    return self._retrying(lambda: fn(self._connect()))
                except sqlite3.Error as exc:
                    raise self._error(exc) from exc

        # Not abandoned on cancellation: a write that started finishes (or rolls back) before the
        # caller sees the cancellation, so the store never holds half of what a caller meant.
        return await anyio.to_thread.run_sync(call)

    def _error(self, exc: sqlite3.Error) -> MemoryStoreError:
        text = str(exc)
        if isinstance(exc, sqlite3.OperationalError) and _is_busy(exc):
            advice = (
                f"another connection held the write lock longer than busy_timeout ({self.busy_timeout:g}s); "
                "retry, or raise busy_timeout"
            )
        else:
            advice = "check that the file is a writable SQLite database and the disk has space"
        return MemoryStoreError(f"Session store {str(self.path)!r} failed: {text}. {advice}.")

    @staticmethod
    def _write(conn: sqlite3.Connection, body: Callable[[sqlite3.Connection], _T]) -> _T:
        # IMMEDIATE takes the write lock up front, so a concurrent writer waits (busy_timeout) here
        # instead of failing later when a read lock cannot be upgraded.
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = body(conn)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return result

    @staticmethod
    def _update_record(conn: sqlite3.Connection, record: SessionRecord) -> None:
        cursor = conn.execute(
            "UPDATE agcore_sessions SET turn_index = ?, usage = ?, state = ?, expires_at = ?, "
            "updated_at = ? WHERE session_id = ?",
            (record.turn_index, json.dumps(record.usage), json.dumps(record.state), record.expires_at,
             clock_now(), record.session_id),
        )
        if cursor.rowcount == 0:
            raise _missing(record.session_id)

    # ------------------------------------------------------------------------ operations

    async def create(self, record: SessionRecord) -> SessionRecord:
        """Store a new session with no messages. Raises ``MemoryStoreError`` if the id is taken."""
        def body(conn: sqlite3.Connection) -> None:
            try:
                conn.execute(
                    "INSERT INTO agcore_sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (record.session_id, record.agent_name, record.created_at, record.updated_at,
                     record.turn_index, json.dumps(record.usage), json.dumps(record.state),
                     record.expires_at),
                )
            except sqlite3.IntegrityError:
                raise _taken(record.session_id) from None

        await self._run(lambda conn: self._write(conn, body))
        return record.model_copy(update={"message_count": 0})

    async def load(self, session_id: str) -> SessionRecord | None:
        """The session's record (with ``message_count``), or None if there is none."""
        def read(conn: sqlite3.Connection) -> SessionRecord | None:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM agcore_sessions s WHERE s.session_id = ?", (session_id,)
            ).fetchone()
            return None if row is None else _row_record(row)

        return await self._run(read)

    async def load_messages(self, session_id: str) -> builtins.list[str]:
        """The session's messages (JSON texts) in order; empty if there are none."""
        def read(conn: sqlite3.Connection) -> builtins.list[str]:
            rows = conn.execute(
                "SELECT data FROM agcore_session_messages WHERE session_id = ? ORDER BY seq", (session_id,)
            ).fetchall()
            return [r[0] for r in rows]

        return await self._run(read)

    async def save_state(self, record: SessionRecord) -> None:
        """Save the record's ``turn_index``, ``usage``, ``state`` and ``expires_at`` (``updated_at``
        becomes now). Raises ``MemoryStoreError`` for a missing session."""
        await self._run(lambda conn: self._write(conn, lambda c: self._update_record(c, record)))

    async def append_messages(
        self, session_id: str, messages: Sequence[str], *, record: SessionRecord | None = None
    ) -> int:
        """Append ``messages`` and save ``record`` in one transaction; how many messages the session now
        holds. Raises ``MemoryStoreError`` for a missing session and ``ValueError`` when ``record`` is
        another session's."""
        texts = _check_texts(messages)
        _check_record(session_id, record)

        def body(conn: sqlite3.Connection) -> int:
            self._touch(conn, session_id, record)
            (last,) = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM agcore_session_messages WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            conn.executemany(
                "INSERT INTO agcore_session_messages (session_id, seq, data) VALUES (?, ?, ?)",
                [(session_id, last + i, text) for i, text in enumerate(texts, 1)],
            )
            return int(last) + len(texts)

        return await self._run(lambda conn: self._write(conn, body))

    def _touch(self, conn: sqlite3.Connection, session_id: str, record: SessionRecord | None) -> None:
        """Before writing messages: save ``record`` with them, or at least mark the session updated."""
        if record is not None:
            self._update_record(conn, record)
        elif conn.execute(
            "UPDATE agcore_sessions SET updated_at = ? WHERE session_id = ?", (clock_now(), session_id)
        ).rowcount == 0:
            raise _missing(session_id)

    async def replace_messages(
        self, session_id: str, messages: Sequence[str], *, record: SessionRecord | None = None
    ) -> int:
        """Replace the whole history (numbered from 1 again) and save ``record``, in one transaction; how
        many messages it now holds."""
        texts = _check_texts(messages)
        _check_record(session_id, record)

        def body(conn: sqlite3.Connection) -> int:
            self._touch(conn, session_id, record)
            conn.execute("DELETE FROM agcore_session_messages WHERE session_id = ?", (session_id,))
            conn.executemany(
                "INSERT INTO agcore_session_messages (session_id, seq, data) VALUES (?, ?, ?)",
                [(session_id, i, text) for i, text in enumerate(texts, 1)],
            )
            return len(texts)

        return await self._run(lambda conn: self._write(conn, body))

    async def list_sessions(
        self,
        *,
        agent_name: str | None = None,
        include_expired: bool = True,
        limit: int | None = None,
        offset: int = 0,
    ) -> builtins.list[SessionRecord]:
        """Records, most recently updated first, optionally one agent's and without expired ones, a page
        of ``limit`` from ``offset``."""
        where: builtins.list[str] = []
        params: builtins.list[Any] = []
        if agent_name is not None:
            where.append("s.agent_name = ?")
            params.append(agent_name)
        if not include_expired:
            where.append("(s.expires_at IS NULL OR s.expires_at > ?)")
            params.append(clock_now())
        sql = f"SELECT {_COLUMNS} FROM agcore_sessions s"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY s.updated_at DESC, s.session_id LIMIT ? OFFSET ?"
        params += [-1 if limit is None else limit, offset]

        def read(conn: sqlite3.Connection) -> builtins.list[SessionRecord]:
            return [_row_record(r) for r in conn.execute(sql, params).fetchall()]

        return await self._run(read)

    async def delete(self, session_id: str) -> bool:
        """Remove the session and its messages; True if it existed."""
        def body(conn: sqlite3.Connection) -> bool:
            conn.execute("DELETE FROM agcore_session_messages WHERE session_id = ?", (session_id,))
            cursor = conn.execute("DELETE FROM agcore_sessions WHERE session_id = ?", (session_id,))
            return cursor.rowcount > 0

        return await self._run(lambda conn: self._write(conn, body))
