"""``check:`` on a plan and on its steps: a step counts as done once its checks pass (the model is
shown a failure and asked again), the plan's checks run with its last step, and a step without a
check still has the step verifier. Plans from YAML, real commands in a tmp workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from agcore.agent import (
    AcceptanceChecks,
    AgentBuilder,
    AgentSession,
    ConfigError,
    ContextNote,
    DefaultTaskAgent,
    Plan,
    PlanParseError,
    StepStatus,
)
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools.workspace import Workspace

pytestmark = pytest.mark.anyio

PLAN = """
goal: write the two numbers
check: grep -qx 2 two.txt
steps:
  - id: one
    description: write 1 to one.txt
    tool_hints: [write_file]
    check: grep -qx 1 one.txt
  - id: two
    description: write 2 to two.txt
"""


def make(
    tmp_path: Path, replies: list[object], *, checks: bool = True
) -> tuple[DefaultTaskAgent, AgentSession]:
    workspace = Workspace(tmp_path, confirm_commands=False, confirm_writes=False)
    builder = AgentBuilder().provider(ScriptedProvider(replies)).tools(workspace.tools())
    if checks:
        builder.capabilities(AcceptanceChecks(workspace, rounds=1))
    agent = DefaultTaskAgent(system_prompt="You carry out plans.")
    return agent, AgentSession(agent, "p1", builder.build())


def write(path: str, content: str) -> object:
    return tool_call_reply("write_file", {"path": path, "content": content})


async def test_a_steps_check_sends_it_back_until_it_passes_and_the_plans_runs_last(tmp_path: Path) -> None:
    agent, session = make(tmp_path, [
        "Step one is done.",  # claimed: one.txt is missing, the step's check fails
        write("one.txt", "1\n"), "Wrote one.txt.",
        write("two.txt", "2\n"), "Wrote two.txt.",  # the plan's check runs with this last step
    ])
    plan = await agent.execute_plan(session, Plan.from_yaml(PLAN))
    assert plan.succeeded, [s.error for s in plan.steps]
    assert (tmp_path / "one.txt").read_text() == "1\n"
    notes = [m.text for m in session.messages if isinstance(m, ContextNote)]
    assert len(notes) == 1
    assert "`grep -qx 1 one.txt` failed (exit 2)"  # grep: no such file in notes[0]


async def test_a_plans_check_failing_after_the_rounds_fails_the_last_step(tmp_path: Path) -> None:
    agent, session = make(tmp_path, [
        write("one.txt", "1\n"), "Wrote one.txt.",
        write("two.txt", "3\n"), "Wrote two.txt.", "It is right.",  # two.txt holds 3: never passes
        "It is still right.",  # nothing changed since the failure: asked for the change once, then checked
    ])
    plan = await agent.execute_plan(session, Plan.from_yaml(PLAN))
    assert not plan.succeeded
    first, last = plan.steps
    assert first.status is StepStatus.COMPLETED
    assert last.status is StepStatus.FAILED
    assert last.error is not None
    assert last.error.type == "ChecksFailed"
    assert (last.error.check, last.error.check_status) == ("grep -qx 2 two.txt", "exit 1")
    assert last.error.recoverable
    # saved with the plan and read back (a resumed run shows the same)
    again = Plan.from_json(plan.to_json())
    assert again.steps[1].error is not None
    assert again.steps[1].error.check == "grep -qx 2 two.txt"
    assert again.checks == ["grep -qx 2 two.txt"]


async def test_a_step_without_a_check_keeps_the_step_verifier(tmp_path: Path) -> None:
    text = "steps:\n  - description: write 1 to one.txt\n    tool_hints: [write_file]\n"
    agent, session = make(tmp_path, ["Done, I wrote it."])
    plan = await agent.execute_plan(session, Plan.from_yaml(text))
    step = plan.steps[0]
    assert step.status is StepStatus.FAILED
    assert step.error is not None
    assert step.error.type == "StepNotVerified"


async def test_a_passing_check_stands_in_for_the_verifier(tmp_path: Path) -> None:
    # the verifier would reject this turn (no tool call though the hints name one); the check says done
    (tmp_path / "one.txt").write_text("1\n")
    text = "steps:\n  - description: make sure one.txt holds 1\n    tool_hints: [write_file]\n" \
           "    check: grep -qx 1 one.txt\n"
    agent, session = make(tmp_path, ["It already holds 1."])
    plan = await agent.execute_plan(session, Plan.from_yaml(text))
    assert plan.succeeded


async def test_checks_without_acceptance_checks_in_the_bundle_say_what_to_add(tmp_path: Path) -> None:
    agent, session = make(tmp_path, ["never asked"], checks=False)
    with pytest.raises(ConfigError, match=r"AgentBuilder\(\)\.capabilities\(AcceptanceChecks\(workspace\)\)"):
        await agent.execute_plan(session, Plan.from_yaml(PLAN))


async def test_a_check_on_a_delegated_step_is_refused(tmp_path: Path) -> None:
    agent, session = make(tmp_path, ["never asked"])
    plan = Plan.from_dict({"steps": [{"description": "x", "agent": "helper", "check": "true"}]})
    with pytest.raises(PlanParseError, match="delegated to 'helper' and has a check"):
        await agent.execute_plan(session, plan)


def test_check_reads_as_a_command_or_a_list_and_refuses_an_empty_one() -> None:
    steps = [{"description": "a", "check": ["ruff check .", "true"]}]
    plan = Plan.from_dict({"check": "pytest -q", "steps": steps})
    assert plan.checks == ["pytest -q"]
    assert plan.steps[0].checks == ["ruff check .", "true"]
    assert Plan.from_json(plan.to_json()).steps[0].checks == ["ruff check .", "true"]
    with pytest.raises(PlanParseError, match=r"step 1 .*check: a check is an empty command"):
        Plan.from_dict({"steps": [{"description": "a", "check": " "}]})


READ_PLAN = """
goal: copy the number
check: grep -qx 7 copy.txt
steps:
  - id: read
    description: Read number.txt.
    tool_hints: [read_file]
  - id: write
    description: Write the number into copy.txt.
    tool_hints: [write_file]
"""


@pytest.mark.parametrize("checked", [True, False])
async def test_a_plan_with_checks_wraps_up_a_step_repeating_its_read(tmp_path: Path, checked: bool) -> None:
    (tmp_path / "number.txt").write_text("7\n")
    provider = ScriptedProvider([
        tool_call_reply("read_file", {"path": "number.txt"}),
        tool_call_reply("read_file", {"path": "number.txt"}),  # the step's work again
        "number.txt holds 7.",  # asked for the answer now (the plan's check judges the work)
        write("copy.txt", "7\n"), "Wrote 7 into copy.txt.",
    ])
    workspace = Workspace(tmp_path, confirm_commands=False, confirm_writes=False)
    bundle = (AgentBuilder().provider(provider).tools(workspace.tools())
              .capabilities(AcceptanceChecks(workspace, rounds=1)).build())
    agent = DefaultTaskAgent(system_prompt="You carry out plans.")
    session = AgentSession(agent, "p1", bundle)
    plan = Plan.from_yaml(READ_PLAN)
    if not checked:  # no judge: the guard's honest stop is not turned into an answer
        plan = Plan.model_validate({**plan.model_dump(), "checks": []})
    await agent.execute_plan(session, plan)
    modes = [r.tool_choice.mode if r.tool_choice else None for r in provider.requests]
    if checked:
        assert plan.succeeded, [s.error for s in plan.steps]
        assert modes[2] == "none"
        assert "answer_judged" not in session.app_state  # only while the plan runs
    else:
        assert "none" not in modes
