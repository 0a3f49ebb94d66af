"""What acceptance checks cost per turn, against the same turn unchecked, and what the built-in
"no done without an answer" test costs per final reply.

A scripted model answers each turn at once (no network), so what is measured is agcore's own work
plus the check itself: the baseline turn returns a text answer with no check; the checked turns run
one check, ``true``, through ``Workspace.execute`` (the guard, then the process: inside bubblewrap
where it works, and guard-only). Turns run in batches, each turn timed alone; batches of all sides
alternate so drift hits them alike. The report shows the median per turn, the p95 and the ratio to
the unchecked turn, then ``not_an_answer`` on three kinds of reply against the unchecked turn. A
report, not a test: it exits 0 whatever the numbers.

    python bench/checks.py                       # 5 batches x 40 turns, asyncio
    python bench/checks.py --backend trio
    python bench/checks.py --batches 2 --turns 10   # a quick smoke run
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: `python bench/checks.py`
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from agcore.agent import AcceptanceChecks, AgentBuilder, AgentSession, BasicAgent  # noqa: E402
from agcore.agent._answers import not_an_answer  # noqa: E402  (the function the capability calls)
from agcore.testing import ScriptedProvider  # noqa: E402
from agcore.tools.workspace import Workspace  # noqa: E402

UNCHECKED = "unchecked"
SIDES: dict[str, str | None] = {
    UNCHECKED: None, "check 'true', sandbox": "auto", "check 'true', guard-only": "off",
}
REPLIES = {
    "a prose answer": "The weather in Paris is cloudy, 18 degrees.",
    "a call as JSON": '{"name": "read_file", "arguments": {"path": "notes.txt"}}',
    "empty": "",
}


async def _batch(side: str, turns: int, root: Path) -> list[int]:
    model = ScriptedProvider(["Done."] * turns)
    builder = AgentBuilder().provider(model)
    sandbox = SIDES[side]
    if sandbox is not None:
        workspace = Workspace(root, sandbox=sandbox, confirm_commands=False)  # type: ignore[arg-type]
        builder.capabilities(AcceptanceChecks(workspace, ["true"]))
    session = AgentSession(BasicAgent("bench", system_prompt="You work."), "bench", builder.build())
    timings: list[int] = []
    for _ in range(turns):
        session.messages.clear()
        start = time.perf_counter_ns()
        result = await session.submit_turn("Do it.")
        timings.append(time.perf_counter_ns() - start)
        assert result.ok, result.error
    return timings


async def _run(batches: int, turns: int, root: Path) -> dict[str, list[tuple[float, list[int]]]]:
    results: dict[str, list[tuple[float, list[int]]]] = {side: [] for side in SIDES}
    for side in SIDES:  # warm-up
        await _batch(side, 3, root)
    for _ in range(batches):
        for side in SIDES:
            gc.collect()
            timings = await _batch(side, turns, root)
            results[side].append((statistics.median(timings), timings))
    return results


def _answer_test_ns(text: str, rounds: int = 2000) -> float:
    offered = frozenset({"read_file", "write_file", "edit_file", "run_command"})
    start = time.perf_counter_ns()
    for _ in range(rounds):
        not_an_answer(text, offered)
    return (time.perf_counter_ns() - start) / rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        results: Any = anyio.run(_run, args.batches, args.turns, Path(root), backend=args.backend)
    base = statistics.median(m for m, _ in results[UNCHECKED])
    print(f"acceptance checks, {args.batches} batches x {args.turns} turns, {args.backend}")
    print(f"{'turn':<28}{'median us':>12}{'p95 us':>10}{'vs unchecked':>14}")
    for side, rows in results.items():
        median = statistics.median(m for m, _ in rows)
        every = sorted(t for _, timings in rows for t in timings)
        p95 = every[int(len(every) * 0.95)]
        print(f"{side:<28}{median / 1000:>12.1f}{p95 / 1000:>10.1f}{median / base:>13.2f}x")
    print(f"\nnot_an_answer per final reply, against the unchecked turn ({base / 1000:.1f} us)")
    for name, text in REPLIES.items():
        spent = _answer_test_ns(text)
        print(f"{name:<28}{spent / 1000:>12.1f} us{spent / base:>13.1%}")


if __name__ == "__main__":
    main()
