"""What one turn is while it runs (``TurnState``) and how it ended (``TurnResult``).

A turn is one ``submit_turn`` plus any ``resume``s: the model calls and tool batches between the
user's input and the final answer. ``TurnState`` is kept while a turn is paused for client tools (and
saved with the session then); it owns the tool ``Batch`` in flight.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agcore.agent._batch import Batch
from agcore.agent._cost import UNKNOWN_MODEL
from agcore.agent._cycles import CycleTracker
from agcore.agent._messages import AgentMessage, AssistantReply
from agcore.agent._result import TurnResult
from agcore.llm.models import ModelInfo, ModelRegistry
from agcore.llm.types import ToolUseBlock, Usage

if TYPE_CHECKING:
    from agcore.agent.output._output import StructuredOutput

__all__ = ["RepetitionTracker", "TurnResult", "TurnState", "turn_cost"]

# Built once: json.dumps with options builds a new encoder per call, and this runs per tool call.
_canonical_json = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode


class RepetitionTracker:
    """Counts identical calls (name + canonical JSON arguments) in a row across a turn."""

    __slots__ = ("count", "key")

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0

    def see(self, call: ToolUseBlock) -> int:
        try:
            args = _canonical_json(call.input)
        except (TypeError, ValueError):
            args = repr(call.input)
        key = f"{call.name}\x00{args}"
        if key == self.key:
            self.count += 1
        else:
            self.key, self.count = key, 1
        return self.count


@dataclass(slots=True)
class TurnState:
    """What one turn counts, and its tool batch in flight (None between batches)."""

    start: int
    model_calls: int = 0
    tool_turns: int = 0
    usage: Usage = field(default_factory=Usage)
    text: str = ""
    repetition: RepetitionTracker = field(default_factory=RepetitionTracker)
    #: The (call, result) pairs of the turn, for noticing the model going round in circles.
    cycles: CycleTracker = field(default_factory=CycleTracker)
    #: The tools the latest model call was offered: a call to any other is refused, not run.
    offered: frozenset[str] = frozenset()
    batch: Batch | None = None
    #: The typed answer this turn must end with (None: any answer), and how it is going.
    output: StructuredOutput | None = None
    output_retries: int = 0
    output_ready: bool = False
    output_value: Any = None
    #: How many replies in a row held only text-mode calls that could not be read and were asked
    #: again (bounded: ``_text_capability``).
    rereads: int = 0
    #: What capabilities keep for the turn, JSON-able, by a name of their choosing (saved with the
    #: turn wherever the turn is saved): ``steps.turn.capabilities.get("mine", 0)``.
    capabilities: dict[str, Any] = field(default_factory=dict)

    @property
    def paused(self) -> bool:
        """Whether the turn waits for client tool results (``resume``)."""
        return self.batch is not None and self.batch.paused

    def to_json(self) -> dict[str, Any]:
        """The turn as JSON-able data: its counters, the tools offered, the batch in flight."""
        return {
            "start": self.start, "model_calls": self.model_calls, "tool_turns": self.tool_turns,
            "usage": self.usage.model_dump(mode="json"), "text": self.text,
            "repetition": [self.repetition.key, self.repetition.count],
            "cycles": self.cycles.to_state(),
            "offered": sorted(self.offered),
            "batch": self.batch.to_state() if self.batch is not None else None,
            "output_retries": self.output_retries,
            "rereads": self.rereads,
            "capabilities": copy.deepcopy(self.capabilities) if self.capabilities else {},  # a snapshot
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], history_length: int) -> TurnState:
        """The turn ``to_json`` wrote (or a paused turn as agcore 0.1 saved it), over a history of
        ``history_length`` messages."""
        if "turn" in data:  # 0.1's paused turn: the batch's fields, its counters under "turn"
            data = {**data["turn"], "batch": {k: v for k, v in data.items() if k != "turn"}}
        batch = data.get("batch")
        turn = cls(
            start=min(int(data["start"]), history_length),
            model_calls=data["model_calls"],
            tool_turns=data["tool_turns"],
            usage=Usage.model_validate(data["usage"]),
            text=data["text"],
            offered=frozenset(data.get("offered", ())),
            batch=Batch.from_state(batch) if batch is not None else None,
            cycles=CycleTracker.from_state(data.get("cycles")),
        )
        turn.repetition.key, turn.repetition.count = data["repetition"]
        turn.output_retries = data.get("output_retries", 0)
        turn.rereads = data.get("rereads", 0)
        turn.capabilities = dict(data.get("capabilities") or {})
        return turn


def turn_cost(messages: Sequence[AgentMessage], registry: ModelRegistry) -> float | None:
    """USD of the replies in ``messages`` whose model has a known price (None if none has).

    Priced reply by reply (prices are linear in tokens, so this is the sum ``CostTracker`` would
    give), without building a tracker: that took ~15 µs a turn, 1% of a tool-call turn's CPU."""
    total = 0.0
    priced = False
    prices: dict[str, ModelInfo | None] = {}
    for message in messages:
        if isinstance(message, AssistantReply):
            reply = message.message
            model = reply.model or UNKNOWN_MODEL
            info = prices[model] if model in prices else prices.setdefault(model, registry.get(model))
            if info is not None:
                total += info.cost_usd(reply.usage)
                priced = True
    return total if priced else None
