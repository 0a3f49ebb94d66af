"""What an application sets on a ``GraphSession`` between turns reaches the next turn and the
checkpoint, as on ``AgentSession``: a plan step's ``check:`` runs, hooks see the plan step, and
``load_thread``/``save_thread`` carry ``app_state`` across processes (two opens of one SQLite file).

LangGraph runs on asyncio only, so this module runs on asyncio only (not on trio).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agcore.agent import (
    AcceptanceChecks,
    AgentBuilder,
    AgentSession,
    BasicAgent,
    DefaultTaskAgent,
    Plan,
    StepStatus,
)
from agcore.hooks import HookContext, hookimpl
from agcore.integrations.langgraph import GraphSession, load_thread, save_thread
from agcore.llm.types import ToolUseBlock, UserMessage
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools.workspace import Workspace

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class PlanSteps:
    """Records the plan step each turn belongs to, as hooks see it."""

    def __init__(self) -> None:
        self.seen: list[int | None] = []

    @hookimpl
    def on_turn_start(self, ctx: HookContext, user_input: UserMessage) -> None:
        self.seen.append(ctx.plan_step_index)


PLAN = {"goal": "notes", "steps": [
    {"id": "write", "description": "write notes.txt", "check": "test -f notes.txt"},
    {"id": "report", "description": "say it is done", "depends_on": ["write"]},
]}


@pytest.mark.parametrize("backend", ["loop", "langgraph"])
async def test_a_plans_step_checks_and_step_index_reach_the_turns(tmp_path: Path, backend: str) -> None:
    space = Workspace(tmp_path)
    model = ScriptedProvider([
        "done",  # the step's check fails (no notes.txt): the model is asked again
        tool_call_reply("write_file", {"path": "notes.txt", "content": "hi"}),
        "written",
        "all done",
    ])
    steps = PlanSteps()
    bundle = (AgentBuilder().provider(model).tools(space.tools()).capabilities(AcceptanceChecks(space))
              .plugins(steps).build())
    agent = DefaultTaskAgent(name="planner", verifier=None)
    session: Any = (GraphSession(agent, "p", bundle, confirm=_yes) if backend == "langgraph"
                    else AgentSession(agent, "p", bundle, confirm=_yes))
    done = await agent.execute_plan(session, Plan.from_dict(PLAN))
    assert [s.status for s in done.steps] == [StepStatus.COMPLETED, StepStatus.COMPLETED]
    assert (tmp_path / "notes.txt").read_text() == "hi"  # written only because the check failed first
    assert done.steps[0].result == "written"
    assert steps.seen == [0, 1]


def _yes(call: ToolUseBlock, tool: Any) -> bool:
    return True


def _bundle(replies: list[Any]) -> Any:
    return AgentBuilder().provider(ScriptedProvider(replies)).build()


async def test_app_state_saved_between_turns_is_loaded_by_another_process(tmp_path: Path) -> None:
    path = str(tmp_path / "threads.db")
    agent = BasicAgent("a", "be brief")
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        session = GraphSession(agent, "t1", _bundle(["one"]), checkpointer=saver)
        assert await load_thread(session) is False  # no checkpoint yet
        session.app_state["progress"] = {"step": 1}
        assert await save_thread(session) is True  # a first checkpoint, before any turn
        await session.submit_turn("hi")
        session.app_state["progress"] = {"step": 2}  # changed in place, between turns
        assert await save_thread(session) is True
    async with AsyncSqliteSaver.from_conn_string(path) as saver:  # as a new process would
        again = GraphSession(agent, "t1", _bundle(["two"]), checkpointer=saver)
        assert await load_thread(again) is True
        assert again.app_state == {"progress": {"step": 2}}
        assert [m.kind for m in again.messages] == ["user", "assistant"]
        assert again.usage.calls == 1
        again.app_state["progress"] = {"step": 3}  # set before the next turn: kept by it
        result = await again.submit_turn("more")
        assert result.text == "two"
        assert again.app_state == {"progress": {"step": 3}}
        snapshot = await again.graph.aget_state({"configurable": {"thread_id": "t1"}})
        assert snapshot.values["session_state"]["app_state"] == {"progress": {"step": 3}}
        assert snapshot.next == ()  # saving schedules nothing


async def test_save_thread_leaves_a_thread_waiting_at_an_interrupt_alone(tmp_path: Path) -> None:
    from agcore.tools import tool

    @tool(requires_confirmation=True)
    def deploy() -> str:
        """Deploys."""
        return "deployed"

    bundle = AgentBuilder().provider(ScriptedProvider([tool_call_reply("deploy", {}), "ok"])).tools(
        deploy).build()
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "t.db")) as saver:
        # with a confirm callback the thread interrupts for it; run bare, nothing answers the interrupt
        waiting = GraphSession(BasicAgent("a", "s"), "w", bundle, checkpointer=saver, confirm=_yes)

        await waiting.graph.ainvoke({"input": "deploy it"}, {"configurable": {"thread_id": "w"}})
        assert (await waiting.pending() or {}).get("type") == "agcore.confirmation"
        assert await save_thread(waiting) is False
        assert (await waiting.pending() or {}).get("type") == "agcore.confirmation"  # still waiting
