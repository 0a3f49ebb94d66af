"""Micro-compaction: old tool results shrink to their head and tail, the recent ones stay whole.

A file listing or a test log the model read twenty calls ago rarely matters in full any more, yet it
is re-sent (and billed) on every call. Cutting it to its start and end, with a marker saying how much
went, keeps what the model usually needs (the command's first lines and its conclusion) at a fraction
of the tokens, without a model call. It runs before every call, so it is a pure, idempotent function:
a result it shortened is never shortened again.
"""

from __future__ import annotations

from collections.abc import Sequence

from agcore.llm.types import (
    AssistantMessage,
    ContentBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolResultContent,
    UserMessage,
)

__all__ = ["MIN_MAX_CHARS", "cut_middle", "truncate_old_tool_results"]

#: Below this a head and a tail around the marker say nothing useful.
MIN_MAX_CHARS = 200


def _marker(cut: int) -> str:
    return f"\n\n[... {cut:,} characters of this tool result were cut to save context ...]\n\n"


def cut_middle(text: str, max_chars: int) -> str:
    """``text`` unchanged if it has at most ``max_chars`` characters, else its head (about 2/3 of
    the room) and tail around a marker saying how many characters were cut; never longer than
    ``max_chars``, so cutting again changes nothing."""
    if max_chars < MIN_MAX_CHARS:
        raise ValueError(f"max_chars must be at least {MIN_MAX_CHARS} to keep a useful head and tail, "
                         f"not {max_chars}")
    if len(text) <= max_chars:
        return text
    # The marker's width depends on the count it states; size it for the largest count it can say.
    room = max_chars - len(_marker(len(text)))
    head = room * 2 // 3
    tail = room - head
    cut = len(text) - head - tail
    return text[:head] + _marker(cut) + (text[-tail:] if tail else "")


def _shorten(result: ToolResultBlock, max_chars: int) -> ToolResultBlock:
    if isinstance(result.content, str):
        if len(result.content) <= max_chars:
            return result
        return result.model_copy(update={"content": cut_middle(result.content, max_chars)})
    text = result.text
    if len(text) <= max_chars:
        return result
    # Text parts become one shortened text; images keep their place after it.
    images: list[ToolResultContent] = [b for b in result.content if isinstance(b, ImageBlock)]
    content: list[ToolResultContent] = [TextBlock(text=cut_middle(text, max_chars)), *images]
    return result.model_copy(update={"content": content})


def truncate_old_tool_results(
    messages: Sequence[UserMessage | AssistantMessage],
    *,
    keep_last: int = 6,
    max_chars: int = 2000,
) -> list[UserMessage | AssistantMessage]:
    """A copy of ``messages`` in which every tool result but the last ``keep_last`` is cut to at most
    ``max_chars`` characters (``cut_middle``). Messages that need no change are the same objects;
    the input is never modified (messages are frozen)."""
    if keep_last < 0:
        raise ValueError(f"keep_last must be 0 or more, not {keep_last}")
    if max_chars < MIN_MAX_CHARS:
        raise ValueError(f"max_chars must be at least {MIN_MAX_CHARS}, not {max_chars}")
    total = sum(len(m.tool_results) for m in messages if isinstance(m, UserMessage))
    old = total - keep_last  # results numbered below this are old
    if old <= 0:
        return list(messages)
    out: list[UserMessage | AssistantMessage] = []
    seen = 0
    for message in messages:
        if seen >= old or not isinstance(message, UserMessage) or isinstance(message.content, str):
            out.append(message)
            continue
        blocks: list[ContentBlock] = []
        changed = False
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                if seen < old:
                    short = _shorten(block, max_chars)
                    changed = changed or short is not block
                    block = short
                seen += 1
            blocks.append(block)
        out.append(message.model_copy(update={"content": blocks}) if changed else message)
    return out
