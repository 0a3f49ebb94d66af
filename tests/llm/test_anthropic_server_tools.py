"""Anthropic's built-in and server tools, and extra headers, on the Messages wire (respx, payloads
field for field as the API sends them): built-in tools offered by type; ``anthropic-beta`` and other
headers per provider and per request; server-tool blocks (``server_tool_use``,
``web_search_tool_result``, code execution results) kept in the history as ``ProviderBlock``s,
the same from ``complete()`` and ``stream()``, replayed verbatim to Anthropic and left out for
other vendors; a built-in tool offered to a vendor without it is a clear error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from pydantic import TypeAdapter

from agcore.llm.errors import InvalidRequestError
from agcore.llm.events import DoneEvent, ErrorEvent, ProviderBlockEnd, ToolCallDelta, ToolCallStart
from agcore.llm.providers.anthropic import AnthropicProvider
from agcore.llm.providers.ollama import OllamaProvider
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import NO_RETRY
from agcore.llm.types import (
    AssistantMessage,
    LLMRequest,
    Message,
    ProviderBlock,
    StopReason,
    TextBlock,
    ToolDefinition,
    UserMessage,
)
from tests.llm.test_anthropic_provider import (
    KEY,
    MESSAGES,
    MODEL,
    SSE_HEADERS,
    block_delta,
    block_start,
    block_stop,
    message_body,
    message_delta,
    message_start,
    respond_json,
    sse,
)
from tests.llm.test_openai_provider import completion, openai_router
from tests.llm.test_openai_provider import respond_json as openai_json

pytestmark = pytest.mark.anyio

SEARCH_ID = "srvtoolu_014hJH82Qum7Td6UV8gDXThB"
SEARCH_USE = {"type": "server_tool_use", "id": SEARCH_ID, "name": "web_search",
              "input": {"query": "weather Paris today"}}
SEARCH_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": SEARCH_ID,
    "content": [
        {"type": "web_search_result", "title": "Paris, France Weather Forecast | AccuWeather",
         "url": "https://www.accuweather.com/en/fr/paris/623/weather-forecast/623",
         "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2MSDK",
         "page_age": "November 24, 2026"},
    ],
}
CITED_TEXT = {
    "type": "text", "text": "It is 11°C and cloudy in Paris today.",
    "citations": [{"type": "web_search_result_location",
                   "url": "https://www.accuweather.com/en/fr/paris/623/weather-forecast/623",
                   "title": "Paris, France Weather Forecast | AccuWeather",
                   "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm..",
                   "cited_text": "Today: cloudy, high 11°C."}],
}
SEARCH_USAGE = {"input_tokens": 2103, "output_tokens": 118, "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0, "server_tool_use": {"web_search_requests": 1}}
CODE_ID = "srvtoolu_01A2B3C4D5E6F7G8H9J0K1L2"
CODE_USE = {"type": "server_tool_use", "id": CODE_ID, "name": "bash_code_execution",
            "input": {"command": "python -c 'print(6*7)'"}}
CODE_RESULT = {"type": "bash_code_execution_tool_result", "tool_use_id": CODE_ID,
               "content": {"type": "bash_code_execution_result", "stdout": "42\n", "stderr": "",
                           "return_code": 0, "content": []}}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    yield from openai_router(monkeypatch)


def make(**options: Any) -> AnthropicProvider:
    return AnthropicProvider(MODEL, api_key=KEY, retry_policy=NO_RETRY, **options)


def sent(route: respx.Route, call: int = -1) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(route.calls[call].request.content)
    return body


def search_reply() -> dict[str, Any]:
    body = message_body([{"type": "text", "text": "Let me look that up."}, SEARCH_USE, SEARCH_RESULT,
                         CITED_TEXT], usage=SEARCH_USAGE)
    return body


def search_stream() -> bytes:
    """The same reply as ``search_reply``, streamed as the API streams it."""
    return sse(
        message_start(input_tokens=2103),
        block_start(0, {"type": "text", "text": ""}),
        block_delta(0, {"type": "text_delta", "text": "Let me look that up."}),
        block_stop(0),
        block_start(1, {"type": "server_tool_use", "id": SEARCH_ID, "name": "web_search", "input": {}}),
        block_delta(1, {"type": "input_json_delta", "partial_json": ""}),
        block_delta(1, {"type": "input_json_delta", "partial_json": '{"query": "weather'}),
        block_delta(1, {"type": "input_json_delta", "partial_json": ' Paris today"}'}),
        block_stop(1),
        block_start(2, SEARCH_RESULT),
        block_stop(2),
        block_start(3, {"type": "text", "text": "", "citations": []}),
        block_delta(3, {"type": "citations_delta", "citation": CITED_TEXT["citations"][0]}),
        block_delta(3, {"type": "text_delta", "text": "It is 11°C and cloudy in Paris today."}),
        block_stop(3),
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
         "usage": {"output_tokens": 118, "server_tool_use": {"web_search_requests": 1}}},
        {"type": "message_stop"},
    )


EXPECTED_CONTENT = [
    TextBlock(text="Let me look that up."),
    ProviderBlock(provider="anthropic", data=SEARCH_USE),
    ProviderBlock(provider="anthropic", data=SEARCH_RESULT),
    TextBlock(text="It is 11°C and cloudy in Paris today."),
]


# ------------------------------------------------------------------ built-in tools by type


def test_builtin_tools_get_the_names_the_api_requires() -> None:
    assert ToolDefinition.builtin("web_search_20250305").name == "web_search"
    assert ToolDefinition.builtin("text_editor_20250728").name == "str_replace_based_edit_tool"
    assert ToolDefinition.builtin("text_editor_20250124").name == "str_replace_editor"
    assert ToolDefinition.builtin("bash_20250124").name == "bash"
    assert ToolDefinition.builtin("code_execution_20250825").name == "code_execution"
    assert ToolDefinition.builtin("mcp_toolset_x", name="docs").name == "docs"
    with pytest.raises(ValueError, match="pass name="):
        ToolDefinition.builtin("brand_new_tool_20270101")


async def test_builtin_tools_are_offered_by_type(api: respx.MockRouter) -> None:
    route = api.post(MESSAGES).mock(return_value=respond_json(message_body([{"type": "text", "text": "ok"}])))
    weather = ToolDefinition(name="get_weather", description="Weather",
                             input_schema={"type": "object", "properties": {"city": {"type": "string"}}})
    tools = [
        weather,
        ToolDefinition.builtin("web_search_20250305", max_uses=3, allowed_domains=["accuweather.com"]),
        ToolDefinition.builtin("text_editor_20250728", max_characters=10000),
        ToolDefinition.builtin("bash_20250124"),
        ToolDefinition.builtin("code_execution_20250825"),
    ]
    await make(prompt_caching=True).complete(LLMRequest.build("hi", tools=tools))
    assert sent(route)["tools"] == [
        {"name": "get_weather", "description": "Weather",
         "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3,
         "allowed_domains": ["accuweather.com"]},
        {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool", "max_characters": 10000},
        {"type": "bash_20250124", "name": "bash"},
        {"type": "code_execution_20250825", "name": "code_execution", "cache_control": {"type": "ephemeral"}},
    ]


@pytest.mark.parametrize("vendor", ["openai", "ollama"])
@pytest.mark.parametrize("stream", [False, True])
async def test_a_builtin_tool_offered_to_another_vendor_is_a_clear_error(
    api: respx.MockRouter, vendor: str, stream: bool
) -> None:
    model: OpenAIProvider | OllamaProvider = (
        OpenAIProvider("gpt-4.1", api_key="k", retry_policy=NO_RETRY) if vendor == "openai"
        else OllamaProvider("llama3.2", host="http://ollama.test:11434", retry_policy=NO_RETRY))
    request = LLMRequest.build("hi", tools=[ToolDefinition.builtin("web_search_20250305")])
    if stream:
        events = [event async for event in model.stream(request)]
        assert isinstance(events[-1], ErrorEvent)
        error = events[-1].to_exception()
    else:
        with pytest.raises(InvalidRequestError) as caught:
            await model.complete(request)
        error = caught.value
    assert isinstance(error, InvalidRequestError)
    assert "web_search_20250305" in error.message
    assert "input_schema" in error.message
    assert not api.calls  # nothing was sent


# ------------------------------------------------------------------ headers


@pytest.mark.parametrize("stream", [False, True])
async def test_headers_per_provider_and_per_request(api: respx.MockRouter, stream: bool) -> None:
    if stream:
        route = api.post(MESSAGES).mock(return_value=httpx.Response(200, content=search_stream(),
                                                                    headers=SSE_HEADERS))
    else:
        route = api.post(MESSAGES).mock(return_value=respond_json(search_reply()))
    model = make(headers={"anthropic-beta": "context-1m-2025-08-07", "X-Team": "search"})
    plain = LLMRequest.build("hi")
    with_betas = LLMRequest.build("hi", headers={
        "anthropic-beta": "code-execution-2025-08-25, context-1m-2025-08-07", "x-team": "billing"})
    for request in (plain, with_betas):
        if stream:
            events = [event async for event in model.stream(request)]
            assert isinstance(events[-1], DoneEvent)
        else:
            await model.complete(request)
    first, second = route.calls[0].request.headers, route.calls[1].request.headers
    assert first["anthropic-beta"] == "context-1m-2025-08-07"
    assert first["x-team"] == "search"
    assert second["anthropic-beta"] == "context-1m-2025-08-07,code-execution-2025-08-25"
    assert second["x-team"] == "billing"
    assert second["anthropic-version"]  # the SDK's own headers stay
    assert KEY in second.get("x-api-key", "") + second.get("authorization", "")


async def test_request_headers_reach_openai_and_ollama(api: respx.MockRouter) -> None:
    chat = api.post("https://api.openai.com/v1/chat/completions").mock(
        return_value=openai_json(completion({"content": "ok"})))
    ollama = api.post("http://ollama.test:11434/api/chat").mock(return_value=httpx.Response(200, json={
        "model": "llama3.2", "created_at": "2025-06-02T10:00:00Z", "message": {"role": "assistant",
        "content": "ok"}, "done": True, "done_reason": "stop", "prompt_eval_count": 3, "eval_count": 1}))
    request = LLMRequest.build("hi", headers={"X-Trace-Id": "t-123"})
    await OpenAIProvider("gpt-4.1", api_key="k", retry_policy=NO_RETRY).complete(request)
    await OllamaProvider("llama3.2", host="http://ollama.test:11434", retry_policy=NO_RETRY).complete(request)
    assert chat.calls[0].request.headers["x-trace-id"] == "t-123"
    assert ollama.calls[0].request.headers["x-trace-id"] == "t-123"


# ------------------------------------------------------------------ server-tool blocks


async def test_web_search_blocks_are_kept_the_same_streamed_or_not(api: respx.MockRouter) -> None:
    api.post(MESSAGES).mock(side_effect=[
        respond_json(search_reply()), httpx.Response(200, content=search_stream(), headers=SSE_HEADERS)])
    model = make()
    request = LLMRequest.build("Weather in Paris?", tools=[ToolDefinition.builtin("web_search_20250305")])
    completed = (await model.complete(request)).message
    events = [event async for event in model.stream(request)]
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert completed.content == EXPECTED_CONTENT
    assert done.message.content == completed.content
    assert completed.stop_reason is done.message.stop_reason is StopReason.END_TURN
    assert completed.tool_calls == []  # nothing for the loop to run: the server ran the search
    # A server tool's input streams without tool-call events (there is no call for the caller).
    assert not any(isinstance(e, ToolCallStart | ToolCallDelta) for e in events)
    assert [e.index for e in events if isinstance(e, ProviderBlockEnd)] == [1, 2]


async def test_server_tool_blocks_are_replayed_verbatim_to_anthropic(api: respx.MockRouter) -> None:
    route = api.post(MESSAGES).mock(side_effect=[
        respond_json(search_reply()), respond_json(message_body([{"type": "text", "text": "Yes."}]))])
    model = make(prompt_caching=True)
    history: list[Message] = [UserMessage(content="Weather in Paris?")]
    reply = (await model.complete(LLMRequest.build(history))).message
    # The history is persisted as JSON and loaded back, as a session store does.
    adapter = TypeAdapter(list[Message])
    history = adapter.validate_json(adapter.dump_json([*history, reply, UserMessage(content="Sure?")]))
    await model.complete(LLMRequest.build(history))
    replayed = sent(route)["messages"][1]
    assert replayed["role"] == "assistant"
    assert replayed["content"] == [
        {"type": "text", "text": "Let me look that up."}, SEARCH_USE, SEARCH_RESULT,
        {"type": "text", "text": "It is 11°C and cloudy in Paris today."}]


async def test_code_execution_results_stream_and_replay(api: respx.MockRouter) -> None:
    stream = sse(
        message_start(),
        block_start(0, {**CODE_USE, "input": {}}),
        block_delta(0, {"type": "input_json_delta", "partial_json": json.dumps(CODE_USE["input"])}),
        block_stop(0),
        block_start(1, CODE_RESULT),
        block_stop(1),
        block_start(2, {"type": "text", "text": ""}),
        block_delta(2, {"type": "text_delta", "text": "6 * 7 = 42."}),
        block_stop(2),
        message_delta("end_turn", 80), {"type": "message_stop"},
    )
    route = api.post(MESSAGES).mock(side_effect=[
        httpx.Response(200, content=stream, headers=SSE_HEADERS),
        respond_json(message_body([{"type": "text", "text": "ok"}]))])
    model = make(headers={"anthropic-beta": "code-execution-2025-08-25"})
    tools = [ToolDefinition.builtin("code_execution_20250825")]
    request = LLMRequest.build("What is 6*7? Use code.", tools=tools)
    events = [event async for event in model.stream(request)]
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.content == [ProviderBlock(provider="anthropic", data=CODE_USE),
                                    ProviderBlock(provider="anthropic", data=CODE_RESULT),
                                    TextBlock(text="6 * 7 = 42.")]
    assert [b.kind for b in done.message.content if isinstance(b, ProviderBlock)] == [
        "server_tool_use", "bash_code_execution_tool_result"]
    await model.complete(LLMRequest.build([UserMessage(content="What is 6*7?"), done.message,
                                           UserMessage(content="Thanks")]))
    assert sent(route)["messages"][1]["content"][:2] == [CODE_USE, CODE_RESULT]


async def test_other_vendors_leave_server_tool_blocks_out(api: respx.MockRouter) -> None:
    reply = AssistantMessage(content=EXPECTED_CONTENT, provider="anthropic", model=MODEL,
                             stop_reason=StopReason.END_TURN)
    history: list[Message] = [UserMessage(content="Weather in Paris?"), reply,
                              UserMessage(content="Tomorrow?")]
    chat = api.post("https://api.openai.com/v1/chat/completions").mock(
        return_value=openai_json(completion({"content": "ok"})))
    ollama = api.post("http://ollama.test:11434/api/chat").mock(return_value=httpx.Response(200, json={
        "model": "llama3.2", "created_at": "2025-06-02T10:00:00Z", "message": {"role": "assistant",
        "content": "ok"}, "done": True, "done_reason": "stop", "prompt_eval_count": 3, "eval_count": 1}))
    await OpenAIProvider("gpt-4.1", api_key="k", retry_policy=NO_RETRY).complete(LLMRequest.build(history))
    await OllamaProvider("llama3.2", host="http://ollama.test:11434",
                         retry_policy=NO_RETRY).complete(LLMRequest.build(history))
    expected = "Let me look that up.\nIt is 11°C and cloudy in Paris today."
    for route in (chat, ollama):
        messages = json.loads(route.calls[0].request.content)["messages"]
        assert messages[1] == {"role": "assistant", "content": expected}
        assert "srvtoolu" not in json.dumps(messages)


# ------------------------------------------------------------------ pause_turn in the agent loop


async def test_a_paused_server_tool_turn_is_sent_back_and_goes_on(api: respx.MockRouter) -> None:
    # Anthropic pauses a long server-tool turn with stop_reason "pause_turn"; the loop sends the
    # history back as it is (the paused reply last) and the model goes on in the same submit_turn.
    from agcore.agent import AgentBuilder, AgentSession, BasicAgent

    paused = message_body([{"type": "text", "text": "Let me look that up."}, SEARCH_USE, SEARCH_RESULT],
                          stop_reason="pause_turn")
    route = api.post(MESSAGES).mock(side_effect=[
        respond_json(paused), respond_json(message_body([CITED_TEXT]))])
    bundle = AgentBuilder().provider(make()).build()
    session = AgentSession(BasicAgent("searcher", system_prompt="Answer briefly."), "paused", bundle)
    result = await session.submit_turn("Weather in Paris?")
    assert result.stop == "done"
    assert result.text == "It is 11°C and cloudy in Paris today."
    assert route.call_count == 2
    resent = sent(route, 1)["messages"]
    assert [m["role"] for m in resent] == ["user", "assistant"]  # no made-up user message between
    assert resent[1]["content"] == [{"type": "text", "text": "Let me look that up."}, SEARCH_USE,
                                    SEARCH_RESULT]
