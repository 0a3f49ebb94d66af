"""The agent the Temporal tests run on their workers: a model that is a function of the conversation
(so any number of sessions share one worker without cross-talk) and a few tools.

The model reads the last user input: ``call NAME {json}`` (several joined by `` && ``) calls tools,
anything else is echoed; after tool results it answers ``done: <results>``. A plan step's input is
read from its "Now carry out step" line.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
from pydantic import BaseModel

from agcore.agent import AgentBuilder, RuntimeBundle
from agcore.llm import BaseProvider, StreamAssembler, message_to_events
from agcore.llm.errors import InvalidRequestError, RateLimitError
from agcore.llm.events import StreamEvent, TextDelta
from agcore.llm.types import (
    AssistantMessage,
    LLMRequest,
    LLMResponse,
    Message,
    TextBlock,
    ToolDefinition,
    ToolResultBlock,
    UserMessage,
)
from agcore.testing import FunctionProvider, text_reply, tool_calls_reply
from agcore.tools import Tool, ToolContext, tool

_STEP_MARK = "Now carry out step "


#: ``fail-once KEY`` inputs seen by this worker process (the first call per key fails, retryably).
_failed_once: set[str] = set()


def model(messages: list[Message], tools: list[ToolDefinition]) -> object:
    _log_call("llm")
    last = messages[-1]
    text = ""
    if isinstance(last, UserMessage):
        if isinstance(last.content, str):
            text = last.content
        else:
            said = [b.text for b in last.content if isinstance(b, TextBlock)]
            results = [b for b in last.content if isinstance(b, ToolResultBlock)]
            if said:  # input steered in after the results: answer that
                text = said[-1]
            elif results:
                return text_reply("done: " + " | ".join(r.text for r in results))
    if "Summarise the conversation transcript" in text:
        _log_call("summary")
        return text_reply(f"- the user asked for {text.count('call echo')} echoes; all were done")
    for line in text.splitlines():
        if line.startswith(_STEP_MARK):
            text = line.split(": ", 1)[1]
    if text.startswith("fail-once "):
        if text not in _failed_once:
            _failed_once.add(text)
            raise RateLimitError("slow down", retry_after=0.05, provider="function", model="function-model")
        return text_reply("recovered")
    if text.startswith("ticket ") and any(t.name == "final_result" for t in tools):
        title, _, priority = text.removeprefix("ticket ").rpartition(" ")
        return tool_calls_reply([("final_result", {"title": title, "priority": int(priority)})])
    if text.startswith("slow-model "):
        return _slowly(float(text.split()[1]))
    if text.startswith("fail-hard"):
        raise InvalidRequestError("the request is malformed: fix it", status_code=400)
    if text.startswith("call "):
        calls = []
        for part in text.split(" && "):
            name, _, args = part.removeprefix("call ").partition(" ")
            calls.append((name, json.loads(args or "{}")))
        return tool_calls_reply(calls)
    return text_reply(f"echo: {text}")


async def _slowly(seconds: float) -> object:
    await anyio.sleep(seconds)
    return text_reply(f"thought for {seconds}")


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


@tool
async def chatty(lines: int, ctx: ToolContext) -> str:
    """Report progress lines while working."""
    for i in range(lines):
        await ctx.report_progress(f"line {i}", fraction=(i + 1) / lines)
    return f"said {lines} lines"


@tool(requires_confirmation=True)
async def delete_file(path: str) -> str:
    """Delete a file (needs the user's approval)."""
    _log_call("delete_file")
    return f"deleted {path}"


def make_bundle() -> RuntimeBundle:
    """The worker's bundle (a fresh provider and registry per worker)."""
    bundle = AgentBuilder().provider(FunctionProvider(model)).tools(echo, slow, chatty, delete_file).build()
    bundle.tool_registry().register_client_tool(Tool.client("ask_user", "Ask the user a question.", {
        "type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"],
    }))
    return bundle


class Ticket(BaseModel):
    """A typed answer (for durable turns with ``output_type``)."""

    title: str
    priority: int


class MissingKeyError(RuntimeError):
    """What a factory reading its secrets might raise (any exception type, not only ConfigError)."""


def make_bundle_without_key() -> RuntimeBundle:
    """A worker factory that fails the way a missing secret does."""
    raise MissingKeyError("AGCORE_TEST_KEY is not set: export it before starting the worker")


def make_misconfigured_bundle() -> RuntimeBundle:
    """A worker factory that refuses its configuration."""
    from agcore.agent import ConfigError

    raise ConfigError("max_turns must be positive: fix agents.yaml", piece="config")


class FlakyStreamer(BaseProvider):
    """Streams ``streamed: <input>`` four characters at a time; an input (or plan step) starting with
    ``flaky`` has its first stream cut off after a few deltas with a retryable error (once per input)."""

    provider_name = "flaky"

    def __init__(self) -> None:
        super().__init__("flaky-model")
        self.failed: set[str] = set()

    def _reply(self, request: LLMRequest) -> tuple[str, AssistantMessage]:
        last = request.messages[-1]
        text = last.content if isinstance(last, UserMessage) and isinstance(last.content, str) else ""
        return text, text_reply(f"streamed: {text}")

    async def _complete_once(self, request: LLMRequest) -> LLMResponse:
        return LLMResponse(message=self._reply(request)[1])

    async def _stream_once(
        self, request: LLMRequest, assembler: StreamAssembler
    ) -> AsyncIterator[StreamEvent]:
        text, reply = self._reply(request)
        steps = [line.split(": ", 1)[1] for line in text.splitlines() if line.startswith(_STEP_MARK)]
        focus = steps[-1] if steps else text  # the step being carried out is the last one named
        cut = focus.startswith("flaky") and text not in self.failed
        deltas = 0
        for event in message_to_events(reply, chunk_size=4):
            if isinstance(event, TextDelta):
                deltas += 1
                if cut and deltas == 3:
                    self.failed.add(text)
                    raise RateLimitError("the stream was cut off", retry_after=0.05)
                await anyio.sleep(0.02)
            yield event

    async def health_check(self) -> bool:
        return True


def make_streaming_bundle() -> RuntimeBundle:
    """A worker bundle whose model streams (and is cut off once for ``flaky`` inputs)."""
    return AgentBuilder().provider(FlakyStreamer()).build()


def audit_observers() -> list[object]:
    """Workflow observers for `agcore worker --workflow-observers`: an audit log in
    $AGCORE_TEMPORAL_AUDIT_DIR."""
    from agcore.plugins import AuditLogPlugin

    return [AuditLogPlugin(os.environ["AGCORE_TEMPORAL_AUDIT_DIR"])]
