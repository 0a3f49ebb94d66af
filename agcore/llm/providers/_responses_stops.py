"""Stop sequences for the Responses API, which has no ``stop`` parameter: applied on the client.

The reply is cut where the first stop sequence begins (the sequence itself left out, as the vendors
that support it do) and everything after it is dropped, with ``stop_reason`` ``stop_sequence``. The
model has generated past that point, so usage counts what it wrote; a stream is still read to its end
for that usage, but shows nothing after the cut, and holds back the last few characters of each
delta until they cannot be the start of a stop sequence, so no piece of one is ever shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from agcore.llm.events import StreamEvent, TextDelta, TextEnd, UsageEvent
from agcore.llm.types import AssistantMessage, ContentBlock, StopReason, TextBlock

__all__ = ["StopSequenceCutter", "cut_at_stop"]


def _first_stop(text: str, stops: Sequence[str], start: int = 0) -> int:
    found = [at for stop in stops if (at := text.find(stop, start)) >= 0]
    return min(found) if found else -1


def cut_at_stop(message: AssistantMessage, stops: Sequence[str]) -> AssistantMessage:
    """``message`` cut at the first stop sequence in its text, or ``message`` itself."""
    stops = [stop for stop in stops if stop]
    if not stops:
        return message
    for position, block in enumerate(message.content):
        if isinstance(block, TextBlock) and (at := _first_stop(block.text, stops)) >= 0:
            content: list[ContentBlock] = [*message.content[:position], TextBlock(text=block.text[:at])]
            return message.model_copy(update={"content": content, "stop_reason": StopReason.STOP_SEQUENCE})
    return message


class StopSequenceCutter:
    """Filters a stream's events so that it shows what ``cut_at_stop`` keeps of the message."""

    __slots__ = ("_hold", "_shown", "_stops", "_text", "cut")

    def __init__(self, stops: Sequence[str]) -> None:
        self._stops = [stop for stop in stops if stop]
        self._hold = max((len(stop) for stop in self._stops), default=1) - 1
        self._text: dict[int, str] = {}  # each text block's text so far
        self._shown: dict[int, int] = {}  # how much of it the deltas passed on showed
        self.cut = False

    def filter(self, events: list[StreamEvent]) -> list[StreamEvent]:
        if not self._stops:
            return events
        out: list[StreamEvent] = []
        for event in events:
            if isinstance(event, UsageEvent):
                out.append(event)
            elif self.cut:
                continue  # past the stop sequence: nothing more is shown
            elif isinstance(event, TextDelta):
                self._delta(event, out)
            elif isinstance(event, TextEnd):
                self._end(event.index, event.text, out)
            else:
                out.append(event)
        return out

    def stop_reason(self, reason: StopReason) -> StopReason:
        return StopReason.STOP_SEQUENCE if self.cut else reason

    def _delta(self, event: TextDelta, out: list[StreamEvent]) -> None:
        index = event.index
        shown = self._shown.get(index, 0)
        text = self._text[index] = self._text.get(index, "") + event.text
        # A stop sequence may begin in text held back earlier, but never in text already shown.
        at = _first_stop(text, self._stops, shown)
        if at >= 0:
            self._end(index, text[:at], out)
            self.cut = True
            return
        safe = len(text) - self._hold
        if safe > shown:
            out.append(TextDelta(index=index, text=text[shown:safe]))
            self._shown[index] = safe

    def _end(self, index: int, text: str, out: list[StreamEvent]) -> None:
        at = _first_stop(text, self._stops)
        if at >= 0:
            text = text[:at]
            self.cut = True
        shown = self._shown.get(index, 0)
        if len(text) > shown:
            out.append(TextDelta(index=index, text=text[shown:]))
        out.append(TextEnd(index=index, text=text))
