"""Read-only planning (seed 000's plan mode): the model may look around the workspace before it
answers with the plan, through the tools marked ``read_only`` only (``Tool.read_only``: reading
files, listing, searching), so drafting a plan changes nothing.

The drafting runs as one turn of a sub-agent session of the session (``run_subagent``): its usage
rolls up, its budgets hold, it is saved beside the session's children, and a call to any other tool
is refused as not offered. Without read-only tools to offer, drafting is the one planning call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agcore._clock import new_id
from agcore.agent._agent import BasicAgent
from agcore.llm.types import AssistantMessage, TextBlock

if TYPE_CHECKING:
    from agcore.agent._session import AgentSession
    from agcore.tools import Tool

__all__ = ["READ_ONLY_NOTE", "explore_for_plan", "read_only_tools"]

#: Added to the planning prompt when the model may explore; ``{tools}`` names the tools.
READ_ONLY_NOTE = (
    "\n\nBefore you answer, you may look around the workspace with these read-only tools: {tools}. "
    "Nothing can be changed while planning; the steps will do the work. When you know enough, "
    "answer with the plan's JSON only."
)


def read_only_tools(session: AgentSession) -> list[str]:
    """The names of the read-only server tools the session's agent offers."""
    registry = session.bundle.tool_registry()
    offered = [d.name for d in session.agent.tool_definitions(session.bundle)]
    return [name for name in offered if _read_only(registry.get(name))]


def _read_only(tool: Tool | None) -> bool:
    return tool is not None and tool.read_only and tool.mode == "server"


async def explore_for_plan(session: AgentSession, prompt: str, system: str | None) -> AssistantMessage | None:
    """The model's plan, drafted in a sub-agent turn that may call the read-only tools only (None:
    the agent offers none, so there is nothing to explore with). Raises the turn's error if it
    ended without an answer."""
    names = read_only_tools(session)
    if not names:
        return None
    allowed = set(names)
    planner = BasicAgent(f"{session.agent.name}-planner", system or session.agent.system_prompt,
                         tools=lambda tool: tool.name in allowed)
    from agcore.agent.subagents._subagent import run_subagent

    child = await run_subagent(session, planner, prompt + READ_ONLY_NOTE.format(tools=", ".join(names)),
                               call_id=f"plan-{new_id()}", report_events=False)
    result = child.last_result
    assert result is not None  # run_subagent always ends the child's turn
    if result.error is not None:
        raise result.error
    return AssistantMessage(content=[TextBlock(text=result.text)])
