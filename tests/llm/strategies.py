"""Hypothesis strategies for agcore messages, shared by the LLM-layer property tests."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from agcore.llm.types import (
    AssistantMessage,
    ImageBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)

text = st.text(min_size=1, max_size=60)
json_scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=20)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
tool_inputs = st.dictionaries(st.text(min_size=1, max_size=10), json_values, max_size=4)
tool_ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=4, max_size=24)

text_blocks = st.builds(TextBlock, text=text)
tool_names = st.from_regex(r"[a-z][a-z_]{0,15}", fullmatch=True)
tool_use_blocks = st.builds(ToolUseBlock, id=tool_ids, name=tool_names,
                            input=tool_inputs)
thinking_blocks = st.builds(ThinkingBlock, thinking=text, signature=st.text(min_size=8, max_size=40),
                            provider=st.just("anthropic"))
images = st.builds(ImageBlock, media_type=st.just("image/png"), data=st.just("iVBORw0KGgo="))
usages = st.builds(Usage, input_tokens=st.integers(0, 10**6), output_tokens=st.integers(0, 10**5),
                   cache_read_tokens=st.integers(0, 10**5), cache_write_tokens=st.integers(0, 10**5))

assistant_messages = st.builds(
    AssistantMessage,
    content=st.lists(text_blocks | tool_use_blocks | thinking_blocks, min_size=1, max_size=5),
    stop_reason=st.sampled_from(list(StopReason)),
    model=st.just("m"),
    provider=st.just("p"),
    usage=usages,
)
tool_results = st.builds(ToolResultBlock, tool_use_id=tool_ids,
                         content=text | st.lists(text_blocks | images, max_size=3), is_error=st.booleans())
user_messages = st.builds(UserMessage, content=text | st.lists(text_blocks | images | tool_results,
                                                               min_size=1, max_size=4))
