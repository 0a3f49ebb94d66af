"""The fault campaign: hundreds of seeded multi-turn sessions with tools, through ``AgentSession``,
against ``ChaosVendor`` (Anthropic, OpenAI and Ollama wire formats; complete and streaming; asyncio
and trio), with the invariants of ``_fault_session`` checked after every turn. Prints, per fault,
how often it was injected and how often every invariant held around it.

    .venv/bin/python bench/faults.py                      # 240 sessions per backend, both backends
    .venv/bin/python bench/faults.py --sessions 30 --backend trio --seed 7
    .venv/bin/python bench/faults.py --seed 17 --only s17-42   # rerun one session, print its plan

Faults are dealt from a shuffled deck (every fault equally often), one to three per faulted turn,
mixed with tool faults (a tool that raises, hangs past its timeout, returns megabytes or an image,
is cancelled mid-run, or does not exist). A fault that ends a turn leaves the rest of that turn's
faults undealt: the figures count faults that really happened (the server's log). The last turn
of every session is fault-free and must succeed. A report, not a test: it exits 0 whatever it
finds; ``tests/test_fault_campaign.py`` runs a seeded subset as a test.
"""

from __future__ import annotations

import argparse
import collections
import functools
import logging
import random
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

import anyio

from agcore.memory import SqliteSessionStore

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._chaos_wire import BAD_ARGUMENTS
from bench._fault_session import (
    CLIENT_FAULTS,
    SLOW_SECONDS,
    TOOL_FAULTS,
    VENDOR_MODELS,
    SessionPlan,
    SessionReport,
    TurnPlan,
    run_session,
)
from bench.chaos_vendor import PROVIDER_FAULTS, STREAM_ONLY, ChaosVendor

__all__ = ["ALL_FAULTS", "Figures", "plan_campaign", "run_campaign"]

ALL_FAULTS = (*PROVIDER_FAULTS, *TOOL_FAULTS, *CLIENT_FAULTS)
_MODES = [(vendor, streaming) for vendor in VENDOR_MODELS for streaming in (False, True)]


class _Deck:
    """Faults dealt in shuffled rounds, so each comes up equally often whatever the seed."""

    def __init__(self, faults: Iterable[str], rng: random.Random) -> None:
        self._faults = list(faults)
        self._rng = rng
        self._cards: list[str] = []

    def deal(self, allowed: Iterable[str] | None = None) -> str:
        allowed = set(self._faults if allowed is None else allowed)
        for _ in range(2):
            for position, card in enumerate(self._cards):
                if card in allowed:
                    return self._cards.pop(position)
            self._cards += self._rng.sample(self._faults, len(self._faults))
        raise ValueError(f"no fault in {sorted(allowed)}")


def plan_campaign(seed: int, sessions: int, *, turns: int = 3) -> list[SessionPlan]:
    """``sessions`` seeded session plans, cycling through vendor x (complete, streaming)."""
    rng = random.Random(seed)
    provider_deck = _Deck(PROVIDER_FAULTS, rng)
    tool_deck = _Deck(TOOL_FAULTS.values(), rng)
    complete_faults = [f for f in PROVIDER_FAULTS if f not in STREAM_ONLY]
    plans = []
    for number in range(sessions):
        vendor, streaming = _MODES[number % len(_MODES)]
        planned = []
        for _ in range(turns - 1):
            faults = [
                provider_deck.deal(None if streaming else complete_faults)
                for _ in range(rng.choice((1, 1, 2, 2, 3)))
            ]
            tools = rng.choice(([], ["lookup"], ["lookup"], ["lookup", "lookup"]))
            if rng.random() < 0.5:
                tools = [*tools, tool_deck.deal()]
            if "bad_args" in faults and not tools:
                tools = ["lookup"]
            if tools and rng.random() < 0.3:
                faults.insert(0, "ok")  # the fault lands on the turn's second model call
            leave = rng.choice(list(CLIENT_FAULTS.values())) if streaming and rng.random() < 0.2 else None
            planned.append(
                TurnPlan(faults=faults, tools=tools, bad_args=rng.choice(list(BAD_ARGUMENTS)), leave=leave)
            )
        planned.append(TurnPlan(faults=[], tools=["lookup"]))
        plans.append(
            SessionPlan(
                key=f"s{seed}-{number}",
                vendor=vendor,
                streaming=streaming,
                seed=rng.randrange(2**32),
                turns=planned,
            )
        )
    return plans


async def run_campaign(
    server: ChaosVendor, plans: list[SessionPlan], *, concurrency: int = 6, store_path: Path | None = None
) -> list[SessionReport]:
    """Run the sessions, ``concurrency`` at a time, on the current event loop. With ``store_path``,
    every session is saved as it runs in one SQLite session store there, and checked against it."""
    reports: list[SessionReport | None] = [None] * len(plans)
    limiter = anyio.CapacityLimiter(concurrency)
    store = SqliteSessionStore(store_path) if store_path is not None else None

    async def one(position: int, plan: SessionPlan) -> None:
        async with limiter:
            reports[position] = await run_session(server, plan, store)

    try:
        async with anyio.create_task_group() as group:
            for position, plan in enumerate(plans):
                group.start_soon(one, position, plan)
    finally:
        if store is not None:
            await store.aclose()
    return [r for r in reports if r is not None]


class Figures:
    """Per fault: how often it happened, and how often every invariant held around it."""

    def __init__(self) -> None:
        self.injected: collections.Counter[str] = collections.Counter()
        self.held: collections.Counter[str] = collections.Counter()
        self.sessions = self.turns = self.requests = 0
        self.violations: list[str] = []

    def add(self, reports: Iterable[SessionReport]) -> None:
        for report in reports:
            self.sessions += 1
            self.violations += report.violations
            for turn in report.turns:
                self.turns += 1
                self.requests += turn.requests
                for fault in turn.faults:
                    self.injected[fault] += 1
                    self.held[fault] += not turn.violations

    def table(self) -> str:
        lines = [f"{'fault':28} {'injected':>9} {'held':>6}", "-" * 45]
        for fault in ALL_FAULTS:
            lines.append(f"{fault:28} {self.injected[fault]:9d} {self.held[fault]:6d}")
        lines.append("-" * 45)
        total, held = sum(self.injected.values()), sum(self.held.values())
        lines.append(f"{'all faults':28} {total:9d} {held:6d}")
        return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="agcore's seeded fault campaign (a report).")
    parser.add_argument("--sessions", type=int, default=240, help="sessions per backend (default 240)")
    parser.add_argument("--turns", type=int, default=3, help="turns per session, the last one clean")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--backend", choices=("asyncio", "trio", "both"), default="both")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--only", help="run one session by key (e.g. s17-42) and print its plan")
    args = parser.parse_args(argv)
    # Retries and failing tools are logged as warnings: thousands of them here, all on purpose.
    logging.getLogger("agcore").setLevel(logging.CRITICAL)
    plans = plan_campaign(args.seed, args.sessions, turns=args.turns)
    if args.only:
        plans = [p for p in plans if p.key == args.only]
        for plan in plans:
            print(plan)
    backends = ("asyncio", "trio") if args.backend == "both" else (args.backend,)
    figures = Figures()
    started = time.monotonic()
    with ChaosVendor(slow_seconds=SLOW_SECONDS) as server, tempfile.TemporaryDirectory() as tmp:
        for backend in backends:
            for plan in plans:
                plan.key = f"{plan.key.split('@')[0]}@{backend}"  # a fresh script per backend
            campaign = functools.partial(
                run_campaign,
                server,
                plans,
                concurrency=args.concurrency,
                store_path=Path(tmp) / f"sessions-{backend}.db",
            )
            reports = anyio.run(campaign, backend=backend)
            figures.add(reports)
    elapsed = time.monotonic() - started
    modes = ", ".join(f"{v} {'stream' if s else 'complete'}" for v, s in _MODES)
    print(
        f"fault campaign: seed {args.seed}, {figures.sessions} sessions ({len(plans)} per backend on "
        f"{' and '.join(backends)}; {modes}), {figures.turns} turns, {figures.requests} requests, "
        f"{elapsed:.0f}s\n"
    )
    print(figures.table())
    print(
        "\ninjected = times the fault really happened (server log, tool calls); held = of those, times "
        f"every invariant held in its turn and the next.\n{len(figures.violations)} invariant violations"
    )
    for violation in figures.violations[:40]:
        print("  " + violation)
    return 0


if __name__ == "__main__":
    sys.exit(main())
