"""``agcore plan status`` and ``agcore session status``: a durable plan's or session's state read from
Temporal itself (the workflow's description and the progress it publishes in its memo), so they
answer when no worker is running; and the one line a durable command prints while no worker polls
its task queue."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import anyio
from rich.console import Console

from agcore.cli._errors import CliError, ExitCode

if TYPE_CHECKING:
    from temporalio.client import Client

    from agcore.agent import Plan
    from agcore.integrations.temporal import WorkflowProgress, WorkflowStatus

__all__ = ["no_worker_line", "show_status", "wait_for_worker", "warn_when_stalled"]

#: How often a command waiting for a worker looks again.
WORKER_POLL_SECONDS = 1.0


def no_worker_line(task_queue: str, address: str) -> str:
    """What to say when no worker polls ``task_queue``: the command that starts one."""
    return (f"no worker is polling task queue {task_queue!r}; start one with: agcore worker "
            f"MODULE:FUNCTION --task-queue {task_queue} --address {address}")


async def wait_for_worker(console: Console, client: Client, task_queue: str, address: str) -> None:
    """Return once a worker polls ``task_queue``; meanwhile, one line saying how to start one."""
    from agcore.integrations.temporal import workers_polling

    if await workers_polling(client, task_queue):
        return
    console.print(no_worker_line(task_queue, address), style="yellow", markup=False, highlight=False)
    while not await workers_polling(client, task_queue):  # noqa: ASYNC110 - the server's state
        await anyio.sleep(WORKER_POLL_SECONDS)
    console.print("a worker is polling: going on", style="dim")


async def warn_when_stalled(
    console: Console, client: Client, workflow_id: str, task_queue: str, address: str
) -> None:
    """Say once how to start a worker if the workflow's work waits for one: a worker Temporal still
    lists (for about a minute) may have died, so ``wait_for_worker`` can go on with none alive."""
    from temporalio.service import RPCError

    from agcore.integrations.temporal import STALLED_AFTER, workflow_status

    while True:
        await anyio.sleep(STALLED_AFTER)
        try:
            found = await workflow_status(client, workflow_id)
        except RPCError:
            continue  # a hiccup of the server's: the run itself reports what matters
        if found.state == "waiting for a worker":
            console.print(no_worker_line(task_queue, address), style="yellow", markup=False,
                          highlight=False)
            return
        if found.temporal_status != "running":
            return


async def show_status(
    console: Console, client: Client, *, kind: Literal["plan", "session"], workflow_id: str, address: str
) -> ExitCode:
    """Print the state of the plan or session workflow ``workflow_id``: running, idle, waiting for a
    worker / for approval, done or failed, with a plan's step progress."""
    from pydantic import ValidationError
    from temporalio.service import RPCError, RPCStatusCode

    from agcore.agent import Plan
    from agcore.integrations.temporal import SessionSnapshot, workflow_status

    try:
        # The result as plain data first: a closed workflow of the other kind would not validate.
        found = await workflow_status(client, workflow_id)
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            missing = f"no {kind} workflow {workflow_id!r} on Temporal at {address}"
            raise CliError(missing, ExitCode.USAGE) from exc
        raise CliError(f"cannot read workflow {workflow_id!r}: {exc.message}", ExitCode.PROVIDER) from exc
    progress = found.progress
    if progress is not None and progress.kind != kind:
        raise CliError(f"{workflow_id!r} is a {progress.kind} workflow: run `agcore {progress.kind} status "
                       f"{workflow_id}`", ExitCode.USAGE)
    if found.result is not None:
        try:
            result = (Plan if kind == "plan" else SessionSnapshot).model_validate(found.result)
        except ValidationError as exc:
            raise CliError(f"{workflow_id!r} is not an agcore {kind} workflow (its result is not a "
                           f"{kind}'s)", ExitCode.USAGE) from exc
        found = found.model_copy(update={"result": result})
    console.print(f"{kind} {workflow_id}: {_headline(found)}", markup=False, highlight=False)
    for line in _details(found, address):
        console.print(f"  {line}", markup=False, highlight=False)
    if kind == "plan":
        _show_steps(console, found, workflow_id)
    return ExitCode.OK


def _headline(found: WorkflowStatus) -> str:
    progress = found.progress
    said: str = found.state
    if found.state == "waiting for approval" and progress is not None:
        said += f" ({', '.join(progress.awaiting)})"
    if progress is not None and progress.kind == "plan" and progress.steps:
        done = sum(1 for step in progress.steps if step.status == "completed")
        said += f"; {done} of {len(progress.steps)} steps done"
    elif progress is not None and progress.kind == "session":
        said += f"; {progress.turns} turn{'s' if progress.turns != 1 else ''}"
    return said


def _details(found: WorkflowStatus, address: str) -> list[str]:
    queue = found.task_queue
    lines = [f"task queue {queue!r}: {_workers_seen(found)} (Temporal status: {found.temporal_status})"]
    if found.state == "waiting for a worker":
        if found.workers and found.task_waiting_for is not None:
            lines.append(f"a workflow task has waited {found.task_waiting_for:.0f} s for a worker: the "
                         "workers Temporal still lists are gone or too busy")
        lines.append(no_worker_line(queue, address))
    for call in found.pending:
        if call.started:
            # A live worker's heartbeats reach the server only every 0.8 heartbeat timeouts (the
            # SDK throttles them): quiet for longer than that is a worker gone quiet.
            silent = call.heartbeat_overdue()
            where = "running" + (f", no heartbeat for {call.waiting_for:.0f} s" if silent else "")
        else:
            where = f"waiting to start for {call.waiting_for:.0f} s"
        line = f"{call.name}: {where}, attempt {call.attempt}"
        if call.last_failure:
            line += f" (last attempt: {call.last_failure})"
        lines.append(line)
    progress = found.progress
    if progress is not None and progress.kind == "session" and progress.last_stop is not None:
        last = f"last turn: {progress.last_stop}"
        if progress.last_error:
            last += f" ({progress.last_error})"
        lines.append(last)
    if found.failure is not None:
        lines.append(f"failed: {found.failure}")
    return lines


def _workers_seen(found: WorkflowStatus) -> str:
    # A live worker polls at least once a minute, so "last seen" is what tells a busy worker from
    # one that may have died since (Temporal lists a killed worker's last poll for about a minute).
    if not found.pollers:
        return "no worker polling"
    count = f"{len(found.pollers)} worker{'s' if len(found.pollers) != 1 else ''}"
    return f"{count} polling, last seen {found.pollers[0].seen_ago:.0f} s ago"


def _show_steps(console: Console, found: WorkflowStatus, workflow_id: str) -> None:
    from agcore.agent import Plan
    from agcore.cli._plan import plan_table

    if isinstance(found.result, Plan):
        console.print(plan_table(found.result, title=f"plan {workflow_id}", results=True))
    elif found.progress is not None and found.progress.steps:
        published = plan_from_progress(found.progress)
        console.print(plan_table(published, title=f"plan {workflow_id}", results=True))


def plan_from_progress(progress: WorkflowProgress) -> Plan:
    """The plan as its workflow last published it (ids, descriptions, statuses, errors)."""
    from agcore.agent import Plan, Step, StepError, StepStatus

    steps = [
        Step(id=step.id, description=step.description or step.id, status=StepStatus(step.status),
             error=StepError(message=step.error) if step.error else None)
        for step in progress.steps
    ]
    return Plan(goal=progress.goal, steps=steps)
