"""The durable commands (extra ``temporal``): ``agcore worker`` serves a bundle factory's agent on a
Temporal task queue; ``agcore plan status`` shows a plan workflow's step progress."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console

from agcore.cli._errors import CliError, ExitCode

if TYPE_CHECKING:
    from temporalio.client import Client

__all__ = ["load_factory", "plan_status", "run_worker"]


def load_factory(spec: str) -> Any:
    """The callable ``module:function`` names (a bundle factory)."""
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
        raise CliError(f"{spec!r} is not callable: name a function returning a RuntimeBundle", ExitCode.USAGE)
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
) -> ExitCode:
    """Serve agcore's workflows and activities for ``factory``'s bundle until interrupted."""
    bundle_factory = load_factory(factory)
    client = await _connect(address, namespace, tls, api_key)
    from agcore.integrations.temporal import create_worker

    worker = create_worker(client, bundle_factory, task_queue=task_queue, idempotent_tools=idempotent_tools)
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
