"""``WrapUp``: in a turn whose answer is judged (acceptance checks, ``judged_answers``), a successful
call repeated with the same result makes the next reply the answer (only the answer form of the
constrained reply shape; ``tool_choice: none`` with native tools), on a loopback llama-server double
and a scripted native-tools model. Without a judge nothing changes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agcore.agent import AgentBuilder, AgentConfig, AgentSession, BasicAgent, judged_answers
from agcore.agent.checks import AcceptanceChecks, check_report
from agcore.llm import forget_local_servers
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import NO_RETRY
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import ToolContext, tool
from agcore.tools.workspace import Workspace
from tests.fake_llama import FakeLocalServer

pytestmark = pytest.mark.anyio


def call(name: str, **arguments: Any) -> str:
    return json.dumps({"tool_calls": [{"name": name, "arguments": arguments}]})


ANSWER = '{"answer": "The notes say hello."}'


@tool
def read_file(ctx: ToolContext, path: str) -> str:
    """Read a text file of the workspace."""
    root: Path = ctx.require("root")
    return (root / path).read_text()


@tool
def write_file(ctx: ToolContext, path: str, content: str) -> str:
    """Write a text file of the workspace."""
    root: Path = ctx.require("root")
    (root / path).write_text(content)
    return f"wrote {path}"


@pytest.fixture(autouse=True)
def fresh_detection() -> Iterator[None]:
    forget_local_servers()
    yield
    forget_local_servers()


def session_for(provider: Any, root: Path, *capabilities: Any) -> AgentSession:
    (root / "notes.txt").write_text("hello")
    builder = AgentBuilder().provider(provider).tools(read_file, write_file).config(AgentConfig())
    if capabilities:
        builder = builder.capabilities(*capabilities)
    return AgentSession(BasicAgent(name="coder"), "s", builder.build(), dependencies={"root": root})


def answer_only(body: dict[str, Any]) -> bool:
    schema = body["response_format"]["json_schema"]["schema"]
    return "anyOf" not in schema and schema["required"] == ["answer"]


async def test_the_same_read_twice_makes_the_next_reply_the_answer(tmp_path: Path) -> None:
    with FakeLocalServer("llama.cpp") as server:
        server.answer(200, call("read_file", path="notes.txt"))
        server.answer(200, call("read_file", path="notes.txt"))
        server.answer(200, ANSWER)
        provider = OpenAIProvider("qwen-small", base_url=server.base_url, retry_policy=NO_RETRY)
        session = session_for(provider, tmp_path)
        with judged_answers(session):
            result = await session.submit_turn("What do the notes say?")
        await provider.aclose()
    assert result.stop == "done"
    assert result.text == "The notes say hello."
    first, second, third = server.requests
    assert not answer_only(first)
    assert not answer_only(second)
    assert answer_only(third)  # no call can be decoded: the model answers
    told = json.dumps(third["messages"][-1])
    assert "gave exactly the same result" in told
    assert "Your next reply is your answer" in told


async def test_a_result_that_changed_is_no_repeat(tmp_path: Path) -> None:
    with FakeLocalServer("llama.cpp") as server:
        server.answer(200, call("read_file", path="notes.txt"))
        server.answer(200, call("write_file", path="notes.txt", content="bye"))
        server.answer(200, call("read_file", path="notes.txt"))
        server.answer(200, ANSWER)
        provider = OpenAIProvider("qwen-small", base_url=server.base_url, retry_policy=NO_RETRY)
        session = session_for(provider, tmp_path)
        with judged_answers(session):
            result = await session.submit_turn("Change the notes to bye.")
        await provider.aclose()
    assert result.stop == "done"
    assert not any(answer_only(body) for body in server.requests)
    assert "gave exactly the same result" not in json.dumps(server.requests[-1]["messages"])


async def test_a_failed_call_repeated_is_left_to_the_repetition_guard(tmp_path: Path) -> None:
    model = ScriptedProvider([tool_call_reply("read_file", {"path": "missing.txt"}),
                              tool_call_reply("read_file", {"path": "missing.txt"}), "No such file."])
    session = session_for(model, tmp_path)
    with judged_answers(session):
        result = await session.submit_turn("Read missing.txt")
    assert result.text == "No such file."
    assert all(request.tool_choice is None for request in model.requests)


async def test_native_tools_get_tool_choice_none_once(tmp_path: Path) -> None:
    read = tool_call_reply("read_file", {"path": "notes.txt"})
    model = ScriptedProvider([read, tool_call_reply("read_file", {"path": "notes.txt"}), "It says hello."])
    session = session_for(model, tmp_path)
    with judged_answers(session):
        result = await session.submit_turn("What do the notes say?")
    assert result.text == "It says hello."
    choices = [r.tool_choice.mode if r.tool_choice else None for r in model.requests]
    assert choices == [None, None, "none"]
    assert model.requests[-1].tools  # still offered (the history holds calls), just not to be called


async def test_a_failing_check_after_the_forced_answer_gives_the_tools_back(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, sandbox="off")
    checks = AcceptanceChecks(workspace, ["python -c \"assert open('notes.txt').read() == 'bye'\""])
    model = ScriptedProvider([
        tool_call_reply("read_file", {"path": "notes.txt"}),
        tool_call_reply("read_file", {"path": "notes.txt"}),
        "Done.",  # forced: tool_choice none
        tool_call_reply("write_file", {"path": "notes.txt", "content": "bye"}),  # told the check failed
        "Changed it to bye.",
    ])
    result = await session_for(model, tmp_path, checks).submit_turn("Change the notes to bye.")
    assert result.stop == "done"
    assert (tmp_path / "notes.txt").read_text() == "bye"
    choices = [r.tool_choice.mode if r.tool_choice else None for r in model.requests]
    assert choices == [None, None, "none", "any", None]  # forced answer; then ChangeFirst: a change
    report = check_report(result)
    assert report is not None
    assert report.passed
    assert report.rounds == 2


async def test_calls_before_an_answer_are_forgotten_when_the_turn_goes_on(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, sandbox="off")
    checks = AcceptanceChecks(workspace, ["python -c \"assert open('notes.txt').read() == 'bye'\""])
    model = ScriptedProvider([
        tool_call_reply("read_file", {"path": "notes.txt"}),
        "Done.",  # the check fails
        tool_call_reply("read_file", {"path": "notes.txt"}),  # the same result, but after the failure
        tool_call_reply("write_file", {"path": "notes.txt", "content": "bye"}),
        "Changed it to bye.",
    ])
    result = await session_for(model, tmp_path, checks).submit_turn("Change the notes to bye.")
    assert result.stop == "done"
    assert all(r.tool_choice is None or r.tool_choice.mode != "none" for r in model.requests)


@tool
def run_tests(ctx: ToolContext) -> str:
    """Run the tests."""
    ctx.require("root")
    import time

    return f"1 failed in {time.perf_counter() % 1:.2f}s"


async def test_a_duration_that_changed_is_no_new_result(tmp_path: Path) -> None:
    run = tool_call_reply("run_tests", {})
    model = ScriptedProvider([run, tool_call_reply("run_tests", {}), "1 failed."])
    bundle = AgentBuilder().provider(model).tools(run_tests).build()
    session = AgentSession(BasicAgent(name="coder"), "s", bundle, dependencies={"root": tmp_path})
    with judged_answers(session):
        result = await session.submit_turn("Run the tests")
    assert result.text == "1 failed."
    assert model.requests[-1].tool_choice is not None
    assert model.requests[-1].tool_choice.mode == "none"


async def test_without_a_judge_a_repeat_changes_nothing(tmp_path: Path) -> None:
    read = tool_call_reply("read_file", {"path": "notes.txt"})
    model = ScriptedProvider([read, tool_call_reply("read_file", {"path": "notes.txt"}), "It says hello."])
    session = session_for(model, tmp_path)
    result = await session.submit_turn("What do the notes say?")
    assert result.text == "It says hello."
    assert all(r.tool_choice is None for r in model.requests)
    history = json.dumps([m.model_dump(mode="json") for m in session.messages])
    assert "gave exactly the same result" not in history
    assert "answer_judged" not in session.state.app_state
