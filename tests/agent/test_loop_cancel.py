"""Cancellation and failure at any point leave a valid history and a session that takes the next turn."""

from __future__ import annotations

from collections import deque
from contextlib import aclosing
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agcore.agent import AgentBuilder, AgentConfig, AgentSession, BasicAgent, Cancelled, ToolCallRequested
from agcore.hooks import HookContext, hookimpl
from agcore.llm import OverloadedError, ToolUseBlock
from agcore.testing import FunctionProvider, ScriptedProvider, tool_call_reply, tool_calls_reply
from agcore.tools import Tool, ToolError, tool

from .test_loop_basic import assert_history_valid, make_session, results_of

pytestmark = pytest.mark.anyio


async def test_cancel_mid_tool_keeps_history_valid_and_next_turn_works() -> None:
    started = anyio.Event()

    @tool
    async def hang() -> str:
        """Never returns."""
        started.set()
        await anyio.sleep_forever()
        return "unreachable"

    @tool
    async def quick() -> str:
        """Returns at once."""
        return "quick done"

    reply = tool_calls_reply([ToolUseBlock(id="q", name="quick"), ToolUseBlock(id="h", name="hang")])
    model = ScriptedProvider([reply])
    session = make_session(model, quick, hang)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.submit_turn, "go")
        await started.wait()
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    result = session.last_result
    assert result is not None
    assert result.stop == "cancelled"
    assert isinstance(result.error, Cancelled)
    res = results_of(session)
    assert [r.tool_use_id for r in res] == ["q", "h"]
    assert res[0].content == "quick done"  # the finished call keeps its result
    assert res[1].is_error
    assert "Cancelled" in res[1].text
    assert_history_valid(session)
    assert not session.running
    model.add("after the cancel")
    assert (await session.submit_turn("again")).text == "after the cancel"
    assert_history_valid(session)


async def test_cancel_during_model_call_records_nothing_half_done() -> None:
    async def never(request: Any) -> str:
        await anyio.sleep_forever()
        return "unreachable"

    model = ScriptedProvider([never, "second try"])
    session = make_session(model)
    with anyio.move_on_after(0.05):
        await session.submit_turn("hi")
    assert session.last_result is not None
    assert session.last_result.stop == "cancelled"
    assert [m.kind for m in session.messages] == ["user"]
    assert (await session.submit_turn("hello?")).text == "second try"


async def test_closing_the_stream_early_cancels_the_turn() -> None:
    model = ScriptedProvider([tool_call_reply("noop", id="c1"), "unused"])

    @tool
    def noop() -> str:
        """Nothing."""
        return "ran"

    session = make_session(model, noop)
    async with aclosing(session.stream_turn("go")) as stream:
        async for event in stream:
            if isinstance(event, ToolCallRequested):
                break
    assert session.last_result is not None
    assert session.last_result.stop == "cancelled"
    (res,) = results_of(session)
    assert res.is_error
    assert_history_valid(session)
    assert (await session.submit_turn("next")).text == "unused"


async def test_cancel_while_asking_for_confirmation() -> None:
    asked = anyio.Event()

    async def confirm(call: ToolUseBlock, t: Tool) -> bool:
        asked.set()
        await anyio.sleep_forever()
        return True

    @tool(requires_confirmation=True)
    def rm() -> str:
        """Remove."""
        return "removed"

    model = ScriptedProvider([tool_call_reply("rm", id="c1"), "ok"])
    session = make_session(model, rm, confirm=confirm)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.submit_turn, "go")
        await asked.wait()
        tg.cancel_scope.cancel()
    assert_history_valid(session)
    assert results_of(session)[0].is_error


# ----------------------------------------------------------------------------- property test

_KINDS = ["ok", "fail", "hang", "unknown", "client", "gated", "slow"]
_step = st.one_of(
    st.tuples(st.just("text"), st.just(())),
    st.tuples(st.just("error"), st.just(())),
    st.tuples(st.just("tools"), st.lists(st.sampled_from(_KINDS), min_size=1, max_size=3).map(tuple)),
)


class _Gate:
    @hookimpl
    def before_tool_call(self, ctx: HookContext, call: ToolUseBlock) -> None:
        if call.name == "gated":
            raise RuntimeError("gatekeeper down")


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    script=st.lists(_step, min_size=1, max_size=5),
    close_after=st.one_of(st.none(), st.integers(min_value=0, max_value=25)),
    parallel=st.booleans(),
)
async def test_property_history_stays_valid(
    script: list[tuple[str, tuple[str, ...]]], close_after: int | None, parallel: bool
) -> None:
    queue: deque[tuple[str, tuple[str, ...]]] = deque(script)
    scope_box: list[anyio.CancelScope] = []

    def reply(messages: list[Any], tools: list[Any]) -> Any:
        if not queue:
            return "final answer"
        kind, calls = queue.popleft()
        if kind == "text":
            return "some text"
        if kind == "error":
            raise OverloadedError("busy")
        return tool_calls_reply([(name, {}) for name in calls], text="calling")

    @tool
    def ok() -> str:
        """Fine."""
        return "fine"

    @tool
    def fail() -> str:
        """Fails."""
        raise ToolError("broken")

    @tool
    async def hang() -> str:
        """Cancels the turn from inside a tool."""
        scope_box[0].cancel()
        await anyio.sleep_forever()
        return "unreachable"

    @tool
    async def slow() -> str:
        """Yields a few times."""
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        return "slow done"

    gated = Tool.from_function(lambda: "gated", name="gated", description="A gated tool.")
    bundle = (
        AgentBuilder()
        .provider(FunctionProvider(reply))
        .tools(ok, fail, hang, slow, gated, Tool.client("client"))
        .plugins(_Gate())
        .config(AgentConfig(parallel_tool_calls=parallel, max_turns=10))
        .build()
    )
    session = AgentSession(BasicAgent(name="prop"), "p", bundle)

    with anyio.CancelScope() as scope:
        scope_box.append(scope)
        async with aclosing(session.stream_turn("start")) as stream:
            seen = 0
            async for _ in stream:
                seen += 1
                if close_after is not None and seen > close_after:
                    break
    result = session.last_result
    assert result is not None
    event(f"stop={result.stop}")
    assert not session.running
    if result.stop != "client_tools":
        assert_history_valid(session)
    # Whatever happened, the session takes another turn and the history is valid after it.
    queue.clear()
    final = await session.submit_turn("and now?")
    assert final.stop == "done"
    assert final.text == "final answer"
    assert_history_valid(session)
