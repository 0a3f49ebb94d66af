"""pydantic-ai's Temporal integration (``TemporalAgent``) on the weather turn, for
``bench/temporal_peers.py``: runs only in ``bench/.venv-temporal-peers`` (never an agcore dependency).
The fake vendor's URL comes from ``AGCORE_BENCH_BASE_URL``, read when the worker starts."""

from __future__ import annotations

import os

from pydantic_ai import Agent
from pydantic_ai.durable_exec.temporal import TemporalAgent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from temporalio import workflow


async def get_weather(city: str, unit: str = "celsius") -> str:
    """The current weather in a city."""
    return f"18 degrees {unit}, partly cloudy in {city}"


def _model() -> OpenAIChatModel:
    url = os.environ.get("AGCORE_BENCH_BASE_URL", "http://127.0.0.1:9/v1")
    return OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(base_url=url, api_key="x"))


agent = Agent(_model(), name="weather", tools=[get_weather])
temporal_agent = TemporalAgent(agent)


@workflow.defn
class WeatherWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        result = await temporal_agent.run(prompt)
        return result.output
