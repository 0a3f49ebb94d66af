"""Sessions saved as they run and loaded elsewhere: messages, turn index, usage, paused client tools,
queued input, app state; repair of a history a stopped process left open; many sessions in one file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from agcore.agent import (
    AgentBuilder,
    AgentConfig,
    AgentSession,
    AssistantReply,
    BasicAgent,
    Summary,
    ToolResults,
    UserInput,
    messages_from_json,
)
from agcore.llm import LLMRequest, ToolResultBlock, ToolUseBlock
from agcore.llm.errors import ServerError
from agcore.memory import InMemorySessionStore, MemoryStoreError, SqliteSessionStore
from agcore.testing import FunctionProvider, ScriptedProvider, text_reply, tool_call_reply, tool_calls_reply
from agcore.tools import Tool, tool
from tests.agent.test_loop_basic import assert_history_valid

pytestmark = pytest.mark.anyio

AGENT = BasicAgent(name="keeper", system_prompt="You keep things.")


@tool
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def bundle_for(provider: Any, *tools: Any, **config: Any) -> Any:
    builder = AgentBuilder().provider(provider).config(AgentConfig(**config))
    return (builder.tools(*tools) if tools else builder).build()


def stored_ids(path: Path, session_id: str) -> list[str]:
    with sqlite3.connect(path) as raw:
        rows = raw.execute(
            "SELECT data FROM agcore_session_messages WHERE session_id = ? ORDER BY seq", (session_id,)
        ).fetchall()
    return [json.loads(r[0])["id"] for r in rows]


async def _last_text(path: Path) -> str:
    with sqlite3.connect(path) as raw:
        (text,) = raw.execute("SELECT data FROM agcore_session_messages ORDER BY seq DESC LIMIT 1").fetchone()
    return str(text)


# ---------------------------------------------------------------------------- round trips


async def test_messages_turn_index_and_usage_round_trip_through_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    provider = ScriptedProvider([tool_call_reply("add", {"a": 2, "b": 3}), "five", "again"])
    async with SqliteSessionStore(path) as store:
        session = AgentSession(AGENT, "s1", bundle_for(provider, add, session_ttl=3600), store=store)
        assert session.store is store
        assert (await session.submit_turn("add 2 and 3")).text == "five"
        # saved as it happened: the store already holds every message, in order
        assert stored_ids(path, "s1") == [m.id for m in session.messages]
        assert (await session.submit_turn("once more")).text == "again"
    async with SqliteSessionStore(path) as other:  # another process, in effect
        loaded = await AgentSession.load(other, "s1", AGENT, bundle_for(ScriptedProvider(["third"]), add))
        assert loaded.messages == session.messages
        assert loaded.turn_index == 2
        assert loaded.usage.usage == session.usage.usage
        assert loaded.usage.calls == 3
        assert loaded.usage.by_model == session.usage.by_model
        assert loaded.created_at == session.created_at
        record = await other.load("s1")
        assert record is not None
        assert record.agent_name == "keeper"
        assert record.expires_at == pytest.approx(session.created_at + 3600)
        result = await loaded.submit_turn("and a third time")
        assert result.ok
        assert result.text == "third"
        assert loaded.turn_index == 3
        assert_history_valid(loaded)
        assert len(stored_ids(path, "s1")) == len(loaded.messages)


async def test_a_session_saving_only_on_save_writes_nothing_until_then(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    provider = ScriptedProvider([tool_call_reply("add", {"a": 2, "b": 3}), "five", "again"])
    async with SqliteSessionStore(path) as store:
        session = AgentSession(AGENT, "s1", bundle_for(provider, add), store=store, save_each_message=False)
        assert (await session.submit_turn("add 2 and 3")).text == "five"
        assert await store.load("s1") is None  # not one write during the turn
        await session.save()
        assert stored_ids(path, "s1") == [m.id for m in session.messages]
        loaded = await AgentSession.load(store, "s1", AGENT, bundle_for(provider, add),
                                         save_each_message=False)
        assert (await loaded.submit_turn("once more")).text == "again"
        assert len(stored_ids(path, "s1")) == 4  # the loaded session waits for its save() too
        await loaded.save()
        assert stored_ids(path, "s1") == [m.id for m in loaded.messages]
        assert (await store.load("s1")).turn_index == 2  # type: ignore[union-attr]


async def test_paused_client_tools_resume_in_a_new_process(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    show = Tool.client("show_photos", "Show photos to the user")
    first_model = ScriptedProvider([
        tool_calls_reply([ToolUseBlock(id="srv", name="add", input={"a": 1, "b": 1}),
                          ToolUseBlock(id="cli", name="show_photos", input={"ids": [7]})]),
    ])
    async with SqliteSessionStore(path) as store:
        session = AgentSession(AGENT, "s1", bundle_for(first_model, add, show), store=store)
        result = await session.submit_turn("show me")
        assert result.stop == "client_tools"
    second_model = ScriptedProvider(["shown"])
    async with SqliteSessionStore(path) as store:
        loaded = await AgentSession.load(store, "s1", AGENT, bundle_for(second_model, add, show))
        assert [c.id for c in loaded.pending_client_calls] == ["cli"]
        assert loaded.messages == session.messages  # no repair: the pause is legitimate
        resumed = await loaded.resume([ToolResultBlock(tool_use_id="cli", content="displayed")])
        assert resumed.ok
        assert resumed.text == "shown"
        assert resumed.turns == 2  # the model call before the pause counts in the same turn
        results = [r for m in loaded.messages if isinstance(m, ToolResults) for r in m.results]
        # the server result computed before the pause survived, in the calls' order
        assert [(r.tool_use_id, r.content) for r in results] == [("srv", "2"), ("cli", "displayed")]
        assert_history_valid(loaded)
        # the model saw both results in the resumed process
        sent = second_model.last_request.messages[-1]
        assert [b.tool_use_id for b in sent.blocks if isinstance(b, ToolResultBlock)] == ["srv", "cli"]
    async with SqliteSessionStore(path) as store:
        again = await AgentSession.load(store, "s1", AGENT, bundle_for(ScriptedProvider([]), add, show))
        assert again.pending_client_calls == []
        assert again.messages == loaded.messages


async def test_new_input_instead_of_resume_after_load_answers_the_client_calls() -> None:
    store = InMemorySessionStore()
    show = Tool.client("show", "Show something")
    model = ScriptedProvider([
        tool_calls_reply([ToolUseBlock(id="srv", name="add", input={"a": 2, "b": 2}),
                          ToolUseBlock(id="cli", name="show", input={})]),
    ])
    session = AgentSession(AGENT, "s1", bundle_for(model, add, show), store=store)
    assert (await session.submit_turn("go")).stop == "client_tools"
    loaded = await AgentSession.load(store, "s1", AGENT, bundle_for(ScriptedProvider(["ok"]), add, show))
    assert (await loaded.submit_turn("never mind")).text == "ok"
    results = [r for m in loaded.messages if isinstance(m, ToolResults) for r in m.results]
    assert [(r.tool_use_id, r.is_error) for r in results] == [("srv", False), ("cli", True)]
    assert "new message" in results[1].text
    assert_history_valid(loaded)


async def test_queued_follow_ups_steering_and_app_state_survive() -> None:
    store = InMemorySessionStore()
    session = AgentSession(AGENT, "s1", bundle_for(ScriptedProvider(["ok"])), store=store)
    await session.submit_turn("hi")
    session.follow_up("then this")
    session.steer("and mind this")
    session.app_state["plan"] = {"steps": [{"id": "a", "status": "completed"}]}
    session.plan_step_index = 1
    await session.save()
    model = ScriptedProvider(["answer to all", "answer to the follow-up"])
    loaded = await AgentSession.load(store, "s1", AGENT, bundle_for(model))
    assert loaded.app_state == {"plan": {"steps": [{"id": "a", "status": "completed"}]}}
    assert loaded.plan_step_index == 1
    result = await loaded.submit_turn("next")
    assert result.text == "answer to the follow-up"
    inputs = [m.text for m in loaded.messages if isinstance(m, UserInput)]
    assert inputs == ["hi", "next", "and mind this", "then this"]
    reloaded = await AgentSession.load(store, "s1", AGENT, bundle_for(ScriptedProvider([])))
    assert reloaded.messages == loaded.messages
    assert [m.text for m in reloaded.messages if isinstance(m, UserInput)][-1] == "then this"


async def test_always_confirmed_tools_and_last_model_survive() -> None:
    @tool(requires_confirmation=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    asked: list[str] = []

    def confirm(call: ToolUseBlock, t: Tool) -> Any:
        asked.append(call.name)
        return "always"

    store = InMemorySessionStore()
    model = ScriptedProvider([tool_call_reply("delete", {"path": "a"}), "done"])
    session = AgentSession(AGENT, "s1", bundle_for(model, delete), confirm=confirm, store=store)
    await session.submit_turn("delete a")
    assert asked == ["delete"]
    model2 = ScriptedProvider([tool_call_reply("delete", {"path": "b"}), "done"])
    loaded = await AgentSession.load(store, "s1", AGENT, bundle_for(model2, delete), confirm=confirm)
    await loaded.submit_turn("delete b")
    assert asked == ["delete"]  # "always" still holds in the new process
    assert loaded.state.last_model == ("scripted", "scripted-model")


# ------------------------------------------------------------------------------ repairs


async def test_history_left_mid_tool_is_repaired_on_load_and_the_repair_saved(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    started = anyio.Event()

    @tool
    async def slow(n: int) -> str:
        """Take a while."""
        started.set()
        await anyio.sleep(10)
        return "never"

    model = ScriptedProvider([tool_calls_reply([("slow", {"n": 1}), ("add", {"a": 1, "b": 2})])])
    async with SqliteSessionStore(path) as store:
        session = AgentSession(AGENT, "s1", bundle_for(model, slow, add), store=store)
        with anyio.move_on_after(5):
            async with anyio.create_task_group() as group:
                group.start_soon(session.submit_turn, "go")
                await started.wait()
                # what a killed process leaves: the reply with its calls is saved, no results
                saved = stored_ids(path, "s1")
                group.cancel_scope.cancel()
    # the cancelled turn repaired its history in memory only (no awaiting while cancelled), so the
    # file is what a killed process leaves: the reply with its calls, and no results
    assert stored_ids(path, "s1") == saved
    assert isinstance(messages_from_json(f"[{(await _last_text(path))}]")[0], AssistantReply)
    async with SqliteSessionStore(path) as store:
        bundle = bundle_for(ScriptedProvider(["fine"]), slow, add)
        loaded = await AgentSession.load(store, "s1", AGENT, bundle)
        repair = loaded.messages[-1]
        assert isinstance(repair, ToolResults)
        assert [r.is_error for r in repair.results] == [True, True]
        assert all("Interrupted" in r.text for r in repair.results)
        assert_history_valid(loaded)
        assert stored_ids(path, "s1") == [*saved, repair.id]  # the repair is saved too
        result = await loaded.submit_turn("carry on")
        assert result.ok
        assert result.text == "fine"
        assert_history_valid(loaded)


async def test_failed_turn_saves_its_repair() -> None:
    store = InMemorySessionStore()
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), ServerError("down", status_code=500)])
    session = AgentSession(AGENT, "s1", bundle_for(model, add), store=store)
    result = await session.submit_turn("go")
    assert result.stop == "error"
    loaded = await AgentSession.load(store, "s1", AGENT, bundle_for(ScriptedProvider(["up"]), add))
    assert loaded.messages == session.messages
    assert_history_valid(loaded)
    assert (await loaded.submit_turn("retry")).ok


async def test_cancelled_turn_is_saved_with_the_next_message() -> None:
    store = InMemorySessionStore()
    gate = anyio.Event()

    async def hang(request: LLMRequest) -> str:
        await gate.wait()
        return "late"

    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), hang, "after"])
    session = AgentSession(AGENT, "s1", bundle_for(model, add), store=store)
    with anyio.move_on_after(0.2):
        await session.submit_turn("go")
    assert session.last_result is not None
    assert session.last_result.stop == "cancelled"
    assert (await session.submit_turn("again")).text == "after"
    loaded = await AgentSession.load(store, "s1", AGENT, bundle_for(ScriptedProvider([])))
    assert loaded.messages == session.messages
    assert_history_valid(loaded)


async def test_rewritten_history_is_replaced_in_the_store() -> None:
    store = InMemorySessionStore()
    session = AgentSession(AGENT, "s1", bundle_for(ScriptedProvider(["one", "two", "three"])), store=store)
    await session.submit_turn("a")
    await session.submit_turn("b")
    session.messages[:] = [Summary(text="a and b were said"), *session.messages[-2:]]  # compaction
    await session.submit_turn("c")
    texts = await store.load_messages("s1")
    assert [json.loads(t)["kind"] for t in texts] == ["summary", "user", "assistant", "user", "assistant"]
    loaded = await AgentSession.load(store, "s1", AGENT, bundle_for(ScriptedProvider([])))
    assert loaded.messages == session.messages
    session.messages[1:] = []
    await session.save(replace=True)
    assert len(await store.load_messages("s1")) == 1


async def test_cancelled_while_saving_writes_each_message_once() -> None:
    class SlowStore(InMemorySessionStore):
        async def append_messages(self, session_id: str, messages: Any, *, record: Any = None) -> int:
            count = await super().append_messages(session_id, messages, record=record)
            await anyio.sleep(0.05)  # written, not yet acknowledged when the cancellation comes
            return count

    store = SlowStore()
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), "three", "four"])
    session = AgentSession(AGENT, "s1", bundle_for(model, add), store=store)
    with anyio.move_on_after(0.07):
        await session.submit_turn("go")
    assert session.last_result is not None
    assert session.last_result.stop == "cancelled"
    await session.submit_turn("again")
    ids = [json.loads(t)["id"] for t in await store.load_messages("s1")]
    assert ids == [m.id for m in session.messages]  # nothing written twice, nothing missing


async def test_session_ttl_counts_from_the_first_process(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SqliteSessionStore(path) as store:
        session = AgentSession(AGENT, "s1", bundle_for(ScriptedProvider(["hi"]), session_ttl=60), store=store)
        await session.submit_turn("hi")
    with sqlite3.connect(path) as raw:  # as if the session had been created two minutes ago
        raw.execute("UPDATE agcore_sessions SET created_at = created_at - 120, expires_at = expires_at - 120")
    async with SqliteSessionStore(path) as store:
        assert await store.list_sessions(include_expired=False) == []
        bundle = bundle_for(ScriptedProvider(["never"]), session_ttl=60)
        loaded = await AgentSession.load(store, "s1", AGENT, bundle)
        result = await loaded.submit_turn("still there?")
        assert result.stop == "limit"
        assert "session_ttl" in str(result.error)


# --------------------------------------------------------------------------- failures


async def test_load_of_unknown_session_and_duplicate_create_are_clear() -> None:
    store = InMemorySessionStore()
    with pytest.raises(LookupError, match="no session 'ghost'"):
        await AgentSession.load(store, "ghost", AGENT, bundle_for(ScriptedProvider([])))
    first = AgentSession(AGENT, "dup", bundle_for(ScriptedProvider(["hi"])), store=store)
    await first.submit_turn("hi")
    second = AgentSession(AGENT, "dup", bundle_for(ScriptedProvider(["hi"])), store=store)
    result = await second.submit_turn("hi")
    assert result.stop == "error"
    assert "already exists" in str(result.error)
    assert len(await store.load_messages("dup")) == 2  # the first session's history is untouched
    with pytest.raises(RuntimeError, match="no store"):
        await AgentSession(AGENT, "x", bundle_for(ScriptedProvider([]))).save()


async def test_unreadable_stored_message_is_a_memory_store_error() -> None:
    store = InMemorySessionStore()
    session = AgentSession(AGENT, "s1", bundle_for(ScriptedProvider(["ok"])), store=store)
    await session.submit_turn("hi")
    await store.append_messages("s1", ['{"kind": "martian"}'])
    with pytest.raises(MemoryStoreError, match="not a valid AgentMessage"):
        await AgentSession.load(store, "s1", AGENT, bundle_for(ScriptedProvider([])))


async def test_store_failure_mid_turn_fails_the_turn_not_the_process(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SqliteSessionStore(path, busy_timeout=0.05) as store:
        session = AgentSession(AGENT, "s1", bundle_for(ScriptedProvider(["a", "b"])), store=store)
        await session.submit_turn("one")
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            result = await session.submit_turn("two")
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert result.stop == "error"
        assert "busy_timeout" in str(result.error)
        await session.save()  # the lock is gone: what was kept in memory is written now
        loaded = await AgentSession.load(store, "s1", AGENT, bundle_for(ScriptedProvider([])))
        assert loaded.messages == session.messages


# ------------------------------------------------------------------------- concurrency


async def test_many_sessions_in_one_file_from_concurrent_tasks(tmp_path: Path) -> None:
    path = tmp_path / "s.db"

    def model(messages: Any, tools: Any) -> Any:
        answered = sum(1 for m in messages if m.role == "assistant")
        if answered < 3:
            return tool_calls_reply([("add", {"a": answered, "b": 1}), ("add", {"a": answered, "b": 2})])
        return text_reply("done")

    sessions: list[AgentSession] = []
    async with SqliteSessionStore(path) as one, SqliteSessionStore(path) as two:
        async def run(i: int) -> None:
            store = one if i % 2 else two
            session = AgentSession(AGENT, f"s{i}", bundle_for(FunctionProvider(model), add), store=store)
            sessions.append(session)
            for turn in range(2):
                assert (await session.submit_turn(f"turn {turn}")).ok

        async with anyio.create_task_group() as group:
            for i in range(12):
                group.start_soon(run, i)
    async with SqliteSessionStore(path) as store:
        assert len(await store.list_sessions()) == 12
        for session in sessions:
            bundle = bundle_for(ScriptedProvider([]))
            loaded = await AgentSession.load(store, session.session_id, AGENT, bundle)
            assert loaded.messages == session.messages
            assert loaded.turn_index == 2
            assert_history_valid(loaded)


def test_reply_recorded_with_its_usage() -> None:
    """The loop counts a reply's usage before recording it, so a saved reply is saved with it."""
    seen: list[int] = []

    class Spy(InMemorySessionStore):
        async def append_messages(self, session_id: str, messages: Any, *, record: Any = None) -> int:
            kinds = [json.loads(m)["kind"] for m in messages]
            if "assistant" in kinds and record is not None:
                seen.append(record.usage["calls"])
            return await super().append_messages(session_id, messages, record=record)

    async def main() -> None:
        session = AgentSession(AGENT, "s1", bundle_for(ScriptedProvider(["x", "y"])), store=Spy())
        await session.submit_turn("a")
        await session.submit_turn("b")

    anyio.run(main)
    assert seen == [1, 2]
