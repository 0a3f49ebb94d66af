"""The tool phase as graph nodes: ``tools`` (vetting and recording), ``confirm``, ``tool``, ``client``.

The phase is ``ToolPhase.run`` cut where a graph must cut it:

* ``tools`` vets the reply's calls in the model's order, as ``ToolPhase`` does (steering skips the
  rest, the repetition check, tools the agent did not offer, ``before_tool_call`` denials and
  rewrites). A call that needs the user's approval hands over to ``confirm``; its position is kept
  in ``phase``, so the calls before it are never vetted twice.
* ``confirm`` holds the only ``interrupt()`` of a confirmation, and nothing runs before it in that
  node: LangGraph re-runs an interrupted node from its start on resume, and here that repeats no
  hook and no tool (the lesson of LangGraph's own ToolNode, whose parallel tools each interrupted
  inside one node and re-ran together).
* Each approved server call runs as its own ``tool`` task (``Send``): all at once with
  ``parallel_tool_calls``, else one after another between vetting steps. A finished task's result
  is a pending write in the checkpoint, so after a crash only the calls that had not finished run
  again.
* Back in ``tools`` once everything ran: ``after_tool_call``, then the batch recorded as one
  ``ToolResults`` (every call answered once), steering read, and back to ``model``. Client calls end
  the turn with ``client_tools`` and wait in ``client`` (an ``interrupt()`` resumed with their
  results).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from langgraph.errors import GraphBubbleUp
from langgraph.types import Command, Send, interrupt

from agcore.agent import ClientToolsRequested, LimitExceeded, ToolLog
from agcore.agent._batch import Batch, error_result
from agcore.agent._cycles import repetition_stopped
from agcore.agent._loop import _finish_client_batch, _record_batch, _result_event, _steer, _Stop
from agcore.agent._tool_phase import (
    NOT_RUN,
    SKIPPED,
    denied_message,
    not_approved_message,
    not_offered_message,
    repetition_check,
    run_after_hooks,
    unavailable_message,
)
from agcore.hooks import ConfirmationAnswer
from agcore.integrations.langgraph._shell import Step, ThreadSessions, take_outcomes
from agcore.integrations.langgraph._state import ToolOutcome, ToolTask
from agcore.llm.types import ToolResultBlock, ToolUseBlock
from agcore.tools import Tool, ToolContext, ToolProgress

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from agcore.integrations.langgraph._state import AgentState

__all__ = ["CLIENT_TOOLS", "CONFIRMATION", "ToolNodes", "confirmation_answer"]

#: ``type`` of the value a confirmation's ``interrupt()`` carries (with ``call`` and ``tool``).
CONFIRMATION = "agcore.confirmation"
#: ``type`` of the value the client-tools ``interrupt()`` carries (with ``calls``).
CLIENT_TOOLS = "agcore.client_tools"


def confirmation_answer(value: Any) -> Literal[True, False, "always"]:
    """What a resume value means for a confirmation: True/"yes" run it, "always" runs it and every
    later call of that tool in the thread, anything else refuses it."""
    if value == "always":
        return "always"
    return value is True or (isinstance(value, str) and value.lower() in ("yes", "y", "approve"))


class ToolNodes:
    """``tools``, ``confirm``, ``tool`` and ``client``, over the threads' sessions."""

    def __init__(self, threads: ThreadSessions) -> None:
        self._threads = threads

    # ----------------------------------------------------------------------------- tools

    async def tools(self, state: AgentState, config: RunnableConfig) -> Command[Any]:
        """Vet the batch, dispatch its calls, and record it when every call has its result."""
        step = Step(self._threads, state, config)
        try:
            return await self._advance(step, dict(state.get("phase") or {}), state.get("outcomes") or {})
        except _Stop as stop:
            return await step.end(stop.stop, stop.error)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return await step.fail(exc)

    async def _advance(
        self, step: Step, phase: dict[str, Any], outcomes: dict[str, ToolOutcome]
    ) -> Command[Any]:
        session, config, hooks = step.session, step.config, step.hooks
        turn = session._turn
        assert turn is not None, "the tools node runs inside a turn"
        assert turn.batch is not None, "the tools node runs with a batch in flight"
        batch = turn.batch
        take_outcomes(batch, outcomes)
        if not phase["vetted"]:
            handover = await self._vet(step, batch, phase)
            if handover is not None:
                return handover
        if phase["runnable"] and not phase["dispatched"]:
            phase["dispatched"] = True
            tasks = [
                Send("tool", ToolTask(call=ToolUseBlock.model_validate(call), answers=answers,
                                      session=session.session_id))
                for answers, call in phase["runnable"]
            ]
            return Command(update=step.update(phase=phase), goto=tasks)
        if hooks.has_impls("after_tool_call"):
            await run_after_hooks(hooks, session.hook_context, batch)
        if batch.paused:
            if step.emit:
                for call in batch.calls:
                    done = batch.outcome(call.id)
                    if done is not None:
                        step.send(_result_event(done))
                step.send(ClientToolsRequested(calls=list(batch.client_calls)))
            return await step.end("client_tools", goto="client")
        cycle = turn.cycles.observe(batch, config)  # as the loop does: a nudge, or a stop below
        for event in await _record_batch(session, turn):
            step.send(event)
        steering = batch.steering + session._drain(session._steering)
        if steering:
            steered = await _steer(session, steering, phase["skipped"])
            if step.emit:
                step.send(steered)
        if phase["stopped"]:  # the call the guard stopped at (JSON: the phase is checkpointed)
            raise _Stop("limit", repetition_stopped(ToolUseBlock.model_validate(phase["stopped"]), config))
        if cycle is not None and cycle.stop:
            raise _Stop("limit", LimitExceeded("repetition_limit", cycle.message(),
                                               value=config.repetition_limit))
        return Command(update=step.update(phase=None, outcomes={}), goto="model")

    async def _vet(self, step: Step, batch: Batch, phase: dict[str, Any]) -> Command[Any] | None:
        """``ToolPhase.run``'s checks, from ``phase["cursor"]``; a Command when another node must act
        (a confirmation, or the next call of a sequential batch) before vetting goes on."""
        session, config, hooks = step.session, step.config, step.hooks
        turn = session._turn
        assert turn is not None
        registry = session.bundle.tool_registry()
        calls = batch.calls
        answer = batch.answer
        wants_before = hooks.has_impls("before_tool_call")
        i = phase["cursor"]
        while i < len(calls):
            call = calls[i]
            steering = session._drain(session._steering)
            if steering:
                batch.steering = steering
                for later in calls[i:]:
                    answer(later, error_result(later.id, SKIPPED), "skipped", hookable=False)
                    phase["skipped"].append(later.id)
                break
            verdict, message = repetition_check(call, turn.repetition, config, turn.cycles)
            if verdict == "stop":
                answer(call, error_result(call.id, message), "repeated", hookable=False)
                for later in calls[i + 1 :]:
                    answer(later, error_result(later.id, NOT_RUN), "not_run", hookable=False)
                phase["stopped"] = call.model_dump(mode="json")
                break
            if verdict == "nudge":
                answer(call, error_result(call.id, message), "repeated")
                i += 1
                continue
            tool = registry.get(call.name)
            if tool is not None and tool.name not in turn.offered:
                hidden = not_offered_message(call.name, turn.offered)
                answer(call, error_result(call.id, hidden), "unknown_tool")
                i += 1
                continue
            if tool is None or call.parse_error is not None:
                # Unknown tool or unreadable arguments: the registry words the error, running nothing.
                execution = await registry.execute_detailed(
                    call, session._tool_context, default_timeout=config.tool_timeout
                )
                answer(call, execution.result, execution.status, duration=execution.duration)
                i += 1
                continue
            to_run = call
            if wants_before:
                decision = await hooks.before_tool_call(session.hook_context(), call)
                if decision.action == "deny":
                    answer(call, error_result(call.id, denied_message(call.name, decision.reason)), "denied")
                    i += 1
                    continue
                if decision.action == "rewrite" and decision.arguments is not None:
                    to_run = call.model_copy(update={"input": dict(decision.arguments)})
            if tool.requires_confirmation and tool.name not in session._always_confirmed:
                refused = registry.precheck(to_run)  # a call the tool refuses is never asked about
                if refused is not None:
                    answer(call, error_result(call.id, refused), "denied")
                    i += 1
                    continue
                if not step.thread.interrupt_confirmations:
                    await _report_confirmation(step, to_run, "unavailable")
                    answer(call, error_result(call.id, unavailable_message(tool.name)), "not_approved")
                    i += 1
                    continue
                phase["cursor"] = i
                phase["confirm"] = to_run.model_dump(mode="json")
                return Command(update=step.update(phase=phase), goto="confirm")
            sent = _place(step, batch, phase, call, to_run, tool)
            i += 1
            if sent is not None:
                phase["cursor"] = i
                return Command(update=step.update(phase=phase), goto=sent)
        phase["cursor"] = i
        phase["vetted"] = True
        return None

    # --------------------------------------------------------------------------- confirm

    async def confirm(self, state: AgentState, config: RunnableConfig) -> Command[Any]:
        """Ask for approval of the call at the cursor (``interrupt()``), then go on vetting."""
        step = Step(self._threads, state, config)
        phase = dict(state.get("phase") or {})
        to_run = ToolUseBlock.model_validate(phase["confirm"])
        value = interrupt({"type": CONFIRMATION, "call": phase["confirm"], "tool": to_run.name})
        try:
            session = step.session
            turn = session._turn
            assert turn is not None
            assert turn.batch is not None
            batch = turn.batch
            call = batch.calls[phase["cursor"]]
            tool = session.bundle.tool_registry().get(call.name)
            assert tool is not None
            phase["cursor"] += 1
            phase["confirm"] = None
            given = confirmation_answer(value)
            if given == "always":
                session._always_confirmed.add(tool.name)
            await _report_confirmation(step, to_run, "yes" if given is True else "always" if given else "no")
            if not given:
                batch.answer(call, error_result(call.id, not_approved_message(tool.name)), "not_approved")
                return Command(update=step.update(phase=phase), goto="tools")
            sent = _place(step, batch, phase, call, to_run, tool)
            return Command(update=step.update(phase=phase), goto=sent if sent is not None else "tools")
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return await step.fail(exc)

    # ------------------------------------------------------------------------------ tool

    async def tool(self, task: ToolTask, config: RunnableConfig) -> dict[str, Any]:
        """Run one server call (a task of its own: see the module docstring)."""
        thread = self._threads.get(task["session"])
        session = thread.session
        call = task["call"]
        logs: list[ToolLog] = []

        async def progress(update: ToolProgress) -> None:
            log = ToolLog(text=update.message, tool_use_id=update.tool_call_id or None,
                          tool_name=update.tool_name or None, fraction=update.fraction)
            logs.append(log)
            hooks = session.bundle.hook_executor()
            if hooks.has_impls("on_message"):
                await hooks.on_message(session.hook_context(), log)

        base = session._tool_context
        context = ToolContext(session_id=base.session_id, dependencies=base.dependencies, progress=progress)
        execution = await session.bundle.tool_registry().execute_detailed(
            call, context, default_timeout=session.bundle.config().tool_timeout
        )
        outcome = ToolOutcome(result=execution.result, status=execution.status, duration=execution.duration)
        update: dict[str, Any] = {"outcomes": {task["answers"]: outcome}}
        if logs:
            update["messages"] = logs
        return update

    # ---------------------------------------------------------------------------- client

    async def client(self, state: AgentState, config: RunnableConfig) -> Command[Any]:
        """Wait for the client calls' results (``interrupt()``), record the batch, call the model."""
        step = Step(self._threads, state, config)
        turn = step.session._turn
        assert turn is not None
        assert turn.batch is not None
        value = interrupt({
            "type": CLIENT_TOOLS,
            "calls": [c.model_dump(mode="json") for c in turn.batch.client_calls],
        })
        try:
            results = [ToolResultBlock.model_validate(r) for r in (value or [])]
            for event in await _finish_client_batch(step.session, step.hooks, turn, results):
                step.send(event)
            return Command(update=step.update(phase=None, outcomes={}), goto="model")
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return await step.fail(exc)


def _place(step: Step, batch: Batch, phase: dict[str, Any], call: ToolUseBlock, to_run: ToolUseBlock,
           tool: Tool) -> Send | None:
    """A vetted call to its place: set aside for the client, queued for the parallel dispatch, or
    (sequential) sent to run now."""
    if tool.mode == "client":
        batch.client_calls.append(to_run)
        return None
    if step.config.parallel_tool_calls:
        phase["runnable"].append([call.id, to_run.model_dump(mode="json")])
        return None
    return Send("tool", ToolTask(call=to_run, answers=call.id, session=step.session.session_id))


async def _report_confirmation(step: Step, call: ToolUseBlock, answer: ConfirmationAnswer) -> None:
    if step.hooks.has_impls("on_confirmation"):
        await step.hooks.on_confirmation(step.session.hook_context(), call, answer)
