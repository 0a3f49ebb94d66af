"""The tool half of the turn's steps (``agcore.agent.steps.TurnSteps`` inherits it): vet one call,
settle a confirmation, run one call, and end a batch.

Per call, in the model's order (``vet``): new steering input skips this and every later call; the
capabilities' checks (the repetition guard); a tool the agent did not offer is refused; an unknown tool
or unreadable arguments are answered by the registry; ``before_tool_call`` (deny -> an error result
the model reads, rewrite -> new arguments); then the call needs the user's approval (``confirm``),
goes to the client, or runs. A runtime asks for approval its own way (a callback in the loop, an
``interrupt()`` in LangGraph, a Signal on Temporal) and hands the answer to ``confirmed``.

Results land in the batch the moment they exist, so a cancelled batch still leaves its finished
results to record next to "cancelled" ones for the rest (``Batch``).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Literal

from agcore.agent import _events as ev
from agcore.agent._batch import Batch, CallOutcome, error_result
from agcore.agent._capabilities import CapabilityTable, capabilities_of
from agcore.agent._messages import AgentMessage, ToolResults, UserInput
from agcore.agent.capability import CallModel, Finish, Next, Vetting

if TYPE_CHECKING:
    from agcore.agent._config import AgentConfig
    from agcore.agent._turn import TurnState
    from agcore.agent.session_like import SessionLike
    from agcore.hooks import ConfirmationAnswer, HookExecutor
    from agcore.llm.types import ToolUseBlock, UserMessage
    from agcore.tools import Tool

__all__ = [
    "SKIPPED",
    "Approval",
    "ToolSteps",
    "denied_message",
    "not_approved_message",
    "not_offered_message",
    "result_event",
    "unavailable_message",
]

#: An answer to "may this call run?": yes, no, yes for every call of this tool in the session, or
#: nobody can be asked (the call is not run and the model is told why).
Approval = Literal[True, False, "always", "unavailable"]

SKIPPED = (
    "Skipped: the user sent a new message before this call ran. Read the new message and decide "
    "what to do next."
)


def denied_message(name: str, reason: str | None) -> str:
    return f"The call to '{name}' was denied: {reason or 'a policy does not allow it'}"


def unavailable_message(name: str) -> str:
    return (
        f"Not run: '{name}' needs the user's approval and this session has no way to ask, "
        "so it was not run. Tell the user what you wanted to do, or reach the goal another way."
    )


def not_approved_message(name: str) -> str:
    return (
        f"Not run: the user did not approve this call to '{name}'. Ask the user how to proceed, "
        "or try something else."
    )


def not_offered_message(name: str, offered: frozenset[str]) -> str:
    available = ", ".join(sorted(offered)) or "none"
    return f"Not run: '{name}' is not one of the tools available to you here. Use one of: {available}."


def result_event(outcome: CallOutcome) -> ev.ToolResultReady:
    return ev.ToolResultReady(
        call_id=outcome.call.id, name=outcome.call.name, result=outcome.result,
        status=outcome.status, duration=outcome.duration,
    )


class ToolSteps:
    """The steps' shared part (session, turn, event buffer) and the tool steps; ``TurnSteps`` adds
    the model steps."""

    def __init__(self, session: SessionLike, *, events: bool = True) -> None:
        bundle = session.bundle
        #: Whether the runtime reads the steps' events (``take_events``). False (``submit_turn``, a
        #: graph run nobody streams): ``emit`` drops them, and the steps build none of their own
        #: (~1-2 µs each, 8 in a tool-call turn).
        self.wants_events = events
        self.session = session
        self.config: AgentConfig = bundle.config()
        self.hooks: HookExecutor = bundle.hook_executor()
        self.capabilities: CapabilityTable = capabilities_of(bundle)
        self._events: list[ev.AgentEvent] = []

    @property
    def turn(self) -> TurnState:
        """The running turn (the steps run only inside one)."""
        turn = self.session.state.turn
        assert turn is not None, "a turn's steps run only inside a turn: start() it first"
        return turn

    def emit(self, event: ev.AgentEvent) -> None:
        """Add ``event`` to what the runtime hands on next (``take_events``); dropped when the runtime
        reads none (``wants_events``)."""
        if self.wants_events:
            self._events.append(event)

    def take_events(self) -> list[ev.AgentEvent]:
        """The events the steps made since the last call, in order."""
        events, self._events = self._events, []
        return events

    async def record(self, message: AgentMessage) -> None:
        """Add ``message`` to the history (saved with a store, shown to ``on_message``)."""
        await self.session.record(message)

    # ----------------------------------------------------------------------------- vetting

    async def vet(self, batch: Batch, call: ToolUseBlock) -> Vetting:
        """What happens to ``call`` (see the module docstring); calls it answers get their result."""
        session = self.session
        steering = session.state.drain_steering()
        if steering:  # the user spoke: this call and the rest are skipped
            return _skip_the_rest(batch, call, steering)
        for capability in self.capabilities.vet_call:
            verdict = capability.vet_call(self, batch, call)
            if verdict is not None:
                return verdict
        registry = session.bundle.tool_registry()
        tool = registry.get(call.name)
        offered = self.turn.offered
        if tool is not None and tool.name not in offered:
            # The agent did not offer it (Agent.tool_definitions filtered it out): hiding a tool must
            # also keep it from running, whatever the model guesses.
            batch.answer(call, error_result(call.id, not_offered_message(call.name, offered)), "unknown_tool")
            return Vetting("answered", call)
        if tool is None or call.parse_error is not None:
            await self.run_call(batch, call, call)  # the registry words the error for the model
            return Vetting("answered", call)
        to_run = await self._as_hooks_allow(batch, call)
        if to_run is None:
            return Vetting("answered", call)
        if tool.requires_confirmation and tool.name not in session.state.always_confirmed:
            refused = registry.precheck(to_run)  # a call the tool refuses anyway is never shown for approval
            if refused is not None:
                batch.answer(call, error_result(call.id, refused), "denied")
                return Vetting("answered", call)
            return Vetting("confirm", to_run, tool)
        return self._place(batch, to_run, tool)

    async def _as_hooks_allow(self, batch: Batch, call: ToolUseBlock) -> ToolUseBlock | None:
        """``call`` as it will run after ``before_tool_call`` (rewritten or not); None when a hook
        denied it (answered)."""
        if not self.hooks.has_impls("before_tool_call"):
            return call
        decision = await self.hooks.before_tool_call(self.session.hook_context(), call)
        if decision.action == "deny":
            batch.answer(call, error_result(call.id, denied_message(call.name, decision.reason)), "denied")
            return None
        if decision.action == "rewrite" and decision.arguments is not None:
            return call.model_copy(update={"input": dict(decision.arguments)})
        return call

    async def ask(self, vetting: Vetting) -> Approval:
        """The session's ``confirm`` callback's answer for a call that needs approval."""
        confirm = self.session.confirm
        if confirm is None:
            return "unavailable"
        assert vetting.tool is not None
        answer = confirm(vetting.call, vetting.tool)
        if inspect.isawaitable(answer):
            answer = await answer
        return "always" if answer == "always" else answer is True

    async def confirmed(
        self, batch: Batch, call: ToolUseBlock, vetting: Vetting, answer: Approval
    ) -> Vetting:
        """Settle a call that needed approval with the user's ``answer`` (``call``: as the model made
        it; ``vetting.call``: as it will run)."""
        tool = vetting.tool
        assert tool is not None
        said: ConfirmationAnswer = "yes" if answer is True else "no" if answer is False else answer
        if answer == "always":
            self.session.state.always_confirmed.add(tool.name)
        if self.hooks.has_impls("on_confirmation"):
            await self.hooks.on_confirmation(self.session.hook_context(), vetting.call, said)
        if answer == "unavailable":
            batch.answer(call, error_result(call.id, unavailable_message(tool.name)), "not_approved")
            return Vetting("answered", call)
        if answer is False:
            batch.answer(call, error_result(call.id, not_approved_message(tool.name)), "not_approved")
            return Vetting("answered", call)
        return self._place(batch, vetting.call, tool)

    def _place(self, batch: Batch, to_run: ToolUseBlock, tool: Tool) -> Vetting:
        if tool.mode == "client":
            batch.client_calls.append(to_run)
            return Vetting("client", to_run, tool)
        return Vetting("run", to_run, tool)

    # ----------------------------------------------------------------------------- running

    async def run_call(self, batch: Batch, original: ToolUseBlock, call: ToolUseBlock) -> None:
        """Run one server call; its result answers ``original`` (a rewrite changes only arguments).
        The registry applies the timeout: the tool's own, else its default, else the config's."""
        execution = await self.session.bundle.tool_registry().execute_detailed(
            call, self.session.tool_context, default_timeout=self.config.tool_timeout
        )
        batch.answer(original, execution.result, execution.status, duration=execution.duration)

    # ------------------------------------------------------------------------------ ending

    async def end_batch(self, batch: Batch) -> Next:
        """Every call has its result (or waits for the client): ``after_tool_call``, the capabilities'
        look at the batch, then the batch recorded and steering read; or the turn paused."""
        if self.hooks.has_impls("after_tool_call"):
            await self._after_hooks(batch)
        finish: Finish | None = None
        for capability in self.capabilities.batch_done:
            finish = capability.batch_done(self, batch) or finish
        if batch.paused:
            for call in batch.calls:
                done = batch.outcome(call.id)
                if done is not None:
                    self.emit(result_event(done))
            self.emit(ev.ClientToolsRequested(calls=list(batch.client_calls)))
            if self.session.store is not None:  # the pause must outlive this process
                await self.session.save()
            return Finish("client_tools")
        await self.record_batch(batch)
        steering = batch.steering + self.session.state.drain_steering()
        if steering:  # input that arrived while the batch ran is read now, not later
            await self.steer(steering, batch.skipped)
        return finish or CallModel()

    async def _after_hooks(self, batch: Batch) -> None:
        """``after_tool_call`` over the answered calls, in the model's order (results the steps made
        up themselves are not shown to it); a rewritten result keeps answering its call."""
        for call in batch.calls:
            done = batch.outcome(call.id)
            if done is None or not done.hookable:
                continue
            rewritten = await self.hooks.after_tool_call(
                self.session.hook_context(), call, done.result, done.status, done.duration
            )
            if rewritten is not done.result:
                if rewritten.tool_use_id != call.id:
                    rewritten = rewritten.model_copy(update={"tool_use_id": call.id})
                done.result = rewritten

    async def record_batch(self, batch: Batch, *, emit: bool = True) -> None:
        """Record ``batch`` as one ToolResults message (calls in the model's order; any without a
        result: cancelled) and end it."""
        outcomes = batch.outcomes()
        self.turn.batch = None  # no await before the append: the batch is in the history or in flight
        await self.session.record(ToolResults(results=[o.result for o in outcomes]))
        if emit and self.wants_events:
            for outcome in outcomes:
                self.emit(result_event(outcome))

    async def decline(self, calls: list[ToolUseBlock], reason: str) -> None:
        """Answer every call of a reply that will not run (a hook stopped the turn, a limit)."""
        batch = self.turn.batch = Batch(calls)
        batch.answer_rest(reason, "not_run")
        await self.record_batch(batch, emit=False)

    async def steer(self, steering: list[UserMessage], skipped: list[str]) -> None:
        """Record input the user sent while the turn ran; the model reads it next."""
        for message in steering:
            await self.session.record(UserInput(content=message.content))
        text = "\n".join(m.content if isinstance(m.content, str) else "" for m in steering)
        self.emit(ev.Steered(skipped=skipped, text=text))


def _skip_the_rest(batch: Batch, call: ToolUseBlock, steering: list[UserMessage]) -> Vetting:
    """The user spoke before ``call`` ran: it and the calls after it are skipped; the batch keeps
    the input, read once it is recorded."""
    batch.steering = steering
    for later in batch.calls[batch.calls.index(call) :]:
        batch.answer(later, error_result(later.id, SKIPPED), "skipped", hookable=False)
        batch.skipped.append(later.id)
    return Vetting("stop", call)
