"""The intent gate: the keyword and model classifiers, the IntentGate capability routing a turn's
tools and prompt, and a task agent that plans only what needs a plan."""

from __future__ import annotations

from typing import Any

import pytest

from agcore.agent import (
    AgentBuilder,
    AgentSession,
    BasicAgent,
    DefaultTaskAgent,
    StepStatus,
    ToolResults,
)
from agcore.agent.intent import (
    CAPABILITY_QUERY,
    CHAT,
    CODING_TASK,
    DEFAULT_KEYWORDS,
    REPO_ANALYSIS,
    UNCERTAIN,
    Intent,
    IntentClassifier,
    IntentGate,
    IntentRoute,
    KeywordIntentClassifier,
    ModelIntentClassifier,
    latest_intent,
)
from agcore.llm import LLMRequest, RateLimitError
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import tool

from .test_loop_basic import add

# A small labelled set: what a coding agent's users type, in English and Chinese.
LABELLED = [
    ("hi", CHAT), ("thanks, that helped", CHAT), ("你好", CHAT), ("ok", CHAT),
    ("Fix the failing test in parser.py", CODING_TASK),
    ("Add a --verbose flag to the CLI", CODING_TASK),
    ("write a function that reverses a string", CODING_TASK),
    ("can you fix the bug in main.py", CODING_TASK),
    ("帮我修复这个报错", CODING_TASK),
    ("what can you do?", CAPABILITY_QUERY), ("Which tools do you have?", CAPABILITY_QUERY),
    ("你能做什么", CAPABILITY_QUERY),
    ("How does the plan parser work?", REPO_ANALYSIS),
    ("Explain the architecture of this repo", REPO_ANALYSIS),
    ("where is the session saved?", REPO_ANALYSIS), ("Summarize README.md", REPO_ANALYSIS),
    ("解释一下这个仓库的结构", REPO_ANALYSIS),
]


@pytest.mark.parametrize(("text", "label"), LABELLED)
def test_keyword_classifier_labels_what_users_type(text: str, label: str) -> None:
    intent = KeywordIntentClassifier().classify_text(text)
    assert intent.label == label
    assert 0.0 < intent.confidence <= 0.95
    assert intent.classifier == "keywords"


def test_keyword_classifier_says_uncertain_when_nothing_fits_and_takes_new_labels() -> None:
    assert KeywordIntentClassifier().classify_text("I like turtles and the ocean a lot").label == UNCERTAIN
    custom = KeywordIntentClassifier({"deploy": (r"\bdeploy\b", r"\bship\b"), **DEFAULT_KEYWORDS})
    intent = custom.classify_text("deploy and ship the new build")
    assert intent.label == "deploy"
    assert intent.confidence > KeywordIntentClassifier().classify_text("Add a flag").confidence
    with pytest.raises(ValueError, match="not a valid regular expression"):
        KeywordIntentClassifier({"x": ("(unclosed",)})
    assert isinstance(custom, IntentClassifier)


def gate_session(model: ScriptedProvider, gate: IntentGate) -> AgentSession:
    bundle = AgentBuilder().provider(model).tools(add).capabilities(gate).build()
    return AgentSession(BasicAgent("coder", "You write code."), "s1", bundle)


@pytest.mark.anyio
async def test_chat_runs_without_tools_and_the_intent_is_kept() -> None:
    heard: list[Intent] = []
    model = ScriptedProvider(["Hello! How can I help?"])
    session = gate_session(model, IntentGate(on_intent=heard.append))
    result = await session.submit_turn("hello there")
    assert result.stop == "done"
    request = model.requests[0]
    assert request.tools == []
    assert request.system is not None
    assert "chatting" in request.system
    assert [i.label for i in heard] == [CHAT]
    latest = latest_intent(session)
    assert latest is not None
    assert latest.label == CHAT
    assert session.app_state["intent"]["label"] == CHAT  # saved with the session


@pytest.mark.anyio
async def test_a_chat_turn_refuses_a_tool_call_it_was_not_offered() -> None:
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), "Hi!"])
    session = gate_session(model, IntentGate())
    result = await session.submit_turn("hi")
    assert result.text == "Hi!"
    results = [m for m in result.messages if isinstance(m, ToolResults)]
    assert "not one of the tools available" in results[0].results[0].text


@pytest.mark.anyio
async def test_capability_question_lists_the_tools_and_coding_keeps_them() -> None:
    model = ScriptedProvider(["I can add numbers.", tool_call_reply("add", {"a": 2, "b": 3}), "5"])
    session = gate_session(model, IntentGate())
    await session.submit_turn("what can you do?")
    asked = model.requests[0]
    assert asked.tools == []
    assert asked.system is not None
    assert "- add:" in asked.system
    await session.submit_turn("implement the sum of 2 and 3 with your tool")
    assert [t.name for t in model.requests[1].tools] == ["add"]
    assert model.requests[1].system == "You write code."  # a coding task's route changes nothing
    latest = latest_intent(session)
    assert latest is not None
    assert latest.label == CODING_TASK


@pytest.mark.anyio
async def test_custom_routes_and_an_async_observer() -> None:
    seen: list[str] = []

    async def observe(intent: Intent) -> None:
        seen.append(intent.label)

    routes = {REPO_ANALYSIS: IntentRoute(tools=("add",), instructions="Read, do not change.")}
    model = ScriptedProvider(["It parses plans."])
    session = gate_session(model, IntentGate(routes=routes, on_intent=observe))
    await session.submit_turn("How does the plan parser work?")
    assert seen == [REPO_ANALYSIS]
    assert model.requests[0].system == "You write code.\n\nRead, do not change."


@pytest.mark.anyio
async def test_a_question_about_the_code_gets_the_read_only_tools() -> None:
    @tool(read_only=True)
    def look(path: str) -> str:
        """Read a file."""
        return path

    model = ScriptedProvider(["It parses plans."])
    bundle = AgentBuilder().provider(model).tools(add, look).capabilities(IntentGate()).build()
    session = AgentSession(BasicAgent("coder", "You write code."), "s1", bundle)
    await session.submit_turn("How does the plan parser work?")
    asked = model.requests[0]
    assert [t.name for t in asked.tools] == ["look"]
    assert asked.system is not None
    assert "do not modify files" in asked.system


def answer(label: str, confidence: float = 0.9) -> str:
    return f'{{"label": "{label}", "confidence": {confidence}, "reason": "because"}}'


@pytest.mark.anyio
async def test_model_classifier_makes_one_small_typed_call() -> None:
    model = ScriptedProvider([answer(REPO_ANALYSIS, 0.8)])
    intent = await ModelIntentClassifier(model).classify("tell me about the scheduler")
    assert intent == Intent(label=REPO_ANALYSIS, confidence=0.8, reason="because", classifier="model")
    request: LLMRequest = model.requests[0]
    assert request.temperature == 0.0
    assert request.max_tokens == 200
    assert request.tools == []
    assert request.response_format is not None
    assert request.response_format.name == "intent"
    assert request.system is not None
    assert "- chat:" in request.system
    assert "uncertain" in request.system
    unschema = ScriptedProvider([answer(CHAT)])
    await ModelIntentClassifier(unschema, schema=False).classify("yo")
    assert unschema.requests[0].response_format is None


@pytest.mark.anyio
@pytest.mark.parametrize(("reply", "why"), [
    ("I think it is a coding task", "no readable label"),
    (answer("poetry"), "no known label ('poetry')"),
    (RateLimitError("slow down"), "the model call failed"),
])
async def test_model_classifier_falls_back_to_keywords(reply: Any, why: str) -> None:
    model = ScriptedProvider([reply])
    intent = await ModelIntentClassifier(model).classify("Fix the bug in main.py")
    assert intent.label == CODING_TASK
    assert intent.classifier == "keywords"
    assert why in intent.reason
    bare = await ModelIntentClassifier(ScriptedProvider([reply]), fallback=None).classify("hi")
    assert bare.label == UNCERTAIN
    assert why in bare.reason


@pytest.mark.anyio
async def test_model_classifier_in_a_gate_asks_the_sessions_model_and_counts_it() -> None:
    model = ScriptedProvider([answer(CHAT), "Hello!"])
    session = gate_session(model, IntentGate(ModelIntentClassifier()))
    result = await session.submit_turn("good day to you")
    assert result.text == "Hello!"
    assert session.usage.calls == 2
    assert model.requests[1].tools == []
    with pytest.raises(ValueError, match="no provider"):
        await ModelIntentClassifier().classify("hi")


def task_session(model: ScriptedProvider, *, gate: IntentGate | None = None,
                 intent: Any = None) -> tuple[DefaultTaskAgent, AgentSession]:
    builder = AgentBuilder().provider(model).tools(add)
    if gate is not None:
        builder.capabilities(gate)
    agent = DefaultTaskAgent(system_prompt="You carry out plans.", intent=intent or gate)
    return agent, AgentSession(agent, "s1", builder.build())


@pytest.mark.anyio
async def test_task_agent_answers_chat_directly_without_a_plan() -> None:
    gate = IntentGate(ModelIntentClassifier())
    model = ScriptedProvider([answer(CHAT), "Hello! Give me a coding task."])
    agent, session = task_session(model, gate=gate)
    plan = await agent.run(session, "hello")
    latest = latest_intent(session)
    assert latest is not None
    assert latest.label == CHAT
    assert [s.status for s in plan.steps] == [StepStatus.COMPLETED]
    assert plan.steps[0].result == "Hello! Give me a coding task."
    assert model.calls == 2  # one classification, one answer: the gate did not classify again
    assert model.requests[1].tools == []
    assert session.app_state["plan"]["steps"][0]["status"] == "completed"


@pytest.mark.anyio
async def test_task_agent_plans_a_coding_task() -> None:
    plan_json = '{"steps": [{"id": "1", "description": "Compute 2 + 3", "tool_hints": ["add"]}]}'
    model = ScriptedProvider([plan_json, tool_call_reply("add", {"a": 2, "b": 3}), "5"])
    agent, session = task_session(model, intent=KeywordIntentClassifier())
    plan = await agent.run(session, "Implement the sum of 2 and 3")
    assert plan.steps[0].description == "Compute 2 + 3"
    assert plan.steps[0].status is StepStatus.COMPLETED
    assert "Tools the steps can use" in str(model.requests[0].messages[0])


@pytest.mark.anyio
async def test_a_failed_direct_answer_fails_its_step() -> None:
    model = ScriptedProvider([RateLimitError("no", retry_after=0.0)] * 5)
    agent, session = task_session(model, intent=KeywordIntentClassifier())
    plan = await agent.run(session, "hi")
    assert plan.steps[0].status is StepStatus.FAILED
    assert plan.steps[0].error is not None


@pytest.mark.anyio
async def test_a_plan_drafted_read_only_is_not_classified_again() -> None:
    plan_json = '{"steps": [{"id": "1", "description": "Say hello"}]}'
    heard: list[Intent] = []
    gate = IntentGate(on_intent=heard.append)
    model = ScriptedProvider([plan_json, "Hello."])
    bundle = AgentBuilder().provider(model).tools(add).capabilities(gate).build()
    agent = DefaultTaskAgent(intent=gate, read_only_planning=True)
    add.read_only = True
    try:
        plan = await agent.run(AgentSession(agent, "s1", bundle), "Implement a greeting")
    finally:
        add.read_only = False
    assert plan.succeeded
    # the goal was classified once, by the agent; the planner's turn and the step's were not
    assert [i.label for i in heard] == [CODING_TASK]
    assert [t.name for t in model.requests[0].tools] == ["add"]
