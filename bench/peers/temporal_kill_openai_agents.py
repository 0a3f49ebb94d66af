"""The OpenAI Agents SDK's Temporal integration on the weather turn with the slow, logged tool of
``temporal_kill.py``, for ``bench/temporal_peers.py --kill`` (only in ``bench/.venv-temporal-peers``)."""

from __future__ import annotations

from datetime import timedelta

from agents import Agent, Runner
from temporalio import activity, workflow
from temporalio.openai_agents.workflow import activity_as_tool


@activity.defn
async def get_weather(city: str, unit: str = "celsius") -> str:
    """The current weather in a city."""
    from bench.peers.temporal_kill import slow_weather  # runs in the activity, not the workflow

    return await slow_weather(city, unit)


@workflow.defn
class OpenAIKillWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        agent = Agent(
            name="weather", instructions="You answer questions about the weather.", model="gpt-4.1",
            tools=[activity_as_tool(get_weather, start_to_close_timeout=timedelta(seconds=30))],
        )
        result = await Runner.run(agent, prompt)
        return str(result.final_output)
