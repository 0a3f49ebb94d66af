"""OllamaProvider against Ollama's real ``/api/chat`` wire format (JSON and NDJSON), through respx."""

from __future__ import annotations

import itertools
import json
import re
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st

from agcore.llm.errors import (
    ContextWindowExceededError,
    InvalidRequestError,
    LLMConnectionError,
    ModelNotFoundError,
    RequestTimeoutError,
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
from agcore.llm.providers.ollama import OllamaProvider, resolve_ollama_host
from agcore.llm.retry import NO_RETRY, RetryPolicy
from agcore.llm.types import (
    AssistantMessage,
    ImageBlock,
    LLMRequest,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)

HOST = "http://ollama.test:11434"
CHAT = f"{HOST}/api/chat"
MODEL = "llama3.2"
CALL_ID = re.compile(r"^call_[0-9a-f]{24}$")
HI = [UserMessage(content="hi")]
WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def make(**options: Any) -> OllamaProvider:
    options.setdefault("retry_policy", NO_RETRY)
    return OllamaProvider(MODEL, host=HOST, **options)


def reply(
    message: dict[str, Any], *, done_reason: str = "stop", prompt: int = 26, output: int = 9
) -> dict[str, Any]:
    """A non-streaming /api/chat answer, as Ollama sends it."""
    return {
        "model": MODEL,
        "created_at": "2025-05-27T22:54:57.641643Z",
        "message": {"role": "assistant", **message},
        "done_reason": done_reason,
        "done": True,
        "total_duration": 5191566416,
        "load_duration": 2154458,
        "prompt_eval_count": prompt,
        "prompt_eval_duration": 383809000,
        "eval_count": output,
        "eval_duration": 4799921000,
    }


def chunk(**message: Any) -> dict[str, Any]:
    return {"model": MODEL, "created_at": "2025-05-27T22:54:57.1Z",
            "message": {"role": "assistant", "content": "", **message}, "done": False}


def final(*, done_reason: str = "stop", prompt: int = 26, output: int = 9) -> dict[str, Any]:
    body = reply({"content": ""}, done_reason=done_reason, prompt=prompt, output=output)
    body["created_at"] = "2025-05-27T22:54:58.1Z"
    return body


def ndjson(*lines: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


async def pieces(data: bytes, cuts: list[int], error: Exception | None = None) -> AsyncIterator[bytes]:
    """The body in transport chunks split at ``cuts``, optionally breaking off with ``error``."""
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(data)}), len(data)]
    for start, end in itertools.pairwise(bounds):
        yield data[start:end]
    if error is not None:
        raise error


async def collect(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in stream]


def assert_well_formed(events: list[StreamEvent]) -> None:
    """Start, Deltas, End per block; indexes 0..n-1 in order; one terminal event, last."""
    open_index: int | None = None
    next_index = 0
    for event in events[:-1]:
        assert not isinstance(event, DoneEvent | ErrorEvent)
        if isinstance(event, TextStart | ThinkingStart | ToolCallStart):
            assert open_index is None
            assert event.index == next_index
            open_index, next_index = event.index, next_index + 1
        elif isinstance(event, TextDelta | ThinkingDelta | ToolCallDelta):
            assert event.index == open_index
        elif isinstance(event, TextEnd | ThinkingEnd | ToolCallEnd):
            assert event.index == open_index
            open_index = None
    assert isinstance(events[-1], DoneEvent | ErrorEvent)
    if isinstance(events[-1], DoneEvent):
        assert open_index is None
        assert len(events[-1].message.content) == next_index


def body_of(route: respx.Route, call: int = 0) -> Any:
    return json.loads(route.calls[call].request.content)


@pytest.fixture
def mock() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True) as router:
        yield router


# ------------------------------------------------------------------ host


@pytest.mark.parametrize(
    ("given", "env", "expected"),
    [
        (None, None, "http://localhost:11434"),
        (None, "127.0.0.1:11434", "http://127.0.0.1:11434"),
        (None, "0.0.0.0", "http://0.0.0.0:11434"),
        (None, "https://gpu.example.com/ollama/", "https://gpu.example.com/ollama"),
        ("http://box:8080", "127.0.0.1:11434", "http://box:8080"),
    ],
)
def test_host_comes_from_the_argument_then_ollama_host(
    monkeypatch: pytest.MonkeyPatch, given: str | None, env: str | None, expected: str
) -> None:
    if env is None:
        monkeypatch.delenv("OLLAMA_HOST", raising=False)
    else:
        monkeypatch.setenv("OLLAMA_HOST", env)
    assert resolve_ollama_host(given) == expected
    assert OllamaProvider(MODEL, host=given).host == expected


# ------------------------------------------------------------------ request body


@pytest.mark.anyio
async def test_request_body_carries_history_tools_images_options_and_extra(mock: respx.MockRouter) -> None:
    route = mock.post(CHAT).respond(json=reply({"content": "It is sunny."}))
    history = [
        UserMessage(content=[
            TextBlock(text="What is in this picture, and what is the weather?"),
            ImageBlock(media_type="image/png", data="iVBORw0KGgo="),
            ImageBlock(url="https://example.com/cat.jpg"),
            TextBlock(text=""),
        ]),
        AssistantMessage(
            content=[
                ThinkingBlock(thinking="The user wants weather.", signature="sig", provider="anthropic"),
                TextBlock(text="Let me check."),
                ToolUseBlock(id="toolu_01A", name="get_weather", input={"city": "Paris"}),
                ToolUseBlock(id="toolu_01B", name="get_time", input={}, parse_error="bad JSON"),
            ],
            model="claude-sonnet-4-5", provider="anthropic",
        ),
        UserMessage(content=[
            ToolResultBlock(tool_use_id="toolu_01A", content=[
                TextBlock(text="18C, sunny"), ImageBlock(media_type="image/png", data="AAAA")]),
            ToolResultBlock(tool_use_id="toolu_01B", content="no such timezone", is_error=True),
            TextBlock(text="Thanks!"),
        ]),
        AssistantMessage(content=[ThinkingBlock(thinking="only thoughts", provider="ollama")]),
    ]
    provider = make(keep_alive="30m", think=True)
    await provider.complete(LLMRequest.build(
        history, system="You are terse.", tools=[WEATHER], max_tokens=256, temperature=0.2,
        stop_sequences=["</answer>"],
        extra={"format": "json", "options": {"num_ctx": 8192, "temperature": 0.1}, "think": False},
    ))
    assert body_of(route) == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user",
             "content": "What is in this picture, and what is the weather?\n[image: https://example.com/cat.jpg]",
             "images": ["iVBORw0KGgo="]},
            {"role": "assistant", "content": "Let me check.", "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"function": {"name": "get_time", "arguments": {}}},
            ]},
            {"role": "tool", "content": "18C, sunny", "images": ["AAAA"], "tool_name": "get_weather"},
            {"role": "tool", "content": "Error: no such timezone", "tool_name": "get_time"},
            {"role": "user", "content": "Thanks!"},
        ],
        "stream": False,
        "tools": [{"type": "function", "function": {
            "name": "get_weather", "description": "Current weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]},
        }}],
        "options": {"temperature": 0.1, "num_predict": 256, "stop": ["</answer>"], "num_ctx": 8192},
        "keep_alive": "30m",
        "think": False,
        "format": "json",
    }


@pytest.mark.anyio
async def test_minimal_body_has_no_optional_fields(mock: respx.MockRouter) -> None:
    route = mock.post(CHAT).respond(json=reply({"content": "hello"}))
    await make().complete(LLMRequest.build(HI))
    assert body_of(route) == {"model": MODEL, "messages": [{"role": "user", "content": "hi"}],
                              "stream": False}


@pytest.mark.anyio
async def test_think_and_keep_alive_from_the_constructor_go_into_every_body(mock: respx.MockRouter) -> None:
    route = mock.post(CHAT).respond(content=ndjson(final()))
    await collect(make(think=True, keep_alive="-1").stream(LLMRequest.build(HI)))
    assert body_of(route) == {"model": MODEL, "messages": [{"role": "user", "content": "hi"}],
                              "stream": True, "keep_alive": "-1", "think": True}


@pytest.mark.anyio
async def test_tool_choice_none_sends_no_tools_and_any_sends_them(mock: respx.MockRouter) -> None:
    route = mock.post(CHAT).respond(json=reply({"content": "ok"}))
    provider = make()
    await provider.complete(LLMRequest.build(HI, tools=[WEATHER], tool_choice="none"))
    await provider.complete(LLMRequest.build(HI, tools=[WEATHER], tool_choice="any"))
    assert "tools" not in body_of(route, 0)
    assert [t["function"]["name"] for t in body_of(route, 1)["tools"]] == ["get_weather"]


@pytest.mark.anyio
async def test_tool_result_for_an_unknown_call_is_sent_without_tool_name(mock: respx.MockRouter) -> None:
    route = mock.post(CHAT).respond(json=reply({"content": "ok"}))
    orphan = UserMessage(content=[ToolResultBlock(tool_use_id="gone", content="42")])
    await make().complete(LLMRequest.build([orphan]))
    assert body_of(route)["messages"] == [{"role": "tool", "content": "42"}]


# ------------------------------------------------------------------ non-streaming replies


@pytest.mark.anyio
async def test_text_reply(mock: respx.MockRouter) -> None:
    mock.post(CHAT).respond(json=reply({"content": "Hello! How are you today?"}, prompt=26, output=298))
    response = await make().complete(LLMRequest.build(HI))
    assert response.message == AssistantMessage(
        content=[TextBlock(text="Hello! How are you today?")], stop_reason=StopReason.END_TURN,
        model=MODEL, provider="ollama", usage=Usage(input_tokens=26, output_tokens=298),
    )


@pytest.mark.anyio
async def test_thinking_text_and_tool_calls_in_that_order(mock: respx.MockRouter) -> None:
    mock.post(CHAT).respond(json=reply({
        "content": "Checking both.",
        "thinking": "Two cities, two calls.",
        "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {"id": "call_from_server", "function": {"index": 1, "name": "get_weather",
                                                    "arguments": {"city": "Oslo"}}},
        ],
    }))
    message = (await make().complete(LLMRequest.build(HI, tools=[WEATHER]))).message
    assert message.content[0] == ThinkingBlock(thinking="Two cities, two calls.", provider="ollama")
    assert message.content[1] == TextBlock(text="Checking both.")
    first, second = message.tool_calls
    assert CALL_ID.match(first.id)
    assert (first.name, first.input, first.parse_error) == ("get_weather", {"city": "Paris"}, None)
    assert second.id == "call_from_server"
    assert second.input == {"city": "Oslo"}
    assert message.stop_reason is StopReason.TOOL_USE


@pytest.mark.anyio
async def test_generated_call_ids_are_unique(mock: respx.MockRouter) -> None:
    call = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    mock.post(CHAT).respond(json=reply({"content": "", "tool_calls": [call, call, call]}))
    message = (await make().complete(LLMRequest.build(HI))).message
    assert len({c.id for c in message.tool_calls}) == 3


@pytest.mark.anyio
async def test_length_stop_is_max_tokens(mock: respx.MockRouter) -> None:
    mock.post(CHAT).respond(json=reply({"content": "Once upon a"}, done_reason="length"))
    assert (await make().complete(LLMRequest.build(HI, max_tokens=3))).stop_reason is StopReason.MAX_TOKENS


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "expected", "has_error"),
    [
        ('{"city": "Paris",}', {"city": "Paris"}, False),
        ('{"city": "Paris"', {"city": "Paris"}, False),
        ("not json at all", {}, True),
        ([1, 2], {}, True),
    ],
)
async def test_string_arguments_are_repaired_or_reported(
    mock: respx.MockRouter, arguments: Any, expected: dict[str, Any], has_error: bool
) -> None:
    call = {"function": {"name": "get_weather", "arguments": arguments}}
    mock.post(CHAT).respond(json=reply({"content": "", "tool_calls": [call]}))
    (tool_call,) = (await make().complete(LLMRequest.build(HI))).tool_calls
    assert tool_call.input == expected
    assert (tool_call.parse_error is not None) == has_error
    if has_error:
        assert "Call the tool again" in (tool_call.parse_error or "")


# ------------------------------------------------------------------ streaming


@pytest.mark.anyio
async def test_stream_of_thinking_text_and_tool_call(mock: respx.MockRouter) -> None:
    lines = ndjson(
        chunk(thinking="The user"), chunk(thinking=" wants weather."),
        chunk(content="Let me"), chunk(content=" check."),
        chunk(tool_calls=[{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]),
        final(prompt=40, output=12),
    )
    route = mock.post(CHAT).mock(return_value=httpx.Response(200, content=pieces(lines, [7, 100, 101, 250])))
    events = await collect(make().stream(LLMRequest.build(HI, tools=[WEATHER])))
    assert body_of(route)["stream"] is True
    assert_well_formed(events)
    assert [type(e).__name__ for e in events] == [
        "ThinkingStart", "ThinkingDelta", "ThinkingDelta", "ThinkingEnd",
        "TextStart", "TextDelta", "TextDelta", "TextEnd",
        "ToolCallStart", "ToolCallDelta", "ToolCallEnd",
        "UsageEvent", "DoneEvent",
    ]
    assert events[3] == ThinkingEnd(index=0, block=ThinkingBlock(thinking="The user wants weather.",
                                                                 provider="ollama"))
    assert events[7] == TextEnd(index=1, text="Let me check.")
    assert isinstance(events[8], ToolCallStart)
    assert (events[8].index, events[8].name) == (2, "get_weather")
    assert CALL_ID.match(events[8].id)
    assert events[9] == ToolCallDelta(index=2, arguments='{"city": "Paris"}')
    assert events[11] == UsageEvent(usage=Usage(input_tokens=40, output_tokens=12))
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.message == AssistantMessage(
        content=[ThinkingBlock(thinking="The user wants weather.", provider="ollama"),
                 TextBlock(text="Let me check."),
                 ToolUseBlock(id=events[8].id, name="get_weather", input={"city": "Paris"})],
        stop_reason=StopReason.TOOL_USE, model=MODEL, provider="ollama",
        usage=Usage(input_tokens=40, output_tokens=12),
    )


@pytest.mark.anyio
async def test_stream_repairs_string_arguments_and_reports_unrepairable_ones(mock: respx.MockRouter) -> None:
    lines = ndjson(
        chunk(tool_calls=[{"function": {"name": "a", "arguments": '{"x": 1,}'}},
                          {"function": {"name": "b", "arguments": "oops"}}]),
        final(),
    )
    mock.post(CHAT).respond(content=lines)
    events = await collect(make().stream(LLMRequest.build(HI)))
    deltas = [e.arguments for e in events if isinstance(e, ToolCallDelta)]
    assert deltas == ['{"x": 1,}', "oops"]  # the deltas are what the model wrote
    done = events[-1]
    assert isinstance(done, DoneEvent)
    first, second = done.message.tool_calls
    assert (first.input, first.parse_error) == ({"x": 1}, None)
    assert second.input == {}
    assert second.parse_error is not None


@pytest.mark.anyio
async def test_stream_without_done_line_ends_in_error_with_the_partial_text(mock: respx.MockRouter) -> None:
    mock.post(CHAT).respond(content=ndjson(chunk(content="The answer"), chunk(content=" is")))
    events = await collect(make().stream(LLMRequest.build(HI)))
    assert_well_formed(events)
    error = events[-1]
    assert isinstance(error, ErrorEvent)
    assert error.error_type == "StreamInterruptedError"
    assert error.is_retryable
    assert "`done` line" in error.message
    assert error.partial is not None
    assert error.partial.content == [TextBlock(text="The answer is")]


@pytest.mark.anyio
async def test_connection_broken_mid_stream_is_stream_interrupted(mock: respx.MockRouter) -> None:
    data = ndjson(chunk(content="Hello"), chunk(content=" wor"))
    cut = httpx.RemoteProtocolError("peer closed connection without sending complete body")
    broken = pieces(data, [5], cut)
    mock.post(CHAT).mock(return_value=httpx.Response(200, content=broken))
    events = await collect(make().stream(LLMRequest.build(HI)))
    error = events[-1]
    assert isinstance(error, ErrorEvent)
    assert isinstance(error.to_exception(), StreamInterruptedError)
    assert HOST in error.message
    assert error.partial is not None
    assert error.partial.text == "Hello wor"


@pytest.mark.anyio
async def test_error_line_mid_stream_becomes_a_server_error(mock: respx.MockRouter) -> None:
    lines = ndjson(chunk(content="Partial"),
                   {"error": "an error was encountered while running the model: unexpected EOF"})
    mock.post(CHAT).respond(content=lines)
    events = await collect(make().stream(LLMRequest.build(HI)))
    error = events[-1]
    assert isinstance(error, ErrorEvent)
    assert isinstance(error.to_exception(), ServerError)
    assert "unexpected EOF" in error.message
    assert error.partial is not None
    assert error.partial.text == "Partial"


@pytest.mark.anyio
async def test_model_not_found_error_line_is_model_not_found(mock: respx.MockRouter) -> None:
    mock.post(CHAT).respond(content=ndjson({"error": "model 'llama3.2' not found"}))
    events = await collect(make().stream(LLMRequest.build(HI)))
    error = events[-1]
    assert isinstance(error, ErrorEvent)
    assert isinstance(error.to_exception(), ModelNotFoundError)
    assert "ollama pull llama3.2" in error.message
    assert error.partial is None


@pytest.mark.anyio
async def test_error_body_with_status_200_is_raised_by_complete(mock: respx.MockRouter) -> None:
    mock.post(CHAT).respond(json={"error": "input length exceeds the context length"})
    with pytest.raises(ContextWindowExceededError, match="context"):
        await make().complete(LLMRequest.build(HI))


@pytest.mark.anyio
async def test_a_body_that_is_not_json_is_a_response_format_error(mock: respx.MockRouter) -> None:
    mock.post(CHAT).respond(text="<html>nginx welcome</html>")
    with pytest.raises(ResponseFormatError, match="OLLAMA_HOST"):
        await make().complete(LLMRequest.build(HI))


# ------------------------------------------------------------------ HTTP and transport errors


@pytest.mark.anyio
async def test_404_model_not_found_says_to_pull_it(mock: respx.MockRouter) -> None:
    mock.post(CHAT).respond(404, json={"error": "model 'llama3.2' not found, try pulling it first"})
    with pytest.raises(ModelNotFoundError) as caught:
        await make().complete(LLMRequest.build(HI))
    assert caught.value.status_code == 404
    assert "ollama pull llama3.2" in caught.value.message
    assert not caught.value.is_retryable


@pytest.mark.anyio
async def test_404_model_not_found_in_a_stream(mock: respx.MockRouter) -> None:
    mock.post(CHAT).respond(404, json={"error": "model \"llama3.2\" not found, try pulling it first"})
    events = await collect(make().stream(LLMRequest.build(HI)))
    assert len(events) == 1
    error = events[0]
    assert isinstance(error, ErrorEvent)
    assert error.error_type == "ModelNotFoundError"
    assert error.status_code == 404
    assert "ollama pull llama3.2" in error.message


@pytest.mark.anyio
async def test_404_for_a_wrong_path_does_not_blame_the_model(mock: respx.MockRouter) -> None:
    mock.post(CHAT).respond(404, text="404 page not found")
    with pytest.raises(ModelNotFoundError) as caught:
        await make().complete(LLMRequest.build(HI))
    assert "ollama pull" not in caught.value.message
    assert "base URL" in caught.value.message


@pytest.mark.anyio
async def test_400_is_an_invalid_request_with_ollamas_words(mock: respx.MockRouter) -> None:
    mock.post(CHAT).respond(400, json={"error": "registry.ollama.ai/library/gemma:2b does not support tools"})
    with pytest.raises(InvalidRequestError, match="does not support tools"):
        await make().complete(LLMRequest.build(HI, tools=[WEATHER]))


@pytest.mark.anyio
async def test_server_error_is_retried_then_succeeds(mock: respx.MockRouter) -> None:
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    route = mock.post(CHAT)
    route.side_effect = [
        httpx.Response(500, json={"error": "llama runner process has terminated: signal: killed"}),
        httpx.Response(200, json=reply({"content": "Recovered."})),
    ]
    provider = make(retry_policy=RetryPolicy(max_attempts=3, sleep=sleep))
    assert (await provider.complete(LLMRequest.build(HI))).text == "Recovered."
    assert route.call_count == 2
    assert len(sleeps) == 1


@pytest.mark.anyio
async def test_timeout_is_a_request_timeout(mock: respx.MockRouter) -> None:
    mock.post(CHAT).mock(side_effect=httpx.ReadTimeout("timed out"))
    with pytest.raises(RequestTimeoutError, match="timeout=") as caught:
        await make(timeout=5).complete(LLMRequest.build(HI))
    assert caught.value.is_retryable


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.anyio
async def test_connection_refused_names_the_host_and_how_to_start_ollama() -> None:
    host = f"http://127.0.0.1:{_closed_port()}"
    async with OllamaProvider(MODEL, host=host, retry_policy=NO_RETRY) as provider:
        with pytest.raises(LLMConnectionError) as caught:
            await provider.complete(LLMRequest.build(HI))
        events = await collect(provider.stream(LLMRequest.build(HI)))
    # A refusal on this machine: nothing listens there (ServerNotRunningError, not retried).
    assert f"nothing is listening at {host}" in caught.value.message
    assert "ollama serve" in caught.value.message
    assert "OLLAMA_HOST" in caught.value.message
    assert not caught.value.is_retryable
    assert isinstance(events[-1], ErrorEvent)
    assert events[-1].error_type == "ServerNotRunningError"
    assert host in events[-1].message


# ------------------------------------------------------------------ health check


TAGS = {"models": [
    {"name": "llama3.2:latest", "model": "llama3.2:latest", "modified_at": "2025-05-01T10:00:00Z",
     "size": 2019393189, "digest": "a80c4f17acd5",
     "details": {"format": "gguf", "family": "llama", "parameter_size": "3.2B",
                 "quantization_level": "Q4_K_M"}},
    {"name": "qwen3:8b", "model": "qwen3:8b", "modified_at": "2025-05-02T10:00:00Z", "size": 5225388164,
     "digest": "500a1f067a9f", "details": {"format": "gguf", "family": "qwen3"}},
]}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("model", "listed"),
    [("llama3.2", True), ("llama3.2:latest", True), ("qwen3:8b", True), ("qwen3", False), ("mistral", False)],
)
async def test_health_check_looks_for_the_model_in_tags(
    mock: respx.MockRouter, model: str, listed: bool
) -> None:
    mock.get(f"{HOST}/api/tags").respond(json=TAGS)
    assert await OllamaProvider(model, host=HOST).health_check() is listed


@pytest.mark.anyio
@pytest.mark.parametrize("failure", [httpx.ConnectError("refused"), httpx.Response(500, text="boom"),
                                     httpx.Response(200, text="not json")])
async def test_health_check_is_false_when_the_server_fails(
    mock: respx.MockRouter, failure: Exception | httpx.Response
) -> None:
    route = mock.get(f"{HOST}/api/tags")
    if isinstance(failure, Exception):
        route.side_effect = failure
    else:
        route.return_value = failure
    assert await make().health_check() is False


@pytest.mark.anyio
async def test_aclose_leaves_a_client_it_was_given_open(mock: respx.MockRouter) -> None:
    mock.post(CHAT).respond(json=reply({"content": "ok"}))
    async with httpx.AsyncClient() as client:
        provider = make(client=client)
        await provider.aclose()
        assert not client.is_closed
        assert (await provider.complete(LLMRequest.build(HI))).text == "ok"


# ------------------------------------------------------------------ stream == complete


fragments = st.lists(st.text(max_size=12), max_size=5)
calls = st.lists(
    st.tuples(st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True),
              st.dictionaries(st.text(min_size=1, max_size=6), st.integers() | st.text(max_size=8),
                              max_size=3)),
    max_size=3,
)


def _without_ids(message: AssistantMessage) -> AssistantMessage:
    content = [b.model_copy(update={"id": "x"}) if isinstance(b, ToolUseBlock) else b
               for b in message.content]
    return message.model_copy(update={"content": content})


@pytest.mark.anyio
@settings(max_examples=40, deadline=None)
@given(
    thinking=fragments, content=fragments, tool_calls=calls,
    calls_together=st.booleans(), done_reason=st.sampled_from(["stop", "length"]),
    counts=st.tuples(st.integers(0, 5000), st.integers(0, 5000)),
    cuts=st.lists(st.integers(0, 2000), max_size=8),
)
async def test_stream_and_complete_give_the_same_message(
    thinking: list[str], content: list[str], tool_calls: list[tuple[str, dict[str, Any]]],
    calls_together: bool, done_reason: str, counts: tuple[int, int], cuts: list[int],
) -> None:
    wire_calls = [{"function": {"name": name, "arguments": args}} for name, args in tool_calls]
    whole: dict[str, Any] = {"content": "".join(content)}
    if "".join(thinking):
        whole["thinking"] = "".join(thinking)
    if wire_calls:
        whole["tool_calls"] = wire_calls
    lines = [chunk(thinking=t) for t in thinking] + [chunk(content=c) for c in content]
    if wire_calls:
        together = [chunk(tool_calls=wire_calls)]
        lines += together if calls_together else [chunk(tool_calls=[c]) for c in wire_calls]
    lines.append(final(done_reason=done_reason, prompt=counts[0], output=counts[1]))
    data = ndjson(*lines)

    with respx.mock(assert_all_mocked=True) as router:
        router.post(CHAT).mock(side_effect=[
            httpx.Response(200, json=reply(whole, done_reason=done_reason, prompt=counts[0],
                                           output=counts[1])),
            httpx.Response(200, content=pieces(data, cuts)),
        ])
        provider = make()
        completed = (await provider.complete(LLMRequest.build(HI))).message
        events = await collect(provider.stream(LLMRequest.build(HI)))

    assert_well_formed(events)
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert _without_ids(done.message) == _without_ids(completed)
    assert [b.type for b in completed.content] == (
        ["thinking"] * bool("".join(thinking)) + ["text"] * bool("".join(content))
        + ["tool_use"] * len(tool_calls)
    )
