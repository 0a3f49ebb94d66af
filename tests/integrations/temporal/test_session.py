"""Durable sessions on a real Temporal dev server (asyncio only: Temporal's SDK is asyncio-only)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from agcore.agent import ToolResults
from agcore.integrations.temporal import AgentActivities, DurableSession, create_worker
from tests.integrations.temporal._agents import make_bundle

pytestmark = pytest.mark.anyio


@pytest.fixture
def task_queue() -> str:
    return f"tq-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def activities() -> AgentActivities:
    return AgentActivities(make_bundle)


@pytest.fixture
async def worker(client: Client, task_queue: str, activities: AgentActivities) -> AsyncIterator[Worker]:
    worker = create_worker(client, make_bundle, task_queue=task_queue, activities=activities)
    async with worker:
        yield worker


async def test_a_turn_with_a_tool_call_runs_as_activities(
    client: Client, task_queue: str, worker: Worker, activities: AgentActivities
) -> None:
    session = await DurableSession.start(client, f"s-{task_queue}", task_queue=task_queue)
    outcome = await session.turn('call echo {"text": "hi"}')
    assert outcome.stop == "done", outcome.error
    assert outcome.text == "done: echoed hi"
    assert outcome.turns == 2
    assert activities.calls["llm_call"] == 2
    assert activities.calls["tool:echo"] == 1
    second = await session.turn("hello again")
    assert second.text == "echo: hello again"
    history = await session.history()
    results = [m for m in history if isinstance(m, ToolResults)]
    assert [r.results[0].text for r in results] == ["echoed hi"]
    final = await session.close()
    assert final.record.turn_index == 2
