"""Real runs for the plugin tests: tools that succeed, raise, need confirmation, hang or flood."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from agcore.agent import AgentBuilder, AgentConfig, AgentSession, BasicAgent
from agcore.hooks import ToolCallDecision, hookimpl
from agcore.llm import ToolUseBlock
from agcore.testing import ScriptedProvider, tool_calls_reply
from agcore.tools import Tool, tool

BIG = 5_000  # characters `dump` returns: far more than any preview


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def boom() -> str:
    """Always fails."""
    raise RuntimeError("disk on fire")


@tool(requires_confirmation=True)
def delete(path: str) -> str:
    """Delete a file (asks first)."""
    return f"deleted {path}"


@tool
def dump() -> str:
    """Returns a huge output."""
    return "x" * BIG


@tool
async def nap(seconds: float) -> str:
    """Sleeps, so concurrent sessions interleave."""
    await anyio.sleep(seconds)
    return "rested"


TOOLS = (add, boom, delete, dump, nap)


class DenyD:
    """A guard plugin: refuses the call whose id is ``d``."""

    @hookimpl
    def before_tool_call(self, call: ToolUseBlock) -> ToolCallDecision | None:
        return ToolCallDecision.deny("not on Sundays") if call.id == "d" else None


def approve_a_only(call: ToolUseBlock, t: Tool) -> bool:
    """The session's confirm callback: yes for path ``a``, no otherwise."""
    return call.input.get("path") == "a"


def session_with(
    model: ScriptedProvider,
    *plugins: Any,
    session_id: str = "s-1",
    confirm: Any = approve_a_only,
    tools: tuple[Tool, ...] = TOOLS,
    config: AgentConfig | None = None,
    agent: str = "auditor",
    system_prompt: str | None = None,
) -> AgentSession:
    bundle = (AgentBuilder().provider(model).tools(*tools).plugins(*plugins)
              .config(config or AgentConfig()).build())
    agent_ = BasicAgent(name=agent, system_prompt=system_prompt)
    return AgentSession(agent_, session_id, bundle, confirm=confirm)


def mixed_batch() -> Any:
    """One reply calling: add (ok), boom (raises), add denied by DenyD, delete approved, delete refused,
    dump (huge output)."""
    return tool_calls_reply([
        ToolUseBlock(id="ok", name="add", input={"a": 1, "b": 2}),
        ToolUseBlock(id="err", name="boom"),
        ToolUseBlock(id="d", name="add", input={"a": 0, "b": 0}),
        ToolUseBlock(id="yes", name="delete", input={"path": "a"}),
        ToolUseBlock(id="no", name="delete", input={"path": "b"}),
        ToolUseBlock(id="big", name="dump"),
    ], text="Let me do all of that.")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]
