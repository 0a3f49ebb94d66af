"""``ChangeFirst`` (built in): the reply after a failing acceptance check's request for a change may
only call a tool that can change something: the calls form of the constrained reply shape, naming
the tools that are not read-only, on a loopback llama-server double; with native tools those tools
alone and ``tool_choice: any``. Once, and only after such a request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agcore.agent import AgentBuilder, AgentSession, BasicAgent
from agcore.agent.checks import AcceptanceChecks, check_report
from agcore.llm import forget_local_servers
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import NO_RETRY
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import ToolContext, tool
from agcore.tools.workspace import Workspace
from tests.fake_llama import FakeLocalServer

pytestmark = pytest.mark.anyio

CHECK = "python -c \"assert open('notes.txt').read() == 'bye'\""


def call(name: str, **arguments: Any) -> str:
    return json.dumps({"tool_calls": [{"name": name, "arguments": arguments}]})


def answer(text: str) -> str:
    return json.dumps({"answer": text})


@pytest.fixture(autouse=True)
def fresh_detection() -> Iterator[None]:
    forget_local_servers()
    yield
    forget_local_servers()


def session_for(provider: Any, root: Path, *commands: str) -> AgentSession:
    (root / "notes.txt").write_text("hello")
    workspace = Workspace(root, sandbox="off", confirm_writes=False, confirm_commands=False)
    tools = workspace.tools(include=["read_file", "write_file", "edit_file"])
    bundle = AgentBuilder().provider(provider).tools(tools).capabilities(
        AcceptanceChecks(workspace, list(commands))
    ).build()
    return AgentSession(BasicAgent(name="coder"), "s", bundle)


def shape(body: dict[str, Any]) -> tuple[bool, list[str]]:
    """Whether the reply may be an answer, and the tool names its calls may use."""
    schema = body["response_format"]["json_schema"]["schema"]
    forms = schema.get("anyOf", [schema])
    calls = [f for f in forms if "tool_calls" in f.get("properties", {})]
    items = calls[0]["properties"]["tool_calls"]["items"]["anyOf"] if calls else []
    names = [c["properties"]["name"]["enum"][0] for c in items]
    return any("answer" in f.get("properties", {}) for f in forms), sorted(names)


async def test_after_a_failing_check_the_reply_must_call_a_changing_tool(tmp_path: Path) -> None:
    with FakeLocalServer("llama.cpp") as server:
        server.answer(200, call("read_file", path="notes.txt"))
        server.answer(200, answer("The notes are fine."))  # the check fails
        server.answer(200, call("write_file", path="notes.txt", content="bye"))  # only a change decodes
        server.answer(200, answer("Changed the notes to bye."))
        provider = OpenAIProvider("qwen-small", base_url=server.base_url, retry_policy=NO_RETRY)
        result = await session_for(provider, tmp_path, CHECK).submit_turn("Change the notes to bye.")
        await provider.aclose()
    assert result.stop == "done", result.error
    report = check_report(result)
    assert report is not None
    assert report.passed
    shapes = [shape(body) for body in server.requests]
    full = (True, ["edit_file", "read_file", "write_file"])
    assert shapes == [full, full, (False, ["edit_file", "write_file"]), full]


async def test_native_tools_offer_the_changing_tools_alone_once(tmp_path: Path) -> None:
    model = ScriptedProvider([
        tool_call_reply("read_file", {"path": "notes.txt"}),
        "Done.",  # the check fails
        tool_call_reply("edit_file", {"path": "notes.txt", "old": "hello", "new": "bye"}),
        "Changed it.",
    ])
    result = await session_for(model, tmp_path, CHECK).submit_turn("Change the notes to bye.")
    assert result.stop == "done", result.error
    choices = [r.tool_choice.mode if r.tool_choice else None for r in model.requests]
    assert choices == [None, None, "any", None]
    assert sorted(t.name for t in model.requests[2].tools) == ["edit_file", "write_file"]
    assert sorted(t.name for t in model.requests[3].tools) == ["edit_file", "read_file", "write_file"]


async def test_a_failing_check_of_the_answer_asks_for_an_answer_not_an_edit(tmp_path: Path) -> None:
    # A question: the check reads the answer; a forced edit made a 1.5B model change the file the
    # answer comes from (a held-out run). The reply after it keeps every tool and may answer.
    model = ScriptedProvider([
        tool_call_reply("read_file", {"path": "notes.txt"}),
        "The notes say something.",  # the check of the answer fails
        "The notes say hello.",
    ])
    result = await session_for(model, tmp_path, "grep -q hello").submit_turn("What do the notes say?")
    assert result.stop == "done", result.error
    assert all(r.tool_choice is None for r in model.requests)
    assert sorted(t.name for t in model.requests[2].tools) == ["edit_file", "read_file", "write_file"]


async def test_without_a_failing_check_nothing_is_narrowed(tmp_path: Path) -> None:
    model = ScriptedProvider([
        tool_call_reply("read_file", {"path": "notes.txt"}),
        tool_call_reply("write_file", {"path": "notes.txt", "content": "bye"}),
        "Changed it.",
    ])
    result = await session_for(model, tmp_path, CHECK).submit_turn("Change the notes to bye.")
    assert result.stop == "done"
    assert all(r.tool_choice is None for r in model.requests)
    model = ScriptedProvider(["Nothing to do."])
    result = await session_for(model, tmp_path / "..").submit_turn("Say hi.")  # no checks at all
    assert all(r.tool_choice is None for r in model.requests)


@tool(read_only=True)
def look(ctx: ToolContext, path: str) -> str:
    """Look at a file."""
    return "hello"


async def test_only_read_only_tools_offered_leaves_the_reply_free(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, sandbox="off")
    (tmp_path / "notes.txt").write_text("hello")
    model = ScriptedProvider(["Done.", "Still done."])
    bundle = AgentBuilder().provider(model).tools(look).capabilities(
        AcceptanceChecks(workspace, [CHECK], rounds=1)
    ).build()
    result = await AgentSession(BasicAgent(name="coder"), "s", bundle).submit_turn("Change the notes.")
    assert result.stop == "error"
    assert all(r.tool_choice is None for r in model.requests)


async def test_after_a_failing_check_a_non_answer_is_left_to_the_checks(tmp_path: Path) -> None:
    model = ScriptedProvider([
        tool_call_reply("read_file", {"path": "notes.txt"}),
        "Done.",  # the check fails
        tool_call_reply("edit_file", {"path": "notes.txt", "old": "hello", "new": "bye"}),
        "",  # no answer: not asked again, the checks judge the work, which is done
    ])
    result = await session_for(model, tmp_path, CHECK).submit_turn("Change the notes to bye.")
    assert result.stop == "done", result.error
    report = check_report(result)
    assert report is not None
    assert report.passed
    assert len(model.requests) == 4


async def test_a_non_answer_before_any_check_failed_is_still_asked_again(tmp_path: Path) -> None:
    model = ScriptedProvider(["", "", "unused"])
    result = await session_for(model, tmp_path, CHECK).submit_turn("Change the notes to bye.")
    assert result.stop == "error"
    assert type(result.error).__name__ == "NoAnswer"
