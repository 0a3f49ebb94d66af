"""Typed final answers in the loop, with scripted models: the three ways the answer arrives (final-answer
tool, native JSON text, prompted JSON text), tools before the answer, validation retries and their
limit, non-object types, streaming, resume after client tools, plans' step output types."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

from agcore.agent import (
    AgentBuilder,
    AgentConfig,
    AgentSession,
    AssistantReply,
    BasicAgent,
    ConfigError,
    Done,
    Failed,
    OutputValidationError,
    StructuredOutput,
    ToolResults,
    UserInput,
)
from agcore.agent.output._output import shape_request
from agcore.hooks import hookimpl
from agcore.llm import (
    AssistantMessage,
    LLMRequest,
    StopReason,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolUseBlock,
)
from agcore.testing import ScriptedProvider, tool_call_reply, tool_calls_reply
from agcore.tools import Tool, tool

pytestmark = pytest.mark.anyio


class City(BaseModel):
    name: str
    population: int = Field(ge=0)


@dataclasses.dataclass
class Point:
    x: int
    y: int


@tool
def lookup(name: str) -> str:
    """Look a city up."""
    return f"{name}: 2,100,000 people"


def make_session(provider: Any, *tools: Any, config: AgentConfig | None = None,
                 output_type: Any = None, **kwargs: Any) -> AgentSession:
    builder = AgentBuilder().provider(provider).config(config or AgentConfig())
    if tools:
        builder = builder.tools(*tools)
    agent = BasicAgent(name="typed", system_prompt="You answer about cities.", output_type=output_type)
    return AgentSession(agent, "s1", builder.build(), **kwargs)


def assert_history_valid(session: AgentSession) -> None:
    open_ids: list[str] = []
    for message in session.messages:
        if isinstance(message, AssistantReply):
            assert not open_ids, f"calls {open_ids} unanswered before the next reply"
            open_ids = [c.id for c in message.message.tool_calls]
        elif isinstance(message, ToolResults):
            for r in message.results:
                open_ids.remove(r.tool_use_id)
    assert not open_ids


# ------------------------------------------------------------------------------ tool mode


async def test_tools_first_then_the_final_answer_tool() -> None:
    model = ScriptedProvider([
        tool_call_reply("lookup", {"name": "Paris"}),
        tool_call_reply("final_result", {"name": "Paris", "population": 2100000}),
    ])
    session = make_session(model, lookup)
    result = await session.submit_turn("How many live in Paris?", output_type=City)
    assert result.ok
    assert result.stop == "done"
    assert result.output == City(name="Paris", population=2100000)
    assert json.loads(result.text) == {"name": "Paris", "population": 2100000}
    # the final tool was offered beside the agent's, and the model was told to use it
    request = model.requests[0]
    assert [t.name for t in request.tools] == ["lookup", "final_result"]
    final = request.tools[1]
    assert final.input_schema["required"] == ["name", "population"]
    assert final.input_schema["additionalProperties"] is False
    assert "`final_result`" in (request.system or "")
    assert request.response_format is None
    assert request.tool_choice is None
    assert_history_valid(session)
    last = session.messages[-1]
    assert isinstance(last, ToolResults)
    assert last.results[0].text == "Final answer received."


async def test_an_invalid_final_call_gets_the_errors_and_the_model_retries() -> None:
    model = ScriptedProvider([
        tool_call_reply("final_result", {"name": "Paris", "population": -5}),
        tool_call_reply("final_result", {"name": "Paris", "population": 2100000}),
    ])
    session = make_session(model)
    result = await session.submit_turn("Paris?", output_type=City)
    assert result.output == City(name="Paris", population=2100000)
    first = session.messages[2]
    assert isinstance(first, ToolResults)
    assert first.results[0].is_error
    assert "population: Input should be greater than or equal to 0" in first.results[0].text
    assert result.turns == 2
    assert_history_valid(session)


async def test_retries_are_bounded_and_the_session_stays_usable() -> None:
    bad = tool_call_reply("final_result", {"name": "Paris"})
    model = ScriptedProvider([bad, bad, "plain words"])
    session = make_session(model, config=AgentConfig(output_retries=1))
    result = await session.submit_turn("Paris?", output_type=City)
    assert result.stop == "error"
    assert result.output is None
    error = result.error
    assert isinstance(error, OutputValidationError)
    assert error.is_recoverable()
    assert "did not fit City after 1 retry" in str(error)
    assert "population: Field required" in error.errors
    assert_history_valid(session)
    after = await session.submit_turn("Thanks.")  # an untyped turn: the session goes on
    assert after.ok
    assert after.text == "plain words"
    assert after.output is None


async def test_a_final_call_beside_other_calls_ends_the_turn_and_answers_them_all() -> None:
    model = ScriptedProvider([
        tool_calls_reply([("lookup", {"name": "Rome"}), ("final_result", {"name": "Rome", "population": 1})]),
    ])
    session = make_session(model, lookup)
    result = await session.submit_turn("Rome?", output_type=City)
    assert result.output == City(name="Rome", population=1)
    results = session.messages[-1]
    assert isinstance(results, ToolResults)
    assert results.results[0].is_error
    assert "Not run" in results.results[0].text
    assert_history_valid(session)


async def test_a_text_answer_in_tool_mode_is_read_as_json_or_sent_back() -> None:
    model = ScriptedProvider([
        "Paris has about two million people.",
        'Here it is:\n```json\n{"name": "Paris", "population": 2100000}\n```',
    ])
    session = make_session(model)
    result = await session.submit_turn("Paris?", output_type=City)
    assert result.output == City(name="Paris", population=2100000)
    retry = session.messages[2]
    assert isinstance(retry, UserInput)
    assert "holds no JSON value" in str(retry.content)
    assert "call the `final_result` tool" in str(retry.content)


async def test_anthropic_gets_the_final_tool_forced_unless_thinking_is_on() -> None:
    answer = tool_call_reply("final_result", {"name": "Oslo", "population": 700000})
    model = ScriptedProvider([answer], provider_name="anthropic")
    session = make_session(model)
    assert (await session.submit_turn("Oslo?", output_type=City)).output is not None
    assert model.requests[0].tool_choice == ToolChoice(mode="any")
    # Anthropic refuses a forced tool with extended thinking: then the tool is only offered
    thinking = LLMRequest.build("Oslo?", extra={"thinking": {"type": "enabled", "budget_tokens": 1024}})
    shaped = shape_request(StructuredOutput(City), thinking, model, text_mode=False)
    assert shaped.tool_choice is None
    assert shaped.tools[-1].name == "final_result"

    class Thinking:  # thinking turned on by a hook, after the request was shaped
        @hookimpl
        def on_llm_request(self, ctx: Any, request: LLMRequest) -> LLMRequest:
            return request.model_copy(update={"extra": thinking.extra})

    model.add(answer)
    session.bundle.hook_executor().register(Thinking())
    assert (await session.submit_turn("Oslo again?", output_type=City)).output is not None
    assert model.requests[1].tool_choice is None
    assert model.requests[1].tools[-1].name == "final_result"


async def test_a_tool_named_like_the_final_tool_is_a_config_error() -> None:
    @tool
    def final_result(x: int) -> int:
        """Clashes."""
        return x

    model = ScriptedProvider([])
    session = make_session(model, final_result)
    result = await session.submit_turn("go", output_type=City)
    assert isinstance(result.error, ConfigError)
    assert "StructuredOutput(Model, name=" in str(result.error)
    renamed = StructuredOutput(City, name="answer")
    model.add(tool_call_reply("answer", {"name": "A", "population": 3}))
    assert (await session.submit_turn("go", output_type=renamed)).output == City(name="A", population=3)


# ------------------------------------------------------------------------------ native and prompted


async def test_native_mode_sends_a_response_format_and_reads_the_text() -> None:
    model = ScriptedProvider(['{"name": "Lima", "population": 10000000}'], provider_name="openai")
    session = make_session(model, lookup)
    result = await session.submit_turn("Lima?", output_type=City)
    assert result.output == City(name="Lima", population=10000000)
    request = model.requests[0]
    fmt = request.response_format
    assert fmt is not None
    assert fmt.name == "final_result"
    assert fmt.strict is True
    assert fmt.json_schema["properties"]["population"]["minimum"] == 0
    assert [t.name for t in request.tools] == ["lookup"]  # native: no final tool, tools still offered


class Trip(BaseModel):
    city: str
    days: int = 3


async def test_strict_only_when_every_property_is_required() -> None:
    model = ScriptedProvider(['{"x": 1, "y": 2}', '{"city": "Bern"}'], provider_name="openai")
    session = make_session(model)
    assert (await session.submit_turn("p", output_type=Point)).output == Point(1, 2)
    fmt = model.requests[0].response_format
    assert fmt is not None
    assert fmt.strict is True
    assert fmt.json_schema["additionalProperties"] is False
    assert (await session.submit_turn("t", output_type=Trip)).output == Trip(city="Bern", days=3)
    optional = model.requests[1].response_format
    assert optional is not None
    assert optional.strict is False


async def test_ollama_is_native_only_without_tools() -> None:
    model = ScriptedProvider(['{"x": 1, "y": 2}', tool_call_reply("final_result", {"x": 3, "y": 4})],
                             provider_name="ollama")
    bare = make_session(model)
    assert (await bare.submit_turn("p", output_type=Point)).output == Point(1, 2)
    assert model.requests[0].response_format is not None
    with_tools = make_session(model, lookup)
    assert (await with_tools.submit_turn("p", output_type=Point)).output == Point(3, 4)
    assert model.requests[1].response_format is None


async def test_prompted_mode_puts_the_schema_in_the_system_prompt() -> None:
    model = ScriptedProvider(['Sure.\n{"x": 5, "y": 6}'])
    session = make_session(model)
    result = await session.submit_turn("p", output_type=StructuredOutput(Point, mode="prompted"))
    assert result.output == Point(5, 6)
    request = model.requests[0]
    assert request.tools == []
    assert request.response_format is None
    assert '"required":["x","y"]' in (request.system or "")


async def test_non_object_types_are_wrapped_and_unwrapped() -> None:
    model = ScriptedProvider([
        tool_call_reply("final_result", {"result": [1, 2, 3]}),
        '{"result": [4]}',
        "[7, 8]",
    ])
    session = make_session(model)
    assert (await session.submit_turn("a", output_type=list[int])).output == [1, 2, 3]
    schema = model.requests[0].tools[0].input_schema
    assert schema["required"] == ["result"]
    assert schema["properties"]["result"]["type"] == "array"
    native = StructuredOutput(list[int], mode="native")
    assert (await session.submit_turn("b", output_type=native)).output == [4]
    assert (await session.submit_turn("c", output_type=native)).output == [7, 8]


async def test_str_output_is_the_text_with_nothing_asked() -> None:
    model = ScriptedProvider(["just text"])
    session = make_session(model)
    result = await session.submit_turn("hi", output_type=str)
    assert result.output == "just text"
    assert model.requests[0].tools == []
    assert model.requests[0].response_format is None


async def test_the_agents_output_type_is_the_default_and_a_call_overrides_it() -> None:
    model = ScriptedProvider([tool_call_reply("final_result", {"x": 1, "y": 1}), "free"])
    session = make_session(model, output_type=Point)
    assert (await session.submit_turn("a")).output == Point(1, 1)
    assert (await session.submit_turn("b", output_type=str)).output == "free"


async def test_untyped_turns_are_unchanged() -> None:
    model = ScriptedProvider(["hello"])
    session = make_session(model, lookup)
    result = await session.submit_turn("hi")
    assert result.output is None
    assert result.text == "hello"
    assert [t.name for t in model.requests[0].tools] == ["lookup"]


# ------------------------------------------------------------------------------ streaming, resume


async def test_stream_turn_ends_with_done_and_the_output_in_last_result() -> None:
    model = ScriptedProvider(['{"x": 9}', '{"x": 9, "y": 10}'], provider_name="openai")
    session = make_session(model)
    events = [e async for e in session.stream_turn("p", output_type=Point)]
    assert isinstance(events[-1], Done)
    assert session.last_result is not None
    assert session.last_result.output == Point(9, 10)


async def test_stream_turn_fails_cleanly_when_retries_run_out() -> None:
    model = ScriptedProvider(["no", "still no"], provider_name="openai")
    session = make_session(model, config=AgentConfig(output_retries=1))
    events = [e async for e in session.stream_turn("p", output_type=Point)]
    last = events[-1]
    assert isinstance(last, Failed)
    assert last.error_type == "OutputValidationError"
    assert last.recoverable


async def test_resume_after_client_tools_keeps_the_output_type() -> None:
    model = ScriptedProvider([
        tool_call_reply("ask_user", {"question": "which city?"}),
        tool_call_reply("final_result", {"name": "Kyiv", "population": 2900000}),
    ])
    bundle = AgentBuilder().provider(model).tools(Tool.client("ask_user", "Ask the user")).build()
    session = AgentSession(BasicAgent("typed"), "s1", bundle)
    paused = await session.submit_turn("A city?", output_type=City)
    assert paused.stop == "client_tools"
    call = paused.pending_tool_calls[0]
    result = await session.resume([ToolResultBlock(tool_use_id=call.id, content="Kyiv")])
    assert result.output == City(name="Kyiv", population=2900000)


# ------------------------------------------------------------------------------ text mode


async def test_a_text_mode_model_calls_the_final_tool_in_its_text() -> None:
    model = ScriptedProvider([
        '{"tool": "lookup", "arguments": {"name": "Quito"}}',
        'Done.\n```json\n{"tool": "final_result", "arguments": '
        '{"name": "Quito", "population": 2800000}}\n```',
    ])
    session = make_session(model, lookup, config=AgentConfig(text_mode_tools=True))
    result = await session.submit_turn("Quito?", output_type=City)
    assert result.output == City(name="Quito", population=2800000)
    request = model.requests[0]
    assert request.tools == []
    assert request.response_format is None
    assert "- final_result:" in (request.system or "")
    assert "- lookup:" in (request.system or "")
    assert_history_valid(session)


async def test_a_text_mode_model_may_answer_with_bare_json_too() -> None:
    model = ScriptedProvider(['[{"x": 1, "y": 2}]'])
    session = make_session(model, config=AgentConfig(text_mode_tools=True))
    assert (await session.submit_turn("p", output_type=list[Point])).output == [Point(1, 2)]


# ------------------------------------------------------------------------------ persistence


async def test_a_paused_typed_turn_resumes_typed_in_another_process(tmp_path: Any) -> None:
    from agcore.memory import SqliteSessionStore

    ask = Tool.client("ask_user", "Ask the user")
    agent = BasicAgent("typed", output_type=City)  # the type is code: the agent brings it back
    first = ScriptedProvider([
        tool_call_reply("final_result", {"name": "Kyiv"}),  # invalid: one retry spent before the pause
        tool_call_reply("ask_user", {"question": "population?"}),
    ])
    path = tmp_path / "s.db"
    async with SqliteSessionStore(path) as store:
        session = AgentSession(agent, "s1", AgentBuilder().provider(first).tools(ask).build(), store=store)
        paused = await session.submit_turn("Kyiv?")
        assert paused.stop == "client_tools"
        call = paused.pending_tool_calls[0]
    second = ScriptedProvider([tool_call_reply("final_result", {"name": "Kyiv", "population": -1})])
    async with SqliteSessionStore(path) as store:
        bundle = AgentBuilder().provider(second).tools(ask).config(AgentConfig(output_retries=1)).build()
        loaded = await AgentSession.load(store, "s1", agent, bundle)
        resumed = await loaded.resume([ToolResultBlock(tool_use_id=call.id, content="2.9 million")])
    # the retry spent before the pause still counts: the second bad answer ends the turn
    assert isinstance(resumed.error, OutputValidationError)
    assert_history_valid(loaded)


# ------------------------------------------------------------------------------ plans


class Report(BaseModel):
    title: str
    findings: list[str]


async def test_a_plan_step_declares_its_output_type_and_keeps_the_typed_answer() -> None:
    from agcore.agent import DefaultTaskAgent, Plan, PlanParseError, StepStatus

    plan = Plan.from_dict({"goal": "review", "steps": [
        {"id": "look", "description": "Look around"},
        {"id": "report", "description": "Write the report", "depends_on": ["look"], "output_type": "report"},
    ]})
    model = ScriptedProvider([
        "Looked: two issues.",
        tool_call_reply("final_result", {"title": "Review", "findings": "two"}),  # invalid, retried
        tool_call_reply("final_result", {"title": "Review", "findings": ["a", "b"]}),
    ])
    agent = DefaultTaskAgent(output_types={"report": Report})
    session = AgentSession(agent, "s1", AgentBuilder().provider(model).build())
    done = await agent.execute_plan(session, plan)
    look, report = done.steps
    assert look.status is StepStatus.COMPLETED
    assert look.output is None
    assert report.status is StepStatus.COMPLETED
    assert report.output == {"title": "Review", "findings": ["a", "b"]}
    assert agent.step_output(report) == Report(title="Review", findings=["a", "b"])
    assert [t.name for t in model.requests[0].tools] == []  # the untyped step is asked nothing
    assert [t.name for t in model.requests[1].tools] == ["final_result"]
    # saved with the plan: a resumed plan gives the typed answer back
    again = Plan.from_dict(session.app_state["plan"])
    assert agent.step_output(again.steps[1]) == Report(title="Review", findings=["a", "b"])

    unknown = Plan.from_dict({"steps": [{"description": "x", "output_type": "memo"}]})
    with pytest.raises(PlanParseError, match=r"output_type 'memo'.*output_types: report"):
        await agent.execute_plan(session, unknown)


async def test_a_step_whose_answer_never_fits_fails_recoverably() -> None:
    from agcore.agent import DefaultTaskAgent, Plan, StepStatus

    model = ScriptedProvider(["not json", "still not json"])
    agent = DefaultTaskAgent(output_types={"point": Point})
    bundle = AgentBuilder().provider(model).config(AgentConfig(output_retries=1)).build()
    session = AgentSession(agent, "s1", bundle)
    plan = await agent.execute_plan(
        session, Plan.from_dict({"steps": [{"description": "where?", "output_type": "point"}]}))
    step = plan.steps[0]
    assert step.status is StepStatus.FAILED
    assert step.output is None
    assert step.error is not None
    assert step.error.type == "OutputValidationError"
    assert step.error.recoverable


async def test_an_answer_cut_off_by_max_tokens_is_asked_again_more_briefly() -> None:
    cut = AssistantMessage(content=[TextBlock(text='{"name": "Par')], stop_reason=StopReason.MAX_TOKENS)
    model = ScriptedProvider([cut, '{"name": "Paris", "population": 1}'], provider_name="openai")
    session = make_session(model)
    result = await session.submit_turn("Paris?", output_type=City)
    assert result.output == City(name="Paris", population=1)
    retry = session.messages[2]
    assert isinstance(retry, UserInput)
    assert "cut off at the output token limit" in str(retry.content)


async def test_unreadable_final_arguments_go_back_to_the_model() -> None:
    broken = AssistantMessage(content=[ToolUseBlock(
        id="call_1", name="final_result", input={},
        parse_error="The arguments are not valid JSON: Expecting ',' delimiter. Send them again.",
    )], stop_reason=StopReason.TOOL_USE)
    model = ScriptedProvider([broken, tool_call_reply("final_result", {"name": "Bonn", "population": 1})])
    session = make_session(model)
    result = await session.submit_turn("Bonn?", output_type=City)
    assert result.output == City(name="Bonn", population=1)
    first = session.messages[2]
    assert isinstance(first, ToolResults)
    assert first.results[0].is_error
    assert "Expecting ',' delimiter" in first.results[0].text
    assert_history_valid(session)


async def test_hooks_see_the_typed_request_and_the_final_reply() -> None:
    seen: list[str] = []

    class Watcher:
        @hookimpl
        def on_llm_request(self, ctx: Any, request: LLMRequest) -> LLMRequest:
            seen.extend(t.name for t in request.tools)
            return request

        @hookimpl
        def before_tool_call(self, ctx: Any, call: ToolUseBlock) -> None:
            seen.append(f"before:{call.name}")

    model = ScriptedProvider([tool_call_reply("final_result", {"x": 1, "y": 2})])
    bundle = AgentBuilder().provider(model).plugins(Watcher()).build()
    session = AgentSession(BasicAgent("typed"), "s1", bundle)
    assert (await session.submit_turn("p", output_type=Point)).output == Point(1, 2)
    assert seen == ["final_result"]  # the final call is the answer, not a tool run: no tool hooks


async def test_a_task_agents_output_type_types_the_plans_final_answer_only() -> None:
    from agcore.agent import DefaultTaskAgent, Plan

    model = ScriptedProvider([
        "Two issues found.",
        tool_call_reply("final_result", {"title": "Review", "findings": ["a", "b"]}),
    ])
    agent = DefaultTaskAgent(output_type=Report)
    session = AgentSession(agent, "s1", AgentBuilder().provider(model).build())
    plan = await agent.execute_plan(session, Plan.from_dict({"steps": ["Look around", "Write the report"]}))
    assert agent.plan_output(plan) == Report(title="Review", findings=["a", "b"])
    assert plan.steps[0].output is None
    assert plan.steps[0].result == "Two issues found."
    assert model.requests[0].tools == []  # the first step answers in text
    assert [t.name for t in model.requests[1].tools] == ["final_result"]


async def test_plan_steps_stay_untyped_when_the_sessions_agent_types_its_turns() -> None:
    from agcore.agent import DefaultTaskAgent, Plan

    model = ScriptedProvider(["plain step answer"])
    session = make_session(model, output_type=Point)  # a BasicAgent typing every turn
    plan = await DefaultTaskAgent().execute_plan(session, Plan.from_dict({"steps": ["Say something"]}))
    assert plan.steps[0].result == "plain step answer"
    assert model.requests[0].tools == []
