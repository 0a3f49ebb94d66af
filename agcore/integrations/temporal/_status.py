"""A workflow's state read from Temporal itself, with no worker: what the session and plan workflows
publish in their memo (``publish_status``, in the workflow), the workflow's own description, and
whether any worker polls its task queue (``workflow_status``, on the client).

A query needs a live worker (it runs workflow code); a memo and a description are the server's, so
``agcore plan status`` and ``agcore session status`` answer when every worker is down, which is
exactly when people run them.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from temporalio import workflow
from temporalio.api.enums.v1 import PendingActivityState, PendingWorkflowTaskState, TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflow.v1 import PendingActivityInfo
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError

from agcore._clock import now_datetime
from agcore.agent import Plan, StepStatus

__all__ = [
    "HEARTBEAT_THROTTLE",
    "MEMO_KEY",
    "STALLED_AFTER",
    "PendingCall",
    "Poller",
    "RunState",
    "StepProgress",
    "WorkflowProgress",
    "WorkflowStatus",
    "plan_progress",
    "publish_status",
    "status_memo",
    "task_queue_pollers",
    "workers_polling",
    "workflow_status",
]

#: The memo key the workflows publish their progress under.
MEMO_KEY = "agcore"
#: Workflows whose history has no status marker (started before it existed) publish nothing.
_PATCH = "agcore.status-memo"
#: A worker long-polls about once a minute: one not seen for this long is gone. One seen more
#: recently may be gone too (Temporal keeps a killed worker's last poll for as long): a task left
#: waiting is what tells.
_POLLER_SEEN_WITHIN = timedelta(seconds=75)
#: Seconds a workflow task or activity may wait to be picked up before its workflow counts as waiting
#: for a worker, whatever the pollers say (a live worker picks a task up within milliseconds; a
#: killed one's session moves to another worker after the 3 s sticky timeout).
STALLED_AFTER = 5.0

RunState = Literal[
    "running", "idle", "waiting for a worker", "waiting for approval", "waiting for client tools",
    "done", "failed", "cancelled",
]


class StepProgress(BaseModel):
    """A plan step as its workflow last published it."""

    model_config = ConfigDict(extra="ignore")

    id: str
    description: str = ""
    status: str = "pending"
    error: str | None = None


class WorkflowProgress(BaseModel):
    """What a session or plan workflow publishes in its memo as it goes."""

    model_config = ConfigDict(extra="ignore")

    kind: Literal["session", "plan"] = "session"
    #: busy: a turn (or plan step) is running; approval: calls wait for the user's confirmation.
    activity: Literal["starting", "idle", "busy", "approval", "client_tools"] = "starting"
    awaiting: list[str] = Field(default_factory=list)
    turns: int = 0
    generation: int = 0
    last_stop: str | None = None
    last_error: str | None = None
    goal: str = ""
    steps: list[StepProgress] = Field(default_factory=list)


def status_memo(progress: WorkflowProgress) -> dict[str, Any]:
    """``progress`` as a workflow memo (what a client starting a workflow passes as ``memo=``)."""
    return {MEMO_KEY: progress.model_dump(mode="json", exclude_defaults=True)}


def publish_status(progress: WorkflowProgress) -> None:
    """Publish ``progress`` in the running workflow's memo (one history event; nothing while a
    history from before the status memo replays)."""
    if workflow.patched(_PATCH):
        workflow.upsert_memo(status_memo(progress))


def plan_progress(plan: Plan, *, generation: int = 0) -> WorkflowProgress:
    """A plan's progress: each step's id, status and error (short: a memo travels with every
    describe and list call; the results stay in the plan's result)."""
    running = any(step.status == StepStatus.RUNNING for step in plan.steps)
    return WorkflowProgress(
        kind="plan", activity="busy" if running else "idle", goal=plan.goal[:200], generation=generation,
        steps=[StepProgress(
            id=step.id, description=step.description[:120], status=step.status.value,
            error=step.error.message[:300] if step.error is not None else None,
        ) for step in plan.steps],
    )


#: Temporal's SDK sends a running activity's heartbeats to the server at most once per this share of
#: its heartbeat timeout (8 s of a tool's 10 s), however often the activity heartbeats: a healthy
#: worker's call can show that long since its last heartbeat.
HEARTBEAT_THROTTLE = 0.8
#: Slack on top of the throttled interval before a heartbeat counts as overdue (the RPC's own time).
_HEARTBEAT_SLACK = 1.0


class PendingCall(BaseModel):
    """An activity the workflow waits for: its name, attempt and why the last attempt failed;
    ``waiting_for``: seconds since it was scheduled (not started) or since its worker last
    heartbeated or started it (started); ``heartbeat_timeout``: its heartbeat timeout in seconds
    (None: it does not heartbeat)."""

    name: str
    attempt: int
    started: bool
    last_failure: str | None = None
    waiting_for: float = 0.0
    heartbeat_timeout: float | None = None

    def heartbeat_overdue(self) -> bool:
        """Whether a started call's worker has gone quiet: no heartbeat reached the server for longer
        than the SDK's throttled interval (``HEARTBEAT_THROTTLE`` of the timeout), which a live worker
        never lets pass."""
        if not self.started or not self.heartbeat_timeout:
            return False
        return self.waiting_for > HEARTBEAT_THROTTLE * self.heartbeat_timeout + _HEARTBEAT_SLACK


class Poller(BaseModel):
    """A worker polling a task queue, as Temporal last saw it."""

    identity: str
    seen_ago: float


class WorkflowStatus(BaseModel):
    """A session or plan workflow as Temporal knows it, without asking any worker."""

    workflow_id: str
    state: RunState
    task_queue: str
    temporal_status: str
    workers: int
    pollers: list[Poller] = Field(default_factory=list)
    #: Seconds the workflow's next workflow task has waited for a worker to pick it up (None: none waits).
    task_waiting_for: float | None = None
    #: Temporal shows work in flight: a workflow task (a local model call runs inside one) or an activity.
    working: bool = False
    progress: WorkflowProgress | None = None
    pending: list[PendingCall] = Field(default_factory=list)
    failure: str | None = None
    result: Any = None


async def workers_polling(client: Client, task_queue: str) -> int:
    """How many workers poll ``task_queue`` for workflow tasks (seen within the last minute or so:
    a worker killed less than that ago counts too; ``workflow_status`` tells it by the tasks left
    waiting)."""
    return len(await task_queue_pollers(client, task_queue))


async def task_queue_pollers(client: Client, task_queue: str) -> list[Poller]:
    """The workers polling ``task_queue`` for workflow tasks, seen within the last minute or so,
    most recently seen first."""
    response = await client.workflow_service.describe_task_queue(DescribeTaskQueueRequest(
        namespace=client.namespace, task_queue=TaskQueue(name=task_queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    ))
    now = now_datetime()
    seen = [
        Poller(identity=p.identity, seen_ago=_seconds(now - p.last_access_time.ToDatetime(tzinfo=UTC)))
        for p in response.pollers
    ]
    return sorted((p for p in seen if p.seen_ago <= _POLLER_SEEN_WITHIN.total_seconds()),
                  key=lambda p: p.seen_ago)


def _seconds(delta: timedelta) -> float:
    return max(0.0, delta.total_seconds())


async def workflow_status(
    client: Client, workflow_id: str, *, result_type: type | None = None
) -> WorkflowStatus:
    """The state of the workflow ``workflow_id`` (its latest run) from its description and memo; a
    closed one's result (as ``result_type``) or failure. Raises ``RPCError`` (NOT_FOUND) for no such
    workflow."""
    handle = client.get_workflow_handle(workflow_id, result_type=result_type)
    description = await handle.describe()
    memo = await description.memo()
    progress = WorkflowProgress.model_validate(memo[MEMO_KEY]) if MEMO_KEY in memo else None
    raw = description.raw_description
    now = now_datetime()
    pending = [_pending_call(activity, now) for activity in raw.pending_activities]
    status = description.status or WorkflowExecutionStatus.RUNNING
    pollers = await task_queue_pollers(client, description.task_queue)
    task = raw.pending_workflow_task
    task_waiting = (
        _seconds(now - task.scheduled_time.ToDatetime(tzinfo=UTC))
        if raw.HasField("pending_workflow_task")
        and task.state == PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED
        else None
    )
    found = WorkflowStatus(
        workflow_id=workflow_id, state="running", task_queue=description.task_queue,
        temporal_status=status.name.lower(), workers=len(pollers), pollers=pollers,
        task_waiting_for=task_waiting, progress=progress, pending=pending,
        working=raw.HasField("pending_workflow_task") or bool(pending),
    )
    if status == WorkflowExecutionStatus.RUNNING:
        return found.model_copy(update={"state": _running_state(found)})
    if status == WorkflowExecutionStatus.CANCELED:
        return found.model_copy(update={"state": "cancelled"})
    try:
        result = await handle.result(follow_runs=False)
    except WorkflowFailureError as exc:
        cause = exc.cause
        reason = cause.message if hasattr(cause, "message") else str(cause)
        return found.model_copy(update={"state": "failed", "failure": reason or status.name.lower()})
    return found.model_copy(update={"state": "done", "result": result})


def _pending_call(activity: PendingActivityInfo, now: datetime) -> PendingCall:
    started = activity.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
    last = activity.scheduled_time
    if started:
        beat = activity.HasField("last_heartbeat_time")
        last = activity.last_heartbeat_time if beat else activity.last_started_time
    timeout = activity.activity_options.heartbeat_timeout.ToTimedelta().total_seconds()
    return PendingCall(
        name=activity.activity_type.name, attempt=activity.attempt, started=started,
        last_failure=activity.last_failure.message or None,
        waiting_for=_seconds(now - last.ToDatetime(tzinfo=UTC)) if last.seconds else 0.0,
        heartbeat_timeout=timeout or None,
    )


def _stalled(found: WorkflowStatus) -> bool:
    """Work nobody picks up: no live worker, whatever the pollers say."""
    if found.task_waiting_for is not None and found.task_waiting_for > STALLED_AFTER:
        return True
    return any(not call.started and call.waiting_for > STALLED_AFTER for call in found.pending)


def _running_state(found: WorkflowStatus) -> RunState:
    progress = found.progress
    if found.workers == 0 or _stalled(found):
        return "waiting for a worker"
    if progress is None:
        return "running"
    if progress.activity == "idle" and found.working:
        return "running"  # a session's turn publishes when it ends, not when it starts
    return {
        "approval": "waiting for approval", "client_tools": "waiting for client tools", "idle": "idle",
    }.get(progress.activity, "running")  # type: ignore[return-value]
