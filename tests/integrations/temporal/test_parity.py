"""What a durable session does as an in-process one does (real dev server, real worker): a tool's
progress lines are recorded in the session as ``ToolLog`` messages, once, even when every workflow
task replays; a turn with an ``output_type`` answers with that type.

Temporal's SDK is asyncio-only: these tests run on asyncio only (see conftest.py).
"""

from __future__ import annotations

import uuid

import pytest
from pydantic import BaseModel
from temporalio.client import Client, WorkflowUpdateFailedError

from agcore.agent import AgentMessage, AssistantReply, ToolLog, ToolResults, UserInput
from agcore.integrations.temporal import DurableSession, create_worker
from agcore.integrations.temporal._types import TurnInput
from tests.integrations.temporal._agents import Ticket, make_bundle
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


async def test_a_typed_turn_answers_with_the_output_type(client: Client) -> None:
    queue = f"par-{uuid.uuid4().hex[:8]}"
    async with create_worker(client, make_bundle, task_queue=queue):
        session = await DurableSession.start(client, f"s-{queue}", task_queue=queue)
        outcome = await session.turn("ticket printer is on fire 1", output_type=Ticket)
        assert outcome.stop == "done", outcome.error
        assert outcome.output == Ticket(title="printer is on fire", priority=1)
        untyped = await session.turn("hello")  # the next turn is plain again
        assert untyped.text == "echo: hello"
        assert untyped.output is None
        await session.close()
    await replay_task_queue(client, queue)


async def test_a_typed_turn_refuses_a_type_no_worker_can_import(client: Client) -> None:
    class Local(BaseModel):
        title: str

    queue = f"par-{uuid.uuid4().hex[:8]}"
    async with create_worker(client, make_bundle, task_queue=queue):
        session = await DurableSession.start(client, f"s-{queue}", task_queue=queue)
        with pytest.raises(ValueError, match="defined at a module's top level"):
            await session.turn("ticket x 1", output_type=Local)
        with pytest.raises(WorkflowUpdateFailedError) as failed:  # importable here, not on the worker
            await session.handle.execute_update(
                "turn", TurnInput(text="ticket x 1", output_type="no_such_module:Ticket")
            )
        assert "cannot be imported by the worker" in str(failed.value.cause)
        assert (await session.turn("still here")).text == "echo: still here"  # the session goes on
        await session.close()
