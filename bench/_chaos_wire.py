"""The wire side of ``chaos_vendor``: replies in the Anthropic Messages, OpenAI Chat Completions and
Ollama ``/api/chat`` formats (JSON bodies and stream frames), the faults applied to them, and the
checks a real endpoint makes on the history it is sent.

Standard library only, like ``fake_vendor``. A stream is a list of ``Frame``s, each tagged with what
it carries (``start``, ``text``, ``tool``, ``stop``, ...), so a fault can be placed by meaning: cut
after the first tool-call delta, an error event before any output, every structural event twice.
"""

from __future__ import annotations

import email.utils
import json
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BAD_ARGUMENTS",
    "Call",
    "Frame",
    "Reply",
    "error_body",
    "error_frame",
    "history_problem",
    "json_body",
    "retry_after_headers",
    "stream_frames",
]

#: Tool-call arguments a model may write that are no JSON object: (as JSON text, as a decoded value).
BAD_ARGUMENTS: dict[str, tuple[str, Any]] = {
    "broken": ("city=Paris&unit=", "city=Paris&unit="),
    "array": ('["Paris", "celsius"]', ["Paris", "celsius"]),
    "number": ("42", 42),
    "string": ('"Paris"', '"Paris"'),
}

_STREAM_PIECE = 32 * 1024  # text delta size for multi-megabyte replies


@dataclass
class Call:
    """One tool call of a reply: ``arguments`` as the model wrote them (JSON text) and ``value`` as a
    vendor that decodes them sends them."""

    id: str
    name: str
    arguments: str
    value: Any


@dataclass
class Reply:
    """What the scripted model answers, before any fault is applied."""

    model: str
    text: str
    calls: list[Call] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    #: Cut at the output token limit (``max_tokens``/``length``) while writing its last tool call.
    cut: bool = False


@dataclass
class Frame:
    """One stream event (SSE event or NDJSON line) as bytes, and what it carries: ``start``,
    ``block`` (a block opens), ``text`` (a text delta), ``tool`` (a tool-call delta), ``close``
    (a block closes), ``stop`` (stop reason and usage), ``usage``, ``end`` (the end marker), ``ping``."""

    kind: str
    data: bytes


# ------------------------------------------------------------------------------------------ JSON


def _dumps(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def json_body(vendor: str, reply: Reply) -> bytes:
    """The non-streaming response body."""
    if vendor == "anthropic":
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
        content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.value} for c in reply.calls]
        return _dumps(
            {
                "id": "msg_01" + reply.model[:4],
                "type": "message",
                "role": "assistant",
                "model": reply.model,
                "content": content,
                "stop_reason": _anthropic_stop(reply),
                "stop_sequence": None,
                "usage": _anthropic_usage(reply, reply.output_tokens),
            }
        )
    if vendor == "openai":
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": None}
        if reply.calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in reply.calls
            ]
        return _dumps(
            {
                "id": "chatcmpl-chaos",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": reply.model,
                "usage": _openai_usage(reply),
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "logprobs": None,
                        "finish_reason": _openai_finish(reply),
                    }
                ],
            }
        )
    message = {"role": "assistant", "content": reply.text}
    if reply.calls:
        message["tool_calls"] = [{"function": {"name": c.name, "arguments": c.value}} for c in reply.calls]
    return _dumps(_ollama_line(reply, message, done=True))


def _anthropic_stop(reply: Reply) -> str:
    return "max_tokens" if reply.cut else "tool_use" if reply.calls else "end_turn"


def _openai_finish(reply: Reply) -> str:
    return "length" if reply.cut else "tool_calls" if reply.calls else "stop"


def _anthropic_usage(reply: Reply, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": reply.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }


def _openai_usage(reply: Reply) -> dict[str, Any]:
    return {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }


def _ollama_line(reply: Reply, message: dict[str, Any], *, done: bool) -> dict[str, Any]:
    line: dict[str, Any] = {
        "model": reply.model,
        "created_at": "2026-01-01T00:00:00Z",
        "message": message,
        "done": done,
    }
    if done:
        line.update(done_reason="stop", prompt_eval_count=reply.input_tokens, eval_count=reply.output_tokens)
    return line


def _pieces(text: str) -> list[str]:
    """Text as a model streams it: a few words per delta, or 32 KB pieces for a huge reply."""
    if len(text) > 4 * _STREAM_PIECE:
        return [text[i : i + _STREAM_PIECE] for i in range(0, len(text), _STREAM_PIECE)]
    words = text.split(" ")
    return [" ".join(words[i : i + 3]) + (" " if i + 3 < len(words) else "") for i in range(0, len(words), 3)]


def _halves(text: str) -> list[str]:
    middle = len(text) // 2
    return [part for part in (text[:middle], text[middle:]) if part]


# ------------------------------------------------------------------------------------- streams


def stream_frames(vendor: str, reply: Reply) -> list[Frame]:
    """The reply as the vendor streams it, every frame tagged."""
    if vendor == "anthropic":
        return _anthropic_frames(reply)
    if vendor == "openai":
        return _openai_frames(reply)
    return _ollama_frames(reply)


def _sse(name: str, payload: Any) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + _dumps(payload) + b"\n\n"


def _anthropic_frames(reply: Reply) -> list[Frame]:
    start = {
        "id": "msg_01chaos",
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _anthropic_usage(reply, 1),
    }
    frames = [
        Frame("start", _sse("message_start", {"type": "message_start", "message": start})),
        Frame("ping", _sse("ping", {"type": "ping"})),
    ]
    index = 0
    if reply.text:
        frames.append(
            Frame(
                "block",
                _sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
            )
        )
        frames += [
            Frame(
                "text",
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                ),
            )
            for piece in _pieces(reply.text)
        ]
        frames.append(Frame("close", _sse("content_block_stop", {"type": "content_block_stop", "index": 0})))
        index = 1
    for call in reply.calls:
        frames.append(
            Frame(
                "block",
                _sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
                    },
                ),
            )
        )
        frames += [
            Frame(
                "tool",
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                ),
            )
            for piece in _halves(call.arguments)
        ]
        frames.append(
            Frame("close", _sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        )
        index += 1
    frames.append(
        Frame(
            "stop",
            _sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "usage": {"output_tokens": reply.output_tokens},
                    "delta": {
                        "stop_reason": _anthropic_stop(reply),
                        "stop_sequence": None,
                    },
                },
            ),
        )
    )
    frames.append(Frame("end", _sse("message_stop", {"type": "message_stop"})))
    return frames


def _openai_frames(reply: Reply) -> list[Frame]:
    def chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None) -> bytes:
        choices = (
            [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        )
        return (
            b"data: "
            + _dumps(
                {
                    "id": "chatcmpl-chaos",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": reply.model,
                    "choices": choices,
                    "usage": usage,
                }
            )
            + b"\n\n"
        )

    frames = [Frame("start", chunk({"role": "assistant", "content": "", "refusal": None}))]
    frames += (
        [Frame("text", chunk({"content": piece})) for piece in _pieces(reply.text)] if reply.text else []
    )
    for position, call in enumerate(reply.calls):
        frames.append(
            Frame(
                "block",
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": position,
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": ""},
                            }
                        ]
                    }
                ),
            )
        )
        frames += [
            Frame("tool", chunk({"tool_calls": [{"index": position, "function": {"arguments": piece}}]}))
            for piece in _halves(call.arguments)
        ]
    frames.append(Frame("stop", chunk({}, _openai_finish(reply))))
    frames.append(Frame("usage", chunk(None, usage=_openai_usage(reply))))
    frames.append(Frame("end", b"data: [DONE]\n\n"))
    return frames


def _ollama_frames(reply: Reply) -> list[Frame]:
    def line(message: dict[str, Any], *, done: bool = False) -> bytes:
        return _dumps(_ollama_line(reply, {"role": "assistant", "content": "", **message}, done=done)) + b"\n"

    frames = [Frame("text", line({"content": piece})) for piece in _pieces(reply.text)] if reply.text else []
    frames += [
        Frame("tool", line({"tool_calls": [{"function": {"name": c.name, "arguments": c.value}}]}))
        for c in reply.calls
    ]
    frames.append(Frame("stop", line({}, done=True)))
    return frames


def error_frame(vendor: str, *, rate_limited: bool = False) -> bytes:
    """An error sent inside a 200 stream, as each vendor sends one: "overloaded", or with
    ``rate_limited`` a rate-limit error (Ollama has no such kind: it always says it is busy)."""
    if vendor == "anthropic":
        kind, message = (
            ("rate_limit_error", "Rate limited") if rate_limited else ("overloaded_error", "Overloaded")
        )
        return _sse("error", {"type": "error", "error": {"type": kind, "message": message}})
    if vendor == "openai":
        error = (
            {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}
            if rate_limited
            else {"message": "The server is overloaded", "type": "server_error", "code": "overloaded"}
        )
        return b"data: " + _dumps({"error": {**error, "param": None}}) + b"\n\n"
    return _dumps({"error": "server busy, please try again. maximum pending requests exceeded"}) + b"\n"


# --------------------------------------------------------------------------------------- errors


def error_body(vendor: str, status: int, model: str, message: str | None = None) -> bytes:
    """The vendor's error body for an HTTP failure (``message``: other words than the usual ones)."""
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    }
    message = message or {
        400: "messages.1.content: unexpected value",
        401: "invalid x-api-key",
        404: f"model: {model}",
        429: "Number of request tokens has exceeded your per-minute rate limit",
        529: "Overloaded",
    }.get(status, "Internal server error")
    if vendor == "anthropic":
        return _dumps(
            {"type": "error", "error": {"type": kinds.get(status, "api_error"), "message": message}}
        )
    if vendor == "openai":
        return _dumps(
            {
                "error": {
                    "message": message,
                    "type": kinds.get(status, "server_error"),
                    "param": None,
                    "code": None,
                }
            }
        )
    if status == 404:
        message = f'model "{model}" not found, try pulling it first'
    return _dumps({"error": message})


def retry_after_headers(fault: str) -> tuple[dict[str, str], float | None]:
    """The retry headers of a 429 fault, and the least wait (s) a client honouring them must take."""
    if fault == "429_seconds":
        return {"retry-after": "7"}, 7.0
    if fault == "429_ms":
        return {"retry-after-ms": "2500"}, 2.5
    if fault == "429_date":
        # One-second resolution: the wait read back lies between 4 and 5 s.
        return {"retry-after": email.utils.formatdate(time.time() + 5, usegmt=True)}, 3.9
    if fault == "429_too_long":
        return {"retry-after": "3600"}, 3600.0
    return {}, None


# ------------------------------------------------------------------------------------- history


def history_problem(vendor: str, body: dict[str, Any]) -> str | None:
    """What a real endpoint would reject in the request's history (tool calls and results that do
    not pair up, empty turns), or None."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    if vendor == "anthropic":
        return _anthropic_problem(messages)
    return _openai_problem(messages, by_id=vendor == "openai")


def _anthropic_problem(messages: list[dict[str, Any]]) -> str | None:
    if messages[0].get("role") != "user":
        return "messages: the first message must use the user role"
    ids = [
        b.get("id")
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]
    if len(ids) != len(set(ids)):
        return "messages: `tool_use` ids must be unique"
    for position, message in enumerate(messages):
        content = message.get("content")
        if not content:
            return f"messages.{position}: empty content"
        blocks = content if isinstance(content, list) else []
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        previous = messages[position - 1] if position else {}
        asked = (
            [
                b.get("id")
                for b in previous.get("content") or []
                if isinstance(b, dict) and b.get("type") == "tool_use"
            ]
            if previous.get("role") == "assistant"
            else []
        )
        if message.get("role") == "user" and sorted(results) != sorted(asked):
            return (
                f"messages.{position}: tool_result ids {results} do not answer the tool_use ids "
                f"{asked} of the previous message"
            )
        if (
            message.get("role") == "assistant"
            and position == len(messages) - 1
            and any(b.get("type") == "tool_use" for b in blocks)
        ):
            return f"messages.{position}: tool_use ids were found without tool_result blocks after them"
    return None


def _openai_problem(messages: list[dict[str, Any]], *, by_id: bool) -> str | None:
    waiting: list[str] = []
    for position, message in enumerate(messages):
        ids = [c.get("id") for c in message.get("tool_calls") or []]
        if by_id and len(ids) != len(set(ids)):
            return f"messages.{position}: duplicate tool call ids {ids}"
    for position, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            key = message.get("tool_call_id") if by_id else message.get("tool_name")
            if key not in waiting:
                return f"messages.{position}: a tool message answers no open tool call ({key!r})"
            waiting.remove(key)
            continue
        if waiting:
            return f"messages.{position}: tool calls {waiting} were not answered before this message"
        if role == "assistant":
            calls = message.get("tool_calls") or []
            waiting = [c.get("id") if by_id else (c.get("function") or {}).get("name") for c in calls]
            if not calls and not message.get("content"):
                return f"messages.{position}: an assistant message needs content or tool calls"
    if waiting:
        return f"tool calls {waiting} were not answered"
    return None
