"""The guard before the prompt: a command the ``CommandGuard`` refuses is refused at once, never shown
to the user for approval; a command it lets through (or cannot read) is asked about as before. On
both backends (the agcore loop and LangGraph), with a real confirm callback and a real workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, ToolResults
from agcore.integrations.langgraph import GraphSession
from agcore.llm import ToolUseBlock
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import Tool, ToolRegistry
from agcore.tools.workspace import Workspace


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the loop's own trio coverage lives in tests/agent; this is about the order


async def _turn(backend: str, root: Path, command: str) -> tuple[list[str], Any, str]:
    """Run one turn in which the model calls run_command(command); what the user was asked, the
    tool result, and the result's status as the loop recorded it."""
    asked: list[str] = []

    async def confirm(call: ToolUseBlock, tool: Tool) -> bool:
        asked.append(str(call.input.get("command")))
        return True

    workspace = Workspace(root, sandbox="off")
    model = ScriptedProvider([tool_call_reply("run_command", {"command": command}), "done"])
    bundle = AgentBuilder().provider(model).tools(*workspace.tools(include=["run_command"])).build()
    agent = BasicAgent(name="coder", system_prompt="s")
    session: AgentSession | GraphSession = (
        AgentSession(agent, "p", bundle, confirm=confirm)
        if backend == "loop"
        else GraphSession(agent, "p", bundle, confirm=confirm)
    )
    result = await session.submit_turn("go")
    history = session.messages if isinstance(session, AgentSession) else await session.history()
    results = [r for m in history if isinstance(m, ToolResults) for r in m.results]
    return asked, results[0], result.stop


@pytest.mark.anyio
@pytest.mark.parametrize("backend", ["loop", "graph"])
async def test_a_refused_command_is_never_shown_for_approval(tmp_path: Path, backend: str) -> None:
    asked, result, stop = await _turn(backend, tmp_path, "rm -rf /")
    assert asked == []  # refused at once
    assert result.is_error
    assert result.text.startswith("Denied: `rm -rf /` is refused")  # as when running it is refused
    assert "refused" in result.text
    assert stop == "done"


@pytest.mark.anyio
@pytest.mark.parametrize("backend", ["loop", "graph"])
async def test_an_allowed_command_is_still_asked_about(tmp_path: Path, backend: str) -> None:
    asked, result, _ = await _turn(backend, tmp_path, "echo hello")
    assert asked == ["echo hello"]
    assert not result.is_error
    assert "hello" in result.text


@pytest.mark.anyio
@pytest.mark.parametrize("backend", ["loop", "graph"])
async def test_what_the_guard_cannot_read_goes_to_the_user(tmp_path: Path, backend: str) -> None:
    """A one-liner needs confirmation: that is the question, not a refusal."""
    asked, _, _ = await _turn(backend, tmp_path, "python3 -c 'print(1)'")
    assert asked == ["python3 -c 'print(1)'"]


def test_the_registry_seam(tmp_path: Path) -> None:
    registry = ToolRegistry(Workspace(tmp_path, sandbox="off").tools())
    refuse = ToolUseBlock(id="1", name="run_command", input={"command": "sudo rm -rf ~"})
    assert "sudo" in (registry.precheck(refuse) or "")
    assert registry.precheck(ToolUseBlock(id="2", name="run_command", input={"command": "ls"})) is None
    assert registry.precheck(ToolUseBlock(id="3", name="run_command", input={"command": 5})) is None
    assert registry.precheck(ToolUseBlock(id="4", name="run_command", input={"command": "ls", "cwd": ".."}))
    assert registry.precheck(ToolUseBlock(id="5", name="read_file", input={"path": "/etc"})) is None
    assert registry.precheck(ToolUseBlock(id="6", name="nope", input={})) is None
