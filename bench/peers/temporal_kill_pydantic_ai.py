"""pydantic-ai's ``TemporalAgent`` on the weather turn with the slow, logged tool of
``temporal_kill.py``, for ``bench/temporal_peers.py --kill`` (only in ``bench/.venv-temporal-peers``)."""

from __future__ import annotations

import os

from pydantic_ai import Agent
from pydantic_ai.durable_exec.temporal import TemporalAgent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from temporalio import workflow


async def get_weather(city: str, unit: str = "celsius") -> str:
    """The current weather in a city."""
    from bench.peers.temporal_kill import slow_weather  # runs in the tool's activity, not the workflow

    return await slow_weather(city, unit)


def _model() -> OpenAIChatModel:
    url = os.environ.get("AGCORE_BENCH_BASE_URL", "http://127.0.0.1:9/v1")
    return OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(base_url=url, api_key="x"))


temporal_agent = TemporalAgent(Agent(_model(), name="weather_kill", tools=[get_weather]))


@workflow.defn
class PydanticKillWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        result = await temporal_agent.run(prompt)
        return result.output
