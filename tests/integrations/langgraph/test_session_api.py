"""``GraphSession`` keeps ``AgentSession``'s promises: one turn at a time, plans, usage, per-call
output types, progress lines in the order they came, and one compiled graph per agent and bundle.

LangGraph runs on asyncio only, so this module runs on asyncio only (not on trio).
"""

from __future__ import annotations

import anyio
import pytest
from pydantic import BaseModel

from agcore.agent import (
    AgentBuilder,
    AgentSession,
    BasicAgent,
    DefaultTaskAgent,
    Plan,
    StepStatus,
    ToolLog,
    open_session,
)
from agcore.integrations.langgraph import AgentGraph, GraphSession
from agcore.testing import ScriptedProvider, tool_call_reply, tool_calls_reply
from agcore.tools import ToolContext, tool

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Answer(BaseModel):
    value: int


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _agent() -> BasicAgent:
    return BasicAgent(name="g", system_prompt="s")


async def test_a_second_turn_meanwhile_is_refused_and_the_first_keeps_its_answer() -> None:
    gate = anyio.Event()

    @tool
    async def wait() -> str:
        """Wait for the gate."""
        await gate.wait()
        return "opened"

    model = ScriptedProvider([tool_call_reply("wait", id="w1"), "first answer", "second answer"])
    session = GraphSession(_agent(), "busy", AgentBuilder().provider(model).tools(wait).build())
    results = []
    async with anyio.create_task_group() as group:
        async def first() -> None:
            results.append(await session.submit_turn("first"))

        group.start_soon(first)
        await anyio.sleep(0.2)
        assert session.running
        with pytest.raises(RuntimeError, match="already running"):
            await session.submit_turn("second")
        with pytest.raises(RuntimeError, match="already running"):
            session.stream_turn("second")
        gate.set()
    assert results[0].text == "first answer"
    history = await session.history()
    assert [m.kind for m in history] == ["user", "assistant", "tool_results", "assistant"]
    assert (await session.submit_turn("second")).text == "second answer"


async def test_usage_and_a_per_call_output_type_as_on_agent_session() -> None:
    model = ScriptedProvider(['{"value": 4}', "plain"], model_id="claude-haiku-4-5")
    session = GraphSession(_agent(), "typed", AgentBuilder().provider(model).build())
    typed = await session.submit_turn("2+2 as JSON", output_type=Answer)
    assert typed.output == Answer(value=4)
    plain = await session.submit_turn("now in words")
    assert plain.output is None  # the type was for that turn only
    assert plain.text == "plain"
    assert session.usage.usage.total_tokens > 0
    assert session.usage.usage.total_tokens == sum(
        m.message.usage.total_tokens for m in session.messages if m.kind == "assistant"
    )


async def test_execute_plan_runs_on_a_graph_session_and_keeps_its_progress() -> None:
    plan = Plan.from_dict({"goal": "sum", "steps": [
        {"id": "one", "description": "add 1 and 2"},
        {"id": "two", "description": "report", "depends_on": ["one"]},
    ]})
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), "3", "the sum is 3"])
    bundle = AgentBuilder().provider(model).tools(add).build()
    agent = DefaultTaskAgent(name="planner", verifier=None)
    session = GraphSession(agent, "plan", bundle)
    done = await agent.execute_plan(session, plan)  # type: ignore[arg-type]
    assert [s.status for s in done.steps] == [StepStatus.COMPLETED, StepStatus.COMPLETED]
    assert done.steps[1].result == "the sum is 3"
    assert session.app_state["plan"]["steps"][0]["status"] == "completed"
    assert session.plan_step_index is None


@tool(read_only=True)
def peek(path: str) -> str:
    """Read a file."""
    return f"{path}: x = 1"


async def test_a_plan_is_drafted_read_only_on_a_graph_session_and_run_there() -> None:
    # Drafting is a model call in the session's in-process AgentSession (``in_process``); looking
    # around first is a sub-agent's turn, its child: read-only tools only, its usage rolled up.
    model = ScriptedProvider([
        tool_call_reply("peek", {"path": "a.py"}),                # exploring: read-only, allowed
        tool_call_reply("add", {"a": 1, "b": 2}),                 # not offered while planning
        '{"steps": [{"id": "1", "description": "add 1 and 2"}]}',
        tool_call_reply("add", {"a": 1, "b": 2}), "3",
    ])
    bundle = AgentBuilder().provider(model).tools(add, peek).build()
    agent = DefaultTaskAgent(name="planner", read_only_planning=True, verifier=None)
    session = GraphSession(agent, "drafted", bundle)
    assert session.in_process is session.session
    plan = await agent.draft_plan(session, "add 1 and 2")  # type: ignore[arg-type]
    assert [t.name for t in model.requests[0].tools] == ["peek"]
    assert "not one of the tools available" in str(model.requests[2].messages[-1])
    assert [s.description for s in plan.steps] == ["add 1 and 2"]
    assert session.messages == []  # drafting is no turn of the conversation
    done = await agent.execute_plan(session, plan)  # type: ignore[arg-type]
    assert done.succeeded
    assert done.steps[0].result == "3"
    assert session.usage.calls == 5  # the planning calls roll up into the session's usage


async def test_parallel_progress_lines_keep_the_order_they_came_in() -> None:
    async def talk(ctx: ToolContext, name: str, pause: float) -> str:
        for i in range(3):
            await ctx.report_progress(f"{name}{i}")
            await anyio.sleep(pause)
        return name

    @tool
    async def a(ctx: ToolContext) -> str:
        """Talks as a."""
        return await talk(ctx, "a", 0.05)

    @tool
    async def b(ctx: ToolContext) -> str:
        """Talks as b."""
        await anyio.sleep(0.025)
        return await talk(ctx, "b", 0.05)

    orders = []
    for backend in ("loop", "graph"):
        model = ScriptedProvider([tool_calls_reply([("a", {}), ("b", {})]), "done"])
        bundle = AgentBuilder().provider(model).tools(a, b).config(parallel_tool_calls=True).build()
        session = (AgentSession(_agent(), "p", bundle) if backend == "loop"
                   else GraphSession(_agent(), "p", bundle))
        await session.submit_turn("talk")
        orders.append([m.text for m in session.messages if isinstance(m, ToolLog)])
    assert orders[0] == ["a0", "b0", "a1", "b1", "a2", "b2"]
    assert orders[1] == orders[0]


def test_sessions_of_one_agent_and_bundle_share_one_compiled_graph() -> None:
    bundle = AgentBuilder().provider(ScriptedProvider(["x"])).backend("langgraph").build()
    agent = _agent()
    first, second = open_session(agent, "one", bundle), open_session(agent, "two", bundle)
    assert isinstance(first, GraphSession)
    assert isinstance(second, GraphSession)
    assert first.graph is second.graph
    assert AgentGraph.shared(agent, bundle).compiled is first.graph
    other = open_session(_agent(), "three", bundle)
    assert isinstance(other, GraphSession)
    assert other.graph is not first.graph  # another agent: its own graph


async def test_a_dropped_stream_does_not_block_the_next_turn_as_on_agent_session() -> None:
    from agcore.agent import ToolCallRequested

    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 1}, id="c1"), "unused", "next"])
    session = GraphSession(_agent(), "dropped", AgentBuilder().provider(model).tools(add).build())
    async for event in session.stream_turn("go"):
        if isinstance(event, ToolCallRequested):
            break  # dropped, not closed
    assert not session.running
    again = await session.submit_turn("again")  # waits for the event loop to close the dropped run
    assert again.stop == "done"
    history = await session.history()
    assert [m.kind for m in history] == ["user", "assistant", "tool_results", "user", "assistant"]


async def test_the_turn_block_ends_the_turn_when_left() -> None:
    gate = anyio.Event()

    @tool
    async def wait() -> str:
        """Wait for the gate."""
        await gate.wait()
        return "opened"

    model = ScriptedProvider([tool_call_reply("wait", id="w1"), "after"])
    session = GraphSession(_agent(), "block", AgentBuilder().provider(model).tools(wait).build())
    with anyio.move_on_after(0.3):
        async with session.turn("go") as events:
            async for _ in events:
                pass
    assert session.last_result is not None
    assert session.last_result.stop == "cancelled"
    assert not session.running
    history = await session.history()
    assert "Cancelled" in history[-1].results[0].text


def test_the_langgraph_backend_says_it_needs_asyncio_on_trio() -> None:
    session = GraphSession(_agent(), "trio", AgentBuilder().provider(ScriptedProvider(["x"])).build())

    async def main() -> None:
        await session.submit_turn("hi")

    with pytest.raises(RuntimeError, match="asyncio only"):
        anyio.run(main, backend="trio")


async def test_checkpoints_are_written_per_step_when_they_outlive_the_process_and_per_run_in_memory(
    tmp_path: object,
) -> None:
    """An in-memory saver dies with the process, so its sessions write the thread's checkpoint once a
    run ends ("exit"); a saver on disk gets every step's ("sync"). Either way the checkpoint after a
    turn, and after a turn cancelled in a tool, holds what the session recorded."""
    from pathlib import Path

    import aiosqlite
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from agcore.integrations.langgraph import default_durability

    assert default_durability(InMemorySaver()) == "exit"
    connection = await aiosqlite.connect(str(Path(str(tmp_path)) / "threads.db"))
    try:
        on_disk = AsyncSqliteSaver(connection)
        assert default_durability(on_disk) == "sync"
        started = anyio.Event()

        @tool
        async def slow() -> str:
            """Wait until cancelled."""
            started.set()
            await anyio.sleep_forever()
            return "never"

        for saver, expected in ((InMemorySaver(), "exit"), (on_disk, "sync")):
            model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), "3", tool_call_reply("slow")])
            bundle = AgentBuilder().provider(model).tools(add, slow).build()
            session = GraphSession(_agent(), f"t-{expected}", bundle, checkpointer=saver)
            assert session.durability == expected
            told = GraphSession(_agent(), "other", bundle, checkpointer=saver, durability="async")
            assert told.durability == "async"
            assert (await session.submit_turn("add them")).text == "3"
            assert [m.id for m in await session.history()] == [m.id for m in session.messages]
            started = anyio.Event()
            async with anyio.create_task_group() as group:
                group.start_soon(session.submit_turn, "wait")
                await started.wait()
                group.cancel_scope.cancel()
            saved = await session.history()
            assert [m.id for m in saved] == [m.id for m in session.messages]
            assert saved[-1].kind == "tool_results"  # the cancelled call answered in the checkpoint too
    finally:
        await connection.close()
