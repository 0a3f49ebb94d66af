"""Durable sessions on a real Temporal dev server: turns, tools, confirmations, client tools, steering,
model errors, continue-as-new; every history the tests produce is replayed with Temporal's Replayer.

Temporal's SDK is asyncio-only: these tests run on asyncio only (see conftest.py).
"""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowFailureError, WorkflowUpdateFailedError
from temporalio.exceptions import CancelledError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from agcore.agent import AssistantReply, ConfigError, SystemEvent, ToolResults, UserInput
from agcore.hooks import hookimpl
from agcore.integrations.temporal import (
    OMITTED_KEY,
    ActivityOptions,
    AgentActivities,
    AgentSessionWorkflow,
    CompactionOptions,
    DurableSession,
    SessionInput,
    SessionSnapshot,
    TextChunk,
    assemble_text,
    create_worker,
    workflow_status,
)
from agcore.llm.types import ToolResultBlock, ToolUseBlock
from agcore.memory import SessionRecord
from tests.integrations.temporal._agents import make_bundle, make_streaming_bundle
from tests.integrations.temporal.conftest import (
    ROOT,
    recorded_activities,
    replay_task_queue,
    start_worker_process,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def task_queue() -> str:
    return f"tq-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def activities() -> AgentActivities:
    return AgentActivities(make_bundle)


@pytest.fixture
async def worker(client: Client, task_queue: str, activities: AgentActivities) -> AsyncIterator[Worker]:
    worker = create_worker(client, make_bundle, task_queue=task_queue, activities=activities)
    async with worker:
        yield worker
    await replay_task_queue(client, task_queue)


async def _start(client: Client, task_queue: str, **options: object) -> DurableSession:
    return await DurableSession.start(client, f"s-{uuid.uuid4().hex[:8]}", task_queue=task_queue, **options)


async def test_a_turn_with_a_tool_call_runs_as_activities(
    client: Client, task_queue: str, worker: Worker, activities: AgentActivities
) -> None:
    session = await _start(client, task_queue)
    outcome = await session.turn('call echo {"text": "hi"}')
    assert outcome.stop == "done", outcome.error
    assert outcome.text == "done: echoed hi"
    assert outcome.turns == 2
    assert [type(m) for m in outcome.messages] == [UserInput, AssistantReply, ToolResults, AssistantReply]
    assert activities.calls["llm_call"] == 2
    assert activities.calls["tool:echo"] == 1
    second = await session.turn("hello again")
    assert second.text == "echo: hello again"
    history = await session.history()
    results = [m for m in history if isinstance(m, ToolResults)]
    assert [r.results[0].text for r in results] == ["echoed hi"]
    final = await session.close()
    assert final.record.turn_index == 2
    assert len(final.messages) == 6


@pytest.mark.parametrize("local", [True, False], ids=["local", "scheduled"])
async def test_model_calls_are_local_activities_unless_told_otherwise(
    client: Client, task_queue: str, worker: Worker, local: bool
) -> None:
    session = await _start(client, task_queue, options=ActivityOptions(local_model_calls=local))
    outcome = await session.turn('call echo {"text": "hi"}')
    assert outcome.text == "done: echoed hi"
    await session.close()
    history = await session.handle.fetch_history()
    recorded = recorded_activities(history)
    assert recorded == {"agcore.describe_agent": 1, "agcore.llm_call": 2, "agcore.tool_call": 1}
    scheduled = [e.activity_task_scheduled_event_attributes.activity_type.name for e in history.events
                 if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]
    # Local: the model's replies are markers written by the workflow task that asked for them, so
    # no trip through the server (and no request in the history) per call.
    assert ("agcore.llm_call" in scheduled) is not local
    await replay_task_queue(client, task_queue)


async def _awaiting(session: DurableSession) -> list[ToolUseBlock]:
    """The calls waiting for approval, once there are some (polled through the query)."""
    for _ in range(200):
        waiting = await session.awaiting_confirmation()
        if waiting:
            return waiting
        await anyio.sleep(0.05)
    raise AssertionError("no call came to wait for confirmation")


async def test_a_confirmation_waits_for_the_signal_and_a_query_lists_it(
    client: Client, task_queue: str, worker: Worker, activities: AgentActivities
) -> None:
    session = await _start(client, task_queue)
    running = await session.start_turn('call delete_file {"path": "a.txt"}')
    waiting = await _awaiting(session)
    assert [c.name for c in waiting] == ["delete_file"]
    assert "tool:delete_file" not in activities.calls  # nothing ran before the answer
    await session.confirm(waiting[0].id, True)
    outcome = await running.result()
    assert outcome.text == "done: deleted a.txt"
    assert await session.awaiting_confirmation() == []

    refused = await session.start_turn('call delete_file {"path": "b.txt"}')
    waiting = await _awaiting(session)
    await session.confirm(waiting[0].id, False)
    outcome = await refused.result()
    assert "did not approve" in outcome.text
    assert activities.calls["tool:delete_file"] == 1
    await session.close()


async def test_client_tools_pause_the_workflow_until_their_results_arrive(
    client: Client, task_queue: str, worker: Worker
) -> None:
    session = await _start(client, task_queue)
    paused = await session.turn('call ask_user {"question": "which file?"}')
    assert paused.stop == "client_tools"
    [call] = paused.pending_tool_calls
    assert [c.id for c in await session.pending_client_calls()] == [call.id]
    with pytest.raises(WorkflowUpdateFailedError) as wrong:
        await session.resume([ToolResultBlock(tool_use_id="nope", content="x")])
    assert "answers no pending client call" in str(wrong.value.cause)
    outcome = await session.resume([ToolResultBlock(tool_use_id=call.id, content="notes.md")])
    assert outcome.stop == "done"
    assert outcome.text == "done: notes.md"
    with pytest.raises(WorkflowUpdateFailedError):
        await session.resume([ToolResultBlock(tool_use_id=call.id, content="again")])
    assert (await session.turn("still here")).text == "echo: still here"
    await session.close()


async def test_steering_reaches_the_running_turn(client: Client, task_queue: str, worker: Worker) -> None:
    session = await _start(client, task_queue)
    running = await session.start_turn('call slow {"seconds": 1.0}')
    await anyio.sleep(0.3)
    await session.steer("change of plan")
    outcome = await running.result()
    assert outcome.text == "echo: change of plan"
    await session.follow_up("and then this")
    outcome = await session.turn("first")
    assert outcome.text == "echo: and then this"
    await session.close()


async def test_model_errors_map_onto_temporal_retries(
    client: Client, task_queue: str, worker: Worker, activities: AgentActivities
) -> None:
    session = await _start(client, task_queue, options=ActivityOptions(llm_initial_retry_interval=0.05))
    recovered = await session.turn("fail-once A")
    assert recovered.text == "recovered"
    assert activities.calls["llm_call"] == 2  # the rate limit was retried by Temporal, once
    failed = await session.turn("fail-hard")
    assert failed.stop == "error"
    assert failed.error_type == "AgentLLMError"
    assert "the request is malformed" in (failed.error or "")
    assert activities.calls["llm_call"] == 3  # not retried: InvalidRequestError is not retryable
    assert (await session.turn("after the error")).text == "echo: after the error"
    await session.close()


async def test_a_long_session_continues_as_new_and_keeps_its_conversation(
    client: Client, task_queue: str, worker: Worker
) -> None:
    session = await _start(client, task_queue, max_history_events=100)
    for i in range(8):
        outcome = await session.turn(f'call echo {{"text": "n{i}"}}')
        assert outcome.text == f"done: echoed n{i}"
    generation = await session.handle.query("generation")
    assert generation >= 1
    final = await session.close()
    assert final.record.turn_index == 8
    assert len(final.messages) == 32
    assert await replay_task_queue(client, task_queue, at_least=generation + 1) >= generation + 1


async def test_a_turn_reads_as_running_from_temporal_and_a_finished_one_as_idle(
    client: Client, task_queue: str, worker: Worker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "started"
    monkeypatch.setenv("AGCORE_TEMPORAL_SLOW_MARKER", str(marker))  # the tool runs in this process
    session = await _start(client, task_queue)
    assert (await session.turn("hello")).text == "echo: hello"
    assert (await workflow_status(client, session.session_id)).state == "idle"
    running = await session.start_turn('call slow {"seconds": 3, "label": "s"}')
    with anyio.fail_after(30):
        while not marker.exists():  # noqa: ASYNC110 - the tool says when it runs
            await anyio.sleep(0.02)
    status = await workflow_status(client, session.session_id)
    # The memo still says idle (a turn publishes when it ends): Temporal's pending activity says running.
    assert status.progress is not None
    assert status.progress.activity == "idle"
    assert status.state == "running"
    assert [call.name for call in status.pending] == ["agcore.tool_call"]
    assert (await running.result()).text == "done: slept 3.0"
    after = await workflow_status(client, session.session_id)
    assert after.state == "idle"
    assert after.progress is not None
    assert after.progress.turns == 2
    await session.close()


async def test_a_session_past_its_snapshot_budget_carries_its_newest_turns_and_goes_on(
    client: Client, task_queue: str, worker: Worker
) -> None:
    budget = 4_000  # about two turns of this agent's messages
    session = await _start(client, task_queue, max_history_events=100, max_snapshot_bytes=budget)
    for i in range(20):
        outcome = await session.turn(f'call echo {{"text": "n{i}"}}')
        assert outcome.text == f"done: echoed n{i}", outcome.error
    generation = await session.handle.query("generation")
    assert generation >= 2
    carried = await session.history()  # this run: what it was carried, then its own turns
    assert isinstance(carried[0], SystemEvent)
    assert carried[0].data[OMITTED_KEY] > 0
    final = await session.close()
    assert final.record.turn_index == 20  # the counters go on: only old messages stay behind
    assert sum(len(text) for text in final.messages) <= budget
    note, *kept = [SystemEvent.model_validate_json(final.messages[0]), *final.messages[1:]]
    assert note.data[OMITTED_KEY] + len(kept) == 20 * 4  # every message is counted, none twice
    assert json.loads(kept[0])["kind"] == "user"
    assert json.loads(kept[-1])["message"]["content"][0]["text"] == "done: echoed n19"
    assert await replay_task_queue(client, task_queue, at_least=generation + 1) >= generation + 1


class _Observer:
    """An observer (counts messages, in the worker process) and a gatekeeper (denies `echo` of
    "secret"): both run inside the workflow."""

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    @hookimpl
    def on_message(self, ctx: object, message: object) -> None:
        self.seen.append(type(message).__name__)

    @hookimpl
    def before_tool_call(self, ctx: object, call: object) -> object:
        from agcore.hooks import ToolCallDecision

        if getattr(call, "input", {}).get("text") == "secret":
            return ToolCallDecision.deny("secrets stay here")
        return None


async def test_observers_fire_once_even_when_every_task_replays(client: Client, task_queue: str) -> None:
    seen: list[str] = []
    activities = AgentActivities(make_bundle)
    worker = create_worker(
        client, make_bundle, task_queue=task_queue, activities=activities,
        workflow_plugins=lambda: [_Observer(seen)], max_cached_workflows=0,
    )
    async with worker:
        session = await _start(client, task_queue)
        outcome = await session.turn('call echo {"text": "secret"}')
        assert "denied: secrets stay here" in outcome.text
        assert "tool:echo" not in activities.calls
        outcome = await session.turn('call echo {"text": "public"}')
        assert outcome.text == "done: echoed public"
        final = await session.close()
    # 2 turns x (input, reply, results, reply): each message reported once, though with no cache
    # every workflow task replayed the turns before it.
    assert len(final.messages) == 8
    assert seen == ["UserInput", "AssistantReply", "ToolResults", "AssistantReply"] * 2
    await replay_task_queue(client, task_queue)


async def test_confirmations_and_client_tools_wait_across_a_worker_restart(
    client: Client, task_queue: str
) -> None:
    first = AgentActivities(make_bundle)
    async with create_worker(client, make_bundle, task_queue=task_queue, activities=first):
        session = await _start(client, task_queue)
        running = await session.start_turn('call delete_file {"path": "c.txt"}')
        [waiting] = await _awaiting(session)
        paused_session = await _start(client, task_queue)
        paused = await paused_session.turn('call ask_user {"question": "name?"}')
    # No worker at all now; then a new one (its own cache, its own process state) takes over.
    second = AgentActivities(make_bundle)
    async with create_worker(client, make_bundle, task_queue=task_queue, activities=second):
        assert [c.id for c in await session.awaiting_confirmation()] == [waiting.id]
        await session.confirm(waiting.id, True)
        outcome = await running.result()
        assert outcome.text == "done: deleted c.txt"
        assert second.calls["tool:delete_file"] == 1
        [call] = paused.pending_tool_calls
        resumed = await paused_session.resume([ToolResultBlock(tool_use_id=call.id, content="Ada")])
        assert resumed.text == "done: Ada"
        await session.close()
        await paused_session.close()
        assert second.calls["llm_call"] == 2  # only the replies after the answers: nothing redone
    await replay_task_queue(client, task_queue, at_least=2)


async def test_two_hundred_sessions_over_two_workers_do_not_cross_talk(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    # One worker here, one an `agcore worker` subprocess (one process holds one worker per task queue).
    log = tmp_path / "calls.log"
    env = {**os.environ, "AGCORE_TEMPORAL_TOOL_LOG": str(log), "PYTHONPATH": str(ROOT)}
    here = AgentActivities(make_bundle)
    outcomes: dict[int, str] = {}
    other = await start_worker_process(client.service_client.config.target_host, task_queue, env)
    try:
        async with create_worker(client, make_bundle, task_queue=task_queue, activities=here):

            async def one(i: int) -> None:
                session = await DurableSession.start(client, f"many-{task_queue}-{i}", task_queue=task_queue)
                outcome = await session.turn(f'call echo {{"text": "session {i}"}}')
                outcomes[i] = outcome.text
                await session.close()

            async with anyio.create_task_group() as group:
                for i in range(200):
                    group.start_soon(one, i)
    finally:
        other.kill()
        await other.wait()
    assert outcomes == {i: f"done: echoed session {i}" for i in range(200)}
    there = Counter((await anyio.Path(log).read_text()).split())
    assert here.calls["tool:echo"] + there["echo"] == 200  # each call ran once, on one worker
    assert here.calls["tool:echo"] > 0
    assert there["echo"] > 0  # both workers served sessions


@pytest.mark.parametrize(
    "calls",
    ['call slow {"seconds": 30}', 'call slow {"seconds": 30} && call slow {"seconds": 30, "label": "b"}'],
    ids=["one call", "a parallel batch"],
)
async def test_cancelling_the_workflow_cancels_the_turn_and_repairs_the_history(
    client: Client, task_queue: str, worker: Worker, calls: str
) -> None:
    session = await _start(client, task_queue)
    running = await session.start_turn(calls)
    for _ in range(100):  # the model asked for the tool: its call is in the history
        if any(isinstance(m, AssistantReply) for m in await session.history()):
            break
        await anyio.sleep(0.05)
    await anyio.sleep(0.3)
    await session.handle.cancel()
    outcome = await running.result()
    assert outcome.stop == "cancelled"
    with pytest.raises(WorkflowFailureError) as ended:
        await session.handle.result()
    assert isinstance(ended.value.cause, CancelledError)
    history = await session.history()
    [results] = [m for m in history if isinstance(m, ToolResults)]
    assert len(results.results) == calls.count("call ")
    for result in results.results:
        assert result.is_error
        assert result.text.startswith("Cancelled: the turn was cancelled")


async def test_text_streams_to_the_client_while_the_model_runs_and_a_retry_does_not_repeat_it(
    client: Client, task_queue: str
) -> None:
    activities = AgentActivities(make_streaming_bundle)
    async with create_worker(client, make_streaming_bundle, task_queue=task_queue, activities=activities):
        session = await DurableSession.start(
            client, f"stream-{task_queue}", task_queue=task_queue, stream_text=True,
            options=ActivityOptions(llm_initial_retry_interval=0.05),
        )
        chunks: list[TextChunk] = []
        first_chunk = anyio.Event()
        outcomes = []

        async def read() -> None:
            async for chunk in session.text_chunks():
                chunks.append(chunk)
                first_chunk.set()

        async with anyio.create_task_group() as group:
            group.start_soon(read)
            running = await session.start_turn("flaky hello there, world")
            with anyio.fail_after(10):
                await first_chunk.wait()
            outcomes.append(await running.result())  # the text arrived before the turn ended
            outcomes.append(await session.turn("calm"))
            await session.close()  # the subscription ends with the session
    assert [o.text for o in outcomes] == ["streamed: flaky hello there, world", "streamed: calm"]
    assert activities.calls["llm_call"] == 3  # the cut-off stream was retried by Temporal
    restarts = [c for c in chunks if c.restart]
    assert len(restarts) == 1
    assert restarts[0].attempt == 2
    texts = assemble_text(chunks)
    assert sorted(texts.values()) == sorted(o.text for o in outcomes)  # no text twice
    cut = restarts[0].key
    partial = "".join(c.text for c in chunks if c.key == cut and c.attempt == 1)
    assert partial  # the first attempt's text reached the client before the stream was cut...
    assert texts[cut] == outcomes[0].text  # ...and the restart voided it
    await replay_task_queue(client, task_queue)


async def test_text_read_from_the_streams_offset_is_the_next_turns_alone(
    client: Client, task_queue: str
) -> None:
    async with create_worker(client, make_streaming_bundle, task_queue=task_queue):
        session = await DurableSession.start(client, f"offset-{task_queue}", task_queue=task_queue,
                                             stream_text=True)
        assert await session.text_offset() == 0  # a new session's stream is empty
        assert (await session.turn("first")).text == "streamed: first"
        start = await session.text_offset()
        assert start > 0
        since: list[TextChunk] = []
        everything: list[TextChunk] = []

        async def read(into: list[TextChunk], from_offset: int) -> None:
            async for chunk in session.text_chunks(from_offset=from_offset):
                into.append(chunk)

        async with anyio.create_task_group() as group:
            group.start_soon(read, since, start)
            group.start_soon(read, everything, 0)
            second = await session.turn("second")
            await session.close()  # the subscriptions end with the session
    assert second.text == "streamed: second"  # the outcome is this turn's text alone
    assert list(assemble_text(since).values()) == ["streamed: second"]
    assert sorted(assemble_text(everything).values()) == ["streamed: first", "streamed: second"]


async def test_a_broken_bundle_fails_the_workflow_with_its_message_instead_of_retrying(
    client: Client, task_queue: str
) -> None:
    def broken() -> object:
        return None

    activities = AgentActivities(broken)  # type: ignore[arg-type]
    async with create_worker(client, broken, task_queue=task_queue, activities=activities):  # type: ignore[arg-type]
        session = await _start(client, task_queue)
        with anyio.fail_after(20), pytest.raises(WorkflowFailureError) as failed:
            await session.handle.result()
    assert activities.calls["describe_agent"] == 1  # not retried
    message = str(failed.value.cause)  # the worker's error itself, not Temporal's wrapping of it
    assert "not a RuntimeBundle" in message
    assert "AgentBuilder()" in message


def test_a_client_without_agcores_converter_is_refused(temporal_env: WorkflowEnvironment) -> None:
    plain = Client(temporal_env.client.service_client, namespace="default")
    with pytest.raises(ConfigError, match="pydantic data converter"):
        create_worker(plain, make_bundle)


async def test_compaction_keeps_each_model_request_small_in_a_long_session(
    client: Client, task_queue: str, worker: Worker
) -> None:
    sizes = {}
    for name, compaction in (("whole", None), ("compacted", CompactionOptions(max_context_tokens=600))):
        # Scheduled model calls, so that each request is in the history.
        session = await _start(client, task_queue, compaction=compaction,
                               options=ActivityOptions(local_model_calls=False))
        for i in range(12):
            outcome = await session.turn(f'call echo {{"text": "message number {i} {"y" * 80}"}}')
            assert outcome.text.startswith(f"done: echoed message number {i}")
        history = await session.handle.fetch_history()
        requests = [
            e.activity_task_scheduled_event_attributes.input.payloads[0].data
            for e in history.events if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
            and e.activity_task_scheduled_event_attributes.activity_type.name == "agcore.llm_call"
        ]
        sizes[name] = (len(requests[-1]), any(b"Summarise the conversation" in r for r in requests))
        final = await session.close()
        assert len(final.messages) == 48  # the session keeps every message; only the requests shrink
    assert sizes["whole"][1] is False
    assert sizes["compacted"][1] is True  # the summary was a model call, an activity like the others
    assert sizes["compacted"][0] < sizes["whole"][0] / 2


@pytest.mark.parametrize("registered_as", ["workflow_observers", "workflow_plugins"])
async def test_an_audit_log_records_each_event_once_as_an_observer(
    client: Client, task_queue: str, tmp_path: Path, registered_as: str
) -> None:
    from agcore.plugins import AuditLogPlugin

    logs = tmp_path / "audit"
    worker = create_worker(
        client, make_bundle, task_queue=task_queue, max_cached_workflows=0,  # every task replays
        **{registered_as: lambda: [AuditLogPlugin(logs)]},
    )
    async with worker:
        session = await _start(client, task_queue)
        for word in ("one", "two"):
            outcome = await session.turn(f'call echo {{"text": "{word}"}}')
            assert outcome.text == f"done: echoed {word}"
        await session.close()
    events = Counter(
        json.loads(line)["event"] for line in (logs / "trace.jsonl").read_text().splitlines()
    )
    once = {"user_message": 2, "llm_request": 4, "llm_response": 4, "tool_call": 2, "tool_result": 2}
    if registered_as == "workflow_observers":
        assert {k: events[k] for k in once} == once
    else:  # a plain workflow plugin's rewrite hooks run on every replay: the log repeats itself
        assert events["llm_request"] > once["llm_request"]
    await replay_task_queue(client, task_queue)


async def test_a_snapshot_that_cannot_be_read_fails_the_workflow_with_its_message(
    client: Client, task_queue: str, worker: Worker
) -> None:
    session_id = f"broken-{task_queue}"
    broken = SessionSnapshot(record=SessionRecord(session_id=session_id), messages=['{"type": "nonsense"}'])
    handle = await client.start_workflow(
        AgentSessionWorkflow.run, SessionInput(snapshot=broken), id=session_id, task_queue=task_queue
    )
    with anyio.fail_after(20), pytest.raises(WorkflowFailureError) as failed:
        await handle.result()
    assert "is not a valid AgentMessage" in str(failed.value.cause)
