"""Everything a session holds must survive JSON: persistence, replay and handoff depend on it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from pydantic import TypeAdapter, ValidationError

from agcore.llm.types import (
    AssistantMessage,
    ImageBlock,
    LLMRequest,
    Message,
    StopReason,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from tests.llm.strategies import assistant_messages, user_messages

messages_adapter: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


@settings(max_examples=60, deadline=None)
@given(assistant=assistant_messages, user=user_messages)
def test_messages_round_trip_through_json(assistant: AssistantMessage, user: UserMessage) -> None:
    history: list[Message] = [user, assistant]
    restored = messages_adapter.validate_json(messages_adapter.dump_json(history))
    assert restored == history
    assert isinstance(restored[0], UserMessage)
    assert isinstance(restored[1], AssistantMessage)


def test_usage_adds_every_counter() -> None:
    total = Usage(input_tokens=1, output_tokens=2, cache_read_tokens=3, cache_write_tokens=4) + Usage(
        input_tokens=10, output_tokens=20, cache_read_tokens=30, cache_write_tokens=40
    )
    assert total == Usage(input_tokens=11, output_tokens=22, cache_read_tokens=33, cache_write_tokens=44)
    assert total.total_tokens == 110


def test_assistant_message_accessors() -> None:
    message = AssistantMessage(
        content=[TextBlock(text="Let me "), ToolUseBlock(id="t1", name="ls", input={}),
                 TextBlock(text="look")],
        stop_reason=StopReason.TOOL_USE,
    )
    assert message.text == "Let me look"
    assert [c.id for c in message.tool_calls] == ["t1"]


def test_image_block_needs_exactly_one_source() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        ImageBlock(media_type="image/png")
    with pytest.raises(ValidationError, match="exactly one"):
        ImageBlock(media_type="image/png", data="AAAA", url="https://example.com/a.png")
    with pytest.raises(ValidationError, match="media_type"):
        ImageBlock(data="AAAA")
    assert ImageBlock(url="https://example.com/a.png").url


def test_blocks_are_frozen() -> None:
    block = TextBlock(text="a")
    with pytest.raises(ValidationError):
        block.text = "b"  # type: ignore[misc]


def test_tool_result_text_joins_text_parts() -> None:
    result = ToolResultBlock(tool_use_id="t", content=[TextBlock(text="a"), TextBlock(text="b")])
    assert result.text == "ab"
    assert UserMessage(content=[result]).tool_results == [result]


def test_tool_choice_coercion() -> None:
    assert ToolChoice.coerce("any") == ToolChoice(mode="any")
    assert ToolChoice.coerce(None) is None
    with pytest.raises(ValueError, match="unknown tool_choice"):
        ToolChoice.coerce("required")
    with pytest.raises(ValidationError, match="name"):
        ToolChoice(mode="tool")


def test_request_build_copies_its_inputs() -> None:
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="hi")]
    request = LLMRequest.build(messages, tool_choice="auto", stop_sequences=("END",))
    messages.append(UserMessage(content="later"))
    assert len(request.messages) == 1
    assert request.tool_choice == ToolChoice(mode="auto")
    assert request.stop_sequences == ["END"]
    assert LLMRequest.model_validate_json(request.model_dump_json()) == request
