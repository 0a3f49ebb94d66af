"""Plans and the task agent: ``Plan`` / ``Step`` read from JSON, YAML or Python, the model's plan mended
(``JsonPlanParser``), ``DefaultTaskAgent`` drafting and executing them step by step, steps verified.

All of it is also importable from ``agcore.agent``; loaded on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agcore._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from agcore.agent.plans._plan import Plan, Step, StepError, StepStatus
    from agcore.agent.plans._plan_approval import PlanApproval, PlanDecision, PlanRejected, settle_plan
    from agcore.agent.plans._plan_parser import JsonPlanParser, PlanParser
    from agcore.agent.plans._step_check import DefaultStepVerifier, StepVerifier
    from agcore.agent.plans._task_agent import (
        DEFAULT_PLAN_PROMPT,
        DEFAULT_REASK_PROMPT,
        PLAN_STATE_KEY,
        DefaultTaskAgent,
        FailurePolicy,
        PlanUpdate,
        TaskAgent,
    )

#: Each public name and the module defining it (``agcore.agent`` re-exports them from this map).
EXPORTS = {
    "DEFAULT_PLAN_PROMPT": "agcore.agent.plans._task_agent",
    "DEFAULT_REASK_PROMPT": "agcore.agent.plans._task_agent",
    "DefaultStepVerifier": "agcore.agent.plans._step_check",
    "DefaultTaskAgent": "agcore.agent.plans._task_agent",
    "FailurePolicy": "agcore.agent.plans._task_agent",
    "JsonPlanParser": "agcore.agent.plans._plan_parser",
    "PLAN_STATE_KEY": "agcore.agent.plans._task_agent",
    "Plan": "agcore.agent.plans._plan",
    "PlanApproval": "agcore.agent.plans._plan_approval",
    "PlanDecision": "agcore.agent.plans._plan_approval",
    "PlanRejected": "agcore.agent.plans._plan_approval",
    "PlanParser": "agcore.agent.plans._plan_parser",
    "PlanUpdate": "agcore.agent.plans._task_agent",
    "Step": "agcore.agent.plans._plan",
    "StepError": "agcore.agent.plans._plan",
    "StepStatus": "agcore.agent.plans._plan",
    "StepVerifier": "agcore.agent.plans._step_check",
    "TaskAgent": "agcore.agent.plans._task_agent",
    "settle_plan": "agcore.agent.plans._plan_approval",
}

__all__ = [
    "DEFAULT_PLAN_PROMPT",
    "DEFAULT_REASK_PROMPT",
    "DefaultStepVerifier",
    "DefaultTaskAgent",
    "FailurePolicy",
    "JsonPlanParser",
    "PLAN_STATE_KEY",
    "Plan",
    "PlanApproval",
    "PlanDecision",
    "PlanParser",
    "PlanRejected",
    "PlanUpdate",
    "Step",
    "StepError",
    "StepStatus",
    "StepVerifier",
    "TaskAgent",
    "settle_plan",
]


def __getattr__(name: str) -> Any:
    return lazy_getattr(__name__, EXPORTS, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, EXPORTS)
