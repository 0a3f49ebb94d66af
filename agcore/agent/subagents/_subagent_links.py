"""What the loop needs to know about sub-agents, below everything that runs them: the events a
parent's children reported (the loop yields them after each tool batch) and the budgets of a
sub-agent's ancestors (checked before each of its model calls). ``_subagent`` builds on this."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from agcore.agent import _events as ev
from agcore.agent._result import LimitExceeded
from agcore.agent.capability import Capability, Finish, TurnView

if TYPE_CHECKING:
    from agcore.agent._batch import Batch
    from agcore.agent.session_like import SessionLike

__all__ = [
    "SubagentLinks",
    "collect_subagent_events",
    "parent_budget_exceeded",
    "report_subagent_event",
    "take_subagent_events",
]

# Events of the running children, per parent session, until the parent's loop reports them.
_pending: weakref.WeakKeyDictionary[SessionLike, list[ev.AgentEvent]] = weakref.WeakKeyDictionary()


def collect_subagent_events(session: SessionLike) -> None:
    """Start keeping the events of ``session``'s children (``SubagentLinks``, before a tool batch, in
    any runtime that drives the steps); until then none are kept, as nobody would report them."""
    _pending[session] = []


def report_subagent_event(parent: SessionLike, event: ev.SubagentEvent) -> None:
    """Keep a child's event for ``parent``'s stream, if its loop collects them."""
    kept = _pending.get(parent)
    if kept is not None:
        kept.append(event)


def take_subagent_events(session: SessionLike) -> list[ev.AgentEvent]:
    """The ``SubagentEvent``s reported by ``session``'s children since the last call (the loop reports
    them after each tool batch)."""
    return _pending.pop(session, [])


def parent_budget_exceeded(session: SessionLike) -> LimitExceeded | None:
    """The limit an ancestor of ``session`` has reached (its ``max_total_tokens`` or ``max_cost_usd``,
    which its sub-agents spend too), or None. The loop checks it before a sub-agent's model calls."""
    ancestor = session.parent
    while ancestor is not None:
        config = ancestor.bundle.config()
        tokens = config.max_total_tokens
        spent = ancestor.usage.usage.total_tokens
        if tokens is not None and spent >= tokens:
            return LimitExceeded(
                "max_total_tokens",
                f"The parent session {ancestor.session_id!r} has spent its token budget "
                f"(max_total_tokens={tokens}, spent {spent:,}), which its sub-agents share, so this "
                "sub-agent stopped. Raise the parent's budget, or give the sub-agent a smaller task.",
                value=tokens,
            )
        dollars = config.max_cost_usd
        cost = ancestor.usage.cost_usd or 0.0
        if dollars is not None and cost >= dollars:
            return LimitExceeded(
                "max_cost_usd",
                f"The parent session {ancestor.session_id!r} has spent its USD budget "
                f"(max_cost_usd={dollars}, spent ${cost:.4f}), which its sub-agents share, so this "
                "sub-agent stopped. Raise the parent's budget, or give the sub-agent a smaller task.",
                value=dollars,
            )
        ancestor = ancestor.parent
    return None




class SubagentLinks(Capability):
    """The events a parent's children report while a batch runs, handed on before its results."""

    def batch_started(self, steps: TurnView, batch: Batch) -> None:
        collect_subagent_events(steps.session)

    def batch_done(self, steps: TurnView, batch: Batch) -> Finish | None:
        for event in take_subagent_events(steps.session):
            steps.emit(event)
        return None
