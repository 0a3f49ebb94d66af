"""OpenAIProvider.stream() against OpenAI's real SSE chunk stream, through respx."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpcore2
import httpx
import pytest
import respx

from agcore.llm.errors import (
    ContextWindowExceededError,
    RateLimitError,
    ResponseFormatError,
    ServerError,
    StreamInterruptedError,
)
from agcore.llm.events import (
    DoneEvent,
    ErrorEvent,
    StreamEvent,
    TextDelta,
    TextEnd,
    TextStart,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from agcore.llm.types import AssistantMessage, LLMRequest, StopReason, TextBlock, ToolUseBlock, Usage
from tests.llm.test_openai_provider import (
    CHAT,
    HI,
    MODEL,
    REQUEST_ID,
    ROLE,
    SSE_HEADERS,
    WEATHER,
    chunk,
    collect,
    make,
    openai_router,
    pieces,
    respond_sse,
    sent,
    sse,
    text_chunks,
    usage_chunk,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    yield from openai_router(monkeypatch)


def stream_route(router: respx.MockRouter, body: Any) -> respx.Route:
    return router.post(CHAT).mock(return_value=respond_sse(body))


def call_start(index: int, call_id: str, name: str) -> dict[str, Any]:
    return chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                  "function": {"name": name, "arguments": ""}}]})


def call_args(index: int, fragment: str) -> dict[str, Any]:
    return chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})


async def test_text_stream_events_and_request(api: respx.MockRouter) -> None:
    route = stream_route(api, sse(*text_chunks("Hello", " there", "!")))
    events = await collect(make().stream(LLMRequest.build(HI, max_tokens=100)))
    message = AssistantMessage(content=[TextBlock(text="Hello there!")], stop_reason=StopReason.END_TURN,
                               model=MODEL, provider="openai", usage=Usage(input_tokens=19, output_tokens=10))
    assert events == [
        TextStart(index=0),
        TextDelta(index=0, text="Hello"),
        TextDelta(index=0, text=" there"),
        TextDelta(index=0, text="!"),
        TextEnd(index=0, text="Hello there!"),
        UsageEvent(usage=Usage(input_tokens=19, output_tokens=10)),
        DoneEvent(message=message, request_id=REQUEST_ID),
    ]
    assert sent(route) == {
        "model": MODEL,
        "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
        "max_completion_tokens": 100,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def test_stream_and_complete_agree(api: respx.MockRouter) -> None:
    from tests.llm.test_openai_provider import completion, respond_json

    api.post(CHAT).mock(side_effect=[
        respond_sse(sse(*text_chunks("Hello", " there"))),
        respond_json(completion({"content": "Hello there"})),
    ])
    provider = make()
    done = (await collect(provider.stream(LLMRequest.build(HI))))[-1]
    assert isinstance(done, DoneEvent)
    assert done.message == (await provider.complete(LLMRequest.build(HI))).message


async def test_two_parallel_tool_calls_with_interleaved_arguments(api: respx.MockRouter) -> None:
    stream_route(api, sse(
        chunk({"role": "assistant", "content": None, "refusal": None, "tool_calls": [{
            "index": 0, "id": "call_paris", "type": "function",
            "function": {"name": "get_weather", "arguments": ""}}]}),
        call_args(0, '{"ci'),
        call_start(1, "call_tokyo", "get_weather"),
        call_args(1, '{"city": '),
        call_args(0, 'ty": "Par'),
        call_args(1, '"Tokyo"}'),
        call_args(0, 'is"}'),
        chunk({}, "tool_calls"),
        usage_chunk(80, 40),
    ))
    events = await collect(make().stream(LLMRequest.build(HI, tools=[WEATHER])))
    paris = ToolUseBlock(id="call_paris", name="get_weather", input={"city": "Paris"})
    tokyo = ToolUseBlock(id="call_tokyo", name="get_weather", input={"city": "Tokyo"})
    assert events[:-1] == [
        ToolCallStart(index=0, id="call_paris", name="get_weather"),
        ToolCallDelta(index=0, arguments='{"ci'),
        ToolCallStart(index=1, id="call_tokyo", name="get_weather"),
        ToolCallDelta(index=1, arguments='{"city": '),
        ToolCallDelta(index=0, arguments='ty": "Par'),
        ToolCallDelta(index=1, arguments='"Tokyo"}'),
        ToolCallDelta(index=0, arguments='is"}'),
        ToolCallEnd(index=0, tool_call=paris),
        ToolCallEnd(index=1, tool_call=tokyo),
        UsageEvent(usage=Usage(input_tokens=80, output_tokens=40)),
    ]
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.content == [paris, tokyo]
    assert done.message.stop_reason is StopReason.TOOL_USE


async def test_text_then_tool_call(api: respx.MockRouter) -> None:
    stream_route(api, sse(
        chunk(ROLE), chunk({"content": "Checking."}),
        call_start(0, "call_1", "get_weather"), call_args(0, '{"city":"Paris"}'),
        chunk({}, "tool_calls"), usage_chunk(),
    ))
    events = await collect(make().stream(LLMRequest.build(HI)))
    assert [type(e) for e in events] == [TextStart, TextDelta, ToolCallStart, ToolCallDelta, TextEnd,
                                         ToolCallEnd, UsageEvent, DoneEvent]
    assert events[2] == ToolCallStart(index=1, id="call_1", name="get_weather")
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.content == [TextBlock(text="Checking."),
                                    ToolUseBlock(id="call_1", name="get_weather", input={"city": "Paris"})]


async def test_reasoning_content_deltas_become_thinking(api: respx.MockRouter) -> None:
    stream_route(api, sse(
        chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        chunk({"content": None, "reasoning_content": "The user wants"}),
        chunk({"content": None, "reasoning_content": " a greeting."}),
        chunk({"content": "Hi!", "reasoning_content": None}),
        chunk({}, "stop"),
        usage_chunk(),
    ))
    events = await collect(make().stream(LLMRequest.build(HI)))
    thinking = events[3]
    assert isinstance(thinking, ThinkingEnd)
    assert events[:3] == [ThinkingStart(index=0), ThinkingDelta(index=0, thinking="The user wants"),
                          ThinkingDelta(index=0, thinking=" a greeting.")]
    assert thinking.block.thinking == "The user wants a greeting."
    assert thinking.block.provider == "openai"
    assert events[4:7] == [TextStart(index=1), TextDelta(index=1, text="Hi!"), TextEnd(index=1, text="Hi!")]


async def test_usage_chunk_counts_cached_tokens_apart(api: respx.MockRouter) -> None:
    stream_route(api, sse(chunk(ROLE), chunk({"content": "ok"}), chunk({}, "stop"),
                          usage_chunk(2006, 300, 1920)))
    events = await collect(make().stream(LLMRequest.build(HI)))
    usage = Usage(input_tokens=86, output_tokens=300, cache_read_tokens=1920)
    assert UsageEvent(usage=usage) in events
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.usage == usage


async def test_refusal_deltas(api: respx.MockRouter) -> None:
    stream_route(api, sse(chunk(ROLE), chunk({"refusal": "I'm sorry, "}), chunk({"refusal": "I can't."}),
                          chunk({}, "stop"), usage_chunk()))
    done = (await collect(make().stream(LLMRequest.build(HI))))[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.content == [TextBlock(text="I'm sorry, I can't.")]
    assert done.message.stop_reason is StopReason.REFUSAL


@pytest.mark.parametrize(("finish_reason", "stop_reason"), [
    ("length", StopReason.MAX_TOKENS), ("content_filter", StopReason.REFUSAL), ("stop", StopReason.END_TURN)])
async def test_finish_reason_in_stream(
    api: respx.MockRouter, finish_reason: str, stop_reason: StopReason
) -> None:
    stream_route(api, sse(*text_chunks("Once upon", finish_reason=finish_reason)))
    done = (await collect(make().stream(LLMRequest.build(HI))))[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.stop_reason is stop_reason


async def test_malformed_streamed_arguments(api: respx.MockRouter) -> None:
    stream_route(api, sse(
        call_start(0, "call_ok", "get_weather"), call_args(0, "{'city': 'Paris',}"),
        call_start(1, "call_bad", "get_weather"), call_args(1, "city=Paris"),
        chunk({}, "tool_calls"), usage_chunk(),
    ))
    done = (await collect(make().stream(LLMRequest.build(HI))))[-1]
    assert isinstance(done, DoneEvent)
    repaired, broken = done.message.tool_calls
    assert (repaired.input, repaired.parse_error) == ({"city": "Paris"}, None)
    assert broken.input == {}
    assert broken.parse_error is not None
    assert "city=Paris" in broken.parse_error


async def test_stream_cut_without_finish_is_interrupted_with_partial_text(api: respx.MockRouter) -> None:
    stream_route(api, sse(chunk(ROLE), chunk({"content": "The weather"}), chunk({"content": " in Paris"}),
                          done=False))
    events = await collect(make().stream(LLMRequest.build(HI)))
    assert events[:3] == [TextStart(index=0), TextDelta(index=0, text="The weather"),
                          TextDelta(index=0, text=" in Paris")]
    error = events[-1]
    assert isinstance(error, ErrorEvent)
    assert error.error_type == "StreamInterruptedError"
    assert error.is_retryable
    assert error.partial is not None
    assert error.partial.content == [TextBlock(text="The weather in Paris")]
    assert error.partial.stop_reason is None


async def test_connection_lost_mid_stream_is_interrupted_with_partial(api: respx.MockRouter) -> None:
    body = sse(chunk(ROLE), chunk({"content": "Partly"}), chunk({"content": " cloudy"}), chunk({}, "stop"))
    cut = body.index(b'" cloudy"') + 4  # inside the third event
    lost = httpcore2.RemoteProtocolError("peer closed connection without sending complete message body")
    stream_route(api, pieces(body[:cut], [40], lost))
    events = await collect(make().stream(LLMRequest.build(HI)))
    error = events[-1]
    assert isinstance(error, ErrorEvent)
    assert isinstance(error.to_exception(), StreamInterruptedError)
    assert "api.openai.com" in error.message
    assert error.partial is not None
    assert error.partial.text == "Partly"
    assert not any(isinstance(e, DoneEvent) for e in events)


async def test_connection_lost_after_the_reply_finished_is_not_a_failure(api: respx.MockRouter) -> None:
    body = sse(chunk(ROLE), chunk({"content": "Done."}), chunk({}, "stop"), usage_chunk(), done=False)
    stream_route(api, pieces(body, [], httpcore2.ReadError("connection reset by peer")))
    done = (await collect(make().stream(LLMRequest.build(HI))))[-1]
    assert isinstance(done, DoneEvent)  # everything the reply needs had arrived
    assert done.message.text == "Done."
    assert done.message.usage == Usage(input_tokens=19, output_tokens=10)


async def test_in_stream_error_object_is_mapped(api: respx.MockRouter) -> None:
    stream_route(api, sse(
        chunk(ROLE), chunk({"content": "Sure"}),
        {"error": {"message": "The server had an error while processing your request. Sorry about that!",
                   "type": "server_error", "param": None, "code": None}},
        done=False,
    ))
    events = await collect(make().stream(LLMRequest.build(HI)))
    error = events[-1]
    assert isinstance(error, ErrorEvent)
    exc = error.to_exception()
    assert isinstance(exc, ServerError)
    assert "The server had an error" in error.message
    assert error.partial is not None
    assert error.partial.text == "Sure"


@pytest.mark.parametrize(("body", "kind"), [
    ({"message": "Rate limit reached for gpt-4.1", "type": "requests", "code": "rate_limit_exceeded"},
     RateLimitError),
    ({"message": "This model's maximum context length is 128000 tokens.", "type": "invalid_request_error",
      "code": "context_length_exceeded"}, ContextWindowExceededError),
    ({"message": "Internal error", "code": 503}, ServerError),
])
async def test_in_stream_error_kinds(
    api: respx.MockRouter, body: dict[str, Any], kind: type[Exception]
) -> None:
    stream_route(api, sse({"error": body}, done=False))
    error = (await collect(make().stream(LLMRequest.build(HI))))[-1]
    assert isinstance(error, ErrorEvent)
    assert isinstance(error.to_exception(), kind)
    assert error.partial is None


async def test_done_without_finish_reason_still_completes(api: respx.MockRouter) -> None:
    stream_route(api, sse(chunk(ROLE), chunk({"content": "Hi"})))  # a server that forgets finish_reason
    events = await collect(make().stream(LLMRequest.build(HI)))
    assert events[-2:] == [
        TextEnd(index=0, text="Hi"),
        DoneEvent(message=AssistantMessage(content=[TextBlock(text="Hi")], stop_reason=StopReason.END_TURN,
                                           model=MODEL, provider="openai"), request_id=REQUEST_ID),
    ]


async def test_garbage_data_is_a_format_error(api: respx.MockRouter) -> None:
    stream_route(api, b"data: {not json\n\n")
    error = (await collect(make().stream(LLMRequest.build(HI))))[-1]
    assert isinstance(error, ErrorEvent)
    assert isinstance(error.to_exception(), ResponseFormatError)
    assert "OpenAI-compatible" in error.message


async def test_sse_split_anywhere_reads_the_same(api: respx.MockRouter) -> None:
    body = sse(chunk(ROLE), chunk({"content": "naïve café ☕\u2028done"}),
               call_start(0, "call_1", "get_time"), call_args(0, "{}"), chunk({}, "tool_calls"),
               usage_chunk())
    stream_route(api, pieces(body, list(range(1, len(body), 7))))
    events = await collect(make().stream(LLMRequest.build(HI)))
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.content == [TextBlock(text="naïve café ☕\u2028done"),
                                    ToolUseBlock(id="call_1", name="get_time")]


async def test_http_error_before_output_is_an_error_event(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=httpx.Response(429, json={"error": {
        "message": "Rate limit reached", "type": "requests", "param": None, "code": "rate_limit_exceeded"}},
        headers={"retry-after-ms": "250"}))
    events = await collect(make().stream(LLMRequest.build(HI)))
    assert len(events) == 1
    error = events[0]
    assert isinstance(error, ErrorEvent)
    assert error.error_type == "RateLimitError"
    assert error.retry_after == 0.25


async def test_stream_connection_is_released(api: respx.MockRouter) -> None:
    closed: list[bool] = []

    async def body() -> Any:
        try:
            yield sse(*text_chunks("ok"))
        finally:
            closed.append(True)

    stream_route(api, body())
    events: list[StreamEvent] = await collect(make().stream(LLMRequest.build(HI)))
    assert isinstance(events[-1], DoneEvent)
    assert closed == [True]
    assert json.loads(api.calls[0].request.content)["stream"] is True


async def test_leaving_a_stream_early_releases_the_connection(api: respx.MockRouter) -> None:
    class Body(httpx.AsyncByteStream):
        closed = False

        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield sse(chunk(ROLE), chunk({"content": "first"}), done=False)
            yield sse(*text_chunks(" and more"))

        async def aclose(self) -> None:
            self.closed = True

    body = Body()
    api.post(CHAT).mock(return_value=httpx.Response(200, headers=SSE_HEADERS, stream=body))
    stream = make().stream(LLMRequest.build(HI))
    async for event in stream:
        if isinstance(event, TextDelta):
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert body.closed
