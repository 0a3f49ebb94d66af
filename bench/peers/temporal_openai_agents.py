"""The OpenAI Agents SDK's Temporal integration (``temporalio-openai-agents``) on the weather turn,
for ``bench/temporal_peers.py``: runs only in ``bench/.venv-temporal-peers`` (never an agcore
dependency). The model provider (the fake vendor, Chat Completions) is the worker plugin's."""

from __future__ import annotations

from datetime import timedelta

from agents import Agent, Runner
from temporalio import activity, workflow
from temporalio.openai_agents.workflow import activity_as_tool


@activity.defn
async def get_weather(city: str, unit: str = "celsius") -> str:
    """The current weather in a city."""
    return f"18 degrees {unit}, partly cloudy in {city}"


@workflow.defn
class WeatherWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        agent = Agent(
            name="weather", instructions="You answer questions about the weather.", model="gpt-4.1",
            tools=[activity_as_tool(get_weather, start_to_close_timeout=timedelta(seconds=30))],
        )
        result = await Runner.run(agent, prompt)
        return str(result.final_output)
