"""What ``ToolRegistry.execute()`` costs per call, compared with calling the tool function directly.

The tool is trivial (``async def add(a: int, b: int) -> int``), so what is measured is agcore's own
dispatch: the lookup, argument validation, the call, output conversion and building the
``ToolResultBlock``. The baseline is ``await add(1, 2)`` on the bare function.

Calls run in batches; each call is timed alone (``time.perf_counter_ns``), each batch gives a median,
and the report shows the median of the batch medians, the p95 over all calls, and the ratio to the
baseline. Batches of the two sides alternate, so drift hits both alike. Extra rows show variants: a
tool that takes a ``ToolContext``, a per-tool timeout (one cancel scope per call), and a sync tool
(one worker-thread hop per call). It is a report, not a test: it exits 0 whatever the numbers.

    python bench/tool_dispatch.py                     # 20 batches x 1000 calls, asyncio
    python bench/tool_dispatch.py --backend trio
    python bench/tool_dispatch.py --batches 5 --calls 200   # a quick smoke run
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: `python bench/tool_dispatch.py`
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from agcore.llm import ToolUseBlock  # noqa: E402
from agcore.tools import ToolContext, ToolRegistry, tool  # noqa: E402

TARGET_US = 50.0


async def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


async def add_with_context(a: int, b: int, ctx: ToolContext) -> int:
    """Add two integers (and take the call's context)."""
    return a + b


def add_sync(a: int, b: int) -> int:
    """Add two integers, in a worker thread."""
    return a + b


@dataclass
class Row:
    label: str
    batch_medians_us: list[float]
    all_us: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.batch_medians_us)

    @property
    def p95(self) -> float:
        ordered = sorted(self.all_us)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


async def timed_batch(make_call: Callable[[], Awaitable[Any]], calls: int) -> list[float]:
    samples: list[float] = []
    clock = time.perf_counter_ns
    gc.collect()
    for _ in range(calls):
        start = clock()
        await make_call()
        samples.append((clock() - start) / 1000)
    return samples


async def measure(
    sides: dict[str, Callable[[], Awaitable[Any]]], batches: int, calls: int, warmup: int
) -> list[Row]:
    rows = {label: Row(label, [], []) for label in sides}
    for make_call in sides.values():
        await timed_batch(make_call, warmup)
    for _ in range(batches):
        for label, make_call in sides.items():  # alternate sides batch by batch
            samples = await timed_batch(make_call, calls)
            rows[label].batch_medians_us.append(statistics.median(samples))
            rows[label].all_us.extend(samples)
    return list(rows.values())


async def run(args: argparse.Namespace) -> str:
    registry = ToolRegistry(
        [
            tool(add),
            tool(add_with_context),
            tool(name="add_timeout", timeout=30)(add),
            tool(add_sync),
        ]
    )
    ctx = ToolContext(session_id="bench")
    calls = {
        name: ToolUseBlock(id=f"call_{name}", name=name, input={"a": 1, "b": 2})
        for name in ("add", "add_with_context", "add_timeout", "add_sync")
    }
    for name, call in calls.items():  # a bench of a broken path would measure the wrong thing
        result = await registry.execute(call, ctx)
        if result.is_error or result.content != "3":
            raise SystemExit(f"{name}: unexpected result {result!r}")

    execute = registry.execute
    main = await measure(
        {
            "direct call: await add(1, 2)": lambda: add(1, 2),
            "registry.execute(add)": lambda: execute(calls["add"], ctx),
        },
        args.batches,
        args.calls,
        args.warmup,
    )
    variant_calls = max(50, args.calls // 4)
    variants = await measure(
        {
            "execute, tool takes ToolContext": lambda: execute(calls["add_with_context"], ctx),
            "execute, timeout=30 (cancel scope)": lambda: execute(calls["add_timeout"], ctx),
            "execute, sync tool (worker thread)": lambda: execute(calls["add_sync"], ctx),
        },
        max(3, args.batches // 4),
        variant_calls,
        min(args.warmup, variant_calls),
    )
    baseline = main[0].median
    lines = [
        f"backend {args.backend}, Python {sys.version.split()[0]}; {args.batches} batches x {args.calls} "
        f"calls (variants: {max(3, args.batches // 4)} x {variant_calls})",
        "",
        f"{'what':38} {'median µs':>10} {'p95 µs':>9} {'x direct':>9}",
    ]
    for row in [*main, *variants]:
        lines.append(f"{row.label:38} {row.median:10.2f} {row.p95:9.2f} {row.median / baseline:9.1f}")
    overhead = main[1].median
    verdict = "within" if overhead < TARGET_US else "ABOVE"
    lines += ["", f"execute() median {overhead:.2f} µs per call: {verdict} the {TARGET_US:.0f} µs target."]
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--batches", type=int, default=20, help="timed batches per side (default 20)")
    parser.add_argument("--calls", type=int, default=1000, help="calls per batch (default 1000)")
    parser.add_argument("--warmup", type=int, default=1000, help="untimed calls per side first")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(anyio.run(run, args, backend=args.backend))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
