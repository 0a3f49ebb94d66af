"""Bounded, JSON-ready summaries of what a run passes to hooks: requests, replies, calls, results.

Every free text goes through ``preview`` so a 5 MB tool output or a pasted file costs a log line of
at most ``limit`` characters (plus the ellipsis), with the full length recorded next to it.
"""

from __future__ import annotations

import json
from typing import Any, Final

from agcore.llm import (
    AssistantMessage,
    ImageBlock,
    LLMRequest,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)

__all__ = [
    "ELLIPSIS",
    "MAX_MESSAGE_PREVIEWS",
    "arguments_text",
    "call_summary",
    "message_text",
    "preview",
    "request_summary",
    "response_summary",
    "usage_dict",
]

#: Appended to a text cut at its preview limit.
ELLIPSIS: Final = "…"
#: An ``llm_request`` record previews at most this many messages, the most recent ones: a long
#: session would otherwise write its whole history again on every model call.
MAX_MESSAGE_PREVIEWS: Final = 20

# Built once: json.dumps with options builds a new encoder per call, and this runs per tool call.
_compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def preview(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with ``…`` appended when it was cut."""
    return text if len(text) <= limit else text[:limit] + ELLIPSIS


def arguments_text(call: ToolUseBlock) -> str:
    """A call's arguments as compact JSON (``{}`` when the model's JSON could not be read)."""
    try:
        return _compact_json(call.input)
    except (TypeError, ValueError):  # pragma: no cover - input is a validated dict
        return repr(call.input)


def _block_text(block: object) -> str:
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ToolUseBlock):
        return f"[tool_use {block.name} {arguments_text(block)}]"
    if isinstance(block, ToolResultBlock):
        flag = " error" if block.is_error else ""
        return f"[tool_result{flag} {block.tool_use_id}] {block.text}"
    if isinstance(block, ThinkingBlock):
        return "[thinking]"
    if isinstance(block, ImageBlock):
        return "[image]"
    return f"[{type(block).__name__}]"


def message_text(message: UserMessage | AssistantMessage) -> str:
    """One readable line of text for a message: its text, tool calls and results in order."""
    if isinstance(message, UserMessage) and isinstance(message.content, str):
        return message.content
    blocks = message.content
    return " ".join(part for part in (_block_text(b) for b in blocks) if part)


def usage_dict(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
    }


def request_summary(request: LLMRequest, limit: int, model: str | None) -> dict[str, Any]:
    """The ``llm_request`` record's data: parameters, message count and the recent messages' previews."""
    messages = request.messages
    shown = messages[-MAX_MESSAGE_PREVIEWS:]
    return {
        "model": model,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "messages_count": len(messages),
        "messages_omitted": len(messages) - len(shown),
        "messages": [{"role": m.role, "preview": preview(message_text(m), limit)} for m in shown],
        "system_chars": len(request.system or ""),
        "tools": [tool.name for tool in request.tools],
    }


def call_summary(call: ToolUseBlock, limit: int) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "call_id": call.id, "name": call.name, "arguments": preview(arguments_text(call), limit),
    }
    if call.parse_error is not None:
        summary["parse_error"] = preview(call.parse_error, limit)
    return summary


def response_summary(message: AssistantMessage, limit: int) -> dict[str, Any]:
    """The ``llm_response`` record's data: who answered, the text's length and preview, the calls."""
    text = message.text
    calls = message.tool_calls
    return {
        "model": message.model,
        "provider": message.provider,
        "stop_reason": message.stop_reason.value if message.stop_reason is not None else None,
        "text_length": len(text),
        "text_preview": preview(text, limit),
        "truncated": len(text) > limit,
        "has_tool_call": bool(calls),
        "tool_calls": [call_summary(c, limit) for c in calls],
        "usage": usage_dict(message.usage),
    }
