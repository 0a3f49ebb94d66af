"""A plan step delegated to a sub-agent: ``Step.agent`` names one of the task agent's ``subagents``,
and the step's turn runs in a child session of the plan's session (``run_subagent``), saved beside
it as ``subagent_session_id(session id, "step-<id>-<attempt>")``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agcore.agent._result import LimitExceeded
from agcore.agent.plans._plan import Step, StepError
from agcore.agent.subagents._subagent import _specs, run_subagent
from agcore.tools import Tool

if TYPE_CHECKING:
    from agcore.agent._agent_protocol import Agent
    from agcore.agent._session import AgentSession
    from agcore.agent._turn import TurnResult

__all__ = ["run_delegated_step"]


async def run_delegated_step(
    subagents: Mapping[str, Agent | Tool], session: AgentSession, step: Step, task: str,
    output_type: Any = None,
) -> TurnResult | None:
    """The child's turn result for ``step``, typed by ``output_type`` (the step's type; None: the
    sub-agent's own, if it has one); None when the step could not be delegated (it is then failed
    here, saying why)."""
    assert step.agent is not None
    chosen = subagents.get(step.agent)
    if chosen is None:
        known = ", ".join(sorted(subagents)) or "none"
        step.fail(StepError(
            message=f"{step.label} is delegated to the sub-agent {step.agent!r}, which this task agent "
            f"does not have (its sub-agents: {known}). Add it to the task agent's subagents, or "
            "remove the step's `agent`.",
            type="ConfigError",
        ))
        return None
    call_id = f"step-{step.id}-{step.attempts}"
    try:
        if isinstance(chosen, Tool):
            spec = _specs.get(chosen)
            if spec is None:
                step.fail(StepError(
                    message=f"{step.label}: the tool {chosen.name!r} is not a sub-agent; give the task "
                    "agent an Agent, or a tool made by agent_tool().",
                    type="ConfigError",
                ))
                return None
            child = await run_subagent(
                session, spec.agent, task, bundle=spec.bundle, call_id=call_id,
                max_turns=spec.max_turns, max_depth=spec.max_depth, tool_name=chosen.name,
                report_events=False, output_type=output_type,
            )
        else:
            child = await run_subagent(
                session, chosen, task, call_id=call_id, tool_name=step.agent, report_events=False,
                output_type=output_type,
            )
    except LimitExceeded as exc:
        step.fail(StepError.from_error(exc))
        return None
    return child.last_result
