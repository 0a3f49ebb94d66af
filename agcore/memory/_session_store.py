"""``SessionStore``: where a conversation lives between processes.

The store, not the process, is the source of truth for a session: a process rebuilds the session
from it, runs a turn, and writes each message as it is recorded. A session is two things:

* a ``SessionRecord``: who and when (``session_id``, ``agent_name``, ``created_at``,
  ``updated_at``, ``expires_at``), the ``turn_index``, the ``usage`` (a cost tracker as JSON), and
  ``state``, a JSON dict the agent layer fills with whatever else must survive (client calls a
  paused turn waits for, queued steering/follow-up input, plan progress, application data);
* an append-only list of messages, each a JSON text, numbered ``seq`` 1, 2, 3... in order.

This layer only sees JSON: ``agcore.agent`` turns ``AgentMessage`` s into JSON and back.

Rules every implementation follows:

* ``append_messages`` writes all of its messages (and the record, when given) or none of them, so a
  process killed at any moment leaves a prefix of the history it recorded, never a torn message;
* ``replace_messages`` swaps the whole history at once (compaction), numbering it again from 1;
* one process writes a session at a time (several sessions may be written by several processes
  and tasks at once); reads are always safe;
* failures of the backend raise ``MemoryStoreError`` saying what to do; a missing session is
  ``None`` from ``load`` and a ``MemoryStoreError`` from the writes.

``SqliteSessionStore`` (``_session_sqlite``) is the default: one file, WAL mode, a busy timeout so
that several processes can share it, and every blocking call in a worker thread.
``InMemorySessionStore`` (here) is for tests. ``SessionRecord`` and the protocol live in
``_session_record``; this module is where all four are imported from.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence

from agcore._clock import now as clock_now
from agcore.memory._session_record import (
    SessionRecord,
    SessionStore,
    _check_record,
    _check_texts,
    _missing,
    _taken,
)
from agcore.memory._session_sqlite import SqliteSessionStore

__all__ = ["InMemorySessionStore", "SessionRecord", "SessionStore", "SqliteSessionStore"]


# ------------------------------------------------------------------------------ in memory


class InMemorySessionStore:
    """A ``SessionStore`` in a dict: for tests and scripts; nothing outlives the process."""

    def __init__(self) -> None:
        self._records: dict[str, SessionRecord] = {}
        self._messages: dict[str, builtins.list[str]] = {}

    def __repr__(self) -> str:
        return f"InMemorySessionStore({len(self._records)} sessions)"

    def _out(self, session_id: str) -> SessionRecord:
        record = self._records[session_id]
        return record.model_copy(
            update={"message_count": len(self._messages[session_id])}, deep=True
        )

    async def create(self, record: SessionRecord) -> SessionRecord:
        """Store a new session with no messages. Raises ``MemoryStoreError`` if the id is taken."""
        if record.session_id in self._records:
            raise _taken(record.session_id)
        stored = record.model_copy(update={"message_count": 0}, deep=True)
        self._records[record.session_id] = stored
        self._messages[record.session_id] = []
        return self._out(record.session_id)

    async def load(self, session_id: str) -> SessionRecord | None:
        """A copy of the session's record, or None if there is none."""
        return self._out(session_id) if session_id in self._records else None

    async def load_messages(self, session_id: str) -> builtins.list[str]:
        """The session's messages (JSON texts) in order; empty if there are none."""
        return list(self._messages.get(session_id, ()))

    def _save(self, record: SessionRecord) -> None:
        current = self._records.get(record.session_id)
        if current is None:
            raise _missing(record.session_id)
        self._records[record.session_id] = current.model_copy(
            update={
                "turn_index": record.turn_index,
                "usage": json.loads(json.dumps(record.usage)),
                "state": json.loads(json.dumps(record.state)),
                "expires_at": record.expires_at,
                "updated_at": clock_now(),
            }
        )

    async def save_state(self, record: SessionRecord) -> None:
        """Save the record's state (``updated_at`` becomes now). Raises ``MemoryStoreError`` for a
        missing session."""
        self._save(record)

    async def append_messages(
        self, session_id: str, messages: Sequence[str], *, record: SessionRecord | None = None
    ) -> int:
        """Append ``messages`` (and save ``record``); how many messages the session now holds. Raises
        ``MemoryStoreError`` for a missing session."""
        texts = _check_texts(messages)
        _check_record(session_id, record)
        if session_id not in self._records:
            raise _missing(session_id)
        if record is not None:
            self._save(record)
        else:
            self._records[session_id].updated_at = clock_now()
        self._messages[session_id].extend(texts)
        return len(self._messages[session_id])

    async def replace_messages(
        self, session_id: str, messages: Sequence[str], *, record: SessionRecord | None = None
    ) -> int:
        """Replace the whole history and save ``record``; how many messages it now holds."""
        texts = _check_texts(messages)
        _check_record(session_id, record)
        if session_id not in self._records:
            raise _missing(session_id)
        if record is not None:
            self._save(record)
        self._messages[session_id] = texts
        return len(texts)

    async def list_sessions(
        self,
        *,
        agent_name: str | None = None,
        include_expired: bool = True,
        limit: int | None = None,
        offset: int = 0,
    ) -> builtins.list[SessionRecord]:
        """Records, most recently updated first, optionally one agent's and without expired ones."""
        now = clock_now()
        found = [
            self._out(sid) for sid, r in self._records.items()
            if (agent_name is None or r.agent_name == agent_name) and (include_expired or not r.expired(now))
        ]
        found.sort(key=lambda r: (-r.updated_at, r.session_id))
        return found[offset : None if limit is None else offset + limit]

    async def delete(self, session_id: str) -> bool:
        """Remove the session and its messages; True if it existed."""
        self._messages.pop(session_id, None)
        return self._records.pop(session_id, None) is not None
