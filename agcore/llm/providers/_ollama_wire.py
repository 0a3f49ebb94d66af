"""Conversion between agcore messages and Ollama's native ``/api/chat`` JSON (request body, reply,
NDJSON stream lines). No I/O here: ``ollama.py`` does the HTTP.

Wire quirks handled:

* Ollama has no ``tool_choice``. ``"none"`` sends no tools; ``"any"`` and a named tool send the
  tools as usual (the model may still answer in text).
* Tool calls carry no id on older servers and tool results are matched by tool *name*: missing ids
  are generated (``call_<24 hex>``) and a result goes out with the ``tool_name`` of its call.
* Images go inline as base64; an image given by URL cannot be sent and becomes a ``[image: <url>]``
  text note. A tool result has no error flag, so an error result is prefixed ``Error: ``.
* Tool-call arguments arrive as an object, or as a string from some models (repaired if broken).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from agcore.llm._arguments import parse_tool_arguments
from agcore.llm._identifiers import new_call_id
from agcore.llm.events import (
    StreamEvent,
    TextDelta,
    TextEnd,
    TextStart,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from agcore.llm.providers._openai_wire import refuse_builtin_tools
from agcore.llm.types import (
    AssistantMessage,
    ContentBlock,
    ImageBlock,
    LLMRequest,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)

__all__ = [
    "DEFAULT_HOST",
    "PROVIDER",
    "StreamBlocks",
    "build_body",
    "build_messages",
    "parse_reply",
    "resolve_ollama_host",
    "same_model",
]

PROVIDER = "ollama"
DEFAULT_HOST = "http://localhost:11434"
_DEFAULT_PORT = 11434


def resolve_ollama_host(host: str | None = None) -> str:
    """The base URL: ``host``, else ``OLLAMA_HOST``, else ``http://localhost:11434``.

    ``OLLAMA_HOST`` is often written the way the server binds it (``127.0.0.1:11434``,
    ``0.0.0.0``): without a scheme ``http://`` is assumed, and without a port Ollama's 11434.
    """
    raw = (host or os.environ.get("OLLAMA_HOST") or "").strip()
    if not raw:
        return DEFAULT_HOST
    if "://" not in raw:
        parts = urlsplit(f"http://{raw}")
        netloc = parts.netloc if parts.port is not None else f"{parts.netloc}:{_DEFAULT_PORT}"
        raw = f"http://{netloc}{parts.path}"
    return raw.rstrip("/")


def _with_tag(name: str) -> str:
    # Only the last path segment can hold the tag: "host:5000/library/llama3" has no tag.
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def same_model(a: str, b: str) -> bool:
    """``llama3.2`` names the same model as ``llama3.2:latest``."""
    return bool(a) and bool(b) and _with_tag(a) == _with_tag(b)


# ------------------------------------------------------------------ request


def _media(blocks: list[ContentBlock]) -> tuple[list[str], list[str]]:
    """Texts and base64 images of ``blocks``; a URL image becomes a note (Ollama takes only data)."""
    texts: list[str] = []
    images: list[str] = []
    for block in blocks:
        if isinstance(block, TextBlock) and block.text:
            texts.append(block.text)
        elif isinstance(block, ImageBlock):
            if block.data is not None:
                images.append(block.data)
            else:
                texts.append(f"[image: {block.url}]")
    return texts, images


def _tool_message(result: ToolResultBlock, tool_names: Mapping[str, str]) -> dict[str, Any]:
    blocks: list[ContentBlock] = (
        [TextBlock(text=result.content)] if isinstance(result.content, str) else list(result.content)
    )
    texts, images = _media(blocks)
    content = "\n".join(texts)
    if result.is_error:
        content = f"Error: {content}"
    entry: dict[str, Any] = {"role": "tool", "content": content}
    if images:
        entry["images"] = images
    if (name := tool_names.get(result.tool_use_id)) is not None:
        entry["tool_name"] = name
    return entry


def _user_messages(message: UserMessage, tool_names: Mapping[str, str]) -> list[dict[str, Any]]:
    # Tool results first: chat templates expect them right after the assistant's calls.
    out = [_tool_message(r, tool_names) for r in message.tool_results]
    texts, images = _media(message.blocks)
    if texts or images:
        entry: dict[str, Any] = {"role": "user", "content": "\n".join(texts)}
        if images:
            entry["images"] = images
        out.append(entry)
    return out


def _assistant_message(message: AssistantMessage) -> dict[str, Any] | None:
    # Thinking is dropped: only its own vendor may replay reasoning (cross-provider policy).
    text = "\n".join(b.text for b in message.content if isinstance(b, TextBlock) and b.text)
    calls = [{"function": {"name": c.name, "arguments": c.input}} for c in message.tool_calls]
    if not text and not calls:
        return None
    entry: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        entry["tool_calls"] = calls
    return entry


def build_messages(request: LLMRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    tool_names: dict[str, str] = {}
    for message in request.messages:
        if isinstance(message, AssistantMessage):
            tool_names.update((c.id, c.name) for c in message.tool_calls)
            if (entry := _assistant_message(message)) is not None:
                out.append(entry)
        else:
            out.extend(_user_messages(message, tool_names))
    return out


def build_body(
    request: LLMRequest, *, model: str, stream: bool, keep_alive: str | None, think: bool | str | None
) -> dict[str, Any]:
    """The JSON body POSTed to ``/api/chat``. ``request.extra`` is merged last, at the top level,
    except that an ``options`` dict in it merges into the model options."""
    body: dict[str, Any] = {"model": model, "messages": build_messages(request), "stream": stream}
    choice = request.tool_choice
    if request.tools and not (choice is not None and choice.mode == "none"):
        refuse_builtin_tools(request.tools, provider=PROVIDER, model=model)
        body["tools"] = [
            {"type": "function",
             "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
            for t in request.tools
        ]
    options: dict[str, Any] = {}
    if request.temperature is not None:
        options["temperature"] = request.temperature
    if request.max_tokens is not None:
        options["num_predict"] = request.max_tokens
    if request.stop_sequences:
        options["stop"] = list(request.stop_sequences)
    extra = dict(request.extra)
    if isinstance(extra.get("options"), Mapping):
        options.update(extra.pop("options"))
    if options:
        body["options"] = options
    if keep_alive is not None:
        body["keep_alive"] = keep_alive
    if think is not None:
        body["think"] = think
    if request.response_format is not None:  # Ollama's structured outputs: the schema as `format`
        body["format"] = request.response_format.json_schema
    body.update(extra)
    return body


# ------------------------------------------------------------------ reply


def _tool_use(call: Mapping[str, Any]) -> tuple[ToolUseBlock, str]:
    """The block for one wire tool call, and its arguments as JSON text (for the stream delta)."""
    function = call.get("function") or {}
    raw = function.get("arguments")
    if not isinstance(raw, str | Mapping | None):
        raw = json.dumps(raw)  # a list or scalar: parse_tool_arguments reports it is not an object
    arguments, error = parse_tool_arguments(raw)
    block = ToolUseBlock(
        id=str(call.get("id") or new_call_id()),
        name=str(function.get("name") or ""),
        input=arguments,
        parse_error=error,
    )
    return block, raw if isinstance(raw, str) else json.dumps(dict(raw or {}))


def _stop_reason(done_reason: object, has_tool_calls: bool) -> StopReason:
    if has_tool_calls:
        return StopReason.TOOL_USE
    if done_reason == "length":
        return StopReason.MAX_TOKENS
    return StopReason.END_TURN


def _usage(data: Mapping[str, Any]) -> Usage:
    return Usage(input_tokens=int(data.get("prompt_eval_count") or 0),
                 output_tokens=int(data.get("eval_count") or 0))


def parse_reply(data: Mapping[str, Any], *, model: str) -> AssistantMessage:
    """A non-streaming reply: thinking first, then the text, then the tool calls."""
    message = data.get("message") or {}
    blocks: list[ContentBlock] = []
    if thinking := message.get("thinking"):
        blocks.append(ThinkingBlock(thinking=thinking, provider=PROVIDER))
    if content := message.get("content"):
        blocks.append(TextBlock(text=content))
    calls = [_tool_use(call)[0] for call in message.get("tool_calls") or ()]
    return AssistantMessage(
        content=[*blocks, *calls],
        stop_reason=_stop_reason(data.get("done_reason"), bool(calls)),
        model=model,
        provider=PROVIDER,
        usage=_usage(data),
    )


class StreamBlocks:
    """Turns NDJSON lines into block events, indexed in order of first appearance.

    Ollama sends thinking, then content, then whole tool calls, so this gives the blocks
    ``parse_reply`` gives for the same reply. A kind that comes back after another one started
    opens a new block rather than reaching back past it, so Start/Delta/End order always holds.
    """

    def __init__(self) -> None:
        self.done = False
        self.stop_reason: StopReason | None = None
        self._next_index = 0
        self._has_tool_calls = False
        self._kind: Literal["thinking", "text"] | None = None
        self._index = 0
        self._parts: list[str] = []

    def feed(self, data: Mapping[str, Any]) -> Iterator[StreamEvent]:
        """Events for one line; after the ``done`` line, ``done`` and ``stop_reason`` are set."""
        message = data.get("message") or {}
        if thinking := message.get("thinking"):
            yield from self._fragment("thinking", thinking)
        if content := message.get("content"):
            yield from self._fragment("text", content)
        for call in message.get("tool_calls") or ():
            yield from self._tool_call(call)
        if data.get("done"):
            yield from self._close()
            yield UsageEvent(usage=_usage(data))
            self.stop_reason = _stop_reason(data.get("done_reason"), self._has_tool_calls)
            self.done = True

    def _fragment(self, kind: Literal["thinking", "text"], text: str) -> Iterator[StreamEvent]:
        if self._kind != kind:
            yield from self._close()
            self._kind, self._index, self._parts = kind, self._take_index(), []
            yield ThinkingStart(index=self._index) if kind == "thinking" else TextStart(index=self._index)
        self._parts.append(text)
        if kind == "thinking":
            yield ThinkingDelta(index=self._index, thinking=text)
        else:
            yield TextDelta(index=self._index, text=text)

    def _tool_call(self, call: Mapping[str, Any]) -> Iterator[StreamEvent]:
        yield from self._close()
        block, arguments = _tool_use(call)
        index = self._take_index()
        self._has_tool_calls = True
        yield ToolCallStart(index=index, id=block.id, name=block.name)
        yield ToolCallDelta(index=index, arguments=arguments)
        yield ToolCallEnd(index=index, tool_call=block)

    def _close(self) -> Iterator[StreamEvent]:
        text = "".join(self._parts)
        if self._kind == "thinking":
            yield ThinkingEnd(index=self._index, block=ThinkingBlock(thinking=text, provider=PROVIDER))
        elif self._kind == "text":
            yield TextEnd(index=self._index, text=text)
        self._kind, self._parts = None, []

    def _take_index(self) -> int:
        self._next_index += 1
        return self._next_index - 1
