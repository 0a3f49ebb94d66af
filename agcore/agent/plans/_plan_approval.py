"""The approval gate between a drafted plan and its execution (seed 000: the plan is shown, and work
starts only once it is approved).

``DefaultTaskAgent(approve_plan=callback)``: ``run`` hands each drafted plan to ``callback(plan)``
(sync or async), which answers with a ``PlanDecision``:

* ``PlanDecision.approve()`` (or ``True``): execute it;
* ``PlanDecision.approve(edited)``: execute ``edited`` instead (the user changed the steps);
* ``PlanDecision.revise("feedback")``: draft again with the rejected plan and the feedback in the
  prompt, and ask again; after ``max_plan_revisions`` redrafts the run ends with ``PlanRejected``;
* ``PlanDecision.reject("reason")`` (or ``False``): the run ends with ``PlanRejected`` naming the
  reason; nothing is executed and the session keeps no plan to resume.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from agcore.agent._errors import AgentError
from agcore.agent.plans._plan import Plan

if TYPE_CHECKING:
    from agcore.agent._session import AgentSession

__all__ = ["PlanApproval", "PlanDecision", "PlanRejected", "revision_note", "settle_plan"]


@dataclass(frozen=True, slots=True)
class PlanDecision:
    """What the approver decided about a drafted plan; build one with ``approve``, ``revise`` or
    ``reject``."""

    action: Literal["approve", "revise", "reject"]
    feedback: str = ""
    #: For ``approve``: the plan to execute instead of the drafted one (an edit); None: as drafted.
    plan: Plan | None = None

    @classmethod
    def approve(cls, edited: Plan | None = None) -> PlanDecision:
        """Execute the plan (or ``edited``, the user's version of it)."""
        return cls("approve", plan=edited)

    @classmethod
    def revise(cls, feedback: str) -> PlanDecision:
        """Draft the plan again, following ``feedback``."""
        if not feedback.strip():
            raise ValueError("revise() needs the feedback the new plan should follow")
        return cls("revise", feedback=feedback.strip())

    @classmethod
    def reject(cls, reason: str = "") -> PlanDecision:
        """Do not execute any plan; the run ends with ``PlanRejected`` saying ``reason``."""
        return cls("reject", feedback=reason.strip())


#: Asked with each drafted plan before it runs; sync or async; a bool is approve/reject.
PlanApproval = Callable[[Plan], "PlanDecision | bool | Awaitable[PlanDecision | bool]"]


class PlanRejected(AgentError):
    """The plan was not approved: ``reason`` says why, ``plan`` is the last plan shown."""

    recoverable: ClassVar[bool] = False

    def __init__(self, reason: str, plan: Plan, *, revisions: int = 0) -> None:
        tried = f" after {revisions} redraft(s)" if revisions else ""
        said = reason or "no reason given"
        super().__init__(f"The plan was rejected{tried}: {said}. Nothing was executed.")
        self.reason = reason
        self.plan = plan
        self.revisions = revisions


def revision_note(rejected: Plan, feedback: str) -> str:
    """What a redraft's prompt adds: the rejected plan's steps and the feedback to follow."""
    steps = "\n".join(f"{s.id}. {s.description}" for s in rejected.steps)
    return (f"\n\nA previous plan for this goal was rejected:\n{steps}\nThe user's feedback: {feedback}\n"
            "Draft a new plan that follows the feedback.")


Redraft = Callable[["AgentSession", str, str], Awaitable[Plan]]


async def settle_plan(
    session: AgentSession, goal: str, plan: Plan, approve: PlanApproval, *, redraft: Redraft,
    max_revisions: int,
) -> Plan:
    """Ask ``approve`` about ``plan`` until it is approved (the plan to execute), redrafting with
    ``redraft(session, goal, note)`` on ``revise``; raises ``PlanRejected`` on ``reject``, or when
    ``max_revisions`` redrafts were not approved either."""
    revisions = 0
    while True:
        decision = _as_decision(await _answer(approve, plan))
        if decision.action == "approve":
            chosen = decision.plan or plan
            chosen.check()
            return chosen
        if decision.action == "reject":
            raise PlanRejected(decision.feedback, plan, revisions=revisions)
        if revisions >= max_revisions:
            raise PlanRejected(f"still not approved after {max_revisions} redraft(s); last feedback: "
                               f"{decision.feedback}", plan, revisions=revisions)
        revisions += 1
        plan = await redraft(session, goal, revision_note(plan, decision.feedback))


async def _answer(approve: PlanApproval, plan: Plan) -> PlanDecision | bool:
    answer = approve(plan)
    return await answer if inspect.isawaitable(answer) else answer


def _as_decision(answer: PlanDecision | bool) -> PlanDecision:
    if isinstance(answer, PlanDecision):
        return answer
    if isinstance(answer, bool):
        return PlanDecision.approve() if answer else PlanDecision.reject()
    raise TypeError(f"a plan approval callback returns a PlanDecision or a bool, not {answer!r}")
