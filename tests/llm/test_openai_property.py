"""Property: for any assistant reply (optional reasoning, optional text, 0-3 tool calls), the
non-streaming completion and the chunk stream that carries the same reply (split at random points,
argument deltas interleaved across calls, the SSE bytes cut anywhere) give the same message."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st

from agcore.llm.events import DoneEvent
from agcore.llm.types import (
    AssistantMessage,
    ContentBlock,
    LLMRequest,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from tests.llm.strategies import tool_ids, tool_inputs
from tests.llm.test_openai_provider import (
    COMPAT,
    COMPAT_CHAT,
    HI,
    MODEL,
    chunk,
    collect,
    completion,
    make,
    pieces,
    respond_json,
    respond_sse,
    sse,
    usage_chunk,
    wire_usage,
)

pytestmark = pytest.mark.anyio

Call = tuple[str, str, dict[str, Any]]

replies = st.fixed_dictionaries({
    "reasoning": st.none() | st.text(min_size=1, max_size=40),
    "text": st.none() | st.text(min_size=1, max_size=60),
    "calls": st.lists(
        st.tuples(tool_ids, st.from_regex(r"[a-z][a-z_]{0,15}", fullmatch=True), tool_inputs),
        max_size=3, unique_by=lambda call: call[0],
    ),
    "usage": st.tuples(st.integers(0, 5000), st.integers(0, 2000), st.integers(0, 5000)),
})


def split(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` cut at random points (never into empty pieces)."""
    if len(text) < 2:
        return [text]
    cuts = sorted(draw(st.sets(st.integers(1, len(text) - 1), max_size=6)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def expected_message(reply: dict[str, Any]) -> AssistantMessage:
    blocks: list[ContentBlock] = []
    if reply["reasoning"]:
        blocks.append(ThinkingBlock(thinking=reply["reasoning"], provider="openai-compatible"))
    if reply["text"]:
        blocks.append(TextBlock(text=reply["text"]))
    blocks += [ToolUseBlock(id=i, name=name, input=arguments) for i, name, arguments in reply["calls"]]
    prompt, output, cached = reply["usage"]
    return AssistantMessage(
        content=blocks,
        stop_reason=StopReason.TOOL_USE if reply["calls"] else StopReason.END_TURN,
        model=MODEL,
        provider="openai-compatible",
        usage=Usage(input_tokens=prompt, output_tokens=output, cache_read_tokens=cached),
    )


def as_completion(reply: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"content": reply["text"]}
    if reply["reasoning"]:
        message["reasoning_content"] = reply["reasoning"]
    if reply["calls"]:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
            for i, name, arguments in reply["calls"]]
    prompt, output, cached = reply["usage"]
    return completion(message, finish_reason="tool_calls" if reply["calls"] else "stop",
                      usage=wire_usage(prompt + cached, output, cached))


def as_chunks(reply: dict[str, Any], draw: st.DrawFn) -> list[dict[str, Any]]:
    chunks = [chunk({"role": "assistant", "content": "", "refusal": None})]
    if reply["reasoning"]:
        chunks += [chunk({"content": None, "reasoning_content": piece})
                   for piece in split(draw, reply["reasoning"])]
    if reply["text"]:
        chunks += [chunk({"content": piece}) for piece in split(draw, reply["text"])]
    # Each call: a first delta with id and name, then its argument fragments. Calls start in index
    # order (that is the order of the reply), but fragments of started calls interleave at random.
    queues = []
    for index, (call_id, name, arguments) in enumerate(reply["calls"]):
        first = {"index": index, "id": call_id, "type": "function",
                 "function": {"name": name, "arguments": ""}}
        rest = [{"index": index, "function": {"arguments": piece}}
                for piece in split(draw, json.dumps(arguments))]
        queues.append([first, *rest])
    started = 0
    while any(queues):
        ready = [i for i in range(started) if queues[i]]
        if started < len(queues):
            ready.append(started)
        pick = draw(st.sampled_from(ready))
        if pick == started:
            started += 1
        chunks.append(chunk({"tool_calls": [queues[pick].pop(0)]}))
    prompt, output, cached = reply["usage"]
    chunks += [chunk({}, "tool_calls" if reply["calls"] else "stop"),
               usage_chunk(prompt + cached, output, cached)]
    return chunks


@st.composite
def exchanges(draw: st.DrawFn) -> tuple[dict[str, Any], bytes, list[int]]:
    """A reply, its SSE body and where the transport cuts that body. Everything is drawn here, not
    in the async test: a draw may end the example by raising, which must not cross the event loop."""
    reply = draw(replies)
    body = sse(*as_chunks(reply, draw))
    return reply, body, draw(st.lists(st.integers(1, len(body) - 1), max_size=8))


@settings(max_examples=50, deadline=None)
@given(exchange=exchanges())
async def test_stream_and_complete_give_the_same_message(
    exchange: tuple[dict[str, Any], bytes, list[int]],
) -> None:
    reply, body, cuts = exchange
    with respx.mock(assert_all_called=False) as router:
        router.post(COMPAT_CHAT).mock(side_effect=[
            respond_json(as_completion(reply)),
            respond_sse(pieces(body, cuts)),
        ])
        provider = make(base_url=COMPAT)
        completed = (await provider.complete(LLMRequest.build(HI))).message
        done = (await collect(provider.stream(LLMRequest.build(HI))))[-1]
        await provider.aclose()
    assert isinstance(done, DoneEvent), done
    assert completed == done.message == expected_message(reply)
