"""Sessions that survive the process: an ``AgentSession`` written to a ``SessionStore`` as it runs.

``AgentSession(agent, id, bundle, store=store)`` writes every message the moment the loop records it,
together with the session's state, in one store transaction; ``await AgentSession.load(store, id,
agent, bundle)`` rebuilds the session in any process, and ``await session.save()`` writes whatever
changed since (queued input, ``app_state``). The store is the source of truth: a process can die at
any moment and the next one loads a prefix of the history it recorded, never a torn message.

The record's ``state`` is the session's ``SessionState`` (``session.state.to_json()``): queued
steering and follow-up input, the tools approved "always", the plan step index, the last model used,
whether the session switched to text-mode tool calls, ``session.app_state`` (plan progress and
application data, JSON-able), and, while a turn is paused for client tools, that turn: its calls, the
server results it already has, the steering it set aside, and its counters, so that
``resume(results)`` works in the new process.

On load, a history whose last reply has calls without results (the process died while they ran) gets
"interrupted" error results for them, and that repair is saved at once, so the history is valid for
every provider and the next turn; a paused turn's client calls stay open for ``resume``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
from pydantic import ValidationError

from agcore._clock import monotonic
from agcore.agent._batch import answer_open_calls, unanswered_calls
from agcore.agent._cost import CostTracker
from agcore.agent._messages import AgentMessage, messages_from_json
from agcore.agent.session_like import SessionLike
from agcore.agent.session_state import STATE_VERSION, SessionState
from agcore.memory import MemoryStoreError, SessionRecord, SessionStore

if TYPE_CHECKING:
    from agcore.agent._agent_protocol import Agent
    from agcore.agent._bundle import RuntimeBundle

__all__ = ["INTERRUPTED", "SessionPersistence", "load_session", "session_record"]

_log = logging.getLogger("agcore.agent")

#: How often, at most, a tool's progress lines are saved while it runs (they are always saved with
#: the batch's results). A line lost in a crash costs nothing a resume needs: the model never sees it.
PROGRESS_SAVE_INTERVAL = 1.0

INTERRUPTED = (
    "Interrupted: the process running this session stopped before this call finished, so whether it "
    "took effect is unknown. Check the current state before trying it again."
)


class _Stored(SessionLike, Protocol):
    """A session whose saving this module keeps (``AgentSession``)."""

    _persistence: SessionPersistence | None


_S = TypeVar("_S", bound=_Stored)


class SessionPersistence:
    """Keeps one session's copy in ``store`` up to date; ``saved`` messages of the session are in it.

    Messages are only ever appended to ``session.messages`` by the loop, so a flush writes the ones
    past ``saved``. A history rewritten in place (compaction) is noticed (shorter, or another message
    where the last saved one was) and written whole with ``replace_messages``.
    """

    def __init__(
        self, store: SessionStore, *, saved: int = 0, last_id: str | None = None, created: bool = False
    ) -> None:
        self.store = store
        self.saved = saved
        self.last_id = last_id
        self.created = created
        self._lock = anyio.Lock()
        self._saved_at = monotonic()

    def progress_due(self) -> bool:
        """Whether progress lines recorded since the last save should be saved now."""
        return monotonic() - self._saved_at >= PROGRESS_SAVE_INTERVAL

    def _diverged(self, messages: Sequence[AgentMessage]) -> bool:
        if self.saved == 0:
            return False
        return len(messages) < self.saved or messages[self.saved - 1].id != self.last_id

    async def flush(self, session: SessionLike, *, replace: bool = False) -> None:
        """Write the unsaved messages and the current state in one transaction."""
        # Shielded: a write that reached the store must be counted, or the next flush would write
        # its messages again; the cancellation lands right after (a SQLite write cannot be
        # abandoned mid-way anyway).
        async with self._lock:  # save() from another task may race the loop
            with anyio.CancelScope(shield=True):
                await self._write(session, replace)

    async def _write(self, session: SessionLike, replace: bool) -> None:
        store = self.store
        if not self.created:
            await store.create(session_record(session))
            self.created = True
        # Record and message count are taken at the same instant: the state always describes
        # exactly the messages written with it.
        record = session_record(session)
        messages = session.messages
        count = len(messages)
        if replace or self._diverged(messages):
            texts = [m.model_dump_json() for m in messages[:count]]
            await store.replace_messages(session.session_id, texts, record=record)
        else:
            texts = [m.model_dump_json() for m in messages[self.saved : count]]
            await store.append_messages(session.session_id, texts, record=record)
        self.saved = count
        self.last_id = messages[count - 1].id if count else None
        self._saved_at = monotonic()


# ------------------------------------------------------------------------------- saving


def session_record(session: SessionLike) -> SessionRecord:
    """The session's record as the store keeps it (messages apart)."""
    ttl = session.bundle.config().session_ttl
    return SessionRecord(
        session_id=session.session_id,
        agent_name=session.agent.name,
        created_at=session.created_at,
        turn_index=session.turn_index,
        usage=session.usage.model_dump(mode="json"),
        state=session.state.to_json(),
        expires_at=session.created_at + ttl if ttl is not None else None,
    )


# ------------------------------------------------------------------------------ loading


def _decode(session_id: str, texts: list[str]) -> list[AgentMessage]:
    if not texts:
        return []
    try:
        return messages_from_json("[" + ",".join(texts) + "]")
    except ValidationError as exc:
        raise MemoryStoreError(
            f"Session {session_id!r} holds a message that is not a valid AgentMessage ({exc.errors()[0]}); "
            "it was written by an incompatible version or edited by hand. Fix or delete that row."
        ) from exc


def _restore_state(session: SessionLike, data: dict[str, Any]) -> bool:
    """Put the saved state on ``session``; whether a turn paused for client tools was put back (only
    while the history still ends with its calls unanswered: otherwise what happened after the state
    was written superseded the pause)."""
    version = data.get("version", STATE_VERSION)
    if version > STATE_VERSION:
        raise MemoryStoreError(
            f"Session {session.session_id!r} was saved by a newer agcore (state version {version}, this "
            f"one reads {STATE_VERSION}): upgrade agcore to load it."
        )
    state = SessionState.from_json(data, len(session.messages), created_at=session.created_at)
    state.created_at, state.turn_index = session.created_at, session.turn_index  # the record's own
    # A process that loads a session starts it for its hooks: what the last one opened is gone.
    state.started = False
    turn = state.turn
    if turn is not None and (turn.batch is None or [c.id for c in unanswered_calls(session.messages)]
                             != [c.id for c in turn.batch.calls]):
        state.turn = None
    session.state = state
    return state.turn is not None


async def load_session(
    cls: Callable[..., _S],
    store: SessionStore,
    session_id: str,
    agent: Agent,
    bundle: RuntimeBundle,
    **kwargs: Any,
) -> _S:
    """``AgentSession.load``: see its docstring."""
    record = await store.load(session_id)
    if record is None:
        raise LookupError(
            f"There is no session {session_id!r} in {store!r}: check the id, or start a new session "
            "with AgentSession(agent, session_id, bundle, store=store)."
        )
    # The record is read before the messages: messages are written before the state that refers to
    # them, so this order never pairs a state with a history that lacks its messages.
    messages = _decode(session_id, await store.load_messages(session_id))
    session = cls(agent, session_id, bundle, messages=messages, **kwargs)
    session.state.created_at = record.created_at
    session.turn_index = record.turn_index
    session.usage = CostTracker.model_validate(record.usage) if record.usage else CostTracker()
    try:
        paused = _restore_state(session, record.state)
    except (ValidationError, KeyError, TypeError, ValueError) as exc:
        raise MemoryStoreError(
            f"Session {session_id!r} has a state the store cannot read back ({exc}); it was written by "
            "an incompatible version or edited by hand. Fix or delete the session."
        ) from exc
    persistence = SessionPersistence(
        store, saved=len(messages), last_id=messages[-1].id if messages else None, created=True
    )
    session._persistence = persistence
    if not paused and answer_open_calls(session.messages, INTERRUPTED) is not None:
        _log.info("session %s: answered calls left open by a stopped process", session_id)
        await persistence.flush(session)
    return session
