"""The durable CLI's smaller options and output against a real dev server: the snapshot budget on
`run --temporal` and `plan run --temporal`, the tool lines of a durable run, and what `session
status` says of a running tool's heartbeats (real subprocesses; the worker runs in the test process).
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from temporalio.client import Client

from agcore.integrations.temporal import MAX_SNAPSHOT_BYTES
from tests.integrations.temporal.test_cli import _agcore

pytestmark = pytest.mark.anyio


async def _started_with(client: Client, workflow_id: str) -> dict[str, object]:
    """The input the workflow ``workflow_id`` was started with."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    data: dict[str, object] = json.loads(started.input.payloads[0].data)
    return data


async def test_the_snapshot_budget_reaches_sessions_and_plans(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    address = client.service_client.config.target_host
    common = ("--temporal", address, "--task-queue", task_queue)
    code, _, err = await _agcore("run", *common, "--session", f"budget-{task_queue}",
                                 "--max-snapshot-bytes", "5000", "hello")
    assert code == 0, err
    assert (await _started_with(client, f"budget-{task_queue}"))["max_snapshot_bytes"] == 5000
    code, _, err = await _agcore("run", *common, "--session", f"default-{task_queue}", "hello")
    assert code == 0, err
    assert (await _started_with(client, f"default-{task_queue}"))["max_snapshot_bytes"] == MAX_SNAPSHOT_BYTES
    plan = tmp_path / "plan.yaml"
    plan.write_text(f"id: all-{task_queue}\ngoal: cli\nsteps:\n  - id: a\n    description: say a\n")
    store = tmp_path / "payloads"
    code, _, err = await _agcore("plan", "run", str(plan), *common, "--payload-store", str(store),
                                 "--max-snapshot-bytes", "0")
    assert code == 0, err
    assert (await _started_with(client, f"all-{task_queue}"))["max_snapshot_bytes"] is None


@pytest.mark.parametrize(("args", "said"), [
    (("--max-snapshot-bytes", "0"), "add --payload-store DIR"),
    (("--max-snapshot-bytes", "500"), "at least 1000"),
])
async def test_a_snapshot_budget_that_cannot_work_is_a_usage_error(
    client: Client, task_queue: str, args: tuple[str, ...], said: str
) -> None:
    address = client.service_client.config.target_host
    code, _, err = await _agcore("run", "--temporal", address, "--task-queue", task_queue, *args, "hello")
    assert code == 2
    assert said in err


async def test_a_snapshot_budget_without_temporal_is_a_usage_error() -> None:
    code, _, err = await _agcore("run", "--max-snapshot-bytes", "5000", "hello")
    assert code == 2
    assert "only with --temporal" in err


async def test_a_durable_run_shows_its_tool_calls_and_results_in_order(
    client: Client, task_queue: str
) -> None:
    address = client.service_client.config.target_host
    code, out, err = await _agcore("run", "--temporal", address, "--task-queue", task_queue, "--yes",
                                   'call echo {"text": "one"} && call echo {"text": "two"}')
    assert code == 0, err
    lines = [line.strip() for line in out.splitlines()]
    calls = [i for i, line in enumerate(lines) if line.startswith("▸ echo(")]
    results = [i for i, line in enumerate(lines) if line.startswith("✓ echoed")]
    answer = next(i for i, line in enumerate(lines) if "done: echoed one | echoed two" in line)
    assert len(calls) == 2, out  # each once
    assert len(results) == 2, out
    assert max(calls) < min(results), out  # as it happened
    assert max(results) < answer, out
    assert out.count("done: echoed one | echoed two") == 1


async def test_a_session_run_shows_only_its_own_turns_tools(client: Client, task_queue: str) -> None:
    address = client.service_client.config.target_host
    session = f"tools-{task_queue}"
    outs = []
    for text in ("first", "second"):
        code, out, err = await _agcore("run", "--temporal", address, "--task-queue", task_queue, "--yes",
                                       "--session", session, f'call echo {{"text": "{text}"}}')
        assert code == 0, err
        outs.append(out)
    assert "✓ echoed first" in outs[0]
    assert "✓ echoed first" not in outs[1]  # the earlier turn's tools are not this run's
    assert outs[1].count("✓ echoed second") == 1


async def test_a_healthy_workers_running_tool_is_not_said_to_miss_heartbeats(
    client: Client, task_queue: str
) -> None:
    from agcore.integrations.temporal import DurableSession, workflow_status

    address = client.service_client.config.target_host
    session = await DurableSession.start(client, f"beat-{task_queue}", task_queue=task_queue)
    running = await session.start_turn('call slow {"seconds": 12}')
    # The SDK sends the tool's heartbeats (one a second) to Temporal at most every 8 s of its 10 s
    # timeout: wait until the server's last one is several seconds old.
    with anyio.fail_after(30):
        while True:
            pending = (await workflow_status(client, session.session_id)).pending
            if pending and pending[0].started and pending[0].waiting_for >= 4:
                break
            await anyio.sleep(0.2)
    assert pending[0].heartbeat_timeout == 10
    code, out, err = await _agcore("session", "status", session.session_id, "--address", address)
    assert code == 0, err
    assert "agcore.tool_call: running, attempt 1" in out
    assert "no heartbeat" not in out
    assert (await running.result()).text == "done: slept 12.0"
    await session.close()


@pytest.mark.parametrize(("started", "quiet", "timeout", "overdue"), [
    (True, 7.9, 10.0, False),  # within the SDK's throttled interval: a live worker looks like this
    (True, 9.5, 10.0, True),  # past it: no heartbeat that a live worker would have sent
    (True, 30.0, None, False),  # a call with no heartbeat timeout never heartbeats
    (False, 30.0, 10.0, False),  # not started: waiting for a worker, not quiet
])
def test_a_heartbeat_is_overdue_only_past_the_sdks_throttled_interval(
    started: bool, quiet: float, timeout: float | None, overdue: bool
) -> None:
    from agcore.integrations.temporal import PendingCall

    call = PendingCall(name="agcore.tool_call", attempt=1, started=started, waiting_for=quiet,
                       heartbeat_timeout=timeout)
    assert call.heartbeat_overdue() is overdue
