"""`agcore run --temporal --session ID` as people use it: Ctrl-C (a real SIGINT to a real subprocess)
cancels that run's turn and nothing else, an ended session is said so, a running session or plan is
served on its own task queue, concurrent runs print only their own turn, status commands name the
other kind of workflow. The worker runs in the test process, on a real dev server.

Temporal's SDK is asyncio-only: these tests run on asyncio only (see conftest.py).
"""

from __future__ import annotations

import os
import re
import signal
import sys
import uuid
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process
from temporalio.client import Client, WorkflowExecutionStatus

from agcore.agent import UserInput
from agcore.integrations.temporal import DurableSession, SessionClosedError, start_plan
from tests.integrations.temporal.conftest import ROOT

pytestmark = pytest.mark.anyio

ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}


@pytest.fixture
def slow_marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the test agent's ``slow`` tool writes its label to when it starts (in this process,
    where the worker runs)."""
    marker = tmp_path / "slow-started"
    monkeypatch.setenv("AGCORE_TEMPORAL_SLOW_MARKER", str(marker))
    return marker


async def _agcore(*args: str) -> tuple[int, str, str]:
    done = await anyio.run_process([sys.executable, "-m", "agcore.cli", *args], cwd=ROOT, check=False,
                                   env=ENV)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def _start(*args: str) -> Process:
    return await anyio.open_process([sys.executable, "-m", "agcore.cli", *args], cwd=ROOT, env=ENV)


async def _finish(process: Process) -> tuple[int, str, str]:
    """Wait for ``process`` to exit; its code, stdout and stderr."""
    assert process.stdout is not None
    assert process.stderr is not None
    out, err = b"", b""
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:

            async def read_err() -> None:
                nonlocal err
                async for chunk in process.stderr:  # type: ignore[union-attr]
                    err += chunk

            group.start_soon(read_err)
            async for chunk in process.stdout:
                out += chunk
        code = await process.wait()
    return code, out.decode(), err.decode()


async def _wait_for(path: Path) -> None:
    with anyio.fail_after(60):
        while not await anyio.Path(path).exists():  # noqa: ASYNC110 - another process writes it
            await anyio.sleep(0.05)


async def _said_by_user(client: Client, session_id: str) -> list[str]:
    history = await DurableSession.attach(client, session_id).history()
    return [str(m.content) for m in history if isinstance(m, UserInput)]


async def _close(client: Client, session_id: str) -> None:
    # Closed, not left for the worker's shutdown to evict: on CPython 3.11 evicting a session whose
    # turn was cancelled leaves this process's next ast.parse failing (a SystemError at pytest's end).
    await DurableSession.attach(client, session_id).close()


async def test_ctrl_c_cancels_the_runs_turn_and_the_session_goes_on(
    client: Client, task_queue: str, slow_marker: Path
) -> None:
    address = client.service_client.config.target_host
    session_id = f"keep-{task_queue}"
    code, _, err = await _agcore("run", "--temporal", address, "--task-queue", task_queue, "--session",
                                 session_id, "first")
    assert code == 0, err
    process = await _start("run", "--temporal", address, "--task-queue", task_queue, "--session",
                           session_id, 'call slow {"seconds": 60, "label": "long"}')
    await _wait_for(slow_marker)
    process.send_signal(signal.SIGINT)
    code, out, err = await _finish(process)
    assert code == 130, err
    assert "cancelled" in out
    assert "Traceback" not in err
    description = await client.get_workflow_handle(session_id).describe()
    assert description.status == WorkflowExecutionStatus.RUNNING  # the session stays open
    code, out, err = await _agcore("run", "--temporal", address, "--task-queue", task_queue, "--session",
                                   session_id, "second")
    assert code == 0, err
    assert "echo: second" in out
    said = await _said_by_user(client, session_id)
    assert said == ["first", 'call slow {"seconds": 60, "label": "long"}', "second"]
    await _close(client, session_id)


async def test_ctrl_c_leaves_another_clients_turn_running(
    client: Client, task_queue: str, slow_marker: Path
) -> None:
    address = client.service_client.config.target_host
    session_id = f"shared-{task_queue}"
    session = await DurableSession.start(client, session_id, task_queue=task_queue, stream_text=True)
    theirs = await session.start_turn('call slow {"seconds": 2, "label": "theirs"}')
    await _wait_for(slow_marker)
    process = await _start("run", "--temporal", address, "--task-queue", task_queue, "--session",
                           session_id, "mine, waiting behind theirs")
    assert process.stdout is not None
    with anyio.fail_after(30):  # the run has started its turn (it waits behind the running one)
        said = b""
        async for chunk in process.stdout:
            said += chunk
            if b"workflow " in said:
                break
    await anyio.sleep(0.5)
    process.send_signal(signal.SIGINT)
    code, _, err = await _finish(process)
    assert code == 130, err
    assert (await theirs.result()).text == "done: slept 2.0"
    assert "mine, waiting behind theirs" not in await _said_by_user(client, session_id)
    assert (await session.turn("after")).text == "echo: after"
    await _close(client, session_id)


async def test_cancel_turn_cancels_one_turn_running_or_waiting(
    client: Client, task_queue: str, slow_marker: Path
) -> None:
    session = await DurableSession.start(client, f"api-{task_queue}", task_queue=task_queue)
    running = await session.start_turn('call slow {"seconds": 60, "label": "a"}')
    waiting = await session.start_turn("never runs", turn_id=f"waiting-{task_queue}")
    await _wait_for(slow_marker)
    await session.cancel_turn(waiting.id)
    assert (await waiting.result()).stop == "cancelled"
    await session.cancel_turn(running.id)
    cancelled = await running.result()
    assert cancelled.stop == "cancelled"
    assert (await session.turn("still here")).text == "echo: still here"
    assert await _said_by_user(client, session.session_id) == [
        'call slow {"seconds": 60, "label": "a"}', "still here"
    ]
    await _close(client, session.session_id)


async def test_a_session_that_ended_is_not_replaced_by_an_empty_one(client: Client, task_queue: str) -> None:
    address = client.service_client.config.target_host
    session_id = f"ended-{task_queue}"
    session = await DurableSession.start(client, session_id, task_queue=task_queue)
    await session.turn("remember me")
    await session.handle.cancel()
    with anyio.fail_after(30):
        while (await session.handle.describe()).status == WorkflowExecutionStatus.RUNNING:  # noqa: ASYNC110
            await anyio.sleep(0.05)
    code, _, err = await _agcore("run", "--temporal", address, "--task-queue", task_queue, "--session",
                                 session_id, "hello again")
    assert code == 2
    assert f"session '{session_id}' has ended (Temporal status: canceled)" in err
    assert "another --session id" in err
    runs = [e async for e in client.list_workflows(f"WorkflowId = '{session_id}'")]
    assert len(runs) == 1  # no new, empty run under its id


async def test_a_running_session_and_plan_are_served_on_their_own_task_queue(
    client: Client, task_queue: str, slow_marker: Path, tmp_path: Path
) -> None:
    address = client.service_client.config.target_host
    session_id = f"queue-{task_queue}"
    await DurableSession.start(client, session_id, task_queue=task_queue, stream_text=True)
    # No --task-queue: the default queue ('agcore') has no worker here, the session's has.
    code, out, err = await _agcore("run", "--temporal", address, "--session", session_id, "hello")
    assert code == 0, err
    assert f"is on task queue {task_queue!r}, not 'agcore'" in out
    assert "echo: hello" in out
    assert (f"`agcore run --temporal {address} --task-queue {task_queue} --session {session_id} TASK` "
            "continues it") in out
    plan_file = tmp_path / "plan.yaml"
    plan_id = f"plan-{task_queue}"
    plan_file.write_text(f'id: {plan_id}\ngoal: q\nsteps:\n  - id: a\n    description: \'call slow '
                         '{"seconds": 5, "label": "plan"}\'\n')
    from agcore.cli._plan import load_plan

    # Its step takes 5 s: the CLI (a new process) attaches while it runs, not after it ended.
    await start_plan(client, load_plan(plan_file), workflow_id=plan_id, task_queue=task_queue)
    code, out, err = await _agcore("plan", "run", str(plan_file), "--temporal", address)
    assert code == 0, err
    assert f"is on task queue {task_queue!r}, not 'agcore'" in out
    assert "step a: completed" in out
    assert f"(agcore plan status {plan_id} --address {address})" in out


async def test_status_of_a_closed_workflow_of_the_other_kind_says_which_command(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    address = client.service_client.config.target_host
    session = await DurableSession.start(client, f"closed-{task_queue}", task_queue=task_queue)
    await session.turn("hi")
    await session.close()
    plan_file = tmp_path / "plan.yaml"
    plan_id = f"done-{task_queue}"
    plan_file.write_text(f"id: {plan_id}\ngoal: q\nsteps:\n  - id: a\n    description: say a\n")
    code, _, err = await _agcore("plan", "run", str(plan_file), "--temporal", address, "--task-queue",
                                 task_queue)
    assert code == 0, err
    code, _, err = await _agcore("session", "status", plan_id, "--address", address)
    assert code == 2
    assert f"'{plan_id}' is a plan workflow: run `agcore plan status {plan_id}`" in err
    code, _, err = await _agcore("plan", "status", session.session_id, "--address", address)
    assert code == 2
    assert (f"'{session.session_id}' is a session workflow: run `agcore session status "
            f"{session.session_id}`") in err
    code, out, err = await _agcore("session", "status", session.session_id, "--address", address)
    assert code == 0, err
    assert f"session {session.session_id}: done" in out


async def test_concurrent_runs_on_one_session_print_only_their_own_turn(
    client: Client, task_queue: str, slow_marker: Path
) -> None:
    address = client.service_client.config.target_host
    session_id = f"both-{task_queue}"
    first = await _start("run", "--temporal", address, "--task-queue", task_queue, "--session", session_id,
                         'call slow {"seconds": 2, "label": "first"}')
    await _wait_for(slow_marker)
    second = await _start("run", "--temporal", address, "--task-queue", task_queue, "--session",
                          session_id, "BRAVO")
    code, out_first, err = await _finish(first)
    assert code == 0, err
    code, out_second, err = await _finish(second)
    assert code == 0, err
    assert "done: slept 2.0" in out_first
    assert "BRAVO" not in out_first
    assert out_second.count("echo: BRAVO") == 1
    assert "slept" not in out_second


async def test_no_input_at_the_approval_prompt_refuses_the_call_as_in_process(
    client: Client, task_queue: str
) -> None:
    address = client.service_client.config.target_host
    done = await anyio.run_process(
        [sys.executable, "-m", "agcore.cli", "run", "--temporal", address, "--task-queue", task_queue,
         'call delete_file {"path": "kept.txt"}'], cwd=ROOT, check=False, env=ENV, input=b"",
    )
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, err
    assert "Allow delete_file" in out
    assert "(no input)" in out
    assert "Traceback" not in err
    assert "deleted kept.txt" not in out  # refused: the tool did not run


async def test_a_turn_after_close_says_the_session_has_ended(client: Client, task_queue: str) -> None:
    session = await DurableSession.start(client, f"after-{task_queue}", task_queue=task_queue)
    await session.turn("one")
    await session.close()
    with pytest.raises(SessionClosedError, match=r"has ended \(completed\).*start a new session"):
        await session.turn("two")


async def test_sigterm_while_waiting_for_a_worker_leaves_no_idle_workflow(client: Client) -> None:
    address = client.service_client.config.target_host
    queue = f"nobody-{uuid.uuid4().hex[:8]}"
    process = await _start("run", "--temporal", address, "--task-queue", queue, "hello")
    assert process.stdout is not None
    said = b""
    with anyio.fail_after(30):
        async for chunk in process.stdout:
            said += chunk
            if b"no worker is polling" in said:
                break
    workflow_id = re.search(rb"workflow (run-\w+)", said)
    assert workflow_id is not None
    process.send_signal(signal.SIGTERM)
    code, _, err = await _finish(process)
    assert code == 130, err
    description = await client.get_workflow_handle(workflow_id.group(1).decode()).describe()
    assert description.status == WorkflowExecutionStatus.TERMINATED


def test_no_server_says_how_to_start_one() -> None:
    import subprocess

    done = subprocess.run([sys.executable, "-m", "agcore.cli", "run", "--temporal", "127.0.0.1:1", "hi"],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 4
    assert "cannot reach Temporal at 127.0.0.1:1" in done.stderr
    assert "`agcore dev-server`" in done.stderr


async def test_a_closed_session_is_continued_from_its_last_snapshot(client: Client, task_queue: str) -> None:
    address = client.service_client.config.target_host
    session_id = f"closed-{task_queue}"
    session = await DurableSession.start(client, session_id, task_queue=task_queue)
    await session.turn("remember me")
    await session.close()
    code, out, err = await _agcore("run", "--temporal", address, "--session", session_id, "again")
    assert code == 0, err
    assert f"session {session_id} was closed: continued from its last snapshot" in out
    assert "echo: again" in out
    assert await _said_by_user(client, session_id) == ["remember me", "again"]
    code, out, err = await _agcore("session", "status", session_id, "--address", address)
    assert code == 0, err
    assert f"session {session_id}: idle; 2 turns" in out
    await _close(client, session_id)


async def test_ctrl_c_on_a_one_off_run_cancels_it_with_exit_130(
    client: Client, task_queue: str, slow_marker: Path
) -> None:
    address = client.service_client.config.target_host
    process = await _start("run", "--temporal", address, "--task-queue", task_queue,
                           'call slow {"seconds": 60, "label": "once"}')
    await _wait_for(slow_marker)
    process.send_signal(signal.SIGINT)
    code, out, err = await _finish(process)
    assert code == 130, err
    assert "⏹ cancelled (interrupted)" in out
    assert "Traceback" not in err
    workflow_id = re.search(r"workflow (run-\w+)", out)
    assert workflow_id is not None
    handle = client.get_workflow_handle(workflow_id.group(1))
    with anyio.fail_after(30):  # the one-off session ends: nothing left idle
        while (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:  # noqa: ASYNC110
            await anyio.sleep(0.05)
    assert (await handle.describe()).status == WorkflowExecutionStatus.CANCELED
