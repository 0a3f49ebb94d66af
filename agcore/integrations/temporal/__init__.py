"""Durable, distributed execution on Temporal: sessions and plans as workflows, model and tool calls
as activities, so a worker killed at any point loses no completed work.

Needs the ``temporal`` extra (``pip install 'agcore[temporal]'``). The agcore loop runs unchanged
inside the workflow; the bundle's provider, tool registry and hooks are replaced by ones that schedule
activities (see ``docs/temporal.md``)::

    from agcore.integrations.temporal import DurableSession, connect, create_worker

    client = await connect("localhost:7233")
    async with create_worker(client, make_bundle, task_queue="agents"):
        session = await DurableSession.start(client, "support-42", task_queue="agents")
        outcome = await session.turn("Summarise README.md")

Temporal's SDK is asyncio-only: workers and clients run on asyncio, not trio.
"""

from __future__ import annotations

try:
    import temporalio as _temporalio  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "agcore.integrations.temporal needs the Temporal SDK: install it with "
        "`pip install 'agcore[temporal]'`"
    ) from exc

from agcore.integrations.temporal._activities import AgentActivities, BundleFactory
from agcore.integrations.temporal._client import (
    DurableSession,
    SessionClosedError,
    assemble_text,
    start_plan,
    text_chunks,
    text_offset,
)
from agcore.integrations.temporal._clock import RecordingClock, WorkflowClock
from agcore.integrations.temporal._dev_server import DEV_SERVER_ARGS, dev_server_command, temporal_binary
from agcore.integrations.temporal._plan_workflow import PlanWorkflow
from agcore.integrations.temporal._session_workflow import AgentSessionWorkflow
from agcore.integrations.temporal._snapshot_budget import OMITTED_KEY, carried_messages
from agcore.integrations.temporal._status import (
    MEMO_KEY,
    STALLED_AFTER,
    PendingCall,
    Poller,
    StepProgress,
    WorkflowProgress,
    WorkflowStatus,
    task_queue_pollers,
    workers_polling,
    workflow_status,
)
from agcore.integrations.temporal._storage import FileStorageDriver
from agcore.integrations.temporal._types import (
    MAX_SNAPSHOT_BYTES,
    ActivityOptions,
    AgentSpec,
    CompactionOptions,
    ConfirmationInput,
    PlanInput,
    SessionInput,
    SessionSnapshot,
    TextChunk,
    ToolSpec,
    TurnOutcome,
)
from agcore.integrations.temporal._worker import (
    DATA_CONVERTER,
    DEFAULT_TASK_QUEUE,
    WORKFLOWS,
    connect,
    create_replayer,
    create_worker,
    data_converter,
    workflow_runner,
)
from agcore.integrations.temporal._workflow_parts import (
    ActivityProvider,
    ActivityToolRegistry,
    ReplaySafeHookExecutor,
)

__all__ = [
    "DATA_CONVERTER",
    "DEFAULT_TASK_QUEUE",
    "MAX_SNAPSHOT_BYTES",
    "OMITTED_KEY",
    "carried_messages",
    "DEV_SERVER_ARGS",
    "MEMO_KEY",
    "WORKFLOWS",
    "ActivityOptions",
    "ActivityProvider",
    "ActivityToolRegistry",
    "AgentActivities",
    "AgentSessionWorkflow",
    "AgentSpec",
    "BundleFactory",
    "CompactionOptions",
    "ConfirmationInput",
    "PendingCall",
    "Poller",
    "STALLED_AFTER",
    "StepProgress",
    "WorkflowProgress",
    "WorkflowStatus",
    "task_queue_pollers",
    "workers_polling",
    "workflow_status",
    "DurableSession",
    "FileStorageDriver",
    "PlanInput",
    "PlanWorkflow",
    "RecordingClock",
    "ReplaySafeHookExecutor",
    "SessionClosedError",
    "SessionInput",
    "SessionSnapshot",
    "TextChunk",
    "ToolSpec",
    "TurnOutcome",
    "WorkflowClock",
    "assemble_text",
    "connect",
    "create_replayer",
    "create_worker",
    "data_converter",
    "dev_server_command",
    "start_plan",
    "temporal_binary",
    "text_chunks",
    "text_offset",
    "workflow_runner",
]
