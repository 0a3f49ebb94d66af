"""Typed sub-agents: a child whose agent has an ``output_type`` runs a typed turn like a top-level one
(``final_result`` offered, the answer validated, ``last_result.output`` set), the parent reads its
typed answer as JSON, a typed plan step delegated to a sub-agent types the child's turn; and
``agent_tool`` refuses settings and names that could only fail later."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agcore.agent import (
    AgentBuilder,
    AgentSession,
    BasicAgent,
    ConfigError,
    DefaultTaskAgent,
    OutputValidationError,
    Plan,
    PlanParseError,
    StepStatus,
    StructuredOutput,
    agent_tool,
    run_subagent,
)
from agcore.testing import ScriptedProvider, tool_call_reply
from tests.agent._subagent_support import Scripts, assert_every_call_answered

pytestmark = pytest.mark.anyio


class Forecast(BaseModel):
    city: str
    celsius: float


LEAD = BasicAgent("lead", "You lead.", tools=["forecaster"])
FORECASTER = BasicAgent("forecaster", "You forecast.", tools=[], output_type=Forecast)
GOOD = tool_call_reply("final_result", {"city": "Paris", "celsius": 18})


def lead_session(scripts: Scripts, **options: object) -> AgentSession:
    bundle = AgentBuilder().provider(scripts.model).tools(agent_tool(FORECASTER, **options)).build()
    return AgentSession(LEAD, "p", bundle)


def child_requests(scripts: Scripts) -> list[object]:
    return [r for r in scripts.requests if (r.system or "").startswith("You forecast.")]


async def test_a_typed_child_validates_its_answer_and_the_parent_reads_it_as_json() -> None:
    scripts = Scripts({
        "You lead.": [tool_call_reply("forecaster", {"task": "Paris tomorrow"}), "18C in Paris"],
        "You forecast.": [GOOD],
    })
    session = lead_session(scripts)
    result = await session.submit_turn("go")

    assert result.text == "18C in Paris"
    [request] = child_requests(scripts)
    assert [t.name for t in request.tools] == ["final_result"]
    [answer] = session.messages[-2].results
    assert not answer.is_error
    assert answer.text == '{"city": "Paris", "celsius": 18.0}'
    assert_every_call_answered(session.messages)


async def test_a_typed_child_that_never_fits_is_an_error_result_for_the_parent() -> None:
    strict = BasicAgent("forecaster", "You forecast.", tools=[],
                        output_type=StructuredOutput(Forecast, max_retries=1))
    scripts = Scripts({
        "You lead.": [tool_call_reply("forecaster", {"task": "t"}), "could not"],
        "You forecast.": ["garbage", "still garbage"],
    })
    bundle = AgentBuilder().provider(scripts.model).tools(agent_tool(strict)).build()
    session = AgentSession(LEAD, "p", bundle)
    result = await session.submit_turn("go")

    assert result.stop == "done"
    [answer] = session.messages[-2].results
    assert answer.is_error
    assert "did not fit Forecast after 1 retry" in answer.text
    assert scripts.left("You forecast.") == 0  # asked again once, with the errors
    assert_every_call_answered(session.messages)


async def test_answer_still_picks_what_the_parent_reads_and_gets_the_typed_output() -> None:
    seen: list[object] = []

    def pick(result: object) -> str:
        seen.append(result.output)  # type: ignore[attr-defined]
        return f"{result.output.city}: {result.output.celsius}"  # type: ignore[attr-defined]

    scripts = Scripts({
        "You lead.": [tool_call_reply("forecaster", {"task": "t"}), "ok"],
        "You forecast.": [GOOD],
    })
    session = lead_session(scripts, answer=pick)
    await session.submit_turn("go")
    [answer] = session.messages[-2].results
    assert answer.text == "Paris: 18.0"
    assert seen == [Forecast(city="Paris", celsius=18)]


async def test_run_subagent_types_the_child_turn_by_its_agent_or_by_output_type() -> None:
    bundle = AgentBuilder().provider(ScriptedProvider([GOOD, '{"city": "Oslo", "celsius": -3}'])).build()
    child = await run_subagent(None, FORECASTER, "go", bundle=bundle, report_events=False)
    assert child.last_result is not None
    assert child.last_result.output == Forecast(city="Paris", celsius=18)

    class City(BaseModel):
        city: str

    untyped = BasicAgent("plain", "You answer.", tools=[])
    child = await run_subagent(None, untyped, "go", bundle=bundle, output_type=City, report_events=False)
    assert child.last_result is not None
    assert child.last_result.output == City(city="Oslo")


async def test_a_child_over_its_own_max_turns_names_that_limit() -> None:
    looping = BasicAgent("forecaster", "You forecast.", tools=["lookup"])
    from agcore.tools import tool

    @tool
    def lookup(topic: str) -> str:
        """Look a topic up."""
        return topic

    scripts = Scripts({
        "You lead.": [tool_call_reply("forecaster", {"task": "t"}), "gave up"],
        "You forecast.": [
            tool_call_reply("lookup", {"topic": "a"}), tool_call_reply("lookup", {"topic": "b"}),
        ],
    })
    bundle = AgentBuilder().provider(scripts.model).tools(lookup, agent_tool(looping, max_turns=1)).build()
    session = AgentSession(LEAD, "p", bundle)
    await session.submit_turn("go")
    [answer] = session.messages[-2].results
    assert answer.is_error
    assert "agent_tool(max_turns=1)" in answer.text
    assert "AgentConfig.max_turns" not in answer.text


# --------------------------------------------------------------------------------- plan steps


def planner_with(scripts: Scripts, agent: BasicAgent | None = None) -> tuple[DefaultTaskAgent, AgentSession]:
    plain = agent or BasicAgent("r", "You forecast.", tools=[])
    planner = DefaultTaskAgent("planner", "You plan.", output_types={"f": Forecast}, subagents={"r": plain},
                               max_retries=0)
    bundle = AgentBuilder().provider(scripts.model).config(output_retries=1).build()
    return planner, AgentSession(planner, "plan", bundle)


def typed_delegated_plan() -> Plan:
    return Plan.from_dict({"goal": "g", "steps": [
        {"id": "1", "description": "forecast Paris", "output_type": "f", "agent": "r"},
    ]})


async def test_a_typed_plan_step_delegated_to_a_sub_agent_is_a_typed_child_turn() -> None:
    scripts = Scripts({"You forecast.": [GOOD]})
    planner, session = planner_with(scripts)
    plan = await planner.execute_plan(session, typed_delegated_plan())

    [step] = plan.steps
    assert step.status is StepStatus.COMPLETED
    assert step.output == {"city": "Paris", "celsius": 18.0}
    assert planner.step_output(step) == Forecast(city="Paris", celsius=18)
    [request] = scripts.requests
    assert [t.name for t in request.tools] == ["final_result"]
    # Saved and loaded, the plan still gives the typed answer.
    assert planner.step_output(Plan.from_json(plan.to_json()).steps[0]) == Forecast(city="Paris", celsius=18)


async def test_a_typed_delegated_step_whose_answer_never_fits_fails() -> None:
    scripts = Scripts({"You forecast.": ["not json at all", "still not"]})
    planner, session = planner_with(scripts)
    plan = await planner.execute_plan(session, typed_delegated_plan())

    [step] = plan.steps
    assert step.status is StepStatus.FAILED
    assert step.output is None
    assert step.error is not None
    assert step.error.type == OutputValidationError.__name__
    assert not plan.succeeded
    assert len(scripts.requests) == 2  # the answer and one retry


async def test_the_steps_type_overrides_the_sub_agents_own() -> None:
    class Other(BaseModel):
        word: str

    scripts = Scripts({"You forecast.": [GOOD]})
    planner, session = planner_with(scripts, BasicAgent("r", "You forecast.", tools=[], output_type=Other))
    plan = await planner.execute_plan(session, typed_delegated_plan())
    assert planner.step_output(plan.steps[0]) == Forecast(city="Paris", celsius=18)


async def test_an_unknown_step_output_type_names_the_fix_without_a_stray_brace() -> None:
    planner = DefaultTaskAgent("planner", "You plan.")
    session = AgentSession(planner, "s", AgentBuilder().provider(ScriptedProvider([])).build())
    plan = Plan.from_dict({"steps": [{"id": "1", "description": "x", "output_type": "nope"}]})
    with pytest.raises(PlanParseError) as caught:
        await planner.execute_plan(session, plan)
    assert "pass output_types={'nope': YourModel} to the task agent" in str(caught.value)


# ------------------------------------------------------------------------ up-front checks


@pytest.mark.parametrize(("options", "message"), [
    ({"max_turns": 0}, "max_turns must be 1 or more model calls"),
    ({"max_turns": -2}, "max_turns must be 1 or more model calls"),
    ({"max_depth": 0}, "max_depth must be 1 or more nested sub-agents"),
    ({"max_depth": -5}, "max_depth must be 1 or more nested sub-agents"),
])
def test_agent_tool_refuses_limits_below_one(options: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        agent_tool(FORECASTER, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(("agent_name", "suggested"), [
    ("Research Bot", "Research_Bot"),
    ("researcher.v2", "researcher_v2"),
    ("x" * 70, "x" * 64),
])
def test_an_agent_name_vendors_refuse_asks_for_name(agent_name: str, suggested: str) -> None:
    agent = BasicAgent(agent_name, "You research.", tools=[])
    with pytest.raises(ValueError, match="pass name=") as caught:
        agent_tool(agent)
    assert f"agent_tool(agent, name={suggested!r})" in str(caught.value)
    assert agent_tool(agent, name=suggested).name == suggested


def test_an_output_type_pydantic_cannot_take_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"output_type=5 is not a type") as caught:
        BasicAgent("k", output_type=5)
    assert caught.value.piece == "output_type"


async def test_an_output_type_pydantic_cannot_take_in_submit_turn_is_a_config_error() -> None:
    session = AgentSession(BasicAgent("k"), "s", AgentBuilder().provider(ScriptedProvider([])).build())
    with pytest.raises(ConfigError, match=r"output_type=5 is not a type"):
        await session.submit_turn("go", output_type=5)
    assert session.messages == []
