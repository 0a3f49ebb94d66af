"""``AgentSessionWorkflow``: one durable conversation, one workflow.

* a turn is the Update ``turn`` (it returns the ``TurnOutcome``); a turn paused for client tools is
  continued by the Update ``resume`` with their results: the workflow simply waits, for as long as it
  takes, on any worker;
* ``steer`` and ``follow_up`` are Signals, queued into the running turn as in-process;
* a tool that needs confirmation waits for the Signal ``confirm`` (``ConfirmationInput``); the Query
  ``awaiting_confirmation`` lists the calls waiting, ``pending_client_calls`` the client calls a paused
  turn waits for, ``history`` the whole conversation;
* between turns, past ``SessionInput.max_history_events`` (or when Temporal suggests it), the workflow
  continues as new with a snapshot of the session, so a session of any length keeps a bounded history;
* the Signal ``cancel_turn`` cancels one turn (by its Update id), running or waiting, as cancelling
  ``submit_turn`` does in-process; the session stays open for the next;
* the Signal ``close`` ends the workflow (its result: the final snapshot); cancelling the workflow
  cancels the running turn the way cancelling ``submit_turn`` does in-process (the calls in flight are
  answered "cancelled", their activities cancelled, the history stays valid), and the workflow ends
  cancelled.

The agcore loop runs unchanged under ``WorkflowClock`` (ids and times replay identically).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

import anyio
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.contrib.workflow_streams import WorkflowStream
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from pydantic import ValidationError

    from agcore._clock import use_clock
    from agcore.agent import AgentMessage, AgentSession, ConfigError
    from agcore.integrations.temporal._clock import WorkflowClock
    from agcore.integrations.temporal._sessions import open_session, outcome, output_type_named, snapshot
    from agcore.integrations.temporal._status import WorkflowProgress, publish_status
    from agcore.integrations.temporal._types import (
        TEXT_TOPIC,
        ActivityOptions,
        AgentSpec,
        ConfirmationInput,
        SessionInput,
        SessionSnapshot,
        TextChunk,
        TurnInput,
        TurnOutcome,
    )
    from agcore.llm.types import ToolResultBlock, ToolUseBlock
    from agcore.memory import MemoryStoreError
    from agcore.tools import Tool

__all__ = ["WORKFLOW_FAILURES", "AgentSessionWorkflow", "describe_agent", "startup_failure"]

#: Errors that fail the workflow with their message instead of failing the workflow task (which
#: Temporal retries until the code changes): a broken configuration, data that does not validate, a
#: snapshot that cannot be read back. The loop itself turns every other failure into a turn result.
WORKFLOW_FAILURES: tuple[type[Exception], ...] = (ConfigError, ValidationError, MemoryStoreError)

#: What fails a session before its first turn: the worker's bundle (``startup_failure``), a snapshot.
_STARTUP_FAILURES: tuple[type[Exception], ...] = (ApplicationError, *WORKFLOW_FAILURES)

ConfirmAnswer = bool | Literal["always"]

#: The change that stopped publishing "busy" when a turn starts on an idle session (a history
#: recorded before it has that memo update, and replays with it).
MEMO_AT_TURN_END_PATCH = "agcore.memo-at-turn-end"


async def describe_agent(input_spec: AgentSpec | None, options: ActivityOptions) -> AgentSpec:
    """The spec carried over from a previous run, or the worker's answer to ``agcore.describe_agent``;
    a worker that cannot build its bundle raises ``startup_failure``'s error (never retried)."""
    if input_spec is not None:
        return input_spec
    try:
        spec: AgentSpec = await workflow.execute_activity(
            "agcore.describe_agent", result_type=AgentSpec,
            start_to_close_timeout=timedelta(seconds=options.describe_timeout),
            retry_policy=RetryPolicy(maximum_attempts=options.describe_max_attempts),
        )
    except ActivityError as exc:
        raise startup_failure(exc) from exc
    return spec


def startup_failure(exc: BaseException) -> ApplicationError:
    """Why a workflow could not open its session, as the error that fails it (and the turns sent to
    it): the worker's own error type and message, not Temporal's wrapping of it."""
    cause = exc.cause if isinstance(exc, ActivityError) and exc.cause is not None else exc
    if isinstance(cause, ApplicationError):
        return ApplicationError(cause.message, *cause.details, type=cause.type, non_retryable=True)
    if isinstance(exc, ActivityError):  # timed out, or its attempts ran out: no worker answered
        message = (f"no worker described the agent ({type(cause).__name__}: {cause}): check the workers "
                   f"of task queue {workflow.info().task_queue!r} and their logs")
        return ApplicationError(message, type=type(cause).__name__, non_retryable=True)
    return ApplicationError(str(cause), type=type(cause).__name__, non_retryable=True)


@workflow.defn(name="agcore.AgentSession", failure_exception_types=list(WORKFLOW_FAILURES))
class AgentSessionWorkflow:
    """One durable conversation, one workflow: a turn is the Update ``turn`` (``resume`` continues a
    turn paused for client tools); ``steer``, ``follow_up``, ``confirm`` and ``close`` are Signals;
    ``awaiting_confirmation``, ``pending_client_calls`` and ``history`` are Queries. Between turns it
    continues as new with a snapshot of the session, so its history stays bounded; cancelling it
    cancels the running turn and keeps the history valid. See docs/temporal.md."""

    @workflow.init
    def __init__(self, input: SessionInput) -> None:
        self._clock = WorkflowClock()
        self._input = input
        self._session: AgentSession | None = None
        self._failure: ApplicationError | None = None
        self._progress = WorkflowProgress(kind="session", generation=input.generation)
        self._busy = False
        self._closing = False
        self._waiting: dict[str, ToolUseBlock] = {}
        self._answers: dict[str, ConfirmAnswer] = {}
        self._turns_here = 0
        self._turn_scope: anyio.CancelScope | None = None
        self._running_turn: str | None = None  # the Update id of the turn running
        self._cancelled_turns: set[str] = set()
        # Temporal's workflow stream (Signals in, long-poll Updates out) carries the text deltas.
        self._stream = WorkflowStream(input.stream_state) if input.stream_text else None
        prior = input.stream_state
        #: Where this run's text starts: what the previous runs published is dropped at the next
        #: continue-as-new (a whole run later), so the carried stream stays small.
        self._stream_start = prior.base_offset + len(prior.log) if prior is not None else 0

    @workflow.run
    async def run(self, input: SessionInput) -> SessionSnapshot:
        """Serve turns until the Signal ``close``; returns the session's final snapshot (or continues
        as new with it)."""
        info = workflow.info()
        try:
            with use_clock(self._clock):
                spec = await describe_agent(input.spec, input.options)
                self._spec = spec
                self._session = await open_session(
                    spec, input.options, info.workflow_id, input.snapshot, self._confirm,
                    stream_text=input.stream_text, compaction=input.compaction, run_id=info.run_id,
                )
        except _STARTUP_FAILURES as exc:
            # The turns waiting for the session fail with this error too (not with "the workflow
            # completed before the update"), then the workflow does.
            failure = exc if isinstance(exc, ApplicationError) else startup_failure(exc)
            self._failure = failure
            if self._stream is not None:
                self._stream.detach_pollers()  # a text subscriber's long poll would hold the run open
            await workflow.wait_condition(workflow.all_handlers_finished)
            if failure is exc:
                raise
            raise failure from exc
        session = self._session
        self._progress = WorkflowProgress(
            kind="session", activity="idle", generation=input.generation,
            turns=input.snapshot.record.turn_index if input.snapshot is not None else 0,
        )
        publish_status(self._progress)
        # Read now, in the running loop: an except clause is evaluated when an exception arrives, and
        # a cached run the worker drops is closed (GeneratorExit) outside any loop, where asking
        # anyio raises NoEventLoopError from inside the handler.
        cancelled = anyio.get_cancelled_exc_class()
        try:
            while True:
                await workflow.wait_condition(
                    lambda: self._closing or (not self._busy and self._history_full())
                )
                await workflow.wait_condition(lambda: not self._busy)
                if self._stream is not None:
                    self._stream.detach_pollers()  # else a subscriber's long poll holds the run open
                await workflow.wait_condition(lambda: not self._busy and workflow.all_handlers_finished())
                with use_clock(self._clock):
                    if self._closing:
                        await session.close()
                    carried = await snapshot(session, input.max_snapshot_bytes)
                # The snapshot awaited: a turn may have slipped in meanwhile. Checked with no await
                # between here and the end of the run, so no accepted update is left behind.
                if not self._busy and workflow.all_handlers_finished():
                    break
        except cancelled:
            self._closing = True
            if self._turn_scope is not None:
                self._turn_scope.cancel()
            await workflow.wait_condition(lambda: not self._busy)
            with use_clock(self._clock):
                await session.close()
            raise
        if self._closing:
            return carried
        stream_state = None
        if self._stream is not None:
            self._stream.truncate(self._stream_start)
            stream_state = self._stream.get_state()
        workflow.continue_as_new(input.model_copy(update={
            "spec": spec, "snapshot": carried, "generation": input.generation + 1,
            "stream_state": stream_state,
        }))

    def _history_full(self) -> bool:
        if self._turns_here == 0:
            return False  # every run takes at least one turn, whatever the limits say
        info = workflow.info()
        return (info.is_continue_as_new_suggested()
                or info.get_current_history_length() >= self._input.max_history_events)

    # ---------------------------------------------------------------------------------- turns

    @workflow.update
    async def turn(self, input: TurnInput) -> TurnOutcome:
        """Run one turn with the user's ``text``; wait for an earlier one to finish first."""
        turn_id = _update_id()
        session = await self._take(turn_id)
        if session is None:  # cancelled while it waited for an earlier turn: it never ran
            return TurnOutcome(stop="cancelled")
        try:
            self._mark_turn(turn_id)
            output = None
            if input.output_type is not None:
                try:
                    with workflow.unsafe.imports_passed_through():  # the user's types: plain definitions
                        output = output_type_named(input.output_type, input.output_mode)
                except ConfigError as exc:  # this turn cannot run; the session can
                    raise ApplicationError(str(exc), type="ConfigError", non_retryable=True) from exc
            with use_clock(self._clock), anyio.CancelScope() as self._turn_scope:
                self._running_turn = turn_id
                await session.submit_turn(input.text, output_type=output)
            self._turns_here += 1
            assert session.last_result is not None  # also when the workflow's cancellation ended it
            return self._ended(outcome(session.last_result, output))
        finally:
            self._turn_scope = self._running_turn = None
            self._busy = False

    @turn.validator
    def _check_turn(self, input: TurnInput) -> None:
        if self._closing:
            raise ApplicationError("this session is closed: start a new session workflow")
        if not input.text.strip():
            raise ApplicationError("a turn needs some text: send the user's message")

    @workflow.update
    async def resume(self, results: list[ToolResultBlock]) -> TurnOutcome:
        """Continue the turn paused for client tools with their results."""
        turn_id = _update_id()
        session = await self._take(turn_id)
        if session is None:
            return TurnOutcome(stop="cancelled")
        try:
            if not session.pending_client_calls:
                raise ApplicationError(
                    "no turn is paused for client tools: check TurnOutcome.stop == 'client_tools' first",
                    non_retryable=True,
                )
            with use_clock(self._clock), anyio.CancelScope() as self._turn_scope:
                self._running_turn = turn_id
                try:
                    await session.resume(results)
                except ValueError as exc:  # a result for no pending call: the session is unchanged
                    self._publish(activity="client_tools")
                    raise ApplicationError(str(exc), non_retryable=True) from exc
            self._turns_here += 1
            assert session.last_result is not None
            return self._ended(outcome(session.last_result))
        finally:
            self._turn_scope = self._running_turn = None
            self._busy = False

    async def _take(self, turn_id: str) -> AgentSession | None:
        # Several waiting turns may wake in one activation: only the first to run takes the session,
        # the others (seeing it busy again) wait for the next turn to end. None: the turn was
        # cancelled (``cancel_turn``) before it could start.
        def waits() -> bool:
            return self._failure is None and turn_id not in self._cancelled_turns and (
                self._session is None or self._busy)

        while waits():
            await workflow.wait_condition(lambda: not waits())
        if turn_id in self._cancelled_turns and self._failure is None:
            return None
        if self._failure is not None:
            failure = self._failure
            raise ApplicationError(failure.message, *failure.details, type=failure.type, non_retryable=True)
        assert self._session is not None
        if self._closing:
            raise ApplicationError("this session is closed: start a new session workflow", non_retryable=True)
        self._busy = True
        # A turn after an idle session publishes nothing now: while it runs, Temporal shows its work
        # (a workflow task or an activity), which ``workflow_status`` reads as running; one upsert
        # per turn instead of two (half the history events and visibility writes). Only a state a
        # reader could not tell from that (paused for client tools, not started yet) is replaced.
        if self._progress.activity != "idle" or not workflow.patched(MEMO_AT_TURN_END_PATCH):
            self._publish(activity="busy")  # histories from before the change replay as they ran
        return self._session

    def _mark_turn(self, turn_id: str) -> None:
        # The text that follows on the stream is this turn's: a client reads its own turn's text
        # only, however many clients share the session (see ``TextChunk.turn``).
        if self._stream is not None:
            self._stream.topic(TEXT_TOPIC, type=TextChunk).publish(TextChunk(key="", turn=turn_id))

    def _ended(self, result: TurnOutcome) -> TurnOutcome:
        self._publish(
            activity="client_tools" if result.stop == "client_tools" else "idle",
            turns=self._progress.turns + 1, last_stop=result.stop, last_error=result.error,
        )
        return result

    def _publish(self, **changes: object) -> None:
        self._progress = self._progress.model_copy(update=changes)
        publish_status(self._progress)

    # ------------------------------------------------------------------------- input and views

    @workflow.signal
    def steer(self, text: str) -> None:
        """New user input for the running turn (see ``AgentSession.steer``)."""
        self._queue("steer", text)

    @workflow.signal
    def follow_up(self, text: str) -> None:
        """Input taken when the turn would otherwise end (see ``AgentSession.follow_up``)."""
        self._queue("follow_up", text)

    def _queue(self, kind: Literal["steer", "follow_up"], text: str) -> None:
        session = self._session
        if session is None:
            workflow.logger.warning("%s before the session opened: dropped", kind)
            return
        (session.steer if kind == "steer" else session.follow_up)(text)

    @workflow.signal
    def confirm(self, answer: ConfirmationInput) -> None:
        """The user's answer for a call waiting for approval."""
        if answer.call_id not in self._waiting:
            workflow.logger.warning("confirmation for %s, which waits for none: ignored", answer.call_id)
            return
        self._answers[answer.call_id] = answer.answer

    @workflow.signal
    def cancel_turn(self, turn_id: str) -> None:
        """Cancel the turn (or ``resume``) sent as the Update ``turn_id``: running, it ends as
        cancelling ``submit_turn`` does in-process (calls in flight answered "cancelled", the history
        valid); waiting for an earlier turn, it never runs. The session stays open."""
        self._cancelled_turns.add(turn_id)
        if self._running_turn == turn_id and self._turn_scope is not None:
            self._turn_scope.cancel()

    @workflow.signal
    def close(self) -> None:
        """End the session once the running turn (if any) is over."""
        self._closing = True

    @workflow.query
    def awaiting_confirmation(self) -> list[ToolUseBlock]:
        """The tool calls waiting for the user's approval (answer each with ``confirm``)."""
        return list(self._waiting.values())

    @workflow.query
    def pending_client_calls(self) -> list[ToolUseBlock]:
        """The client tool calls a paused turn waits for (answer with the ``resume`` update)."""
        return self._session.pending_client_calls if self._session is not None else []

    @workflow.query
    def history(self) -> list[AgentMessage]:
        """The conversation of this run (earlier runs' messages are carried over in its snapshot, up to
        ``SessionInput.max_snapshot_bytes``)."""
        return list(self._session.messages) if self._session is not None else []

    @workflow.query
    def generation(self) -> int:
        """How many times this session has continued as new."""
        return self._input.generation

    async def _confirm(self, call: ToolUseBlock, tool: Tool) -> ConfirmAnswer:
        self._waiting[call.id] = call
        self._publish_waiting()
        try:
            await workflow.wait_condition(lambda: call.id in self._answers)
            return self._answers.pop(call.id)
        finally:
            self._waiting.pop(call.id, None)
            self._publish_waiting()

    def _publish_waiting(self) -> None:
        names = [call.name for call in self._waiting.values()]
        self._publish(activity="approval" if names else "busy", awaiting=names)


def _update_id() -> str:
    """The id of the Update being handled (the client's, or one Temporal made up)."""
    info = workflow.current_update_info()
    assert info is not None  # called from an update handler only
    return info.id
