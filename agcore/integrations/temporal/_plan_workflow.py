"""``PlanWorkflow``: an externally supplied plan, executed durably by ``DefaultTaskAgent.execute_plan``.

Each step is one turn of the plan's session, its model and tool calls activities; a worker lost
mid-step costs only the activity that was running (completed steps, and the completed calls of the
running step, are in the history and are not run again). The Query ``status`` returns the plan with
every step's status as it stands; the workflow's result is the executed plan.

History stays bounded: before a step starts, past ``PlanInput.max_history_events`` events (or when
Temporal suggests it), the workflow continues as new with the plan and its session's snapshot, and
``execute_plan`` resumes the plan there (completed steps are not run again). It does so only while no
step has failed or been skipped, because resuming a plan runs those again.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.contrib.workflow_streams import WorkflowStream

with workflow.unsafe.imports_passed_through():
    from agcore._clock import use_clock
    from agcore.agent import AgentSession, DefaultTaskAgent, Plan, Step, StepStatus
    from agcore.integrations.temporal._clock import WorkflowClock
    from agcore.integrations.temporal._session_workflow import WORKFLOW_FAILURES, describe_agent
    from agcore.integrations.temporal._sessions import open_session, snapshot
    from agcore.integrations.temporal._status import plan_progress, publish_status
    from agcore.integrations.temporal._types import AgentSpec, PlanInput

__all__ = ["PlanWorkflow"]


class _ContinueAsNew(Exception):
    """Raised instead of starting a step when the history is full enough to start a new run."""


class _DurableTaskAgent(DefaultTaskAgent):
    """``DefaultTaskAgent`` that stops before a step when the workflow should continue as new."""

    def __init__(self, workflow_run: PlanWorkflow, input: PlanInput, spec: AgentSpec) -> None:
        super().__init__(spec.name, spec.system_prompt, failure_policy=input.failure_policy,
                         max_retries=input.max_retries)
        self._run = workflow_run

    async def run_step(self, session: AgentSession, plan: Plan, step: Step) -> None:
        if self._run.history_full(plan):
            step.attempts -= 1  # started only to be handed to the next run: not an attempt
            step.reset()
            raise _ContinueAsNew
        await super().run_step(session, plan, step)
        self._run.steps_here += 1


@workflow.defn(name="agcore.Plan", failure_exception_types=list(WORKFLOW_FAILURES))
class PlanWorkflow:
    """An externally supplied plan, executed durably by ``DefaultTaskAgent.execute_plan``: each step a
    turn of the plan's session, its model and tool calls activities, so a lost worker costs only the
    activity that was running. The Query ``status`` returns the plan as it stands; before a step, past
    ``PlanInput.max_history_events`` and while no step has failed, it continues as new (completed steps
    are not run again). See docs/temporal.md."""

    @workflow.init
    def __init__(self, input: PlanInput) -> None:
        self._plan = input.plan.model_copy(deep=True)
        self._input = input
        self.steps_here = 0
        self._stream = WorkflowStream(input.stream_state) if input.stream_text else None
        prior = input.stream_state
        self._stream_start = prior.base_offset + len(prior.log) if prior is not None else 0

    @workflow.run
    async def run(self, input: PlanInput) -> Plan:
        """Execute the plan with ``DefaultTaskAgent.execute_plan``; returns the executed plan."""
        info = workflow.info()
        with use_clock(WorkflowClock()):
            spec = await describe_agent(input.spec, input.options)
            session = await open_session(
                spec, input.options, info.workflow_id, input.snapshot, None,
                stream_text=input.stream_text, compaction=input.compaction, run_id=info.run_id,
            )
            agent = _DurableTaskAgent(self, input, spec)
            self._updated(self._plan)
            try:
                await agent.execute_plan(session, self._plan, on_update=self._updated)
            except _ContinueAsNew:
                carried = await snapshot(session, input.max_snapshot_bytes)
            else:
                await session.close()
                if self._stream is not None:  # let subscribers' long polls go, or the run stays open
                    self._stream.detach_pollers()
                    await workflow.wait_condition(workflow.all_handlers_finished)
                return self._plan
        stream_state = None
        if self._stream is not None:
            self._stream.detach_pollers()
            await workflow.wait_condition(workflow.all_handlers_finished)
            self._stream.truncate(self._stream_start)
            stream_state = self._stream.get_state()
        workflow.continue_as_new(input.model_copy(update={
            "plan": self._plan, "spec": spec, "snapshot": carried, "generation": input.generation + 1,
            "stream_state": stream_state,
        }))

    def history_full(self, plan: Plan) -> bool:
        """Whether to continue as new before the next step: the history is past
        ``PlanInput.max_history_events`` (or Temporal suggests it) and no step has failed or been
        skipped (resuming a plan would run those again)."""
        if self.steps_here == 0:
            return False
        if any(s.status in (StepStatus.FAILED, StepStatus.SKIPPED) for s in plan.steps):
            return False
        info = workflow.info()
        return (info.is_continue_as_new_suggested()
                or info.get_current_history_length() >= self._input.max_history_events)

    def _updated(self, plan: Plan) -> None:
        self._plan = plan
        publish_status(plan_progress(plan, generation=self._input.generation))

    @workflow.query
    def status(self) -> Plan:
        """The plan as it stands: each step's status, attempts, result or error."""
        return self._plan

    @workflow.query
    def generation(self) -> int:
        """How many times this plan has continued as new."""
        return self._input.generation
