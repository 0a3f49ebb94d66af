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
from pathlib import Path

import anyio
import pytest
from temporalio.client import Client

from agcore.agent import UserInput
from agcore.integrations.temporal import DurableSession, create_worker
from tests.integrations.temporal._agents import make_bundle
from tests.integrations.temporal.conftest import ROOT, replay_task_queue, start_worker_process

pytestmark = pytest.mark.anyio


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
    workflow_id = re.search(r"workflow (\w+)", out)  # the plan file has no id: a new one
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


async def _read_until(stream: object, text: bytes, seconds: float = 30) -> bytes:
    said = b""
    with anyio.fail_after(seconds):
        async for chunk in stream:  # type: ignore[attr-defined]
            said += chunk
            if text in said:
                return said
    raise AssertionError(f"{text!r} never came; said {said!r}")


async def test_plan_run_waits_for_a_worker_and_status_needs_none(client: Client, tmp_path: Path) -> None:
    address = client.service_client.config.target_host
    queue = f"cli-{uuid.uuid4().hex[:8]}"
    plan_id = f"release-{queue}"
    plan = tmp_path / "plan.yaml"
    plan.write_text(f"id: {plan_id}\ngoal: cli\nsteps:\n"
                    '  - id: a\n    description: \'call echo {"text": "A"}\'\n'
                    "  - id: b\n    description: say b\n")
    running = await anyio.open_process(
        [sys.executable, "-m", "agcore.cli", "plan", "run", str(plan), "--temporal", address,
         "--task-queue", queue],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
    )
    try:
        assert running.stdout is not None
        said = await _read_until(running.stdout, b"agcore worker MODULE:FUNCTION")
        # One clear line, the plan file's id naming the workflow, no traceback.
        assert f"no worker is polling task queue '{queue}'".encode() in said
        assert f"workflow {plan_id}".encode() in said
        code, out, err = await _agcore("plan", "status", plan_id, "--address", address)
        assert code == 0, err
        assert f"plan {plan_id}: waiting for a worker; 0 of 2 steps done" in out
        async with create_worker(client, make_bundle, task_queue=queue):
            with anyio.fail_after(60):
                await running.wait()
            rest = await running.stdout.receive() if running.returncode is None else b""
        assert running.returncode == 0, rest
    finally:
        if running.returncode is None:
            running.kill()
            await running.wait()
    # No worker now: the status comes from Temporal itself, at once.
    code, out, err = await _agcore("plan", "status", plan_id, "--address", address)
    assert code == 0, err
    assert f"plan {plan_id}: done; 2 of 2 steps done" in out
    assert "done: echoed A" in out
    # The same command again: the plan completed, so nothing runs twice.
    code, out, err = await _agcore("plan", "run", str(plan), "--temporal", address, "--task-queue", queue)
    assert code == 0, err
    assert "completed earlier" in out
    runs = [e async for e in client.list_workflows(f"WorkflowId = '{plan_id}'")]
    assert len(runs) == 1


async def test_a_durable_session_prints_only_each_runs_own_answer(client: Client, task_queue: str) -> None:
    address = client.service_client.config.target_host
    session_id = f"turns-{task_queue}"
    outputs = []
    for word in ("ALPHA", "BRAVO", "CHARLIE"):
        code, out, err = await _agcore("run", "--temporal", address, "--task-queue", task_queue, "--yes",
                                       "--session", session_id, word)
        assert code == 0, err
        outputs.append(out)
    assert [o.count("echo: ") for o in outputs] == [1, 1, 1], outputs  # not the earlier turns again
    assert [re.findall(r"echo: (\w+)", o) for o in outputs] == [["ALPHA"], ["BRAVO"], ["CHARLIE"]]
    history = await DurableSession.attach(client, session_id).history()
    assert [m.content for m in history if isinstance(m, UserInput)] == ["ALPHA", "BRAVO", "CHARLIE"]


async def test_session_status_says_idle_and_waiting_for_approval(client: Client, task_queue: str) -> None:
    address = client.service_client.config.target_host
    session_id = f"desk-{task_queue}"
    for text in ("first", "second"):
        code, out, err = await _agcore("run", "--temporal", address, "--task-queue", task_queue,
                                       "--session", session_id, text)
        assert code == 0, err
        assert out.count(f"echo: {text}") == 1
    code, out, err = await _agcore("session", "status", session_id, "--address", address)
    assert code == 0, err
    assert f"session {session_id}: idle; 2 turns" in out
    assert "last turn: done" in out
    session = DurableSession.attach(client, session_id)
    running = await session.start_turn('call delete_file {"path": "x"}')
    with anyio.fail_after(30):
        while not await session.awaiting_confirmation():  # noqa: ASYNC110 - the workflow's state
            await anyio.sleep(0.05)
    code, out, err = await _agcore("session", "status", session_id, "--address", address)
    assert f"session {session_id}: waiting for approval (delete_file)" in out, err
    [call] = await session.awaiting_confirmation()
    await session.confirm(call.id, True)
    assert (await running.result()).text == "done: deleted x"
    code, _, err = await _agcore("plan", "status", session_id, "--address", address)
    assert code == 2
    assert f"'{session_id}' is a session workflow: run `agcore session status {session_id}`" in err


async def test_a_broken_worker_fails_run_and_plan_run_with_its_message(
    client: Client, tmp_path: Path
) -> None:
    from tests.integrations.temporal._agents import make_bundle_without_key

    address = client.service_client.config.target_host
    queue = f"cli-{uuid.uuid4().hex[:8]}"
    plan = tmp_path / "plan.yaml"
    plan.write_text("goal: cli\nsteps:\n  - id: a\n    description: say a\n")
    async with create_worker(client, make_bundle_without_key, task_queue=queue):
        code, _, err = await _agcore("run", "--temporal", address, "--task-queue", queue, "--session",
                                     f"broken-{queue}", "hello")
        assert code == 1
        assert "MissingKeyError: AGCORE_TEST_KEY is not set" in err
        assert "Traceback" not in err
        code, _, err = await _agcore("plan", "run", str(plan), "--temporal", address, "--task-queue", queue)
        assert code == 1
        assert "MissingKeyError: AGCORE_TEST_KEY is not set" in err
        assert "Traceback" not in err
    code, out, err = await _agcore("session", "status", f"broken-{queue}", "--address", address)
    assert code == 0, err
    assert "failed: the worker's bundle factory failed: MissingKeyError" in out


async def test_worker_imports_the_factory_from_the_current_directory(client: Client, tmp_path: Path) -> None:
    address = client.service_client.config.target_host
    queue = f"cli-{uuid.uuid4().hex[:8]}"
    (tmp_path / "myagents.py").write_text(
        "from tests.integrations.temporal._agents import make_bundle as base\n\n"
        "def make_bundle():\n    return base()\n"
    )
    console_script = Path(sys.executable).parent / "agcore"  # not `python -m`, which adds the cwd itself
    process = await anyio.open_process(
        [str(console_script), "worker", "myagents:make_bundle", "--address", address, "--task-queue", queue],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert process.stdout is not None
        await _read_until(process.stdout, b"worker ready")
        session = await DurableSession.start(client, f"cwd-{queue}", task_queue=queue)
        assert (await session.turn("from the cwd")).text == "echo: from the cwd"
        await session.close()
    finally:
        process.kill()
        await process.wait()


async def test_dev_server_serves_durable_runs_with_the_dispatch_knob(tmp_path: Path) -> None:
    from agcore.integrations.temporal import connect

    port = 17000 + uuid.uuid4().int % 2000
    process = await anyio.open_process(
        [sys.executable, "-m", "agcore.cli", "dev-server", "--port", str(port), "--ui-port", str(port + 1),
         "--db-filename", str(tmp_path / "temporal.db")],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        with anyio.fail_after(30):
            while True:
                try:
                    client = await connect(f"127.0.0.1:{port}")
                    break
                except RuntimeError:  # not listening yet
                    await anyio.sleep(0.2)
        queue = f"dev-{uuid.uuid4().hex[:8]}"
        async with create_worker(client, make_bundle, task_queue=queue):
            session = await DurableSession.start(client, f"dev-{queue}", task_queue=queue)
            assert (await session.turn('call echo {"text": "d"}')).text == "done: echoed d"
            await session.close()
        command_line = (await anyio.Path(f"/proc/{process.pid}/cmdline").read_bytes()).split(b"\0")
        assert b"history.transferProcessorMaxPollRPS=10000" in command_line  # the server it became
    finally:
        process.terminate()
        await process.wait()
    assert (tmp_path / "temporal.db").exists()


async def test_compaction_options_reach_the_durable_plan(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    from agcore.integrations.temporal import PlanInput

    address = client.service_client.config.target_host
    plan = tmp_path / "plan.yaml"
    plan.write_text(f"id: compact-{task_queue}\ngoal: cli\nsteps:\n  - id: a\n    description: say a\n")
    code, _, err = await _agcore("plan", "run", str(plan), "--temporal", address,
                                 "--task-queue", task_queue, "--compact", "--context-window", "4096")
    assert code == 0, err
    history = await client.get_workflow_handle(f"compact-{task_queue}").fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    [given] = await client.data_converter.decode(started.input.payloads, [PlanInput])
    assert given.compaction is not None
    assert given.compaction.max_context_tokens == 4096


async def test_status_tells_a_worker_killed_a_moment_ago_from_a_live_one(
    client: Client, tmp_path: Path
) -> None:
    from agcore.integrations.temporal import workers_polling, workflow_status

    address = client.service_client.config.target_host
    queue = f"dead-{uuid.uuid4().hex[:8]}"
    worker = await start_worker_process(address, queue, {**os.environ, "PYTHONPATH": str(ROOT)})
    session = await DurableSession.start(client, f"s-{queue}", task_queue=queue)
    assert (await session.turn("hello")).text == "echo: hello"
    code, out, err = await _agcore("session", "status", session.session_id, "--address", address)
    assert f"session {session.session_id}: idle; 1 turn" in out, err
    assert re.search(r"1 worker polling, last seen \d+ s ago", out)
    worker.kill()
    await worker.wait()
    # Temporal still lists the killed worker's last poll, for about a minute...
    assert await workers_polling(client, queue) == 1
    plan_id = f"plan-{queue}"
    plan = tmp_path / "plan.yaml"
    plan.write_text(f"id: {plan_id}\ngoal: g\nsteps:\n  - id: a\n    description: say a\n")
    running = await anyio.open_process(
        [sys.executable, "-m", "agcore.cli", "plan", "run", str(plan), "--temporal", address,
         "--task-queue", queue],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
    )
    try:
        assert running.stdout is not None
        # ...but a workflow task nobody picks up says there is no live worker, to plan run too.
        said = await _read_until(running.stdout, b"agcore worker MODULE:FUNCTION")
        assert f"no worker is polling task queue '{queue}'".encode() in said
        assert (await workflow_status(client, plan_id)).state == "waiting for a worker"
        code, out, err = await _agcore("plan", "status", plan_id, "--address", address)
        assert code == 0, err
        assert f"plan {plan_id}: waiting for a worker; 0 of 1 steps done" in out
        assert "1 worker polling, last seen" in out
        assert "the workers Temporal still lists are gone or too busy" in out
        assert f"agcore worker MODULE:FUNCTION --task-queue {queue}" in out
        async with create_worker(client, make_bundle, task_queue=queue):
            with anyio.fail_after(60):
                await running.wait()
        assert running.returncode == 0
    finally:
        if running.returncode is None:
            running.kill()
            await running.wait()


async def test_a_300_kb_plan_step_runs_with_the_payload_store(client: Client, tmp_path: Path) -> None:
    from temporalio.converter import ExternalStorage

    from agcore.integrations.temporal import FileStorageDriver, connect

    address = client.service_client.config.target_host
    store = tmp_path / "payloads"
    stored = await connect(address, external_storage=ExternalStorage(drivers=[FileStorageDriver(store)]))
    queue = f"big-{uuid.uuid4().hex[:8]}"
    plan_id = f"big-{queue}"
    big = "y" * 300_000
    plan = tmp_path / "plan.yaml"
    plan.write_text(json.dumps({"id": plan_id, "goal": "big", "steps": [
        {"id": "a", "description": f'call echo {{"text": "{big}"}}'},
        {"id": "b", "description": "say b"},
    ]}))
    async with create_worker(stored, make_bundle, task_queue=queue):
        code, out, err = await _agcore("plan", "run", str(plan), "--temporal", address, "--task-queue", queue,
                                       "--payload-store", str(store))
    assert code == 0, err + out
    assert "step a: completed" in out
    assert list(store.glob("*.payload"))  # the big step went to the store, not the history
    history = await client.get_workflow_handle(plan_id).fetch_history()
    assert len(history.to_json()) < 300_000
    code, out, err = await _agcore("plan", "status", plan_id, "--address", address,
                                   "--payload-store", str(store))
    assert code == 0, err
    assert f"plan {plan_id}: done; 2 of 2 steps done" in out


async def test_a_worker_without_the_sandbox_serves_sessions_that_replay_in_it(client: Client) -> None:
    address = client.service_client.config.target_host
    queue = f"bare-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    worker = await start_worker_process(address, queue, env, "--no-sandbox")
    try:
        session = await DurableSession.start(client, f"s-{queue}", task_queue=queue)
        assert (await session.turn('call echo {"text": "bare"}')).text == "done: echoed bare"
        await session.close()
    finally:
        worker.kill()
        await worker.wait()
    await replay_task_queue(client, queue)  # the sandboxed replayer: the same workflow code, deterministic
