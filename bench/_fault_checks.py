"""The invariants the fault campaign (``bench/faults.py``) checks after every turn of a session,
against what ``ChaosVendor`` logged it served.

No exception escaped (``_fault_session`` catches and reports one); each retryable fault was retried
(after at least the wait its ``retry-after`` asked for) and each other one ended the turn at once
with the fitting ``AgentLLMError``; a stream that had shown output was not retried; the text shown
(stream deltas) and recorded is each delivered reply's text exactly once; usage, reply count and cost
count each delivered reply once; every tool call has exactly one result, and each misbehaving tool's
result says what went wrong; the server never saw a history a real endpoint would reject; the
session store holds what the session holds.
"""

from __future__ import annotations

import math
from typing import Any

from agcore.agent import (
    AgentLLMError,
    AgentSession,
    AssistantReply,
    Cancelled,
    CostTracker,
    Done,
    Failed,
    ToolResults,
    messages_from_json,
)
from agcore.llm import errors as llm_errors
from agcore.llm.models import default_registry
from agcore.llm.types import AssistantMessage, ImageBlock, Usage, UserMessage
from agcore.memory import SessionStore
from bench.chaos_vendor import Served

__all__ = [
    "MAX_ATTEMPTS",
    "TOOL_FAULTS",
    "check_cost",
    "check_history",
    "check_last_event",
    "check_replies",
    "check_requests",
    "check_store",
    "check_tools",
    "check_usage",
]

MAX_ATTEMPTS = 3  # the providers' retry policy: tries per model call
#: Tool-side faults, by the tool the scripted model calls to cause them.
TOOL_FAULTS = {
    "tool_raises": "explode",
    "tool_hangs": "stall",
    "tool_hangs_sync": "stall_sync",
    "tool_huge_output": "flood",
    "tool_non_text": "picture",
    "tool_cancelled": "slow_job",
    "tool_unknown": "teleport",
}
_FAULT_OF_TOOL = {name: fault for fault, name in TOOL_FAULTS.items()}
_MAX_RESULT = 50_000 + 200  # the default max_output_chars, plus the truncation marker

_RETRYABLE = {
    "429_seconds",
    "429_ms",
    "429_date",
    "529",
    "500",
    "502",
    "503",
    "reset",
    "cut_body",
    "slow",
    "stream_error_before_output",
    "stream_error_after_start",
}
_CONNECTION = (llm_errors.LLMConnectionError, llm_errors.StreamInterruptedError)
_EXPECTED_ERROR: dict[str, tuple[type[llm_errors.LLMError], ...]] = {
    **dict.fromkeys(("429_seconds", "429_ms", "429_date", "429_too_long"), (llm_errors.RateLimitError,)),
    "529": (llm_errors.OverloadedError,),
    **dict.fromkeys(("500", "502", "503"), (llm_errors.ServerError,)),
    "400": (llm_errors.InvalidRequestError,),
    "401": (llm_errors.AuthenticationError,),
    "404": (llm_errors.ModelNotFoundError,),
    "reset": _CONNECTION,
    "cut_body": _CONNECTION,
    "slow": (llm_errors.RequestTimeoutError,),
    "malformed": (llm_errors.ResponseFormatError,),
    "stream_cut_after_delta": (llm_errors.StreamInterruptedError,),
    "stream_stall_after_delta": (llm_errors.StreamInterruptedError, llm_errors.RequestTimeoutError),
    **dict.fromkeys(
        ("stream_error_before_output", "stream_error_after_start", "stream_error_after_output"),
        (llm_errors.ServerError, llm_errors.RateLimitError),
    ),
}


def _expected_kind(served: Served) -> str:
    """``accept``, ``retry`` or ``end`` (the turn must fail with this fault's error)."""
    if served.delivered:
        return "accept"
    if served.fault in _RETRYABLE or (served.fault == "empty_200" and served.stream):
        return "retry"
    return "end"


def _expected_error(served: Served) -> tuple[type[llm_errors.LLMError], ...]:
    if served.fault == "empty_200":
        return (llm_errors.StreamInterruptedError,) if served.stream else (llm_errors.ResponseFormatError,)
    return _EXPECTED_ERROR.get(served.fault, (llm_errors.LLMError,))


def _groups(entries: list[Served]) -> list[list[Served]]:
    """The requests of each model call: a retry repeats the messages of the attempt before it."""
    groups: list[list[Served]] = []
    for entry in entries:
        if groups and groups[-1][-1].digest == entry.digest:
            groups[-1].append(entry)
        else:
            groups.append([entry])
    return groups


def check_requests(
    entries: list[Served], waits: list[float], session: AgentSession, *, left: bool = False
) -> list[str]:
    violations = [
        f"request {e.index}: the history sent was invalid: {e.history_error}"
        for e in entries
        if e.history_error
    ]
    result = session.last_result
    retried_after: list[float] = []
    ended_by: Served | None = None
    for group in _groups(entries):
        for attempt, entry in enumerate(group, 1):
            retried = attempt < len(group)
            kind = _expected_kind(entry)
            if kind == "retry" and attempt < MAX_ATTEMPTS:
                if not retried:
                    violations.append(f"request {entry.index}: {entry.fault} (retryable) was not retried")
                retried_after.append(entry.retry_after or 0.0)
            elif retried:
                violations.append(f"request {entry.index}: {entry.fault} was retried ({kind})")
            if kind != "accept" and not retried:
                ended_by = entry
    if len(waits) != len(retried_after):
        violations.append(f"{len(waits)} retry waits for {len(retried_after)} retries")
    for wait, least in zip(waits, retried_after, strict=False):
        if wait < least:
            violations.append(f"retried after {wait:.2f}s where the server asked for {least:g}s")
    if result is None:
        return [*violations, "the turn left no result"]
    if left:
        if result.stop != "cancelled" or not isinstance(result.error, Cancelled):
            violations.append(f"the turn the client left ended as {result.stop!r} ({result.error!r})")
        if ended_by is not None and ended_by is not entries[-1]:
            violations.append(f"request {ended_by.index}: {ended_by.fault} did not end the turn")
    elif ended_by is not None:
        if ended_by is not entries[-1]:
            violations.append(f"request {ended_by.index}: {ended_by.fault} did not end the turn")
        error = result.error
        expected = _expected_error(ended_by)
        if not (
            result.stop == "error" and isinstance(error, AgentLLMError) and isinstance(error.cause, expected)
        ):
            violations.append(
                f"{ended_by.fault} ended the turn as {result.stop!r} with {error!r}, "
                f"not an AgentLLMError of {[c.__name__ for c in expected]}"
            )
    elif entries and "slow_job" in entries[-1].tools:
        if result.stop != "cancelled":
            violations.append(f"the turn cancelled mid-tool ended as {result.stop!r}")
    elif result.stop != "done" or result.error is not None:
        violations.append(f"the turn ended as {result.stop!r} ({result.error}) with no fault to end it")
    elif entries and result.text != entries[-1].text:
        violations.append("the turn's text is not the last reply's text")
    return violations


def check_replies(entries: list[Served], new: list[Any], deltas: dict[int, list[str]] | None) -> list[str]:
    violations: list[str] = []
    groups = _groups(entries)
    recorded = [m.message.text for m in new if isinstance(m, AssistantReply)]
    expected = [g[-1].text for g in groups if g[-1].delivered]
    if recorded != expected:
        violations.append(
            f"recorded {len(recorded)} replies, delivered {len(expected)}, or their texts differ"
        )
    if deltas is None:
        return violations
    for iteration, group in enumerate(groups, 1):
        shown = "".join(deltas.get(iteration, []))
        last = group[-1]
        if last.delivered and shown != last.text:
            violations.append(
                f"request {last.index}: the streamed text is not the reply's text "
                f"({len(shown)} vs {len(last.text)} characters)"
            )
        if not last.delivered and not last.text.startswith(shown):
            violations.append(f"request {last.index}: streamed text that the reply never had (duplicated?)")
    if set(deltas) - set(range(1, len(groups) + 1)):
        violations.append("text streamed for a model call the server never answered")
    return violations


def check_tools(new: list[Any], violations: list[str]) -> list[str]:
    """Check each tool result of the turn; return the tool faults that happened."""
    faults: list[str] = []
    results = {r.tool_use_id: r for m in new if isinstance(m, ToolResults) for r in m.results}
    cancelled = any(
        c.name == "slow_job" for m in new if isinstance(m, AssistantReply) for c in m.message.tool_calls
    )
    for message in new:
        if not isinstance(message, AssistantReply):
            continue
        for call in message.message.tool_calls:
            result = results.get(call.id)
            if result is None:
                continue  # _check_history reports unanswered calls
            text = result.text
            if cancelled and result.is_error and text.startswith("Cancelled"):
                ok = True  # cancelled with the turn, next to the call that cancelled it
            elif call.name == "teleport":  # unknown: said first, whatever its arguments
                ok = result.is_error and "Unknown tool 'teleport'" in text
            elif call.parse_error is not None:  # unreadable, or cut short by the output limit
                ok = result.is_error and call.parse_error in text
            elif call.name == "lookup":  # its own reading, not another call's
                ok = not result.is_error and f"Paris (reading {call.input.get('n')})" in text
            elif call.name == "explode":
                ok = result.is_error and "offline" in text
            elif call.name in ("stall", "stall_sync"):
                ok = result.is_error and "timed out" in text
            elif call.name == "flood":
                ok = not result.is_error and len(text) <= _MAX_RESULT and "truncated" in text
            elif call.name == "picture":
                ok = (
                    not result.is_error
                    and isinstance(result.content, list)
                    and any(isinstance(b, ImageBlock) for b in result.content)
                )
            else:  # slow_job, cancelled with its turn
                ok = result.is_error and text.startswith("Cancelled")
            if call.name in _FAULT_OF_TOOL and call.parse_error is None:
                faults.append(_FAULT_OF_TOOL[call.name])
            if not ok:
                violations.append(f"call {call.id} to {call.name}: unexpected result {text[:120]!r}")
    return faults


def check_usage(entries: list[Served], session: AgentSession, before: Usage, calls_before: int) -> list[str]:
    delivered = [e for e in entries if e.delivered]
    counted = session.usage.usage
    gained = (counted.input_tokens - before.input_tokens, counted.output_tokens - before.output_tokens)
    expected = (sum(e.input_tokens for e in delivered), sum(e.output_tokens for e in delivered))
    violations = []
    if gained != expected:
        violations.append(f"usage counted {gained}, the delivered replies carried {expected}")
    if session.usage.calls - calls_before != len(delivered):
        violations.append(f"{session.usage.calls - calls_before} replies counted, {len(delivered)} delivered")
    result = session.last_result
    if result is not None and (result.usage.input_tokens, result.usage.output_tokens) != expected:
        violations.append(
            f"the turn's result counts usage {result.usage}, the delivered replies carried {expected}"
        )
    return violations


def check_cost(session: AgentSession, model: str, delivered: list[Served], violations: list[str]) -> None:
    info = default_registry.get(model)
    cost = session.usage.cost_usd
    if info is None:
        if cost is not None:
            violations.append(f"a cost of {cost} for a model with no known price")
        return
    expected = sum(
        info.cost_usd(Usage(input_tokens=e.input_tokens, output_tokens=e.output_tokens)) for e in delivered
    )
    if cost is None or not math.isclose(cost, expected, rel_tol=1e-9, abs_tol=1e-12):
        violations.append(f"cost {cost} USD, expected {expected} for the delivered replies")


async def check_store(store: SessionStore, session: AgentSession) -> list[str]:
    """The store holds the session as it is: every message, and the usage. Except after a cancelled
    turn: its repair (the "cancelled" results of the calls it left open) is kept in memory only, by
    design (nothing awaits while cancelled), and saved with the next message; a process stopped in
    between has those calls answered "interrupted" on load."""
    record = await store.load(session.session_id)
    if record is None:
        return ["the store has no record of the session"]
    texts = await store.load_messages(session.session_id)
    stored = messages_from_json("[" + ",".join(texts) + "]")
    violations = []
    expected = session.messages
    result = session.last_result
    cancelled = result is not None and result.stop == "cancelled"
    if cancelled and len(stored) == len(expected) - 1 and isinstance(expected[-1], ToolResults):
        expected = expected[:-1]
    if [m.model_dump() for m in stored] != [m.model_dump() for m in expected]:
        kinds = [type(m).__name__ for m in stored], [type(m).__name__ for m in session.messages]
        violations.append(f"the store holds {len(stored)} messages {kinds[0]}, the session {kinds[1]}")
    saved = CostTracker.model_validate(record.usage).usage if record.usage else None
    if saved != session.usage.usage:
        violations.append(f"the store holds usage {saved}, the session {session.usage.usage}")
    return violations


def check_history(session: AgentSession) -> list[str]:
    """Every tool call in the history has exactly one result, in the message right after it."""
    history = session.history_for_llm()
    for position, message in enumerate(history):
        if not isinstance(message, AssistantMessage) or not message.tool_calls:
            continue
        following = history[position + 1] if position + 1 < len(history) else None
        answered = (
            [r.tool_use_id for r in following.tool_results] if isinstance(following, UserMessage) else []
        )
        asked = [c.id for c in message.tool_calls]
        if sorted(answered) != sorted(asked):
            return [f"history message {position}: calls {asked} answered by {answered}"]
    return []


def check_last_event(session: AgentSession, last: object, streamed: bool) -> list[str]:
    """A streamed turn ends in the event that matches its result: ``Done``, or ``Failed`` with the
    error's type and recoverability; an ``AgentLLMError`` is recoverable when its cause is retryable."""
    result = session.last_result
    if result is None:
        return []
    error = result.error
    violations = []
    if isinstance(error, AgentLLMError) and error.is_recoverable() != error.cause.is_retryable:
        violations.append(f"{error!r} says recoverable={error.is_recoverable()} for a cause that is not")
    if not streamed or result.stop == "cancelled":  # a cancelled turn's stream has no last event
        return violations
    if error is None and not (
        isinstance(last, Done) and last.stop == result.stop and last.text == result.text
    ):
        violations.append(f"the stream of a turn that ended {result.stop!r} ended with {last!r}")
    if error is not None and not (
        isinstance(last, Failed)
        and last.error_type == type(error).__name__
        and last.recoverable == error.is_recoverable()
        and last.stop == result.stop
    ):
        violations.append(f"the stream of a turn that failed with {error!r} ended with {last!r}")
    return violations
