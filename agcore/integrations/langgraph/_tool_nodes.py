"""The tool phase as graph nodes: ``tools`` (vetting and recording), ``confirm``, ``tool``, ``client``.

The phase is the loop's tool steps cut where a graph must cut it:

* ``tools`` vets the reply's calls in the model's order with the kernel's own step
  (``TurnSteps.vet``: steering, the capabilities' checks, tools not offered, ``before_tool_call``).
  A call that needs the user's approval hands over to ``confirm``; its position is kept in
  ``phase``, so the calls before it are never vetted twice.
* ``confirm`` holds the only ``interrupt()`` of a confirmation, and nothing runs before it in that
  node: LangGraph re-runs an interrupted node from its start on resume, and here that repeats no
  hook and no tool (the lesson of LangGraph's own ToolNode, whose parallel tools each interrupted
  inside one node and re-ran together).
* Each approved server call of a batch of several runs as its own ``tool`` task (``Send``): all at
  once with ``parallel_tool_calls`` (one at a time once all are vetted when ``run_together`` says
  no, as the loop runs them), else one after another between vetting steps. A batch of one
  call runs inside ``tools`` (one graph step instead of three; its result is checkpointed with the
  batch, as a task's would be). A finished task's result is a pending write in the checkpoint, so
  after a crash only the calls that had not finished run again.
* Back in ``tools`` once everything ran: ``TurnSteps.end_batch`` (``after_tool_call``, the
  capabilities, the batch recorded as one ``ToolResults``, steering read), and back to ``model``.
  The tasks' progress lines are recorded then, in the order they were reported across tasks. Client calls end
  the turn with ``client_tools`` and wait in ``client`` (an ``interrupt()`` resumed with their
  results).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from langgraph.errors import GraphBubbleUp
from langgraph.graph import END
from langgraph.types import Command, Send, interrupt

from agcore.agent import Batch, ToolLog
from agcore.agent.capability import Vetting
from agcore.agent.steps import Finish, run_together
from agcore.integrations.langgraph._shell import Step, ThreadSessions, take_outcomes
from agcore.integrations.langgraph._state import ToolOutcome, ToolTask
from agcore.llm.types import ToolResultBlock, ToolUseBlock
from agcore.tools import ToolContext, ToolProgress

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
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return await step.fail(exc)

    async def _advance(
        self, step: Step, phase: dict[str, Any], outcomes: dict[str, ToolOutcome]
    ) -> Command[Any]:
        steps = step.steps
        batch = steps.turn.batch
        assert batch is not None, "the tools node runs with a batch in flight"
        take_outcomes(batch, outcomes)
        if not phase["vetted"]:
            handover = await self._vet(step, batch, phase)
            if handover is not None:
                return handover
        if phase["runnable"] and not phase["dispatched"]:
            tasks = _dispatch(step, phase)  # (first: it moves phase on)
            return Command(update=step.update(phase=phase), goto=tasks)
        await _record_progress(step, batch, outcomes)
        next_step = await steps.end_batch(batch)
        step.send_events()
        if isinstance(next_step, Finish):
            paused = next_step.stop == "client_tools"
            return await step.end(next_step.stop, next_step.error, goto="client" if paused else END)
        return Command(update=step.update(phase=None, outcomes={}), goto="model")

    async def _vet(self, step: Step, batch: Batch, phase: dict[str, Any]) -> Command[Any] | None:
        """``TurnSteps.vet`` over the calls from ``phase["cursor"]``; a Command when another node must
        act (a confirmation, or the next call of a sequential batch) before vetting goes on."""
        steps = step.steps
        calls = batch.calls
        i = phase["cursor"]
        while i < len(calls):
            call = calls[i]
            vetting = await steps.vet(batch, call)
            if vetting.action == "stop":
                break
            if vetting.action == "confirm":
                if step.thread.interrupt_confirmations:
                    phase["cursor"] = i
                    phase["confirm"] = vetting.call.model_dump(mode="json")
                    return Command(update=step.update(phase=phase), goto="confirm")
                vetting = await steps.confirmed(batch, call, vetting, "unavailable")
            i += 1
            if vetting.action == "run" and len(calls) == 1:
                # A batch of one call runs here: its result is checkpointed with the batch, as a task's
                # would be, in one graph step instead of three.
                await steps.run_call(batch, call, vetting.call)
                continue
            sent = _place(step, phase, call, vetting)
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
            steps = step.steps
            batch = steps.turn.batch
            assert batch is not None
            call = batch.calls[phase["cursor"]]
            tool = step.session.bundle.tool_registry().get(call.name)
            phase["cursor"] += 1
            phase["confirm"] = None
            vetting = await steps.confirmed(batch, call, Vetting("confirm", to_run, tool),
                                            confirmation_answer(value))
            sent = _place(step, phase, call, vetting)
            return Command(update=step.update(phase=phase), goto=sent if sent is not None else "tools")
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return await step.fail(exc)

    # ------------------------------------------------------------------------------ tool

    async def tool(self, task: ToolTask, config: RunnableConfig) -> dict[str, Any]:
        """Run one server call (a task of its own: see the module docstring). Its progress lines go
        to the hooks as they come and to the ``tools`` node with its result, to be recorded in the
        order they came across the batch's tasks."""
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

        base = session.tool_context
        context = ToolContext(session_id=base.session_id, dependencies=base.dependencies, progress=progress)
        execution = await session.bundle.tool_registry().execute_detailed(
            call, context, default_timeout=session.bundle.config().tool_timeout
        )
        outcome = ToolOutcome(result=execution.result, status=execution.status, duration=execution.duration,
                              logs=logs)
        return {"outcomes": {task["answers"]: outcome}}

    # ---------------------------------------------------------------------------- client

    async def client(self, state: AgentState, config: RunnableConfig) -> Command[Any]:
        """Wait for the client calls' results (``interrupt()``), record the batch, call the model."""
        step = Step(self._threads, state, config)
        batch = step.steps.turn.batch
        assert batch is not None
        value = interrupt({
            "type": CLIENT_TOOLS,
            "calls": [c.model_dump(mode="json") for c in batch.client_calls],
        })
        try:
            results = [ToolResultBlock.model_validate(r) for r in (value or [])]
            await step.steps.resume(results)
            step.send_events()
            return Command(update=step.update(phase=None, outcomes={}), goto="model")
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return await step.fail(exc)


async def _record_progress(step: Step, batch: Batch, outcomes: dict[str, ToolOutcome]) -> None:
    """The tasks' progress lines, in the order they were reported (each task's in its own order),
    recorded as the loop records them: before the batch's results. The hooks saw them already."""
    logs = [log for call in batch.calls for log in (outcomes.get(call.id) or {}).get("logs", ())]
    logs.sort(key=lambda log: log.created_at)  # stable: a task's own lines keep their order
    step.session.messages.extend(logs)


def _dispatch(step: Step, phase: dict[str, Any]) -> list[Send]:
    """The queued calls' tasks: all at once, or, when ``run_together`` says no, the next one (the
    ``tools`` node sends the one after when it is back)."""
    runnable = phase["runnable"]
    if run_together(bool(entry[2:] and entry[2]) for entry in runnable):
        chosen, phase["dispatched"] = runnable, True
    else:
        sent = phase.get("sent", 0)
        chosen, phase["sent"] = runnable[sent : sent + 1], sent + 1
        phase["dispatched"] = phase["sent"] >= len(runnable)
    return [
        Send("tool", ToolTask(call=ToolUseBlock.model_validate(call), answers=answers,
                              session=step.session.session_id))
        for answers, call, *_ in chosen
    ]


def _place(step: Step, phase: dict[str, Any], call: ToolUseBlock, vetting: Vetting) -> Send | None:
    """A call vetted to run: queued for the parallel dispatch (with whether its tool is read-only,
    for ``run_together``), or (sequential) sent to run now."""
    if vetting.action != "run":
        return None
    if step.config.parallel_tool_calls:
        read_only = vetting.tool is not None and vetting.tool.read_only
        phase["runnable"].append([call.id, vetting.call.model_dump(mode="json"), read_only])
        return None
    return Send("tool", ToolTask(call=vetting.call, answers=call.id, session=step.session.session_id))
