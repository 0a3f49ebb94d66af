"""Whether a task agent plans a goal at all (seed 002's decision gate): a goal whose intent's route
does not plan (chat, a question about the agent, a repository question) is answered in one turn,
and the run returns a one-step plan holding that answer, so callers read every run the same way."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agcore.agent._capabilities import capabilities_of
from agcore.agent.intent import DEFAULT_ROUTES, Intent, IntentClassifier, IntentGate, preset_intent
from agcore.agent.plans._plan import Plan, Step, StepError

if TYPE_CHECKING:
    from agcore.agent._session import AgentSession

__all__ = ["IntentChoice", "answer_directly", "intent_to_answer_directly"]

#: What ``DefaultTaskAgent(intent=...)`` takes: a classifier (routed by ``DEFAULT_ROUTES``), or a
#: gate whose routes decide (the same gate may be on the bundle, routing the turns' tools).
IntentChoice = IntentClassifier | IntentGate


async def intent_to_answer_directly(
    choice: IntentChoice | None, session: AgentSession, goal: str
) -> Intent | None:
    """The goal's intent when its route does not plan (answer it directly); None: draft a plan."""
    if choice is None:
        return None
    if isinstance(choice, IntentGate):
        intent = await choice.decide(goal, session)
        route = choice.route(intent)
    else:
        intent = await choice.classify(goal, session)
        route = DEFAULT_ROUTES.get(intent.label)
    return intent if route is not None and not route.plan else None


async def answer_directly(session: AgentSession, goal: str, intent: Intent) -> Plan:
    """Answer ``goal`` in one turn of ``session`` (an ``IntentGate`` on its bundle runs the turn as
    ``intent`` without classifying it again); the one-step plan that records the answer."""
    step = Step(id="1", description=goal)
    plan = Plan(goal=goal, steps=[step])
    if any(isinstance(c, IntentGate) for c in capabilities_of(session.bundle).all):
        preset_intent(session, intent)
    step.start()
    result = await session.submit_turn(goal)
    if result.stop == "done" and result.error is None:
        step.complete(result.text)
    elif result.error is not None:
        step.fail(result.error)
    else:
        step.fail(StepError(message=f"The turn ended with {result.stop!r} instead of an answer.",
                            type="AgentError", recoverable=False))
    return plan
