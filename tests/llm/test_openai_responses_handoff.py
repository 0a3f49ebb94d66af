"""Context handoff onto the Responses API: any history, written by any mix of providers, becomes an
input the API accepts: each call answered once and after it, reasoning only from this provider, with
its encrypted content and followed by the item it led to, and nobody else's thinking sent along."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agcore.llm.providers._responses_wire import build_body
from agcore.llm.types import (
    AssistantMessage,
    LLMRequest,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

OURS = "openai-responses"
PROVIDERS = [OURS, "anthropic", "openai", "openai-compatible", "ollama", "azure-responses"]
ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_.:-|/", min_size=1, max_size=80)


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    history: list[Message] = [UserMessage(content=draw(st.text(min_size=1, max_size=20)))]
    used: set[str] = set()
    for _ in range(draw(st.integers(1, 4))):
        provider = draw(st.sampled_from(PROVIDERS))
        content: list[Any] = []
        calls: list[ToolUseBlock] = []
        for _ in range(draw(st.integers(0, 4))):  # blocks in any order, reasoning anywhere
            kind = draw(st.sampled_from(["thinking", "text", "call"]))
            if kind == "thinking":
                content.append(ThinkingBlock(thinking=draw(st.text(max_size=10)),
                                             signature=draw(st.none() | st.just("rs_1")),
                                             redacted_data=draw(st.none() | st.just("gAAAA")),
                                             provider=provider))
            elif kind == "text":
                content.append(TextBlock(text=draw(st.text(max_size=10))))  # may be empty: dropped
            else:
                call_id = draw(ids.filter(lambda i: i not in used))
                used.add(call_id)
                calls.append(ToolUseBlock(id=call_id, name="tool", input={"n": draw(st.integers())}))
                content.append(calls[-1])
        history.append(AssistantMessage(content=content, provider=provider, model="m"))
        if calls:
            results = [ToolResultBlock(tool_use_id=c.id, content="ok") for c in calls]
            history.append(UserMessage(content=list(results)))
        else:
            history.append(UserMessage(content=draw(st.text(min_size=1, max_size=20))))
    return history


def check_input(items: list[dict[str, Any]]) -> None:
    called: list[str] = []
    answered: list[str] = []
    for position, item in enumerate(items):
        kind = item.get("type", "message")
        if kind == "function_call":
            assert len(item["call_id"]) <= 40
            assert item["call_id"] not in called
            called.append(item["call_id"])
        elif kind == "function_call_output":
            assert item["call_id"] in called  # after its call
            assert item["call_id"] not in answered
            answered.append(item["call_id"])
        elif kind == "reasoning":
            assert item["encrypted_content"] == "gAAAA"
            assert "id" not in item
            following = next((i for i in items[position + 1:] if i.get("type") != "reasoning"), None)
            assert following is not None
            assert following.get("type") == "function_call" or following.get("role") == "assistant"
        else:
            assert item["role"] in ("user", "assistant")
            assert item["content"]
    assert sorted(called) == sorted(answered)


@settings(max_examples=200, deadline=None)
@given(history=histories())
def test_any_mixed_history_is_a_valid_input(history: list[Message]) -> None:
    body = build_body(LLMRequest.build(history), model="o4-mini", provider=OURS, max_tokens=None,
                      encrypted_reasoning=True)
    check_input(body["input"])
    ours = [b for m in history if isinstance(m, AssistantMessage) for b in m.content
            if isinstance(b, ThinkingBlock) and b.provider == OURS and b.redacted_data]
    sent = [i for i in body["input"] if i.get("type") == "reasoning"]
    assert len(sent) <= len(ours)  # never another provider's
