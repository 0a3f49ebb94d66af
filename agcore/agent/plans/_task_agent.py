"""``TaskAgent``: work on a goal as a plan, one turn per step. ``DefaultTaskAgent`` is the reference.

Two entries (seed 003 §4.4): ``run(session, goal)`` has the model draft the plan (one planning call,
re-asked once with the parse error if the answer cannot be read), then executes it;
``execute_plan(session, plan)`` executes a plan supplied from outside (``Plan.load("plan.yaml")``).

Execution, per step, in list order but never before the steps it ``depends_on``:

* the step turns ``running`` (``attempts`` + 1), ``session.plan_step_index`` is its index, and it runs
  as one ``session.submit_turn()`` whose input holds the goal, the results of the steps completed so
  far and the step itself (``step_input()``, overridable);
* a turn that ends ``done`` completes the step with the turn's text, if the agent's ``verifier``
  (``DefaultStepVerifier``) agrees that the turn did the step: no tool call when the step's hints
  expected some, an answer that repeats the step or writes a tool result itself fail the step with
  ``StepError.type`` ``"StepNotVerified"`` (recoverable: a retry tells the model why); any other
  ending fails it (``StepError``: the turn's error, and whether it is recoverable);
* a step with checks (its ``check:``, and the plan's for the last step: ``plan.checks_for(step)``)
  runs them through the bundle's ``AcceptanceChecks`` when its agent says it is done, in place of
  the verifier; checks that still fail fail the step (``"ChecksFailed"``, with ``StepError.check``);
* a failure is handled by ``failure_policy``: ``"stop"`` ends the run (later steps stay ``pending``),
  ``"continue"`` goes on with the steps that do not need the failed one, ``"retry"`` runs the step
  again while its error is recoverable (``AgentError.is_recoverable()``), at most ``max_retries`` more
  times, and then stops. Under every policy the steps that need a failed step, directly or not, are
  ``skipped`` with a reason naming it;
* each step reaching a final status fires ``on_plan_step_complete(ctx, step)`` with
  ``ctx.plan_step_index`` set to its index; ``session.plan_step_index`` is None again afterwards.

The plan is updated in place and returned. Running ``execute_plan`` on a plan some of whose steps are
``completed`` (a plan persisted mid-run) resumes it: completed steps are not run again and their
results are still given to later steps; every other step (pending, running when the process died,
failed, skipped) is run again.

The plan is also kept in ``session.app_state["plan"]`` after every status change (a step starts, ends
or is skipped, and once a drafted plan is read), and a session with a store is saved right then: after
``AgentSession.load`` in a new process, ``resume_plan(session)`` continues it, redoing nothing done.
``on_update(plan)`` (sync or async), given to the agent or to a call, is called at the same points, for
applications that keep plans elsewhere. The planning call goes to the session's provider
(``bundle_resolve_provider``), passes the ``on_llm_request``/``on_llm_response`` hooks and is counted in
``session.usage``, but is not added to the session's history.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from agcore.agent._agent import Agent, BasicAgent
from agcore.agent._errors import PlanParseError
from agcore.agent._wrap_up import judged_answers
from agcore.agent.checks import checks_for_turn
from agcore.agent.output._output import StructuredOutput, resolve_output
from agcore.agent.plans._plan import Plan, Step, StepError, StepStatus
from agcore.agent.plans._plan_approval import PlanApproval, settle_plan
from agcore.agent.plans._plan_checks import check_plan_checks, step_error
from agcore.agent.plans._plan_drafting import (
    DEFAULT_PLAN_PROMPT,
    DEFAULT_REASK_PROMPT,
    PlanPromptBuilder,
    draft_with_reask,
    plan_prompt,
)
from agcore.agent.plans._plan_exploring import explore_for_plan
from agcore.agent.plans._plan_parser import JsonPlanParser, PlanParser
from agcore.agent.plans._plan_routing import IntentChoice, answer_directly, intent_to_answer_directly
from agcore.agent.plans._step_check import NOT_VERIFIED, DefaultStepVerifier, StepVerifier
from agcore.llm.types import ToolDefinition
from agcore.tools import Tool

if TYPE_CHECKING:
    from agcore.agent._bundle import RuntimeBundle
    from agcore.agent._session import AgentSession
    from agcore.agent._turn import TurnResult

__all__ = [
    "DEFAULT_PLAN_PROMPT",
    "DEFAULT_REASK_PROMPT",
    "DefaultTaskAgent",
    "PLAN_STATE_KEY",
    "FailurePolicy",
    "PlanUpdate",
    "TaskAgent",
]

FailurePolicy = Literal["stop", "continue", "retry"]
#: Where a session keeps its plan's progress (``session.app_state[PLAN_STATE_KEY]``, saved with it).
PLAN_STATE_KEY = "plan"
#: Called with the plan after every status change; sync or async. Persist the plan here.
PlanUpdate = Callable[[Plan], "Awaitable[None] | None"]

_RESULT_CHARS = 4000
_log = logging.getLogger("agcore.agent")
_DEFAULT_VERIFIER = DefaultStepVerifier()


@runtime_checkable
class TaskAgent(Agent, Protocol):
    """An ``Agent`` that works through plans, one turn per step: ``run`` has the model draft the plan
    and executes it, ``execute_plan`` executes a plan given from outside. The guide's "Plans and
    execute_plan" page describes execution, the failure policies and resuming."""

    async def run(self, session: AgentSession, goal: str) -> Plan:
        """Draft a plan for ``goal`` with the model, then execute it; the executed plan."""
        ...

    async def execute_plan(
        self,
        session: AgentSession,
        plan: Plan,
        *,
        failure_policy: FailurePolicy | None = None,
        max_retries: int | None = None,
    ) -> Plan:
        """Execute ``plan`` (resuming it if some steps are completed); the plan, updated in place."""
        ...


class DefaultTaskAgent:
    """The reference ``TaskAgent``; subclass it to change a piece (``step_input``, ``draft_plan``...).

    ``name``, ``system_prompt`` and ``tools`` are as for ``BasicAgent``; the step turns use the
    session's agent (normally this one). ``parser`` reads the model's plan (``JsonPlanParser()``);
    ``plan_prompt`` is a template (``{goal}``, ``{tools}``, ``{shape}``) or a function
    ``(goal, tool_definitions) -> str``; ``reask_prompt`` a template with ``{error}``.
    ``failure_policy``, ``max_retries`` and ``on_update`` are the defaults of ``execute_plan``.
    ``subagents`` are the agents a step may be delegated to (``Step.agent`` names one): the step then
    runs as the turn of a child session (``agcore.agent.run_subagent``), not in this session.
    ``output_types`` names the types a step may declare as its ``output_type`` (``{"report":
    Report}``): such a step's turn must answer with a valid ``Report`` (``Step.output``).
    ``output_type`` types the plan's final answer, its last step (``plan_output(plan)``); the other
    steps answer in text unless they name a type.
    ``verifier`` decides whether a step's turn did the step (``DefaultStepVerifier()``; None accepts
    every turn that ends normally).
    ``intent`` (an ``IntentClassifier`` or ``IntentGate``) decides first whether ``run`` plans the
    goal at all: a goal whose intent's route does not plan (chat, a question about the agent or the
    repository, by default) is answered in one turn, returned as a one-step plan.
    ``approve_plan`` is asked about each drafted plan before ``run`` executes it (``PlanDecision``:
    approve, approve an edited plan, revise with feedback, at most ``max_plan_revisions`` times, or
    reject: ``PlanRejected``). ``read_only_planning`` lets the model explore with the tools marked
    ``read_only`` while it drafts (a sub-agent turn), so planning changes nothing.
    """

    def __init__(
        self,
        name: str = "task_agent",
        system_prompt: str | None = None,
        *,
        tools: Sequence[str] | Callable[[Tool], bool] | None = None,
        parser: PlanParser | None = None,
        plan_prompt: str | PlanPromptBuilder = DEFAULT_PLAN_PROMPT,
        reask_prompt: str = DEFAULT_REASK_PROMPT,
        planning_system_prompt: str | None = None,
        failure_policy: FailurePolicy = "stop",
        max_retries: int = 2,
        on_update: PlanUpdate | None = None,
        subagents: Mapping[str, Agent | Tool] | None = None,
        output_types: Mapping[str, Any] | None = None,
        output_type: Any = None,
        verifier: StepVerifier | None = _DEFAULT_VERIFIER,
        intent: IntentChoice | None = None,
        approve_plan: PlanApproval | None = None,
        max_plan_revisions: int = 3,
        read_only_planning: bool = False,
    ) -> None:
        _check_policy(failure_policy, max_retries)
        self.name = name
        self.system_prompt = system_prompt
        self.tools = tools
        self.parser: PlanParser = parser if parser is not None else JsonPlanParser()
        self.plan_prompt = plan_prompt
        self.reask_prompt = reask_prompt
        self.planning_system_prompt = planning_system_prompt
        self.failure_policy: FailurePolicy = failure_policy
        self.max_retries = max_retries
        self.on_update = on_update
        #: Sub-agents a step may be delegated to (``Step.agent`` names one): an ``Agent`` (run with the
        #: session's bundle) or a tool ``agent_tool`` made (run with its bundle and limits).
        self.subagents: dict[str, Agent | Tool] = dict(subagents or {})
        #: The types a step's ``output_type`` may name, by name (a type or a ``StructuredOutput``).
        self.output_types: dict[str, Any] = dict(output_types or {})
        #: The type of the plan's final answer: its last step's, unless that step names its own.
        self.output_type = output_type
        self.verifier = verifier
        self.intent = intent
        self.approve_plan = approve_plan
        self.max_plan_revisions = max_plan_revisions
        self.read_only_planning = read_only_planning

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def tool_definitions(self, bundle: RuntimeBundle) -> list[ToolDefinition]:
        """The tools ``tools`` picks, as for ``BasicAgent``."""
        return BasicAgent(self.name, self.system_prompt, self.tools).tool_definitions(bundle)

    def as_tool(self, bundle: RuntimeBundle | None = None, **options: Any) -> Tool:
        """This agent as a sub-agent tool: ``agent_tool(self, bundle, **options)``. The sub-agent runs
        one turn on the task (not a plan)."""
        from agcore.agent.subagents._subagent import agent_tool

        return agent_tool(self, bundle, **options)

    # -------------------------------------------------------------------------- entries

    async def run(self, session: AgentSession, goal: str) -> Plan:
        """Draft a plan for ``goal`` (``draft_plan``), then execute it (``execute_plan``); the executed plan.
        Raises ``PlanParseError`` when the model's plan cannot be read even when asked again, and
        ``PlanRejected`` when ``approve_plan`` rejects it. With an ``intent`` classifier, a goal that
        needs no plan is answered in one turn instead."""
        direct = await intent_to_answer_directly(self.intent, session, goal)
        if direct is not None:
            plan = await answer_directly(session, goal, direct)
            await self._notify(session, plan, self.on_update)
            return plan
        plan = await self.draft_plan(session, goal)
        if self.approve_plan is not None:
            plan = await settle_plan(
                session, goal, plan, self.approve_plan, max_revisions=self.max_plan_revisions,
                redraft=lambda s, g, note: self.draft_plan(s, g, revision=note))
        await self._notify(session, plan, self.on_update)
        return await self.execute_plan(session, plan)

    async def resume_plan(self, session: AgentSession, **options: Any) -> Plan:
        """Continue the plan saved in the session (``session.app_state["plan"]``), e.g. after
        ``AgentSession.load`` in a new process: completed steps are not run again."""
        saved = session.app_state.get(PLAN_STATE_KEY)
        if saved is None:
            raise PlanParseError(
                f"session {session.session_id!r} holds no plan to resume: start one with run() or "
                "execute_plan()"
            )
        return await self.execute_plan(session, Plan.from_dict(saved), **options)

    async def draft_plan(self, session: AgentSession, goal: str, *, revision: str = "",
                         read_only: bool | None = None) -> Plan:
        """Ask the model for a plan; on a ``PlanParseError`` ask once more, showing it the error.
        ``revision`` is added to the prompt (a rejected plan and the feedback on it); ``read_only``
        (None: ``read_only_planning``) lets the model explore with the read-only tools first.
        What the parser changed to read the plan is in ``plan.warnings`` (and logged as warnings of
        the ``agcore.agent`` logger). Raises the second ``PlanParseError``, or the model call's
        ``AgentError``."""
        home = session.in_process  # drafting is a model call, not a turn: on any backend, in-process
        tools = home.agent.tool_definitions(home.bundle)
        prompt = self._plan_prompt(goal, tools) + revision
        explore = self.read_only_planning if read_only is None else read_only
        explored = await explore_for_plan(home, prompt, self.planning_system_prompt) if explore else None
        return await draft_with_reask(home, goal, prompt, self.parser, reask_prompt=self.reask_prompt,
                                      system=self.planning_system_prompt, first_reply=explored)

    async def execute_plan(
        self,
        session: AgentSession,
        plan: Plan,
        *,
        failure_policy: FailurePolicy | None = None,
        max_retries: int | None = None,
        on_update: PlanUpdate | None = None,
    ) -> Plan:
        """Execute ``plan`` one turn per step, in order and never before a step's ``depends_on``; the plan,
        updated in place. Completed steps are not redone (a resume). ``failure_policy``, ``max_retries``
        and ``on_update`` override the agent's defaults for this call. Raises ``ValueError`` for an unknown
        policy and ``PlanParseError`` if the steps do not fit together; a failed step is recorded in the
        plan, not raised."""
        policy: FailurePolicy = failure_policy or self.failure_policy
        retries = self.max_retries if max_retries is None else max_retries
        _check_policy(policy, retries)
        update = on_update if on_update is not None else self.on_update
        plan.check()
        self._check_output_types(plan)
        check_plan_checks(session, plan)
        for step in plan.steps:
            if not step.done:
                step.reset()
        try:
            while (next_step := _next_step(plan)) is not None:
                step = next_step
                session.plan_step_index = plan.index_of(step.id)
                tries = 0
                while True:
                    tries += 1
                    step.start()
                    await self._notify(session, plan, update)
                    await self.run_step(session, plan, step)
                    error = step.error
                    if error is None or not (policy == "retry" and error.recoverable and tries <= retries):
                        break
                await self._finished(session, plan, step, update)
                if step.status is StepStatus.FAILED:
                    for dependent in plan.dependents(step.id):
                        if not dependent.done:
                            dependent.skip(f"{step.label} failed, and this step needs its result")
                            session.plan_step_index = plan.index_of(dependent.id)
                            await self._finished(session, plan, dependent, update)
                    if policy != "continue":
                        break
        finally:
            session.plan_step_index = None
        return plan

    # ---------------------------------------------------------------------------- pieces

    async def run_step(self, session: AgentSession, plan: Plan, step: Step) -> None:
        """Run ``step`` as one turn and complete or fail it by how the turn ended and what the
        ``verifier`` says of it. A step with an ``agent`` runs as the turn of that sub-agent's child
        session. A step with an ``output_type`` is a typed turn (a delegated one too: the child's turn
        is typed by the step's type): its validated answer is kept in ``step.output`` (as JSON data)
        and its JSON is the step's result."""
        step.output = None
        prompt = self.step_input(plan, step)
        output = self._step_output_type(step, plan)
        checks = plan.checks_for(step)
        if step.agent is not None:  # a typed step types the sub-agent's turn (else its own type does)
            from agcore.agent.subagents._subagent_step import run_delegated_step

            result = await run_delegated_step(self.subagents, session, step, prompt, output)
            if result is None:
                return
        else:
            judged: AbstractContextManager[None] = nullcontext()
            if _has_checks(plan):  # a forced answer is checked before the plan says done (WrapUp)
                judged = judged_answers(session)
            with checks_for_turn(session, checks), judged:
                if output is None and resolve_output(None, session.agent) is None:
                    result = await session.submit_turn(prompt)
                else:  # an untyped step stays untyped whatever the session's agent types its turns as
                    result = await session.submit_turn(prompt, output_type=output or str)
        if result.stop != "done" or result.error is not None:
            step.fail(_turn_error(result))
            return
        if self.verifier is not None and not checks:  # the checks, where given, verified the step
            tools = [t.name for t in session.agent.tool_definitions(session.bundle)]
            problem = await self.verifier.verify(step, result, prompt=prompt, tools=tools)
            if problem is not None:
                step.fail(StepError(message=f"not done: {problem}", type=NOT_VERIFIED, recoverable=True))
                return
        step.complete(result.text)
        if output is not None:
            step.output = output.dump(result.output)

    def step_output(self, step: Step, plan: Plan | None = None) -> Any:
        """The typed answer of a completed ``step`` with an output type (validated again from the
        saved ``step.output``, so a resumed plan gives it too); None for a step without one. Give
        the ``plan`` for its last step typed by the agent's ``output_type``."""
        output = self._step_output_type(step, plan)
        if output is None or step.output is None:
            return None
        return output.validate_data(step.output)

    def plan_output(self, plan: Plan) -> Any:
        """The plan's typed final answer: its last step's (None until that step is completed)."""
        return self.step_output(plan.steps[-1], plan)

    def _step_output_type(self, step: Step, plan: Plan | None) -> StructuredOutput | None:
        if step.output_type is not None:
            return resolve_output(self.output_types[step.output_type], None)
        if self.output_type is not None and plan is not None and step is plan.steps[-1]:
            return resolve_output(self.output_type, None)
        return None

    def _check_output_types(self, plan: Plan) -> None:
        for step in plan.steps:
            if step.output_type is not None and step.output_type not in self.output_types:
                known = ", ".join(sorted(self.output_types)) or "none"
                raise PlanParseError(
                    f"{step.label} declares output_type {step.output_type!r}, which the task agent does "
                    f"not know (its output_types: {known}): pass output_types={{{step.output_type!r}: "
                    "YourModel} to the task agent, or fix the plan."
                )

    def step_input(self, plan: Plan, step: Step) -> str:
        """The user input of ``step``'s turn: the goal, the completed steps' results, the step."""
        lines = [f"Goal: {plan.goal}" if plan.goal else "Work through this plan.", ""]
        earlier = [s for s in plan.steps if s.done and s is not step]
        if earlier:
            lines.append("Results of the steps done so far:")
            for done in earlier:
                lines.append(f"- Step {done.id} ({done.description}): {_clip(done.result or '')}")
            lines.append("")
        lines.append(f"Now carry out step {step.id} of {len(plan.steps)}: {step.description}")
        if step.tool_hints:
            lines.append("Tools that will likely help: " + ", ".join(step.tool_hints))
        last = step.last_error
        if last is not None and last.type == NOT_VERIFIED and step.attempts > 1:
            lines.append(f"Your last attempt at this step was not accepted ({last.message}). Call the "
                         "tools the step needs and wait for their results; do not write results yourself.")
        lines.append("Do only this step, then answer with its outcome.")
        return "\n".join(lines)

    def _plan_prompt(self, goal: str, tools: Sequence[ToolDefinition]) -> str:
        return plan_prompt(self.plan_prompt, goal, tools, self.subagents)

    async def _finished(
        self, session: AgentSession, plan: Plan, step: Step, update: PlanUpdate | None
    ) -> None:
        await self._notify(session, plan, update)
        hooks = session.bundle.hook_executor()
        if hooks.has_impls("on_plan_step_complete"):
            await hooks.on_plan_step_complete(session.hook_context(), step)

    @staticmethod
    async def _notify(session: AgentSession, plan: Plan, update: PlanUpdate | None) -> None:
        # The plan is part of the session's state: a session with a store saves it at every change,
        # so a process killed mid-plan resumes it (``resume_plan``) without redoing finished steps.
        session.app_state[PLAN_STATE_KEY] = plan.model_dump(mode="json")
        if session.store is not None:
            await session.save()
        if update is not None:
            outcome = update(plan)
            if inspect.isawaitable(outcome):
                await outcome


def _check_policy(policy: str, retries: int) -> None:
    if policy not in ("stop", "continue", "retry"):
        raise ValueError(f"failure_policy must be 'stop', 'continue' or 'retry', not {policy!r}")
    if retries < 0:
        raise ValueError(f"max_retries must be 0 or more, not {retries}")


def _next_step(plan: Plan) -> Step | None:
    """The first pending step whose dependencies are all completed."""
    for step in plan.steps:
        if step.status is StepStatus.PENDING and all(plan.get(d).done for d in step.depends_on):
            return step
    return None


def _turn_error(result: TurnResult) -> StepError:
    if result.error is not None:
        return step_error(result.error)
    if result.stop == "client_tools":
        names = ", ".join(c.name for c in result.pending_tool_calls)
        message = (f"The step's turn paused for client tools ({names}), which a plan cannot run: "
                   "offer only server tools to a task agent.")
    else:
        message = f"The step's turn ended with {result.stop!r} instead of an answer."
    return StepError(message=message, type="AgentError", recoverable=False)


def _has_checks(plan: Plan) -> bool:
    """Whether checks judge the plan's work before it says done (its own, or a step's)."""
    return bool(plan.checks) or any(step.checks for step in plan.steps)


def _clip(text: str) -> str:
    return text if len(text) <= _RESULT_CHARS else text[:_RESULT_CHARS] + " [...]"
