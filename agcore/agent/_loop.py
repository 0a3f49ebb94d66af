"""THE agent loop, written once: the turn's public steps (``agcore.agent.steps``) driven in order, as
an async generator of ``AgentEvent``s over an ``AgentSession``.

start (or resume) -> [prepare -> the model call -> read the reply -> decide]: ``CallModel`` goes round
again, ``RunTools`` runs the batch (``run_tools``) and ends it, ``Finish`` ends the turn.
Features are capabilities the steps call; this module names none of them. The LangGraph backend
drives the same steps from its nodes; the Temporal workflow runs this loop.

The steps never await while the history is half-written, so cancellation at any await leaves a
history the ``finally`` below completes (every call answered exactly once).
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import TYPE_CHECKING

from agcore.agent import _events as ev
from agcore.agent._turn import TurnResult
from agcore.agent.steps import Finish, Next, RunTools, TurnSteps, run_tools
from agcore.llm.types import AssistantMessage, ToolResultBlock, UserMessage

if TYPE_CHECKING:
    from agcore.agent._output import StructuredOutput
    from agcore.agent._session import AgentSession

__all__ = ["run_loop", "run_turn", "stream_turn"]

class _Run:
    """The token of one running turn (``session._running``). A turn whose stream was dropped is
    ended by ``_abandon``, which leaves the result here for the generator's late cleanup."""

    __slots__ = ("reported", "result", "watch")

    def __init__(self) -> None:
        self.result: TurnResult | None = None
        #: Whether ``on_turn_result`` saw the cancelled result (a dropped turn's is reported by the
        #: next turn, before it starts, or by the generator's late cleanup, whichever comes first).
        self.reported = False
        #: For a stream: a weak reference to it whose callback ends the turn if it is dropped.
        self.watch: weakref.ref[AsyncIterator[ev.AgentEvent]] | None = None


async def run_turn(
    session: AgentSession,
    *,
    new_input: UserMessage | None = None,
    client_results: list[ToolResultBlock] | None = None,
    output: StructuredOutput | None = None,
) -> TurnResult:
    """Run the loop to the end without building events (``submit_turn``, ``resume``)."""
    loop = run_loop(session, new_input=new_input, client_results=client_results, reads_deltas=False,
                    output=output)
    async with aclosing(loop) as events:
        async for _ in events:
            pass
    assert session.last_result is not None
    return session.last_result


def stream_turn(
    session: AgentSession,
    *,
    new_input: UserMessage | None = None,
    client_results: list[ToolResultBlock] | None = None,
    output: StructuredOutput | None = None,
) -> AsyncIterator[ev.AgentEvent]:
    """The loop's events (``stream_turn``, ``stream_resume``). A stream dropped mid-turn (``break``
    out of ``async for`` without ``aclosing``) ends its turn the moment it is freed: the history is
    repaired and the session is idle again, before the event loop gets round to closing the
    generator (which then finds nothing left to do)."""
    run = _Run()
    stream = run_loop(session, new_input=new_input, client_results=client_results, run=run, output=output)

    def dropped(_: object) -> None:
        if session._running is run:  # started, and still running: nobody will ever resume it
            _abandon(session, run)

    # Held by the token, which the session holds while the turn runs: the callback fires exactly
    # when it matters (a stream never started, or finished, takes its token with it).
    run.watch = weakref.ref(stream, dropped)
    return stream


def _abandon(session: AgentSession, run: _Run) -> None:
    """End the running turn at once, without awaiting: its stream was dropped mid-turn."""
    run.result = TurnSteps(session).abandon()
    session._running = None
    session._dropped = run


async def run_loop(
    session: AgentSession,
    *,
    new_input: UserMessage | None = None,
    client_results: list[ToolResultBlock] | None = None,
    reads_deltas: bool = True,
    run: _Run | None = None,
    output: StructuredOutput | None = None,
) -> AsyncGenerator[ev.AgentEvent, None]:
    """The loop, as its events: the turn's steps (``agcore.agent.steps``) driven in order.
    ``reads_deltas=False`` (``submit_turn``, whose caller never sees the text deltas) makes
    ``streaming="auto"`` use one ``complete()`` call per model turn instead of a stream."""
    session._check_idle()
    run = run or _Run()
    session._running = run
    steps = TurnSteps(session)
    finished = False
    try:
        dropped, session._dropped = session._dropped, None
        if dropped is not None:  # observers hear how a dropped turn ended before the next one starts
            await _report_dropped(steps, dropped)
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
            reply: AssistantMessage | None = None
            async with aclosing(steps.call_model(call, reads_deltas=reads_deltas)) as calling:
                async for item in calling:
                    if isinstance(item, AssistantMessage):
                        reply = item
                    else:
                        yield item
            assert reply is not None
            step = await steps.decide(await steps.read_reply(call, reply))
        finished = True
        await steps.finish(step.stop, step.error)
    except Exception as exc:
        finished = True
        await steps.fail(exc)
    finally:
        if not finished:
            # Cancelled, or the consumer closed the stream: repair and record first, so the history is
            # valid whatever the observers do; they then run shielded (spans and logs must close).
            # A dropped stream was ended already (``_abandon``): only the observers are left to run.
            if session._running is run:
                _abandon(session, run)
                session._dropped = None
            await _report_dropped(steps, run)
        if session._running is run:
            session._running = None
    for event in steps.take_events():
        yield event



async def _report_dropped(steps: TurnSteps, run: _Run) -> None:
    if run.reported or run.result is None:
        return
    run.reported = True
    await steps.report(run.result, shielded=True)
