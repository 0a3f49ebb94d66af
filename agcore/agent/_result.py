"""How a turn ended (``TurnResult``), and the limit error that carries the turn so far
(``LimitExceeded.partial``): one module, so neither depends on the other's module."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agcore.agent._errors import AgentError
from agcore.llm.types import ToolUseBlock, Usage

if TYPE_CHECKING:
    from agcore.agent._events import TurnStop
    from agcore.agent._messages import AgentMessage

__all__ = ["LimitExceeded", "TurnResult"]


@dataclass(slots=True)
class TurnResult:
    """How a turn (one ``submit_turn`` plus any ``resume``s) ended; see ``AgentSession`` for ``stop``.

    ``turns`` counts model calls, ``usage``/``cost_usd`` are this turn's (the session's totals are in
    ``session.usage``), ``messages`` are the messages the turn added to the history. ``output`` is
    the answer validated into the turn's ``output_type`` (None without one).
    """

    text: str = ""
    stop: TurnStop = "done"
    pending_tool_calls: list[ToolUseBlock] = field(default_factory=list)
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    messages: list[AgentMessage] = field(default_factory=list)
    error: AgentError | None = None
    #: The typed final answer of a turn run with an output type (None otherwise, and when it failed).
    output: Any = None
    #: What the turn's capabilities kept (``TurnState.capabilities``, by their names): e.g. the
    #: acceptance checks' results, which ``agcore.agent.checks.check_report(result)`` reads.
    capabilities: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether the turn ended without an error (``error`` is None)."""
        return self.error is None


_LIMIT_ADVICE = {
    "max_turns": "raise AgentConfig.max_turns, or ask for a smaller task",
    "max_tool_turns": "raise AgentConfig.max_tool_turns, or ask for a task needing fewer tool calls",
    "max_total_tokens": "raise AgentConfig.max_total_tokens, or compact the history",
    "max_cost_usd": "raise AgentConfig.max_cost_usd, or use a cheaper model",
    "session_ttl": "start a new session, or raise AgentConfig.session_ttl",
    "repetition_limit": (
        "the model repeated the same tool call; rephrase the request, fix the tool's result, or "
        "raise AgentConfig.repetition_limit"
    ),
}


class LimitExceeded(AgentError):
    """A configured cap stopped the turn. ``limit`` is the ``AgentConfig`` field's name, ``value`` its
    setting; ``partial`` is the ``TurnResult`` so far (what was said and done before the stop)."""

    def __init__(
        self,
        limit: str,
        message: str | None = None,
        *,
        value: Any = None,
        partial: TurnResult | None = None,
    ) -> None:
        setting = f" ({limit}={value!r})" if value is not None else ""
        advice = _LIMIT_ADVICE.get(limit, f"raise the {limit} limit")
        super().__init__(message or f"The turn hit its {limit} limit{setting}: {advice}.")
        self.limit = limit
        self.value = value
        self.partial = partial


