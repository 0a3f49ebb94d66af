"""AnthropicProvider against the Messages API's real wire format, through respx: construction, the
exact request bodies, non-streaming responses and the health check.

The SDK sends through httpx2/httpcore2. respx patches httpcore's connection pool; tests/conftest.py
adds httpcore2's pool to its targets, which mocks the real transport the same way, so the SDK's own
client (not a stand-in) sends every request here (routes still answer with ``httpx.Response``,
respx's type). The stream and error tests import the wire helpers below.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
import respx

from agcore.llm.errors import MissingCredentialsError, ResponseFormatError
from agcore.llm.providers.anthropic import AnthropicProvider, sanitize_tool_id
from agcore.llm.retry import NO_RETRY
from agcore.llm.types import (
    AssistantMessage,
    ImageBlock,
    LLMRequest,
    ProviderBlock,
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

API = "https://api.anthropic.com"
MESSAGES = f"{API}/v1/messages"
MODEL = "claude-haiku-4-5"  # one the SDK does not flag as deprecated
KEY = "sk-ant-test-key"
REQUEST_ID = "req_011CSHoEeqs5C35K2UUqR7Fy"
HI = [UserMessage(content="Hello, Claude")]
WEATHER = ToolDefinition(
    name="get_weather",
    description="Get the current weather in a given location",
    input_schema={"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
)
CLOCK = ToolDefinition(name="get_time", input_schema={"type": "object", "properties": {}})
VALID_TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# ------------------------------------------------------------------ wire helpers (shared)


def make(**options: Any) -> AnthropicProvider:
    options.setdefault("api_key", KEY)
    options.setdefault("retry_policy", NO_RETRY)
    return AnthropicProvider(MODEL, **options)


def wire_usage(input_tokens: int = 21, output_tokens: int = 9, cache_read: int | None = 0,
               cache_write: int | None = 0) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
        "cache_creation": {"ephemeral_5m_input_tokens": cache_write or 0, "ephemeral_1h_input_tokens": 0},
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def message_body(content: list[dict[str, Any]], *, stop_reason: str | None = "end_turn",
                 usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """A non-streaming Messages API response body, field for field."""
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage if usage is not None else wire_usage(),
    }


def respond_json(body: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, json=body, headers={"request-id": REQUEST_ID})


def sse(*events: dict[str, Any]) -> bytes:
    """An SSE body as the API sends it: ``event:`` named after the payload's type, compact JSON."""
    return b"".join(
        f"event: {event['type']}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n".encode()
        for event in events
    )


PING = {"type": "ping"}


def message_start(input_tokens: int = 25, cache_read: int = 0, cache_write: int = 0) -> dict[str, Any]:
    start = message_body([], stop_reason=None, usage=wire_usage(input_tokens, 1, cache_read, cache_write))
    return {"type": "message_start", "message": start}


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def block_delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str, output_tokens: int, **usage: int) -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens, **usage}}


MESSAGE_STOP = {"type": "message_stop"}
SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8", "request-id": REQUEST_ID}


def sent(route: respx.Route, call: int = 0) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(route.calls[call].request.content)
    return body


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with respx.mock(assert_all_called=False) as router:
        yield router


def ok_route(api: respx.MockRouter, text: str = "Hi!") -> respx.Route:
    return api.post(MESSAGES).mock(return_value=respond_json(message_body([{"type": "text", "text": text}])))


# ------------------------------------------------------------------ construction


def test_missing_key_names_the_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(MissingCredentialsError, match="ANTHROPIC_API_KEY") as caught:
        AnthropicProvider(MODEL)
    assert caught.value.provider == "anthropic"
    assert caught.value.model == MODEL


@pytest.mark.anyio
async def test_key_and_base_url_come_from_the_environment(
    api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://gateway.example.com/anthropic")
    route = api.post("https://gateway.example.com/anthropic/v1/messages").mock(
        return_value=respond_json(message_body([{"type": "text", "text": "via gateway"}])))
    provider = AnthropicProvider(MODEL, retry_policy=NO_RETRY)
    assert (await provider.complete(LLMRequest.build(HI))).text == "via gateway"
    assert route.calls[0].request.headers["authorization"] == "Bearer sk-ant-from-env"
    await provider.aclose()


@pytest.mark.anyio
async def test_an_empty_base_url_variable_means_the_vendor_endpoint(
    api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ANTHROPIC_BASE_URL=`` (set, empty: a blanked line in an .env file) is unset, as for agcore's
    other variables; the SDK alone would send every call to the URL ``""``."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "")
    route = ok_route(api)
    provider = make()
    assert (await provider.complete(LLMRequest.build(HI))).text == "Hi!"
    assert route.call_count == 1
    await provider.aclose()


@pytest.mark.anyio
async def test_explicit_key_and_base_url_win_over_the_environment(
    api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://gateway.example.com")
    route = ok_route(api)
    provider = make(base_url=API)
    await provider.complete(LLMRequest.build(HI))
    assert route.calls[0].request.headers["authorization"] == f"Bearer {KEY}"


def test_sdk_client_never_retries_on_its_own() -> None:
    assert make().client.max_retries == 0
    assert make(timeout=120.0).client.timeout == httpx2.Timeout(120.0, connect=10.0)
    assert make(timeout=3.0).client.timeout == httpx2.Timeout(3.0)


@pytest.mark.anyio
async def test_aclose_closes_only_the_client_it_created() -> None:
    own = make()
    await own.aclose()
    assert own.client.is_closed()

    http_client = httpx2.AsyncClient()
    with_http = make(http_client=http_client)
    await with_http.aclose()
    assert not http_client.is_closed  # the caller's http client stays usable
    await http_client.aclose()

    given = make().client
    async with make(client=given):
        pass
    assert not given.is_closed()
    await given.close()


@pytest.mark.anyio
async def test_a_given_client_is_used_without_needing_a_key(
    api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    route = ok_route(api)
    provider = AnthropicProvider(MODEL, client=make(api_key="sk-ant-own-client").client)
    await provider.complete(LLMRequest.build(HI))
    assert route.calls[0].request.headers["authorization"] == "Bearer sk-ant-own-client"


# ------------------------------------------------------------------ request bodies


@pytest.mark.anyio
async def test_minimal_request_sends_only_what_is_set(api: respx.MockRouter) -> None:
    route = ok_route(api)
    await make().complete(LLMRequest.build(HI))
    assert sent(route) == {
        "model": MODEL,
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hello, Claude"}]}],
    }


@pytest.mark.anyio
async def test_default_max_tokens_applies_only_when_the_request_has_none(api: respx.MockRouter) -> None:
    route = ok_route(api)
    provider = make(default_max_tokens=1024)
    await provider.complete(LLMRequest.build(HI))
    await provider.complete(LLMRequest.build(HI, max_tokens=77))
    assert sent(route, 0)["max_tokens"] == 1024
    assert sent(route, 1)["max_tokens"] == 77


@pytest.mark.anyio
async def test_system_tools_options_and_extra(api: respx.MockRouter) -> None:
    route = ok_route(api)
    await make().complete(LLMRequest.build(
        HI, system="You are terse.", tools=[WEATHER, CLOCK], tool_choice="any", max_tokens=512,
        temperature=0.2, stop_sequences=["\n\nHuman:", "END"],
        extra={"top_k": 40, "metadata": {"user_id": "u-42"},
               "thinking": {"type": "enabled", "budget_tokens": 2048}},
    ))
    assert sent(route) == {
        "model": MODEL,
        "max_tokens": 512,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hello, Claude"}]}],
        "system": "You are terse.",
        "tools": [
            {"name": "get_weather", "description": "Get the current weather in a given location",
             "input_schema": WEATHER.input_schema},
            {"name": "get_time", "input_schema": {"type": "object", "properties": {}}},
        ],
        "tool_choice": {"type": "any"},
        "temperature": 0.2,
        "stop_sequences": ["\n\nHuman:", "END"],
        "top_k": 40,
        "metadata": {"user_id": "u-42"},
        "thinking": {"type": "enabled", "budget_tokens": 2048},
    }


@pytest.mark.anyio
async def test_extra_overrides_a_field_agcore_sets(api: respx.MockRouter) -> None:
    route = ok_route(api)
    await make().complete(LLMRequest.build(HI, temperature=0.2, extra={"temperature": 1.0}))
    assert sent(route)["temperature"] == 1.0


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"type": "auto"}),
        ("any", {"type": "any"}),
        ("none", {"type": "none"}),
        (ToolChoice(mode="tool", name="get_weather"), {"type": "tool", "name": "get_weather"}),
    ],
)
async def test_tool_choice_variants(
    api: respx.MockRouter, choice: ToolChoice | str, wire: dict[str, Any]
) -> None:
    route = ok_route(api)
    await make().complete(LLMRequest.build(HI, tools=[WEATHER], tool_choice=choice))
    assert sent(route)["tool_choice"] == wire


@pytest.mark.anyio
async def test_images_base64_and_url(api: respx.MockRouter) -> None:
    route = ok_route(api)
    await make().complete(LLMRequest.build([UserMessage(content=[
        TextBlock(text="Compare these."),
        ImageBlock(media_type="image/png", data="iVBORw0KGgo="),
        ImageBlock(url="https://upload.wikimedia.org/cat.jpg"),
        TextBlock(text=""),
    ])]))
    assert sent(route)["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "Compare these."},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "image", "source": {"type": "url", "url": "https://upload.wikimedia.org/cat.jpg"}},
    ]}]


@pytest.mark.anyio
async def test_tool_use_and_results_come_first_in_the_user_turn(api: respx.MockRouter) -> None:
    route = ok_route(api)
    call_a = ToolUseBlock(id="toolu_01A", name="get_weather", input={"location": "Paris"})
    call_b = ToolUseBlock(id="toolu_01B", name="get_time")
    history = [
        UserMessage(content="Weather and time in Paris?"),
        AssistantMessage(content=[TextBlock(text="Checking."), call_a, call_b], provider="anthropic",
                         model=MODEL, stop_reason=StopReason.TOOL_USE),
        UserMessage(content=[
            TextBlock(text="Here you go."),
            ToolResultBlock(tool_use_id="toolu_01A", content="18°C, cloudy"),
            ToolResultBlock(tool_use_id="toolu_01B", is_error=True, content=[
                TextBlock(text="clock unavailable"), ImageBlock(media_type="image/jpeg", data="/9j/4AAQ")]),
        ]),
    ]
    await make().complete(LLMRequest.build(history))
    assert sent(route)["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather and time in Paris?"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"location": "Paris"}},
            {"type": "tool_use", "id": "toolu_01B", "name": "get_time", "input": {}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "18°C, cloudy"},
            {"type": "tool_result", "tool_use_id": "toolu_01B", "is_error": True, "content": [
                {"type": "text", "text": "clock unavailable"},
                {"type": "image",
                 "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}},
            ]},
            {"type": "text", "text": "Here you go."},
        ]},
    ]


@pytest.mark.anyio
async def test_a_call_that_failed_to_parse_is_sent_back_with_its_empty_input(api: respx.MockRouter) -> None:
    route = ok_route(api)
    broken = ToolUseBlock(id="toolu_01X", name="get_weather", parse_error="not JSON")
    await make().complete(LLMRequest.build([
        UserMessage(content="Weather?"),
        AssistantMessage(content=[broken], provider="anthropic"),
        UserMessage(content=[
            ToolResultBlock(tool_use_id="toolu_01X", content="bad arguments", is_error=True)]),
    ]))
    messages = sent(route)["messages"]
    assert messages[1]["content"] == [
        {"type": "tool_use", "id": "toolu_01X", "name": "get_weather", "input": {}}]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_01X", "content": "bad arguments", "is_error": True}]


@pytest.mark.anyio
async def test_only_anthropic_signed_thinking_is_replayed(api: respx.MockRouter) -> None:
    route = ok_route(api)
    history = [
        UserMessage(content="Think, then answer."),
        AssistantMessage(provider="anthropic", model=MODEL, content=[
            ThinkingBlock(thinking="Let me reason.", signature="EqQBCgIYAhIM1gbcDa9GJwZA",
                          provider="anthropic"),
            ThinkingBlock(redacted_data="EmwKAhgBEgy3va3pzix/LafPsn4a", provider="anthropic"),
            ThinkingBlock(thinking="unsigned", provider="anthropic"),
            ThinkingBlock(thinking="o-series summary", signature="gAAAAAB", provider="openai"),
            TextBlock(text="42."),
        ]),
        UserMessage(content="And again?"),
        AssistantMessage(provider="openai", model="gpt-4.1", content=[
            ThinkingBlock(thinking="foreign reasoning", provider="openai")]),
        UserMessage(content="Hello?"),
    ]
    await make().complete(LLMRequest.build(history))
    assert sent(route)["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Think, then answer."}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Let me reason.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA"},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
            {"type": "text", "text": "42."},
        ]},
        {"role": "user", "content": [{"type": "text", "text": "And again?"}]},
        # the OpenAI turn held only reasoning Anthropic cannot verify: it is left out entirely
        {"role": "user", "content": [{"type": "text", "text": "Hello?"}]},
    ]


@pytest.mark.anyio
async def test_prompt_caching_marks_system_last_tool_and_last_block(api: respx.MockRouter) -> None:
    route = ok_route(api)
    call = ToolUseBlock(id="toolu_01A", name="get_weather", input={"location": "Paris"})
    await make(prompt_caching=True).complete(LLMRequest.build(
        [
            UserMessage(content="Weather in Paris?"),
            AssistantMessage(content=[call], provider="anthropic"),
            UserMessage(content=[ToolResultBlock(tool_use_id="toolu_01A", content="18°C"),
                                 TextBlock(text="Answer briefly.")]),
        ],
        system="You are terse.", tools=[WEATHER, CLOCK],
    ))
    body = sent(route)
    ephemeral = {"type": "ephemeral"}
    assert body["system"] == [{"type": "text", "text": "You are terse.", "cache_control": ephemeral}]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1] == {"name": "get_time", "input_schema": {"type": "object", "properties": {}},
                                "cache_control": ephemeral}
    assert body["messages"][0]["content"] == [{"type": "text", "text": "Weather in Paris?"}]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "18°C"},
        {"type": "text", "text": "Answer briefly.", "cache_control": ephemeral},
    ]
    assert json.dumps(body).count('"cache_control"') == 3  # the API allows at most 4


@pytest.mark.anyio
async def test_without_prompt_caching_nothing_is_marked(api: respx.MockRouter) -> None:
    route = ok_route(api)
    await make().complete(LLMRequest.build(HI, system="s", tools=[WEATHER]))
    assert "cache_control" not in route.calls[0].request.content.decode()


@pytest.mark.anyio
async def test_foreign_tool_ids_are_sanitised_the_same_in_use_and_result(api: respx.MockRouter) -> None:
    route = ok_route(api)
    weird = "functions.get_weather:0"
    lookalike = "functions_get_weather_0"  # already valid: kept, and must not collide with `weird`
    long_id = "call_" + "x" * 80
    history = [
        UserMessage(content="Weather?"),
        AssistantMessage(provider="openai", model="kimi-k2", content=[
            ToolUseBlock(id=weird, name="get_weather", input={"location": "Paris"}),
            ToolUseBlock(id=lookalike, name="get_weather", input={"location": "Rome"}),
            ToolUseBlock(id=long_id, name="get_weather", input={"location": "Oslo"}),
        ]),
        UserMessage(content=[
            ToolResultBlock(tool_use_id=weird, content="18°C"),
            ToolResultBlock(tool_use_id=lookalike, content="25°C"),
            ToolResultBlock(tool_use_id=long_id, content="3°C"),
        ]),
    ]
    await make().complete(LLMRequest.build(history))
    messages = sent(route)["messages"]
    use_ids = [block["id"] for block in messages[1]["content"]]
    result_ids = [block["tool_use_id"] for block in messages[2]["content"]]
    assert use_ids == result_ids
    assert all(VALID_TOOL_ID.match(i) for i in use_ids)
    assert len(set(use_ids)) == 3
    assert use_ids[1] == lookalike
    assert use_ids[0].startswith("functions_get_weather_0_")
    assert use_ids[0] == sanitize_tool_id(weird)  # deterministic: the next turn sends the same id


def test_sanitize_tool_id_edge_cases() -> None:
    assert sanitize_tool_id("toolu_01A09q90qw90lq917835lq9") == "toolu_01A09q90qw90lq917835lq9"
    assert VALID_TOOL_ID.match(sanitize_tool_id(""))
    assert VALID_TOOL_ID.match(sanitize_tool_id("🙂"))
    assert sanitize_tool_id("a.b") != sanitize_tool_id("a:b")
    assert len(sanitize_tool_id("y" * 65)) <= 64


# ------------------------------------------------------------------ non-streaming responses


@pytest.mark.anyio
async def test_text_response_with_usage_and_request_id(api: respx.MockRouter) -> None:
    api.post(MESSAGES).mock(return_value=respond_json(message_body(
        [{"type": "text", "text": "Hi! How can I help?", "citations": None}],
        usage=wire_usage(input_tokens=12, output_tokens=8, cache_read=2048, cache_write=310),
    )))
    response = await make().complete(LLMRequest.build(HI))
    assert response.message == AssistantMessage(
        content=[TextBlock(text="Hi! How can I help?")],
        stop_reason=StopReason.END_TURN,
        model=MODEL,
        provider="anthropic",
        usage=Usage(input_tokens=12, output_tokens=8, cache_read_tokens=2048, cache_write_tokens=310),
    )
    assert response.request_id == REQUEST_ID


@pytest.mark.anyio
async def test_null_or_missing_cache_counts_read_as_zero(api: respx.MockRouter) -> None:
    usage = {"input_tokens": 5, "output_tokens": 3, "cache_creation_input_tokens": None}
    body = message_body([{"type": "text", "text": "ok"}], usage=usage)
    api.post(MESSAGES).mock(return_value=respond_json(body))
    assert (await make().complete(LLMRequest.build(HI))).usage == Usage(input_tokens=5, output_tokens=3)


@pytest.mark.anyio
async def test_tool_use_response(api: respx.MockRouter) -> None:
    api.post(MESSAGES).mock(return_value=respond_json(message_body([
        {"type": "text", "text": "I'll check the weather."},
        {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather",
         "input": {"location": "San Francisco, CA", "unit": "celsius"}},
    ], stop_reason="tool_use")))
    response = await make().complete(LLMRequest.build(HI, tools=[WEATHER]))
    assert response.stop_reason is StopReason.TOOL_USE
    assert response.message.content == [
        TextBlock(text="I'll check the weather."),
        ToolUseBlock(id="toolu_01T1x1fJ34qAmk2tNTrN7Up6", name="get_weather",
                     input={"location": "San Francisco, CA", "unit": "celsius"}),
    ]


@pytest.mark.anyio
async def test_thinking_and_redacted_thinking_response(api: respx.MockRouter) -> None:
    api.post(MESSAGES).mock(return_value=respond_json(message_body([
        {"type": "thinking", "thinking": "The user greets me.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
        {"type": "text", "text": "Hello!"},
    ])))
    message = (await make().complete(LLMRequest.build(HI))).message
    assert message.content == [
        ThinkingBlock(thinking="The user greets me.", signature="EqQBCgIYAhIM1gbcDa9GJwZA",
                      provider="anthropic"),
        ThinkingBlock(redacted_data="EmwKAhgBEgy3va3pzix/LafPsn4a", provider="anthropic"),
        TextBlock(text="Hello!"),
    ]


@pytest.mark.anyio
async def test_server_tool_blocks_are_kept_whole(api: respx.MockRouter) -> None:
    use = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "news"}}
    result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": []}
    api.post(MESSAGES).mock(return_value=respond_json(message_body([
        use, result, {"type": "text", "text": "Nothing new."},
    ])))
    assert (await make().complete(LLMRequest.build(HI))).message.content == [
        ProviderBlock(provider="anthropic", data=use), ProviderBlock(provider="anthropic", data=result),
        TextBlock(text="Nothing new.")]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ("end_turn", StopReason.END_TURN),
        ("tool_use", StopReason.TOOL_USE),
        ("max_tokens", StopReason.MAX_TOKENS),
        ("stop_sequence", StopReason.STOP_SEQUENCE),
        ("refusal", StopReason.REFUSAL),
        ("pause_turn", StopReason.PAUSE),
        ("model_context_window_exceeded", StopReason.MAX_TOKENS),
        ("some_future_reason", StopReason.END_TURN),
        (None, StopReason.END_TURN),
    ],
)
async def test_every_stop_reason(api: respx.MockRouter, wire: str | None, expected: StopReason) -> None:
    api.post(MESSAGES).mock(return_value=respond_json(message_body([{"type": "text", "text": "x"}],
                                                                    stop_reason=wire)))
    assert (await make().complete(LLMRequest.build(HI))).stop_reason is expected


@pytest.mark.anyio
async def test_unreadable_response_is_a_format_error(api: respx.MockRouter) -> None:
    api.post(MESSAGES).mock(return_value=respond_json({"id": "msg_1", "type": "message"}))
    with pytest.raises(ResponseFormatError, match="cannot read") as caught:
        await make().complete(LLMRequest.build(HI))
    assert caught.value.request_id == REQUEST_ID


# ------------------------------------------------------------------ health check


@pytest.mark.anyio
async def test_health_check(api: respx.MockRouter) -> None:
    route = api.get(f"{API}/v1/models/{MODEL}").mock(side_effect=[
        httpx.Response(200, json={"type": "model", "id": MODEL, "display_name": "Claude Haiku 4.5",
                                   "created_at": "2025-10-01T00:00:00Z"}),
        httpx.Response(404, json={"type": "error", "error": {"type": "not_found_error",
                                                              "message": f"model: {MODEL}"}}),
    ])
    provider = make()
    assert await provider.health_check() is True
    assert await provider.health_check() is False
    assert route.call_count == 2


@pytest.mark.anyio
async def test_health_check_is_false_when_unreachable(api: respx.MockRouter) -> None:
    api.get(f"{API}/v1/models/{MODEL}").mock(side_effect=httpx2.ConnectError("connection refused"))
    assert await make().health_check() is False


# ------------------------------------------------------------------ the request as data


def full_request() -> LLMRequest:
    """A request with every field set, the kind a durable runtime ships to a worker."""
    return LLMRequest(
        messages=[
            UserMessage(content=[TextBlock(text="What is in this picture?"),
                                 ImageBlock(media_type="image/png", data="iVBORw0KGgo=")]),
            AssistantMessage(
                content=[ThinkingBlock(thinking="Look first.", signature="sig-1", provider="anthropic"),
                         TextBlock(text="Checking."),
                         ToolUseBlock(id="toolu_01", name="get_weather", input={"location": "Paris"})],
                stop_reason=StopReason.TOOL_USE, model=MODEL, provider="anthropic",
                usage=Usage(input_tokens=10, output_tokens=5),
            ),
            UserMessage(content=[ToolResultBlock(tool_use_id="toolu_01", content="18°C")]),
        ],
        system="You are terse.",
        tools=[WEATHER, CLOCK],
        tool_choice=ToolChoice(mode="tool", name="get_weather"),
        max_tokens=256,
        temperature=0.2,
        stop_sequences=["STOP"],
        extra={"metadata": {"user_id": "u-1"}},
    )


@pytest.mark.anyio
async def test_a_request_round_trips_through_json_and_sends_the_same_body(api: respx.MockRouter) -> None:
    request = full_request()
    shipped = LLMRequest.model_validate_json(request.model_dump_json())
    assert shipped == request
    route = ok_route(api)
    provider = make()
    await provider.complete(request)
    await provider.complete(shipped)
    assert sent(route, 0) == sent(route, 1)
    assert sent(route, 0)["metadata"] == {"user_id": "u-1"}
    assert sent(route, 0)["tool_choice"] == {"type": "tool", "name": "get_weather"}


def test_build_takes_a_plain_string_as_one_user_message() -> None:
    request = LLMRequest.build("Hi", max_tokens=50, tool_choice="any")
    assert request.messages == [UserMessage(content="Hi")]
    assert request.max_tokens == 50
    assert request.tool_choice == ToolChoice(mode="any")
    assert LLMRequest.model_validate_json(request.model_dump_json()) == request
