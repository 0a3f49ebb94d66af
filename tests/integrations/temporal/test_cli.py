"""The durable CLI against a real dev server: `agcore run --temporal`, `agcore plan run --temporal`,
`agcore plan status` (real subprocesses; the worker runs in the test process).

Temporal's SDK is asyncio-only: these tests run on asyncio only (see conftest.py).
"""

from __future__ import annotations

import json
import os
import re
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from temporalio.client import Client

from agcore.integrations.temporal import DurableSession, create_worker
from tests.integrations.temporal._agents import make_bundle
from tests.integrations.temporal.conftest import ROOT

pytestmark = pytest.mark.anyio


@pytest.fixture
async def task_queue(client: Client) -> AsyncIterator[str]:
    queue = f"cli-{uuid.uuid4().hex[:8]}"
    async with create_worker(client, make_bundle, task_queue=queue):
        yield queue


async def _agcore(*args: str) -> tuple[int, str, str]:
    done = await anyio.run_process(
        [sys.executable, "-m", "agcore.cli", *args], cwd=ROOT, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def test_run_with_temporal_runs_the_turn_as_a_workflow(client: Client, task_queue: str) -> None:
    address = client.service_client.config.target_host
    code, out, err = await _agcore("run", "--temporal", address, "--task-queue", task_queue, "--yes",
                                   'call delete_file {"path": "z.txt"}')
    assert code == 0, err
    assert out.count("done: deleted z.txt") == 1  # streamed as the model wrote it, not printed again
    workflow_id = re.search(r"workflow (run-\w+)", out)
    assert workflow_id is not None
    assert (await client.get_workflow_handle(workflow_id.group(1)).describe()).status is not None


async def test_run_with_temporal_reports_a_model_error(client: Client, task_queue: str) -> None:
    address = client.service_client.config.target_host
    code, _, err = await _agcore("run", "--temporal", address, "--task-queue", task_queue, "fail-hard")
    assert code == 4
    assert "the request is malformed" in err


async def test_plan_run_with_temporal_and_plan_status(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    address = client.service_client.config.target_host
    plan = tmp_path / "plan.yaml"
    plan.write_text('goal: cli\nsteps:\n  - id: a\n    description: \'call echo {"text": "A"}\'\n'
                    "  - id: b\n    description: say b\n")
    code, out, err = await _agcore(
        "plan", "run", str(plan), "--temporal", address, "--task-queue", task_queue
    )
    assert code == 0, err
    assert "step a: completed" in out
    assert "done: echoed A" in out
    workflow_id = re.search(r"workflow (plan-\w+)", out)
    assert workflow_id is not None
    code, out, err = await _agcore("plan", "status", workflow_id.group(1), "--address", address)
    assert code == 0, err
    assert "completed" in out
    assert "echo: say b" in out
    code, _, err = await _agcore("plan", "status", "no-such-plan", "--address", address)
    assert code == 2
    assert "no plan workflow 'no-such-plan'" in err


async def test_worker_takes_workflow_observers_and_refuses_a_bad_factory(
    client: Client, tmp_path: Path
) -> None:
    address = client.service_client.config.target_host
    queue = f"cli-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AGCORE_TEMPORAL_AUDIT_DIR": str(tmp_path / "audit")}
    process = await anyio.open_process(
        [sys.executable, "-m", "agcore.cli", "worker", "tests.integrations.temporal._agents:make_bundle",
         "--address", address, "--task-queue", queue,
         "--workflow-observers", "tests.integrations.temporal._agents:audit_observers"],
        cwd=ROOT, env=env,
    )
    try:
        assert process.stdout is not None
        with anyio.fail_after(30):
            said = b""
            async for chunk in process.stdout:
                said += chunk
                if b"worker ready" in said:
                    break
        session = await DurableSession.start(client, f"audited-{queue}", task_queue=queue)
        assert (await session.turn('call echo {"text": "audited"}')).text == "done: echoed audited"
        await session.close()
    finally:
        process.kill()
        await process.wait()
    trace = (tmp_path / "audit" / "trace.jsonl").read_text().splitlines()
    events = [json.loads(line)["event"] for line in trace]
    assert events.count("tool_call") == 1
    assert events.count("llm_request") == 2
    code, _, err = await _agcore("worker", "no_such_module:make", "--address", address)
    assert code == 2
    assert "cannot import 'no_such_module'" in err
