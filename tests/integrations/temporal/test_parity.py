"""What a durable session keeps as an in-process one does (real dev server, real worker): a tool's
progress lines are recorded in the session as ``ToolLog`` messages, once, even when every workflow
task replays.

Temporal's SDK is asyncio-only: these tests run on asyncio only (see conftest.py).
"""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client

from agcore.agent import AgentMessage, AssistantReply, ToolLog, ToolResults, UserInput
from agcore.integrations.temporal import DurableSession, create_worker
from tests.integrations.temporal._agents import make_bundle
from tests.integrations.temporal.conftest import replay_task_queue

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("cached", [True, False], ids=["cached", "replaying"])
async def test_tool_progress_is_recorded_in_the_durable_session(client: Client, cached: bool) -> None:
    queue = f"par-{uuid.uuid4().hex[:8]}"
    options = {} if cached else {"max_cached_workflows": 0}
    async with create_worker(client, make_bundle, task_queue=queue, **options):
        session = await DurableSession.start(client, f"s-{queue}", task_queue=queue)
        outcome = await session.turn('call chatty {"lines": 3}')
        assert outcome.text == "done: said 3 lines"
        history: list[AgentMessage] = await session.history()
        final = await session.close()
    kinds = [type(m) for m in history]
    assert kinds == [UserInput, AssistantReply, ToolLog, ToolLog, ToolLog, ToolResults, AssistantReply]
    logs = [m for m in history if isinstance(m, ToolLog)]
    assert [(m.text, m.tool_name, m.fraction) for m in logs] == [
        ("line 0", "chatty", pytest.approx(1 / 3)), ("line 1", "chatty", pytest.approx(2 / 3)),
        ("line 2", "chatty", 1.0),
    ]
    call = history[1]
    assert isinstance(call, AssistantReply)
    assert all(m.tool_use_id == call.tool_calls[0].id for m in logs)
    assert len(final.messages) == 7  # the snapshot keeps them too
    await replay_task_queue(client, queue)
