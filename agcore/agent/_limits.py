"""The turn's limits as a capability: ``max_turns``, the token and USD budgets (a sub-agent's
ancestors' too), ``session_ttl`` before each model call, and ``max_tool_turns`` before each batch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agcore._clock import now
from agcore.agent._result import LimitExceeded
from agcore.agent.capability import Capability, Finish, TurnView
from agcore.agent.subagents._subagent_links import parent_budget_exceeded

if TYPE_CHECKING:
    from agcore.llm.types import ToolUseBlock

__all__ = ["TOOL_LIMIT", "TurnLimits"]

TOOL_LIMIT = (
    "Not run: this turn reached its limit of tool rounds (max_tool_turns). Answer with what you have."
)


class TurnLimits(Capability):
    """Ends the turn with ``LimitExceeded`` when a limit of ``AgentConfig`` is reached."""

    def before_model_call(self, steps: TurnView) -> Finish | None:
        reached = _reached(steps)
        return Finish("limit", reached) if reached is not None else None

    async def before_tools(self, steps: TurnView, calls: list[ToolUseBlock]) -> Finish | None:
        limit = steps.config.max_tool_turns
        if steps.turn.tool_turns < limit:
            return None
        await steps.decline(calls, TOOL_LIMIT)
        return Finish("limit", LimitExceeded("max_tool_turns", value=limit))


def _reached(steps: TurnView) -> LimitExceeded | None:
    config, session, turn = steps.config, steps.session, steps.turn
    if turn.model_calls >= config.max_turns:
        return LimitExceeded("max_turns", value=config.max_turns)
    tokens = config.max_total_tokens
    if tokens is not None and session.usage.usage.total_tokens >= tokens:
        return LimitExceeded("max_total_tokens", value=tokens)
    dollars = config.max_cost_usd
    if dollars is not None and (session.usage.cost_usd or 0.0) >= dollars:
        return LimitExceeded("max_cost_usd", value=dollars)
    ttl = config.session_ttl
    if ttl is not None and now() - session.created_at > ttl:
        return LimitExceeded("session_ttl", value=ttl)
    if session.parent is not None:  # a sub-agent spends its ancestors' budgets too
        return parent_budget_exceeded(session)
    return None
