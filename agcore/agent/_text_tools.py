"""Text-mode tool calling, for models without native tool support (small local models, seed 002).

The tools are described in the system prompt and the model answers with one JSON object,
``{"tool": "<name>", "arguments": {...}}``, instead of a native tool call. The reply is read
tolerantly — the whole text as JSON, else a fenced code block, else the first balanced ``{...}``
object; broken JSON goes through json-repair — and becomes an ordinary ``ToolUseBlock``, so history,
hooks and the tool phase are the same in both modes. Only the request changes: native tool calls and
results in the history are rendered back to text, since the model has no other way to read them.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from agcore._clock import new_id
from agcore.llm import parse_tool_arguments
from agcore.llm.models import get_model_info
from agcore.llm.types import (
    AssistantMessage,
    ContentBlock,
    LLMRequest,
    Message,
    StopReason,
    TextBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

if TYPE_CHECKING:
    from agcore.agent._config import AgentConfig

__all__ = [
    "describe_tools",
    "parse_text_tool_call",
    "text_mode_message",
    "text_mode_request",
    "uses_text_mode",
]

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_NAME_KEYS = ("tool", "name", "tool_name", "function")
_ARG_KEYS = ("arguments", "args", "input", "parameters")

_PROTOCOL = """\
# Tools
You can call tools. To call one, reply with ONLY a JSON object, and nothing else:
{"tool": "<tool name>", "arguments": {<arguments as the tool's schema says>}}
Call one tool per reply. The result comes back in the next message, starting with "Tool result".
When you need no tool, answer in plain text without any JSON object.

Available tools:
"""


# Whether a model id has native tool calling, as the model registry says (looked up once per id).
_NATIVE_TOOLS: dict[str, bool] = {}


def uses_text_mode(agent: object, config: AgentConfig, model_id: str) -> bool:
    """Text mode is on when the config says so, the agent has ``text_mode_tools = True``, or the
    model registry knows the model has no native tool calling."""
    if config.text_mode_tools or getattr(agent, "text_mode_tools", False):
        return True
    native = _NATIVE_TOOLS.get(model_id)
    if native is None:
        info = get_model_info(model_id)
        native = _NATIVE_TOOLS[model_id] = info is None or info.supports_tools
    return not native


def describe_tools(tools: list[ToolDefinition]) -> str:
    """The system-prompt section that teaches the model the protocol and lists the tools."""
    lines = [_PROTOCOL]
    for t in tools:
        schema = json.dumps(t.input_schema, ensure_ascii=False, separators=(",", ":"))
        lines.append(f"- {t.name}: {t.description or '(no description)'}\n  arguments schema: {schema}")
    return "\n".join(lines)


def _balanced_objects(text: str) -> list[str]:
    """Every top-level ``{...}`` span of ``text``, braces inside JSON strings ignored."""
    spans: list[str] = []
    depth = 0
    start = -1
    in_string = False
    escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"' and depth > 0:
            in_string = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    if depth > 0 and start >= 0:
        spans.append(text[start:])  # cut off mid-object: json-repair may still read it
    return spans


def _as_call(candidate: str) -> tuple[str, dict[str, Any], str | None] | None:
    value, error = parse_tool_arguments(candidate)
    if error is not None or not value:
        return None
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    if not name:
        return None
    raw_args: Any = next((value[k] for k in _ARG_KEYS if k in value), {})
    if isinstance(raw_args, str):  # some models double-encode the arguments
        args, arg_error = parse_tool_arguments(raw_args)
        return name, args, arg_error
    if not isinstance(raw_args, dict):
        return name, {}, (
            f"The arguments of tool '{name}' must be a JSON object, not {type(raw_args).__name__}. "
            'Reply again with {"tool": "' + name + '", "arguments": {...}}.'
        )
    return name, raw_args, None


def parse_text_tool_call(text: str) -> tuple[str, dict[str, Any], str | None, str] | None:
    """``(name, arguments, parse_error, prose)`` for the tool call written in ``text``, or None.

    ``prose`` is what the model wrote outside the call (before a fence or object). Tries the whole
    text, then each fenced block, then each balanced ``{...}`` object, and takes the first that names
    a tool.
    """
    stripped = text.strip()
    if not stripped or "{" not in stripped:
        return None
    if stripped.startswith("{"):
        found = _as_call(stripped)
        if found is not None:
            return (*found, "")
    for match in _FENCE.finditer(text):
        found = _as_call(match.group(1).strip())
        if found is not None:
            return (*found, text[: match.start()].strip())
    for span in _balanced_objects(text):
        found = _as_call(span)
        if found is not None:
            return (*found, text[: text.find(span)].strip())
    return None


def text_mode_message(message: AssistantMessage) -> AssistantMessage:
    """The model's reply with a JSON tool call in its text turned into a ``ToolUseBlock``."""
    if message.tool_calls:
        return message  # the model (or a provider shim) made a native call after all
    parsed = parse_text_tool_call(message.text)
    if parsed is None:
        return message
    name, arguments, parse_error, prose = parsed
    content: list[ContentBlock] = [b for b in message.content if not isinstance(b, TextBlock)]
    if prose:
        content.append(TextBlock(text=prose))
    content.append(
        ToolUseBlock(id=f"text_{new_id()[:20]}", name=name, input=arguments, parse_error=parse_error)
    )
    return message.model_copy(update={"content": content, "stop_reason": StopReason.TOOL_USE})


def _call_text(call: ToolUseBlock) -> str:
    return json.dumps({"tool": call.name, "arguments": call.input}, ensure_ascii=False)


def _result_text(result: ToolResultBlock, names: dict[str, str]) -> str:
    label = names.get(result.tool_use_id, "tool")
    status = "error" if result.is_error else "ok"
    return f"Tool result ({label}, {status}):\n{result.text}"


def _render(message: Message, names: dict[str, str]) -> Message:
    if isinstance(message, AssistantMessage):
        if not message.tool_calls:
            return message
        parts: list[ContentBlock] = []
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                names[block.id] = block.name
                parts.append(TextBlock(text=_call_text(block)))
            else:
                parts.append(block)
        return message.model_copy(update={"content": parts})
    if isinstance(message.content, str) or not message.tool_results:
        return message
    blocks: list[ContentBlock] = [
        TextBlock(text=_result_text(b, names)) if isinstance(b, ToolResultBlock) else b
        for b in message.content
    ]
    return UserMessage(content=blocks)


def text_mode_request(request: LLMRequest) -> LLMRequest:
    """``request`` for a model without native tools: tools described in the system prompt, no
    ``tools`` field, and the history's tool calls and results written out as text."""
    if not request.tools:
        return request
    names: dict[str, str] = {}
    messages = [_render(m, names) for m in request.messages]
    section = describe_tools(request.tools)
    system = f"{request.system}\n\n{section}" if request.system else section
    return request.model_copy(
        update={"messages": messages, "system": system, "tools": [], "tool_choice": None}
    )
