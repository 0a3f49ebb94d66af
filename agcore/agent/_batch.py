"""``Batch``: the tool calls of one assistant reply, from the reply until their results are recorded.

A batch is the one owner of what is in flight: the calls in the model's order, the result each one has
so far (``CallOutcome``), the client calls the caller must run, and the steering input that skipped
calls. The tool phase fills it; the loop records it as one ``ToolResults`` message; a cancelled or
failed turn answers what is left with one call (``answer_rest``), so every call in the history gets
exactly one result whatever stopped the turn; a turn paused for client tools is saved as this one
object (``to_state`` / ``from_state``).

``answer_open_calls`` repairs a history that ends mid-batch (a process stopped, a history loaded
from elsewhere): the calls of its last reply that have no result get one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agcore.agent._messages import AgentMessage, AssistantReply, ToolResults
from agcore.llm.types import ToolResultBlock, ToolUseBlock, UserMessage

__all__ = [
    "CANCELLED",
    "UNANSWERED_CLIENT",
    "Batch",
    "check_client_results",
    "CallOutcome",
    "answer_open_calls",
    "error_result",
]

CANCELLED = "Cancelled: the turn was cancelled before this call finished. Ask the user before retrying."
UNANSWERED_CLIENT = (
    "Not run: the user sent a new message instead of returning this client tool's result."
)


def error_result(call_id: str, message: str) -> ToolResultBlock:
    """An error result answering the call ``call_id`` with ``message`` (what the model reads)."""
    return ToolResultBlock(tool_use_id=call_id, content=message, is_error=True)


@dataclass(slots=True)
class CallOutcome:
    """The result of one call, ``status`` as in ``ToolExecution`` plus the loop's own
    (``denied``, ``not_approved``, ``skipped``, ``repeated``, ``cancelled``, ``not_run``)."""

    call: ToolUseBlock
    result: ToolResultBlock
    status: str
    duration: float = 0.0
    hookable: bool = True  # after_tool_call sees it (not for results the loop made up)


class Batch:
    """The calls of one reply and what became of each, from the reply until their results are
    recorded: the one owner of what is in flight (results by call id, the client calls set aside,
    the steering input that skipped calls); recorded as one ``ToolResults`` message."""

    __slots__ = ("answered", "calls", "client_calls", "skipped", "steering")

    def __init__(self, calls: Iterable[ToolUseBlock]) -> None:
        self.calls: list[ToolUseBlock] = list(calls)
        #: Results by call id, in the order they arrived (a parallel batch finishes out of order).
        self.answered: dict[str, CallOutcome] = {}
        #: Client calls vetted and handed to the caller; the turn pauses until ``resume``.
        self.client_calls: list[ToolUseBlock] = []
        #: User input that arrived mid-batch and skipped the calls after it (kept while paused).
        self.steering: list[UserMessage] = []
        #: Ids of the calls that steering skipped.
        self.skipped: list[str] = []

    def __repr__(self) -> str:
        return f"Batch({len(self.answered)}/{len(self.calls)} answered, {len(self.client_calls)} client)"

    def answer(self, call: ToolUseBlock, result: ToolResultBlock, status: str, *,
               duration: float = 0.0, hookable: bool = True) -> None:
        """Give ``call`` its result (``hookable=False``: one the steps made up, not shown to
        ``after_tool_call``)."""
        self.answered[call.id] = CallOutcome(call, result, status, duration, hookable)

    def outcome(self, call_id: str) -> CallOutcome | None:
        """The result ``call_id`` has so far (None: none yet)."""
        return self.answered.get(call_id)

    @property
    def paused(self) -> bool:
        """Whether the batch waits for client results."""
        return bool(self.client_calls)

    def answer_rest(self, reason: str, status: str = "cancelled") -> None:
        """Give every call without a result an error result saying ``reason`` (finished ones keep theirs)."""
        answered = self.answered
        for call in self.calls:
            if call.id not in answered:
                answered[call.id] = CallOutcome(call, error_result(call.id, reason), status, 0.0, False)

    def outcomes(self, reason: str = CANCELLED) -> list[CallOutcome]:
        """One outcome per call, in the model's order (``reason`` for any still unanswered)."""
        self.answer_rest(reason)
        return [self.answered[c.id] for c in self.calls]

    def record(self, reason: str = CANCELLED) -> ToolResults:
        """The message that answers every call, in the model's order."""
        return ToolResults(results=[o.result for o in self.outcomes(reason)])

    # ------------------------------------------------------------------------------- saving

    def to_state(self) -> dict[str, Any]:
        """The batch as JSON-able data (``from_state`` reads it back)."""
        return {
            "calls": [c.model_dump(mode="json") for c in self.calls],
            "client_calls": [c.model_dump(mode="json") for c in self.client_calls],
            "steering": [m.model_dump(mode="json") for m in self.steering],
            "skipped": list(self.skipped),
            "answered": [
                {"call": o.call.model_dump(mode="json"), "result": o.result.model_dump(mode="json"),
                 "status": o.status, "duration": o.duration, "hookable": o.hookable}
                for o in self.answered.values()
            ],
        }

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> Batch:
        """The batch ``to_state`` wrote."""
        batch = cls(ToolUseBlock.model_validate(c) for c in data["calls"])
        batch.client_calls = [ToolUseBlock.model_validate(c) for c in data["client_calls"]]
        batch.steering = [UserMessage.model_validate(m) for m in data["steering"]]
        batch.skipped = list(data.get("skipped", ()))
        for done in data["answered"]:
            batch.answer(
                ToolUseBlock.model_validate(done["call"]), ToolResultBlock.model_validate(done["result"]),
                done["status"], duration=done["duration"], hookable=done["hookable"],
            )
        return batch


def unanswered_calls(messages: list[AgentMessage]) -> list[ToolUseBlock]:
    """The calls of the history's last reply that no later ``ToolResults`` answers."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, AssistantReply):
            calls = message.message.tool_calls
            break
    else:
        return []
    if not calls:
        return []
    done = {r.tool_use_id for m in messages[i + 1 :] if isinstance(m, ToolResults) for r in m.results}
    return [c for c in calls if c.id not in done]


def answer_open_calls(
    messages: list[AgentMessage], reason: str, batch: Batch | None = None
) -> ToolResults | None:
    """Append the results the history's last reply still lacks: ``batch``'s finished ones where it
    has them, ``reason`` for the rest. None (and nothing appended) when every call is answered."""
    missing = unanswered_calls(messages)
    if not missing:
        return None
    open_batch = Batch(missing)
    if batch is not None:
        for call in missing:
            done = batch.outcome(call.id)
            if done is not None:
                open_batch.answered[call.id] = done
    record = open_batch.record(reason)
    messages.append(record)
    return record


def check_client_results(
    waiting: set[str], tool_results: Iterable[ToolResultBlock], *, how_to_check: str
) -> list[ToolResultBlock]:
    """The results given to ``resume()``, checked against the client calls ``waiting`` (their ids):
    ``RuntimeError`` when nothing waits (``how_to_check`` says how the caller can tell), ``ValueError``
    for a result that answers no waiting call, or one twice."""
    if not waiting:
        raise RuntimeError(
            "resume() needs a turn paused for client tools, and none is: check "
            f"TurnResult.stop == 'client_tools' (or {how_to_check}) first"
        )
    given = list(tool_results)
    seen: set[str] = set()
    for result in given:
        if result.tool_use_id not in waiting or result.tool_use_id in seen:
            raise ValueError(
                f"tool result for {result.tool_use_id!r} answers no pending client call (or answers "
                f"one twice); the pending call ids are {sorted(waiting)}"
            )
        seen.add(result.tool_use_id)
    return given
