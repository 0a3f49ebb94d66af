"""OpenAIProvider against OpenAI's Chat Completions wire format, through respx: construction, the
exact request bodies and non-streaming replies.

The SDK sends through httpx2/httpcore2; adding httpcore2's pool to respx's targets mocks the real
transport, so the SDK's own default client sends every request here. The stream, error, compat and
property tests import the wire helpers below, which build payloads field for field as OpenAI does.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import openai
import pytest
import respx

from agcore.llm.errors import MissingCredentialsError
from agcore.llm.events import StreamEvent
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import NO_RETRY
from agcore.llm.types import (
    AssistantMessage,
    ImageBlock,
    LLMRequest,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolChoice,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)

API = "https://api.openai.com/v1"
CHAT = f"{API}/chat/completions"
COMPAT = "http://127.0.0.1:8080/v1"
COMPAT_CHAT = f"{COMPAT}/chat/completions"
MODEL = "gpt-4.1"
KEY = "sk-proj-test-key"
REQUEST_ID = "req_7f3c2a9e5b1d4e8fa6c0b2d4e6f8a0b1"
CALL_ID = re.compile(r"^call_[0-9a-f]{24}$")
HI = [UserMessage(content="What's the weather in Paris?")]
WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
    "required": ["city"],
}
WEATHER = ToolDefinition(name="get_weather", description="Current weather for a city",
                         input_schema=WEATHER_SCHEMA)
CLOCK = ToolDefinition(name="get_time")
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

# ------------------------------------------------------------------ wire helpers (shared)


def make(**options: Any) -> OpenAIProvider:
    """A provider for OpenAI itself (or, with ``base_url``, a compatible server); no retries."""
    if "base_url" not in options and "client" not in options:
        options.setdefault("api_key", KEY)
    options.setdefault("retry_policy", NO_RETRY)
    return OpenAIProvider(MODEL, **options)


def wire_usage(prompt: int = 19, completion: int = 10, cached: int = 0, reasoning: int = 0) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
    }


_ABSENT: Any = object()


def completion(message: dict[str, Any], *, finish_reason: str | None = "stop",
               usage: dict[str, Any] | None = _ABSENT) -> dict[str, Any]:
    """A non-streaming chat completion, field for field (``usage=None`` sends null)."""
    body: dict[str, Any] = {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4.1-2025-04-14",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": None, "refusal": None, "annotations": [], **message},
            "logprobs": None,
            "finish_reason": finish_reason,
        }],
        "usage": wire_usage() if usage is _ABSENT else usage,
        "service_tier": "default",
        "system_fingerprint": "fp_a1b2c3d4e5",
    }
    return body


def tool_call(call_id: str | None, name: str, arguments: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        call = {"id": call_id, **call}
    return call


def chunk(delta: dict[str, Any] | None = None, finish_reason: str | None = None) -> dict[str, Any]:
    """One ``chat.completion.chunk`` with ``stream_options.include_usage`` (usage null until the end)."""
    return {
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion.chunk",
        "created": 1741570283,
        "model": "gpt-4.1-2025-04-14",
        "service_tier": "default",
        "system_fingerprint": "fp_a1b2c3d4e5",
        "choices": [{"index": 0, "delta": delta if delta is not None else {}, "logprobs": None,
                     "finish_reason": finish_reason}],
        "usage": None,
    }


def usage_chunk(prompt: int = 19, completion_tokens: int = 10, cached: int = 0) -> dict[str, Any]:
    body = chunk()
    body["choices"] = []
    body["usage"] = wire_usage(prompt, completion_tokens, cached)
    return body


ROLE = {"role": "assistant", "content": "", "refusal": None}


def text_chunks(*pieces: str, finish_reason: str = "stop") -> list[dict[str, Any]]:
    return [chunk(ROLE), *(chunk({"content": piece}) for piece in pieces), chunk({}, finish_reason),
            usage_chunk()]


def sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    """An SSE body as OpenAI sends it: ``data: <compact JSON>`` events, then ``data: [DONE]``."""
    body = b"".join(b"data: " + json.dumps(c, separators=(",", ":")).encode() + b"\n\n" for c in chunks)
    return body + (b"data: [DONE]\n\n" if done else b"")


SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8", "x-request-id": REQUEST_ID}


def respond_sse(body: bytes | AsyncIterator[bytes]) -> httpx.Response:
    return httpx.Response(200, headers=SSE_HEADERS, content=body)


def respond_json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json=body, headers={"x-request-id": REQUEST_ID, **(headers or {})})


def api_error(message: str, type_: str, code: str | None = None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


async def pieces(data: bytes, cuts: list[int], error: BaseException | None = None) -> AsyncIterator[bytes]:
    """The body in transport chunks split at ``cuts``, optionally breaking off with ``error``."""
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(data)}), len(data)]
    for start, end in itertools.pairwise(bounds):
        yield data[start:end]
    if error is not None:
        raise error


def sent(route: respx.Route, call: int = 0) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(route.calls[call].request.content)
    return body


async def collect(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in stream]


def openai_router(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    """The body of each test module's ``api`` fixture: no endpoint or key from the environment."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    with respx.mock(assert_all_called=False) as router:
        yield router


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    yield from openai_router(monkeypatch)


def ok_route(api: respx.MockRouter, text: str = "It is 18°C and cloudy.", url: str = CHAT) -> respx.Route:
    return api.post(url).mock(return_value=respond_json(completion({"content": text})))


# ------------------------------------------------------------------ construction


def test_missing_key_for_openai_names_the_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY") as caught:
        OpenAIProvider(MODEL)
    assert caught.value.provider == "openai"
    assert caught.value.model == MODEL
    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY"):  # OpenAI named explicitly
        OpenAIProvider(MODEL, base_url="https://api.openai.com/v1")


def test_names_follow_the_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert OpenAIProvider(MODEL).provider_name == "openai"
    assert OpenAIProvider(MODEL, base_url=COMPAT).provider_name == "openai-compatible"
    assert OpenAIProvider(MODEL, base_url=COMPAT, provider_name="vllm").provider_name == "vllm"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:1234/v1")
    from_env = OpenAIProvider(MODEL)
    assert from_env.provider_name == "openai-compatible"
    assert str(from_env.client.base_url) == "http://localhost:1234/v1/"


def test_sdk_client_never_retries_and_connects_fast() -> None:
    client = make(timeout=120.0).client
    assert client.max_retries == 0
    assert client.timeout == openai.Timeout(120.0, connect=10.0)
    assert make(timeout=3.0).client.timeout == openai.Timeout(3.0)


@pytest.mark.anyio
async def test_key_comes_from_the_environment(api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    route = ok_route(api)
    provider = OpenAIProvider(MODEL, retry_policy=NO_RETRY)
    await provider.complete(LLMRequest.build(HI))
    assert route.calls[0].request.headers["authorization"] == "Bearer sk-from-env"
    await provider.aclose()


@pytest.mark.anyio
async def test_an_empty_base_url_variable_means_openai(
    api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``OPENAI_BASE_URL=`` (set, empty) is unset: calls go to OpenAI, named "openai"; the SDK alone
    would send them to the URL ``""``."""
    monkeypatch.setenv("OPENAI_BASE_URL", "")
    route = ok_route(api)
    provider = make()
    assert provider.provider_name == "openai"
    await provider.complete(LLMRequest.build(HI))
    assert route.call_count == 1
    await provider.aclose()


@pytest.mark.anyio
async def test_organization_is_sent(api: respx.MockRouter) -> None:
    route = ok_route(api)
    await make(organization="org-agcore").complete(LLMRequest.build(HI))
    assert route.calls[0].request.headers["openai-organization"] == "org-agcore"


@pytest.mark.anyio
async def test_aclose_closes_only_the_client_it_created() -> None:
    own = make()
    await own.aclose()
    assert own.client.is_closed()

    http_client = httpx.AsyncClient()
    with_http = make(http_client=http_client)
    await with_http.aclose()
    assert not http_client.is_closed  # the caller's http client stays usable
    await http_client.aclose()

    given = make().client
    async with make(client=given) as provider:
        assert provider.provider_name == "openai"  # named after the client's base URL
    assert not given.is_closed()
    await given.close()


@pytest.mark.anyio
async def test_a_plain_httpx_client_can_carry_the_requests(api: respx.MockRouter) -> None:
    route = ok_route(api)
    async with httpx.AsyncClient() as http_client:
        response = await make(http_client=http_client).complete(LLMRequest.build(HI))
    assert response.text == "It is 18°C and cloudy."
    assert route.called


# ------------------------------------------------------------------ request bodies


@pytest.mark.anyio
async def test_minimal_request_sends_only_what_is_set(api: respx.MockRouter) -> None:
    route = ok_route(api)
    await make().complete(LLMRequest.build(HI))
    assert sent(route) == {
        "model": MODEL, "messages": [{"role": "user", "content": "What's the weather in Paris?"}]}


@pytest.mark.anyio
async def test_system_tools_options_and_extra(api: respx.MockRouter) -> None:
    route = ok_route(api)
    await make().complete(LLMRequest.build(
        HI, system="Answer briefly.", tools=[WEATHER, CLOCK], tool_choice="auto", max_tokens=256,
        temperature=0.2, stop_sequences=["END", "STOP"], extra={"top_p": 0.9, "seed": 7, "user": "u-1"},
    ))
    assert sent(route) == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": "What's the weather in Paris?"},
        ],
        "tools": [
            {"type": "function", "function": {
                "name": "get_weather", "description": "Current weather for a city",
                "parameters": WEATHER_SCHEMA}},
            {"type": "function", "function": {"name": "get_time",
                                              "parameters": {"type": "object", "properties": {}}}},
        ],
        "tool_choice": "auto",
        "max_completion_tokens": 256,  # OpenAI's reasoning models reject max_tokens
        "temperature": 0.2,
        "stop": ["END", "STOP"],
        "top_p": 0.9,
        "seed": 7,
        "user": "u-1",
    }


@pytest.mark.anyio
async def test_compatible_servers_get_max_tokens(api: respx.MockRouter) -> None:
    route = ok_route(api, url=COMPAT_CHAT)
    await make(base_url=COMPAT).complete(LLMRequest.build(HI, max_tokens=64))
    assert sent(route)["max_tokens"] == 64
    assert "max_completion_tokens" not in sent(route)


@pytest.mark.anyio
async def test_default_max_tokens_applies_only_when_the_request_has_none(api: respx.MockRouter) -> None:
    route = ok_route(api)
    provider = make(default_max_tokens=1000)
    await provider.complete(LLMRequest.build(HI))
    await provider.complete(LLMRequest.build(HI, max_tokens=50))
    assert sent(route, 0)["max_completion_tokens"] == 1000
    assert sent(route, 1)["max_completion_tokens"] == 50


@pytest.mark.anyio
@pytest.mark.parametrize(("choice", "wire"), [
    ("auto", "auto"),
    ("none", "none"),
    ("any", "required"),
    (ToolChoice(mode="tool", name="get_weather"), {"type": "function", "function": {"name": "get_weather"}}),
])
async def test_tool_choice_forms(api: respx.MockRouter, choice: ToolChoice | str, wire: Any) -> None:
    route = ok_route(api)
    await make().complete(LLMRequest.build(HI, tools=[WEATHER], tool_choice=choice))
    assert sent(route)["tool_choice"] == wire


@pytest.mark.anyio
async def test_tool_choice_without_tools_is_not_sent(api: respx.MockRouter) -> None:
    route = ok_route(api)  # OpenAI rejects tool_choice when there are no tools
    await make().complete(LLMRequest.build(HI, tool_choice="none"))
    assert "tool_choice" not in sent(route)
    assert "tools" not in sent(route)


@pytest.mark.anyio
async def test_history_with_images_tool_calls_and_results(api: respx.MockRouter) -> None:
    route = ok_route(api)
    history: list[UserMessage | AssistantMessage] = [
        UserMessage(content=[
            TextBlock(text="Where is this, and what is the weather there?"),
            ImageBlock(media_type="image/png", data=PNG),
            ImageBlock(url="https://example.com/street.jpg"),
        ]),
        AssistantMessage(
            content=[
                ThinkingBlock(thinking="Looks like Paris.", signature="EqQBCgIYAhIM", provider="anthropic"),
                TextBlock(text="That is Paris. Checking…"),
                ToolUseBlock(id="call_1", name="get_weather", input={"city": "Paris", "unit": "c"}),
                ToolUseBlock(id="call_2", name="render_map", input={"city": "Paris", "zoom": 3}),
                ToolUseBlock(id="call_3", name="get_forecast", input={}, parse_error="bad JSON"),
            ],
            provider="anthropic", model="claude-sonnet-4-5", stop_reason=StopReason.TOOL_USE,
        ),
        UserMessage(content=[
            ToolResultBlock(tool_use_id="call_1", content="18°C, cloudy"),
            TextBlock(text="Also, what should I wear?"),
            ToolResultBlock(tool_use_id="call_2", content=[
                TextBlock(text="Map rendered."), ImageBlock(media_type="image/png", data=PNG)]),
            ToolResultBlock(tool_use_id="call_3", content="Error: the arguments were not valid JSON",
                            is_error=True),
        ]),
    ]
    await make().complete(LLMRequest.build(history))
    assert sent(route)["messages"] == [
        {"role": "user", "content": [
            {"type": "text", "text": "Where is this, and what is the weather there?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            {"type": "image_url", "image_url": {"url": "https://example.com/street.jpg"}},
        ]},
        {"role": "assistant", "content": "That is Paris. Checking…", "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris", "unit": "c"}'}},
            {"id": "call_2", "type": "function",
             "function": {"name": "render_map", "arguments": '{"city": "Paris", "zoom": 3}'}},
            {"id": "call_3", "type": "function", "function": {"name": "get_forecast", "arguments": "{}"}},
        ]},
        # Tool messages come straight after the calls, before the user's own words.
        {"role": "tool", "tool_call_id": "call_1", "content": "18°C, cloudy"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Map rendered."},
        {"role": "tool", "tool_call_id": "call_3", "content": "Error: the arguments were not valid JSON"},
        {"role": "user", "content": [
            {"type": "text", "text": "Images returned by tool call call_2:"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            {"type": "text", "text": "Also, what should I wear?"},
        ]},
    ]


@pytest.mark.anyio
async def test_image_only_tool_result_says_where_the_image_went(api: respx.MockRouter) -> None:
    route = ok_route(api)
    await make().complete(LLMRequest.build([
        UserMessage(content="Screenshot please"),
        AssistantMessage(content=[ToolUseBlock(id="call_s", name="screenshot")]),
        UserMessage(content=[ToolResultBlock(tool_use_id="call_s", content=[ImageBlock(url="https://x.test/s.png")])]),
    ]))
    assert sent(route)["messages"][2:] == [
        {"role": "tool", "tool_call_id": "call_s",
         "content": "The tool returned 1 image(s), attached in the next message."},
        {"role": "user", "content": [
            {"type": "text", "text": "Images returned by tool call call_s:"},
            {"type": "image_url", "image_url": {"url": "https://x.test/s.png"}},
        ]},
    ]


@pytest.mark.anyio
async def test_empty_text_and_thinking_only_messages_are_dropped(api: respx.MockRouter) -> None:
    route = ok_route(api)
    await make().complete(LLMRequest.build([
        UserMessage(content=[TextBlock(text=""), TextBlock(text="first"), TextBlock(text="second")]),
        AssistantMessage(content=[ThinkingBlock(thinking="hmm", provider="openai-compatible")]),
        AssistantMessage(content=[TextBlock(text=""), TextBlock(text="Sure.")]),
        UserMessage(content=""),
        UserMessage(content="go on"),
    ]))
    assert sent(route)["messages"] == [
        {"role": "user", "content": "first\nsecond"},
        {"role": "assistant", "content": "Sure."},
        {"role": "user", "content": "go on"},
    ]


@pytest.mark.anyio
async def test_long_foreign_tool_ids_are_shortened_the_same_way_everywhere(api: respx.MockRouter) -> None:
    route = ok_route(api)
    long_a = "toolu_01A09q90qw90lq917835lq9_" + "x" * 40 + "_a"
    long_b = "toolu_01A09q90qw90lq917835lq9_" + "x" * 40 + "_b"  # same first 40 characters
    short = "toolu_01A09q90qw90lq917835lq9"
    history: list[UserMessage | AssistantMessage] = [
        UserMessage(content="go"),
        AssistantMessage(content=[ToolUseBlock(id=i, name="get_time") for i in (long_a, long_b, short)]),
        UserMessage(content=[ToolResultBlock(tool_use_id=i, content="12:00")
                             for i in (long_a, long_b, short)]),
    ]
    await make().complete(LLMRequest.build(history))
    body = sent(route)["messages"]
    call_ids = [c["id"] for c in body[1]["tool_calls"]]
    result_ids = [m["tool_call_id"] for m in body[2:5]]
    assert call_ids == result_ids
    assert call_ids[2] == short  # ids that fit are left alone
    assert all(len(i) <= 40 for i in call_ids)
    assert len(set(call_ids)) == 3
    await make().complete(LLMRequest.build(history))
    assert [c["id"] for c in sent(route, 1)["messages"][1]["tool_calls"]] == call_ids  # deterministic


# ------------------------------------------------------------------ non-streaming replies


@pytest.mark.anyio
async def test_text_reply(api: respx.MockRouter) -> None:
    ok_route(api)
    response = await make().complete(LLMRequest.build(HI))
    assert response.message == AssistantMessage(
        content=[TextBlock(text="It is 18°C and cloudy.")], stop_reason=StopReason.END_TURN,
        model=MODEL, provider="openai", usage=Usage(input_tokens=19, output_tokens=10),
    )
    assert response.request_id == REQUEST_ID


@pytest.mark.anyio
async def test_parallel_tool_calls(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=respond_json(completion({"tool_calls": [
        tool_call("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", '{"city":"Paris"}'),
        tool_call("call_ABCkeRlmEqZZ3ah3TlYhAa3F", "get_weather", '{"city":"Tokyo","unit":"f"}'),
        tool_call("call_Xy9pKgL3mQ2nR7sT1uV4wZ8b", "get_time", "{}"),
    ]}, finish_reason="tool_calls")))
    response = await make().complete(LLMRequest.build(HI, tools=[WEATHER, CLOCK]))
    assert response.message.content == [
        ToolUseBlock(id="call_DdmO9pD3xa9XTPNJ32zg2hcA", name="get_weather", input={"city": "Paris"}),
        ToolUseBlock(id="call_ABCkeRlmEqZZ3ah3TlYhAa3F", name="get_weather",
                     input={"city": "Tokyo", "unit": "f"}),
        ToolUseBlock(id="call_Xy9pKgL3mQ2nR7sT1uV4wZ8b", name="get_time", input={}),
    ]
    assert response.stop_reason is StopReason.TOOL_USE


@pytest.mark.anyio
async def test_text_before_tool_calls_keeps_its_order(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=respond_json(completion(
        {"content": "Let me check.", "tool_calls": [tool_call("call_1", "get_weather", '{"city":"Paris"}')]},
        finish_reason="tool_calls")))
    message = (await make().complete(LLMRequest.build(HI))).message
    assert message.content == [TextBlock(text="Let me check."),
                               ToolUseBlock(id="call_1", name="get_weather", input={"city": "Paris"})]


@pytest.mark.anyio
@pytest.mark.parametrize(("finish_reason", "stop_reason"), [
    ("stop", StopReason.END_TURN),
    ("length", StopReason.MAX_TOKENS),
    ("content_filter", StopReason.REFUSAL),
    ("tool_calls", StopReason.TOOL_USE),
    ("function_call", StopReason.TOOL_USE),
    (None, StopReason.END_TURN),
    ("eos", StopReason.END_TURN),  # unknown values some servers send
])
async def test_finish_reasons(
    api: respx.MockRouter, finish_reason: str | None, stop_reason: StopReason
) -> None:
    api.post(CHAT).mock(return_value=respond_json(completion({"content": "…"}, finish_reason=finish_reason)))
    assert (await make().complete(LLMRequest.build(HI))).stop_reason is stop_reason


@pytest.mark.anyio
async def test_refusal_is_text_and_a_refusal_stop(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=respond_json(completion(
        {"refusal": "I'm sorry, I can't help with that."})))
    message = (await make().complete(LLMRequest.build(HI))).message
    assert message.content == [TextBlock(text="I'm sorry, I can't help with that.")]
    assert message.stop_reason is StopReason.REFUSAL


@pytest.mark.anyio
async def test_cached_prompt_tokens_are_counted_apart(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=respond_json(completion(
        {"content": "ok"}, usage=wire_usage(prompt=2006, completion=300, cached=1920, reasoning=128))))
    usage = (await make().complete(LLMRequest.build(HI))).usage
    assert usage == Usage(input_tokens=86, output_tokens=300, cache_read_tokens=1920, reasoning_tokens=128)
    assert usage.total_tokens == 2306


@pytest.mark.anyio
@pytest.mark.parametrize(("raw", "expected"), [
    ('{"city": "Paris",}', {"city": "Paris"}),  # trailing comma
    ("{'city': 'Paris'}", {"city": "Paris"}),  # single quotes
    ('{"city": "Paris"', {"city": "Paris"}),  # unterminated
])
async def test_malformed_arguments_are_repaired(
    api: respx.MockRouter, raw: str, expected: dict[str, Any]
) -> None:
    api.post(CHAT).mock(return_value=respond_json(completion(
        {"tool_calls": [tool_call("call_1", "get_weather", raw)]}, finish_reason="tool_calls")))
    call = (await make().complete(LLMRequest.build(HI))).tool_calls[0]
    assert call.input == expected
    assert call.parse_error is None


@pytest.mark.anyio
@pytest.mark.parametrize("raw", ["not json at all", "[1, 2]", '"just a string"'])
async def test_unrepairable_arguments_set_parse_error(api: respx.MockRouter, raw: str) -> None:
    api.post(CHAT).mock(return_value=respond_json(completion(
        {"tool_calls": [tool_call("call_1", "get_weather", raw)]}, finish_reason="tool_calls")))
    response = await make().complete(LLMRequest.build(HI))
    call = response.tool_calls[0]
    assert call.input == {}
    assert call.parse_error is not None
    assert "JSON" in call.parse_error
    assert response.stop_reason is StopReason.TOOL_USE
