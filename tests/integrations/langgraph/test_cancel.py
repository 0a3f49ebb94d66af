"""Cancelling a GraphSession's turn stops what it runs, at once, as on the loop: a streamed model
call, the tools of a parallel batch, a confirmation being asked. (Under an anyio cancel scope,
LangGraph's own unwinding was cancelled before it reached the nodes, which ran on; see _own_task.)

LangGraph runs on asyncio only, so this module runs on asyncio only.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, open_session
from agcore.integrations.langgraph import GraphSession
from agcore.llm import LLMRequest, ToolUseBlock
from agcore.testing import ScriptedProvider, tool_call_reply, tool_calls_reply
from agcore.tools import tool

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Slow:
    """Something that starts, then waits until released; records how it ended."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.log: list[str] = []

    async def run(self, name: str) -> str:
        self.log.append(f"start {name}")
        self.started.set()
        try:
            await self.release.wait()
        except BaseException:
            self.log.append(f"cancelled {name}")
            raise
        self.log.append(f"finished {name}")
        return name

    async def settle(self) -> None:
        """Release it, and give a call that ran on the chance to finish (it must not)."""
        self.release.set()
        for _ in range(20):
            await anyio.sleep(0.005)


async def test_cancelling_a_streamed_turn_cancels_its_model_call_and_the_next_turn_runs() -> None:
    slow = Slow()

    async def model(request: LLMRequest) -> str:
        return await slow.run("model")

    bundle = AgentBuilder().provider(ScriptedProvider([model, "again"])).build()
    session = GraphSession(BasicAgent(name="c"), "c1", bundle)
    with anyio.CancelScope() as scope:
        async for event in session.stream_turn("hi"):
            if event.type == "turn_started":
                await slow.started.wait()
                scope.cancel()
    await slow.settle()
    assert slow.log == ["start model", "cancelled model"]
    assert session.last_result is not None
    assert session.last_result.stop == "cancelled"
    result = await session.submit_turn("hi again")
    assert (result.stop, result.text) == ("done", "again")


async def test_cancelling_a_parallel_batch_cancels_every_running_tool() -> None:
    slow = Slow()
    both = anyio.Event()

    @tool
    async def job(name: str) -> str:
        """A slow job."""
        if len(slow.log) == 1:
            both.set()
        return await slow.run(name)

    reply = tool_calls_reply([ToolUseBlock(id="a", name="job", input={"name": "a"}),
                              ToolUseBlock(id="b", name="job", input={"name": "b"})])
    bundle = AgentBuilder().provider(ScriptedProvider([reply, "done"])).tools(job).build()
    session = GraphSession(BasicAgent(name="c"), "c2", bundle)
    async with anyio.create_task_group() as group:
        group.start_soon(session.submit_turn, "two jobs")
        await both.wait()
        group.cancel_scope.cancel()
    await slow.settle()
    assert sorted(slow.log) == ["cancelled a", "cancelled b", "start a", "start b"]
    history = await session.history()
    assert [m.kind for m in history] == ["user", "assistant", "tool_results"]
    assert all("Cancelled" in str(r.content) for r in history[2].results)


@pytest.mark.parametrize("backend", ["loop", "langgraph"])
async def test_cancelled_at_the_confirmation_prompt_the_turn_ends_cancelled_on_both(backend: str) -> None:
    asked = anyio.Event()

    @tool(requires_confirmation=True)
    def deploy(target: str) -> str:
        """Deploy."""
        raise AssertionError("a call whose confirmation was cancelled must not run")

    async def confirm(call: Any, tool: Any) -> bool:
        asked.set()
        await anyio.sleep_forever()
        return True

    model = ScriptedProvider([tool_call_reply("deploy", {"target": "prod"}),
                              tool_call_reply("deploy", {"target": "prod"})])
    bundle = AgentBuilder().provider(model).tools(deploy).backend(backend).build()
    session = open_session(BasicAgent(name="c"), "c3", bundle, confirm=confirm)
    async with anyio.create_task_group() as group:
        group.start_soon(session.submit_turn, "deploy it")
        await asked.wait()
        group.cancel_scope.cancel()
    assert session.last_result is not None
    assert session.last_result.stop == "cancelled"
    history = session.messages if isinstance(session, AgentSession) else await session.history()
    assert [m.kind for m in history] == ["user", "assistant", "tool_results"]
    assert "Cancelled" in str(history[2].results[0].content)
    if isinstance(session, GraphSession):
        assert await session.pending() is None
    asked = anyio.Event()
    async with anyio.create_task_group() as group:  # the next turn asks again, and is not stuck
        group.start_soon(session.submit_turn, "try again")
        await asked.wait()
        group.cancel_scope.cancel()
