"""Tests of agcore.hooks. Shared builders for the values hooks receive."""

from __future__ import annotations

from agcore.hooks import HookContext
from agcore.llm import AssistantMessage, LLMRequest, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage


def make_ctx(turn_index: int = 0) -> HookContext:
    return HookContext(session_id="s-1", agent_name="tester", turn_index=turn_index)


def make_request(system: str = "base") -> LLMRequest:
    return LLMRequest.build([UserMessage(content="hi")], system=system)


def make_message(text: str = "done") -> AssistantMessage:
    return AssistantMessage(content=[TextBlock(text=text)], model="m", provider="p")


def make_call(**arguments: object) -> ToolUseBlock:
    return ToolUseBlock(id="call-1", name="shell", input=dict(arguments or {"cmd": "ls"}))


def make_result(text: str = "ok") -> ToolResultBlock:
    return ToolResultBlock(tool_use_id="call-1", content=text)
