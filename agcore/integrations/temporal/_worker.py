"""Connecting to Temporal and running a worker for an agcore bundle.

``connect()`` opens a client with the data converter agcore's types need; ``create_worker()`` serves
the session and plan workflows and the activities over a bundle factory on one task queue;
``create_replayer()`` replays histories with the same workflows, sandbox and converter.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from datetime import timedelta
from typing import Any

from temporalio.client import Client, TLSConfig
from temporalio.contrib.pydantic import PydanticPayloadConverter, pydantic_data_converter
from temporalio.converter import DataConverter, ExternalStorage
from temporalio.worker import Replayer, Worker

from agcore.agent import Agent, ConfigError
from agcore.integrations.temporal._activities import AgentActivities, BundleFactory
from agcore.integrations.temporal._plan_workflow import PlanWorkflow
from agcore.integrations.temporal._plugins import PluginFactory, set_plugins
from agcore.integrations.temporal._sandbox import reads_contexts, workflow_runner
from agcore.integrations.temporal._session_workflow import AgentSessionWorkflow

__all__ = [
    "DATA_CONVERTER",
    "data_converter",
    "DEFAULT_TASK_QUEUE",
    "WORKFLOWS",
    "connect",
    "create_replayer",
    "create_worker",
    "workflow_runner",
]

DEFAULT_TASK_QUEUE = "agcore"
#: How long a workflow task waits for the worker that cached its workflow before any worker takes it.
STICKY_TIMEOUT = timedelta(seconds=3)
#: Temporal's pydantic converter: agcore's messages, requests and plans travel as their own JSON.
DATA_CONVERTER: DataConverter = pydantic_data_converter
WORKFLOWS: tuple[type, ...] = (AgentSessionWorkflow, PlanWorkflow)


def data_converter(external_storage: ExternalStorage | None = None) -> DataConverter:
    """agcore's data converter, with payloads above ``external_storage``'s threshold kept out of the
    history (a claim-check: ``ExternalStorage(drivers=[FileStorageDriver(dir)])``, or Temporal's S3
    and GCS drivers). Workers, clients and replayers must use the same storage."""
    if external_storage is None:
        return DATA_CONVERTER
    return dataclasses.replace(DATA_CONVERTER, external_storage=external_storage)


async def connect(
    address: str = "localhost:7233",
    *,
    namespace: str = "default",
    tls: bool | TLSConfig = False,
    api_key: str | None = None,
    external_storage: ExternalStorage | None = None,
    **options: Any,
) -> Client:
    """A Temporal client with agcore's data converter: a local dev server by default; for a cluster,
    its ``address`` and ``namespace``, ``tls=True`` (or a ``TLSConfig`` with client certificates for
    mTLS) and, for Temporal Cloud, ``api_key``. ``external_storage``: see ``data_converter``."""
    return await Client.connect(
        address, namespace=namespace, tls=tls, api_key=api_key,
        data_converter=data_converter(external_storage), **options,
    )


def create_worker(
    client: Client,
    bundle_factory: BundleFactory,
    *,
    task_queue: str = DEFAULT_TASK_QUEUE,
    agent: Agent | None = None,
    idempotent_tools: Collection[str] = (),
    workflow_plugins: PluginFactory | None = None,
    workflow_observers: PluginFactory | None = None,
    activities: AgentActivities | None = None,
    **worker_options: Any,
) -> Worker:
    """A worker on ``task_queue`` running agcore's workflows, and its activities over the bundle
    ``bundle_factory()`` builds (once, on the first activity).

    ``agent`` names the agent and picks its tools (default: all of the bundle's); ``idempotent_tools``
    may run again after a lost worker (all others run at most once); ``workflow_plugins()`` makes the
    plugins that run inside each workflow (deterministic: they run on every replay, but their pure
    observer hooks do not), ``workflow_observers()`` the plugins that only record (audit log,
    tracing, logging: never run during a replay). ``worker_options`` go to
    ``temporalio.worker.Worker`` (e.g.
    ``max_cached_workflows``, ``max_concurrent_activities``; ``sticky_queue_schedule_to_start_timeout``
    defaults to ``STICKY_TIMEOUT``, 3 s, so a killed worker's sessions move on sooner).
    """
    _check_converter(client)
    acts = activities if activities is not None else AgentActivities(
        bundle_factory, agent=agent, idempotent_tools=idempotent_tools
    )
    set_plugins(task_queue, workflow_plugins, workflow_observers)
    # Workflow code runs in the sandbox; with agcore's converter, the payloads go without it.
    worker_options.setdefault(
        "workflow_runner", workflow_runner(contexts=reads_contexts(client.data_converter))
    )
    # A session's next workflow task goes to the worker that cached it; if that worker was killed,
    # Temporal waits this long before giving the task to another (SDK default 10 s, on top of the
    # heartbeat timeout that noticed the loss).
    worker_options.setdefault("sticky_queue_schedule_to_start_timeout", STICKY_TIMEOUT)
    return Worker(
        client, task_queue=task_queue, workflows=list(WORKFLOWS), activities=acts.activities, **worker_options
    )


def create_replayer(
    *,
    workflows: Sequence[type] = WORKFLOWS,
    workflow_plugins: PluginFactory | None = None,
    workflow_observers: PluginFactory | None = None,
    external_storage: ExternalStorage | None = None,
    **options: Any,
) -> Replayer:
    """A ``Replayer`` for histories of agcore's workflows (a changed loop that would break running
    workflows fails its ``replay_workflow``). ``workflow_plugins`` makes the plugins the workflows
    ran with, for histories whose worker is not in this process."""
    if workflow_plugins is not None or workflow_observers is not None:
        set_plugins(None, workflow_plugins, workflow_observers)
    converter = options.setdefault("data_converter", data_converter(external_storage))
    options.setdefault("workflow_runner", workflow_runner(contexts=reads_contexts(converter)))
    return Replayer(workflows=list(workflows), **options)


def _check_converter(client: Client) -> None:
    if not issubclass(client.data_converter.payload_converter_class, PydanticPayloadConverter):
        raise ConfigError(
            "This Temporal client does not use the pydantic data converter, so agcore's messages cannot "
            "travel: connect with agcore.integrations.temporal.connect(...) or pass "
            "data_converter=temporalio.contrib.pydantic.pydantic_data_converter to Client.connect.",
            piece="temporal_client",
        )
