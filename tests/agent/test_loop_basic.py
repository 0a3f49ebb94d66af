"""The loop's core paths: answers, tools (sequential, parallel, failing), provider errors and switches."""

from __future__ import annotations

import itertools
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from agcore.agent import (
    AgentBuilder,
    AgentConfig,
    AgentEventAdapter,
    AgentSession,
    AssistantReply,
    BasicAgent,
    Done,
    Failed,
    ProviderSwitched,
    TextDelta,
    ToolCallRequested,
    ToolResultReady,
    ToolResults,
    TurnEnded,
    TurnStarted,
    UserInput,
    convert_to_llm,
)
from agcore.llm import (
    AssistantMessage,
    LLMRequest,
    OverloadedError,
    RateLimitError,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from agcore.testing import FunctionProvider, ScriptedProvider, text_reply, tool_call_reply, tool_calls_reply
from agcore.tools import Tool, ToolError, tool

pytestmark = pytest.mark.anyio


def make_session(
    provider: Any, *tools: Any, config: AgentConfig | None = None, **kwargs: Any
) -> AgentSession:
    builder = AgentBuilder().provider(provider).config(config or AgentConfig())
    if tools:
        builder = builder.tools(*tools)
    agent = BasicAgent(name="tester", system_prompt="You are a test agent.")
    return AgentSession(agent, "s1", builder.build(), **kwargs)


def results_of(session: AgentSession) -> list[ToolResultBlock]:
    return [r for m in session.messages if isinstance(m, ToolResults) for r in m.results]


def assert_history_valid(session: AgentSession) -> None:
    """Every tool_use has exactly one tool_result, placed right after its reply."""
    open_ids: list[str] = []
    for message in session.messages:
        if isinstance(message, AssistantReply):
            assert not open_ids, f"calls {open_ids} unanswered before the next reply"
            open_ids = [c.id for c in message.message.tool_calls]
        elif isinstance(message, ToolResults):
            for r in message.results:
                assert r.tool_use_id in open_ids, f"result for unknown/answered call {r.tool_use_id}"
                open_ids.remove(r.tool_use_id)
    assert not open_ids, f"calls {open_ids} have no result"
    llm = convert_to_llm(session.messages)
    for a, b in itertools.pairwise(llm):
        assert a.role != b.role


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def test_plain_answer() -> None:
    model = ScriptedProvider(["Hello there."])
    session = make_session(model)
    result = await session.submit_turn("hi")
    assert result.stop == "done"
    assert result.text == "Hello there."
    assert result.turns == 1
    assert result.error is None
    assert [type(m) for m in result.messages] == [UserInput, AssistantReply]
    assert session.turn_index == 1
    assert model.last_request.system == "You are a test agent."
    assert model.last_request.messages == [UserMessage(content="hi")]
    assert result.usage.total_tokens > 0
    assert session.usage.usage == result.usage


async def test_tool_then_answer_records_history_in_order() -> None:
    model = ScriptedProvider([tool_call_reply("add", {"a": 2, "b": 3}, id="c1"), "It is 5."])
    session = make_session(model, add)
    result = await session.submit_turn("2+3?")
    assert result.stop == "done"
    assert result.text == "It is 5."
    assert result.turns == 2
    assert results_of(session) == [ToolResultBlock(tool_use_id="c1", content="5")]
    # The second call sees the whole exchange, the tool result as user content.
    second = model.requests[1]
    assert [m.role for m in second.messages] == ["user", "assistant", "user"]
    assert second.messages[2].content == [ToolResultBlock(tool_use_id="c1", content="5")]
    assert [t.name for t in second.tools] == ["add"]
    assert_history_valid(session)


async def test_stream_turn_event_sequence() -> None:
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 1}, id="c1"), "Two, final answer."],
                             chunk_size=4)
    session = make_session(model, add)
    events = [e async for e in session.stream_turn("1+1")]
    kinds = [type(e) for e in events]
    assert kinds[:2] == [TurnStarted, TurnEnded]
    assert kinds[2:4] == [ToolCallRequested, ToolResultReady]
    assert kinds[4] is TurnStarted
    assert kinds[-1] is Done
    deltas = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert deltas == "Two, final answer."
    done = events[-1]
    assert isinstance(done, Done)
    assert done.text == "Two, final answer."
    assert done.turns == 2
    assert session.last_result is not None
    assert session.last_result.text == done.text
    # Events serialise and read back.
    for event in events:
        assert AgentEventAdapter.validate_json(event.model_dump_json()) == event


async def test_parallel_tools_run_concurrently_and_results_keep_call_order() -> None:
    first_started = anyio.Event()
    second_started = anyio.Event()

    @tool
    async def ping() -> str:
        """Wait for pong."""
        first_started.set()
        await second_started.wait()
        return "ping done"

    @tool
    async def pong() -> str:
        """Wait for ping."""
        second_started.set()
        await first_started.wait()
        return "pong done"

    reply = tool_calls_reply([ToolUseBlock(id="a", name="ping"), ToolUseBlock(id="b", name="pong")])
    session = make_session(ScriptedProvider([reply, "both done"]), ping, pong)
    with anyio.fail_after(5):  # sequential execution would deadlock here
        result = await session.submit_turn("go")
    assert result.stop == "done"
    assert [(r.tool_use_id, r.content) for r in results_of(session)] == [
        ("a", "ping done"), ("b", "pong done")
    ]
    tool_messages = [m for m in session.messages if isinstance(m, ToolResults)]
    assert len(tool_messages) == 1  # one ToolResults message per batch


async def test_sequential_tools_when_parallel_is_off() -> None:
    order: list[str] = []

    @tool
    async def step(name: str) -> str:
        """Record a step."""
        order.append(f"start {name}")
        await anyio.lowlevel.checkpoint()
        order.append(f"end {name}")
        return name

    reply = tool_calls_reply([("step", {"name": "x"}), ("step", {"name": "y"})])
    session = make_session(ScriptedProvider([reply, "ok"]), step,
                           config=AgentConfig(parallel_tool_calls=False))
    await session.submit_turn("go")
    assert order == ["start x", "end x", "start y", "end y"]


async def test_tool_error_is_fed_back_and_loop_continues() -> None:
    @tool
    def explode() -> str:
        """Always fails."""
        raise ToolError("disk is full, free some space")

    model = ScriptedProvider([tool_call_reply("explode", id="c1"), "Sorry, the disk is full."])
    session = make_session(model, explode)
    result = await session.submit_turn("go")
    assert result.stop == "done"
    (res,) = results_of(session)
    assert res.is_error
    assert "disk is full" in res.text
    assert model.requests[1].messages[-1].content == [res]


async def test_unknown_tool_gets_error_result() -> None:
    model = ScriptedProvider([tool_call_reply("ad", {"a": 1, "b": 2}, id="c1"), "oops"])
    session = make_session(model, add)
    events = [e async for e in session.stream_turn("go")]
    (res,) = results_of(session)
    assert res.is_error
    assert "Unknown tool 'ad'" in res.text
    assert "Did you mean 'add'" in res.text
    requested = [e for e in events if isinstance(e, ToolCallRequested)]
    assert requested[0].mode == "unknown"
    ready = [e for e in events if isinstance(e, ToolResultReady)]
    assert ready[0].status == "unknown_tool"


async def test_invalid_arguments_get_error_result() -> None:
    model = ScriptedProvider([tool_call_reply("add", {"a": "many", "b": 2}, id="c1"), "fixed"])
    session = make_session(model, add)
    await session.submit_turn("go")
    (res,) = results_of(session)
    assert res.is_error
    assert "Invalid arguments for tool 'add'" in res.text
    assert "'a'" in res.text


async def test_parse_error_call_gets_error_result_and_tool_does_not_run() -> None:
    ran: list[bool] = []

    @tool
    def touch() -> str:
        """Mark."""
        ran.append(True)
        return "ok"

    call = ToolUseBlock(id="c1", name="touch", parse_error="The tool arguments are not valid JSON.")
    model = ScriptedProvider([tool_calls_reply([call]), "done"])
    session = make_session(model, touch)
    await session.submit_turn("go")
    (res,) = results_of(session)
    assert res.is_error
    assert "not valid JSON" in res.text
    assert ran == []


async def test_tool_timeout_from_config() -> None:
    @tool
    async def slow() -> str:
        """Sleeps."""
        await anyio.sleep(10)
        return "never"

    model = ScriptedProvider([tool_call_reply("slow", id="c1"), "gave up"])
    session = make_session(model, slow, config=AgentConfig(tool_timeout=0.05))
    with anyio.fail_after(5):
        result = await session.submit_turn("go")
    (res,) = results_of(session)
    assert res.is_error
    assert "timed out after 0.05s" in res.text
    assert result.stop == "done"


async def test_llm_error_returns_error_result_and_keeps_history_clean() -> None:
    model = ScriptedProvider([RateLimitError("slow down", retry_after=1.0)])
    session = make_session(model)
    events = [e async for e in session.stream_turn("hi")]
    result = session.last_result
    assert result is not None
    assert result.stop == "error"
    assert result.error is not None
    assert result.error.is_recoverable()
    assert isinstance(events[-1], Failed)
    assert events[-1].recoverable
    assert [type(m) for m in session.messages] == [UserInput]  # nothing half-done recorded
    # The next turn works and sees both user inputs merged into one user message.
    model.add("back again")
    result = await session.submit_turn("retry")
    assert result.text == "back again"
    assert model.last_request.messages == [
        UserMessage(content=[TextBlock(text="hi"), TextBlock(text="retry")])
    ]


async def test_llm_error_after_tool_round_keeps_results() -> None:
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}, id="c1"),
                              OverloadedError("busy")])
    session = make_session(model, add)
    result = await session.submit_turn("go")
    assert result.stop == "error"
    assert result.turns == 2
    assert results_of(session)[0].content == "3"
    assert_history_valid(session)


async def test_provider_switch_mid_loop_hands_off_full_history() -> None:
    first = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}, id="c1")],
                             provider_name="alpha", model_id="alpha-1")
    second = ScriptedProvider(["three"], provider_name="beta", model_id="beta-1")
    chosen: list[LLMRequest] = []

    async def resolver(session: AgentSession, request: LLMRequest) -> Any:
        chosen.append(request)
        return first if len(chosen) == 1 else second

    bundle = (AgentBuilder().provider_resolver(resolver).tools(add).build())
    session = AgentSession(BasicAgent(name="a", system_prompt=None), "s", bundle)
    events = [e async for e in session.stream_turn("1+2")]
    switches = [e for e in events if isinstance(e, ProviderSwitched)]
    assert switches == [ProviderSwitched(from_provider="alpha", from_model="alpha-1",
                                         to_provider="beta", to_model="beta-1")]
    handed = second.last_request.messages
    assert [m.role for m in handed] == ["user", "assistant", "user"]
    assert isinstance(handed[1], AssistantMessage)
    assert handed[1].provider == "alpha"
    assert handed[2].content == [ToolResultBlock(tool_use_id="c1", content="3")]
    assert session.last_result is not None
    assert session.last_result.text == "three"
    assert set(session.usage.by_model) == {"alpha-1", "beta-1"}


async def test_context_transform_sees_and_rewrites_model_view() -> None:
    seen: list[int] = []

    async def keep_last(messages: list[Any]) -> list[Any]:
        seen.append(len(messages))
        return messages[-1:]

    model = ScriptedProvider(["one", "two"])
    session = make_session(model, transform=keep_last)
    await session.submit_turn("first")
    await session.submit_turn("second")
    assert seen == [1, 3]
    assert model.last_request.messages == [UserMessage(content="second")]
    assert len(session.messages) == 4  # the stored history is untouched


async def test_function_provider_multi_turn_history() -> None:
    def echo(messages: list[Any], tools: list[Any]) -> str:
        return f"seen {len(messages)}"

    session = make_session(FunctionProvider(echo))
    assert (await session.submit_turn("a")).text == "seen 1"
    assert (await session.submit_turn("b")).text == "seen 3"
    assert session.turn_index == 2
    assert session.history_for_llm()[-1] == AssistantMessage(
        content=[TextBlock(text="seen 3")], stop_reason="end_turn", model="function-model",
        provider="function", usage=session.history_for_llm()[-1].usage,  # type: ignore[union-attr]
    )


async def test_concurrent_turns_on_one_session_are_refused() -> None:
    gate = anyio.Event()

    async def wait(request: LLMRequest) -> str:
        await gate.wait()
        return "ok"

    session = make_session(ScriptedProvider([wait]))
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.submit_turn, "one")
        await anyio.wait_all_tasks_blocked()
        assert session.running
        with pytest.raises(RuntimeError, match="already running"):
            await session.submit_turn("two")
        gate.set()
    assert session.last_result is not None
    assert session.last_result.text == "ok"


async def test_tool_returning_blocks_and_client_tool_mode_reported() -> None:
    client = Tool.client("show", "Show to the user")
    model = ScriptedProvider([tool_call_reply("show", {"x": 1}, id="c1")])
    session = make_session(model, client)
    events = [e async for e in session.stream_turn("go")]
    requested = [e for e in events if isinstance(e, ToolCallRequested)]
    assert requested[0].mode == "client"
    assert text_reply("x").text == "x"


async def test_a_read_and_a_change_in_one_reply_run_in_the_models_order() -> None:
    order: list[str] = []

    async def look() -> str:
        order.append("start look")
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        order.append("end look")
        return "seen"

    async def change() -> str:
        order.append("start change")
        await anyio.lowlevel.checkpoint()
        order.append("end change")
        return "changed"

    read_only = Tool.from_function(look, name="look", description="Look.", read_only=True)
    writes = Tool.from_function(change, name="change", description="Change.")
    reply = tool_calls_reply([ToolUseBlock(id="a", name="look"), ToolUseBlock(id="b", name="change")])
    session = make_session(ScriptedProvider([reply, "done"]), read_only, writes)
    await session.submit_turn("go")
    assert order == ["start look", "end look", "start change", "end change"]
