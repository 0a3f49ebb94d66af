"""The test doubles in ``agcore.testing``: scripted and function-backed providers."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from agcore.llm import (
    NO_RETRY,
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    LLMProvider,
    LLMRequest,
    Message,
    OverloadedError,
    RateLimitError,
    RetryPolicy,
    StopReason,
    StreamAssembler,
    StreamEvent,
    TextBlock,
    TextDelta,
    TextEnd,
    TextStart,
    ThinkingBlock,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UsageEvent,
    UserMessage,
)
from agcore.testing import (
    FunctionProvider,
    ScriptedProvider,
    ScriptExhaustedError,
    text_reply,
    tool_call_reply,
    tool_calls_reply,
)

CALL_ID = re.compile(r"^call_[0-9a-f]{24}$")
HI = [UserMessage(content="hi")]
READ = ToolDefinition(name="read_file", description="Read a file",
                      input_schema={"type": "object", "properties": {"path": {"type": "string"}}})


async def collect(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in stream]


def check_well_formed(events: list[StreamEvent]) -> AssistantMessage | None:
    """Assert Start/Delta*/End per block with indexes in order and one terminal event last; return
    the message the events assemble to (None for an ErrorEvent)."""
    assembler = StreamAssembler()
    open_index: int | None = None
    next_index = 0
    for event in events[:-1]:
        assert not isinstance(event, DoneEvent | ErrorEvent), "terminal event before the end"
        if isinstance(event, TextStart | ThinkingStart | ToolCallStart):
            assert open_index is None
            assert event.index == next_index
            open_index, next_index = event.index, next_index + 1
        elif isinstance(event, TextDelta | ThinkingDelta | ToolCallDelta):
            assert event.index == open_index
        elif isinstance(event, TextEnd | ThinkingEnd | ToolCallEnd):
            assert event.index == open_index
            open_index = None
        else:
            assert isinstance(event, UsageEvent)
        assembler.feed(event)
    last = events[-1]
    if isinstance(last, ErrorEvent):
        return None
    assert isinstance(last, DoneEvent)
    assert open_index is None
    assembled = assembler.message(stop_reason=last.message.stop_reason, model=last.message.model,
                                  provider=last.message.provider)
    assert assembled == last.message
    return last.message


def no_sleep_policy(attempts: int = 3) -> tuple[RetryPolicy, list[float]]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    return RetryPolicy(max_attempts=attempts, sleep=sleep), slept


# ------------------------------------------------------------------ replies


@pytest.mark.anyio
async def test_a_str_is_a_text_reply_stamped_with_the_provider() -> None:
    provider = ScriptedProvider(["Hello there."])
    response = await provider.complete(LLMRequest.build(HI))
    assert response.message.content == [TextBlock(text="Hello there.")]
    assert response.stop_reason is StopReason.END_TURN
    assert (response.message.model, response.message.provider) == ("scripted-model", "scripted")
    assert response.usage.input_tokens >= 1
    assert response.usage.output_tokens >= 1


@pytest.mark.anyio
async def test_streamed_text_is_chunked_and_assembles_to_the_same_message() -> None:
    text = "The quick brown fox jumps over the lazy dog."
    events = await collect(ScriptedProvider([text], chunk_size=8).stream(LLMRequest.build(HI)))
    message = check_well_formed(events)
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas == [text[i:i + 8] for i in range(0, len(text), 8)]
    completed = (await ScriptedProvider([text]).complete(LLMRequest.build(HI))).message
    assert message == completed


@pytest.mark.anyio
async def test_tool_call_reply_through_complete_and_stream() -> None:
    reply = tool_call_reply("read_file", {"path": "notes.md"}, text="Reading it.")
    provider = ScriptedProvider([reply, reply])
    completed = (await provider.complete(LLMRequest.build(HI, tools=[READ]))).message
    assert completed.text == "Reading it."
    (call,) = completed.tool_calls
    assert (call.name, call.input) == ("read_file", {"path": "notes.md"})
    assert CALL_ID.match(call.id)
    assert completed.stop_reason is StopReason.TOOL_USE

    events = await collect(provider.stream(LLMRequest.build(HI, tools=[READ])))
    streamed = check_well_formed(events)
    assert streamed == completed
    assert [type(e).__name__ for e in events] == [
        "TextStart", "TextDelta", "TextDelta", "TextEnd",
        "ToolCallStart", "ToolCallDelta", "ToolCallDelta", "ToolCallDelta", "ToolCallEnd",
        "UsageEvent", "DoneEvent",
    ]
    assert "".join(e.arguments for e in events if isinstance(e, ToolCallDelta)) == '{"path": "notes.md"}'


def test_reply_builders() -> None:
    several = tool_calls_reply([("read_file", {"path": "a"}), ("read_file", {"path": "b"})])
    assert [c.input for c in several.tool_calls] == [{"path": "a"}, {"path": "b"}]
    assert len({c.id for c in several.tool_calls}) == 2
    assert several.text == ""
    assert several.stop_reason is StopReason.TOOL_USE
    assert tool_call_reply("ls", id="toolu_1").tool_calls == [ToolUseBlock(id="toolu_1", name="ls")]
    assert text_reply("hi", usage=Usage(input_tokens=3)).usage == Usage(input_tokens=3)


@pytest.mark.anyio
async def test_an_assistant_message_keeps_what_it_gives_and_gets_the_rest_filled_in() -> None:
    given = AssistantMessage(
        content=[ThinkingBlock(thinking="hmm", provider="anthropic", signature="s"), TextBlock(text="ok")],
        stop_reason=StopReason.MAX_TOKENS, model="claude-x", provider="anthropic",
        usage=Usage(input_tokens=100, output_tokens=7),
    )
    bare = AssistantMessage(content=[ToolUseBlock(id="t1", name="ls")])
    provider = ScriptedProvider([given, bare, given])
    assert (await provider.complete(LLMRequest.build(HI))).message == given
    filled = (await provider.complete(LLMRequest.build(HI))).message
    assert filled.stop_reason is StopReason.TOOL_USE
    assert (filled.model, filled.provider) == ("scripted-model", "scripted")
    assert check_well_formed(await collect(provider.stream(LLMRequest.build(HI)))) == given


@pytest.mark.anyio
async def test_usage_estimate_grows_with_the_request_and_the_reply() -> None:
    provider = ScriptedProvider(["ok", "x" * 400])
    short = (await provider.complete(LLMRequest.build(HI))).usage
    long_request = LLMRequest.build([UserMessage(content="y" * 4000)], system="be brief")
    long = (await provider.complete(long_request)).usage
    assert short.input_tokens >= 1
    assert short.output_tokens >= 1
    assert long.input_tokens > 1000 > short.input_tokens
    assert long.output_tokens == 100


# ------------------------------------------------------------------ recording and exhaustion


@pytest.mark.anyio
async def test_requests_are_recorded() -> None:
    provider = ScriptedProvider(["one", "two", "three"])
    first = LLMRequest.build(HI, system="sys", tools=[READ], max_tokens=50, extra={"top_p": 0.5})
    await provider.complete(first)
    await collect(provider.stream(LLMRequest.build([UserMessage(content="again")], temperature=0.3)))
    assert provider.calls == 2
    assert provider.remaining == 1
    first, second = provider.requests
    assert (first.system, first.tools, first.max_tokens) == ("sys", [READ], 50)
    assert first.extra == {"top_p": 0.5}
    assert second.messages == [UserMessage(content="again")]
    assert second.temperature == 0.3
    assert provider.last_request is second


@pytest.mark.anyio
async def test_running_out_says_how_many_calls_and_what_to_do() -> None:
    provider = ScriptedProvider(["only one"])
    await provider.complete(LLMRequest.build(HI))
    with pytest.raises(ScriptExhaustedError) as caught:
        await provider.complete(LLMRequest.build(HI))
    assert "call 2" in caught.value.message
    assert "only 1 reply" in caught.value.message
    assert "add more to ScriptedProvider([...])" in caught.value.message
    events = await collect(provider.stream(LLMRequest.build(HI)))
    assert len(events) == 1
    assert isinstance(events[0], ErrorEvent)
    assert events[0].error_type == "ScriptExhaustedError"
    assert isinstance(events[0].to_exception(), ScriptExhaustedError)


def test_an_invalid_script_entry_is_refused_at_construction() -> None:
    with pytest.raises(TypeError, match="script entry 2 is a int"):
        ScriptedProvider(["fine", 42])  # type: ignore[list-item]


# ------------------------------------------------------------------ errors and retry


@pytest.mark.anyio
async def test_an_error_in_the_script_is_raised_by_complete_and_an_error_event_in_stream() -> None:
    limited = RateLimitError("slow down", status_code=429, retry_after=2.0)
    provider = ScriptedProvider([limited, RateLimitError("again", status_code=429), "after"])
    with pytest.raises(RateLimitError) as caught:
        await provider.complete(LLMRequest.build(HI))
    assert caught.value is limited
    assert (caught.value.provider, caught.value.model) == ("scripted", "scripted-model")
    events = await collect(provider.stream(LLMRequest.build(HI)))
    assert len(events) == 1
    error = events[0]
    assert isinstance(error, ErrorEvent)
    assert (error.error_type, error.status_code, error.is_retryable) == ("RateLimitError", 429, True)
    assert error.partial is None
    assert (await provider.complete(LLMRequest.build(HI))).text == "after"


@pytest.mark.anyio
async def test_retry_policy_consumes_an_overload_then_succeeds() -> None:
    policy, slept = no_sleep_policy()
    provider = ScriptedProvider(
        [OverloadedError("overloaded", status_code=529), "fine",
         OverloadedError("overloaded", status_code=529), "streamed fine"],
        retry_policy=policy,
    )
    assert (await provider.complete(LLMRequest.build(HI))).text == "fine"
    assert provider.calls == 2
    assert len(slept) == 1
    events = await collect(provider.stream(LLMRequest.build(HI)))
    assert isinstance(events[-1], DoneEvent)
    assert events[-1].message.text == "streamed fine"
    assert not any(isinstance(e, ErrorEvent) for e in events)
    assert provider.calls == 4
    assert len(slept) == 2


# ------------------------------------------------------------------ callables


@pytest.mark.anyio
async def test_callable_responses_see_the_request() -> None:
    seen: list[LLMRequest] = []

    def echo(request: LLMRequest) -> str:
        seen.append(request)
        return f"you said {request.messages[-1].blocks[0].text}"  # type: ignore[union-attr]

    async def call_the_tool(request: LLMRequest) -> AssistantMessage:
        await anyio.lowlevel.checkpoint()
        return tool_call_reply(request.tools[0].name, {"path": "x"})

    def refuse(request: LLMRequest) -> str:
        raise OverloadedError("busy", status_code=529)

    provider = ScriptedProvider([echo, call_the_tool, refuse])
    assert (await provider.complete(LLMRequest.build([UserMessage(content="ping")]))).text == "you said ping"
    assert seen == [provider.requests[0]]
    assert (await provider.complete(LLMRequest.build(HI, tools=[READ]))).tool_calls[0].name == "read_file"
    events = await collect(provider.stream(LLMRequest.build(HI)))
    assert isinstance(events[-1], ErrorEvent)
    assert events[-1].error_type == "OverloadedError"


@pytest.mark.anyio
async def test_a_callable_returning_nothing_is_a_clear_type_error() -> None:
    provider = ScriptedProvider([lambda request: None])  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="forget to return"):
        await provider.complete(LLMRequest.build(HI))


@pytest.mark.anyio
async def test_function_provider_sync_answers_from_the_conversation() -> None:
    def model(messages: list[Message], tools: list[ToolDefinition]) -> AssistantMessage | str:
        last = messages[-1]
        if isinstance(last, UserMessage) and last.tool_results:
            return f"The file says: {last.tool_results[0].text}"
        return tool_call_reply(tools[0].name, {"path": "notes.md"}, id="c1")

    provider = FunctionProvider(model)
    first = (await provider.complete(LLMRequest.build(HI, tools=[READ]))).message
    assert first.tool_calls == [ToolUseBlock(id="c1", name="read_file", input={"path": "notes.md"})]
    assert (first.model, first.provider) == ("function-model", "function")
    history = [*HI, first, UserMessage(content=[ToolResultBlock(tool_use_id="c1", content="buy milk")])]
    events = await collect(provider.stream(LLMRequest.build(history, tools=[READ])))
    message = check_well_formed(events)
    assert message is not None
    assert message.text == "The file says: buy milk"
    assert message.usage.input_tokens >= 1
    assert provider.calls == 2
    assert provider.last_request.messages == history


@pytest.mark.anyio
async def test_function_provider_async_and_errors() -> None:
    async def model(messages: list[Message], tools: list[ToolDefinition]) -> str:
        await anyio.lowlevel.checkpoint()
        if len(messages) > 1:
            raise RateLimitError("too many", status_code=429)
        return "async hello"

    provider = FunctionProvider(model, model_id="m", provider_name="p")
    response = await provider.complete(LLMRequest.build(HI))
    assert response.text == "async hello"
    assert (response.message.model, response.message.provider) == ("m", "p")
    events = await collect(provider.stream(LLMRequest.build([*HI, *HI])))
    assert isinstance(events[-1], ErrorEvent)
    assert events[-1].error_type == "RateLimitError"
    assert events[-1].provider == "p"


@pytest.mark.anyio
async def test_doubles_are_llm_providers_and_healthy() -> None:
    for provider in (ScriptedProvider([]), FunctionProvider(lambda messages, tools: "x")):
        assert isinstance(provider, LLMProvider)
        assert await provider.health_check() is True
        async with provider:
            pass


@pytest.mark.anyio
async def test_a_stream_can_be_cancelled_between_events() -> None:
    provider = ScriptedProvider(["x" * 400], chunk_size=1, retry_policy=NO_RETRY)
    seen: list[Any] = []
    with anyio.move_on_after(0) as scope:
        async for event in provider.stream(LLMRequest.build(HI)):
            seen.append(event)
    assert scope.cancelled_caught
    assert not any(isinstance(e, DoneEvent) for e in seen)
