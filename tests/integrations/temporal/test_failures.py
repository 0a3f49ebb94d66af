"""Every failure reaches the caller, promptly and in words (real dev server, real worker processes):
a bundle factory that raises fails the turn and the plan with its own type and message; a model call
lost with its worker is tried again after a heartbeat timeout, not after the call's whole timeout; a
turn sent while the session continues as new is retried by the client, unseen.

Temporal's SDK is asyncio-only: these tests run on asyncio only (see conftest.py).
"""

from __future__ import annotations

import os
import random
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from temporalio.client import Client, WorkflowFailureError, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from agcore.agent import Plan, Step
from agcore.integrations.temporal import (
    ActivityOptions,
    AgentActivities,
    DurableSession,
    create_worker,
    start_plan,
)
from tests.integrations.temporal._agents import (
    make_bundle,
    make_bundle_without_key,
    make_misconfigured_bundle,
)
from tests.integrations.temporal.conftest import (
    ROOT,
    recorded_activities,
    replay_task_queue,
    start_worker_process,
)

pytestmark = pytest.mark.anyio

BROKEN_FACTORIES = [
    pytest.param(make_bundle_without_key, "MissingKeyError", "AGCORE_TEST_KEY is not set", id="any-type"),
    pytest.param(make_misconfigured_bundle, "ConfigError", "max_turns must be positive", id="ConfigError"),
]


def _queue() -> str:
    return f"fail-{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize(("factory", "type_name", "message"), BROKEN_FACTORIES)
async def test_a_factory_error_fails_the_turn_with_its_type_and_message(
    client: Client, factory: Callable[[], object], type_name: str, message: str
) -> None:
    queue = _queue()
    activities = AgentActivities(factory)  # type: ignore[arg-type]
    async with create_worker(client, factory, task_queue=queue, activities=activities):  # type: ignore[arg-type]
        session = await DurableSession.start(client, f"s-{queue}", task_queue=queue)
        started = time.monotonic()
        with anyio.fail_after(20), pytest.raises(WorkflowUpdateFailedError) as failed:
            await session.turn("hello")
        elapsed = time.monotonic() - started
        # The update itself carries the worker's error, not "the workflow completed before the update".
        cause = failed.value.cause
        assert isinstance(cause, ApplicationError)
        assert cause.type == type_name
        assert message in cause.message
        assert type_name in cause.message
        with pytest.raises(WorkflowFailureError) as workflow_failed:
            await session.handle.result()
        assert message in str(workflow_failed.value.cause)
    assert activities.calls["describe_agent"] == 1  # not retried: a missing key does not mend itself
    print(f"factory error reached the client in {elapsed * 1000:.0f} ms")


async def test_a_factory_error_fails_the_plan_with_its_type_and_message(client: Client) -> None:
    queue = _queue()
    plan = Plan(goal="g", steps=[Step(id="a", description="say a")])
    async with create_worker(client, make_bundle_without_key, task_queue=queue):
        handle = await start_plan(client, plan, workflow_id=f"p-{queue}", task_queue=queue)
        with anyio.fail_after(20), pytest.raises(WorkflowFailureError) as failed:
            await handle.result()
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError)
    assert cause.type == "MissingKeyError"
    assert "AGCORE_TEST_KEY is not set" in cause.message


async def test_a_turn_to_a_session_whose_worker_breaks_later_says_why(client: Client) -> None:
    # The session opened on a good worker; the model and tool calls then land on a broken one.
    queue = _queue()
    async with create_worker(client, make_bundle, task_queue=queue):
        session = await DurableSession.start(client, f"s-{queue}", task_queue=queue)
        assert (await session.turn("first")).text == "echo: first"
    async with create_worker(client, make_bundle_without_key, task_queue=queue):
        with anyio.fail_after(20):
            outcome = await session.turn("second")
        assert outcome.stop == "error"
        assert "MissingKeyError: AGCORE_TEST_KEY is not set" in (outcome.error or "")
        await session.close()


@pytest.mark.parametrize("local", [True, False], ids=["local-activity", "scheduled-activity"])
async def test_a_model_call_lost_with_its_worker_is_retried_after_the_heartbeat_timeout(
    client: Client, tmp_path: Path, local: bool
) -> None:
    queue = _queue()
    log = tmp_path / "calls.log"
    address = client.service_client.config.target_host
    env = {**os.environ, "AGCORE_TEMPORAL_TOOL_LOG": str(log), "PYTHONPATH": str(ROOT)}
    process = await start_worker_process(address, queue, env)
    # llm_timeout stays at its 300 s default: only the heartbeat timeout (a scheduled call) or the
    # workflow task's timeout (a local one) can bring the retry sooner.
    session = await DurableSession.start(
        client, f"s-{queue}", task_queue=queue,
        options=ActivityOptions(llm_heartbeat_timeout=2, local_model_calls=local),
    )
    try:
        running = await session.start_turn("slow-model 3")
        with anyio.fail_after(30):
            while not log.exists() or "llm" not in log.read_text():  # noqa: ASYNC110 - another process writes it
                await anyio.sleep(0.05)
    finally:
        process.kill()
        await process.wait()
    killed = time.monotonic()
    async with create_worker(client, make_bundle, task_queue=queue):
        with anyio.fail_after(60):
            outcome = await running.result()
        retried_after = time.monotonic() - killed
        assert outcome.text == "thought for 3.0"
        assert retried_after < 30  # seconds, not llm_timeout's 300
        await session.close()
    print(f"model call retried and answered {retried_after:.1f} s after its worker was killed")
    await replay_task_queue(client, queue)


async def test_an_idempotent_tool_is_a_local_activity_run_again_after_a_lost_worker(
    client: Client, tmp_path: Path
) -> None:
    queue = _queue()
    log, marker = tmp_path / "calls.log", tmp_path / "slow-started"
    address = client.service_client.config.target_host
    env = {**os.environ, "AGCORE_TEMPORAL_TOOL_LOG": str(log), "AGCORE_TEMPORAL_SLOW_MARKER": str(marker),
           "PYTHONPATH": str(ROOT)}
    first = await start_worker_process(address, queue, env, "--idempotent-tool", "slow")
    session = await DurableSession.start(client, f"s-{queue}", task_queue=queue)
    try:
        running = await session.start_turn('call slow {"seconds": 5, "label": "x"}')
        with anyio.fail_after(30):
            while not marker.exists():  # noqa: ASYNC110 - another process writes it
                await anyio.sleep(0.05)
    finally:
        first.kill()
        await first.wait()
    second = await start_worker_process(address, queue, env, "--idempotent-tool", "slow")
    try:
        with anyio.fail_after(60):
            outcome = await running.result()
        assert outcome.text == "done: slept 5.0"  # run again, not answered "interrupted"
        await session.close()
    finally:
        second.kill()
        await second.wait()
    calls = log.read_text().split()
    assert calls.count("slow:x") == 2
    assert calls.count("slow-done:x") == 1
    history = await session.handle.fetch_history()
    assert recorded_activities(history)["agcore.tool_call"] == 1  # one marker: the attempt that finished
    await replay_task_queue(client, queue)


async def test_turns_racing_continue_as_new_are_retried_by_the_client(client: Client) -> None:
    queue = _queue()
    async with create_worker(client, make_bundle, task_queue=queue):
        session = await DurableSession.start(client, f"s-{queue}", task_queue=queue, max_history_events=100)
        outcomes: list[str] = []

        async def talk(who: int) -> None:
            for i in range(15):
                await anyio.sleep(random.uniform(0, 0.03))  # idle moments, in which the workflow continues
                other = DurableSession.attach(client, session.session_id)  # another client, as in a web app
                outcome = await other.turn(f'call echo {{"text": "{who}-{i}"}}')
                outcomes.append(outcome.text)

        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                for who in range(2):
                    group.start_soon(talk, who)
        assert sorted(outcomes) == sorted(f"done: echoed {w}-{i}" for w in range(2) for i in range(15))
        generation = await session.handle.query("generation")
        assert generation >= 1
        final = await session.close()
        assert final.record.turn_index == 30
    await replay_task_queue(client, queue, at_least=generation + 1)
