"""The ``model`` node: a turn's start, and one model call with what follows it.

With input in the state it first starts the turn (``TurnSteps.start``: ``on_session_start`` once,
``on_turn_start``, the input recorded, a history left mid-batch repaired). Then one round of the same
steps the loop drives:
``prepare`` (limits, provider, request, capabilities, ``on_llm_request``), the model call (streamed
when someone reads the events), ``read_reply`` and ``decide``; then the next node: ``tools`` for a
batch, ``model`` again, or the end.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from langgraph.errors import GraphBubbleUp
from langgraph.types import Command

from agcore.agent import CANCELLED, answer_open_calls, resolve_output
from agcore.agent.steps import Finish, RunTools
from agcore.integrations.langgraph._shell import Step, ThreadSessions, take_outcomes
from agcore.llm.types import AssistantMessage, UserMessage

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from agcore.agent import AgentSession
    from agcore.integrations.langgraph._state import AgentState

__all__ = ["ModelNodes"]


def _keep_finished_calls(session: AgentSession, state: AgentState) -> None:
    """A run stopped mid-batch (cancelled, crashed, out of steps) and the thread moves on: the calls
    whose results reached the state keep them, the rest are answered "cancelled" (``start`` answers
    them all so: a loaded history has no record of what finished). A result still a pending write of
    a step that never completed is not in the state: ``recover()`` keeps those, a new turn does not."""
    prior = session.state.turn
    if prior is None or prior.batch is None or prior.paused:
        return
    take_outcomes(prior.batch, state.get("outcomes") or {})
    answer_open_calls(session.messages, CANCELLED, prior.batch)


class ModelNodes:
    """``start`` and ``model``, over the threads' sessions."""

    def __init__(self, threads: ThreadSessions) -> None:
        self._threads = threads

    async def model(self, state: AgentState, config: RunnableConfig) -> Command[str]:
        """A new turn's start when the state holds input, then one model call and the decision that
        follows it (see the module docstring)."""
        step = Step(self._threads, state, config)
        raw = state.get("input")
        if raw is None and step.session.state.turn is None:
            raise ValueError(
                "the graph needs the turn's input: invoke it with {'input': 'your message'} (or a "
                "UserMessage); to continue a run that stopped, invoke it with None or Command(resume=...)"
            )
        started: dict[str, Any] = {}
        try:
            if raw is not None:
                await self._start(step, state, raw)
                started = {"input": None, "stop": None, "error": None, "phase": None, "outcomes": {}}
            return await self._call(step, started)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return await step.fail(exc)

    async def _start(self, step: Step, state: AgentState, raw: UserMessage | str) -> None:
        """The turn's start: calls a stopped run left open answered, the hooks told, the input recorded.
        In the same graph step as the first model call (a step fewer per turn); a crash during that
        call runs the step again from its start, input and ``on_turn_start`` included."""
        message = raw if isinstance(raw, UserMessage) else UserMessage(content=raw)
        _keep_finished_calls(step.session, state)
        await step.steps.start(message, step.thread.output)

    async def _call(self, step: Step, started: dict[str, Any]) -> Command[str]:
        steps = step.steps
        turn = steps.turn
        if turn.output is None:  # the output type is code, not state: the thread's, else the agent's
            turn.output = step.thread.output or resolve_output(None, step.session.agent)
        call = await steps.prepare()
        if isinstance(call, Finish):
            return await step.end(call.stop, call.error, also=started)
        step.send_events()
        message: AssistantMessage | None = None
        async with aclosing(steps.call_model(call, reads_deltas=step.emit)) as calling:
            async for item in calling:
                if isinstance(item, AssistantMessage):
                    message = item
                else:
                    step.send(item)
        assert message is not None
        next_step = await steps.decide(await steps.read_reply(call, message))
        step.send_events()
        if isinstance(next_step, Finish):
            return await step.end(next_step.stop, next_step.error, also=started)
        if isinstance(next_step, RunTools):
            phase: dict[str, Any] = {"cursor": 0, "vetted": False, "runnable": [], "dispatched": False,
                                     "confirm": None}
            return Command(update=step.update(**{**started, "phase": phase, "outcomes": {}}), goto="tools")
        return Command(update=step.update(**started), goto="model")
