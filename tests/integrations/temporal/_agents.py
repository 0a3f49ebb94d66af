"""The agent the Temporal tests run on their workers: a model that is a function of the conversation
(so any number of sessions share one worker without cross-talk) and a few tools.

The model reads the last user input: ``call NAME {json}`` (several joined by `` && ``) calls tools,
anything else is echoed; after tool results it answers ``done: <results>``. A plan step's input is
read from its "Now carry out step" line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio

from agcore.agent import AgentBuilder, RuntimeBundle
from agcore.llm.types import Message, ToolDefinition, ToolResultBlock, UserMessage
from agcore.testing import FunctionProvider, text_reply, tool_calls_reply
from agcore.tools import Tool, tool

_STEP_MARK = "Now carry out step "


def _last_user_text(message: UserMessage) -> str | None:
    if isinstance(message.content, str):
        return message.content
    return None


def model(messages: list[Message], tools: list[ToolDefinition]) -> object:
    last = messages[-1]
    if isinstance(last, UserMessage) and not isinstance(last.content, str):
        results = [b for b in last.content if isinstance(b, ToolResultBlock)]
        if results:
            return text_reply("done: " + " | ".join(r.text for r in results))
    text = _last_user_text(last) if isinstance(last, UserMessage) else None
    text = text or ""
    for line in text.splitlines():
        if line.startswith(_STEP_MARK):
            text = line.split(": ", 1)[1]
    if text.startswith("call "):
        calls = []
        for part in text.split(" && "):
            name, _, args = part.removeprefix("call ").partition(" ")
            calls.append((name, json.loads(args or "{}")))
        return tool_calls_reply(calls)
    return text_reply(f"echo: {text}")


def _log_call(name: str) -> None:
    # Every tool run appends a line to the log file (set by the test), so a test counts what ran
    # on any worker, in any process.
    path = os.environ.get("AGCORE_TEMPORAL_TOOL_LOG")
    if path:
        with Path(path).open("a") as log:
            log.write(name + "\n")


@tool
async def echo(text: str) -> str:
    """Repeat the text."""
    _log_call("echo")
    return f"echoed {text}"


@tool
async def slow(seconds: float, label: str = "") -> str:
    """Wait, then answer."""
    _log_call(f"slow:{label}")
    marker = os.environ.get("AGCORE_TEMPORAL_SLOW_MARKER")
    if marker:
        await anyio.Path(marker).write_text(label)
    await anyio.sleep(seconds)
    _log_call(f"slow-done:{label}")
    return f"slept {seconds}"


@tool(requires_confirmation=True)
async def delete_file(path: str) -> str:
    """Delete a file (needs the user's approval)."""
    _log_call("delete_file")
    return f"deleted {path}"


def make_bundle() -> RuntimeBundle:
    """The worker's bundle (a fresh provider and registry per worker)."""
    bundle = AgentBuilder().provider(FunctionProvider(model)).tools(echo, slow, delete_file).build()
    bundle.tool_registry().register_client_tool(Tool.client("ask_user", "Ask the user a question.", {
        "type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"],
    }))
    return bundle
