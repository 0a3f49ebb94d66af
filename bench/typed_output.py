"""What a typed final answer costs per turn, against the same turn untyped.

A scripted model answers each turn at once (no network), so what is measured is agcore's own work:
the baseline turn returns a text answer; the typed turns return the same answer as JSON and validate
it into a small pydantic model, once through the final-answer tool (``tool`` mode: the tool offered,
its call settled and answered in the history) and once as text under a response format (``native``).
Turns run in batches, each turn timed alone; batches of all sides alternate so drift hits them alike.
The report shows the median per turn, the p95, and the ratio to the untyped turn. A report, not a
test: it exits 0 whatever the numbers.

    python bench/typed_output.py                      # 10 batches x 300 turns, asyncio
    python bench/typed_output.py --backend trio
    python bench/typed_output.py --batches 3 --turns 50   # a quick smoke run
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: `python bench/typed_output.py`
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from pydantic import BaseModel  # noqa: E402

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, StructuredOutput  # noqa: E402
from agcore.testing import ScriptedProvider, text_reply, tool_call_reply  # noqa: E402


class Forecast(BaseModel):
    city: str
    celsius: float
    summary: str


ANSWER = {"city": "Paris", "celsius": 18.5, "summary": "cloudy"}
JSON = '{"city": "Paris", "celsius": 18.5, "summary": "cloudy"}'


SIDES: dict[str, tuple[Any, str, Any]] = {
    "untyped (text answer)": (text_reply(JSON), "scripted", None),
    "typed, tool mode": (tool_call_reply("final_result", ANSWER), "scripted", Forecast),
    "typed, native mode": (text_reply(JSON), "openai", StructuredOutput(Forecast, mode="native")),
}


async def _batch(side: str, turns: int) -> list[int]:
    reply, provider_name, output_type = SIDES[side]
    model = ScriptedProvider([reply] * turns, provider_name=provider_name)
    session = AgentSession(BasicAgent("bench", system_prompt="You forecast."), "bench",
                           AgentBuilder().provider(model).build())
    timings: list[int] = []
    for _ in range(turns):
        session.messages.clear()  # every turn starts from the same short history
        start = time.perf_counter_ns()
        result = await session.submit_turn("Weather in Paris?", output_type=output_type)
        timings.append(time.perf_counter_ns() - start)
        assert result.ok, result.error
    return timings


async def _run(batches: int, turns: int) -> dict[str, list[tuple[float, list[int]]]]:
    results: dict[str, list[tuple[float, list[int]]]] = {side: [] for side in SIDES}
    for side in SIDES:  # warm-up: schemas built, validators compiled
        await _batch(side, 20)
    for _ in range(batches):
        for side in SIDES:
            gc.collect()
            timings = await _batch(side, turns)
            results[side].append((statistics.median(timings), timings))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    results = anyio.run(_run, args.batches, args.turns, backend=args.backend)
    base = statistics.median(m for m, _ in results["untyped (text answer)"])
    print(f"typed final answers, {args.batches} batches x {args.turns} turns, {args.backend}")
    print(f"{'turn':<26}{'median us':>12}{'p95 us':>10}{'vs untyped':>12}")
    for side, rows in results.items():
        median = statistics.median(m for m, _ in rows)
        every = sorted(t for _, timings in rows for t in timings)
        p95 = every[int(len(every) * 0.95)]
        print(f"{side:<26}{median / 1000:>12.1f}{p95 / 1000:>10.1f}{median / base:>11.2f}x")


if __name__ == "__main__":
    main()
