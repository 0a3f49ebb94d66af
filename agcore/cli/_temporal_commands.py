"""The commands that operate Temporal for durable runs: ``agcore worker`` and ``agcore dev-server``
(registered on the app in ``_app``; typer reads their signatures)."""

from __future__ import annotations

import functools
import os
from typing import Annotated

import typer

from agcore.cli._execution import execute_durable
from agcore.cli._options import ApiKey, Namespace, PayloadStore, Tls

__all__ = ["Address", "dev_server", "worker"]

Address = Annotated[str, typer.Option(
    "--address", metavar="HOST:PORT", help="The Temporal frontend (default: a local dev server).")]


def worker(
    factory: Annotated[str, typer.Argument(
        metavar="MODULE:FUNCTION", help="A function returning the worker's RuntimeBundle.")],
    address: Address = "localhost:7233",
    namespace: Namespace = "default",
    task_queue: Annotated[str, typer.Option(
        "--task-queue", metavar="NAME", help="The task queue.")] = "agcore",
    tls: Tls = False,
    api_key: ApiKey = None,
    payload_store: PayloadStore = None,
    idempotent: Annotated[list[str] | None, typer.Option(
        "--idempotent-tool", metavar="NAME",
        help="A tool safe to run again after a lost worker (repeat the option); others run at most once.",
    )] = None,
    workflow_plugins: Annotated[str | None, typer.Option(
        "--workflow-plugins", metavar="MODULE:FUNCTION",
        help="A function returning the plugins run inside each workflow (deterministic gatekeepers).",
    )] = None,
    workflow_observers: Annotated[str | None, typer.Option(
        "--workflow-observers", metavar="MODULE:FUNCTION",
        help="A function returning the recording plugins (audit log, tracing): never run on replay.",
    )] = None,
    sandbox: Annotated[bool, typer.Option(
        "--sandbox/--no-sandbox",
        help="Run workflows in Temporal's sandbox (the default); --no-sandbox saves 3-10 ms of CPU per "
             "turn, and workflow plugins are then checked for determinism by replays only.",
    )] = True,
) -> None:
    """Run a Temporal worker for durable sessions and plans over the bundle MODULE:FUNCTION builds
    (needs the temporal extra). Runs until interrupted."""
    from agcore.cli._durable import run_worker

    execute_durable(functools.partial(run_worker, factory=factory, address=address, namespace=namespace,
                                       task_queue=task_queue, tls=tls, api_key=api_key,
                                       payload_store=payload_store, idempotent_tools=idempotent or [],
                                       workflow_plugins=workflow_plugins,
                                       workflow_observers=workflow_observers, sandbox=sandbox))


def dev_server(
    port: Annotated[int, typer.Option("--port", metavar="PORT", help="The frontend's port.")] = 7233,
    ui_port: Annotated[int | None, typer.Option(
        "--ui-port", metavar="PORT", help="The web UI's port (default: PORT + 1000).")] = None,
    db_filename: Annotated[str | None, typer.Option(
        "--db-filename", metavar="FILE", help="Keep the server's state in this SQLite file "
                                              "(default: in memory, lost when it stops).")] = None,
) -> None:
    """Run a local Temporal dev server for durable runs (temporal server start-dev, from the temporal
    extra), tuned so a tool-call turn does not wait on the dev server's dispatch rate. Runs until
    interrupted."""

    from agcore.cli._durable import dev_server_argv

    argv = dev_server_argv(port=port, ui_port=ui_port, db_filename=db_filename)
    os.execv(argv[0], argv)  # the server takes over this process (and its Ctrl-C)
