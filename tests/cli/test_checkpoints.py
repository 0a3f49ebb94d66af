"""Which backend a saved session continues on (``agcore.cli._checkpoints``), read from real SQLite
files: the loop's session store and LangGraph's checkpoints beside it. Looking creates nothing; the
store's side runs on asyncio and trio, the checkpoints' (LangGraph) on asyncio."""

from __future__ import annotations

from pathlib import Path

import pytest

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, RuntimeBundle
from agcore.cli._checkpoints import checkpoint_path, choose_backend, open_checkpointer, saved_backend
from agcore.cli._errors import CliError, ExitCode
from agcore.memory import SqliteSessionStore
from agcore.testing import ScriptedProvider

pytestmark = pytest.mark.anyio


def _bundle(backend: str = "loop") -> RuntimeBundle:
    return AgentBuilder().provider(ScriptedProvider(["hello"])).backend(backend).build()


def test_the_checkpoints_are_named_after_the_store_beside_it() -> None:
    assert checkpoint_path(Path("/x/chats.db")) == Path("/x/chats.langgraph.db")
    assert checkpoint_path(Path("/x/chats")) == Path("/x/chats.langgraph.db")


async def test_a_loop_session_is_found_in_the_store_and_kept_there(
    tmp_path: Path, anyio_backend: str
) -> None:
    db = tmp_path / "s.db"
    async with SqliteSessionStore(db) as store:
        await AgentSession(BasicAgent("a", "s"), "kept", _bundle(), store=store).save()
    assert await saved_backend(db, "kept") == "loop"
    assert await saved_backend(db, "other") is None
    assert await choose_backend(None, db, "kept", must_exist=True, start_with="agcore chat") == "loop"
    with pytest.raises(CliError) as refused:
        await choose_backend("langgraph", db, "kept", must_exist=True, start_with="agcore chat")
    assert refused.value.code == ExitCode.USAGE
    assert refused.value.message == (
        "Session 'kept' was started on the loop backend and continues only there (its history is in the "
        "session store): use --backend loop, or leave --backend out.")
    assert not checkpoint_path(db).exists()  # looking created nothing


async def test_an_id_found_nowhere(tmp_path: Path, anyio_backend: str) -> None:
    db = tmp_path / "none.db"
    with pytest.raises(CliError, match=r"No session database at .*none\.db"):
        await choose_backend(None, db, "x", must_exist=True, start_with="agcore chat")
    assert not db.exists()
    assert not checkpoint_path(db).exists()
    # a new session (no id, or a new id for `plan run FILE --session ID`): as asked, else the loop
    assert await choose_backend(None, db, None, must_exist=False, start_with="") == "loop"
    assert await choose_backend("langgraph", db, "new", must_exist=False, start_with="") == "langgraph"


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # LangGraph runs on asyncio only
async def test_a_langgraph_thread_is_found_in_the_checkpoints(tmp_path: Path, anyio_backend: str) -> None:
    from agcore.integrations.langgraph import GraphSession

    db = tmp_path / "s.db"
    async with open_checkpointer(db) as saver:
        session = GraphSession(BasicAgent("a", "s"), "thread-1", _bundle("langgraph"),
                               checkpointer=saver)
        await session.submit_turn("hi")
    assert checkpoint_path(db).is_file()
    assert not db.exists()
    assert await saved_backend(db, "thread-1") == "langgraph"
    assert await saved_backend(db, "thread-2") is None
    with pytest.raises(CliError, match=r"started on the langgraph backend .* use --backend langgraph"):
        await choose_backend("loop", db, "thread-1", must_exist=True, start_with="agcore chat")
    with pytest.raises(CliError, match="No session 'thread-2'"):
        await choose_backend(None, db, "thread-2", must_exist=True, start_with="agcore chat")
