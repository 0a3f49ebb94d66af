"""Messages as the OpenTelemetry GenAI conventions record content: ``gen_ai.input.messages`` /
``gen_ai.output.messages`` JSON (``[{"role": ..., "parts": [{"type": "text", "content": ...}]}]``).

Only used with ``capture_content=True``: prompts and replies may hold personal or secret data.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from agcore.llm import (
    AssistantMessage,
    ImageBlock,
    LLMRequest,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

__all__ = ["arguments_json", "input_messages", "output_messages"]

_encode: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def arguments_json(call: ToolUseBlock) -> str:
    return _encode(call.input)


def _part(block: object) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "content": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_call", "id": block.id, "name": block.name, "arguments": block.input}
    if isinstance(block, ToolResultBlock):
        return {"type": "tool_call_response", "id": block.tool_use_id, "response": block.text}
    if isinstance(block, ThinkingBlock):
        return {"type": "reasoning", "content": block.thinking}
    if isinstance(block, ImageBlock):
        part: dict[str, Any] = {"type": "uri", "modality": "image", "uri": block.url}
        if block.data is not None:
            part = {"type": "blob", "modality": "image", "mime_type": block.media_type}
        return part
    return {"type": type(block).__name__}


def _message(message: UserMessage | AssistantMessage) -> dict[str, Any]:
    blocks = message.blocks if isinstance(message, UserMessage) else message.content
    parts = [_part(b) for b in blocks]
    role: str = message.role
    if role == "user" and parts and all(p["type"] == "tool_call_response" for p in parts):
        role = "tool"
    return {"role": role, "parts": parts}


def input_messages(request: LLMRequest) -> tuple[str, str | None]:
    """``(gen_ai.input.messages, gen_ai.system_instructions)`` as JSON strings (no system: None)."""
    messages: Sequence[UserMessage | AssistantMessage] = request.messages
    system = _encode([{"type": "text", "content": request.system}]) if request.system else None
    return _encode([_message(m) for m in messages]), system


def output_messages(message: AssistantMessage) -> str:
    entry = _message(message)
    entry["finish_reason"] = message.stop_reason.value if message.stop_reason is not None else None
    return _encode([entry])
