"""A plan's acceptance checks (``check:`` on the plan and on its steps): which a step's turn runs,
whether the session can run them, and the ``StepError`` of a step whose checks failed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agcore.agent._errors import AgentError, ConfigError, PlanParseError
from agcore.agent.checks import AcceptanceChecks, ChecksFailed
from agcore.agent.plans._plan import Plan, StepError

if TYPE_CHECKING:
    from agcore.agent._session import AgentSession

__all__ = ["check_plan_checks", "step_error"]


def check_plan_checks(session: AgentSession, plan: Plan) -> None:
    """Raise before any step runs when the plan's checks cannot run: on a delegated step
    (``PlanParseError``), or without an ``AcceptanceChecks`` in the session's bundle (``ConfigError``)."""
    checked = [step for step in plan.steps if step.checks] + ([plan.steps[-1]] if plan.checks else [])
    if not checked:
        return
    delegated = next((step for step in plan.steps if step.agent is not None and step.checks), None)
    if delegated is not None:
        raise PlanParseError(
            f"{delegated.label} is delegated to {delegated.agent!r} and has a check, which only steps of "
            "the session's own agent run yet: move the check to such a step or to the plan, or drop "
            "the step's agent."
        )
    capabilities = session.bundle.capabilities() if hasattr(session.bundle, "capabilities") else ()
    if not any(isinstance(c, AcceptanceChecks) for c in capabilities):
        raise ConfigError(
            f"{checked[0].label if checked[0].checks else 'the plan'} has a check, but the session's bundle "
            "has no AcceptanceChecks to run it: add AgentBuilder().capabilities(AcceptanceChecks("
            "workspace)), with the workspace the checks run in.", piece="capabilities",
        )


def step_error(error: AgentError) -> StepError:
    """The ``StepError`` of a step's turn that failed with ``error``; a failed check's command and
    status kept apart (``StepError.check``, ``check_status``) for a status line to show."""
    failed = StepError.from_error(error)
    if isinstance(error, ChecksFailed):
        failed.check, failed.check_status = error.outcome.command, error.outcome.status
    return failed
