"""``PlanWorkflow``: an externally supplied plan, executed durably by ``DefaultTaskAgent.execute_plan``.

Each step is one turn of the plan's session, its model and tool calls activities; a worker lost
mid-step costs only the activity that was running (completed steps, and the completed calls of the
running step, are in the history and are not run again). The Query ``status`` returns the plan with
every step's status as it stands; the workflow's result is the executed plan.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from agcore._clock import use_clock
    from agcore.agent import ConfigError, DefaultTaskAgent, Plan
    from agcore.integrations.temporal._clock import WorkflowClock
    from agcore.integrations.temporal._session_workflow import describe_agent
    from agcore.integrations.temporal._sessions import open_session
    from agcore.integrations.temporal._types import PlanInput

__all__ = ["PlanWorkflow"]


@workflow.defn(name="agcore.Plan", failure_exception_types=[ConfigError])
class PlanWorkflow:
    """See the module docstring."""

    @workflow.init
    def __init__(self, input: PlanInput) -> None:
        self._plan = input.plan.model_copy(deep=True)

    @workflow.run
    async def run(self, input: PlanInput) -> Plan:
        info = workflow.info()
        with use_clock(WorkflowClock()):
            spec = await describe_agent(input.spec, input.options.describe_timeout)
            session = await open_session(spec, input.options, info.workflow_id, None, None)
            agent = DefaultTaskAgent(
                spec.name, spec.system_prompt,
                failure_policy=input.failure_policy, max_retries=input.max_retries,
            )
            await agent.execute_plan(session, self._plan, on_update=self._updated)
            await session.close()
        return self._plan

    def _updated(self, plan: Plan) -> None:
        self._plan = plan

    @workflow.query
    def status(self) -> Plan:
        """The plan as it stands: each step's status, attempts, result or error."""
        return self._plan
