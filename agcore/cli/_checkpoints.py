"""Where the CLI keeps LangGraph conversations, and which backend a saved session continues on.

The loop backend saves sessions in the session store (``sessions.db``, or ``--db``); the LangGraph
backend keeps its threads in a LangGraph SQLite checkpointer beside it, the store's name with
``.langgraph`` before its suffix (``sessions.langgraph.db``: ``--db`` moves both), the thread id being
the session id. A session continues on the backend it was started on: each backend reads only its
own file, and copying a history across would leave two copies that drift apart. Left out,
``--backend`` is the saved session's own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agcore.agent import LANGGRAPH_BACKEND, LOOP_BACKEND
from agcore.cli._errors import CliError, ExitCode
from agcore.cli._store import default_db_path, unknown_session
from agcore.memory import MemoryStoreError, SqliteSessionStore

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

__all__ = ["checkpoint_path", "choose_backend", "open_checkpointer", "saved_backend"]

_KEPT_IN = {LOOP_BACKEND: "the session store", LANGGRAPH_BACKEND: "the LangGraph checkpoints"}


def checkpoint_path(db: Path | None) -> Path:
    """The LangGraph checkpoint file beside the session store ``db`` (default: ``default_db_path()``)."""
    store = db or default_db_path()
    return store.with_name(f"{store.stem}.langgraph{store.suffix or '.db'}")


@asynccontextmanager
async def open_checkpointer(db: Path | None) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """LangGraph's SQLite checkpointer on ``checkpoint_path(db)`` (created on first use), its
    serializer knowing agcore's types (``typed_checkpointer``): every read of the CLI's, the graph's
    and the ones before a graph exists (which backend holds a session, a plan's saved options), loads
    them typed, with no "unregistered type" warning, and under ``LANGGRAPH_STRICT_MSGPACK`` at all."""
    try:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        from agcore.integrations.langgraph import typed_checkpointer
    except ImportError:
        raise CliError("--backend langgraph needs LangGraph's SQLite checkpointer: pip install "
                       "'agcore[langgraph]'.", ExitCode.CONFIG) from None
    path = checkpoint_path(db)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"Cannot create the checkpoints' directory {path.parent}: {exc}",
                       ExitCode.CONFIG) from None
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        yield typed_checkpointer(saver)


async def saved_backend(db: Path | None, session_id: str) -> str | None:
    """The backend that holds ``session_id``: ``"loop"`` (the session store has it), ``"langgraph"``
    (the checkpoints have its thread), or None. Only files that exist are read: none is created."""
    store = db or default_db_path()
    if store.is_file():
        try:
            async with SqliteSessionStore(store) as sessions:
                if await sessions.load(session_id) is not None:
                    return LOOP_BACKEND
        except (MemoryStoreError, OSError) as exc:
            raise CliError(f"Cannot use the session store {store}: {exc}", ExitCode.CONFIG) from None
    if checkpoint_path(db).is_file():
        async with open_checkpointer(db) as saver:
            if await saver.aget_tuple({"configurable": {"thread_id": session_id, "checkpoint_ns": ""}}):
                return LANGGRAPH_BACKEND
    return None


async def choose_backend(
    asked: str | None, db: Path | None, session_id: str | None, *, must_exist: bool, start_with: str
) -> str:
    """The backend a command runs on: ``asked`` (``--backend``), else the saved session's, else the
    loop. A session saved by the other backend is a usage error saying which one continues it;
    ``must_exist``: an id found nowhere is one too (``start_with`` is the command that starts one)."""
    saved = await saved_backend(db, session_id) if session_id is not None else None
    if saved is None:
        if must_exist and session_id is not None:
            _no_session(db, session_id, start_with)
        return asked or LOOP_BACKEND
    if asked is not None and asked != saved:
        raise CliError(f"Session {session_id!r} was started on the {saved} backend and continues only "
                       f"there (its history is in {_KEPT_IN[saved]}): use --backend {saved}, or leave "
                       "--backend out.", ExitCode.USAGE)
    return saved


def _no_session(db: Path | None, session_id: str, start_with: str) -> None:
    store = db or default_db_path()
    if not store.is_file() and not checkpoint_path(db).is_file():
        raise CliError(f"No session database at {store}: check --db (or AGCORE_HOME), or leave out "
                       "the session id to start a new session.", ExitCode.USAGE)
    raise unknown_session(session_id, db, start_with)
