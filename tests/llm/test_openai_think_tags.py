"""``<think>…</think>`` that a local server leaves in ``content`` (llama.cpp with
``--reasoning-format none``, and servers that do not split reasoning out) becomes a ThinkingBlock /
ThinkingDelta, not answer text, in ``complete()`` and ``stream()`` alike, whatever chunks the tags
are cut into. The bodies are llama.cpp's, field for field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from agcore.llm.events import DoneEvent, TextDelta, ThinkingDelta, ThinkingEnd, ThinkingStart
from agcore.llm.providers._think_tags import ThinkTagSplitter, split_leading_think
from agcore.llm.types import LLMRequest, StopReason, TextBlock, ThinkingBlock, ToolUseBlock
from tests.llm.test_openai_provider import COMPAT, COMPAT_CHAT, HI, collect, make, openai_router

pytestmark = pytest.mark.anyio

MODEL = "Qwen3-1.7B-Q4_K_M.gguf"
REPLY = (
    "<think>\nThe user asks about the weather in Paris. I have no tool for it.\n</think>\n\n"
    "I cannot look that up."
)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    yield from openai_router(monkeypatch)


def llama_completion(content: str | None, *, finish_reason: str = "stop", **message: Any) -> dict[str, Any]:
    """llama-server's (b6000) non-streaming answer."""
    return {
        "choices": [
            {
                "finish_reason": finish_reason,
                "index": 0,
                "message": {"role": "assistant", "content": content, **message},
            }
        ],
        "created": 1764201600,
        "model": MODEL,
        "system_fingerprint": "b6100-7a3c1f2",
        "object": "chat.completion",
        "usage": {"completion_tokens": 31, "prompt_tokens": 18, "total_tokens": 49},
        "id": "chatcmpl-Jx2dV7uKQ9nR4bT1",
        "timings": {"prompt_n": 18, "predicted_n": 31},
    }


def llama_chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "choices": [{"finish_reason": finish_reason, "index": 0, "delta": delta}],
        "created": 1764201600,
        "id": "chatcmpl-Jx2dV7uKQ9nR4bT1",
        "model": MODEL,
        "system_fingerprint": "b6100-7a3c1f2",
        "object": "chat.completion.chunk",
    }


def llama_stream(pieces: list[str], *, finish_reason: str = "stop") -> bytes:
    chunks = [
        llama_chunk({"role": "assistant", "content": None}),
        *(llama_chunk({"content": piece}) for piece in pieces),
        llama_chunk({}, finish_reason),
    ]
    chunks[-1]["usage"] = {"completion_tokens": 31, "prompt_tokens": 18, "total_tokens": 49}
    body = b"".join(b"data: " + json.dumps(c, separators=(",", ":")).encode() + b"\n\n" for c in chunks)
    return body + b"data: [DONE]\n\n"


def sse(body: bytes) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)


async def test_complete_turns_the_leading_think_block_into_thinking(api: respx.MockRouter) -> None:
    api.post(COMPAT_CHAT).mock(return_value=httpx.Response(200, json=llama_completion(REPLY)))
    message = (await make(base_url=COMPAT).complete(LLMRequest.build(HI))).message
    assert message.content == [
        ThinkingBlock(
            thinking="The user asks about the weather in Paris. I have no tool for it.",
            provider="openai-compatible",
        ),
        TextBlock(text="I cannot look that up."),
    ]
    assert message.text == "I cannot look that up."


async def test_the_stream_shows_thinking_as_thinking_and_agrees_with_complete(api: respx.MockRouter) -> None:
    pieces = [
        "<th",
        "ink>\nThe user asks",
        " about the weather in Paris.",
        " I have no tool for it.\n</",
        "think>",
        "\n\n",
        "I cannot",
        " look that up.",
    ]
    api.post(COMPAT_CHAT).mock(
        side_effect=[sse(llama_stream(pieces)), httpx.Response(200, json=llama_completion(REPLY))]
    )
    provider = make(base_url=COMPAT)
    events = await collect(provider.stream(LLMRequest.build(HI)))
    assert events[0] == ThinkingStart(index=0)
    thinking = "".join(e.thinking for e in events if isinstance(e, ThinkingDelta))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert "<think>" not in thinking + text
    assert "</think>" not in thinking + text
    assert text == "I cannot look that up."
    assert [type(e).__name__ for e in events].index("ThinkingEnd") < [type(e).__name__ for e in events].index(
        "TextStart"
    )
    done = events[-1]
    assert isinstance(done, DoneEvent)
    whole = (await provider.complete(LLMRequest.build(HI))).message
    assert done.message.text == whole.text
    [block] = [b for b in done.message.content if isinstance(b, ThinkingBlock)]
    assert block.thinking.rstrip() == whole.content[0].thinking  # type: ignore[union-attr]
    assert block.thinking.startswith("The user asks")  # the line break after <think> is not thinking


@pytest.mark.parametrize("cut", range(1, len(REPLY)))
def test_any_cut_between_two_chunks_gives_the_same_split(cut: int) -> None:
    splitter = ThinkTagSplitter()
    pieces = [*splitter.feed(REPLY[:cut]), *splitter.feed(REPLY[cut:]), *splitter.flush()]
    thinking = "".join(p for kind, p in pieces if kind == "thinking")
    text = "".join(p for kind, p in pieces if kind == "text")
    assert (thinking.rstrip(), text) == split_leading_think(REPLY)


async def test_think_before_a_tool_call(api: respx.MockRouter) -> None:
    call = {
        "type": "function",
        "id": "Fh3kq0Zs9cQx",
        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
    }
    body = llama_completion(
        "<think>I should call the tool.</think>", finish_reason="tool_calls", tool_calls=[call]
    )
    api.post(COMPAT_CHAT).mock(return_value=httpx.Response(200, json=body))
    message = (await make(base_url=COMPAT).complete(LLMRequest.build(HI))).message
    assert message.content == [
        ThinkingBlock(thinking="I should call the tool.", provider="openai-compatible"),
        ToolUseBlock(id="Fh3kq0Zs9cQx", name="get_weather", input={"city": "Paris"}),
    ]
    assert message.stop_reason is StopReason.TOOL_USE


async def test_a_reply_cut_off_while_thinking_is_all_thinking(api: respx.MockRouter) -> None:
    api.post(COMPAT_CHAT).mock(
        return_value=sse(llama_stream(["<think>\nStep one,", " step two"], finish_reason="length"))
    )
    events = await collect(make(base_url=COMPAT).stream(LLMRequest.build(HI)))
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.text == ""
    assert isinstance(done.message.content[0], ThinkingBlock)
    assert done.message.content[0].thinking == "Step one, step two"
    assert any(isinstance(e, ThinkingEnd) for e in events)


async def test_a_think_tag_inside_the_answer_is_text(api: respx.MockRouter) -> None:
    answer = "Wrap the reasoning in <think> and </think> tags."
    api.post(COMPAT_CHAT).mock(return_value=httpx.Response(200, json=llama_completion(answer)))
    message = (await make(base_url=COMPAT).complete(LLMRequest.build(HI))).message
    assert message.content == [TextBlock(text=answer)]


def test_the_splitter_on_edge_shapes() -> None:
    assert split_leading_think("  <think>a</think><think>b</think>\n answer") == ("ab", "answer")
    assert split_leading_think("<thi") == ("", "<thi")
    assert split_leading_think("\n\nHello") == ("", "\n\nHello")
    assert split_leading_think("<think></think>Hi") == ("", "Hi")
