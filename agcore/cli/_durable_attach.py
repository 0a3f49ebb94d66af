"""What a durable command finds under a workflow id before it sends work there: a running workflow
is served on ITS task queue (whatever ``--task-queue`` says, or the command would wait for a worker
on the wrong one forever); a session that has ended is said so, never silently replaced by an empty
one; and the command line that continues a session, complete with the flags that reach it."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Literal

from rich.console import Console

from agcore.cli._errors import CliError, ExitCode

if TYPE_CHECKING:
    from temporalio.client import Client

    from agcore.integrations.temporal import SessionSnapshot

__all__ = ["closed_session", "continue_command", "queue_of_running", "status_command"]

Kind = Literal["plan", "session"]


async def queue_of_running(
    console: Console, client: Client, workflow_id: str, task_queue: str, *, kind: Kind
) -> str:
    """The task queue to serve ``workflow_id`` on: a running or completed workflow's own (said when
    it is not ``task_queue``), else ``task_queue``. ``CliError`` for a workflow of the other kind,
    and for a session cancelled, failed or terminated (a new run under its id would be an empty
    conversation; a completed one's final snapshot continues it: ``closed_session``)."""
    from temporalio.client import WorkflowExecutionStatus
    from temporalio.service import RPCError, RPCStatusCode

    from agcore.integrations.temporal import MEMO_KEY

    try:
        description = await client.get_workflow_handle(workflow_id).describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return task_queue  # a new one
        raise CliError(f"cannot read workflow {workflow_id!r}: {exc.message}", ExitCode.PROVIDER) from exc
    memo = await description.memo()
    progress = memo.get(MEMO_KEY)
    found = progress.get("kind") if isinstance(progress, dict) else None
    if found is not None and found != kind:
        raise CliError(f"{workflow_id!r} is a {found} workflow, not a {kind}: choose another id "
                       f"(`agcore {found} status {workflow_id}` shows it)", ExitCode.USAGE)
    status = description.status or WorkflowExecutionStatus.RUNNING
    # Completed: the caller continues it (a session from its final snapshot, a plan's results).
    if status not in (WorkflowExecutionStatus.RUNNING, WorkflowExecutionStatus.COMPLETED):
        if kind == "session":
            raise CliError(_ended_session(workflow_id, status.name.lower()), ExitCode.USAGE)
        return task_queue  # a plan: started again
    if description.task_queue != task_queue:
        console.print(f"{kind} {workflow_id} is on task queue {description.task_queue!r}, not "
                      f"{task_queue!r}: its workers serve this run", style="dim", markup=False,
                      highlight=False)
    return description.task_queue


async def closed_session(client: Client, workflow_id: str) -> SessionSnapshot | None:
    """The final snapshot of the session ``workflow_id`` if it was closed (completed), else None:
    a new run started with it continues the conversation."""
    from temporalio.client import WorkflowExecutionStatus
    from temporalio.service import RPCError

    from agcore.integrations.temporal import SessionSnapshot

    handle = client.get_workflow_handle(workflow_id, result_type=SessionSnapshot)
    try:
        if (await handle.describe()).status != WorkflowExecutionStatus.COMPLETED:
            return None
    except RPCError:
        return None  # none yet
    found: SessionSnapshot = await handle.result(follow_runs=False)
    return found


def _ended_session(workflow_id: str, status: str) -> str:
    return (f"session {workflow_id!r} has ended (Temporal status: {status}), so it cannot take another "
            f"turn: `agcore session status {workflow_id}` says how it ended; to talk on, start a new "
            "session with another --session id (a `run` without --session is a one-off)")


def continue_command(
    *, address: str, namespace: str, task_queue: str, tls: bool, api_key: bool, payload_store: str | None,
    session_id: str,
) -> str:
    """The ``agcore run`` command line that sends a next turn to ``session_id``, with every flag
    needed to reach it (the API key as a placeholder: it is not printed)."""
    words = ["agcore", "run", "--temporal", address, "--task-queue", task_queue,
             *_reach(namespace, tls, payload_store), "--session", session_id]
    return shlex.join(words) + (" --api-key KEY" if api_key else "") + " TASK"


def status_command(
    kind: Kind, workflow_id: str, *, address: str, namespace: str, tls: bool, api_key: bool,
    payload_store: str | None,
) -> str:
    """The ``agcore plan|session status`` command line for ``workflow_id``, every flag included."""
    words = ["agcore", kind, "status", workflow_id, "--address", address,
             *_reach(namespace, tls, payload_store)]
    return shlex.join(words) + (" --api-key KEY" if api_key else "")


def _reach(namespace: str, tls: bool, payload_store: str | None) -> list[str]:
    """The flags beyond the address that reach a workflow and read its payloads."""
    words = ["--namespace", namespace] if namespace != "default" else []
    if tls:
        words.append("--tls")
    if payload_store is not None:
        words += ["--payload-store", payload_store]
    return words
