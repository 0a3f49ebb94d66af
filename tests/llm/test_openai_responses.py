"""OpenAIResponsesProvider against the Responses API's wire format (``POST /v1/responses``), through
respx: construction, the exact request bodies (history as input items, reasoning replayed), replies,
and failures. The payload helpers build objects field for field as OpenAI sends them (shapes from
the ``openai`` SDK's ``types/responses``); the stream and loop tests import them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from agcore.llm.errors import (
    AuthenticationError,
    ContextWindowExceededError,
    InvalidRequestError,
    LLMError,
    MissingCredentialsError,
    RateLimitError,
    ResponseFormatError,
    ServerError,
)
from agcore.llm.factory import create_provider
from agcore.llm.providers.openai_responses import OpenAIResponsesProvider
from agcore.llm.retry import NO_RETRY
from agcore.llm.types import (
    AssistantMessage,
    ImageBlock,
    LLMRequest,
    ResponseFormat,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolChoice,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from tests.llm.test_openai_provider import (
    CLOCK,
    HI,
    KEY,
    PNG,
    REQUEST_ID,
    WEATHER,
    WEATHER_SCHEMA,
    openai_router,
)

API = "https://api.openai.com/v1"
RESPONSES = f"{API}/responses"
COMPAT = "http://127.0.0.1:8000/v1"
REASONER = "o4-mini"  # a reasoning model: encrypted reasoning is asked for
PLAIN = "gpt-4.1"  # not one: asking would be a 400
RS_ID = "rs_6824e06b4e0c8191a6d8f0d1e2c3b4a50c1d2e3f4a5b6c7d"
FC_ID = "fc_6824e06c9f2881918a7b6c5d4e3f2a1b0c1d2e3f4a5b6c7d"
MSG_ID = "msg_6824e06d1a2b8191b3c4d5e6f7a8b9c00c1d2e3f4a5b6c7d"
CALL_ID = "call_Vz3bXa9QkL2mN8pR4sT6uW1y"
ENCRYPTED = "gAAAAABoJOBr3q9Xw2Lk8R5vT1nZpQ7sY4uH6jD0fG2bC9eM1aN3kP5rS7tV9xZ1"
SUMMARY = ["**Looking up the weather**\n\nThe user wants Paris.",
           "**Choosing the tool**\n\nget_weather fits."]
TOOL_RESULT_TEXT = '{"temperature_c": 18, "sky": "cloudy"}'


# ------------------------------------------------------------------ payload helpers (shared)


def make(model: str = REASONER, **options: Any) -> OpenAIResponsesProvider:
    """A provider for OpenAI itself (or, with ``base_url``, a compatible server); no retries."""
    if "base_url" not in options and "client" not in options:
        options.setdefault("api_key", KEY)
    options.setdefault("retry_policy", NO_RETRY)
    return OpenAIResponsesProvider(model, **options)


def wire_usage(inp: int = 52, out: int = 148, cached: int = 0, reasoning: int = 128,
               written: int | None = None) -> dict[str, Any]:
    details: dict[str, Any] = {"cached_tokens": cached}
    if written is not None:
        details["cache_write_tokens"] = written
    return {"input_tokens": inp, "input_tokens_details": details, "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": reasoning}, "total_tokens": inp + out}


def reasoning_item(summary: list[str] | None = None, encrypted: str | None = ENCRYPTED,
                   item_id: str = RS_ID) -> dict[str, Any]:
    item: dict[str, Any] = {"id": item_id, "type": "reasoning",
                            "summary": [{"type": "summary_text", "text": s} for s in summary or []]}
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


def message_item(text: str, *, refusal: str | None = None, item_id: str = MSG_ID) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "output_text", "text": text, "annotations": [], "logprobs": []})
    if refusal is not None:
        content.append({"type": "refusal", "refusal": refusal})
    return {"id": item_id, "type": "message", "status": "completed", "role": "assistant", "content": content}


def call_item(arguments: str = '{"city":"Paris","unit":"c"}', *, name: str = "get_weather",
              call_id: str = CALL_ID, item_id: str = FC_ID) -> dict[str, Any]:
    return {"id": item_id, "type": "function_call", "status": "completed", "arguments": arguments,
            "call_id": call_id, "name": name}


def response_body(output: list[dict[str, Any]], *, model: str = REASONER, status: str = "completed",
                  incomplete: str | None = None, usage: dict[str, Any] | None = None,
                  error: dict[str, Any] | None = None) -> dict[str, Any]:
    """A response object as ``POST /responses`` returns it (and ``response.completed`` carries it)."""
    return {
        "id": "resp_6824e06a5d7c8191b2a3c4d5e6f7a8b90c1d2e3f4a5b6c7d",
        "object": "response",
        "created_at": 1747247210,
        "status": status,
        "background": False,
        "error": error,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "instructions": None,
        "max_output_tokens": None,
        "model": f"{model}-2025-04-16",
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "service_tier": "default",
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": wire_usage() if usage is None and status != "failed" else usage,
        "user": None,
        "metadata": {},
    }


def api_error(message: str, type_: str, code: str | None = None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def respond_json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json=body, headers={"x-request-id": REQUEST_ID, **(headers or {})})


def sent(route: respx.Route, call: int = 0) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(route.calls[call].request.content)
    return body


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    yield from openai_router(monkeypatch)


def ok_route(api: respx.MockRouter, output: list[dict[str, Any]] | None = None, url: str = RESPONSES,
             **options: Any) -> respx.Route:
    output = output if output is not None else [message_item("It is 18°C and cloudy.")]
    body = response_body(output, **options)
    return api.post(url).mock(return_value=respond_json(body))


# ------------------------------------------------------------------ construction


def test_the_factory_builds_it_from_its_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    provider = create_provider("openai-responses:gpt-5-mini", cache=False)
    assert isinstance(provider, OpenAIResponsesProvider)
    assert (provider.provider_name, provider.model_id) == ("openai-responses", "gpt-5-mini")
    assert str(provider.client.base_url) == f"{API}/"
    assert provider.client.max_retries == 0  # agcore's retry layer is the only one


def test_missing_key_names_the_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY") as caught:
        OpenAIResponsesProvider(REASONER)
    assert caught.value.provider == "openai-responses"


def test_encrypted_reasoning_is_asked_of_reasoning_models_only() -> None:
    assert make("o3").encrypted_reasoning  # in the registry, supports_thinking
    assert make("gpt-5.4-mini").encrypted_reasoning
    assert make("o9-preview").encrypted_reasoning  # not registered: read from the id
    assert make("ft:o4-mini-2025-04-16:acme::BxQ1").encrypted_reasoning
    assert make("openai/gpt-5-mini", base_url=COMPAT).encrypted_reasoning  # a gateway's name for it
    assert not make(PLAIN).encrypted_reasoning
    assert not make("gpt-4o-mini").encrypted_reasoning
    assert not make("llama-3.3-70b", base_url=COMPAT).encrypted_reasoning
    assert make(PLAIN, encrypted_reasoning=True).encrypted_reasoning  # the caller decides


# ------------------------------------------------------------------ request bodies


@pytest.mark.anyio
async def test_minimal_request_sends_only_what_is_set(api: respx.MockRouter) -> None:
    route = ok_route(api, model=PLAIN)
    await make(PLAIN).complete(LLMRequest.build(HI))
    assert sent(route) == {"model": PLAIN, "input": [
        {"role": "user", "content": "What's the weather in Paris?"}], "store": False}
    assert route.calls[0].request.headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.anyio
async def test_system_tools_options_and_extra(api: respx.MockRouter) -> None:
    route = ok_route(api)
    await make().complete(LLMRequest.build(
        HI, system="Answer briefly.", tools=[WEATHER, CLOCK], tool_choice="any", max_tokens=2048,
        temperature=0.2, extra={"reasoning": {"effort": "high", "summary": "auto"}, "store": True},
    ))
    assert sent(route) == {
        "model": REASONER,
        "input": [{"role": "user", "content": "What's the weather in Paris?"}],
        "store": True,  # extra wins
        "instructions": "Answer briefly.",
        "include": ["reasoning.encrypted_content"],
        "tools": [
            {"type": "function", "name": "get_weather", "description": "Current weather for a city",
             "parameters": WEATHER_SCHEMA, "strict": False},
            {"type": "function", "name": "get_time", "parameters": {"type": "object", "properties": {}},
             "strict": False},
        ],
        "tool_choice": "required",
        "max_output_tokens": 2048,
        "temperature": 0.2,
        "reasoning": {"effort": "high", "summary": "auto"},
    }


@pytest.mark.anyio
@pytest.mark.parametrize(("choice", "wire"), [
    ("auto", "auto"), ("none", "none"), (ToolChoice(mode="tool", name="get_weather"),
                                         {"type": "function", "name": "get_weather"}),
])
async def test_tool_choice(api: respx.MockRouter, choice: Any, wire: Any) -> None:
    route = ok_route(api)
    await make().complete(LLMRequest.build(HI, tools=[WEATHER], tool_choice=choice))
    assert sent(route)["tool_choice"] == wire
    await make().complete(LLMRequest.build(HI, tool_choice=choice))  # no tools: no tool_choice either
    assert "tool_choice" not in sent(route, 1)


@pytest.mark.anyio
async def test_a_json_schema_answer_and_per_request_headers(api: respx.MockRouter) -> None:
    # A typed final answer (``output_type``) asks for a JSON Schema in ``text.format``, flat, unlike
    # Chat Completions' ``response_format``; a request's own headers go with that call only.
    route = ok_route(api, output=[message_item('{"city": "Paris", "celsius": 18}')])
    fmt = ResponseFormat(name="weather", description="The weather", json_schema={
        "type": "object", "properties": {"city": {"type": "string"}, "celsius": {"type": "integer"}},
        "required": ["city", "celsius"], "additionalProperties": False}, strict=True)
    reply = await make(PLAIN).complete(LLMRequest.build(HI, response_format=fmt,
                                                        headers={"x-trace": "t-1"}))
    assert sent(route)["text"] == {"format": {
        "type": "json_schema", "name": "weather", "schema": fmt.json_schema, "strict": True,
        "description": "The weather"}}
    assert route.calls[0].request.headers["x-trace"] == "t-1"
    assert reply.message.text == '{"city": "Paris", "celsius": 18}'
    await make(PLAIN).complete(LLMRequest.build(HI))
    assert "text" not in sent(route, 1)
    assert "x-trace" not in route.calls[1].request.headers


def own_reasoning(summary: str = "", encrypted: str | None = ENCRYPTED) -> ThinkingBlock:
    return ThinkingBlock(thinking=summary, signature=RS_ID, redacted_data=encrypted,
                         provider="openai-responses")


@pytest.mark.anyio
async def test_history_becomes_input_items(api: respx.MockRouter) -> None:
    route = ok_route(api)
    history = [
        UserMessage(content=[TextBlock(text="What is in this picture, and the weather there?"),
                             ImageBlock(media_type="image/png", data=PNG)]),
        AssistantMessage(provider="openai-responses", model=REASONER, content=[
            own_reasoning("**Reading the image**"),
            TextBlock(text="A street in Paris. Checking the weather."),
            ToolUseBlock(id=CALL_ID, name="get_weather", input={"city": "Paris"}),
            ToolUseBlock(id="toolu_01A09q90qw90lq917835lq9", name="get_time", input={}),
        ]),
        UserMessage(content=[
            ToolResultBlock(tool_use_id=CALL_ID, content=TOOL_RESULT_TEXT),
            ToolResultBlock(tool_use_id="toolu_01A09q90qw90lq917835lq9", content=[
                TextBlock(text="14:05"), ImageBlock(url="https://example.com/clock.png")], is_error=False),
            TextBlock(text="And tomorrow?"),
        ]),
    ]
    await make().complete(LLMRequest.build(history))
    assert sent(route)["input"] == [
        {"role": "user", "content": [
            {"type": "input_text", "text": "What is in this picture, and the weather there?"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"}]},
        # The reasoning goes back before the item it led to, without its id (store=false keeps none).
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Reading the image**"}],
         "encrypted_content": ENCRYPTED},
        {"role": "assistant", "content": "A street in Paris. Checking the weather."},
        {"type": "function_call", "call_id": CALL_ID, "name": "get_weather",
         "arguments": '{"city": "Paris"}'},
        {"type": "function_call", "call_id": "toolu_01A09q90qw90lq917835lq9", "name": "get_time",
         "arguments": "{}"},
        {"type": "function_call_output", "call_id": CALL_ID, "output": TOOL_RESULT_TEXT},
        {"type": "function_call_output", "call_id": "toolu_01A09q90qw90lq917835lq9", "output": [
            {"type": "input_text", "text": "14:05"},
            {"type": "input_image", "image_url": "https://example.com/clock.png", "detail": "auto"}]},
        {"role": "user", "content": "And tomorrow?"},
    ]


@pytest.mark.anyio
async def test_reasoning_goes_back_only_where_it_can_be_read(api: respx.MockRouter) -> None:
    route = ok_route(api)
    text = TextBlock(text="Hello.")
    history = [
        UserMessage(content="Hi"),
        # Another vendor's thinking, a signed Anthropic block: never sent here.
        AssistantMessage(provider="anthropic", content=[
            ThinkingBlock(thinking="Greet back.", signature="EqQBCkgIARABGAIiQL", provider="anthropic"),
            text]),
        UserMessage(content="Again"),
        # This provider's reasoning without encrypted content would be looked up by id: left out.
        AssistantMessage(provider="openai-responses", content=[own_reasoning("s", encrypted=None), text]),
        UserMessage(content="Once more"),
        # Reasoning that led to no item (cut off while thinking): the API rejects it alone.
        AssistantMessage(provider="openai-responses", content=[own_reasoning()],
                         stop_reason=StopReason.MAX_TOKENS),
        UserMessage(content="Go on"),
        # The same provider under another name (another account's key): its reasoning is not ours.
        AssistantMessage(provider="azure-responses", content=[
            ThinkingBlock(signature=RS_ID, redacted_data=ENCRYPTED, provider="azure-responses"), text]),
    ]
    await make().complete(LLMRequest.build(history))
    assert [item.get("type", item.get("role")) for item in sent(route)["input"]] == [
        "user", "assistant", "user", "assistant", "user", "user", "assistant"]


# ------------------------------------------------------------------ replies


@pytest.mark.anyio
async def test_text_reply(api: respx.MockRouter) -> None:
    ok_route(api, [reasoning_item(), message_item("It is 18°C and cloudy.")],
             usage=wire_usage(inp=1200, out=300, cached=1024, reasoning=256))
    response = await make().complete(LLMRequest.build(HI))
    message = response.message
    assert message.text == "It is 18°C and cloudy."
    assert message.content[0] == ThinkingBlock(signature=RS_ID, redacted_data=ENCRYPTED,
                                               provider="openai-responses")
    assert (message.stop_reason, message.provider, message.model) == (StopReason.END_TURN, "openai-responses",
                                                                      REASONER)
    # input_tokens counts the cached part; agcore counts it apart. Output includes reasoning.
    assert message.usage == Usage(input_tokens=176, output_tokens=300, cache_read_tokens=1024,
                                  reasoning_tokens=256)
    assert response.request_id == REQUEST_ID


@pytest.mark.anyio
async def test_cache_writes_are_counted_apart(api: respx.MockRouter) -> None:
    ok_route(api, usage=wire_usage(inp=5000, out=10, cached=1000, written=3000, reasoning=0))
    usage = (await make().complete(LLMRequest.build(HI))).usage
    assert usage == Usage(input_tokens=1000, output_tokens=10, cache_read_tokens=1000,
                          cache_write_tokens=3000)


@pytest.mark.anyio
async def test_tool_call_reply_and_its_round_trip(api: respx.MockRouter) -> None:
    """The reasoning that led to a call goes back with the call and its output, in order."""
    route = api.post(RESPONSES).mock(side_effect=[
        respond_json(response_body([reasoning_item(SUMMARY), call_item()])),
        respond_json(response_body([reasoning_item(item_id="rs_2"), message_item("18°C and cloudy.")])),
    ])
    provider = make()
    request = LLMRequest.build(HI, tools=[WEATHER])
    first = (await provider.complete(request)).message
    assert first.stop_reason is StopReason.TOOL_USE
    thinking, call = first.content
    assert thinking == ThinkingBlock(thinking="\n\n".join(SUMMARY), signature=RS_ID, redacted_data=ENCRYPTED,
                                     provider="openai-responses")
    assert call == ToolUseBlock(id=CALL_ID, name="get_weather", input={"city": "Paris", "unit": "c"})

    results = UserMessage(content=[ToolResultBlock(tool_use_id=CALL_ID, content=TOOL_RESULT_TEXT)])
    second = await provider.complete(request.model_copy(update={"messages": [*HI, first, results]}))
    assert second.text == "18°C and cloudy."
    assert sent(route, 1)["input"] == [
        {"role": "user", "content": "What's the weather in Paris?"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "\n\n".join(SUMMARY)}],
         "encrypted_content": ENCRYPTED},
        {"type": "function_call", "call_id": CALL_ID, "name": "get_weather",
         "arguments": '{"city": "Paris", "unit": "c"}'},
        {"type": "function_call_output", "call_id": CALL_ID, "output": TOOL_RESULT_TEXT},
    ]


@pytest.mark.anyio
async def test_output_cut_at_max_output_tokens(api: respx.MockRouter) -> None:
    ok_route(api, [reasoning_item(), call_item('{"city": "Par')], status="incomplete",
             incomplete="max_output_tokens")
    message = (await make().complete(LLMRequest.build(HI, tools=[WEATHER], max_tokens=64))).message
    assert message.stop_reason is StopReason.MAX_TOKENS
    assert message.tool_calls[0].parse_error  # a cut call is never run


@pytest.mark.anyio
async def test_refusal(api: respx.MockRouter) -> None:
    ok_route(api, [message_item("", refusal="I can't help with that.")])
    message = (await make().complete(LLMRequest.build(HI))).message
    assert (message.text, message.stop_reason) == ("I can't help with that.", StopReason.REFUSAL)


@pytest.mark.anyio
async def test_hosted_tool_items_are_skipped(api: respx.MockRouter) -> None:
    search = {"id": "ws_1", "type": "web_search_call", "status": "completed",
              "action": {"type": "search", "query": "weather Paris"}}
    ok_route(api, [search, message_item("Sunny.")])
    message = (await make().complete(LLMRequest.build(HI))).message
    assert message.content == [TextBlock(text="Sunny.")]


@pytest.mark.anyio
async def test_compatible_server_without_key(api: respx.MockRouter) -> None:
    route = ok_route(api, url=f"{COMPAT}/responses", model="qwen3")
    provider = make("qwen3", base_url=COMPAT)
    assert provider.provider_name == "openai-responses"
    assert (await provider.complete(LLMRequest.build(HI))).text == "It is 18°C and cloudy."
    assert "include" not in sent(route)


# ------------------------------------------------------------------ failures


async def failure(provider: OpenAIResponsesProvider) -> LLMError:
    with pytest.raises(LLMError) as caught:
        await provider.complete(LLMRequest.build(HI))
    return caught.value


@pytest.mark.anyio
async def test_rate_limit_carries_retry_after(api: respx.MockRouter) -> None:
    api.post(RESPONSES).mock(return_value=respond_json(api_error(
        "Rate limit reached for o4-mini in organization org-abc on tokens per min (TPM): Limit 200000, "
        "Used 199000, Requested 3000. Please try again in 900ms.", "tokens", "rate_limit_exceeded"),
        status=429, headers={"retry-after-ms": "900"}))
    error = await failure(make())
    assert type(error) is RateLimitError
    assert (error.retry_after, error.status_code, error.request_id) == (0.9, 429, REQUEST_ID)
    assert error.is_retryable
    assert "rate_limit_exceeded" in error.message


@pytest.mark.anyio
async def test_bad_request_keeps_the_vendor_code(api: respx.MockRouter) -> None:
    api.post(RESPONSES).mock(return_value=respond_json(api_error(
        "No tool output found for function call call_Vz3bXa9QkL2mN8pR4sT6uW1y.", "invalid_request_error",
        "invalid_request", "input"), status=400))
    error = await failure(make())
    assert type(error) is InvalidRequestError
    assert "No tool output found" in error.message
    assert "invalid_request" in error.message
    assert (error.provider, error.model, error.is_retryable) == ("openai-responses", REASONER, False)


@pytest.mark.anyio
async def test_context_overflow(api: respx.MockRouter) -> None:
    api.post(RESPONSES).mock(return_value=respond_json(api_error(
        "Your input exceeds the context window of this model. Please adjust your input and try again.",
        "invalid_request_error", "context_length_exceeded", "input"), status=400))
    assert isinstance(await failure(make()), ContextWindowExceededError)


@pytest.mark.anyio
async def test_server_error_and_bad_key(api: respx.MockRouter) -> None:
    route = api.post(RESPONSES).mock(side_effect=[
        respond_json(api_error("The server had an error while processing your request.", "server_error"),
                     status=500),
        respond_json(api_error("Incorrect API key provided: sk-proj-****-key.", "invalid_request_error",
                               "invalid_api_key"), status=401),
    ])
    error = await failure(make())
    assert type(error) is ServerError
    assert error.is_retryable
    error = await failure(make())
    assert type(error) is AuthenticationError
    assert "OPENAI_API_KEY" in error.message
    assert route.call_count == 2


@pytest.mark.anyio
async def test_a_failed_response_is_an_error(api: respx.MockRouter) -> None:
    """Generation can fail after the HTTP 200: the response says so in ``status`` and ``error``."""
    ok_route(api, [], status="failed", error={"code": "rate_limit_exceeded", "message": "Too many tokens."})
    error = await failure(make())
    assert type(error) is RateLimitError
    assert "Too many tokens." in error.message
    assert "rate_limit_exceeded" in error.message
    ok_route(api, [], status="failed", error={"code": "server_error", "message": "Something went wrong."})
    assert type(await failure(make())) is ServerError


@pytest.mark.anyio
async def test_model_refusing_encrypted_reasoning_is_asked_again_without(api: respx.MockRouter) -> None:
    route = api.post(RESPONSES).mock(side_effect=[
        respond_json(api_error("Encrypted content is not supported with this model.", "invalid_request_error",
                               None, "include"), status=400),
        respond_json(response_body([message_item("Hi!")], model="my-finetune")),
        respond_json(response_body([message_item("Hi again!")], model="my-finetune")),
    ])
    provider = make("ft:my-finetune", encrypted_reasoning=True)
    assert (await provider.complete(LLMRequest.build(HI))).text == "Hi!"
    assert sent(route, 0)["include"] == ["reasoning.encrypted_content"]
    assert "include" not in sent(route, 1)
    assert not provider.encrypted_reasoning  # remembered: the next call does not ask
    await provider.complete(LLMRequest.build(HI))
    assert "include" not in sent(route, 2)


@pytest.mark.anyio
async def test_unreadable_answers(api: respx.MockRouter) -> None:
    api.post(RESPONSES).mock(side_effect=[
        httpx.Response(200, text="<html>502 Bad Gateway</html>"),
        respond_json({"object": "chat.completion", "choices": []}),
    ])
    for _ in range(2):
        error = await failure(make())
        assert type(error) is ResponseFormatError
        assert "Responses API" in error.message
