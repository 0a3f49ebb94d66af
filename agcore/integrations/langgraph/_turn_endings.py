"""How a graph run that did not end by itself ends its turn: left early (cancelled, its stream
closed, an error in the caller), it is ended at once as the loop ends a cancelled turn, in the history
and in the checkpoint; and what a run has done so far, to tell whether one that hit LangGraph's step
cap is making progress."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from agcore.agent import AgentSession, LimitExceeded, TurnResult
from agcore.agent.steps import TurnSteps
from agcore.integrations.langgraph._shell import ThreadSession, take_outcomes
from agcore.integrations.langgraph._tool_nodes import CONFIRMATION
from agcore.llm.types import ToolUseBlock

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph.state import CompiledStateGraph

__all__ = ["confirmation_resume", "end_at_step_cap", "end_left_turn", "run_progress"]


async def run_progress(
    graph: CompiledStateGraph[Any, Any, Any, Any], config: RunnableConfig
) -> tuple[Any, ...]:
    """What the thread's checkpoint has done so far (messages, session state, vetting, results)."""
    values = (await graph.aget_state(config)).values
    return (len(values.get("messages") or ()), values.get("session_state"), values.get("phase"),
            sorted(values.get("outcomes") or ()))


async def end_left_turn(
    graph: CompiledStateGraph[Any, Any, Any, Any], config: RunnableConfig, thread: ThreadSession
) -> None:
    """End the turn of a run left early. The session in this process ran the nodes, so it is the
    newest copy: what it recorded that the checkpoint lacks (a step cut short keeps its writes
    pending, and they are dropped with it) is written; calls that finished keep their results, the
    others are answered "cancelled"; observers hear of it (shielded by the caller). A run left while
    its session's ``confirm`` callback was asked (Ctrl-C at the prompt) ends so too, as the loop's
    does: the interrupt it waited at is dropped with the turn."""
    session = thread.session
    snapshot = await graph.aget_state(config)
    pending: set[str] = set()
    finished = dict(snapshot.values.get("outcomes") or {})
    for task in snapshot.tasks:  # the steps cut short: their writes never reach the checkpoint
        if isinstance(task.result, dict):
            pending.update(m.id for m in task.result.get("messages") or ())
            finished.update(task.result.get("outcomes") or {})
    turn = session.state.turn
    if turn is not None and turn.batch is not None:
        take_outcomes(turn.batch, finished)
    steps = TurnSteps(session)
    result = steps.abandon()
    saved = {m.id for m in snapshot.values.get("messages") or () if m.id not in pending}
    state = thread.written = session.state.to_json(running_turn=True)
    update = {"messages": [m for m in session.messages if m.id not in saved], "session_state": state,
              "phase": None, "outcomes": {}, "stop": "cancelled", "error": str(result.error)}
    await graph.aupdate_state(config, update, as_node="model")
    await steps.report(result, shielded=True)


async def end_at_step_cap(session: AgentSession, limit: int, exc: BaseException) -> TurnResult:
    """End the turn of a run that hit LangGraph's step cap without making progress, as the loop ends
    one that hit ``max_turns`` (``on_turn_result`` told)."""
    error = LimitExceeded(
        "max_turns",
        f"The graph ran {limit} steps (LangGraph's recursion_limit, set from max_turns) without "
        "ending the turn: lower the work per turn or raise max_turns. The next turn answers any "
        "call left open.",
        value=session.bundle.config().max_turns,
    )
    error.__cause__ = exc
    result = TurnResult(stop="limit", error=error)
    error.partial = result
    session.last_result = result
    await TurnSteps(session).report(result)
    return result


async def confirmation_resume(session: AgentSession, interrupts: Any) -> Any:
    """The session's ``confirm`` callback's answer to the confirmation the run waits for (the value
    to resume it with); None when there is none or no callback to ask."""
    confirm = session.confirm
    if not interrupts or confirm is None:
        return None
    value = interrupts[0].value
    if not isinstance(value, dict) or value.get("type") != CONFIRMATION:
        return None
    call = ToolUseBlock.model_validate(value["call"])
    tool = session.bundle.tool_registry().get(call.name)
    assert tool is not None
    answer = confirm(call, tool)
    return await answer if inspect.isawaitable(answer) else answer
