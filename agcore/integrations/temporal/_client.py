"""The client side: ``DurableSession`` drives a session workflow, ``start_plan`` starts a plan one.

```python
client = await connect("localhost:7233")
session = await DurableSession.start(client, "support-42")
outcome = await session.turn("What is in README.md?")   # a TurnOutcome
await session.close()
```
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any, Literal

from pydantic import TypeAdapter
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateHandle,
    WorkflowUpdateStage,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.contrib.workflow_streams import WorkflowStreamClient
from temporalio.service import RPCError

from agcore.agent import AgentMessage, OutputMode, Plan
from agcore.integrations.temporal._plan_workflow import PlanWorkflow
from agcore.integrations.temporal._session_workflow import AgentSessionWorkflow
from agcore.integrations.temporal._status import WorkflowProgress, plan_progress, status_memo
from agcore.integrations.temporal._types import (
    MAX_SNAPSHOT_BYTES,
    TEXT_TOPIC,
    ActivityOptions,
    CompactionOptions,
    ConfirmationInput,
    PlanInput,
    SessionInput,
    SessionSnapshot,
    TextChunk,
    TurnInput,
    TurnOutcome,
)
from agcore.integrations.temporal._worker import DEFAULT_TASK_QUEUE
from agcore.llm.types import ToolResultBlock, ToolUseBlock

#: How many times a turn that reached a run as it continued as new is sent again.
_RESENDS = 3


def import_path(output_type: Any) -> str:
    """``output_type`` as ``module:QualName``, how a workflow finds it; ``ValueError`` for a type
    defined where no worker can import it (in a function, ``list[...]`` forms)."""
    module = getattr(output_type, "__module__", None)
    qualname = getattr(output_type, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname \
            or not isinstance(output_type, type):
        raise ValueError(
            f"a durable turn's output_type must be a class defined at a module's top level (the worker "
            f"imports it by name), not {output_type!r}: wrap it in a pydantic model"
        )
    return f"{module}:{qualname}"


def _closed_run(cause: BaseException | None) -> bool:
    """Whether an update failed because its run closed before accepting it (not by the workflow)."""
    text = str(cause).lower() if cause is not None else ""
    return "completed before" in text or "continued as new" in text or "closing" in text

__all__ = [
    "DurableSession", "SessionClosedError", "assemble_text", "start_plan", "text_chunks", "text_offset",
]


class SessionClosedError(RuntimeError):
    """A turn (or ``resume``) sent to a session whose workflow has ended (closed, cancelled, failed,
    terminated): it takes no more turns; start a new session to talk on."""


async def text_chunks(client: Client, workflow_id: str, *, from_offset: int = 0) -> AsyncIterator[TextChunk]:
    """The model's text as it streams from the session or plan workflow ``workflow_id`` (started with
    ``stream_text=True``), until the workflow ends (across continue-as-new). A chunk with
    ``restart`` voids the text its call's earlier attempts sent (see ``TextChunk``);
    ``assemble_text`` applies that rule. From the start of what the workflow still holds (earlier
    turns' text included), or from ``from_offset`` (``text_offset``: only the text sent after it)."""
    stream = WorkflowStreamClient.create(client, workflow_id)
    async for item in stream.subscribe([TEXT_TOPIC], from_offset=from_offset, result_type=TextChunk):
        yield item.data


async def text_offset(client: Client, workflow_id: str) -> int:
    """Query: where the text stream of workflow ``workflow_id`` ends now; ``text_chunks(...,
    from_offset=)`` it to read only the text sent after this moment (a new turn's, not the earlier
    turns' the stream still holds). Answered by a worker (it waits for one)."""
    return await WorkflowStreamClient.create(client, workflow_id).get_offset()


def assemble_text(chunks: Iterable[TextChunk]) -> dict[str, str]:
    """The text of each model call (by key) from its chunks, a restarted attempt replacing the
    earlier ones: what a client shows once every chunk has arrived."""
    texts: dict[str, str] = {}
    attempts: dict[str, int] = {}
    for chunk in chunks:
        if chunk.turn is not None:
            continue  # where a turn starts: no text
        if chunk.attempt < attempts.get(chunk.key, 0):
            continue  # a late chunk of a superseded attempt
        if chunk.restart or chunk.attempt > attempts.get(chunk.key, 0):
            texts[chunk.key] = ""
            attempts[chunk.key] = chunk.attempt
        texts[chunk.key] += chunk.text
    return texts


class DurableSession:
    """A handle on one session workflow (its id is the session id). Every method is a Temporal
    update, signal or query, so any process holding the id can drive the same session."""

    def __init__(self, client: Client, handle: WorkflowHandle[AgentSessionWorkflow, SessionSnapshot]) -> None:
        self.client = client
        self.handle = handle

    @property
    def session_id(self) -> str:
        """The session's id, which is also its workflow id."""
        return self.handle.id

    @classmethod
    async def start(
        cls,
        client: Client,
        session_id: str,
        *,
        task_queue: str = DEFAULT_TASK_QUEUE,
        options: ActivityOptions | None = None,
        max_history_events: int = 10_000,
        stream_text: bool = False,
        compaction: CompactionOptions | None = None,
        max_snapshot_bytes: int | None = MAX_SNAPSHOT_BYTES,
        snapshot: SessionSnapshot | None = None,
    ) -> DurableSession:
        """Start the session workflow ``session_id`` (or attach to it, if it already runs).
        ``stream_text``: publish the model's text while it is generated (read it with
        ``text_chunks()``; it costs history: each batch is a Signal, each read an Update);
        ``compaction``: compact what the model sees (``CompactionOptions``); ``max_snapshot_bytes``:
        the most message bytes a continue-as-new carries (the newest whole turns that fit; None: all,
        with a payload store only); ``snapshot``: the conversation to go on with, when it starts (a
        closed session's final snapshot, ``close()``'s result: the same session, continued)."""
        handle = await client.start_workflow(
            AgentSessionWorkflow.run,
            SessionInput(options=options or ActivityOptions(), max_history_events=max_history_events,
                         stream_text=stream_text, compaction=compaction,
                         max_snapshot_bytes=max_snapshot_bytes, snapshot=snapshot),
            id=session_id, task_queue=task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            memo=status_memo(WorkflowProgress(kind="session")),  # readable before any worker runs it
        )
        return cls(client, handle)

    @classmethod
    def attach(cls, client: Client, session_id: str) -> DurableSession:
        """The running session ``session_id`` (across continue-as-new: the latest run). Not async,
        unlike ``start``: it asks the server nothing (a handle on an id); the first call made on it
        does, and fails if there is no such session (``start`` starts it, or attaches to it)."""
        return cls(client, client.get_workflow_handle_for(AgentSessionWorkflow.run, session_id))

    async def turn(
        self, text: str, *, output_type: Any = None, output_mode: OutputMode = "auto"
    ) -> TurnOutcome:
        """Run a turn and wait for its outcome. ``output_type`` (a pydantic model, dataclass...
        importable by the worker as ``module:QualName``) makes it a typed turn: ``outcome.output`` is
        the answer validated into that type (see ``AgentSession.submit_turn``)."""
        # One call that waits for the outcome (an update started at ACCEPTED needs a second to fetch it).
        turn = _turn_input(text, output_type, output_mode)
        running = await self._accepted(AgentSessionWorkflow.turn, turn, WorkflowUpdateStage.COMPLETED)
        done = await running.result()
        if output_type is None or done.output is None:
            return done
        return done.model_copy(update={"output": TypeAdapter(output_type).validate_python(done.output)})

    async def start_turn(
        self, text: str, *, output_type: Any = None, output_mode: OutputMode = "auto",
        turn_id: str | None = None,
    ) -> WorkflowUpdateHandle[TurnOutcome]:
        """Start a turn and return once the workflow accepted it; ``await handle.result()`` for its
        outcome (meanwhile answer confirmations, steer, query; a typed turn's ``output`` is JSON
        data there). A turn sent while the session continues as new is sent again to the new run.
        ``turn_id``: the turn's Update id (default: a new one; ``handle.id``), what ``cancel_turn``
        names; choose it to be able to cancel a turn whose start was itself interrupted."""
        turn = _turn_input(text, output_type, output_mode)
        return await self._accepted(AgentSessionWorkflow.turn, turn, turn_id=turn_id)

    async def cancel_turn(self, turn_id: str) -> None:
        """Signal ``cancel_turn``: cancel the turn sent as ``turn_id`` (``start_turn``'s handle's
        ``id``), as cancelling ``submit_turn`` does in-process: running, its outcome is
        ``stop="cancelled"`` (calls in flight answered "cancelled"); still waiting for an earlier
        turn, it never runs. The session stays open; other clients' turns go on."""
        await self.handle.signal(AgentSessionWorkflow.cancel_turn, turn_id)

    async def _accepted(
        self, update: Any, arg: Any, stage: WorkflowUpdateStage = WorkflowUpdateStage.ACCEPTED,
        turn_id: str | None = None,
    ) -> WorkflowUpdateHandle[TurnOutcome]:
        for attempt in range(_RESENDS + 1):
            try:
                running: WorkflowUpdateHandle[TurnOutcome] = await self.handle.start_update(
                    update, arg, wait_for_stage=stage, id=turn_id
                )
                return running
            except (RPCError, WorkflowUpdateFailedError) as exc:
                if attempt == _RESENDS or not await self._continued_as_new(exc):
                    await self._raise_if_ended(exc)
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _continued_as_new(self, error: Exception) -> bool:
        # Not accepted: the run it reached was closing (it continues as new only once no turn is
        # accepted or running, so nothing ran). Sent again, it reaches the latest run.
        if isinstance(error, WorkflowUpdateFailedError) and not _closed_run(error.cause):
            return False  # the workflow refused the turn itself (validation): not a race
        description = await self.handle.describe()
        return description.status == WorkflowExecutionStatus.RUNNING

    async def _raise_if_ended(self, error: Exception) -> None:
        if not isinstance(error, RPCError):
            return  # the workflow answered: it runs
        status = (await self.handle.describe()).status
        if status is not None and status != WorkflowExecutionStatus.RUNNING:
            raise SessionClosedError(
                f"session {self.session_id!r} has ended ({status.name.lower()}): it takes no more turns; "
                "start a new session (another id) to talk on"
            ) from error

    def text_chunks(self, *, from_offset: int = 0) -> AsyncIterator[TextChunk]:
        """The model's text as it streams, from a session started with ``stream_text=True`` (see
        ``text_chunks``): all the session still holds, or what came after ``from_offset``."""
        return text_chunks(self.client, self.session_id, from_offset=from_offset)

    async def text_offset(self) -> int:
        """Query: where the text stream ends now. ``text_chunks(from_offset=await
        session.text_offset())`` before a turn starts reads that turn's text, not the earlier ones'."""
        return await text_offset(self.client, self.session_id)

    async def resume(self, results: Iterable[ToolResultBlock]) -> TurnOutcome:
        """Continue the turn paused for client tools with their results."""
        running = await self._accepted(
            AgentSessionWorkflow.resume, list(results), WorkflowUpdateStage.COMPLETED
        )
        return await running.result()

    async def steer(self, text: str) -> None:
        """Signal ``steer``: input the running turn reads before its next model call."""
        await self.handle.signal(AgentSessionWorkflow.steer, text)

    async def follow_up(self, text: str) -> None:
        """Signal ``follow_up``: input taken when the turn would otherwise end."""
        await self.handle.signal(AgentSessionWorkflow.follow_up, text)

    async def confirm(self, call_id: str, answer: bool | Literal["always"]) -> None:
        """Approve (True, ``"always"``) or refuse (False) a call waiting for confirmation."""
        answered = ConfirmationInput(call_id=call_id, answer=answer)
        await self.handle.signal(AgentSessionWorkflow.confirm, answered)

    async def awaiting_confirmation(self) -> list[ToolUseBlock]:
        """Query: the tool calls waiting for ``confirm``."""
        return await self.handle.query(AgentSessionWorkflow.awaiting_confirmation)

    async def pending_client_calls(self) -> list[ToolUseBlock]:
        """Query: the client-tool calls a paused turn waits for (answer them with ``resume``)."""
        return await self.handle.query(AgentSessionWorkflow.pending_client_calls)

    async def history(self) -> list[AgentMessage]:
        """Query: the conversation so far, as agcore messages (past ``max_snapshot_bytes``, what the
        last continue-as-new carried: a ``SystemEvent`` counting the messages left in earlier runs,
        then the newest turns)."""
        return await self.handle.query(AgentSessionWorkflow.history)

    async def close(self) -> SessionSnapshot:
        """End the session; its final snapshot (record and messages)."""
        await self.handle.signal(AgentSessionWorkflow.close)
        return await self.handle.result()


async def start_plan(
    client: Client,
    plan: Plan,
    *,
    workflow_id: str,
    task_queue: str = DEFAULT_TASK_QUEUE,
    failure_policy: Literal["stop", "continue", "retry"] = "stop",
    max_retries: int = 2,
    options: ActivityOptions | None = None,
    max_history_events: int = 10_000,
    stream_text: bool = False,
    compaction: CompactionOptions | None = None,
    attach: bool = False,
    max_snapshot_bytes: int | None = MAX_SNAPSHOT_BYTES,
) -> WorkflowHandle[PlanWorkflow, Plan]:
    """Start ``plan`` as the workflow ``workflow_id``; query ``PlanWorkflow.status`` for progress (or
    read ``workflow_status``, which needs no worker) and await ``result()`` for the executed plan;
    with ``stream_text``, read the steps' text as it is generated with ``text_chunks(client,
    workflow_id)``. ``attach``: if ``workflow_id`` is running already, the handle on it (else that
    is an error: ``WorkflowAlreadyStartedError``); ``max_snapshot_bytes``: as ``DurableSession.start``."""
    return await client.start_workflow(
        PlanWorkflow.run,
        PlanInput(plan=plan, failure_policy=failure_policy, max_retries=max_retries,
                  options=options or ActivityOptions(), max_history_events=max_history_events,
                  stream_text=stream_text, compaction=compaction, max_snapshot_bytes=max_snapshot_bytes),
        id=workflow_id, task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING if attach else WorkflowIDConflictPolicy.FAIL,
        memo=status_memo(plan_progress(plan)),  # the steps are readable before any worker runs it
    )


def _turn_input(text: str, output_type: Any, output_mode: OutputMode) -> TurnInput:
    path = import_path(output_type) if output_type is not None else None
    return TurnInput(text=text, output_type=path, output_mode=output_mode)
