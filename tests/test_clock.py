"""The clock/id seam: with a deterministic clock, the same scripted work gives byte-identical records.

A durable runtime replays the loop and must get the same ids and times back; it swaps agcore's clock
(``agcore.use_clock``) for its own. These tests swap in ``FixedClock`` and compare two whole runs:
messages, generated tool-call ids, a parallel batch, progress lines, a drafted and executed plan, and
the session record a SQLite store keeps.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

import agcore
from agcore import SystemClock, current_clock, use_clock
from agcore.agent import AgentBuilder, AgentConfig, AgentSession, BasicAgent, DefaultTaskAgent
from agcore.agent._messages import ToolLog
from agcore.memory import SqliteSessionStore
from agcore.testing import FixedClock, ScriptedProvider, tool_call_reply, tool_calls_reply
from agcore.tools import ToolContext, tool

pytestmark = pytest.mark.anyio

PLAN = json.dumps({"goal": "Check the weather twice", "steps": [
    {"id": "one", "description": "Weather in Paris"},
    {"id": "two", "description": "Weather in Rome", "depends_on": ["one"]},
]})


@tool
async def weather(city: str, ctx: ToolContext) -> str:
    """Current weather for a city."""
    await ctx.report_progress(f"asking about {city}")
    await anyio.lowlevel.checkpoint()
    return f"{city}: 18°C"


async def scripted_run(db: Path, *, parallel: bool = True) -> str:
    """A session: a turn with a parallel batch, a turn with one call, then a drafted plan; the JSON of
    everything it recorded and saved."""
    model = ScriptedProvider([
        tool_calls_reply([("weather", {"city": "Paris"}), ("weather", {"city": "Rome"})]),
        "Both are mild.",
        tool_call_reply("weather", {"city": "Oslo"}),  # the id is generated
        "Oslo too.",
        PLAN,
        tool_call_reply("weather", {"city": "Paris"}), "Paris: 18°C.",
        tool_call_reply("weather", {"city": "Rome"}), "Rome: 18°C.",
    ])
    config = AgentConfig(parallel_tool_calls=parallel)
    bundle = AgentBuilder().provider(model).tools(weather).config(config).build()
    store = SqliteSessionStore(db)
    session = AgentSession(BasicAgent(name="weather"), None, bundle, store=store)  # generated id
    await session.submit_turn("Weather in Paris and Rome?")
    await session.submit_turn("And Oslo?")
    planner = DefaultTaskAgent(name="planner")
    plan = await planner.run(session, "Check the weather twice")
    record = await store.load(session.session_id)
    assert record is not None
    return json.dumps({
        "messages": [m.model_dump(mode="json") for m in session.messages],
        "record": record.model_dump(mode="json"),
        "plan": plan.model_dump(mode="json"),
    }, sort_keys=True)


async def test_two_runs_under_a_fixed_clock_are_byte_identical(tmp_path: Path, anyio_backend: str) -> None:
    # trio shuffles the order of ready tasks on purpose, so how parallel tools interleave (and so the
    # order of their progress lines) differs from run to run there: its runs take the batch in turn.
    # asyncio, like Temporal's workflow event loop, runs ready tasks in a fixed order.
    parallel = anyio_backend == "asyncio"
    runs = []
    for name in ("first.db", "second.db"):
        with use_clock(FixedClock()):
            runs.append(await scripted_run(tmp_path / name, parallel=parallel))
    first, second = runs
    assert first == second
    data = json.loads(first)
    assert data["record"]["session_id"].startswith("id-")
    kinds = [m["kind"] for m in data["messages"]]
    assert kinds.count("tool_log") == 5  # progress went through the seam too
    assert data["plan"]["id"].startswith("id-")
    assert [s["status"] for s in data["plan"]["steps"]] == ["completed", "completed"]
    generated = [b["id"] for m in data["messages"] if m["kind"] == "assistant"
                 for b in m["message"]["content"] if b["type"] == "tool_use"]
    assert len(generated) == 5
    assert all(call_id.startswith("call_id-") for call_id in generated)


async def test_without_the_swap_the_runs_differ(tmp_path: Path) -> None:
    first = await scripted_run(tmp_path / "first.db")
    second = await scripted_run(tmp_path / "second.db")
    assert first != second  # random ids and real times: the test above could fail


async def test_the_clock_is_per_context_and_reaches_task_groups() -> None:
    seen: dict[str, str] = {}

    async def worker(name: str, clock: FixedClock) -> None:
        with use_clock(clock):
            await anyio.lowlevel.checkpoint()
            async with anyio.create_task_group() as group:
                for i in range(2):
                    group.start_soon(record, f"{name}{i}")
            assert current_clock() is clock

    async def record(key: str) -> None:
        await anyio.lowlevel.checkpoint()
        seen[key] = ToolLog(text="x").id

    async with anyio.create_task_group() as group:
        group.start_soon(worker, "a", FixedClock(prefix="a-"))
        group.start_soon(worker, "b", FixedClock(prefix="b-"))
    assert sorted(seen) == ["a0", "a1", "b0", "b1"]
    assert {seen["a0"], seen["a1"]} == {"a-000001", "a-000002"}
    assert {seen["b0"], seen["b1"]} == {"b-000001", "b-000002"}
    assert isinstance(current_clock(), SystemClock)


def test_the_seam_is_exported_from_the_top_package() -> None:
    assert agcore.use_clock is use_clock
    assert "Clock" in dir(agcore)
    clock = FixedClock(start=100.0, step=0.5)
    assert isinstance(clock, agcore.Clock)
    with use_clock(clock):
        assert ToolLog(text="x").created_at.timestamp() == 100.5
    assert isinstance(current_clock(), SystemClock)
