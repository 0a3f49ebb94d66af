"""``SessionRecord`` and the ``SessionStore`` protocol (the rules are in ``_session_store``'s docstring)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from agcore._clock import now as clock_now
from agcore.memory._protocols import MemoryStoreError

__all__ = ["SessionRecord", "SessionStore"]


class SessionRecord(BaseModel):
    """A session's metadata and state (everything but its messages). Times are epoch seconds.

    ``usage`` and ``state`` must be JSON-able; ``message_count`` is what the store holds (set by
    ``load``/``list_sessions``; ignored when saving).
    """

    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(min_length=1)
    agent_name: str = ""
    created_at: float = Field(default_factory=clock_now)
    updated_at: float = Field(default_factory=clock_now)
    turn_index: int = Field(default=0, ge=0)
    usage: dict[str, Any] = Field(default_factory=dict)
    state: dict[str, Any] = Field(default_factory=dict)
    expires_at: float | None = None
    message_count: int = Field(default=0, ge=0)

    def expired(self, now: float | None = None) -> bool:
        """True when ``expires_at`` has passed."""
        return self.expires_at is not None and (clock_now() if now is None else now) >= self.expires_at


@runtime_checkable
class SessionStore(Protocol):
    """Durable sessions: a ``SessionRecord`` per session and its append-only messages (JSON texts).

    Every implementation writes all of an ``append_messages`` call or none of it (a killed process
    leaves a prefix of the history, never a torn message), swaps the whole history at once in
    ``replace_messages``, and raises ``MemoryStoreError`` saying what to do when the backend fails. A
    missing session is None from ``load`` and a ``MemoryStoreError`` from the writes. One process
    writes a given session at a time; reads are always safe.
    """

    async def create(self, record: SessionRecord) -> SessionRecord:
        """Store a new session with no messages; ``MemoryStoreError`` if the id is taken."""
        ...

    async def load(self, session_id: str) -> SessionRecord | None:
        """The session's record, or None if there is none."""
        ...

    async def load_messages(self, session_id: str) -> builtins.list[str]:
        """The session's messages (JSON texts) in order; empty if there are none."""
        ...

    async def save_state(self, record: SessionRecord) -> None:
        """Save the record's ``turn_index``, ``usage``, ``state``, ``expires_at`` (``updated_at``
        becomes now)."""
        ...

    async def append_messages(
        self, session_id: str, messages: Sequence[str], *, record: SessionRecord | None = None
    ) -> int:
        """Append ``messages`` after the stored ones, and save ``record`` like ``save_state``, in ONE
        transaction. Returns how many messages the session now holds."""
        ...

    async def replace_messages(
        self, session_id: str, messages: Sequence[str], *, record: SessionRecord | None = None
    ) -> int:
        """Replace the whole history (after compaction) and save ``record``, in one transaction."""
        ...

    async def list_sessions(
        self,
        *,
        agent_name: str | None = None,
        include_expired: bool = True,
        limit: int | None = None,
        offset: int = 0,
    ) -> builtins.list[SessionRecord]:
        """Records, most recently updated first, optionally for one agent and without expired ones."""
        ...

    async def delete(self, session_id: str) -> bool:
        """Remove the session and its messages; True if it existed."""
        ...


def _missing(session_id: str) -> MemoryStoreError:
    return MemoryStoreError(
        f"There is no session {session_id!r} in the session store: create it first "
        "(SessionStore.create), or check the id (it may have been deleted)."
    )


def _taken(session_id: str) -> MemoryStoreError:
    return MemoryStoreError(
        f"A session {session_id!r} already exists in the session store: load it to continue it "
        "(AgentSession.load), delete it, or use another id."
    )


def _check_record(session_id: str, record: SessionRecord | None) -> None:
    """A record saved along with ``session_id``'s messages must be that session's."""
    if record is not None and record.session_id != session_id:
        raise ValueError(f"record is for {record.session_id!r}, not {session_id!r}")


def _check_texts(messages: Sequence[str]) -> builtins.list[str]:
    texts = list(messages)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(
                f"message {i} is a {type(text).__name__}: the session store keeps JSON text, so pass "
                "str (e.g. AgentMessage.model_dump_json())"
            )
    return texts
