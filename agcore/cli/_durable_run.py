"""``agcore run --temporal``: one turn as a session workflow on workers that hold the agent's bundle,
its text printed as the model writes it, approvals asked here; Ctrl-C cancels this run's turn and
nothing else, as in-process."""

from __future__ import annotations

import contextlib
import signal
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
from rich.console import Console

from agcore._clock import new_id
from agcore.cli._durable import POLL_SECONDS, connect_client, snapshot_budget
from agcore.cli._errors import CliError, ExitCode

if TYPE_CHECKING:
    from temporalio.client import Client

    from agcore.integrations.temporal import CompactionOptions

__all__ = ["durable_run"]


async def durable_run(
    console: Console, *, task: str, address: str, namespace: str, task_queue: str, yes: bool,
    tls: bool = False, api_key: str | None = None, session_id: str | None = None,
    compaction: CompactionOptions | None = None, payload_store: str | None = None,
    max_snapshot_bytes: int | None = None,
) -> ExitCode:
    """One turn as a session workflow, its text printed as the model writes it; approvals asked here
    (or given by ``--yes``). With ``session_id`` the turn is one more of that durable session (started
    if new, served on its own task queue if running), which stays open for the next; without, a new
    session closed after the turn. Ctrl-C (or SIGTERM) cancels this run's turn only, as in-process.
    ``max_snapshot_bytes``: --max-snapshot-bytes (``snapshot_budget``)."""
    from agcore.cli._durable_attach import closed_session, continue_command, queue_of_running
    from agcore.cli._terminal import Terminal, interrupts
    from agcore.integrations.temporal import DurableSession

    client = await connect_client(address, namespace, tls, api_key, payload_store)
    workflow_id = session_id or f"run-{new_id()}"
    keep_open = session_id is not None
    earlier = None
    if keep_open:
        task_queue = await queue_of_running(console, client, workflow_id, task_queue, kind="session")
        earlier = await closed_session(client, workflow_id)
        if earlier is not None:
            console.print(f"session {workflow_id} was closed: continued from its last snapshot", style="dim")
    session = await DurableSession.start(client, workflow_id, task_queue=task_queue, stream_text=True,
                                         compaction=compaction, snapshot=earlier,
                                         max_snapshot_bytes=snapshot_budget(max_snapshot_bytes))
    console.print(f"workflow {session.session_id} on task queue {task_queue!r}", style="dim")
    turn = _DurableTurn(console, client, session, task_queue, address, keep_open=keep_open)
    async with Terminal(console) as terminal:
        with anyio.CancelScope() as interrupted:
            async with interrupts(interrupted.cancel, also=(signal.SIGTERM,)):
                await turn.run(task, terminal, yes)
    cancelled = interrupted.cancelled_caught or turn.outcome is None
    if cancelled:
        if console.is_terminal:
            console.print()  # the terminal echoed ^C where the streamed text stood
        console.print("⏹ cancelled (interrupted)", style="yellow")
    if keep_open:
        hint = continue_command(address=address, namespace=namespace, task_queue=task_queue, tls=tls,
                                api_key=api_key is not None, payload_store=payload_store,
                                session_id=workflow_id)
        console.print(f"session {workflow_id} stays open: `{hint}` continues it", style="dim",
                      markup=False, highlight=False)
    return ExitCode.INTERRUPTED if cancelled else _outcome_code(turn.outcome)


class _DurableTurn:
    """This run's turn on a session workflow, and what an interruption leaves: the turn cancelled
    (``cancel_turn``: other clients' turns and the session go on), a one-off session ended."""

    def __init__(
        self, console: Console, client: Client, session: Any, task_queue: str, address: str, *,
        keep_open: bool,
    ) -> None:
        self.console = console
        self.client = client
        self.session = session
        self.task_queue = task_queue
        self.address = address
        self.keep_open = keep_open
        self.turn_id = f"turn-{new_id()}"
        self.outcome: Any = None
        self.sent = False  # whether the turn was sent (else a one-off session never got work)
        self.failed = False  # the workflow failed: nothing left to cancel

    async def run(self, task: str, terminal: Any, yes: bool) -> None:
        from temporalio.service import RPCError

        from agcore.cli._durable_status import wait_for_worker

        try:
            await wait_for_worker(self.console, self.client, self.task_queue, self.address)
            self.sent = True
            await self._turn(task, terminal, yes)
        finally:
            if self.outcome is None and not self.failed:
                with anyio.CancelScope(shield=True), anyio.move_on_after(10), \
                        contextlib.suppress(RPCError):
                    await self._abandon()

    async def _turn(self, task: str, terminal: Any, yes: bool) -> None:
        from temporalio.client import RPCTimeoutOrCancelledError, WorkflowUpdateFailedError
        from temporalio.service import RPCError

        from agcore.cli._durable_status import warn_when_stalled
        from agcore.cli._durable_view import DurableTurnView, turn_start
        from agcore.integrations.temporal import SessionClosedError

        session = self.session
        shown = DurableTurnView(self.console, self.turn_id)
        async with anyio.create_task_group() as group:
            group.start_soon(_approve, session, terminal, yes)
            group.start_soon(warn_when_stalled, self.console, self.client, session.session_id,
                             self.task_queue, self.address)
            # From where the stream ends now: the session's earlier turns' text is not this run's.
            group.start_soon(shown.follow, session, await turn_start(session))
            try:
                running = await session.start_turn(task, turn_id=self.turn_id)
                outcome = await running.result()
            except RPCTimeoutOrCancelledError:
                # The SDK reports a cancellation (Ctrl-C) as this error: let the cancellation go on.
                await anyio.lowlevel.checkpoint()
                raise
            except (WorkflowUpdateFailedError, RPCError, SessionClosedError) as exc:
                # The workflow failed (its worker cannot build the agent, say): say why, in its words.
                failed = await _failure_of(self.client, session.session_id)
                if failed is None and isinstance(exc, SessionClosedError):  # ended meanwhile
                    failed = CliError(str(exc), ExitCode.USAGE)
                if failed is None:
                    raise
                self.failed = True
                raise failed from None
            if self.keep_open:
                await shown.settle(outcome.text)
            else:
                await session.close()  # the text stream ends with the session: follow() drains it
                with anyio.move_on_after(10):
                    await shown.drained.wait()
            group.cancel_scope.cancel()
        shown.finish(outcome.text, outcome.messages)
        self.outcome = outcome

    async def _abandon(self) -> None:
        """Interrupted or failed: cancel this turn only; a one-off session ends too (cancelled, or,
        if no worker ever got its turn, terminated: nothing ran that needs answering)."""
        handle = self.session.handle
        if self.keep_open:
            await self.session.cancel_turn(self.turn_id)
        elif self.sent:
            await handle.cancel()  # cancels the running turn and repairs the history, as in-process
        else:
            await handle.terminate("the run was interrupted before a worker took its turn")


async def _approve(session: Any, terminal: Any, yes: bool) -> None:
    """Ask about each call waiting for approval (or approve it, with ``--yes``), as in-process: yes,
    no or always; no input (end of stdin) is no."""
    from temporalio.service import RPCError

    from agcore.cli._setup import _ANSWERS

    answered: set[str] = set()  # a call stays listed until the workflow handles the signal
    while True:
        try:
            waiting = await session.awaiting_confirmation()
        except RPCError:  # no worker to answer the query right now: ask again later
            waiting = []
        for call in waiting:
            if call.id in answered:
                continue
            answer = yes or await terminal.ask(
                f"Allow {call.name}({call.input})?", _ANSWERS, False, hint="y = yes / n = no / a = always"
            )
            answered.add(call.id)
            await session.confirm(call.id, answer)
        await anyio.sleep(POLL_SECONDS)


async def _failure_of(client: Client, workflow_id: str) -> CliError | None:
    """The error a failed workflow ended with, as the CLI reports it; None if it did not fail."""
    from agcore.integrations.temporal import workflow_status

    found = await workflow_status(client, workflow_id)
    if found.state != "failed":
        return None
    return CliError(found.failure or "the workflow failed", ExitCode.TASK_FAILED)


def _outcome_code(outcome: Any) -> ExitCode:
    if outcome.stop in ("done", "stopped_by_hook"):
        return ExitCode.OK
    if outcome.stop == "client_tools":
        names = ", ".join(c.name for c in outcome.pending_tool_calls)
        raise CliError(
            f"the turn paused for client tools ({names}), which the CLI cannot run", ExitCode.TASK_FAILED
        )
    message = outcome.error or outcome.stop
    code = {"ConfigError": ExitCode.CONFIG, "AgentLLMError": ExitCode.PROVIDER}.get(
        outcome.error_type or "", ExitCode.TASK_FAILED
    )
    raise CliError(message, code)
