"""The plan approval gate (approve, edit, revise with feedback, reject) and read-only planning (the
model explores with the read-only tools only while it drafts), seed 000."""

from __future__ import annotations

from pathlib import Path

import pytest

from agcore.agent import (
    AgentBuilder,
    AgentSession,
    DefaultTaskAgent,
    Plan,
    PlanDecision,
    PlanRejected,
    StepStatus,
)
from agcore.llm import LLMRequest, UserMessage
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import tool
from agcore.tools.workspace import Workspace

pytestmark = pytest.mark.anyio

written: list[str] = []


@tool(read_only=True)
def look(path: str) -> str:
    """Read a file.

    Args:
        path: The file.
    """
    return f"contents of {path}"


@tool
def write(path: str, text: str) -> str:
    """Write a file.

    Args:
        path: The file.
        text: What to write.
    """
    written.append(path)
    return "written"


def plan_json(*steps: str) -> str:
    listed = ", ".join(f'{{"id": "{i + 1}", "description": "{s}"}}' for i, s in enumerate(steps))
    return f'{{"steps": [{listed}]}}'


def make(model: ScriptedProvider, agent: DefaultTaskAgent) -> AgentSession:
    bundle = AgentBuilder().provider(model).tools(look, write).build()
    return AgentSession(agent, "s1", bundle)


def planning_text(request: LLMRequest) -> str:
    first = request.messages[0]
    assert isinstance(first, UserMessage)
    return first.text


async def test_an_approved_plan_runs_and_the_callback_sees_it() -> None:
    seen: list[list[str]] = []

    async def approve(plan: Plan) -> PlanDecision:
        seen.append([s.description for s in plan.steps])
        return PlanDecision.approve()

    model = ScriptedProvider([plan_json("Say hi"), "hi"])
    agent = DefaultTaskAgent(approve_plan=approve)
    plan = await agent.run(make(model, agent), "greet")
    assert seen == [["Say hi"]]
    assert plan.steps[0].status is StepStatus.COMPLETED


async def test_an_edited_plan_runs_instead_of_the_drafted_one() -> None:
    def edit(plan: Plan) -> PlanDecision:
        edited = plan.model_copy(deep=True)
        edited.steps[0].description = "Say hello politely"
        return PlanDecision.approve(edited)

    model = ScriptedProvider([plan_json("Say hi"), "Hello."])
    agent = DefaultTaskAgent(approve_plan=edit)
    session = make(model, agent)
    plan = await agent.run(session, "greet")
    assert plan.steps[0].description == "Say hello politely"
    assert "Say hello politely" in str(model.requests[1].messages[-1])
    assert session.app_state["plan"]["steps"][0]["description"] == "Say hello politely"


async def test_a_revised_plan_is_redrafted_with_the_feedback() -> None:
    answers = iter([PlanDecision.revise("Use two steps"), True])
    model = ScriptedProvider([plan_json("Do it all"), plan_json("First half", "Second half"), "a", "b"])
    agent = DefaultTaskAgent(approve_plan=lambda plan: next(answers))
    plan = await agent.run(make(model, agent), "do the thing")
    assert [s.description for s in plan.steps] == ["First half", "Second half"]
    assert plan.succeeded
    redraft = planning_text(model.requests[1])
    assert "A previous plan for this goal was rejected:\n1. Do it all" in redraft
    assert "The user's feedback: Use two steps" in redraft


async def test_a_rejected_plan_ends_the_run_with_the_reason_and_runs_nothing() -> None:
    model = ScriptedProvider([plan_json("Delete everything")])
    agent = DefaultTaskAgent(approve_plan=lambda plan: PlanDecision.reject("too risky"))
    session = make(model, agent)
    with pytest.raises(PlanRejected, match="too risky") as caught:
        await agent.run(session, "clean up")
    assert caught.value.plan.steps[0].description == "Delete everything"
    assert "Nothing was executed" in str(caught.value)
    assert model.calls == 1
    assert "plan" not in session.app_state  # no plan to resume
    refused = DefaultTaskAgent(approve_plan=lambda plan: False)
    with pytest.raises(PlanRejected, match="no reason given"):
        await refused.run(make(ScriptedProvider([plan_json("x")]), refused), "x")


async def test_revisions_are_bounded() -> None:
    model = ScriptedProvider([plan_json("A"), plan_json("B"), plan_json("C")])
    agent = DefaultTaskAgent(approve_plan=lambda plan: PlanDecision.revise("no"), max_plan_revisions=2)
    with pytest.raises(PlanRejected, match="after 2 redraft") as caught:
        await agent.run(make(model, agent), "x")
    assert caught.value.plan.steps[0].description == "C"
    assert model.calls == 3


async def test_bad_answers_from_the_approver_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="needs the feedback"):
        PlanDecision.revise("  ")
    agent = DefaultTaskAgent(approve_plan=lambda plan: "yes")  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="returns a PlanDecision or a bool"):
        await agent.run(make(ScriptedProvider([plan_json("x")]), agent), "x")


async def test_read_only_planning_offers_only_read_only_tools() -> None:
    written.clear()
    model = ScriptedProvider([
        tool_call_reply("look", {"path": "a.py"}),               # exploring: allowed
        tool_call_reply("write", {"path": "a.py", "text": "x"}),  # not offered while planning
        plan_json("Edit a.py"),
        tool_call_reply("write", {"path": "a.py", "text": "y"}), "Edited.",
    ])
    agent = DefaultTaskAgent(read_only_planning=True)
    session = make(model, agent)
    plan = await agent.run(session, "fix a.py")
    planning = model.requests[0]
    assert [t.name for t in planning.tools] == ["look"]
    assert "read-only tools: look" in planning_text(planning)
    assert "- write:" in planning_text(planning)  # the steps may still write
    assert "not one of the tools available" in str(model.requests[2].messages[-1])
    assert plan.steps[0].status is StepStatus.COMPLETED
    assert written == ["a.py"]  # once, by the step; never while planning
    assert session.usage.calls == 5  # the planning turn's calls roll up into the session


async def test_read_only_planning_without_read_only_tools_is_one_call() -> None:
    model = ScriptedProvider([plan_json("Write it"), "done"])
    agent = DefaultTaskAgent(read_only_planning=True, tools=["write"])
    plan = await agent.run(make(model, agent), "write")
    assert model.requests[0].tools == []
    assert plan.succeeded


def test_workspace_marks_its_reading_tools_read_only(tmp_path: Path) -> None:
    marked = {t.name: t.read_only for t in Workspace(tmp_path).tools()}
    readers = [name for name, read_only in marked.items() if read_only]
    assert readers == ["read_file", "list_dir", "glob", "grep"]
    assert look.read_only
    assert not write.read_only
