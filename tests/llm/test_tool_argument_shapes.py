"""Every shape a tool call's arguments arrive in, through every provider, complete and stream, on
each vendor's real wire format (respx): an object, a string of JSON, repairable and unrepairable
broken JSON, non-object JSON (an array, a number, a string, a boolean) and null. Each one becomes
either arguments or a ``parse_error`` on the ``ToolUseBlock`` (which the loop answers with an error
result the model can correct); the reply and its usage are never lost to an exception.

Regression for issue 17: an Anthropic non-streaming ``tool_use.input`` that was a list or a number
raised ``AttributeError`` from ``parse_tool_arguments``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import respx

from agcore.llm.events import DoneEvent, StreamEvent
from agcore.llm.provider import BaseProvider
from agcore.llm.providers.anthropic import AnthropicProvider
from agcore.llm.providers.ollama import OllamaProvider
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import NO_RETRY
from agcore.llm.types import AssistantMessage, LLMRequest, ToolDefinition, ToolUseBlock, Usage, UserMessage

pytestmark = pytest.mark.anyio

CITY = {"city": "Paris"}
TOOL = ToolDefinition(name="get_weather", input_schema={
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
REQUEST = LLMRequest.build([UserMessage(content="Weather in Paris?")], tools=[TOOL])
USAGE = Usage(input_tokens=31, output_tokens=17)


@dataclass(frozen=True)
class Shape:
    """One argument shape: as JSON text (OpenAI, Anthropic's streamed ``partial_json``) and as the
    decoded value (Anthropic's ``tool_use.input``, Ollama's ``arguments``), and what it must give."""

    name: str
    text: str
    value: Any
    expected: dict[str, Any]
    error: str | None  # a word the parse_error must hold; None: no error


SHAPES = [
    Shape("object", '{"city": "Paris"}', CITY, CITY, None),
    Shape("string-of-json", json.dumps(json.dumps(CITY)), json.dumps(CITY), CITY, None),
    Shape("repairable-json", '{"city": "Paris",', '{"city": "Paris",', CITY, None),
    Shape("broken-json", "city=Paris", "city=Paris", {}, "could not be repaired"),
    Shape("array", "[1, 2]", [1, 2], {}, "array"),
    Shape("number", "42", 42, {}, "number"),
    Shape("json-string", '"Paris"', '"Paris"', {}, "string"),
    Shape("boolean", "true", True, {}, "boolean"),
    Shape("null", "null", None, {}, None),
]


def check(message: AssistantMessage, shape: Shape) -> None:
    """The call is there, with its arguments or an error the model can act on; usage is kept."""
    calls = [b for b in message.content if isinstance(b, ToolUseBlock)]
    assert len(calls) == 1
    call = calls[0]
    assert call.name == "get_weather"
    assert call.input == shape.expected
    if shape.error is None:
        assert call.parse_error is None
    else:
        assert call.parse_error is not None
        assert shape.error in call.parse_error
        assert "Call the tool again with one JSON object" in call.parse_error
    assert message.usage == USAGE


async def streamed(provider: BaseProvider) -> AssistantMessage:
    events: list[StreamEvent] = [e async for e in provider.stream(REQUEST)]
    done = events[-1]
    assert isinstance(done, DoneEvent), done
    return done.message


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=True) as mock:
        yield mock


# ------------------------------------------------------------------------------ Anthropic


def anthropic_reply(value: Any) -> dict[str, Any]:
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
        "model": "claude-haiku-4-5", "stop_reason": "tool_use", "stop_sequence": None,
        "content": [{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
                     "input": value}],
        "usage": {"input_tokens": 31, "output_tokens": 17, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0},
    }


def anthropic_sse(text: str) -> bytes:
    start = dict(anthropic_reply({}), content=[], stop_reason=None)
    start["usage"] = dict(start["usage"], output_tokens=1)
    middle = len(text) // 2
    events = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "input": {}}}),
        *[("content_block_delta", {"type": "content_block_delta", "index": 0,
                                   "delta": {"type": "input_json_delta", "partial_json": part}})
          for part in ("", text[:middle], text[middle:])],
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 17},
                           "delta": {"stop_reason": "tool_use", "stop_sequence": None}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


def anthropic() -> AnthropicProvider:
    return AnthropicProvider("claude-haiku-4-5", api_key="sk-ant-test", base_url="https://api.anthropic.com",
                             retry_policy=NO_RETRY)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
async def test_anthropic_complete(router: respx.MockRouter, shape: Shape) -> None:
    router.post("https://api.anthropic.com/v1/messages").mock(
        return_value=httpx.Response(200, json=anthropic_reply(shape.value)))
    check((await anthropic().complete(REQUEST)).message, shape)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
async def test_anthropic_stream(router: respx.MockRouter, shape: Shape) -> None:
    router.post("https://api.anthropic.com/v1/messages").mock(return_value=httpx.Response(
        200, content=anthropic_sse(shape.text), headers={"content-type": "text/event-stream"}))
    check(await streamed(anthropic()), shape)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
async def test_anthropic_stream_with_input_given_whole_at_block_start(
    router: respx.MockRouter, shape: Shape
) -> None:
    # No input_json_delta at all: the input announced by content_block_start is the call's input.
    body = anthropic_sse("").replace(b'"input": {}', b'"input": ' + json.dumps(shape.value).encode())
    router.post("https://api.anthropic.com/v1/messages").mock(return_value=httpx.Response(
        200, content=body, headers={"content-type": "text/event-stream"}))
    check(await streamed(anthropic()), shape)


# ------------------------------------------------------------------------------ OpenAI


def openai_call(arguments: Any) -> dict[str, Any]:
    return {"id": "call_Vx2b3HYdLn5aVLWlo1rpjrKE", "type": "function",
            "function": {"name": "get_weather", "arguments": arguments}}


def openai_usage() -> dict[str, Any]:
    return {"prompt_tokens": 31, "completion_tokens": 17, "total_tokens": 48}


def openai_reply(arguments: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", "object": "chat.completion", "created": 1741569952,
        "model": "gpt-4.1", "usage": openai_usage(),
        "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": None, "message": {
            "role": "assistant", "content": None, "refusal": None, "tool_calls": [openai_call(arguments)]}}],
    }


def openai_sse(text: str) -> bytes:
    def chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None) -> dict[str, Any]:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1741569952,
                "model": "gpt-4.1", "choices": choices, "usage": usage}

    first = dict(openai_call(""), index=0)
    middle = len(text) // 2
    chunks = [
        chunk({"role": "assistant", "content": None, "tool_calls": [first]}),
        *[chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]})
          for part in (text[:middle], text[middle:])],
        chunk({}, "tool_calls"),
        chunk(None, usage=openai_usage()),
    ]
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def openai() -> OpenAIProvider:
    return OpenAIProvider("gpt-4.1", api_key="sk-test", base_url="https://api.openai.com/v1",
                          retry_policy=NO_RETRY)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
async def test_openai_complete(router: respx.MockRouter, shape: Shape) -> None:
    router.post("https://api.openai.com/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=openai_reply(shape.text)))
    check((await openai().complete(REQUEST)).message, shape)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
async def test_openai_complete_with_decoded_arguments(router: respx.MockRouter, shape: Shape) -> None:
    # Some compatible servers send the arguments decoded (an object, or whatever the model wrote).
    router.post("https://api.openai.com/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=openai_reply(shape.value)))
    check((await openai().complete(REQUEST)).message, shape)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
async def test_openai_stream(router: respx.MockRouter, shape: Shape) -> None:
    router.post("https://api.openai.com/v1/chat/completions").mock(return_value=httpx.Response(
        200, content=openai_sse(shape.text), headers={"content-type": "text/event-stream"}))
    check(await streamed(openai()), shape)


# ------------------------------------------------------------------------------ Ollama


def ollama_line(message: dict[str, Any], *, done: bool) -> dict[str, Any]:
    line: dict[str, Any] = {"model": "llama3.2", "created_at": "2025-05-27T22:54:57.641643Z",
                            "message": {"role": "assistant", "content": "", **message}, "done": done}
    if done:
        line.update(done_reason="stop", prompt_eval_count=31, eval_count=17)
    return line


def ollama_calls(value: Any) -> dict[str, Any]:
    return {"tool_calls": [{"function": {"name": "get_weather", "arguments": value}}]}


def ollama() -> OllamaProvider:
    return OllamaProvider("llama3.2", host="http://ollama.test:11434", retry_policy=NO_RETRY)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
async def test_ollama_complete(router: respx.MockRouter, shape: Shape) -> None:
    router.post("http://ollama.test:11434/api/chat").mock(
        return_value=httpx.Response(200, json=ollama_line(ollama_calls(shape.value), done=True)))
    check((await ollama().complete(REQUEST)).message, shape)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
async def test_ollama_stream(router: respx.MockRouter, shape: Shape) -> None:
    lines = [ollama_line(ollama_calls(shape.value), done=False), ollama_line({}, done=True)]
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    router.post("http://ollama.test:11434/api/chat").mock(return_value=httpx.Response(
        200, content=body, headers={"content-type": "application/x-ndjson"}))
    check(await streamed(ollama()), shape)


# ------------------------------------------------------------------------------ through the loop


@pytest.mark.parametrize("value", [[1, 2], 42, "Paris", True], ids=["array", "number", "string", "boolean"])
async def test_anthropic_non_object_input_reaches_the_model_as_a_correctable_error(
    router: respx.MockRouter, value: Any
) -> None:
    """The issue's case end to end: the turn goes on, the model reads the parse error in the tool
    result and calls again; both replies and their usage are kept."""
    from agcore.agent import AgentBuilder, AgentSession, BasicAgent, ToolResults
    from agcore.tools import tool

    seen: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        seen.append(city)
        return f"18°C in {city}"

    answer = {**anthropic_reply({}), "stop_reason": "end_turn",
              "content": [{"type": "text", "text": "It is 18°C in Paris."}]}
    route = router.post("https://api.anthropic.com/v1/messages").mock(side_effect=[
        httpx.Response(200, json=anthropic_reply(value)),
        httpx.Response(200, json=anthropic_reply(CITY)),
        httpx.Response(200, json=answer),
    ])
    bundle = AgentBuilder().provider(anthropic()).tools(get_weather).build()
    session = AgentSession(BasicAgent(name="weather"), None, bundle)
    result = await session.submit_turn("Weather in Paris?")
    assert result.ok, result.error
    assert result.text == "It is 18°C in Paris."
    assert seen == ["Paris"]
    first = next(m for m in session.messages if isinstance(m, ToolResults)).results[0]
    assert first.is_error
    assert "Call the tool again with one JSON object" in first.text
    assert session.usage.usage.input_tokens == 3 * USAGE.input_tokens
    assert session.usage.usage.output_tokens == 3 * USAGE.output_tokens
    # The second request carried the first call and its error result back to the model.
    sent = json.loads(route.calls[1].request.content)
    assert sent["messages"][1]["content"][0]["type"] == "tool_use"
    assert sent["messages"][2]["content"][0]["is_error"] is True


# ------------------------------------------------------------------------------ cut at max_tokens
# A reply that hits the output token limit in the middle of a tool call's arguments: what was written
# often still parses (or repairs) into an object with a truncated value, here {"city": "Par"}. Found by
# issue 17's fault campaign: such a call ran with arguments the model never finished writing.

CUT_TEXT = '{"city": "Par'


def cut_check(message: AssistantMessage) -> None:
    call = message.content[-1]
    assert isinstance(call, ToolUseBlock)
    assert call.parse_error is not None
    assert "output token limit (max_tokens)" in call.parse_error
    assert message.usage == USAGE


async def test_anthropic_complete_cut_at_max_tokens(router: respx.MockRouter) -> None:
    body = {**anthropic_reply({"city": "Par"}), "stop_reason": "max_tokens"}
    router.post("https://api.anthropic.com/v1/messages").mock(return_value=httpx.Response(200, json=body))
    cut_check((await anthropic().complete(REQUEST)).message)


async def test_anthropic_stream_cut_at_max_tokens(router: respx.MockRouter) -> None:
    body = anthropic_sse(CUT_TEXT).replace(b'"stop_reason": "tool_use"', b'"stop_reason": "max_tokens"')
    router.post("https://api.anthropic.com/v1/messages").mock(return_value=httpx.Response(
        200, content=body, headers={"content-type": "text/event-stream"}))
    cut_check(await streamed(anthropic()))


async def test_openai_complete_cut_at_length(router: respx.MockRouter) -> None:
    body = openai_reply(CUT_TEXT)
    body["choices"][0]["finish_reason"] = "length"
    router.post("https://api.openai.com/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=body))
    cut_check((await openai().complete(REQUEST)).message)


async def test_openai_stream_cut_at_length(router: respx.MockRouter) -> None:
    body = openai_sse(CUT_TEXT).replace(b'"finish_reason": "tool_calls"', b'"finish_reason": "length"')
    router.post("https://api.openai.com/v1/chat/completions").mock(return_value=httpx.Response(
        200, content=body, headers={"content-type": "text/event-stream"}))
    cut_check(await streamed(openai()))


async def test_a_call_finished_before_the_limit_is_kept(router: respx.MockRouter) -> None:
    # Cut in a text block written after the call: the call itself is whole and runs.
    body = {**anthropic_reply(CITY), "stop_reason": "max_tokens"}
    body["content"] = [*body["content"], {"type": "text", "text": "And now I will"}]
    router.post("https://api.anthropic.com/v1/messages").mock(return_value=httpx.Response(200, json=body))
    message = (await anthropic().complete(REQUEST)).message
    assert message.tool_calls[0].parse_error is None
    assert message.tool_calls[0].input == CITY


async def test_a_cut_call_is_not_run_and_the_model_is_told(router: respx.MockRouter) -> None:
    from agcore.agent import AgentBuilder, AgentSession, BasicAgent, ToolResults
    from agcore.tools import tool

    seen: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        seen.append(city)
        return f"18°C in {city}"

    answer = {**anthropic_reply({}), "stop_reason": "end_turn",
              "content": [{"type": "text", "text": "It is 18°C in Paris."}]}
    router.post("https://api.anthropic.com/v1/messages").mock(side_effect=[
        httpx.Response(200, json={**anthropic_reply({"city": "Par"}), "stop_reason": "max_tokens"}),
        httpx.Response(200, json=anthropic_reply(CITY)),
        httpx.Response(200, json=answer),
    ])
    bundle = AgentBuilder().provider(anthropic()).tools(get_weather).build()
    session = AgentSession(BasicAgent(name="weather"), None, bundle)
    result = await session.submit_turn("Weather in Paris?")
    assert result.ok, result.error
    assert seen == ["Paris"]  # never "Par"
    first = next(m for m in session.messages if isinstance(m, ToolResults)).results[0]
    assert first.is_error
    assert "output token limit" in first.text

