"""One session of the fault campaign (``bench/faults.py``): an ``AgentSession`` with tools, run turn by
turn against ``ChaosVendor`` under a seeded script, and the invariants checked after every turn.

After each turn: no exception escaped; each retryable fault was retried (after at least the wait
its ``retry-after`` asked for) and each other one ended the turn at once with the fitting
``AgentLLMError``; a stream that had shown output was not retried; the text shown (stream deltas)
and recorded is each delivered reply's text exactly once; usage and cost count each delivered reply
once; every tool call has exactly one result, and each misbehaving tool's result says what went
wrong; the history sent on the next request is one a real endpoint accepts; and the turn took no
longer than its timeouts allow. The last turn of every session has no fault and must succeed.
"""

from __future__ import annotations

import base64
import dataclasses
import math
import random
import threading
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel

from agcore.agent import (
    AgentBuilder,
    AgentConfig,
    AgentError,
    AgentLLMError,
    AgentSession,
    AssistantReply,
    BasicAgent,
    Cancelled,
    CostTracker,
    ToolResults,
    TurnStarted,
    messages_from_json,
)
from agcore.agent import TextDelta as AgentTextDelta
from agcore.llm import errors as llm_errors
from agcore.llm.models import default_registry
from agcore.llm.provider import BaseProvider
from agcore.llm.providers.anthropic import AnthropicProvider
from agcore.llm.providers.ollama import OllamaProvider
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import RetryPolicy
from agcore.llm.types import AssistantMessage, ImageBlock, TextBlock, Usage, UserMessage
from agcore.memory import SessionStore
from agcore.tools import tool
from bench.chaos_vendor import ChaosVendor, Served

__all__ = [
    "CLIENT_FAULTS",
    "CLIENT_TIMEOUT",
    "SLOW_SECONDS",
    "MAX_ATTEMPTS",
    "TOOL_FAULTS",
    "VENDOR_MODELS",
    "SessionPlan",
    "SessionReport",
    "TurnPlan",
    "TurnReport",
    "run_session",
]

VENDOR_MODELS = {"anthropic": "claude-haiku-4-5", "openai": "gpt-4.1", "ollama": "llama3.2"}
CLIENT_TIMEOUT = 2.0  # the providers' timeout
#: How long ChaosVendor's slow replies keep a client waiting: well past CLIENT_TIMEOUT, so that a client
#: on a busy event loop, which notices its timeout late, still finds no reply there.
SLOW_SECONDS = CLIENT_TIMEOUT + 3.0
TOOL_TIMEOUT = 0.3  # the hanging tool's own timeout
MAX_ATTEMPTS = 3
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
#: Client-side events, streaming sessions only: the client leaves the turn at its first text delta.
CLIENT_FAULTS = {"client_cancels_stream": "cancel", "client_drops_stream": "drop"}
_WAITS_OUT_TIMEOUT = ("slow", "stream_stall_after_delta")
_FAULT_OF_TOOL = {name: fault for fault, name in TOOL_FAULTS.items()}
_HUGE_OUTPUT = 2_000_000
_MAX_RESULT = 50_000 + 200  # the default max_output_chars, plus the truncation marker
_PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()

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


@dataclass
class TurnPlan:
    """What the server does during one turn: ``faults`` one per request, the ``tools`` the model calls
    first, and which ``bad_args`` a ``bad_args`` fault sends."""

    faults: list[str]
    tools: list[str]
    bad_args: str = "broken"
    #: Streaming only: at the turn's first text delta the client cancels the turn (``"cancel"``: its
    #: cancel scope) or drops the stream (``"drop"``: ``break`` out of the ``async for``).
    leave: str | None = None


@dataclass
class SessionPlan:
    key: str
    vendor: str
    streaming: bool
    seed: int
    turns: list[TurnPlan]


@dataclass
class TurnReport:
    faults: list[str]  # provider and tool faults that really happened in this turn
    violations: list[str]
    requests: int


@dataclass
class SessionReport:
    plan: SessionPlan
    turns: list[TurnReport] = field(default_factory=list)

    @property
    def violations(self) -> list[str]:
        return [f"{self.plan.key} turn {n}: {v}" for n, t in enumerate(self.turns, 1) for v in t.violations]


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


class _Tools:
    """The session's tools. ``slow_job`` cancels the running turn from outside while it runs."""

    def __init__(self) -> None:
        self.turn_scope: anyio.CancelScope | None = None
        #: Lets abandoned blocking tool threads finish when the session is over.
        self.release = threading.Event()

    def build(self) -> list[Any]:
        @tool
        def lookup(city: str, n: int = 0) -> str:
            """The weather in a city."""
            return f"18°C and dry in {city} (reading {n})"

        @tool
        def explode(city: str, n: int = 0) -> str:
            """A tool that raises."""
            raise RuntimeError(f"the weather station for {city} is offline")

        @tool(timeout=TOOL_TIMEOUT)
        async def stall(city: str, n: int = 0) -> str:
            """A tool that hangs past its timeout."""
            await anyio.sleep(30)
            return "never"

        @tool(timeout=TOOL_TIMEOUT)
        def stall_sync(city: str, n: int = 0) -> str:
            """A blocking tool that hangs past its timeout (its thread is abandoned)."""
            self.release.wait(30)  # held until the session ends: a turn that waited for it would show
            return "late"

        @tool
        def flood(city: str, n: int = 0) -> str:
            """A tool whose output is huge."""
            return f"{city} " + "rain " * (_HUGE_OUTPUT // 5)

        @tool
        def picture(city: str, n: int = 0) -> list[TextBlock | ImageBlock]:
            """A tool returning an image."""
            return [TextBlock(text=f"Radar map of {city}"), ImageBlock(media_type="image/png", data=_PIXEL)]

        @tool
        async def slow_job(city: str, n: int = 0) -> str:
            """A tool cancelled mid-run: the user cancels the turn while it works."""
            assert self.turn_scope is not None
            self.turn_scope.cancel()
            await anyio.sleep(30)
            return "never"

        return [lookup, explode, stall, stall_sync, flood, picture, slow_job]


class _RecordedSleep:
    """The retry layer's sleep: records each wait instead of taking it (the campaign checks waits
    against retry-after; taking them would cost minutes)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.waits.append(delay)
        await anyio.lowlevel.checkpoint()


def _provider(vendor: str, base_url: str, policy: RetryPolicy) -> BaseProvider:
    model = VENDOR_MODELS[vendor]
    if vendor == "anthropic":
        return AnthropicProvider(
            model, api_key="sk-chaos", base_url=base_url, timeout=CLIENT_TIMEOUT, retry_policy=policy
        )
    if vendor == "openai":
        return OpenAIProvider(
            model,
            api_key="sk-chaos",
            base_url=base_url,
            timeout=CLIENT_TIMEOUT,
            retry_policy=policy,
            provider_name="openai",
        )
    return OllamaProvider(model, host=base_url, timeout=CLIENT_TIMEOUT, retry_policy=policy)


async def run_session(
    server: ChaosVendor, plan: SessionPlan, store: SessionStore | None = None
) -> SessionReport:
    """Run ``plan`` against ``server`` and check every turn. With a ``store`` the session is saved as
    it runs, and after every turn what the store holds must be what the session holds."""
    sleep = _RecordedSleep()
    policy = RetryPolicy(
        max_attempts=MAX_ATTEMPTS, base_delay=0.01, max_delay=0.05, sleep=sleep, rng=random.Random(plan.seed)
    )
    provider = _provider(plan.vendor, server.base_url(plan.key, plan.vendor), policy)
    tools = _Tools()
    config = AgentConfig(streaming="always" if plan.streaming else "auto", max_turns=8)
    bundle = AgentBuilder().provider(provider).tools(*tools.build()).config(config).build()
    session = AgentSession(
        BasicAgent(name="chaos", system_prompt="You report the weather."), plan.key, bundle, store=store
    )
    report = SessionReport(plan)
    delivered: list[Served] = []
    try:
        for number, turn in enumerate(plan.turns, 1):
            report.turns.append(await _run_turn(server, plan, session, tools, sleep, turn, number, delivered))
            if store is not None:
                report.turns[-1].violations += await _check_store(store, session)
        _check_cost(session, VENDOR_MODELS[plan.vendor], delivered, report.turns[-1].violations)
        # A turn's faults held only if the turn after it (which has fewer or no faults) went well too.
        for earlier, later in zip(report.turns, report.turns[1:], strict=False):
            if later.violations and not earlier.violations:
                earlier.violations.append("the next turn failed its checks")
    finally:
        tools.release.set()
        await session.close()
        await provider.aclose()
    return report


async def _run_turn(
    server: ChaosVendor,
    plan: SessionPlan,
    session: AgentSession,
    tools: _Tools,
    sleep: _RecordedSleep,
    turn: TurnPlan,
    number: int,
    delivered: list[Served],
) -> TurnReport:
    server.plan(plan.key, faults=turn.faults, tools=turn.tools, bad_args=turn.bad_args)
    first_request, first_wait = len(server.log(plan.key)), len(sleep.waits)
    usage_before, calls_before = session.usage.usage, session.usage.calls
    history_before = len(session.messages)
    deltas: dict[int, list[str]] = {}
    escaped: BaseException | None = None
    left: list[bool] = []  # set when the client leaves the turn
    started = anyio.current_time()
    with anyio.move_on_after(60) as hard_limit:
        with anyio.CancelScope() as scope:
            tools.turn_scope = scope
            try:
                await _drive(
                    session,
                    plan.streaming,
                    f"Turn {number}: the weather in Paris?",
                    deltas,
                    turn.leave,
                    scope,
                    left,
                )
            except Exception as exc:  # the invariant under test: nothing but a result comes out
                escaped = exc
    elapsed = anyio.current_time() - started
    entries = server.log(plan.key)[first_request:]
    if left and entries:
        # The client left while the last reply streamed in: it never received that reply whole.
        entries[-1] = dataclasses.replace(entries[-1], delivered=False)
    waits = sleep.waits[first_wait:]
    new = session.messages[history_before:]
    violations: list[str] = []
    if escaped is not None:
        kind = (
            "an agcore error" if isinstance(escaped, AgentError | llm_errors.LLMError) else "a raw exception"
        )
        violations.append(f"{kind} escaped: {type(escaped).__name__}: {escaped}")
    if hard_limit.cancelled_caught:
        violations.append("the turn hung for 60 s")
    budget = 3.0 + sum(CLIENT_TIMEOUT + 1.0 if e.fault in _WAITS_OUT_TIMEOUT else 1.0 for e in entries)
    if elapsed > budget:
        violations.append(f"the turn took {elapsed:.1f}s, past the {budget:.1f}s its timeouts allow")
    violations += _check_requests(entries, waits, session, left=bool(left))
    violations += _check_replies(entries, new, deltas if plan.streaming else None)
    tool_faults = _check_tools(new, violations)
    violations += _check_usage(entries, session, usage_before, calls_before)
    violations += _check_history(session)
    delivered += [e for e in entries if e.delivered]
    faults = [e.fault for e in entries if e.fault != "ok"] + tool_faults
    if left:
        faults.append("client_drops_stream" if turn.leave == "drop" else "client_cancels_stream")
    return TurnReport(faults=faults, violations=violations, requests=len(entries))


async def _drive(
    session: AgentSession,
    streaming: bool,
    prompt: str,
    deltas: dict[int, list[str]],
    leave: str | None,
    scope: anyio.CancelScope,
    left: list[bool],
) -> None:
    """Run one turn; with ``leave``, the client leaves it at its first text delta (noted in ``left``)."""
    if not streaming:
        await session.submit_turn(prompt)
        return
    iteration = 0
    async for event in session.stream_turn(prompt):
        if isinstance(event, TurnStarted):
            iteration = event.iteration
        elif isinstance(event, AgentTextDelta):
            deltas.setdefault(iteration, []).append(event.text)
            if leave is not None:
                left.append(True)
                if leave == "drop":
                    return  # the stream is dropped unclosed, as a `break` leaves it
                scope.cancel()
                await anyio.lowlevel.checkpoint()


def _groups(entries: list[Served]) -> list[list[Served]]:
    """The requests of each model call: a retry repeats the messages of the attempt before it."""
    groups: list[list[Served]] = []
    for entry in entries:
        if groups and groups[-1][-1].digest == entry.digest:
            groups[-1].append(entry)
        else:
            groups.append([entry])
    return groups


def _check_requests(
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


def _check_replies(entries: list[Served], new: list[Any], deltas: dict[int, list[str]] | None) -> list[str]:
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


def _check_tools(new: list[Any], violations: list[str]) -> list[str]:
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
            elif call.name == "lookup":
                ok = not result.is_error and "Paris" in text
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


def _check_usage(entries: list[Served], session: AgentSession, before: Usage, calls_before: int) -> list[str]:
    delivered = [e for e in entries if e.delivered]
    counted = session.usage.usage
    gained = (counted.input_tokens - before.input_tokens, counted.output_tokens - before.output_tokens)
    expected = (sum(e.input_tokens for e in delivered), sum(e.output_tokens for e in delivered))
    violations = []
    if gained != expected:
        violations.append(f"usage counted {gained}, the delivered replies carried {expected}")
    if session.usage.calls - calls_before != len(delivered):
        violations.append(f"{session.usage.calls - calls_before} replies counted, {len(delivered)} delivered")
    return violations


def _check_cost(session: AgentSession, model: str, delivered: list[Served], violations: list[str]) -> None:
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


async def _check_store(store: SessionStore, session: AgentSession) -> list[str]:
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


def _check_history(session: AgentSession) -> list[str]:
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
