"""Workers for ``bench/temporal_peers.py --kill``: the weather turn with a slow ``get_weather`` that
logs each run, for agcore, pydantic-ai's ``TemporalAgent`` and the OpenAI Agents SDK's Temporal
integration, so the bench can SIGKILL a worker mid-tool and count how often the tool ran. Runs only
in ``bench/.venv-temporal-peers`` (never an agcore dependency).

    python bench/peers/temporal_kill.py FRAMEWORK ADDRESS TASK_QUEUE   # agcore | pydantic-ai | openai-agents

The tool appends ``start`` to ``$AGCORE_BENCH_TOOL_LOG``, waits ``$AGCORE_BENCH_TOOL_HOLD`` seconds
(default 2), then appends ``done``. The fake vendor's URL comes from ``AGCORE_BENCH_BASE_URL``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: `python bench/peers/temporal_kill.py`
    sys.path.insert(0, str(ROOT))

READY = "worker ready"


async def slow_weather(city: str, unit: str) -> str:
    """The weather, slowly: each run logged (``start``, then ``done``)."""
    log = Path(os.environ["AGCORE_BENCH_TOOL_LOG"])
    _append(log, "start")
    await asyncio.sleep(float(os.environ.get("AGCORE_BENCH_TOOL_HOLD", "2")))
    _append(log, "done")
    return f"18 degrees {unit}, partly cloudy in {city}"


def _append(log: Path, line: str) -> None:
    with log.open("a") as out:  # a line, at once: the bench reads it while the worker runs
        out.write(line + "\n")


# ------------------------------------------------------------------------------------ agcore


def make_bundle() -> Any:
    """agcore's worker bundle: the fake vendor and the slow tool (not declared idempotent)."""
    from agcore.agent import AgentBuilder
    from agcore.llm.providers.openai import OpenAIProvider as AgcoreOpenAI
    from agcore.tools import tool
    from bench.agent_loop import MODEL

    @tool
    async def get_weather(city: str, unit: str = "celsius") -> str:
        """Current weather for a city."""
        return await slow_weather(city, unit)

    provider = AgcoreOpenAI(MODEL, base_url=os.environ["AGCORE_BENCH_BASE_URL"], api_key="x",
                            provider_name="openai")
    return AgentBuilder().provider(provider).tools(get_weather).build()


# ---------------------------------------------------------------------------------- workers


async def _serve(framework: str, address: str, queue: str) -> None:
    from temporalio.client import Client
    from temporalio.worker import Worker

    if framework == "agcore":
        from agcore.integrations.temporal import connect, create_worker

        worker = create_worker(await connect(address), make_bundle, task_queue=queue)
    elif framework == "pydantic-ai":
        from pydantic_ai.durable_exec.temporal import AgentPlugin, PydanticAIPlugin

        from bench.peers.temporal_kill_pydantic_ai import PydanticKillWorkflow, temporal_agent

        client = await Client.connect(address, plugins=[PydanticAIPlugin()])
        worker = Worker(client, task_queue=queue, workflows=[PydanticKillWorkflow],
                        plugins=[AgentPlugin(temporal_agent)])
    else:
        from agents import OpenAIProvider as AgentsProvider
        from openai import AsyncOpenAI
        from temporalio.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin

        from bench.peers.temporal_kill_openai_agents import OpenAIKillWorkflow, get_weather

        provider = AgentsProvider(openai_client=AsyncOpenAI(
            base_url=os.environ["AGCORE_BENCH_BASE_URL"], api_key="x", max_retries=0), use_responses=False)
        plugin = OpenAIAgentsPlugin(
            model_params=ModelActivityParameters(start_to_close_timeout=timedelta(seconds=60)),
            model_provider=provider,
        )
        client = await Client.connect(address, plugins=[plugin])
        worker = Worker(client, task_queue=queue, workflows=[OpenAIKillWorkflow],
                        activities=[get_weather])
    async with worker:
        print(READY, flush=True)
        await asyncio.Event().wait()


def main() -> None:
    framework, address, queue = sys.argv[1:4]
    asyncio.run(_serve(framework, address, queue))
    os._exit(0)  # the Temporal client's native threads can crash a normal interpreter shutdown


if __name__ == "__main__":
    main()
