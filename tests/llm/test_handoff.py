"""Context handoff: a history written on one vendor must become a valid request for another.

Each test sends a mixed history through a provider (respx answers on the real wire) and checks the
request body against the target API's rules — the rules that make a vendor answer 400 when broken:
tool calls answered right after they were made, ids in the allowed alphabet and length, no foreign
thinking, tool results before other content (Anthropic), text-only tool messages (OpenAI).
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
import respx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agcore.llm.providers.anthropic import AnthropicProvider
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import NO_RETRY
from agcore.llm.types import (
    AssistantMessage,
    ImageBlock,
    LLMRequest,
    Message,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)

pytestmark = pytest.mark.anyio

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

ANTHROPIC_REPLY = {
    "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
    "content": [{"type": "text", "text": "Handed over."}], "stop_reason": "end_turn",
    "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 3},
}
OPENAI_REPLY = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-4.1",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Handed over."},
                 "finish_reason": "stop", "logprobs": None}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
}


def anthropic_history() -> list[Message]:
    """A Claude conversation: signed thinking, a redacted block, two tool calls, an image result."""
    return [
        UserMessage(content=[TextBlock(text="Compare these cities"),
                             ImageBlock(media_type="image/png", data=PNG)]),
        AssistantMessage(
            content=[
                ThinkingBlock(thinking="I should look both up.", signature="sig-abc", provider="anthropic"),
                ThinkingBlock(redacted_data="ENCRYPTED", provider="anthropic"),
                TextBlock(text="Looking them up."),
                ToolUseBlock(id="toolu_01A09q90qw90lq917835lq9", name="get_weather", input={"city": "Paris"}),
                ToolUseBlock(id="toolu_01B", name="get_map", input={"city": "Rome"}),
            ],
            stop_reason=StopReason.TOOL_USE, model="claude-haiku-4-5", provider="anthropic",
            usage=Usage(input_tokens=50, output_tokens=20),
        ),
        UserMessage(content=[
            ToolResultBlock(tool_use_id="toolu_01A09q90qw90lq917835lq9", content="18C, cloudy"),
            ToolResultBlock(tool_use_id="toolu_01B", content=[TextBlock(text="map of Rome"),
                                                             ImageBlock(media_type="image/png", data=PNG)]),
        ]),
        AssistantMessage(content=[TextBlock(text="Paris is cloudy; here is Rome.")],
                         stop_reason=StopReason.END_TURN, model="claude-haiku-4-5", provider="anthropic"),
        UserMessage(content="Thanks. Summarise."),
    ]


def openai_compatible_history() -> list[Message]:
    """A conversation from an OpenAI-compatible server: reasoning kept as thinking, ids that break
    Anthropic's rules, a failed call, a call whose arguments could not be read."""
    weird = "functions.get_weather:0"
    long_id = "call_" + "x" * 70
    return [
        UserMessage(content="Weather in Paris and Oslo?"),
        AssistantMessage(
            content=[
                ThinkingBlock(thinking="two lookups", provider="openai-compatible"),
                ToolUseBlock(id=weird, name="get_weather", input={"city": "Paris"}),
                ToolUseBlock(id=long_id, name="get_weather", input={}, parse_error="unreadable JSON"),
            ],
            stop_reason=StopReason.TOOL_USE, model="qwen3", provider="openai-compatible",
        ),
        UserMessage(content=[
            ToolResultBlock(tool_use_id=weird, content="Paris: 18C"),
            ToolResultBlock(tool_use_id=long_id, content="unreadable JSON: call again", is_error=True),
            TextBlock(text="(also, be brief)"),
        ]),
        AssistantMessage(content=[TextBlock(text="Paris 18C; Oslo unknown.")],
                         stop_reason=StopReason.END_TURN, model="qwen3", provider="openai-compatible"),
        UserMessage(content="Now summarise."),
    ]


def check_anthropic_request(body: dict[str, Any]) -> None:
    messages = body["messages"]
    assert messages[0]["role"] == "user"
    pending: set[str] = set()
    for message in messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        assert blocks, "empty messages are rejected"
        if message["role"] == "user":
            kinds = [b["type"] for b in blocks]
            answered = {b["tool_use_id"] for b in blocks if b["type"] == "tool_result"}
            assert answered == pending, "every tool_use must be answered in the very next user message"
            if answered:
                first_other = next((i for i, k in enumerate(kinds) if k != "tool_result"), len(kinds))
                assert all(k != "tool_result" for k in kinds[first_other:]), "tool_result blocks go first"
            pending = set()
        else:
            pending = {b["id"] for b in blocks if b["type"] == "tool_use"}
            for block in blocks:
                if block["type"] == "tool_use":
                    assert ANTHROPIC_ID.match(block["id"]), block["id"]
                    assert isinstance(block["input"], dict)
                if block["type"] == "thinking":
                    assert block["signature"], "unsigned thinking is rejected"
        for block in blocks:
            if block["type"] == "text":
                assert block["text"], "empty text blocks are rejected"
    assert not pending


def check_openai_request(body: dict[str, Any]) -> None:
    messages = body["messages"]
    expected_tool_ids: list[str] = []
    for message in messages:
        role = message["role"]
        assert role in {"system", "user", "assistant", "tool"}
        # No thinking block reaches OpenAI (the word itself may well be in a user's text).
        content = message.get("content")
        parts = content if isinstance(content, list) else []
        assert all(part.get("type") not in ("thinking", "redacted_thinking") for part in parts)
        if role == "tool":
            assert expected_tool_ids, "a tool message must follow the assistant's tool_calls"
            assert message["tool_call_id"] == expected_tool_ids.pop(0)
            assert isinstance(message["content"], str), "tool messages take text only"
            continue
        assert not expected_tool_ids, "tool calls must be answered before anything else"
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                assert len(call["id"]) <= 40
                assert isinstance(json.loads(call["function"]["arguments"]), dict)
                expected_tool_ids.append(call["id"])
            assert message.get("content") or message.get("tool_calls")
    assert not expected_tool_ids


async def send_to_anthropic(history: list[Message]) -> dict[str, Any]:
    with respx.mock(assert_all_called=True) as mock:
        route = mock.post("https://api.anthropic.com/v1/messages").mock(
            return_value=httpx.Response(200, json=ANTHROPIC_REPLY))
        provider = AnthropicProvider("claude-haiku-4-5", api_key="k", retry_policy=NO_RETRY)
        reply = await provider.complete(LLMRequest.build(history, max_tokens=100))
        await provider.aclose()
    assert reply.text == "Handed over."
    body: dict[str, Any] = json.loads(route.calls[0].request.content)
    return body


async def send_to_openai(history: list[Message]) -> dict[str, Any]:
    with respx.mock(assert_all_called=True) as mock:
        route = mock.post("https://api.openai.com/v1/chat/completions").mock(
            return_value=httpx.Response(200, json=OPENAI_REPLY))
        provider = OpenAIProvider("gpt-4.1", api_key="k", retry_policy=NO_RETRY)
        reply = await provider.complete(LLMRequest.build(history))
        await provider.aclose()
    assert reply.text == "Handed over."
    body: dict[str, Any] = json.loads(route.calls[0].request.content)
    return body


async def test_anthropic_history_continues_on_openai() -> None:
    body = await send_to_openai(anthropic_history())
    check_openai_request(body)
    dumped = json.dumps(body)
    # Claude's thinking stays home
    assert "I should look both up" not in dumped
    assert "ENCRYPTED" not in dumped
    # the image a tool returned still reaches the model, in a user message after the tool messages
    after_tools = [m for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], list)]
    assert any(part.get("type") == "image_url" for m in after_tools for part in m["content"])
    assert body["messages"][-1] == {"role": "user", "content": "Thanks. Summarise."}


async def test_anthropic_history_replays_on_anthropic_with_its_thinking() -> None:
    body = await send_to_anthropic(anthropic_history())
    check_anthropic_request(body)
    first_reply = body["messages"][1]["content"]
    assert first_reply[0] == {"type": "thinking", "thinking": "I should look both up.",
                              "signature": "sig-abc"}
    assert first_reply[1] == {"type": "redacted_thinking", "data": "ENCRYPTED"}


async def test_openai_compatible_history_continues_on_anthropic() -> None:
    body = await send_to_anthropic(openai_compatible_history())
    check_anthropic_request(body)
    assert "two lookups" not in json.dumps(body)  # unsigned, foreign reasoning is dropped
    calls = [b for b in body["messages"][1]["content"] if b["type"] == "tool_use"]
    results = [b for b in body["messages"][2]["content"] if b["type"] == "tool_result"]
    assert [c["id"] for c in calls] == [r["tool_use_id"] for r in results]  # rewritten consistently
    assert len({c["id"] for c in calls}) == 2
    assert results[1]["is_error"] is True


async def test_openai_compatible_history_continues_on_openai() -> None:
    body = await send_to_openai(openai_compatible_history())
    check_openai_request(body)
    assert body["messages"][-1] == {"role": "user", "content": "Now summarise."}


# ------------------------------------------------------------------ property: any valid history

PROVIDERS = ["anthropic", "openai", "openai-compatible", "ollama"]
ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_.:-|/", min_size=1, max_size=80)


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    history: list[Message] = [UserMessage(content=draw(st.text(min_size=1, max_size=20)))]
    used: set[str] = set()
    for _ in range(draw(st.integers(1, 4))):
        provider = draw(st.sampled_from(PROVIDERS))
        content: list[Any] = []
        if draw(st.booleans()):
            content.append(ThinkingBlock(thinking=draw(st.text(max_size=20)),
                                         signature=draw(st.none() | st.just("sig")), provider=provider))
        if draw(st.booleans()):
            content.append(TextBlock(text=draw(st.text(max_size=20))))  # may be empty: dropped
        calls = []
        for _ in range(draw(st.integers(0, 3))):
            call_id = draw(ids.filter(lambda i: i not in used))
            used.add(call_id)
            calls.append(ToolUseBlock(id=call_id, name="tool", input={"n": draw(st.integers())}))
        content.extend(calls)
        history.append(AssistantMessage(content=content, provider=provider, model="m"))
        if calls:
            results: list[Any] = [
                ToolResultBlock(tool_use_id=c.id, content=draw(st.text(max_size=10)),
                                is_error=draw(st.booleans()))
                for c in calls
            ]
            if draw(st.booleans()):
                results.append(TextBlock(text="and more"))
            history.append(UserMessage(content=results))
        else:
            history.append(UserMessage(content=draw(st.text(min_size=1, max_size=20))))
    return history


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=histories())
async def test_any_mixed_history_is_a_valid_request_for_both_vendors(history: list[Message]) -> None:
    check_anthropic_request(await send_to_anthropic(history))
    check_openai_request(await send_to_openai(history))
