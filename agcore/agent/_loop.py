"""THE agent loop, written once: the turn's public steps (``agcore.agent.steps``) driven in order, as
an async generator of ``AgentEvent``s over an ``AgentSession``.

start (or resume) -> [prepare -> the model call -> read the reply -> decide]: ``CallModel`` goes round
again, ``RunTools`` runs the batch (``run_tools``) and ends it, ``Finish`` ends the turn. Features are
capabilities the steps call; this module names none of them. The LangGraph backend drives the same
steps from its nodes; the Temporal workflow runs this loop.

The turn's lifetime is lexical (``_lifetime``): leaving it early, by cancellation, ``aclose()`` of
the stream or an exception in the caller, ends the turn inside it, in the task that leaves it: every
call answered ("cancelled" where it had no result), the session idle, observers told (shielded). A
stream dropped without closing (``break`` out of ``async for``) is closed by the event loop's own
async-generator finalizer, which runs the same exit; the session's next turn waits for that.
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, asynccontextmanager
from typing import TYPE_CHECKING, Protocol

from agcore.agent import _events as ev
from agcore.agent.session_like import SessionLike
from agcore.agent.steps import Finish, ModelCall, Next, RunTools, TurnSteps, run_tools
from agcore.llm.types import AssistantMessage, ToolResultBlock, UserMessage

if TYPE_CHECKING:
    from agcore.agent._result import TurnResult
    from agcore.agent.output._output import StructuredOutput

__all__ = ["LoopSession", "TurnRun", "run_loop", "run_turn", "stream_turn"]


class LoopSession(SessionLike, Protocol):
    """What the in-process loop needs of a session beyond ``SessionLike``: the running turn's token,
    and the checks ``AgentSession`` makes with it."""

    _running: TurnRun | None

    async def settle(self) -> None: ...
    def _check_idle(self, *, closing: bool = True) -> None: ...


class TurnRun:
    """The token of the running turn (``session._running``): whether it is over, and, for a stream,
    whether its consumer still holds it (a plain weak reference: nothing runs when it dies)."""

    __slots__ = ("ended", "stream")

    def __init__(self) -> None:
        self.ended = False
        self.stream: weakref.ref[AsyncIterator[ev.AgentEvent]] | None = None

    @property
    def dropped(self) -> bool:
        """Whether the stream driving the turn was let go mid-turn (the event loop is closing it)."""
        return self.stream is not None and self.stream() is None


async def run_turn(
    session: LoopSession,
    *,
    new_input: UserMessage | None = None,
    client_results: list[ToolResultBlock] | None = None,
    output: StructuredOutput | None = None,
) -> TurnResult:
    """Run the loop to the end without reading the text deltas (``submit_turn``, ``resume``)."""
    loop = run_loop(session, new_input=new_input, client_results=client_results, reads_deltas=False,
                    events=False, output=output)
    async with aclosing(loop) as events:
        async for _ in events:
            pass
    assert session.last_result is not None
    return session.last_result


def stream_turn(
    session: LoopSession,
    *,
    new_input: UserMessage | None = None,
    client_results: list[ToolResultBlock] | None = None,
    output: StructuredOutput | None = None,
) -> AsyncGenerator[ev.AgentEvent, None]:
    """The loop's events (``stream_turn``, ``stream_resume``): ``run_loop`` itself, its token told
    which stream it is, so a dropped one is recognised (see the module docstring)."""
    run = TurnRun()
    stream = run_loop(session, new_input=new_input, client_results=client_results, output=output, run=run)
    run.stream = weakref.ref(stream)
    return stream


async def run_loop(
    session: LoopSession,
    *,
    new_input: UserMessage | None = None,
    client_results: list[ToolResultBlock] | None = None,
    reads_deltas: bool = True,
    events: bool = True,
    output: StructuredOutput | None = None,
    run: TurnRun | None = None,
) -> AsyncGenerator[ev.AgentEvent, None]:
    """The loop, as its events: the turn's steps (``agcore.agent.steps``) driven in order.
    ``reads_deltas=False`` (``submit_turn``, whose caller never sees the text deltas) makes
    ``streaming="auto"`` use one ``complete()`` call per model turn instead of a stream;
    ``events=False`` (``submit_turn`` reads none) has the steps build no events."""
    steps = TurnSteps(session, events=events)
    async with _lifetime(session, steps, run or TurnRun()) as turn:
        try:
            if new_input is not None:
                step: Next = await steps.start(new_input, output)
            else:
                step = await steps.resume(client_results or [], output)
            while not isinstance(step, Finish):
                for event in steps.take_events():
                    yield event
                if isinstance(step, RunTools):
                    await run_tools(steps, step.batch)
                    step = await steps.end_batch(step.batch)
                    continue
                call = await steps.prepare()
                if isinstance(call, Finish):
                    step = call
                    continue
                for event in steps.take_events():
                    yield event
                reply: list[AssistantMessage] = []
                async for event in _model_call(steps, call, reads_deltas, reply):
                    yield event
                step = await steps.decide(await steps.read_reply(call, reply[0]))
            turn.ended = True
            await steps.finish(step.stop, step.error)
        except Exception as exc:
            turn.ended = True
            await steps.fail(exc)
    for event in steps.take_events():
        yield event


async def _model_call(
    steps: TurnSteps, call: ModelCall, reads_deltas: bool, reply: list[AssistantMessage]
) -> AsyncGenerator[ev.AgentEvent, None]:
    """The model call's events; its reply lands in ``reply``."""
    async with aclosing(steps.call_model(call, reads_deltas=reads_deltas)) as calling:
        async for item in calling:
            if isinstance(item, AssistantMessage):
                reply.append(item)
            else:
                yield item


@asynccontextmanager
async def _lifetime(session: LoopSession, steps: TurnSteps, run: TurnRun) -> AsyncIterator[TurnRun]:
    """The running turn: claimed on entry (a dropped stream's turn is let finish closing first);
    left before it ended, it is ended here: repaired and recorded first, so the history is valid
    whatever the observers do, who then run shielded (spans and logs must close)."""
    await session.settle()
    session._check_idle(closing=False)
    session._running = run
    try:
        yield run
    except BaseException:
        if not run.ended:
            run.ended = True
            await steps.report(steps.abandon(), shielded=True)
        raise
    finally:
        if session._running is run:
            session._running = None
