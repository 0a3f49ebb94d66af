"""The durable commands (extra ``temporal``): ``agcore worker`` serves a bundle factory's agent on a
Temporal task queue; ``agcore run --temporal`` and ``agcore plan run --temporal`` run a task or a plan
as workflows on such workers (the worker's bundle decides model and tools) and print the workflow id;
``agcore plan status`` shows a plan workflow's step progress."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from rich.console import Console

from agcore._clock import new_id
from agcore.cli._errors import CliError, ExitCode

if TYPE_CHECKING:
    from temporalio.client import Client

__all__ = ["durable_plan", "durable_run", "load_factory", "plan_status", "run_worker"]


def load_factory(spec: str) -> Any:
    """The callable ``module:function`` names (a bundle or plugin factory)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise CliError(f"{spec!r} is not module:function (e.g. myapp.agents:make_bundle)", ExitCode.USAGE)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CliError(
            f"cannot import {module_name!r} ({exc}): is it on PYTHONPATH?", ExitCode.USAGE
        ) from exc
    found: Any = module
    for part in attribute.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise CliError(f"{module_name!r} has no {attribute!r}", ExitCode.USAGE)
    if not callable(found):
        raise CliError(f"{spec!r} is not callable: name a function (module:function)", ExitCode.USAGE)
    return found


async def _connect(address: str, namespace: str, tls: bool, api_key: str | None) -> Client:
    try:
        from agcore.integrations.temporal import connect
    except ImportError as exc:
        raise CliError(f"{exc}", ExitCode.CONFIG) from exc
    try:
        return await connect(address, namespace=namespace, tls=tls, api_key=api_key)
    except RuntimeError as exc:  # the SDK's "Failed client connect"
        raise CliError(
            f"cannot reach Temporal at {address} (namespace {namespace!r}): {exc}. Start one with "
            "`temporal server start-dev`, or pass --address/--namespace/--tls for your cluster.",
            ExitCode.PROVIDER,
        ) from exc


async def run_worker(
    console: Console,
    *,
    factory: str,
    address: str,
    namespace: str,
    task_queue: str,
    tls: bool,
    api_key: str | None,
    idempotent_tools: Sequence[str],
    workflow_plugins: str | None = None,
    workflow_observers: str | None = None,
) -> ExitCode:
    """Serve agcore's workflows and activities for ``factory``'s bundle until interrupted."""
    bundle_factory = load_factory(factory)
    plugins = load_factory(workflow_plugins) if workflow_plugins else None
    observers = load_factory(workflow_observers) if workflow_observers else None
    client = await _connect(address, namespace, tls, api_key)
    from agcore.integrations.temporal import create_worker

    worker = create_worker(
        client, bundle_factory, task_queue=task_queue, idempotent_tools=idempotent_tools,
        workflow_plugins=plugins, workflow_observers=observers,
    )
    console.print(f"worker ready: task queue {task_queue!r} at {address} (namespace {namespace!r})")
    await worker.run()
    return ExitCode.OK


async def plan_status(
    console: Console, *, workflow_id: str, address: str, namespace: str, tls: bool, api_key: str | None
) -> ExitCode:
    """Print the step table of the plan workflow ``workflow_id``."""
    from temporalio.service import RPCError

    from agcore.cli._plan import plan_table
    from agcore.integrations.temporal import PlanWorkflow

    client = await _connect(address, namespace, tls, api_key)
    handle = client.get_workflow_handle_for(PlanWorkflow.run, workflow_id)
    try:
        plan = await handle.query(PlanWorkflow.status)
        description = await handle.describe()
    except RPCError as exc:
        raise CliError(f"no plan workflow {workflow_id!r} here: {exc.message}", ExitCode.USAGE) from exc
    status = description.status.name.lower() if description.status is not None else "unknown"
    console.print(plan_table(plan, title=f"plan {workflow_id} ({status})", results=True))
    return ExitCode.OK


#: How often a durable run polls for calls waiting for approval, and a durable plan for progress.
POLL_SECONDS = 0.2


async def durable_run(
    console: Console, *, task: str, address: str, namespace: str, task_queue: str, yes: bool,
    tls: bool = False, api_key: str | None = None,
) -> ExitCode:
    """One turn as a session workflow, its text printed as the model writes it; approvals asked here
    (or given by ``--yes``)."""
    import typer

    from agcore.integrations.temporal import DurableSession

    client = await _connect(address, namespace, tls, api_key)
    session = await DurableSession.start(
        client, f"run-{new_id()}", task_queue=task_queue, stream_text=True
    )
    console.print(f"workflow {session.session_id} on task queue {task_queue!r}", style="dim")
    streamed: dict[str, int] = {}  # model call -> the attempt being shown
    drained = anyio.Event()

    async def show_text() -> None:
        async for chunk in session.text_chunks():
            shown = streamed.get(chunk.key)
            if shown is not None and chunk.attempt < shown:
                continue  # a late piece of an attempt already superseded
            if chunk.restart and shown is not None:
                console.print("\n(the model call failed and is tried again)", style="yellow")
            streamed[chunk.key] = chunk.attempt
            console.print(chunk.text, end="", markup=False, highlight=False)
        drained.set()

    answered: set[str] = set()  # a call stays listed until the workflow handles the signal

    async def approve() -> None:
        while True:
            for call in await session.awaiting_confirmation():
                if call.id in answered:
                    continue
                question = f"run {call.name}({call.input})?"
                answer = yes or await anyio.to_thread.run_sync(typer.confirm, question)
                answered.add(call.id)
                await session.confirm(call.id, answer)
            await anyio.sleep(POLL_SECONDS)

    closed = False
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(show_text)
            group.start_soon(approve)
            running = await session.start_turn(task)
            outcome = await running.result()
            await session.close()  # the text stream ends with the session: show_text drains it
            closed = True
            with anyio.move_on_after(10):
                await drained.wait()
            group.cancel_scope.cancel()
    finally:
        if not closed:  # Ctrl-C or a failure: end the workflow instead of leaving it open forever
            # (cancelling it cancels the running turn and repairs the history, as in-process)
            with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                await session.handle.cancel()
    if streamed:
        console.print()
    elif outcome.text:
        console.print(outcome.text, markup=False, highlight=False)
    if outcome.stop in ("done", "stopped_by_hook"):
        return ExitCode.OK
    if outcome.stop == "client_tools":
        names = ", ".join(c.name for c in outcome.pending_tool_calls)
        raise CliError(
            f"the turn paused for client tools ({names}), which the CLI cannot run", ExitCode.TASK_FAILED
        )
    message = outcome.error or outcome.stop
    code = {"ConfigError": ExitCode.CONFIG, "AgentLLMError": ExitCode.PROVIDER}.get(
        outcome.error_type or "", ExitCode.TASK_FAILED
    )
    raise CliError(message, code)


async def durable_plan(
    console: Console, *, file: Path, address: str, namespace: str, task_queue: str, on_failure: Any,
    tls: bool = False, api_key: str | None = None,
) -> ExitCode:
    """The plan in ``file`` as a plan workflow: a line per step status change, then the status table."""
    from agcore.agent import Plan
    from agcore.cli._plan import load_plan, plan_table
    from agcore.integrations.temporal import PlanWorkflow, start_plan

    plan = load_plan(file)
    client = await _connect(address, namespace, tls, api_key)
    workflow_id = f"plan-{new_id()}"
    handle = await start_plan(client, plan, workflow_id=workflow_id, task_queue=task_queue,
                              failure_policy=on_failure)
    console.print(f"workflow {workflow_id} on task queue {task_queue!r} "
                  f"(agcore plan status {workflow_id})", style="dim", markup=False)
    shown: dict[str, str] = {}

    def report(current: Plan) -> None:
        for step in current.steps:
            if shown.get(step.id) != step.status.value:
                shown[step.id] = step.status.value
                if step.status.value != "pending":
                    console.print(f"step {step.id}: {step.status.value}", markup=False)

    async with anyio.create_task_group() as group:

        async def progress() -> None:
            while True:
                report(await handle.query(PlanWorkflow.status))
                await anyio.sleep(POLL_SECONDS)

        group.start_soon(progress)
        done = await handle.result()
        group.cancel_scope.cancel()
    report(done)
    console.print(plan_table(done, title=f"plan {workflow_id}", results=True))
    return ExitCode.OK if done.succeeded else ExitCode.TASK_FAILED
