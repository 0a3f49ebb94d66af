"""Switching backends in one line: ``AgentBuilder().backend("langgraph")`` and ``open_session``.

LangGraph runs on asyncio only, so this module runs on asyncio only (not on trio).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, ConfigError, backend_names, open_session
from agcore.integrations.langgraph import GraphSession
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import tool

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@tool
def shout(text: str) -> str:
    """Shout."""
    return text.upper()


def build(backend: str | None) -> AgentBuilder:
    builder = AgentBuilder().provider(ScriptedProvider([tool_call_reply("shout", {"text": "hi"}), "HI"]))
    builder.tools(shout)
    return builder.backend(backend) if backend is not None else builder


@pytest.mark.parametrize("backend", [None, "loop", "langgraph"])
async def test_one_line_picks_the_backend_and_the_turn_is_the_same(backend: str | None) -> None:
    bundle = build(backend).build()
    session = open_session(BasicAgent(name="a", system_prompt="s"), "s1", bundle)
    assert isinstance(session, GraphSession if backend == "langgraph" else AgentSession)
    result = await session.submit_turn("shout hi")
    assert result.stop == "done"
    assert result.text == "HI"
    assert [m.kind for m in session.messages] == ["user", "assistant", "tool_results", "assistant"]
    await session.close()


def test_the_installed_backends_are_listed() -> None:
    assert backend_names()[:1] == ["loop"]
    assert "langgraph" in backend_names()


def test_an_unknown_backend_fails_at_build_with_what_to_do() -> None:
    with pytest.raises(ConfigError, match="No session backend named 'temporal'") as caught:
        build("temporal").build()
    assert caught.value.piece == "backend"
    assert "the installed ones are loop, langgraph. Choose one of them." in str(caught.value)
    assert "pip install" not in str(caught.value)  # langgraph is installed: nothing to install


def test_an_abbreviated_installed_backend_gets_did_you_mean() -> None:
    with pytest.raises(ConfigError, match="Did you mean 'langgraph'") as caught:
        build("lg").build()
    assert "pip install" not in str(caught.value)


def test_a_misspelt_installed_backend_gets_did_you_mean() -> None:
    with pytest.raises(ConfigError, match="Did you mean 'langgraph'") as caught:
        build("langgrph").build()
    assert "pip install" not in str(caught.value)  # it is installed: the advice was misleading


async def test_a_batch_longer_than_langgraphs_step_cap_runs_whole_as_on_the_loop() -> None:
    from agcore.agent import AgentConfig, AgentSession
    from agcore.integrations.langgraph import recursion_limit
    from agcore.testing import tool_calls_reply

    config = AgentConfig(max_turns=2, parallel_tool_calls=False)
    calls = recursion_limit(config)  # a sequential batch this long needs twice as many graph steps
    histories: list[tuple[list[str], list[object], str]] = []
    for backend in ("loop", "graph"):
        batch = tool_calls_reply([("shout", {"text": str(i)}) for i in range(calls)])
        bundle = AgentBuilder().provider(ScriptedProvider([batch, "ok"])).tools(shout).config(config).build()
        agent = BasicAgent(name="a", system_prompt="s")
        session = (AgentSession(agent, "deep", bundle) if backend == "loop"
                   else GraphSession(agent, "deep", bundle))
        result = await session.submit_turn("shout a lot")
        assert result.stop == "done"  # the step budget grew with the batch: both model calls were made
        assert result.turns == 2
        history = session.messages
        [results] = [m for m in history if m.kind == "tool_results"]
        histories.append(([m.kind for m in history], [r.content for r in results.results],
                          history[-1].text))
    assert histories[0] == histories[1]
    kinds = ["user", "assistant", "tool_results", "assistant"]
    assert histories[1] == (kinds, [str(i) for i in range(calls)], "ok")


async def test_a_streamed_turn_past_the_step_cap_ends_in_done_and_is_reported() -> None:
    from agcore.agent import AgentConfig, Done
    from agcore.hooks import hookimpl
    from agcore.integrations.langgraph import recursion_limit
    from agcore.testing import tool_calls_reply

    class Results:
        def __init__(self) -> None:
            self.stops: list[str] = []

        @hookimpl
        def on_turn_result(self, ctx: object, result: object) -> None:
            self.stops.append(getattr(result, "stop", "?"))

    config = AgentConfig(max_turns=2, parallel_tool_calls=False)
    calls = recursion_limit(config)
    model = ScriptedProvider([tool_calls_reply([("shout", {"text": str(i)}) for i in range(calls)]), "ok"])
    seen = Results()
    bundle = AgentBuilder().provider(model).tools(shout).config(config).plugins(seen).build()
    session = GraphSession(BasicAgent(name="a", system_prompt="s"), "deep-stream", bundle)

    events = [event async for event in session.stream_turn("shout a lot")]

    assert isinstance(events[-1], Done)  # every stream ends in Done or Failed
    assert events[-1].text == "ok"
    assert sum(e.type == "tool_result_ready" for e in events) == calls
    assert seen.stops == ["done"]


async def test_leaving_a_graph_stream_early_ends_the_run_and_the_session_goes_on() -> None:
    from contextlib import aclosing

    from agcore.testing import tool_calls_reply

    model = ScriptedProvider([tool_calls_reply([("shout", {"text": "a"})]), "A", "next"])
    bundle = AgentBuilder().provider(model).tools(shout).build()
    session = GraphSession(BasicAgent(name="a", system_prompt="s"), "early", bundle)
    async with aclosing(session.stream_turn("shout")) as events:
        async for event in events:
            if event.type == "tool_call_requested":
                break  # the user walks away mid-turn
    result = await session.submit_turn("anything else?")
    assert result.stop == "done"
    history = await session.history()
    # As on the loop: the reply the model gave is kept, and its call answered "cancelled" at once.
    assert [m.kind for m in history] == ["user", "assistant", "tool_results", "user", "assistant"]
    assert "Cancelled" in history[2].results[0].text
    assert history[-1].text == "A"
    calls = [c.id for m in history if m.kind == "assistant" for c in m.tool_calls]
    answered = [r.tool_use_id for m in history if m.kind == "tool_results" for r in m.results]
    assert sorted(calls) == sorted(answered)  # every call answered exactly once


async def test_concurrent_sessions_on_one_graph_keep_to_their_own_history() -> None:
    import anyio

    from agcore.integrations.langgraph import AgentGraph, compile_agent
    from agcore.llm import Message, ToolDefinition, UserMessage
    from agcore.testing import FunctionProvider

    def echo_model(messages: list[Message], tools: list[ToolDefinition]) -> Any:
        last = messages[-1]
        if isinstance(last, UserMessage) and isinstance(last.content, str):
            return tool_call_reply("shout", {"text": last.content})
        return f"done: {[b.content for b in last.content if getattr(b, 'type', '') == 'tool_result']}"

    bundle = AgentBuilder().provider(FunctionProvider(echo_model)).tools(shout).build()
    agent = BasicAgent(name="a", system_prompt="s")
    graph = AgentGraph(agent, bundle)
    bare = compile_agent(agent, bundle)  # no checkpointer, no thread ids: one conversation per run
    texts: dict[str, str] = {}

    async def on_session(i: int) -> None:
        session = graph.session(f"s{i}")
        result = await session.submit_turn(f"word{i}")
        texts[f"s{i}"] = result.text

    async def on_bare(i: int) -> None:
        state = await bare.ainvoke({"input": f"bare{i}"}, {"configurable": {"agcore_events": False}})
        texts[f"b{i}"] = state["messages"][-1].text

    async with anyio.create_task_group() as group:
        for i in range(8):
            group.start_soon(on_session, i)
            group.start_soon(on_bare, i)
    assert texts == {**{f"s{i}": f"done: ['WORD{i}']" for i in range(8)},
                     **{f"b{i}": f"done: ['BARE{i}']" for i in range(8)}}


async def test_sessions_attached_to_a_graph_outlive_its_cache_of_bare_threads() -> None:
    from agcore.integrations.langgraph import AgentGraph

    model = ScriptedProvider(["one", "two", "three", "bare", "again", "and more"])
    graph = AgentGraph(BasicAgent(name="a", system_prompt="s"), build(None).provider(model).build())
    graph.threads._capacity = 1  # the cache of bare threads holds one: it must not drop sessions
    sessions = [graph.session(f"t{i}") for i in range(3)]
    config: Any = {"configurable": {"thread_id": "bare", "agcore_events": False}}
    for session in sessions:
        await session.submit_turn("hi")
    await graph.compiled.ainvoke({"input": "hi"}, config)
    assert [s.last_result.text if s.last_result else None for s in sessions] == ["one", "two", "three"]
    session = sessions[0]
    session.follow_up("and?")  # queued on the session object the nodes use
    assert (await session.submit_turn("again")).turns == 2


async def test_wrong_calls_get_clear_errors_and_the_session_stays_usable() -> None:
    from agcore.integrations.langgraph import compile_agent
    from agcore.llm import ToolResultBlock
    from agcore.tools import Tool

    ask = Tool.client("ask", "Ask the user.", {"type": "object", "properties": {}})
    model = ScriptedProvider([tool_call_reply("ask", {}, id="q1"), "thanks", "hello"])
    bundle = AgentBuilder().provider(model).tools(ask).build()
    agent = BasicAgent(name="a", system_prompt="s")
    session = GraphSession(agent, "errors", bundle)
    with pytest.raises(RuntimeError, match="needs a turn paused for client tools"):
        await session.resume([])
    with pytest.raises(RuntimeError, match="needs a turn waiting for a confirmation"):
        await session.approve(True)
    paused = await session.submit_turn("ask me")
    assert paused.stop == "client_tools"
    assert (await session.pending() or {}).get("type") == "agcore.client_tools"
    with pytest.raises(ValueError, match=r"answers no pending client call.*q1"):
        await session.resume([ToolResultBlock(tool_use_id="nope", content="x")])
    done = await session.resume([ToolResultBlock(tool_use_id="q1", content="blue")])
    assert done.text == "thanks"
    assert (await session.submit_turn("hi")).text == "hello"

    graph = compile_agent(agent, bundle)
    with pytest.raises(ValueError, match=re.escape("invoke it with {'input': 'your message'}")):
        await graph.ainvoke({}, {"configurable": {"thread_id": "x"}})
