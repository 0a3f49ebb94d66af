"""What a sub-agent call costs: a parent turn that delegates to ``agent_tool`` against the same turn
calling a plain tool, and against running the child's turn as a session of its own.

All models are scripted (no network), so what is measured is agcore's own work: the child session
(its construction, the derived bundle, the loop, the cost roll-up, the nested events) on top of the
parent's tool call. Rows, each a median over batches of turns (batches alternate, so drift hits all
rows alike):

* ``plain tool``: parent turn = reply with one call to a trivial tool, then an answer (2 model calls);
* ``sub-agent``: the same, the tool being ``agent_tool(child)`` whose child answers at once (3 model
  calls in all);
* ``parent + child turns``: the baseline for the sub-agent row: the plain-tool parent turn plus one
  separate one-call turn of the child agent in a fresh session (the same 3 model calls, no linking).

The ratio ``sub-agent / (parent + child turns)`` is the price of the linking itself. It is a report,
not a test: it exits 0 whatever the numbers.

    python bench/subagents.py                   # 15 batches x 200 turns, asyncio
    python bench/subagents.py --backend trio --batches 5 --turns 50
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, agent_tool  # noqa: E402
from agcore.testing import ScriptedProvider, tool_call_reply  # noqa: E402
from agcore.tools import tool  # noqa: E402

PARENT = BasicAgent("lead", "You lead.")
CHILD = BasicAgent("child", "You help.", tools=[])


@tool
async def helper(task: str) -> str:
    """Does the task at once."""
    return "done"


def _model(turns: int, first: Callable[[], object]) -> ScriptedProvider:
    script: list[object] = []
    for _ in range(turns):
        script += [first(), "ok"]
    return ScriptedProvider(script)  # type: ignore[arg-type]


async def _plain(turns: int) -> None:
    model = _model(turns, lambda: tool_call_reply("helper", {"task": "t"}))
    bundle = AgentBuilder().provider(model).tools(helper).build()
    for i in range(turns):
        await AgentSession(PARENT, f"p{i}", bundle).submit_turn("go")


async def _delegated(turns: int) -> None:
    parent_model = _model(turns, lambda: tool_call_reply("helper", {"task": "t"}))
    child_bundle = AgentBuilder().provider(ScriptedProvider(["done"] * turns)).build()
    delegate = agent_tool(CHILD, child_bundle, name="helper")
    bundle = AgentBuilder().provider(parent_model).tools(delegate).build()
    for i in range(turns):
        await AgentSession(PARENT, f"p{i}", bundle).submit_turn("go")


async def _separate(turns: int) -> None:
    await _plain(turns)
    child_bundle = AgentBuilder().provider(ScriptedProvider(["done"] * turns)).build()
    for i in range(turns):
        await AgentSession(CHILD, f"c{i}", child_bundle).submit_turn("t")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--batches", type=int, default=15)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    rows: dict[str, Callable[[int], Awaitable[None]]] = {
        "plain tool": _plain, "sub-agent": _delegated, "parent + child turns": _separate,
    }
    per_turn: dict[str, list[float]] = {name: [] for name in rows}
    anyio.run(_plain, 20, backend=args.backend)  # warm-up: imports, pydantic schemas
    anyio.run(_delegated, 20, backend=args.backend)
    for _ in range(args.batches):
        for name, run in rows.items():
            gc.collect()
            started = time.perf_counter()
            anyio.run(run, args.turns, backend=args.backend)
            per_turn[name].append((time.perf_counter() - started) / args.turns * 1e6)
    medians = {name: statistics.median(values) for name, values in per_turn.items()}
    print(f"backend={args.backend} batches={args.batches} turns/batch={args.turns}")
    for name, value in medians.items():
        print(f"  {name:<22} {value:9.1f} us/turn")
    ratio = medians["sub-agent"] / medians["parent + child turns"]
    print(f"  sub-agent / (parent + child turns) = {ratio:.2f}x")
    print(f"  sub-agent / plain tool             = {medians['sub-agent'] / medians['plain tool']:.2f}x")


if __name__ == "__main__":
    main()
