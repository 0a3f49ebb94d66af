"""Plan steps are verified (issue 18): a turn that ends normally but did not do its step fails it.

The replies are shaped like a small local model's: an answer that repeats the step, "Tool result: ..."
written by the model itself, a tool call written as JSON text that nothing runs, calls that all fail.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import anyio
import httpx
import pytest
import respx

from agcore.agent import (
    AgentBuilder,
    AgentConfig,
    AgentSession,
    DefaultStepVerifier,
    DefaultTaskAgent,
    Plan,
    Step,
    StepStatus,
    StepVerifier,
    TurnResult,
)
from agcore.llm import AssistantMessage, create_provider
from agcore.llm.retry import NO_RETRY
from agcore.testing import ScriptedProvider, tool_call_reply, tool_calls_reply
from agcore.tools import tool

from .test_loop_basic import add

pytestmark = pytest.mark.anyio


@tool
def broken(path: str) -> str:
    """Read a file that cannot be read."""
    raise OSError(f"{path}: permission denied")


def make(
    replies: list[str | AssistantMessage], *, agent: DefaultTaskAgent | None = None,
    config: AgentConfig | None = None,
) -> tuple[DefaultTaskAgent, AgentSession, ScriptedProvider]:
    model = ScriptedProvider(replies)
    # Text mode off: these replies test the verifier on what a turn left behind; under the default
    # "auto" a call written as text would be run instead (tests/agent/test_text_mode.py).
    config = config or AgentConfig(text_mode_tools="off")
    bundle = AgentBuilder().provider(model).tools(add, broken).config(config).build()
    agent = agent or DefaultTaskAgent(system_prompt="You carry out plans.")
    return agent, AgentSession(agent, "s1", bundle), model


def one_step(description: str = "Compute 2 + 3", hints: list[str] | None = None) -> Plan:
    return Plan.from_dict({"goal": "Arithmetic", "steps": [
        {"id": "1", "description": description, "tool_hints": hints if hints is not None else ["add"]}]})


ADD_CALL = tool_call_reply("add", {"a": 2, "b": 3})

# (name, step description, tool hints, the model's replies, expected status, part of the error)
CASES: list[tuple[str, str, list[str], list[Any], StepStatus, str]] = [
    ("tool ran", "Compute 2 + 3", ["add"], [ADD_CALL, "The sum is 5."], StepStatus.COMPLETED, ""),
    ("no call though the hints expect one", "Compute 2 + 3", ["add"],
     ["I will add 2 and 3 with the add tool."], StepStatus.FAILED,
     "the turn made no tool calls, though the step needs its tools (add); the answer was "
     "'I will add 2 and 3 with the add tool.'"),
    ("hints naming no offered tool expect nothing", "Book a room", ["calendar"], ["Room 4 is booked."],
     StepStatus.COMPLETED, ""),
    ("no hints, an answer", "Explain why 5 is odd", [], ["5 is not divisible by 2."],
     StepStatus.COMPLETED, ""),
    ("echo of the description", "Explain why 5 is odd", [], ["Explain why 5 is odd."], StepStatus.FAILED,
     "the answer only repeats the step instead of doing it"),
    ("echo with a step prefix", "Summarise the changelog", [], ["Step 1: Summarise the changelog"],
     StepStatus.FAILED, "only repeats the step"),
    ("invented tool result", "Compute 2 + 3", [],
     ['{"tool": "add", "arguments": {"a": 2, "b": 3}}\nTool result: 5\nThe sum is 5.'], StepStatus.FAILED,
     "the answer writes a tool result itself ('Tool result: 5')"),
    ("invented result in the text-mode label", "Compute 2 + 3", ["add"],
     ["Tool result (add, ok):\n5\n\nThe sum is 5."], StepStatus.FAILED, "writes a tool result itself"),
    ("invented observation", "Read the config", [], ["Action: read_file\nObservation: debug = true"],
     StepStatus.FAILED, "writes a tool result itself ('Observation: debug = true')"),
    ("Chinese invented result", "计算 2 + 3", [], ["工具结果\uff1a5\n所以答案是 5。"], StepStatus.FAILED,
     "writes a tool result itself"),
    ("a real result quoted after the call", "Compute 2 + 3", ["add"],
     [ADD_CALL, "Tool result: 5. The sum is 5."], StepStatus.COMPLETED, ""),
    ("every call failed", "Read notes.txt", ["broken"],
     [tool_call_reply("broken", {"path": "notes.txt"}), "I read notes.txt."], StepStatus.FAILED,
     "every tool call of the turn failed (1), though the step needs its tools (broken)"),
    ("an unknown tool is no call that ran", "Compute 2 + 3", ["add"],
     [tool_call_reply("get_weather", {"city": "Paris"}), "It is sunny."], StepStatus.FAILED,
     "every tool call of the turn failed"),
    ("one failed call, one that ran", "Compute 2 + 3", ["add", "broken"],
     [tool_calls_reply([("broken", {"path": "x"}), ("add", {"a": 2, "b": 3})]), "5, and x was unreadable."],
     StepStatus.COMPLETED, ""),
    ("a short legitimate answer is no echo", "Say hello", [], ["Hello!"], StepStatus.COMPLETED, ""),
]


CALL_AS_TEXT = '```json\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n```'


@pytest.mark.parametrize(("reply", "why"), [
    pytest.param(CALL_AS_TEXT, "was only a tool call to add written as text, which was not run", id="call"),
    pytest.param("", "was empty", id="empty"),
    pytest.param("Now carry out step 1 of 1: Compute 2 + 3\nDo only this step, then answer with its outcome.",
                 "only restated the task", id="echo of the prompt"),
])
async def test_a_reply_that_is_no_answer_fails_the_step_before_the_verifier_sees_it(
    reply: str, why: str
) -> None:
    # The turn itself refuses it (agcore.agent._answers): asked again once, then NoAnswer.
    agent, session, model = make([reply, reply])
    plan = await agent.execute_plan(session, one_step("Compute 2 + 3", []))
    step = plan.steps[0]
    assert step.status is StepStatus.FAILED
    assert step.error is not None
    assert step.error.type == "NoAnswer"
    assert step.error.recoverable
    assert f"its reply {why}, again after it was asked for one" in step.error.message
    assert len(model.requests) == 2


@pytest.mark.parametrize(("description", "hints", "replies", "status", "error"),
                         [pytest.param(*case[1:], id=case[0]) for case in CASES])
async def test_a_step_counts_as_done_only_when_its_turn_did_it(
    description: str, hints: list[str], replies: list[Any], status: StepStatus, error: str
) -> None:
    agent, session, _ = make(replies)
    plan = await agent.execute_plan(session, one_step(description, hints))
    step = plan.steps[0]
    assert step.status is status, step.error
    assert plan.succeeded is (status is StepStatus.COMPLETED)
    if status is StepStatus.FAILED:
        assert step.error is not None
        assert step.error.type == "StepNotVerified"
        assert step.error.recoverable
        assert step.error.message.startswith("not done: ")
        assert error in step.error.message
        assert step.result is None
    else:
        assert step.result == replies[-1]


@pytest.mark.parametrize(("answer", "status"), [
    ("Step 1: " + "y" * 300_000, StepStatus.FAILED),  # the step, repeated
    ("z" * 300_000, StepStatus.COMPLETED),  # as long, but an answer of its own
])
async def test_a_300_kb_step_is_judged_at_once(answer: str, status: StepStatus) -> None:
    # difflib's similarity is quadratic: over the whole texts, this took minutes.
    agent, session, _ = make([answer])
    with anyio.fail_after(60):
        plan = await agent.execute_plan(session, one_step("y" * 300_000, []))
    assert plan.steps[0].status is status


async def test_the_dependents_of_an_unverified_step_are_skipped() -> None:
    plan = Plan.from_dict({"steps": [
        {"id": "1", "description": "Compute 2 + 3", "tool_hints": ["add"]},
        {"id": "2", "description": "Explain the sum", "depends_on": ["1"]},
    ]})
    agent, session, model = make(["The sum is 5."])
    await agent.execute_plan(session, plan)
    assert [s.status for s in plan.steps] == [StepStatus.FAILED, StepStatus.SKIPPED]
    assert not plan.succeeded
    assert model.calls == 1


async def test_retry_tells_the_model_why_and_a_real_call_then_completes_the_step() -> None:
    agent, session, model = make(["Tool result: 5", ADD_CALL, "The sum is 5."])
    plan = await agent.execute_plan(session, one_step(), failure_policy="retry", max_retries=1)
    step = plan.steps[0]
    assert step.status is StepStatus.COMPLETED
    assert step.attempts == 2
    assert step.last_error is not None
    assert step.last_error.type == "StepNotVerified"
    retry_prompt = model.requests[1].messages[-1]
    assert ("Your last attempt at this step was not accepted (not done: the answer writes a tool "
            "result") in str(retry_prompt.content)
    first_prompt = model.requests[0].messages[-1]
    assert "not accepted" not in str(first_prompt.content)


async def test_retry_gives_up_after_max_retries() -> None:
    agent, session, model = make(["Done.", "Done.", "Done."])
    plan = await agent.execute_plan(session, one_step(), failure_policy="retry", max_retries=2)
    assert plan.steps[0].status is StepStatus.FAILED
    assert plan.steps[0].attempts == 3
    assert model.calls == 3


async def test_verifier_none_accepts_every_turn_that_ends_normally() -> None:
    agent, session, _ = make(["Compute 2 + 3"], agent=DefaultTaskAgent(verifier=None))
    plan = await agent.execute_plan(session, one_step())
    assert plan.succeeded
    assert plan.steps[0].result == "Compute 2 + 3"


async def test_each_rule_can_be_switched_off() -> None:
    relaxed = DefaultStepVerifier(require_tool_calls=False, reject_echo=False)
    agent, session, _ = make(["I will add them.", "Explain why 5 is odd"],
                             agent=DefaultTaskAgent(verifier=relaxed))
    plan = Plan.from_dict({"steps": [{"description": "Compute 2 + 3", "tool_hints": ["add"]},
                                     {"description": "Explain why 5 is odd"}]})
    await agent.execute_plan(session, plan)
    assert plan.succeeded
    labels = DefaultStepVerifier(result_labels=("RESULT>",))
    agent, session, _ = make(["RESULT> 5", "Tool result: 5"], agent=DefaultTaskAgent(verifier=labels))
    plan = Plan.from_dict({"steps": ["Compute 2 + 3 in your head", "Compute 2 + 3 again"]})
    await agent.execute_plan(session, plan, failure_policy="continue")
    assert [s.status for s in plan.steps] == [StepStatus.FAILED, StepStatus.COMPLETED]


async def test_a_custom_verifier_sees_the_step_the_turn_the_prompt_and_the_tools() -> None:
    seen: list[tuple[str, str, str, list[str]]] = []

    class NeedsANumber:
        async def verify(self, step: Step, turn: TurnResult, *, prompt: str,
                         tools: Collection[str]) -> str | None:
            seen.append((step.id, turn.text, prompt.splitlines()[-2], sorted(tools)))
            return None if any(ch.isdigit() for ch in turn.text) else "the answer has no number"

    verifier = NeedsANumber()
    assert isinstance(verifier, StepVerifier)
    agent, session, _ = make(["five", "5"], agent=DefaultTaskAgent(verifier=verifier))
    plan = await agent.execute_plan(session, one_step(hints=[]), failure_policy="retry", max_retries=1)
    assert plan.succeeded
    assert seen[0] == ("1", "five", "Now carry out step 1 of 1: Compute 2 + 3", ["add", "broken"])
    assert plan.steps[0].last_error is not None
    assert plan.steps[0].last_error.message == "not done: the answer has no number"


async def test_calls_a_text_mode_model_writes_count_as_calls() -> None:
    # A small model without native tools: its JSON call in the text is run, so the step is done.
    agent, session, _ = make(['{"tool": "add", "arguments": {"a": 2, "b": 3}}', "The sum is 5."],
                             config=AgentConfig(text_mode_tools=True))
    plan = await agent.execute_plan(session, one_step())
    assert plan.succeeded, plan.steps[0].error
    assert plan.steps[0].result == "The sum is 5."


async def test_a_verified_plan_persists_and_resumes_with_its_failure() -> None:
    agent, session, _ = make(["Nothing to do.", ADD_CALL, "The sum is 5."])
    plan = await agent.execute_plan(session, one_step())
    assert not plan.succeeded
    saved = Plan.from_dict(session.app_state["plan"])
    assert saved.steps[0].error is not None
    assert saved.steps[0].error.type == "StepNotVerified"
    resumed = await agent.resume_plan(session)
    assert resumed.succeeded


def _llama_cpp_reply(content: str) -> httpx.Response:
    """A llama.cpp ``llama-server`` chat completion: the model's call is text in ``content``."""
    return httpx.Response(200, json={
        "id": "chatcmpl-8f3e", "object": "chat.completion", "created": 1764000000,
        "model": "qwen2.5-coder-1.5b-instruct-q8_0.gguf",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 412, "completion_tokens": 31, "total_tokens": 443},
    })


async def test_a_llama_cpp_call_left_as_text_fails_its_step_over_the_real_wire() -> None:
    # Issue 18's false success: the call arrives as JSON text, nothing runs, the turn ends "done".
    call = '```json\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n```'
    provider = create_provider("openai-compatible:qwen2.5-coder-1.5b", base_url="http://127.0.0.1:8080/v1",
                               retry_policy=NO_RETRY)
    bundle = (AgentBuilder().provider(provider).tools(add)
              .config(AgentConfig(text_mode_tools=False, streaming="never")).build())
    agent = DefaultTaskAgent()
    session = AgentSession(agent, "llama", bundle)
    with respx.mock(assert_all_called=True) as router:
        route = router.post("http://127.0.0.1:8080/v1/chat/completions").mock(
            return_value=_llama_cpp_reply(call))
        plan = await agent.execute_plan(session, one_step())
    assert route.call_count == 2  # asked once more for an answer
    step = plan.steps[0]
    assert step.status is StepStatus.FAILED
    assert not plan.succeeded
    assert step.error is not None
    assert step.error.type == "NoAnswer"
    assert "its reply was only a tool call to add written as text, which was not run" in step.error.message
