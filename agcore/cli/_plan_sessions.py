"""Where a plan run's session lives: the session store (the loop backend) or LangGraph's checkpoints
(``--backend langgraph``, ``_checkpoints``). Either way the run saves the options it was started with
and the plan's progress at every status change, so ``plan resume ID`` continues it in a new process
without redoing finished steps."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agcore.agent import (
    LANGGRAPH_BACKEND,
    AgentSession,
    ConversationSession,
    DefaultTaskAgent,
    RuntimeBundle,
    open_session,
)
from agcore.cli._checkpoints import open_checkpointer
from agcore.cli._session_lock import SessionLocks
from agcore.cli._setup import Confirm
from agcore.cli._store import open_store, store_error, unknown_session
from agcore.memory import MemoryStoreError

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from agcore.memory import SqliteSessionStore

__all__ = ["OPTIONS_KEY", "PlanSessions", "plan_sessions"]

#: Where a plan run keeps the CLI options it was started with (``app_state``, saved with the session).
OPTIONS_KEY = "cli_plan_options"
_START_WITH = "agcore plan run FILE"


class PlanSessions(Protocol):
    """A backend's saved plan runs."""

    async def saved_options(self, session_id: str | None) -> dict[str, Any]:
        """The options the run ``session_id`` was started with ({}: none saved, or no such run)."""

    async def open(self, session_id: str | None, agent: DefaultTaskAgent, bundle: RuntimeBundle,
                   confirm: Confirm, *, new: bool, transform: Any) -> ConversationSession:
        """The session ``session_id`` as saved; a new one (under ``session_id`` if given) when there
        is none and ``new`` (a plan file was given)."""

    async def save(self, session: ConversationSession) -> None:
        """Save what changed between turns (the plan's progress, the options)."""


@asynccontextmanager
async def plan_sessions(backend: str, db: Path | None) -> AsyncIterator[PlanSessions]:
    """The saved plan runs of ``backend`` (``loop``: the session store ``db``; ``langgraph``: the
    checkpoints beside it)."""
    with SessionLocks(db) as locks:  # each session opened is this process's alone until the end
        if backend == LANGGRAPH_BACKEND:
            async with open_checkpointer(db) as saver:
                yield _Threads(saver, db, locks)
        else:
            async with open_store(db, existing=False) as store:
                yield _Stored(store, db, locks)


def _options(app_state: Any) -> dict[str, Any]:
    options = (app_state or {}).get(OPTIONS_KEY)
    return dict(options) if isinstance(options, dict) else {}


class _Stored:
    """The loop backend's: sessions in the store, saved by ``execute_plan`` at every step change."""

    def __init__(self, store: SqliteSessionStore, db: Path | None, locks: SessionLocks) -> None:
        self.locks = locks
        self.store = store
        self.db = db

    async def saved_options(self, session_id: str | None) -> dict[str, Any]:
        if session_id is None:
            return {}
        try:
            record = await self.store.load(session_id)
        except (MemoryStoreError, OSError) as exc:
            raise store_error(self.store.path, exc) from None
        return {} if record is None else _options(record.state.get("app_state"))

    async def open(self, session_id: str | None, agent: DefaultTaskAgent, bundle: RuntimeBundle,
                   confirm: Confirm, *, new: bool, transform: Any) -> ConversationSession:
        if session_id is not None:
            self.locks.take(session_id)
            try:
                return await AgentSession.load(self.store, session_id, agent, bundle, confirm=confirm,
                                               transform=transform)
            except LookupError:
                if not new:
                    raise unknown_session(session_id, self.db, _START_WITH) from None
            except (MemoryStoreError, OSError) as exc:
                raise store_error(self.db, exc) from None
        session = AgentSession(agent, session_id, bundle, confirm=confirm, store=self.store,
                               transform=transform)
        self.locks.take(session.session_id)
        return session

    async def save(self, session: ConversationSession) -> None:
        return None  # execute_plan saves a session that has a store at every change itself


class _Threads:
    """The LangGraph backend's: threads in the checkpoints (thread id = session id), each step
    checkpointed as it ends; the plan's progress, set between turns, is written by ``save``."""

    def __init__(self, saver: BaseCheckpointSaver[Any], db: Path | None, locks: SessionLocks) -> None:
        self.locks = locks
        self.saver = saver
        self.db = db

    async def saved_options(self, session_id: str | None) -> dict[str, Any]:
        if session_id is None:
            return {}
        # Read before the graph exists (the saved model decides the bundle): the state channel alone.
        saved = await self.saver.aget_tuple({"configurable": {"thread_id": session_id, "checkpoint_ns": ""}})
        if saved is None:
            return {}
        state = saved.checkpoint["channel_values"].get("session_state") or {}
        return _options(state.get("app_state"))

    async def open(self, session_id: str | None, agent: DefaultTaskAgent, bundle: RuntimeBundle,
                   confirm: Confirm, *, new: bool, transform: Any) -> ConversationSession:
        from agcore.integrations.langgraph import GraphSession, load_thread

        session = open_session(agent, session_id, bundle, checkpointer=self.saver, confirm=confirm,
                               transform=transform)
        assert isinstance(session, GraphSession)  # the bundle's backend is langgraph
        self.locks.take(session.session_id)
        if session_id is not None and not await load_thread(session) and not new:
            raise unknown_session(session_id, self.db, f"{_START_WITH} --backend langgraph")
        return session

    async def save(self, session: ConversationSession) -> None:
        from agcore.integrations.langgraph import GraphSession, save_thread

        if isinstance(session, GraphSession):
            await save_thread(session)
