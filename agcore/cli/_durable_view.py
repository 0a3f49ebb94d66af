"""What ``agcore run --temporal`` shows of its turn, as ``agcore run`` does in-process: the model's text
as it streams, and each tool call (``▸ name(args)``) with its result (``✓ ...``), read from what the
durable session records (its history, asked when the next model reply starts, and the turn's
messages when it ends)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import anyio
from rich.console import Console

from agcore.agent import AgentMessage, AssistantReply, TextDelta, ToolResults
from agcore.cli._render import Renderer

__all__ = ["DurableTurnView", "turn_start"]


async def turn_start(session: Any) -> tuple[int, int]:
    """Where this run's turn starts: the end of the session's text stream and how many messages its
    history holds (the earlier turns' text and tools are not this run's); (0, 0) when the workflow
    cannot say (it failed to start, and the turn reports why), as a new session is empty anyway."""
    from temporalio.client import WorkflowQueryFailedError
    from temporalio.service import RPCError

    try:
        offset: int = await session.text_offset()
        messages = len(await session.history())
    except (RPCError, WorkflowQueryFailedError):
        return 0, 0
    return offset, messages


class DurableTurnView:
    """The model's text, each call's attempt shown once (a retried call restarts), and the turn's tool
    calls and results, each shown once, in the order they happened. With ``turn_id``, only that
    turn's: the model calls first seen after its mark on the stream (another client's turn on the
    same session, before or after it, is not this run's to print)."""

    def __init__(self, console: Console, turn_id: str | None = None) -> None:
        self.console = console
        self.turn_id = turn_id
        self.in_turn = turn_id is None  # between this turn's mark and the next turn's
        self.seen: set[str] = set()  # model calls seen, any turn's
        self.own: set[str] = set()  # this turn's model calls
        self.first_message = 0  # where this turn's messages start in the session's history
        self.others_ran = False  # another client's turn started on the stream before this one
        self.renderer = Renderer(console, follow_up=False)
        self.attempts: dict[str, int] = {}  # model call -> the attempt being shown
        self.texts: dict[str, str] = {}
        self.drained = anyio.Event()
        self.changed = anyio.Event()  # set (and replaced) at each chunk
        self._shown_calls: set[str] = set()
        self._shown_results: set[str] = set()

    async def follow(self, session: Any, start: tuple[int, int]) -> None:
        """Show the turn's text from ``start`` (``turn_start``) until the session's stream ends."""
        from temporalio.service import RPCError

        # The workflow may close under the subscription (it failed): the turn says why.
        with contextlib.suppress(RPCError):
            await self._follow(session, *start)
        self.drained.set()

    async def _follow(self, session: Any, from_offset: int, first_message: int) -> None:
        self.first_message = first_message
        async for chunk in session.text_chunks(from_offset=from_offset):
            if chunk.turn is not None:
                self.in_turn = chunk.turn == self.turn_id
                if not self.in_turn:
                    self.others_ran = True
                elif self.others_ran:  # their messages came after ``turn_start``'s count: skip them
                    self.first_message = await _history_length(session, self.first_message)
                continue
            if not self._own(chunk.key):
                continue
            shown = self.attempts.get(chunk.key)
            if shown is not None and chunk.attempt < shown:
                continue  # a late piece of an attempt already superseded
            if shown is None:  # a new model reply: the tools run before it go first
                await self._show_tools_so_far(session, self.first_message)
            if chunk.restart and shown is not None:
                self.renderer.line("(the model call failed and is tried again)", style="yellow")
                self.texts[chunk.key] = ""
            self.attempts[chunk.key] = chunk.attempt
            self.texts[chunk.key] = self.texts.get(chunk.key, "") + chunk.text
            self.renderer.event(TextDelta(text=chunk.text))
            self.changed.set()
            self.changed = anyio.Event()

    def _own(self, key: str) -> bool:
        if key not in self.seen:
            self.seen.add(key)
            if self.in_turn:
                self.own.add(key)
        return key in self.own

    async def _show_tools_so_far(self, session: Any, first_message: int) -> None:
        from temporalio.client import WorkflowQueryFailedError
        from temporalio.service import RPCError

        try:
            messages = await session.history()
        except (RPCError, WorkflowQueryFailedError):
            return  # shown from the turn's messages when it ends
        self.show_tools(messages[first_message:])

    def show_tools(self, messages: Sequence[AgentMessage]) -> None:
        """A line per tool call and per result in ``messages`` not shown yet."""
        for message in messages:
            if isinstance(message, AssistantReply):
                for call in message.tool_calls:
                    if call.id not in self._shown_calls:
                        self._shown_calls.add(call.id)
                        self.renderer.tool_call(call)
            elif isinstance(message, ToolResults):
                for result in message.results:  # (a result after its call's line, never alone)
                    answered = result.tool_use_id
                    if answered in self._shown_calls and answered not in self._shown_results:
                        self._shown_results.add(answered)
                        self.renderer.tool_result(result, "error" if result.is_error else "ok")

    async def settle(self, final: str) -> None:
        """Wait (briefly) for the final reply's text to arrive on the stream of a session left open."""
        with anyio.move_on_after(2):
            while final and not any(text == final for text in self.texts.values()):
                await self.changed.wait()

    def finish(self, final: str, messages: Sequence[AgentMessage]) -> None:
        """End the turn: the tool lines not shown yet (the turn's ``messages``), then the final reply
        if the stream did not carry it."""
        streamed = any(text == final for text in self.texts.values())
        self.show_tools(messages)
        if not final or streamed:
            self.renderer.end_text()
            return
        self.renderer.line(final)


async def _history_length(session: Any, otherwise: int) -> int:
    """How many messages the session's history holds now (``otherwise`` when it cannot say)."""
    from temporalio.client import WorkflowQueryFailedError
    from temporalio.service import RPCError

    try:
        return len(await session.history())
    except (RPCError, WorkflowQueryFailedError):
        return otherwise
