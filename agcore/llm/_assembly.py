"""Turning stream events into the final message, and a message back into events.

``StreamAssembler`` is the one place a streamed reply becomes an ``AssistantMessage``: every
provider feeds it the events it yields and asks it for the ``DoneEvent`` message, so ``stream()``
and ``complete()`` agree by construction. ``message_to_events`` is the inverse, used by the test
providers to stream a scripted reply as a real event sequence.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from agcore.llm.events import (
    DoneEvent,
    ProviderBlockEnd,
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
from agcore.llm.types import (
    AssistantMessage,
    ContentBlock,
    ProviderBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)

__all__ = ["StreamAssembler", "message_to_events"]


class StreamAssembler:
    """Collects finished blocks by index, plus the text streamed into blocks not yet finished (so a
    broken stream still yields a partial message)."""

    __slots__ = ("_blocks", "_open_text", "usage")

    def __init__(self) -> None:
        self._blocks: dict[int, ContentBlock] = {}
        self._open_text: dict[int, list[str]] = {}
        self.usage = Usage()

    def feed(self, event: StreamEvent) -> None:
        """Take in one stream event: a finished block is kept at its index, streamed text is kept until
        its block ends, usage replaces the usage so far."""
        if isinstance(event, TextDelta):
            self._open_text.setdefault(event.index, []).append(event.text)
        elif isinstance(event, TextEnd):
            self._open_text.pop(event.index, None)
            self._blocks[event.index] = TextBlock(text=event.text)
        elif isinstance(event, ToolCallEnd):
            self._blocks[event.index] = event.tool_call
        elif isinstance(event, ThinkingEnd | ProviderBlockEnd):
            self._blocks[event.index] = event.block
        elif isinstance(event, UsageEvent):
            self.usage = event.usage

    def message(
        self,
        *,
        stop_reason: StopReason | None,
        model: str,
        provider: str,
        partial: bool = False,
    ) -> AssistantMessage:
        """The assembled message. With ``partial``, unfinished text blocks are kept (unfinished tool
        calls and thinking are not: a half-written call cannot be answered, unsigned thinking cannot
        be replayed)."""
        blocks = dict(self._blocks)
        if partial:
            for index, parts in self._open_text.items():
                blocks[index] = TextBlock(text="".join(parts))
        return AssistantMessage(
            content=[blocks[i] for i in sorted(blocks)],
            stop_reason=stop_reason,
            model=model,
            provider=provider,
            usage=self.usage,
        )


def _chunks(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


def message_to_events(
    message: AssistantMessage, *, chunk_size: int = 16, request_id: str | None = None
) -> Iterator[StreamEvent]:
    """The event sequence a provider would stream for ``message``, ending in its ``DoneEvent``."""
    for index, block in enumerate(message.content):
        if isinstance(block, TextBlock):
            yield TextStart(index=index)
            for piece in _chunks(block.text, chunk_size):
                yield TextDelta(index=index, text=piece)
            yield TextEnd(index=index, text=block.text)
        elif isinstance(block, ThinkingBlock):
            yield ThinkingStart(index=index)
            for piece in _chunks(block.thinking, chunk_size):
                yield ThinkingDelta(index=index, thinking=piece)
            yield ThinkingEnd(index=index, block=block)
        elif isinstance(block, ProviderBlock):
            yield ProviderBlockEnd(index=index, block=block)
        elif isinstance(block, ToolUseBlock):
            yield ToolCallStart(index=index, id=block.id, name=block.name)
            for piece in _chunks(json.dumps(block.input), chunk_size):
                yield ToolCallDelta(index=index, arguments=piece)
            yield ToolCallEnd(index=index, tool_call=block)
    yield UsageEvent(usage=message.usage)
    yield DoneEvent(message=message, request_id=request_id)
