"""A plan run in a session with a store survives the process: its progress is saved at every status
change, and ``resume_plan`` in a new session (loaded from the store) redoes nothing finished."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agcore.agent import AgentBuilder, AgentSession, DefaultTaskAgent, Plan, PlanParseError, StepStatus
from agcore.llm import LLMRequest
from agcore.memory import SqliteSessionStore
from agcore.testing import ScriptedProvider

pytestmark = pytest.mark.anyio

PLAN = Plan.from_dict({"goal": "ship it", "steps": ["write the code", "test it", "release it"]})


async def test_a_plan_interrupted_mid_step_resumes_in_a_new_session(tmp_path: Path) -> None:
    agent = DefaultTaskAgent(name="shipper")
    step_two_started = anyio.Event()

    async def hang(request: LLMRequest) -> str:  # the process "dies" during step 2
        step_two_started.set()
        await anyio.sleep_forever()
        return "unreachable"

    async with SqliteSessionStore(tmp_path / "sessions.db") as store:
        first = ScriptedProvider(["code written", hang])
        session = AgentSession(agent, "plan-1", AgentBuilder().provider(first).build(), store=store)
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.execute_plan, session, PLAN.model_copy(deep=True))
            await step_two_started.wait()
            tg.cancel_scope.cancel()

    async with SqliteSessionStore(tmp_path / "sessions.db") as store:  # a new process, in effect
        second = ScriptedProvider(["tests pass", "released"])
        bundle = AgentBuilder().provider(second).build()
        restored = await AgentSession.load(store, "plan-1", agent, bundle)
        saved = Plan.from_dict(restored.app_state["plan"])
        assert [s.status for s in saved.steps] == [StepStatus.COMPLETED, StepStatus.RUNNING,
                                                   StepStatus.PENDING]
        plan = await agent.resume_plan(restored)

    assert [s.status for s in plan.steps] == [StepStatus.COMPLETED] * 3
    assert [s.result for s in plan.steps] == ["code written", "tests pass", "released"]
    assert second.calls == 2  # step 1 was not run again


async def test_resume_plan_without_a_saved_plan_says_what_to_do() -> None:
    session = AgentSession(DefaultTaskAgent(), "empty", AgentBuilder().provider(ScriptedProvider([])).build())
    with pytest.raises(PlanParseError, match="no plan to resume"):
        await DefaultTaskAgent().resume_plan(session)
