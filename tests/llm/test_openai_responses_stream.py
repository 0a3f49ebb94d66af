"""OpenAIResponsesProvider.stream() against the Responses API's SSE events, through respx: text,
function-call argument deltas, reasoning items, usage and stop reasons, failures inside the stream,
and the rule that a stream's final message is the one ``complete()`` returns for the same output."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpcore2
import httpx
import pytest
import respx

from agcore.llm.errors import RateLimitError, ServerError, StreamInterruptedError
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
from agcore.llm.types import LLMRequest, StopReason, TextBlock, ThinkingBlock, ToolUseBlock
from tests.llm.test_openai_provider import HI, REQUEST_ID, WEATHER, openai_router, pieces
from tests.llm.test_openai_responses import (
    CALL_ID,
    ENCRYPTED,
    RESPONSES,
    RS_ID,
    SUMMARY,
    api_error,
    call_item,
    make,
    message_item,
    reasoning_item,
    respond_json,
    response_body,
    sent,
)

pytestmark = pytest.mark.anyio

SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8", "x-request-id": REQUEST_ID}


def _split(text: str, size: int = 7) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def item_events(index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    """The events OpenAI streams for one output item: added (empty), its deltas, done (whole)."""
    kind, item_id = item["type"], item["id"]
    start = {**item, "status": "in_progress"}
    where = {"item_id": item_id, "output_index": index}
    events: list[dict[str, Any]] = []
    if kind == "message":
        start["content"] = []
        events.append({"type": "response.output_item.added", "output_index": index, "item": start})
        for part_index, part in enumerate(item["content"]):
            key = "text" if part["type"] == "output_text" else "refusal"
            events.append({"type": "response.content_part.added", **where, "content_index": part_index,
                           "part": {**part, key: ""}})
            delta_type = "response.output_text.delta" if key == "text" else "response.refusal.delta"
            events += [{"type": delta_type, **where, "content_index": part_index, "delta": piece,
                        "logprobs": []} for piece in _split(part[key])]
            events.append({"type": "response.content_part.done", **where, "content_index": part_index,
                           "part": part})
    elif kind == "function_call":
        start["arguments"] = ""
        events.append({"type": "response.output_item.added", "output_index": index, "item": start})
        events += [{"type": "response.function_call_arguments.delta", **where, "delta": piece}
                   for piece in _split(item["arguments"])]
        events.append({"type": "response.function_call_arguments.done", **where,
                       "arguments": item["arguments"]})
    elif kind == "reasoning":
        start["summary"] = []
        start.pop("encrypted_content", None)  # complete only in output_item.done
        events.append({"type": "response.output_item.added", "output_index": index, "item": start})
        for summary_index, part in enumerate(item["summary"]):
            events.append({"type": "response.reasoning_summary_part.added", **where,
                           "summary_index": summary_index, "part": {"type": "summary_text", "text": ""}})
            events += [{"type": "response.reasoning_summary_text.delta", **where,
                        "summary_index": summary_index, "delta": piece} for piece in _split(part["text"])]
            events.append({"type": "response.reasoning_summary_part.done", **where,
                           "summary_index": summary_index, "part": part})
    else:
        events.append({"type": "response.output_item.added", "output_index": index, "item": start})
    events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return events


def stream_events(body: dict[str, Any], *, final: str = "response.completed") -> list[dict[str, Any]]:
    """The whole event sequence for a response object, numbered as OpenAI numbers it."""
    opening = {**body, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": opening},
                                    {"type": "response.in_progress", "response": opening}]
    for index, item in enumerate(body["output"]):
        events += item_events(index, item)
    events.append({"type": final, "response": body})
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


def sse(events: list[dict[str, Any]]) -> bytes:
    """SSE as the Responses API sends it: an ``event:`` line naming the type, then ``data:``."""
    return b"".join(
        f"event: {event['type']}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n".encode()
        for event in events
    )


def respond_sse(body: bytes | AsyncIterator[bytes]) -> httpx.Response:
    return httpx.Response(200, headers=SSE_HEADERS, content=body)


async def collect(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in stream]


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    yield from openai_router(monkeypatch)


TOOL_TURN = response_body([reasoning_item(SUMMARY), message_item("Let me check."),
                           call_item('{"city": "Paris", "unit": "c"}')])


async def test_text_streams_as_deltas(api: respx.MockRouter) -> None:
    body = response_body([message_item("It is 18°C and cloudy in Paris.")])
    route = api.post(RESPONSES).mock(return_value=respond_sse(sse(stream_events(body))))
    events = await collect(make().stream(LLMRequest.build(HI)))
    assert sent(route)["stream"] is True
    assert isinstance(events[0], TextStart)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "It is 18°C and cloudy in Paris."
    assert events[-3] == TextEnd(index=0, text="It is 18°C and cloudy in Paris.")
    assert isinstance(events[-2], UsageEvent)
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.request_id == REQUEST_ID
    assert done.message.content == [TextBlock(text="It is 18°C and cloudy in Paris.")]
    assert done.message.stop_reason is StopReason.END_TURN


async def test_reasoning_text_and_call_argument_deltas(api: respx.MockRouter) -> None:
    api.post(RESPONSES).mock(return_value=respond_sse(sse(stream_events(TOOL_TURN))))
    events = await collect(make().stream(LLMRequest.build(HI, tools=[WEATHER])))
    kinds = [type(e) for e in events]
    assert kinds[0] is ThinkingStart
    assert "".join(e.thinking for e in events if isinstance(e, ThinkingDelta)) == "\n\n".join(SUMMARY)
    thinking_end = next(e for e in events if isinstance(e, ThinkingEnd))
    # The finished block carries what only output_item.done has: the encrypted content.
    assert thinking_end.block == ThinkingBlock(thinking="\n\n".join(SUMMARY), signature=RS_ID,
                                               redacted_data=ENCRYPTED, provider="openai-responses")
    start = next(e for e in events if isinstance(e, ToolCallStart))
    assert (start.index, start.id, start.name) == (2, CALL_ID, "get_weather")
    fragments = [e.arguments for e in events if isinstance(e, ToolCallDelta)]
    assert len(fragments) > 1
    assert "".join(fragments) == '{"city": "Paris", "unit": "c"}'
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert end.tool_call == ToolUseBlock(id=CALL_ID, name="get_weather", input={"city": "Paris", "unit": "c"})
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.stop_reason is StopReason.TOOL_USE
    assert [type(b) for b in done.message.content] == [ThinkingBlock, TextBlock, ToolUseBlock]


@pytest.mark.parametrize("body", [
    TOOL_TURN,
    response_body([message_item("", refusal="I can't help with that.")]),
    response_body([reasoning_item(), call_item('{"city": "Par')], status="incomplete",
                  incomplete="max_output_tokens"),
    response_body([{"id": "ws_1", "type": "web_search_call", "status": "completed",
                    "action": {"type": "search", "query": "Paris"}},
                   message_item(""), message_item("Sunny.")]),
], ids=["tool-turn", "refusal", "cut-off", "hosted-tool-and-empty-message"])
async def test_stream_and_complete_agree(api: respx.MockRouter, body: dict[str, Any]) -> None:
    final = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
    api.post(RESPONSES).mock(side_effect=[respond_sse(sse(stream_events(body, final=final))),
                                          respond_json(body)])
    provider = make()
    request = LLMRequest.build(HI, tools=[WEATHER])
    done = (await collect(provider.stream(request)))[-1]
    assert isinstance(done, DoneEvent)
    assert done.message == (await provider.complete(request)).message


async def test_usage_arrives_with_the_completed_response(api: respx.MockRouter) -> None:
    api.post(RESPONSES).mock(return_value=respond_sse(sse(stream_events(TOOL_TURN))))
    events = await collect(make().stream(LLMRequest.build(HI)))
    usage = [e for e in events if isinstance(e, UsageEvent)]
    assert len(usage) == 1
    assert usage[0].usage.output_tokens == 148
    assert events[-1].message.usage == usage[0].usage  # type: ignore[union-attr]


async def test_items_the_stream_never_closed_end_from_the_final_response(api: respx.MockRouter) -> None:
    """A server that skips output_item.done (some compatible ones) still yields whole blocks."""
    events = [e for e in stream_events(TOOL_TURN) if e["type"] != "response.output_item.done"]
    api.post(RESPONSES).mock(return_value=respond_sse(sse(events)))
    done = (await collect(make().stream(LLMRequest.build(HI))))[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.tool_calls == [ToolUseBlock(id=CALL_ID, name="get_weather",
                                                    input={"city": "Paris", "unit": "c"})]
    assert done.message.thinking[0].redacted_data == ENCRYPTED


async def test_transport_chunks_split_anywhere(api: respx.MockRouter) -> None:
    data = sse(stream_events(TOOL_TURN))
    api.post(RESPONSES).mock(return_value=respond_sse(pieces(data, list(range(5, len(data), 37)))))
    done = (await collect(make().stream(LLMRequest.build(HI))))[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.tool_calls[0].input == {"city": "Paris", "unit": "c"}


# ------------------------------------------------------------------ failures


async def test_error_event_mid_stream_keeps_the_partial_text(api: respx.MockRouter) -> None:
    body = response_body([message_item("It is 18°C and")])
    events = stream_events(body)[:-2]  # no output_item.done, no response.completed
    events.append({"type": "error", "code": "rate_limit_exceeded", "param": None, "sequence_number": 99,
                   "message": "Rate limit reached for o4-mini on tokens per min (TPM). Try again in 2s."})
    api.post(RESPONSES).mock(return_value=respond_sse(sse(events)))
    error = (await collect(make().stream(LLMRequest.build(HI))))[-1]
    assert isinstance(error, ErrorEvent)
    assert isinstance(error.to_exception(), RateLimitError)
    assert "rate_limit_exceeded" in error.message
    assert error.partial is not None
    assert error.partial.text == "It is 18°C and"


async def test_nested_error_event_from_a_gateway(api: respx.MockRouter) -> None:
    events = [*stream_events(TOOL_TURN)[:3], {"type": "error", "sequence_number": 3, "error": {
        "type": "server_error", "code": "server_error", "message": "upstream overloaded"}}]
    api.post(RESPONSES).mock(return_value=respond_sse(sse(events)))
    error = (await collect(make().stream(LLMRequest.build(HI))))[-1]
    assert isinstance(error, ErrorEvent)
    assert isinstance(error.to_exception(), ServerError)
    assert "upstream overloaded" in error.message


async def test_failed_response(api: respx.MockRouter) -> None:
    failed = response_body([], status="failed", error={"code": "server_error",
                                                       "message": "The model failed to generate a response."})
    api.post(RESPONSES).mock(return_value=respond_sse(sse(stream_events(failed, final="response.failed"))))
    error = (await collect(make().stream(LLMRequest.build(HI))))[-1]
    assert isinstance(error, ErrorEvent)
    assert isinstance(error.to_exception(), ServerError)
    assert error.is_retryable
    assert "The model failed to generate a response." in error.message


async def test_stream_cut_before_completion(api: respx.MockRouter) -> None:
    data = sse(stream_events(TOOL_TURN)[:-1])
    api.post(RESPONSES).mock(side_effect=[
        respond_sse(data),
        respond_sse(pieces(data, [len(data) // 2], httpcore2.ReadError("connection reset by peer"))),
    ])
    for _ in range(2):
        error = (await collect(make().stream(LLMRequest.build(HI))))[-1]
        assert isinstance(error, ErrorEvent)
        assert isinstance(error.to_exception(), StreamInterruptedError)
        assert error.is_retryable


async def test_http_error_before_the_stream(api: respx.MockRouter) -> None:
    api.post(RESPONSES).mock(return_value=respond_json(
        api_error("Rate limit reached.", "requests", "rate_limit_exceeded"), status=429,
        headers={"retry-after": "3"}))
    error = (await collect(make().stream(LLMRequest.build(HI))))[-1]
    assert isinstance(error, ErrorEvent)
    assert (error.error_type, error.status_code, error.retry_after) == ("RateLimitError", 429, 3.0)


async def test_a_json_answer_to_a_stream_request_is_the_whole_reply(api: respx.MockRouter) -> None:
    api.post(RESPONSES).mock(return_value=respond_json(TOOL_TURN))
    events = await collect(make().stream(LLMRequest.build(HI)))
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert any(isinstance(e, ToolCallEnd) for e in events)
    assert done.message.stop_reason is StopReason.TOOL_USE
    assert done.message.thinking[0].redacted_data == ENCRYPTED


# ------------------------------------------------------------------ stop sequences (applied here)

STOP = "\nObservation:"
RAMBLING = response_body([reasoning_item(), message_item(
    "I'll look it up.\nAction: get_weather Paris\nObservation: 18°C (made up)\nFinal: 18°C"),
    call_item()])


async def test_stop_sequences_cut_a_complete_reply(api: respx.MockRouter) -> None:
    route = api.post(RESPONSES).mock(return_value=respond_json(RAMBLING))
    message = (await make().complete(LLMRequest.build(HI, stop_sequences=["STOP", STOP]))).message
    assert "stop" not in sent(route)  # the API has none
    assert message.text == "I'll look it up.\nAction: get_weather Paris"
    assert message.stop_reason is StopReason.STOP_SEQUENCE
    assert message.tool_calls == []  # what came after the stop sequence is dropped
    assert isinstance(message.content[0], ThinkingBlock)  # what came before is kept
    assert message.usage.output_tokens == 148  # the model wrote it all


@pytest.mark.parametrize("size", [1, 3, 7, 200])
async def test_a_stream_never_shows_what_follows_a_stop_sequence(api: respx.MockRouter, size: int) -> None:
    """Whatever the delta boundaries, no piece of the stop sequence or of what follows is shown."""
    events = stream_events(RAMBLING)
    text = RAMBLING["output"][1]["content"][0]["text"]
    deltas = [e for e in events if e["type"] == "response.output_text.delta"]
    for event in deltas:  # re-split the text deltas at `size`
        events.remove(event)
    at = next(i for i, e in enumerate(events) if e["type"] == "response.content_part.added")
    events[at + 1:at + 1] = [{**deltas[0], "delta": text[i:i + size]} for i in range(0, len(text), size)]
    api.post(RESPONSES).mock(side_effect=[respond_sse(sse(events)), respond_json(RAMBLING)])
    provider = make()
    request = LLMRequest.build(HI, stop_sequences=[STOP])
    streamed = await collect(provider.stream(request))
    shown = "".join(e.text for e in streamed if isinstance(e, TextDelta))
    assert shown == "I'll look it up.\nAction: get_weather Paris"
    assert TextEnd(index=1, text=shown) in streamed
    assert not any(isinstance(e, ToolCallStart | ToolCallEnd) for e in streamed)
    assert any(isinstance(e, UsageEvent) for e in streamed)  # read to the end, for the usage
    done = streamed[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.stop_reason is StopReason.STOP_SEQUENCE
    assert done.message == (await provider.complete(request)).message
