"""Loop guards against a model going round in circles: the same call in a row, or a cycle of calls.

Two shapes, both common with small local models:

* the same call (name + arguments) made again right after its result: ``RepetitionTracker`` in
  ``_turn`` counts it; ``repeat_verdict`` says what the tool phase does with the count: run it, answer
  it with a nudge instead of running it (``repetition_limit`` in a row), or, when the model makes the
  call once more after that nudge (or ``repetition_action="stop"``), stop the turn;
* a small set of calls repeating: read/list/read/list, read/patch/run/write/read/patch/run/write, each
  call answered exactly as the time before. ``CycleTracker`` fingerprints every (call, result) pair of
  the turn and notices when the last ones are a block of 2 to ``MAX_PERIOD`` pairs seen twice in a
  row: the second pass told the model nothing new. The first time, the pass's last result gets a note
  naming the calls (the nudge); if the model goes round once more all the same, the loop stops the
  turn with a ``LimitExceeded("repetition_limit")`` whose message names the calls
  (``repetition_action="stop"`` stops at the first detection).

A result that changes (a file that was edited, a test that now passes) is new information, so such a
pass is no cycle. When a repeated result is an error, the note does not tell the model to wrap up
with what it has (there is nothing to use): it says the calls fail the same way each time and asks it
to read the error and change the arguments or the approach.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from agcore.agent._result import LimitExceeded
from agcore.llm.types import TextBlock, ToolResultBlock, ToolUseBlock

if TYPE_CHECKING:
    from agcore.agent._batch import Batch
    from agcore.agent._config import AgentConfig

__all__ = ["MAX_PERIOD", "Cycle", "CycleTracker", "describe_call", "repeat_verdict", "repetition_stopped"]

#: The longest block of calls recognised as a cycle (read/patch/run/write is 4).
MAX_PERIOD = 4
# Enough pairs to see the longest block twice, plus one more pass after a nudge.
_KEPT = 3 * MAX_PERIOD
_ARGS_SHOWN = 60

_canonical_json = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode

Verdict = Literal["run", "nudge", "stop"]


def repeat_verdict(count: int, limit: int, action: Literal["stop", "nudge"]) -> Verdict:
    """What to do with the ``count``-th identical call in a row: run it below ``limit``; at the limit
    stop (``action="stop"``) or answer with a nudge; past the limit (the model made the call again
    after the nudge) stop."""
    if count < limit:
        return "run"
    if action == "stop" or count > limit:
        return "stop"
    return "nudge"


def repetition_stopped(call: ToolUseBlock | None, config: AgentConfig) -> LimitExceeded:
    """The error a turn stops with when the model made ``call`` once more after its nudge (both
    backends say the same; None: the call is not known)."""
    if call is None:
        return LimitExceeded("repetition_limit", value=config.repetition_limit)
    return LimitExceeded(
        "repetition_limit",
        f"The turn was stopped: the model kept making the same tool call, {describe_call(call)}, "
        f"{config.repetition_limit} or more times in a row. Rephrase the request or break the task "
        "into smaller steps; AgentConfig.repetition_limit and repetition_action change the guard.",
        value=config.repetition_limit,
    )


def describe_call(call: ToolUseBlock) -> str:
    """``name(arguments)`` as the user and the model read it, the arguments cut to a short line."""
    return _described(call.name, _arguments(call))


def _arguments(call: ToolUseBlock) -> str:
    """The call's arguments as canonical JSON (its repr when they are not JSON)."""
    try:
        return _canonical_json(call.input)
    except (TypeError, ValueError):
        return repr(call.input)


def _described(name: str, args: str) -> str:
    if args == "{}":
        args = ""
    if len(args) > _ARGS_SHOWN:
        args = args[: _ARGS_SHOWN - 1] + "…"
    return f"{name}({args})"


@dataclass(frozen=True, slots=True)
class Cycle:
    """A block of calls the model just made a second time (or more) with the same results."""

    calls: tuple[str, ...]  #: ``describe_call`` of each call of the block, in order
    failed: bool  #: whether a result of the block is an error
    stop: bool  #: whether the turn must stop (the model went round again after the nudge)

    @property
    def listing(self) -> str:
        return ", ".join(self.calls)

    def nudge(self) -> str:
        """The note added to the last result of the pass, for the model."""
        head = (
            f"[Note from the runtime: you have now made the same {len(self.calls)} calls twice in a "
            f"row ({self.listing}) and got exactly the same results."
        )
        if self.failed:
            return (
                f"{head} The failing ones fail the same way each time: read the error messages, then "
                "change the "
                "arguments or try a different tool or approach. Repeating these calls again will stop "
                "the turn.]"
            )
        return (
            f"{head} Repeating them gives no new information: use the results you have to take the "
            "next step of the task, or try a different approach. Repeating these calls again will "
            "stop the turn.]"
        )

    def message(self) -> str:
        """Why the turn stopped, for the user."""
        return (
            f"The turn was stopped: the model kept repeating the same {len(self.calls)} tool calls "
            f"with the same results ({self.listing}), also after it was told they give nothing new. "
            "Rephrase the request or break the task into smaller steps; a stronger model, or "
            "AgentConfig.repetition_action, changes how this is handled."
        )


class CycleTracker:
    """Fingerprints of the turn's (call, result) pairs; ``observe`` notices a repeating block."""

    __slots__ = ("_labels", "_nudged", "_nudged_at", "_pairs", "_seen")

    def __init__(self) -> None:
        self._pairs: deque[str] = deque(maxlen=_KEPT)
        self._labels: deque[tuple[str, bool]] = deque(maxlen=_KEPT)
        #: Pairs seen this turn (the position of a nudge is counted in it).
        self._seen = 0
        self._nudged: frozenset[tuple[str, ...]] | None = None
        self._nudged_at = 0

    def add(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        """Record one answered call."""
        args = _arguments(call)  # (once: the label below is made from it too)
        digest = hashlib.blake2b(digest_size=12)
        for part in (call.name, args, result.text, "1" if result.is_error else "0"):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\x00")
        self._pairs.append(digest.hexdigest())
        self._labels.append((_described(call.name, args), result.is_error))
        self._seen += 1

    def check(self, config: AgentConfig) -> Cycle | None:
        """The cycle the latest pairs close, if any (None when the guard is off)."""
        if not config.repetition_limit:
            return None
        pairs = list(self._pairs)
        for period in range(2, MAX_PERIOD + 1):
            if len(pairs) < 2 * period:
                break
            block = pairs[-period:]
            if block != pairs[-2 * period : -period] or len(set(block)) == 1:
                continue
            if _periodic(block):  # [A, B, A, B] is the 2-block seen twice: reported as that
                continue
            key = _rotations(block)
            labels = list(self._labels)[-period:]
            failed = any(error for _, error in labels)
            names = tuple(label for label, _ in labels)
            if self._nudged == key:
                if self._seen - self._nudged_at < period:
                    return None  # still inside the pass after the nudge
                return Cycle(names, failed, stop=True)
            self._nudged, self._nudged_at = key, self._seen
            return Cycle(names, failed, stop=config.repetition_action == "stop")
        return None

    def observe(self, batch: Batch, config: AgentConfig) -> Cycle | None:
        """Record the batch's answered calls; on a first detection, add the nudge to the batch's last
        result. The cycle found, if any (``cycle.stop``: the loop must stop the turn)."""
        outcomes = [o for o in batch.outcomes() if o.status not in ("skipped", "not_run", "cancelled")]
        for outcome in outcomes:
            self.add(outcome.call, outcome.result)
        if not outcomes:
            return None
        cycle = self.check(config)
        if cycle is not None and not cycle.stop:
            last = outcomes[-1]
            last.result = with_note(last.result, cycle.nudge())
        return cycle

    @property
    def last_failed(self) -> bool:
        """Whether the latest answered call got an error result."""
        return bool(self._labels) and self._labels[-1][1]

    # ------------------------------------------------------------------------------- saving

    def to_state(self) -> dict[str, Any]:
        """The tracker as JSON-able data (``from_state`` reads it back)."""
        return {
            "pairs": list(self._pairs), "labels": [list(label) for label in self._labels],
            "seen": self._seen, "nudged": sorted(list(k) for k in self._nudged) if self._nudged else None,
            "nudged_at": self._nudged_at,
        }

    @classmethod
    def from_state(cls, data: dict[str, Any] | None) -> CycleTracker:
        """The tracker ``to_state`` wrote (a new one for None)."""
        tracker = cls()
        if not data:
            return tracker
        tracker._pairs.extend(data["pairs"])
        tracker._labels.extend((str(label), bool(error)) for label, error in data["labels"])
        tracker._seen = int(data["seen"])
        nudged = data.get("nudged")
        tracker._nudged = frozenset(tuple(k) for k in nudged) if nudged else None
        tracker._nudged_at = int(data.get("nudged_at", 0))
        return tracker


def with_note(result: ToolResultBlock, note: str) -> ToolResultBlock:
    """``result`` with ``note`` appended to its text (images and error flag kept)."""
    if isinstance(result.content, str):
        content: Any = f"{result.content}\n\n{note}" if result.content else note
    else:
        content = [*result.content, TextBlock(text=note)]
    return result.model_copy(update={"content": content})


def _periodic(block: list[str]) -> bool:
    n = len(block)
    return any(n % p == 0 and block == block[:p] * (n // p) for p in range(1, n))


def _rotations(block: list[str]) -> frozenset[tuple[str, ...]]:
    # A cycle entered at another call is the same cycle: B, A after A, B.
    return frozenset(tuple(block[i:] + block[:i]) for i in range(len(block)))
