"""Runaway replies: a model stuck writing the same thing until ``max_tokens`` cuts it (seed 002's
check for 50 ``[`` or ``{`` in a row; small local models write ``[[[[…`` or one paragraph again and
again). ``find_runaway`` looks only at the reply's end: a runaway repeats up to the cut, while a long
normal reply cut at ``max_tokens`` ends mid-sentence or mid-code, whose tail does not repeat.

``RunawayGuard`` (agcore's own capability, ``AgentConfig.runaway_action``) acts on a reply cut at
``max_tokens`` without tool calls whose tail runs away: ``"retry"`` (the default) cuts the repetition
out of the recorded reply and asks once more with a note, and a second runaway in the turn ends it
with ``RunawayOutput``; ``"stop"`` ends it at the first; ``"off"`` lets it through.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from agcore.agent._errors import AgentError
from agcore.agent.capability import Capability, ModelCall, Reply, TurnView
from agcore.llm.types import StopReason, TextBlock

__all__ = ["RETRY_NOTE", "Runaway", "RunawayGuard", "RunawayOutput", "find_runaway"]

#: The longest repeated unit looked for, in characters (a paragraph; a whole file is not looked for).
MAX_PERIOD = 800
#: A runaway repeats at least this many characters, and its unit at least ``MIN_REPEATS`` times.
MIN_CHARS = 256
MIN_REPEATS = 3

RETRY_NOTE = (
    "Your last reply was cut at the token limit while it repeated the same text ({unit!r} {times} "
    "times); the repetition was removed. Do not repeat yourself: continue from where the useful part "
    "ended, or answer more briefly."
)

_TURN_KEY = "runaway_retries"


@dataclass(frozen=True, slots=True)
class Runaway:
    """A reply's repeating tail: ``unit`` repeated ``times`` times from character ``start`` on."""

    unit: str
    times: int
    start: int

    def describe(self) -> str:
        """The unit (cut to 40 characters) and how often it repeats, for messages."""
        shown = self.unit if len(self.unit) <= 40 else self.unit[:37] + "..."
        return f"{shown!r} repeated {self.times} times"


class RunawayOutput(AgentError):
    """The model's reply ran away (the same text repeated until ``max_tokens``). Recoverable: the
    session is intact; ask again, more narrowly, or with a larger model."""

    recoverable: ClassVar[bool] = True

    def __init__(self, runaway: Runaway) -> None:
        super().__init__(
            f"The model's reply ran away: {runaway.describe()} until the token limit cut it. Ask "
            "again more narrowly, lower the temperature, or use a larger model."
        )
        self.runaway = runaway


def find_runaway(text: str, *, max_period: int = MAX_PERIOD, min_chars: int = MIN_CHARS,
                 min_repeats: int = MIN_REPEATS) -> Runaway | None:
    """The repetition ``text`` ends in, if any: the shortest unit of at most ``max_period``
    characters whose copies fill at least ``min_chars`` characters (and ``min_repeats`` copies) up
    to the end. The text may end mid-unit (the cut seldom falls on a unit's end)."""
    tail = text[-(max(min_chars, min_repeats * max_period) + max_period):]
    for period in range(1, min(max_period, len(tail) // min_repeats) + 1):
        needed = max(min_chars, min_repeats * period)
        if needed > len(tail) or tail[-1] != tail[-1 - period]:
            continue
        end = tail[-needed:]
        # periodic with ``period``: every character equals the one ``period`` before it
        if end[period:] == end[:-period]:
            start = _periodic_start(text, period)
            unit = text[start:start + period]
            return Runaway(unit=unit, times=(len(text) - start) // period, start=start)
    return None


def _periodic_start(text: str, period: int) -> int:
    """Where the periodic tail of ``text`` (with ``period``) begins: the least ``s`` from which every
    character equals the one ``period`` after it (a binary search: periodic from ``s`` means
    periodic from every later start)."""
    end = len(text) - period
    low, high = 0, end  # text[high:] is periodic (the caller checked its end)
    while low < high:
        middle = (low + high) // 2
        if text[middle:end] == text[middle + period:]:
            high = middle
        else:
            low = middle + 1
    return low


class RunawayGuard(Capability):
    """Stops (or asks once more after) a reply that ran away; see the module docstring."""

    async def read_reply(self, steps: TurnView, call: ModelCall, reply: Reply) -> None:
        action = steps.config.runaway_action
        message = reply.message
        if action == "off" or message.stop_reason is not StopReason.MAX_TOKENS or message.tool_calls:
            return
        runaway = find_runaway(message.text)
        if runaway is None:
            return
        retries = steps.turn.capabilities.get(_TURN_KEY, 0)
        if action == "stop" or retries >= 1:
            reply.ask_again = False
            reply.error = RunawayOutput(runaway)
            return
        steps.turn.capabilities[_TURN_KEY] = retries + 1
        kept = message.text[: runaway.start + len(runaway.unit)]  # one copy: the model sees what it did
        others = [b for b in message.content if not isinstance(b, TextBlock)]  # thinking stays
        reply.message = message.model_copy(update={"content": [*others, TextBlock(text=kept)]})
        reply.notes.append(RETRY_NOTE.format(unit=runaway.unit[:40], times=runaway.times))
        reply.ask_again = True
        reply.why = f"the reply was cut at the token limit repeating {runaway.unit[:40]!r}"
