"""The loop's seams: a dropped stream, which tools may run, progress saving, and the module graph."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from agcore.agent import (
    AgentBuilder,
    AgentSession,
    BasicAgent,
    RuntimeBundle,
    TextDelta,
    ToolCallRequested,
    TurnResult,
)
from agcore.agent._messages import ToolLog
from agcore.hooks import HookContext, hookimpl
from agcore.llm import LLMRequest, ToolDefinition
from agcore.memory import InMemorySessionStore
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import ToolContext, tool

from .test_loop_basic import assert_history_valid, make_session, results_of

pytestmark = pytest.mark.anyio


@tool
def noop() -> str:
    """Does nothing."""
    return "ran"


class _TurnResults:
    def __init__(self) -> None:
        self.results: list[TurnResult] = []

    @hookimpl
    def on_turn_result(self, ctx: HookContext, result: TurnResult) -> None:
        self.results.append(result)


# ------------------------------------------------------------------------- a dropped stream


async def test_break_without_aclosing_ends_the_turn_before_the_next_one() -> None:
    model = ScriptedProvider([tool_call_reply("noop", id="c1"), "unused", "second turn"])
    observer = _TurnResults()
    bundle = AgentBuilder().provider(model).tools(noop).plugins(observer).build()
    session = AgentSession(BasicAgent(name="t"), "s1", bundle)
    async for event in session.stream_turn("go"):
        if isinstance(event, ToolCallRequested):
            break
    # The dropped stream is being closed by the event loop: no longer running, and the next turn
    # starts straight away, after the dropped one has ended (cancelled, its call answered).
    assert not session.running
    second = await session.submit_turn("next")
    assert second.text == "unused"
    (result,) = results_of(session)
    assert result.tool_use_id == "c1"
    assert result.is_error
    assert "Cancelled" in result.text
    # The dropped generator is closed later by the event loop: that must not touch the new turn.
    gc.collect()
    for _ in range(5):
        await anyio.lowlevel.checkpoint()
    assert_history_valid(session)
    assert session.last_result is second
    assert (await session.submit_turn("again")).text == "second turn"
    assert [r.stop for r in observer.results] == ["cancelled", "done", "done"]


async def test_break_during_text_deltas_then_next_turn() -> None:
    model = ScriptedProvider(["a long streamed answer in several words", "second"])
    session = make_session(model)
    async for event in session.stream_turn("hi"):
        if isinstance(event, TextDelta):
            break
    assert not session.running
    assert (await session.submit_turn("again")).text == "second"
    assert_history_valid(session)


async def test_a_held_stream_left_early_says_how_to_close_it() -> None:
    model = ScriptedProvider([tool_call_reply("noop", id="c1"), "unused", "after close"])
    session = make_session(model, noop)
    stream = session.stream_turn("go")
    async for event in stream:
        if isinstance(event, ToolCallRequested):
            break
    # Still held: the caller may go on iterating, so the turn is still running.
    with pytest.raises(RuntimeError, match=r"stream\.aclose\(\)"):
        await session.submit_turn("next")
    await stream.aclose()  # type: ignore[attr-defined]
    assert_history_valid(session)
    assert (await session.submit_turn("next")).text == "unused"


async def test_a_stream_never_iterated_does_not_end_another_turn() -> None:
    model = ScriptedProvider(["first", "second"])
    session = make_session(model)
    stream = session.stream_turn("never read")
    result = await session.submit_turn("read")
    assert result.text == "first"
    del stream
    gc.collect()
    assert session.last_result is result
    assert (await session.submit_turn("more")).text == "second"


# ----------------------------------------------------------------- which tools may run


class _NoTools(BasicAgent):
    def tool_definitions(self, bundle: RuntimeBundle) -> list[ToolDefinition]:
        return []


async def test_an_agent_that_offers_no_tools_runs_none() -> None:
    ran: list[str] = []

    @tool
    def secret() -> str:
        """Registered, never offered."""
        ran.append("secret")
        return "leaked"

    model = ScriptedProvider([tool_call_reply("secret", id="c1"), "ok"])
    bundle = AgentBuilder().provider(model).tools(secret).build()
    session = AgentSession(_NoTools(name="bare"), "s1", bundle)
    result = await session.submit_turn("go")
    assert result.ok
    assert ran == []
    assert model.requests[0].tools == []
    (refused,) = results_of(session)
    assert refused.is_error
    assert "not one of the tools available" in refused.text
    assert "none" in refused.text


class _OfferTool:
    """A plugin that offers a registered tool the agent itself leaves out."""

    def __init__(self, definition: ToolDefinition) -> None:
        self.definition = definition

    @hookimpl
    def on_llm_request(self, ctx: HookContext, request: LLMRequest) -> LLMRequest:
        return request.model_copy(update={"tools": [*request.tools, self.definition]})


async def test_a_tool_a_hook_offers_runs() -> None:
    ran: list[str] = []

    @tool
    def extra() -> str:
        """Offered by a plugin."""
        ran.append("extra")
        return "extra ran"

    registry_def = ToolDefinition(name="extra", description="Offered by a plugin.")
    model = ScriptedProvider([tool_call_reply("extra", id="c1"), "done"])
    bundle = AgentBuilder().provider(model).tools(extra).plugins(_OfferTool(registry_def)).build()
    session = AgentSession(_NoTools(name="bare"), "s1", bundle)
    result = await session.submit_turn("go")
    assert result.ok
    assert ran == ["extra"]
    assert [t.name for t in model.requests[0].tools] == ["extra"]
    (answer,) = results_of(session)
    assert not answer.is_error
    assert answer.text == "extra ran"


# -------------------------------------------------------------------------- progress


class _CountingStore(InMemorySessionStore):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    async def append_messages(self, session_id: str, messages: Any, **kwargs: Any) -> None:
        self.writes += 1
        await super().append_messages(session_id, messages, **kwargs)


async def test_a_thousand_progress_lines_are_not_a_thousand_saves() -> None:
    @tool
    async def chatty(ctx: ToolContext) -> str:
        """Reports a lot."""
        for i in range(1000):
            await ctx.report_progress(f"line {i}")
        return "finished"

    store = _CountingStore()
    model = ScriptedProvider([tool_call_reply("chatty", id="c1"), "done"])
    session = make_session(model, chatty, store=store)
    assert (await session.submit_turn("go")).ok
    logs = [m for m in session.messages if isinstance(m, ToolLog)]
    assert [m.text for m in logs] == [f"line {i}" for i in range(1000)]
    # user, reply, results, reply: one save each; the progress rides along (plus one a second).
    assert store.writes < 10
    loaded = await AgentSession.load(store, "s1", BasicAgent(name="tester"), session.bundle)
    assert loaded.messages == session.messages  # nothing lost


async def test_progress_of_a_tool_that_talks_for_long_is_saved_while_it_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agcore.agent import _persistence

    monkeypatch.setattr(_persistence, "PROGRESS_SAVE_INTERVAL", 0.0)
    seen_in_store: list[int] = []
    store = _CountingStore()

    @tool
    async def slow(ctx: ToolContext) -> str:
        """Reports, and checks the store."""
        await ctx.report_progress("step 1")
        seen_in_store.append(len(await store.load_messages("s1")))
        return "ok"

    model = ScriptedProvider([tool_call_reply("slow", id="c1"), "done"])
    session = make_session(model, slow, store=store)
    assert (await session.submit_turn("go")).ok
    assert seen_in_store == [3]  # user, reply and the progress line were in the store mid-tool


# ------------------------------------------------------------------------- module graph


def test_the_agent_package_has_no_import_cycle_at_run_time() -> None:
    grimp = pytest.importorskip("grimp")
    root = Path(__file__).resolve().parents[2]
    import sys

    sys.path.insert(0, str(root))
    graph = grimp.build_graph("agcore", exclude_type_checking_imports=True, cache_dir=None)
    modules = sorted(m for m in graph.modules if m.startswith("agcore.agent._"))
    cycles = [
        (a, b) for a in modules for b in modules
        if a < b and graph.chain_exists(a, b) and graph.chain_exists(b, a)
    ]
    assert cycles == []
    # Errors are the bottom of the package: not even a type-only import of the session or the loop.
    full = grimp.build_graph("agcore", cache_dir=None)
    for upper in ("agcore.agent._session", "agcore.agent._loop", "agcore.agent._persistence"):
        assert not full.chain_exists("agcore.agent._errors", upper)


async def test_leaving_a_turn_block_early_ends_the_turn_before_the_next_line() -> None:
    model = ScriptedProvider([tool_call_reply("noop", id="c1"), "unused", "second turn"])
    observer = _TurnResults()
    bundle = AgentBuilder().provider(model).tools(noop).plugins(observer).build()
    session = AgentSession(BasicAgent(name="t"), "s1", bundle)
    async with session.turn("go") as events:
        async for event in events:
            if isinstance(event, ToolCallRequested):
                break
    # No await since the block: the turn has ended, in this task.
    assert not session.running
    assert session.last_result is not None
    assert session.last_result.stop == "cancelled"
    (result,) = results_of(session)
    assert "Cancelled" in result.text
    assert_history_valid(session)
    assert [r.stop for r in observer.results] == ["cancelled"]
    assert (await session.submit_turn("next")).text == "unused"


async def test_cancelling_the_caller_inside_a_turn_block_ends_the_turn_in_its_task() -> None:
    model = ScriptedProvider([tool_call_reply("noop", id="c1"), "unused"])
    session = make_session(model, noop)
    with anyio.CancelScope() as scope:
        async with session.turn("go") as events:
            async for event in events:
                if isinstance(event, ToolCallRequested):
                    scope.cancel()
                    await anyio.lowlevel.checkpoint()
    assert scope.cancelled_caught
    assert not session.running
    assert session.last_result is not None
    assert session.last_result.stop == "cancelled"
    assert_history_valid(session)


async def test_an_exception_in_the_caller_inside_a_turn_block_ends_the_turn() -> None:
    session = make_session(ScriptedProvider([tool_call_reply("noop", id="c1"), "unused"]), noop)

    async def reader() -> None:
        async with session.turn("go") as events:
            async for _ in events:
                raise KeyError("the caller's own bug")

    with pytest.raises(KeyError):
        await reader()
    assert session.last_result is not None
    assert session.last_result.stop == "cancelled"
    assert_history_valid(session)
    assert not session.running
