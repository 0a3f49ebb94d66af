"""Plans as workflows on a real Temporal dev server, and the worker-kill test: real `agcore worker`
subprocesses, one SIGKILLed while a slow tool runs in step 2 of a 4-step plan, another finishing it.

Temporal's SDK is asyncio-only: these tests run on asyncio only (see conftest.py).
"""

from __future__ import annotations

import os
import signal
import uuid
from collections import Counter
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.converter import ExternalStorage
from temporalio.testing import WorkflowEnvironment

from agcore.agent import Plan, StepStatus
from agcore.integrations.temporal import (
    MAX_SNAPSHOT_BYTES,
    ActivityOptions,
    AgentActivities,
    FileStorageDriver,
    PlanWorkflow,
    TextChunk,
    assemble_text,
    connect,
    create_replayer,
    create_worker,
    start_plan,
    text_chunks,
)
from tests.integrations.temporal._agents import make_bundle, make_streaming_bundle
from tests.integrations.temporal.conftest import (
    ROOT,
    recorded_activities,
    replay_task_queue,
    start_worker_process,
)

pytestmark = pytest.mark.anyio


def _plan(*descriptions: str) -> Plan:
    return Plan.from_dict({
        "goal": "durable test",
        "steps": [{"id": f"s{i}", "description": d} for i, d in enumerate(descriptions, 1)],
    })


async def test_a_plan_runs_step_by_step_and_reports_its_status(client: Client) -> None:
    task_queue = f"plan-{uuid.uuid4().hex[:8]}"
    activities = AgentActivities(make_bundle)
    async with create_worker(client, make_bundle, task_queue=task_queue, activities=activities):
        handle = await start_plan(
            client, _plan('call echo {"text": "one"}', "think", 'call echo {"text": "three"}'),
            workflow_id=f"plan-{task_queue}", task_queue=task_queue,
        )
        plan = await handle.result()
        status = await handle.query(PlanWorkflow.status)
    assert [s.status for s in plan.steps] == [StepStatus.COMPLETED] * 3
    assert [s.result for s in plan.steps] == ["done: echoed one", "echo: think", "done: echoed three"]
    assert status == plan
    assert activities.calls["llm_call"] == 5
    assert activities.calls["tool:echo"] == 2
    await replay_task_queue(client, task_queue)


@pytest.mark.parametrize("max_snapshot_bytes", [MAX_SNAPSHOT_BYTES, 1_000], ids=["default", "tiny budget"])
async def test_a_long_plan_continues_as_new_between_steps(client: Client, max_snapshot_bytes: int) -> None:
    # With a tiny snapshot budget each continue-as-new carries only the last step's turn: the plan
    # goes on all the same (its progress travels in the plan, not in the messages).
    task_queue = f"plan-{uuid.uuid4().hex[:8]}"
    activities = AgentActivities(make_bundle)
    steps = [f'call echo {{"text": "n{i}"}}' for i in range(10)]
    async with create_worker(client, make_bundle, task_queue=task_queue, activities=activities):
        handle = await start_plan(client, _plan(*steps), workflow_id=f"plan-{task_queue}",
                                  task_queue=task_queue, max_history_events=100,
                                  max_snapshot_bytes=max_snapshot_bytes)
        plan = await handle.result()
        generation = await handle.query(PlanWorkflow.generation)
    assert generation >= 1
    assert [s.result for s in plan.steps] == [f"done: echoed n{i}" for i in range(10)]
    assert [s.attempts for s in plan.steps] == [1] * 10
    assert activities.calls["llm_call"] == 20  # nothing was redone across the runs
    assert activities.calls["tool:echo"] == 10
    assert await replay_task_queue(client, task_queue, at_least=generation + 1) == generation + 1


async def _wait_for(path: Path, seconds: float = 30.0) -> None:
    with anyio.fail_after(seconds):
        while not await anyio.Path(path).exists():  # noqa: ASYNC110 - a file another process writes
            await anyio.sleep(0.05)


async def test_a_killed_worker_loses_no_completed_work(
    temporal_env: WorkflowEnvironment, client: Client, tmp_path: Path
) -> None:
    task_queue = f"kill-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "calls.log"
    marker = tmp_path / "slow-started"
    env = {**os.environ, "AGCORE_TEMPORAL_TOOL_LOG": str(log), "AGCORE_TEMPORAL_SLOW_MARKER": str(marker),
           "PYTHONPATH": str(ROOT)}
    address = client.service_client.config.target_host
    plan = _plan('call echo {"text": "one"}', 'call slow {"seconds": 60, "label": "s2"}',
                 'call echo {"text": "three"}', 'call echo {"text": "four"}')
    first = await start_worker_process(address, task_queue, env)
    second: Process | None = None
    try:
        handle = await start_plan(
            client, plan, workflow_id=f"plan-{task_queue}", task_queue=task_queue,
            options=ActivityOptions(tool_heartbeat_timeout=2.0),
        )
        await _wait_for(marker)  # step 2's slow tool is running on the first worker
        during = await handle.query(PlanWorkflow.status)
        assert [s.status for s in during.steps] == [
            StepStatus.COMPLETED, StepStatus.RUNNING, StepStatus.PENDING, StepStatus.PENDING,
        ]
        first.send_signal(signal.SIGKILL)
        await first.wait()
        second = await start_worker_process(address, task_queue, env)
        with anyio.fail_after(60):
            done = await handle.result()
    finally:
        for process in (first, second):
            if process is not None and process.returncode is None:
                process.kill()
                await process.wait()
    assert [s.status for s in done.steps] == [StepStatus.COMPLETED] * 4
    assert done.steps[1].result is not None
    assert done.steps[1].result.startswith("done: Interrupted")
    calls = Counter((await anyio.Path(log).read_text()).split())
    # 4 steps x 2 model calls: the first worker's completed calls were not made again.
    assert calls["llm"] == 8
    assert calls["echo"] == 3
    assert calls["slow:s2"] == 1  # not re-run: it is not declared idempotent
    assert calls["slow-done:s2"] == 0
    history = await handle.fetch_history()
    # The model calls are local activities (markers), the tools scheduled ones: each recorded once.
    recorded = recorded_activities(history)
    assert recorded == {"agcore.describe_agent": 1, "agcore.llm_call": 8, "agcore.tool_call": 4}
    timed_out = [e for e in history.events if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT]
    assert len(timed_out) == 1  # the slow call, answered "interrupted" once
    await replay_task_queue(client, task_queue)


async def test_large_payloads_go_to_external_storage_and_the_history_keeps_claims(
    client: Client, tmp_path: Path
) -> None:
    storage = ExternalStorage(drivers=[FileStorageDriver(tmp_path / "payloads")], payload_size_threshold=2048)
    address = client.service_client.config.target_host
    stored = await connect(address, external_storage=storage)
    steps = [f'call echo {{"text": "{"x" * 300} {i}"}}' for i in range(6)]
    sizes = {}
    for name, used in (("inline", client), ("claim-check", stored)):
        task_queue = f"store-{uuid.uuid4().hex[:8]}"
        async with create_worker(used, make_bundle, task_queue=task_queue):
            handle = await start_plan(  # scheduled model calls: their requests are the big payloads
                used, _plan(*steps), workflow_id=f"plan-{task_queue}", task_queue=task_queue,
                options=ActivityOptions(local_model_calls=False),
            )
            plan = await handle.result()
            assert plan.succeeded
            history = await handle.fetch_history()
        sizes[name] = len(history.to_json())
        replayer = create_replayer(external_storage=storage if used is stored else None)
        assert (await replayer.replay_workflow(history)).replay_failure is None
    files = list((tmp_path / "payloads").glob("*.payload"))
    assert files  # the big requests are there...
    assert sizes["claim-check"] < sizes["inline"] / 2  # ...and not in the history


async def test_a_plan_streams_its_steps_text(client: Client) -> None:
    task_queue = f"plan-{uuid.uuid4().hex[:8]}"
    activities = AgentActivities(make_streaming_bundle)
    chunks: list[TextChunk] = []
    async with create_worker(client, make_streaming_bundle, task_queue=task_queue, activities=activities):
        handle = await start_plan(
            client, _plan("flaky first", "second"), workflow_id=f"plan-{task_queue}", task_queue=task_queue,
            stream_text=True, options=ActivityOptions(llm_initial_retry_interval=0.05),
        )

        async def read() -> None:
            async for chunk in text_chunks(client, handle.id):
                chunks.append(chunk)

        async with anyio.create_task_group() as group:
            group.start_soon(read)
            plan = await handle.result()
    assert plan.succeeded
    assert sorted(assemble_text(chunks).values()) == sorted(s.result or "" for s in plan.steps)
    assert [c.attempt for c in chunks if c.restart] == [2]  # the cut-off first step, retried once
    await replay_task_queue(client, task_queue)
