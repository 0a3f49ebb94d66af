"""The shape a constrained text-mode reply takes, and how a request teaches it and a reply is read.

On a server that constrains decoding to a JSON Schema (``ConstrainedCalls``), every text-mode reply
is one JSON object of one of two forms, and nothing else can be decoded:

* ``{"tool_calls": [{"name": "read_file", "arguments": {...}}, ...]}``: one to ``MAX_CALLS`` calls,
  each name one of the offered tools (an ``enum``) with arguments per that tool's own schema;
* ``{"answer": "..."}``: the final answer, in plain text.

The system prompt teaches this form instead of ``<tool_call>`` tags, and the history shows the
model its earlier replies in it (a model copies the form it sees). The text-mode reader reads the
calls as written (``{"tool_calls": [...]}`` is one of the forms it knows); ``answer_of`` gives the
answer's text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agcore.agent.textcalls._text_tools import _CONTINUE as TAGS_CONTINUE
from agcore.agent.textcalls._text_tools import _PROTOCOL as TAGS_PROTOCOL
from agcore.llm.types import (
    AssistantMessage,
    ContentBlock,
    LLMRequest,
    Message,
    ResponseFormat,
    TextBlock,
    ToolDefinition,
    UserMessage,
)

__all__ = [
    "ANSWER_OPENING", "MAX_CALLS", "REPLY_FORMAT", "answer_format", "answer_of", "calls_format",
    "decoded_prefix", "is_constrained", "reply_format", "shaped_request",
]

#: ``ResponseFormat.name`` of the reply shape (how the steps after ``shape_request`` know the call).
REPLY_FORMAT = "agcore_tool_calls_or_answer"
#: The most calls one reply may hold: a bound on the runaway repetition a small model falls into.
MAX_CALLS = 5

_PROTOCOL = """\
# Tools
You can use the tools listed below. Every reply you write is exactly one JSON object, in one of \
two forms:
- to use tools: {"tool_calls": [{"name": "<tool name>", "arguments": {"<argument name>": \
"<argument value>"}}]} with one or more calls, each with the name of one tool from the list below \
in place of <tool name> and the arguments its schema asks for;
- to give your final answer, when no tool is needed any more: {"answer": "<your answer to the \
user, in plain text>"}.
The system runs the tools and sends their results back to you in the next message, each inside \
<tool_response> tags. Never write a result yourself.
Work in small steps. Before you write or change a file, first use tools to look at what you need \
(read the file, list the directory, run the command) and wait for their results: never guess \
contents, counts or outputs.

Available tools:
"""
# After tool results: the text-mode reminder restates the task ("Continue with the task: ...") and
# asks for the next call, "for example, writing the file the task asks for", and for a "plain text"
# answer, which a constrained model cannot write: a 1.5B model wrote the same finished write_file
# until the repetition guard stopped the turn. Here the finished case comes first, in the reply shape,
# and a call that succeeded is not to be repeated.
_CONTINUE = (
    'If the task is now done, reply {"answer": "<what you did, in one or two sentences>"}; do not '
    "repeat a call that already succeeded. Otherwise write the tool call for the part of the task "
    "still to do."
)
#: The reminder in the constrained shape, for telling an echo of it from an answer.
CONSTRAINED_REMINDER = _CONTINUE
_CALL_TEXT = re.compile(r"<tool_call>\n(.*?)\n</tool_call>", re.DOTALL)
#: How an answer reply opens, up to the first character of the answer's text.
ANSWER_OPENING = re.compile(r'\s*\{\s*"answer"\s*:\s*"')


def decoded_prefix(body: str) -> str:
    """The JSON string body ``body`` (after its opening quote) decoded up to its closing quote, or,
    while it is still coming (or was cut off), up to its last complete character."""
    end = 0
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == '"':
            break
        if ch == "\\":
            width = 6 if body[i + 1 : i + 2] == "u" else 2
            if i + width > len(body):
                break
            i += width
        else:
            i += 1
        end = i
    try:
        decoded: str = json.loads(f'"{body[:end]}"')
    except ValueError:  # a surrogate pair cut in two: wait for its second half
        decoded = json.loads(f'"{body[: max(0, end - 6)]}"') if end >= 6 else ""
    return decoded


def _arguments_schema(tool: ToolDefinition) -> dict[str, Any]:
    # A reference ("$ref": "#/$defs/...") points at the root of the tool's schema, which is not the
    # root here: such a schema constrains only to an object, and the tool's own validation does the rest.
    text = json.dumps(tool.input_schema)
    if '"$ref"' in text or tool.input_schema.get("type") != "object":
        return {"type": "object"}
    return {k: v for k, v in tool.input_schema.items() if k not in ("title", "$schema", "description")}


def reply_format(tools: list[ToolDefinition]) -> ResponseFormat:
    """The JSON Schema of a reply: calls to ``tools`` (each name with its own arguments) or an answer."""
    schema = {"anyOf": [_calls_schema(tools), _ANSWER_SCHEMA]}
    return ResponseFormat(name=REPLY_FORMAT, description="tool calls or the final answer", json_schema=schema)


def calls_format(tools: list[ToolDefinition]) -> ResponseFormat:
    """The reply shape with only its calls form left, to ``tools`` alone: a reply that must call one
    of them (read back by ``answer_of`` and the call reader as any constrained reply)."""
    return ResponseFormat(name=REPLY_FORMAT, description="tool calls", json_schema=_calls_schema(tools))


def _calls_schema(tools: list[ToolDefinition]) -> dict[str, Any]:
    calls = [
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": [tool.name]},
                "arguments": _arguments_schema(tool),
            },
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for tool in tools
    ]
    return {
        "type": "object",
        "properties": {"tool_calls": {"type": "array", "items": {"anyOf": calls}, "minItems": 1,
                                      "maxItems": MAX_CALLS}},
        "required": ["tool_calls"],
        "additionalProperties": False,
    }


_ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}


def answer_format() -> ResponseFormat:
    """The reply shape with only its answer form left: a reply that must be the final answer (read
    back by ``answer_of`` as any constrained reply)."""
    return ResponseFormat(name=REPLY_FORMAT, description="the final answer", json_schema=_ANSWER_SCHEMA)


def is_constrained(request: LLMRequest) -> bool:
    """Whether ``request`` asks for the reply shape."""
    return request.response_format is not None and request.response_format.name == REPLY_FORMAT


def _reshaped(message: Message) -> Message:
    """An assistant reply as the model would have written it in the constrained form."""
    if not isinstance(message, AssistantMessage):
        return message
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    bodies = _CALL_TEXT.findall(text)
    calls: list[Any] = []
    for body in bodies:
        try:
            calls.append(json.loads(body))
        except ValueError:  # not one text mode wrote: leave the reply as it is
            return message
    shaped = {"tool_calls": calls} if calls else {"answer": text.strip()}
    others: list[ContentBlock] = [b for b in message.content if not isinstance(b, TextBlock)]
    text = json.dumps(shaped, ensure_ascii=False)
    return message.model_copy(update={"content": [*others, TextBlock(text=text)]})


def _reworded(text: str) -> TextBlock:
    return TextBlock(text=text.replace(TAGS_CONTINUE, _CONTINUE))


def _reminded(message: Message) -> Message:
    if not isinstance(message, UserMessage) or isinstance(message.content, str):
        return message
    blocks = [_reworded(b.text) if isinstance(b, TextBlock) else b for b in message.content]
    return message.model_copy(update={"content": blocks})


def shaped_request(request: LLMRequest) -> LLMRequest:
    """A text-mode request (``text_mode_request``'s) that teaches the reply shape: the protocol in the
    system prompt, the model's earlier replies in that shape, and the reminder after tool results
    asking for an answer in it once the task is done."""
    system = request.system.replace(TAGS_PROTOCOL, _PROTOCOL) if request.system else request.system
    messages = [_reshaped(m) for m in request.messages]
    if messages:
        messages[-1] = _reminded(messages[-1])
    return request.model_copy(update={"system": system, "messages": messages})


def answer_of(text: str) -> str | None:
    """The answer's text when ``text`` is an ``{"answer": ...}`` reply (also one cut off by the
    reply's token cap: the answer as far as it came); None otherwise."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        opening = ANSWER_OPENING.match(stripped)
        return decoded_prefix(stripped[opening.end() :]) if opening else None
    if isinstance(value, dict) and set(value) == {"answer"} and isinstance(value["answer"], str):
        return value["answer"]
    return None
