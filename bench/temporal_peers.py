"""One tool-call turn on Temporal, side by side: agcore (a durable session's turn, and a whole
workflow per turn), pydantic-ai's ``TemporalAgent`` and the OpenAI Agents SDK's Temporal
integration, on one dev server (agcore's ``DEV_SERVER_ARGS``) against the same loopback fake vendor
(the weather turn of ``agent_loop.py``: two model calls, one tool call), with in-process agcore as the
baseline of the same run. Rows rotate turn by turn so the machine's load falls on all alike.

The peers live only in their own venv, never in agcore's dependencies:

    python3 -m venv bench/.venv-temporal-peers
    bench/.venv-temporal-peers/bin/pip install -e '.[temporal]' -r bench/peers/temporal-requirements.txt
    bench/.venv-temporal-peers/bin/python bench/temporal_peers.py --turns 40

``--kill``: instead, one turn per framework whose worker is SIGKILLed while the tool runs
(``bench/peers/temporal_kill.py``: a slow ``get_weather`` that logs each run), a second worker
taking over: how many times the tool ran, and the seconds from the kill to the answer.

A report: it exits 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from bench.agent_loop import QUESTION  # noqa: E402
from bench.llm_overhead import start_server  # noqa: E402
from bench.temporal import BASE_URL_ENV, make_bundle  # noqa: E402

Turn = Callable[[], Awaitable[Any]]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _agcore_rows(address: str, stack: Any) -> dict[str, Turn]:
    from agcore.agent import AgentSession, BasicAgent
    from agcore.integrations.temporal import DurableSession, connect, create_worker

    client = await connect(address)
    queue = f"agcore-{uuid.uuid4().hex[:6]}"
    await stack.enter_async_context(create_worker(client, make_bundle, task_queue=queue))
    local = AgentSession(BasicAgent("agent"), None, make_bundle())
    session = await DurableSession.start(client, f"peers-{queue}", task_queue=queue)

    async def one_workflow() -> Any:
        single = await DurableSession.start(client, f"one-{uuid.uuid4().hex[:8]}", task_queue=queue)
        outcome = await single.turn(QUESTION)
        await single.close()
        return outcome

    return {
        "agcore in-process": lambda: local.submit_turn(QUESTION),
        "agcore, a session's turn": lambda: session.turn(QUESTION),
        "agcore, a workflow per turn": one_workflow,
    }


async def _pydantic_ai_row(address: str, stack: Any) -> Turn:
    from pydantic_ai.durable_exec.temporal import AgentPlugin, PydanticAIPlugin
    from temporalio.client import Client
    from temporalio.worker import Worker

    from bench.peers.temporal_pydantic_ai import WeatherWorkflow, temporal_agent

    client = await Client.connect(address, plugins=[PydanticAIPlugin()])
    queue = f"pydantic-ai-{uuid.uuid4().hex[:6]}"
    await stack.enter_async_context(
        Worker(client, task_queue=queue, workflows=[WeatherWorkflow], plugins=[AgentPlugin(temporal_agent)])
    )
    return lambda: client.execute_workflow(
        WeatherWorkflow.run, QUESTION, id=f"pyd-{uuid.uuid4().hex[:8]}", task_queue=queue
    )


async def _openai_agents_row(address: str, stack: Any, base_url: str) -> Turn:
    from datetime import timedelta

    from agents import OpenAIProvider
    from openai import AsyncOpenAI
    from temporalio.client import Client
    from temporalio.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin
    from temporalio.worker import Worker

    from bench.peers.temporal_openai_agents import WeatherWorkflow, get_weather

    provider = OpenAIProvider(openai_client=AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0),
                              use_responses=False)
    plugin = OpenAIAgentsPlugin(
        model_params=ModelActivityParameters(start_to_close_timeout=timedelta(seconds=60)),
        model_provider=provider,
    )
    client = await Client.connect(address, plugins=[plugin])
    queue = f"openai-agents-{uuid.uuid4().hex[:6]}"
    await stack.enter_async_context(
        Worker(client, task_queue=queue, workflows=[WeatherWorkflow], activities=[get_weather])
    )
    return lambda: client.execute_workflow(
        WeatherWorkflow.run, QUESTION, id=f"oai-{uuid.uuid4().hex[:8]}", task_queue=queue
    )


async def run(turns: int) -> str:
    from contextlib import AsyncExitStack

    from temporalio.testing import WorkflowEnvironment

    from agcore.integrations.temporal import DEV_SERVER_ARGS, temporal_binary

    server, port = start_server()
    base_url = f"http://127.0.0.1:{port}/v1"
    os.environ[BASE_URL_ENV] = base_url
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        dev_server_extra_args=["--log-level", "error", *DEV_SERVER_ARGS],
    )
    address = env.client.service_client.config.target_host
    skipped: list[str] = []
    try:
        async with AsyncExitStack() as stack:
            rows = await _agcore_rows(address, stack)
            peers: list[tuple[str, Callable[[], Awaitable[Turn]]]] = [
                ("pydantic-ai TemporalAgent", lambda: _pydantic_ai_row(address, stack)),
                ("OpenAI Agents + Temporal", lambda: _openai_agents_row(address, stack, base_url)),
            ]
            for name, make in peers:
                try:
                    rows[name] = await make()
                except Exception as exc:  # a peer that cannot run is reported, not fatal
                    skipped.append(f"{name}: {type(exc).__name__}: {exc}")
            times: dict[str, list[float]] = {name: [] for name in rows}
            for turn in rows.values():  # warm up: connections, caches, the first workflow task
                await turn()
            for _ in range(turns):
                for name, turn in rows.items():
                    started = time.perf_counter()
                    await turn()
                    times[name].append(time.perf_counter() - started)
    finally:
        await env.shutdown()
        server.terminate()
        server.wait()
    base = _percentile(times["agcore in-process"], 0.5)
    lines = [f"one tool-call turn on Temporal (2 model calls + 1 tool), {turns} turns per row, rotated",
             f"  {'row':32} {'p50 ms':>9} {'p99 ms':>9} {'over in-process':>16}"]
    for name, measured in times.items():
        p50, p99 = _percentile(measured, 0.5), _percentile(measured, 0.99)
        lines.append(f"  {name:32} {p50 * 1000:9.1f} {p99 * 1000:9.1f} {(p50 - base) * 1000:+15.1f}")
    lines += [f"  skipped {s}" for s in skipped]
    return "\n".join(lines)


KILL_FRAMEWORKS = ("agcore", "pydantic-ai", "openai-agents")
_KILL_WORKFLOWS = {"pydantic-ai": "PydanticKillWorkflow", "openai-agents": "OpenAIKillWorkflow"}


async def _kill_worker(framework: str, address: str, queue: str, env: dict[str, str]) -> Any:
    process = await anyio.open_process(
        [sys.executable, str(ROOT / "bench" / "peers" / "temporal_kill.py"), framework, address, queue],
        cwd=ROOT, env=env, stderr=None,
    )
    assert process.stdout is not None
    said = b""
    async for chunk in process.stdout:
        said += chunk
        if b"worker ready" in said:
            return process
    raise RuntimeError(f"the {framework} worker ended before it was ready: {said!r}")


async def _start_turn(framework: str, address: str, queue: str) -> Callable[[], Awaitable[str]]:
    from temporalio.client import Client

    if framework == "agcore":
        from agcore.integrations.temporal import DurableSession, connect

        session = await DurableSession.start(await connect(address), f"kill-{queue}", task_queue=queue)
        handle = await session.start_turn(QUESTION)

        async def answer() -> str:
            return (await handle.result()).text

        return answer
    client = await Client.connect(address)
    started = await client.start_workflow(_KILL_WORKFLOWS[framework], QUESTION, id=f"kill-{queue}",
                                          task_queue=queue, result_type=str)

    async def result() -> str:
        return await started.result()

    return result


async def kill_row(framework: str, address: str, base_url: str, log: Path) -> str:
    """One tool-call turn whose worker is SIGKILLed while the tool runs; a second worker finishes it.
    How many times the tool started and finished, and the seconds from the kill to the answer."""
    queue = f"kill-{framework}-{uuid.uuid4().hex[:6]}"
    env = {**os.environ, "AGCORE_BENCH_TOOL_LOG": str(log), BASE_URL_ENV: base_url, "PYTHONPATH": str(ROOT)}
    first = await _kill_worker(framework, address, queue, env)
    answer = await _start_turn(framework, address, queue)
    said = anyio.Path(log)
    with anyio.fail_after(60):
        while not await said.exists() or "start" not in await said.read_text():  # noqa: ASYNC110 - the tool's log
            await anyio.sleep(0.02)
    first.kill()
    await first.wait()
    killed = time.perf_counter()
    second = await _kill_worker(framework, address, queue, env)
    try:
        with anyio.fail_after(300):
            text = await answer()
    finally:
        second.terminate()
        await second.wait()
    lines = (await said.read_text()).split()
    return (f"  {framework:16} {lines.count('start'):>10} {lines.count('done'):>10} "
            f"{time.perf_counter() - killed:>10.1f}   {' '.join(text.split())[:60]!r}")


async def run_kill(frameworks: tuple[str, ...] = KILL_FRAMEWORKS) -> str:
    """The worker-kill table: each framework's turn, its worker SIGKILLed mid-tool."""
    import tempfile

    from temporalio.testing import WorkflowEnvironment

    from agcore.integrations.temporal import DEV_SERVER_ARGS, temporal_binary

    server, port = start_server()
    base_url = f"http://127.0.0.1:{port}/v1"
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        dev_server_extra_args=["--log-level", "error", *DEV_SERVER_ARGS],
    )
    address = env.client.service_client.config.target_host
    lines = ["a tool-call turn whose worker is SIGKILLed while the tool runs (a second worker takes over)",
             f"  {'framework':16} {'tool runs':>10} {'finished':>10} {'kill->s':>10}   answer"]
    try:
        with tempfile.TemporaryDirectory() as directory:
            for framework in frameworks:
                try:
                    lines.append(await kill_row(framework, address, base_url, Path(directory) / framework))
                except Exception as exc:  # a framework that cannot run is reported, not fatal
                    lines.append(f"  {framework:16} failed: {type(exc).__name__}: {exc}")
                print(lines[-1], flush=True)  # each row as it comes
    finally:
        await env.shutdown()
        server.terminate()
        server.wait()
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--kill", nargs="*", choices=KILL_FRAMEWORKS, default=None,
                        help="the worker-kill table instead (every framework, or those named): does each "
                        "framework run the tool again?")
    args = parser.parse_args(argv)
    if args.kill is not None:
        print(anyio.run(run_kill, tuple(args.kill or KILL_FRAMEWORKS)), flush=True)
    else:
        print(anyio.run(run, args.turns), flush=True)
    os._exit(0)  # the Temporal client's native threads can crash a normal interpreter shutdown


if __name__ == "__main__":
    raise SystemExit(main())
