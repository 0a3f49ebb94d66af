"""``DefaultTaskAgent``: model-drafted and supplied plans, failure policies, resume, hooks, re-ask."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agcore.agent import (
    Agent,
    AgentBuilder,
    AgentConfig,
    AgentLLMError,
    AgentSession,
    DefaultTaskAgent,
    Plan,
    PlanParseError,
    Step,
    TaskAgent,
    UserInput,
)
from agcore.hooks import HookContext, hookimpl
from agcore.llm import (
    AuthenticationError,
    LLMRequest,
    Message,
    RateLimitError,
    TextBlock,
    ToolDefinition,
    UserMessage,
)
from agcore.testing import FunctionProvider, ScriptedProvider, tool_call_reply

from .test_loop_basic import add

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).parents[2] / "examples" / "plans"


def make(
    provider: Any, agent: DefaultTaskAgent | None = None, *, plugins: tuple[object, ...] = (),
    config: AgentConfig | None = None,
) -> tuple[DefaultTaskAgent, AgentSession]:
    builder = AgentBuilder().provider(provider).tools(add).config(config or AgentConfig())
    if plugins:
        builder = builder.plugins(*plugins)
    agent = agent or DefaultTaskAgent(system_prompt="You carry out plans.")
    return agent, AgentSession(agent, "s1", builder.build())


def text_of(message: Message) -> str:
    if isinstance(message, UserMessage):
        return "".join(b.text for b in message.blocks if isinstance(b, TextBlock))
    return message.text


def user_text(request: LLMRequest) -> str:
    last = request.messages[-1]
    assert isinstance(last, UserMessage)
    return text_of(last)


def three_steps() -> Plan:
    """a and c are independent; b needs a; d needs b."""
    return Plan.from_dict({"id": "p", "goal": "Tidy the repo", "steps": [
        {"id": "a", "description": "Find stale branches"},
        {"id": "b", "description": "Delete them", "depends_on": ["a"]},
        {"id": "c", "description": "Update the README"},
        {"id": "d", "description": "Report what was deleted", "depends_on": ["b"]},
    ]})


def statuses(plan: Plan) -> dict[str, str]:
    return {s.id: s.status.value for s in plan.steps}


PLAN_ANSWER = """Here is the plan:
```json
{"goal": "Add 2 and 3, then explain", "steps": [
  {"id": "1", "description": "Compute 2 + 3", "tool_hints": ["add"]},
  {"id": "2", "description": "Check the sum is odd", "depends_on": ["1"]},
  {"id": "3", "description": "Explain the result", "depends_on": ["1", "2"]}
]}
```"""


async def test_protocols() -> None:
    agent = DefaultTaskAgent()
    assert isinstance(agent, TaskAgent)
    assert isinstance(agent, Agent)


async def test_model_drafted_plan_runs_end_to_end() -> None:
    model = ScriptedProvider([
        PLAN_ANSWER,
        tool_call_reply("add", {"a": 2, "b": 3}), "The sum is 5.",
        "5 is odd.",
        "2 + 3 = 5, an odd number.",
    ])
    agent, session = make(model)
    plan = await agent.run(session, "Add 2 and 3, then explain")

    assert plan.succeeded
    assert plan.finished
    assert [s.result for s in plan.steps] == ["The sum is 5.", "5 is odd.", "2 + 3 = 5, an odd number."]
    assert [s.attempts for s in plan.steps] == [1, 1, 1]
    planning = model.requests[0]
    prompt = user_text(planning)
    assert "Goal: Add 2 and 3, then explain" in prompt
    assert "- add: Add two numbers." in prompt
    assert planning.tools == []
    assert planning.system == "You carry out plans."
    # Each step's turn carries the goal and what earlier steps produced.
    step3 = user_text(model.requests[4])
    assert step3.startswith("Goal: Add 2 and 3, then explain")
    assert "- Step 1 (Compute 2 + 3): The sum is 5." in step3
    assert "- Step 2 (Check the sum is odd): 5 is odd." in step3
    assert "Now carry out step 3 of 3: Explain the result" in step3
    assert "Tools that will likely help: add" in user_text(model.requests[1])
    assert model.requests[1].tools  # step turns offer the agent's tools
    # The planning call counts in the session's usage but is not in its history.
    assert session.usage.calls == model.calls == 5
    assert session.usage.usage.input_tokens > 0
    first_input = next(m for m in session.messages if isinstance(m, UserInput))
    assert "Now carry out step 1" in str(first_input.content)
    assert session.turn_index == 3
    assert session.plan_step_index is None


@pytest.mark.parametrize("name", ["release.json", "onboarding.yaml"])
async def test_plans_supplied_from_files_run_in_dependency_order(name: str) -> None:
    order: list[str] = []

    def model(messages: list[Message], tools: list[ToolDefinition]) -> str:
        text = text_of(messages[-1])
        line = next(x for x in text.splitlines() if x.startswith("Now carry out step"))
        step_id = line.split()[4]
        order.append(step_id)
        return f"did {step_id}"

    agent, session = make(FunctionProvider(model))
    plan = await agent.execute_plan(session, Plan.load(EXAMPLES / name))
    assert plan.succeeded
    assert [s.result for s in plan.steps] == [f"did {s.id}" for s in plan.steps]
    assert order == [s.id for s in plan.steps]


async def test_a_step_runs_after_a_later_listed_step_it_depends_on() -> None:
    model = ScriptedProvider(["B done", "A done"])
    agent, session = make(model)
    plan = Plan.from_dict([{"id": "a", "description": "Use B", "depends_on": ["b"]},
                           {"id": "b", "description": "Make B"}])
    await agent.execute_plan(session, plan)
    assert "Make B" in user_text(model.requests[0])
    assert "- Step b (Make B): B done" in user_text(model.requests[1])
    assert plan.get("a").result == "A done"


# ----------------------------------------------------------------------- failure policies


async def test_stop_policy_stops_and_skips_dependents() -> None:
    model = ScriptedProvider([AuthenticationError("invalid x-api-key")])
    agent, session = make(model)
    plan = await agent.execute_plan(session, three_steps(), failure_policy="stop")
    assert statuses(plan) == {"a": "failed", "b": "skipped", "c": "pending", "d": "skipped"}
    error = plan.get("a").error
    assert error is not None
    assert error.type == "AgentLLMError"
    assert not error.recoverable
    assert "invalid x-api-key" in error.message
    assert plan.get("b").skip_reason == (
        "step a ('Find stale branches') failed, and this step needs its result"
    )
    assert plan.get("d").skip_reason is not None
    assert "step a ('Find stale branches') failed" in plan.get("d").skip_reason
    assert model.calls == 1
    assert not plan.succeeded
    assert not plan.finished


async def test_continue_policy_runs_the_independent_steps() -> None:
    model = ScriptedProvider([RateLimitError("slow down"), "README updated"])
    agent, session = make(model, DefaultTaskAgent(failure_policy="continue"))
    plan = await agent.execute_plan(session, three_steps())
    assert statuses(plan) == {"a": "failed", "b": "skipped", "c": "completed", "d": "skipped"}
    assert plan.get("a").attempts == 1  # "continue" does not retry, even a recoverable error
    assert plan.get("c").result == "README updated"
    assert plan.finished


async def test_retry_policy_retries_a_recoverable_error() -> None:
    model = ScriptedProvider([RateLimitError("slow down"), RateLimitError("slow down"), "3 branches",
                              "deleted", "README updated", "deleted 3"])
    agent, session = make(model)
    plan = await agent.execute_plan(session, three_steps(), failure_policy="retry", max_retries=2)
    assert plan.succeeded
    assert plan.get("a").attempts == 3
    assert plan.get("a").result == "3 branches"
    assert model.calls == 6


async def test_retry_policy_gives_up_after_max_retries_then_stops() -> None:
    model = ScriptedProvider([RateLimitError("slow down")] * 3)
    agent, session = make(model)
    plan = await agent.execute_plan(session, three_steps(), failure_policy="retry", max_retries=2)
    assert statuses(plan) == {"a": "failed", "b": "skipped", "c": "pending", "d": "skipped"}
    error = plan.get("a").error
    assert plan.get("a").attempts == 3
    assert error is not None
    assert error.recoverable
    assert model.calls == 3


async def test_retry_policy_does_not_retry_an_unrecoverable_error() -> None:
    model = ScriptedProvider([AuthenticationError("bad key")])
    agent, session = make(model)
    plan = await agent.execute_plan(session, three_steps(), failure_policy="retry", max_retries=5)
    assert plan.get("a").attempts == 1
    assert model.calls == 1


async def test_a_turn_ending_on_a_limit_fails_its_step() -> None:
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 1})])
    agent, session = make(model, config=AgentConfig(max_turns=1))
    plan = await agent.execute_plan(session, Plan.from_dict(["Add 1 and 1"]))
    error = plan.steps[0].error
    assert error is not None
    assert error.type == "LimitExceeded"
    assert not error.recoverable
    assert "max_turns" in error.message


async def test_bad_policy_arguments_are_refused() -> None:
    agent, session = make(ScriptedProvider([]))
    with pytest.raises(ValueError, match="failure_policy must be"):
        await agent.execute_plan(session, three_steps(), failure_policy="panic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_retries must be 0 or more"):
        DefaultTaskAgent(max_retries=-1)


# ---------------------------------------------------------------------------------- resume


async def test_resume_runs_only_what_is_not_completed() -> None:
    plan = three_steps()
    for step, result in ((plan.get("a"), "2 stale branches"), (plan.get("b"), "deleted both")):
        step.start()
        step.complete(result)
    plan.get("c").start()  # the process died during c
    saved = plan.to_json()

    model = ScriptedProvider(["README updated", "deleted 2 branches"])
    agent, session = make(model)
    resumed = await agent.execute_plan(session, Plan.from_json(saved))
    assert resumed.succeeded
    assert model.calls == 2
    assert [s.attempts for s in resumed.steps] == [1, 1, 2, 1]
    assert resumed.get("a").result == "2 stale branches"
    assert "- Step b (Delete them): deleted both" in user_text(model.requests[1])


async def test_killed_mid_plan_resumes_from_the_persisted_state_redoing_nothing() -> None:
    saved: list[str] = []
    calls: list[str] = []

    async def persist(plan: Plan) -> None:
        await anyio.lowlevel.checkpoint()
        saved.append(plan.to_json())

    with anyio.CancelScope() as scope:
        def dying_model(messages: list[Message], tools: list[ToolDefinition]) -> str:
            text = text_of(messages[-1])
            calls.append(text)
            if "Update the README" in text:
                scope.cancel()  # the "process" dies during step c
            return "ok"

        agent, session = make(FunctionProvider(dying_model), DefaultTaskAgent(on_update=persist))
        await agent.execute_plan(session, three_steps())
    assert scope.cancelled_caught
    assert session.plan_step_index is None
    last = Plan.from_json(saved[-1])
    assert statuses(last) == {"a": "completed", "b": "completed", "c": "running", "d": "pending"}

    model = ScriptedProvider(["README updated", "report"])
    agent, session = make(model)
    resumed = await agent.execute_plan(session, last)
    assert resumed.succeeded
    assert model.calls == 2
    assert len(calls) == 3


async def test_on_update_sees_every_status_change() -> None:
    seen: list[dict[str, str]] = []
    model = ScriptedProvider([AuthenticationError("bad key"), "README updated"])
    agent, session = make(model)
    await agent.execute_plan(session, three_steps(), failure_policy="continue",
                             on_update=lambda plan: seen.append(statuses(plan)))
    assert [s["a"] for s in seen[:2]] == ["running", "failed"]
    assert seen[2] == {"a": "failed", "b": "skipped", "c": "pending", "d": "pending"}
    assert seen[-1] == {"a": "failed", "b": "skipped", "c": "completed", "d": "skipped"}
    assert len(seen) == 6  # a start/end, b skipped, d skipped, c start/end


# ----------------------------------------------------------------------------------- hooks


class StepRecorder:
    def __init__(self) -> None:
        self.completed: list[tuple[int | None, str, str]] = []
        self.turn_steps: list[int | None] = []

    @hookimpl
    def on_plan_step_complete(self, ctx: HookContext, step: Step) -> None:
        self.completed.append((ctx.plan_step_index, step.id, step.status.value))

    @hookimpl
    async def on_turn_start(self, ctx: HookContext) -> None:
        self.turn_steps.append(ctx.plan_step_index)


async def test_on_plan_step_complete_fires_with_the_step_index() -> None:
    recorder = StepRecorder()
    model = ScriptedProvider([AuthenticationError("bad key"), "README updated"])
    agent, session = make(model, plugins=(recorder,))
    await agent.execute_plan(session, three_steps(), failure_policy="continue")
    assert recorder.completed == [
        (0, "a", "failed"), (1, "b", "skipped"), (3, "d", "skipped"), (2, "c", "completed"),
    ]
    assert recorder.turn_steps == [0, 2]  # hooks inside a step's turn see its index too
    assert session.plan_step_index is None


# ------------------------------------------------------------------------------- planning


async def test_unreadable_plan_is_asked_for_again_with_the_error() -> None:
    model = ScriptedProvider(["Sure! First I'll look around, then fix it.",
                              '{"steps": ["Look around", "Fix it"]}', "looked", "fixed"])
    agent, session = make(model)
    plan = await agent.run(session, "Fix the bug")
    assert plan.succeeded
    assert [s.description for s in plan.steps] == ["Look around", "Fix it"]
    reask = model.requests[1].messages
    assert len(reask) == 3
    assert text_of(reask[1]) == "Sure! First I'll look around, then fix it."
    assert text_of(reask[2]).startswith("Your plan could not be read: The model's plan could not be read: it "
                                    "contains no JSON plan")
    assert session.usage.calls == 4


async def test_a_drafted_plan_with_junk_dependencies_is_kept_and_says_what_was_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answer = ('```json\n{"steps": [{"id": "1", "description": "Compute 2 + 3", "tool_hints": ["add"], '
              '"depends_on": ["numpy"]}, {"id": "2", "description": "Explain the sum", '
              '"depends_on": ["1", "", "2"]}]}\n```')
    model = ScriptedProvider([answer, tool_call_reply("add", {"a": 2, "b": 3}), "5.", "2 + 3 is 5."])
    agent, session = make(model)
    with caplog.at_level("WARNING", logger="agcore.agent"):
        plan = await agent.run(session, "Add and explain")
    assert plan.succeeded
    assert model.calls == 4  # no second planning call: the plan was readable
    assert [s.depends_on for s in plan.steps] == [[], ["1"]]
    assert plan.warnings == [
        "step 1 ('Compute 2 + 3'): depends_on 'numpy' is not the id of a step (the ids are ['1', '2']); "
        "it was dropped",
        "step 2 ('Explain the sum'): depends_on '' is not the id of a step (the ids are ['1', '2']); it was "
        "dropped",
        "step 2 ('Explain the sum'): depends_on '2' is the step itself; it was dropped",
    ]
    logged = [r.getMessage() for r in caplog.records if r.name == "agcore.agent"]
    assert logged == [f"the model's plan was mended: {w}" for w in plan.warnings]
    assert Plan.from_json(plan.to_json()).warnings == plan.warnings  # kept with the saved plan


async def test_a_plan_unreadable_twice_raises_and_runs_nothing() -> None:
    model = ScriptedProvider(["no plan", '{"steps": [{"id": "1", "description": "x", "depends_on": ["2"]}, '
                                         '{"id": "2", "description": "y", "depends_on": ["1"]}]}'])
    agent, session = make(model)
    expected = r"even when asked again: depends_on forms a cycle: step 1 \('x'\) -> step 2 \('y'\) -> step 1"
    with pytest.raises(PlanParseError, match=expected):
        await agent.run(session, "goal")
    assert model.calls == 2
    assert session.usage.calls == 2
    assert session.messages == []


async def test_plan_prompt_is_injectable() -> None:
    model = ScriptedProvider(['["only step"]', "done"])
    agent = DefaultTaskAgent(plan_prompt="Plan {goal} as {shape} using {tools}; keep {braces}",
                             planning_system_prompt="You plan.")
    agent, session = make(model, agent)
    await agent.run(session, "the chores")
    prompt = user_text(model.requests[0])
    assert prompt.startswith('Plan the chores as {"goal": "<the goal>", "steps": [')
    assert prompt.endswith("using - add: Add two numbers.; keep {braces}")
    assert model.requests[0].system == "You plan."

    def build(goal: str, tools: Any) -> str:
        return f"{goal}|{[t.name for t in tools]}"

    model = ScriptedProvider(['["only step"]', "done"])
    agent, session = make(model, DefaultTaskAgent(plan_prompt=build))
    await agent.run(session, "g")
    assert user_text(model.requests[0]) == "g|['add']"


async def test_a_failing_planning_call_raises_the_agent_error() -> None:
    agent, session = make(ScriptedProvider([AuthenticationError("bad key")]))
    with pytest.raises(AgentLLMError, match="bad key") as caught:
        await agent.run(session, "goal")
    assert not caught.value.is_recoverable()


async def test_planning_call_goes_through_request_hooks() -> None:
    class Tagger:
        @hookimpl
        def on_llm_request(self, request: LLMRequest) -> LLMRequest:
            return request.model_copy(update={"extra": {"tag": "planning"}})

    model = ScriptedProvider(['["one"]', "done"])
    agent, session = make(model, plugins=(Tagger(),))
    await agent.run(session, "goal")
    assert model.requests[0].extra == {"tag": "planning"}
