"""The ``start`` and ``model`` nodes: a turn's input, and one model call with what follows it.

``start`` is the loop's ``_start_turn`` (``on_session_start`` once, ``on_turn_start``, the input
recorded, a history left mid-batch repaired). ``model`` is one iteration of the loop up to the tool
phase, with the loop's own steps: limits, provider resolution, ``convert_to_llm`` and the context
transform, text-mode tools, ``on_llm_request``, the model call (streamed when someone reads the
events), the reply recorded with its usage and cost, ``on_llm_response``, ``on_turn_end``; then the
next node: ``tools`` for tool calls, ``model`` again for steering or a follow-up, or the end.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from langgraph.errors import GraphBubbleUp
from langgraph.types import Command

from agcore.agent import (
    LimitExceeded,
    ToolCallRequested,
    UserInput,
)
from agcore.agent._batch import CANCELLED, Batch, answer_open_calls
from agcore.agent._loop import (
    _HOOK_STOPPED,
    _TOOL_LIMIT,
    _record_unrun,
    _start_turn,
    _steer,
    _Stop,
    model_call,
)
from agcore.agent._output import resolve_output, settle_final_call, settle_text_answer
from agcore.integrations.langgraph._shell import Step, ThreadSessions, take_outcomes
from agcore.llm.types import AssistantMessage, StopReason, UserMessage

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from agcore.agent import AgentSession
    from agcore.integrations.langgraph._state import AgentState

__all__ = ["ModelNodes"]


def _keep_finished_calls(session: AgentSession, state: AgentState) -> None:
    """A run stopped mid-batch (cancelled, crashed, out of steps) and the thread moves on: the calls
    whose results reached the state keep them, the rest are answered "cancelled" (the loop's
    ``_start_turn`` answers them all so: a loaded history has no record of what finished). A result
    still a pending write of a step that never completed is not in the state: ``recover()`` keeps
    those, a new turn does not."""
    prior = session._turn
    if prior is None or prior.batch is None or prior.paused:
        return
    take_outcomes(prior.batch, state.get("outcomes") or {})
    answer_open_calls(session.messages, CANCELLED, prior.batch)


class ModelNodes:
    """``start`` and ``model``, over the threads' sessions."""

    def __init__(self, threads: ThreadSessions) -> None:
        self._threads = threads

    async def start(self, state: AgentState, config: RunnableConfig) -> Command[str]:
        """A new turn: the input recorded, the hooks told; then the first model call."""
        step = Step(self._threads, state, config)
        raw = state.get("input")
        if raw is None:
            raise ValueError(
                "the graph needs the turn's input: invoke it with {'input': 'your message'} (or a "
                "UserMessage); to continue a run that stopped, invoke it with None or Command(resume=...)"
            )
        message = raw if isinstance(raw, UserMessage) else UserMessage(content=raw)
        try:
            _keep_finished_calls(step.session, state)
            await _start_turn(step.session, step.hooks, message)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return await step.fail(exc)
        return Command(update=step.update(input=None, stop=None, error=None, phase=None, outcomes={}),
                       goto="model")

    async def model(self, state: AgentState, config: RunnableConfig) -> Command[str]:
        """One model call and the decision that follows it (see the module docstring)."""
        step = Step(self._threads, state, config)
        try:
            return await self._call(step)
        except _Stop as stop:
            return await step.end(stop.stop, stop.error)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return await step.fail(exc)

    async def _call(self, step: Step) -> Command[str]:
        session, config, hooks, emit = step.session, step.config, step.hooks, step.emit
        turn = session._turn
        assert turn is not None, "the model node runs inside a turn"
        if turn.output is None:  # the agent's output type: code, so taken from the agent, not the state
            turn.output = resolve_output(None, session.agent)
        message: AssistantMessage | None = None
        async with aclosing(model_call(session, config, hooks, turn, emit)) as calling:
            async for item in calling:
                if isinstance(item, AssistantMessage):
                    message = item
                else:
                    step.send(item)
        assert message is not None
        calls = message.tool_calls
        if hooks.has_impls("on_turn_end") and not await hooks.on_turn_end(session.hook_context(), message):
            if calls:
                await _record_unrun(session, turn, calls, _HOOK_STOPPED)
            raise _Stop("stopped_by_hook")
        accepted = False  # a typed answer given by the final-answer tool in this reply
        if turn.output is not None and calls:
            settled = await settle_final_call(turn, calls, session._record, config.output_retries)
            if settled is False:
                return Command(update=step.update(), goto="model")
            if settled:
                accepted, calls = True, []
        if not calls:
            if turn.reread:  # only unreadable text-mode calls: the model reads the note and retries
                return Command(update=step.update(), goto="model")
            if turn.unreadable is not None:  # still nothing readable after the re-asks
                raise _Stop("error", turn.unreadable)
            if message.stop_reason is StopReason.PAUSE:  # Anthropic's pause_turn: send it back, go on
                return Command(update=step.update(), goto="model")
            steering = session._drain(session._steering)
            if steering:  # the user spoke during the model call: answer that first
                steered = await _steer(session, steering, [])
                if emit:
                    step.send(steered)
                return Command(update=step.update(), goto="model")
            follow_ups = session._drain(session._follow_ups)
            if not follow_ups:
                retries = config.output_retries
                if (turn.output is not None and not accepted
                        and not await settle_text_answer(turn, message, session._record, retries)):
                    return Command(update=step.update(), goto="model")  # asked again, with the errors
                return await step.end("done")
            for follow in follow_ups:
                await session._record(UserInput(content=follow.content))
            return Command(update=step.update(), goto="model")
        if turn.tool_turns >= config.max_tool_turns:
            await _record_unrun(session, turn, calls, _TOOL_LIMIT)
            raise _Stop("limit", LimitExceeded("max_tool_turns", value=config.max_tool_turns))
        turn.tool_turns += 1
        if emit:
            registry = session.bundle.tool_registry()
            for call in calls:
                step.send(ToolCallRequested(call=call, mode=registry.classify(call.name)))
        turn.batch = Batch(calls)
        phase: dict[str, Any] = {
            "cursor": 0, "vetted": False, "runnable": [], "dispatched": False, "stopped": False,
            "confirm": None, "skipped": [],
        }
        return Command(update=step.update(phase=phase, outcomes={}), goto="tools")
