"""One tool-call turn on Temporal, side by side: agcore (a durable session's turn, and a whole
workflow per turn), pydantic-ai's ``TemporalAgent`` and the OpenAI Agents SDK's Temporal
integration, on one dev server (agcore's ``DEV_SERVER_ARGS``) against the same loopback fake vendor
(the weather turn of ``agent_loop.py``: two model calls, one tool call), with in-process agcore as the
baseline of the same run. Rows rotate turn by turn so the machine's load falls on all alike.

The peers live only in their own venv, never in agcore's dependencies:

    python3 -m venv bench/.venv-temporal-peers
    bench/.venv-temporal-peers/bin/pip install -e '.[temporal]' -r bench/peers/temporal-requirements.txt
    bench/.venv-temporal-peers/bin/python bench/temporal_peers.py --turns 40

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args(argv)
    print(anyio.run(run, args.turns), flush=True)
    os._exit(0)  # the Temporal client's native threads can crash a normal interpreter shutdown


if __name__ == "__main__":
    raise SystemExit(main())
