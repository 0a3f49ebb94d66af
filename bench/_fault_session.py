"""One session of the fault campaign (``bench/faults.py``): an ``AgentSession`` with tools, run turn by
turn against ``ChaosVendor`` under a seeded script, checked after every turn (``_fault_checks``).

The session's provider has a short timeout and a retry policy whose sleep records each wait instead
of taking it. Its tools misbehave on purpose (raise, hang past their timeout, return megabytes or an
image, cancel the turn they run in); the scripted model calls them, and a tool it calls that does
not exist. In streaming sessions the client may leave a turn at its first text delta, cancelling it
or dropping the stream. Beyond ``_fault_checks``: no exception may escape the turn, and the turn may
take no longer than its timeouts allow. The last turn of every session has no fault and must succeed.
"""

from __future__ import annotations

import base64
import dataclasses
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
    AgentSession,
    BasicAgent,
    TurnStarted,
)
from agcore.agent import TextDelta as AgentTextDelta
from agcore.llm import errors as llm_errors
from agcore.llm.provider import BaseProvider
from agcore.llm.providers.anthropic import AnthropicProvider
from agcore.llm.providers.ollama import OllamaProvider
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import RetryPolicy
from agcore.llm.types import ImageBlock, TextBlock
from agcore.memory import SessionStore
from agcore.tools import tool
from bench._fault_checks import (
    MAX_ATTEMPTS,
    TOOL_FAULTS,
    check_cost,
    check_history,
    check_last_event,
    check_replies,
    check_requests,
    check_store,
    check_tools,
    check_usage,
)
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
#: Client-side events, streaming sessions only: the client leaves the turn at its first text delta.
CLIENT_FAULTS = {"client_cancels_stream": "cancel", "client_drops_stream": "drop"}
_WAITS_OUT_TIMEOUT = ("slow", "stream_stall_after_delta")
_HUGE_OUTPUT = 2_000_000
_PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


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
                report.turns[-1].violations += await check_store(store, session)
        check_cost(session, VENDOR_MODELS[plan.vendor], delivered, report.turns[-1].violations)
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
    ending: list[object] = []  # a stream's last event
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
                    ending,
                )
            except Exception as exc:  # the invariant under test: nothing but a result comes out
                escaped = exc
        # A stream the client dropped or left by cancellation is closed by the event loop a few
        # scheduling steps later (it ends the turn then); its next turn would wait for that too.
        await session.settle()
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
    violations += check_requests(entries, waits, session, left=bool(left))
    violations += check_last_event(session, ending[0] if ending else None, plan.streaming and not left)
    violations += check_replies(entries, new, deltas if plan.streaming else None)
    tool_faults = check_tools(new, violations)
    violations += check_usage(entries, session, usage_before, calls_before)
    violations += check_history(session)
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
    ending: list[object],
) -> None:
    """Run one turn; with ``leave``, the client leaves it at its first text delta (noted in ``left``).
    A stream's last event goes to ``ending``."""
    if not streaming:
        await session.submit_turn(prompt)
        return
    iteration = 0
    last: object = None
    async for event in session.stream_turn(prompt):
        last = event
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
    ending.append(last)
