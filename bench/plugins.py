"""What the built-in plugins add to a turn: CPU per tool-call turn with no plugin, then with each one.

A turn is ``submit_turn`` on a ``ScriptedProvider`` (no network): one model reply calling a trivial
tool, the tool, and a text answer, so the numbers are agcore's own work plus the plugin's. Sides are
interleaved turn by turn in a random order, each round gives a median per side, and the report shows
the median over rounds and the difference to the bare side. It is a report, not a test.

    python bench/plugins.py                    # 7 rounds x 200 turns per side
    python bench/plugins.py --rounds 2 --turns 30   # a quick smoke run
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: `python bench/plugins.py`
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from agcore.agent import AgentBuilder, AgentSession, BasicAgent  # noqa: E402
from agcore.plugins import AuditLogPlugin, LoggingPlugin  # noqa: E402
from agcore.testing import ScriptedProvider, tool_call_reply  # noqa: E402
from agcore.tools import tool  # noqa: E402


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _otel(exporting: bool) -> Any:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agcore.integrations.otel import OpenTelemetryPlugin

    provider = TracerProvider()
    if exporting:
        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    return OpenTelemetryPlugin(provider)


def sides(logs: Path) -> dict[str, Callable[[], list[Any]]]:
    quiet = logging.getLogger("bench.quiet")
    quiet.disabled = True
    shown = logging.getLogger("bench.shown")
    shown.addHandler(logging.NullHandler())
    shown.propagate = False
    shown.setLevel(logging.INFO)
    return {
        "no plugin": lambda: [],
        "AuditLogPlugin": lambda: [AuditLogPlugin(logs)],
        "LoggingPlugin (level off)": lambda: [LoggingPlugin(quiet)],
        "LoggingPlugin (NullHandler)": lambda: [LoggingPlugin(shown)],
        "OpenTelemetry (no processor)": lambda: [_otel(False)],
        "OpenTelemetry (in-memory export)": lambda: [_otel(True)],
    }


class Side:
    def __init__(self, plugins: list[Any]) -> None:
        self.model = ScriptedProvider([])
        bundle = AgentBuilder().provider(self.model).tools(add).plugins(*plugins).build()
        self.session = AgentSession(BasicAgent(name="bench"), None, bundle)

    async def turn(self) -> int:
        self.model.add(tool_call_reply("add", {"a": 1, "b": 2}))
        self.model.add("3")
        started = time.process_time_ns()
        await self.session.submit_turn("1+2")
        spent = time.process_time_ns() - started
        self.session.messages.clear()  # keep every turn the same size
        return spent


async def run(args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        built = {name: Side(make()) for name, make in sides(Path(tmp)).items()}
        for side in built.values():  # warm-up: build the models, open the files, fill caches
            for _ in range(20):
                await side.turn()
        per_round: dict[str, list[float]] = {name: [] for name in built}
        for _ in range(args.rounds):
            samples: dict[str, list[int]] = {name: [] for name in built}
            order = [name for name in built for _ in range(args.turns)]
            random.shuffle(order)
            for name in order:
                samples[name].append(await built[name].turn())
            for name, values in samples.items():
                per_round[name].append(statistics.median(values) / 1000)
    base = statistics.median(per_round["no plugin"])
    lines = [
        "CPU per tool-call turn (ScriptedProvider, one trivial tool), "
        f"{args.rounds} rounds x {args.turns} turns per side, interleaved; median over rounds",
        "",
        f"{'side':<34} {'CPU µs/turn':>12} {'+ µs':>8} {'ratio':>7}",
        "-" * 64,
    ]
    for name, values in per_round.items():
        median = statistics.median(values)
        lines.append(f"{name:<34} {median:>12.0f} {median - base:>+8.0f} {median / base:>7.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args(argv)
    print(anyio.run(run, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
