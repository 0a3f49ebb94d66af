"""What a durable session does as an in-process one does (real dev server, real worker): a tool's
progress lines are recorded in the session as ``ToolLog`` messages, once, even when every workflow
task replays; a turn with an ``output_type`` answers with that type; the logging and OpenTelemetry
plugins, as workflow observers, log and trace what they would in-process, once.

Temporal's SDK is asyncio-only: these tests run on asyncio only (see conftest.py).
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable

import pytest
from pydantic import BaseModel
from temporalio.client import Client, WorkflowUpdateFailedError

from agcore.agent import (
    AgentMessage,
    AgentSession,
    AssistantReply,
    BasicAgent,
    ToolLog,
    ToolResults,
    UserInput,
)
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


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.events.append(getattr(record, "agcore_event", "?"))


async def _observed_in_process(plugins: list[object]) -> None:
    bundle = make_bundle()
    for plugin in plugins:
        bundle.hook_executor().register(plugin)
    session = AgentSession(BasicAgent("agent"), None, bundle)
    for word in ("one", "two"):
        assert (await session.submit_turn(f'call echo {{"text": "{word}"}}')).text == f"done: echoed {word}"


@pytest.mark.parametrize("cached", [True, False], ids=["cached", "replaying"])
async def test_logging_and_opentelemetry_observe_a_durable_session_as_an_in_process_one(
    client: Client, cached: bool
) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agcore.integrations.otel import OpenTelemetryPlugin
    from agcore.plugins import LoggingPlugin

    def observers(name: str) -> tuple[_Records, InMemorySpanExporter, Callable[[], list[object]]]:
        records, exporter = _Records(), InMemorySpanExporter()
        logger = logging.getLogger(f"agcore.test.{name}.{uuid.uuid4().hex[:6]}")
        logger.setLevel(logging.DEBUG)
        logger.addHandler(records)
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        # Fresh plugins each time, as a worker's factory makes them (one set per workflow instance).
        return records, exporter, lambda: [LoggingPlugin(logger), OpenTelemetryPlugin(provider)]

    local_records, local_spans, local_plugins = observers("local")
    await _observed_in_process(local_plugins())
    durable_records, durable_spans, durable_plugins = observers("durable")
    queue = f"par-{uuid.uuid4().hex[:8]}"
    options = {} if cached else {"max_cached_workflows": 0}
    async with create_worker(client, make_bundle, task_queue=queue,
                             workflow_observers=durable_plugins, **options):
        session = await DurableSession.start(client, f"s-{queue}", task_queue=queue)
        for word in ("one", "two"):
            assert (await session.turn(f'call echo {{"text": "{word}"}}')).text == f"done: echoed {word}"
        await session.close()
    # The same log lines and the same ended spans as in-process: once each, none left open.
    assert Counter(durable_records.events) == Counter(local_records.events)
    names = Counter(span.name for span in durable_spans.get_finished_spans())
    assert names == Counter(span.name for span in local_spans.get_finished_spans())
    assert sum(names.values()) >= 8
