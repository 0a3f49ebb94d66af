"""An OpenAI-compatible stream whose calls share one id but keep their own ``index`` (servers that
number or repeat ids): each call stays whole. Found by issue 17's fault campaign: the second call's
deltas were read as the first call's, and its arguments as a call with no name."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from agcore.llm.events import DoneEvent
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import NO_RETRY
from agcore.llm.types import LLMRequest, UserMessage

pytestmark = pytest.mark.anyio

URL = "https://api.openai.com/v1/chat/completions"


def chunk(delta: dict[str, Any] | None, finish: str | None = None) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1",
            "choices": choices}
    return f"data: {json.dumps(body)}\n\n".encode()


def call(index: int, *, name: str | None = None, arguments: str = "") -> dict[str, Any]:
    part: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if name is not None:
        part.update(id="call_0", type="function")
        part["function"]["name"] = name
    return {"tool_calls": [part]}


async def test_calls_sharing_an_id_at_different_indexes_stay_apart() -> None:
    body = b"".join([
        chunk({"role": "assistant", "content": None}),
        chunk(call(0, name="lookup")),
        chunk(call(0, arguments='{"city": "Paris"}')),
        chunk(call(1, name="clock")),
        chunk(call(1, arguments='{"zone": "CET"}')),
        chunk({}, "tool_calls"),
    ]) + b"data: [DONE]\n\n"
    with respx.mock() as router:
        router.post(URL).mock(return_value=httpx.Response(200, content=body,
                                                          headers={"content-type": "text/event-stream"}))
        provider = OpenAIProvider("gpt-4.1", api_key="k", retry_policy=NO_RETRY)
        events = [e async for e in provider.stream(LLMRequest.build([UserMessage(content="hi")]))]
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert [(c.id, c.name, c.input) for c in done.message.tool_calls] == [
        ("call_0", "lookup", {"city": "Paris"}), ("call_0", "clock", {"zone": "CET"})]
