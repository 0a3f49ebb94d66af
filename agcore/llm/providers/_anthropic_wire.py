"""Anthropic Messages API wire format: agcore requests to request bodies, responses back to messages.

Pure functions over plain dicts and the SDK's response models, kept apart from the provider so the
conversion can be read (and tested) without the HTTP machinery around it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agcore.llm._arguments import parse_tool_arguments
from agcore.llm._identifiers import fit_identifier
from agcore.llm.types import (
    AssistantMessage,
    ContentBlock,
    ImageBlock,
    LLMRequest,
    Message,
    ProviderBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolChoice,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)

__all__ = [
    "PROVIDER",
    "build_params",
    "error_detail",
    "message_from_json",
    "request_headers",
    "sanitize_tool_id",
    "status_for_error_type",
    "stop_reason_from",
    "tool_use_block",
    "usage_from",
]

PROVIDER = "anthropic"


def _ephemeral() -> dict[str, str]:
    # A fresh dict per breakpoint, so no two request bodies share (and could alter) one.
    return {"type": "ephemeral"}


# ---------------------------------------------------------------------------------------- tool ids

_INVALID_TOOL_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def sanitize_tool_id(tool_id: str) -> str:
    """An id Anthropic accepts (``^[a-zA-Z0-9_-]{1,64}$``) for one another vendor wrote.

    Valid ids pass unchanged. Others are cleaned and get a hash of the original, so two ids that
    clean to the same text stay distinct and the tool_use and its tool_result still agree.
    """
    return fit_identifier(tool_id, max_length=64, invalid=_INVALID_TOOL_ID_CHARS, empty_prefix="toolu")


# ---------------------------------------------------------------------------------------- requests


def _image(block: ImageBlock) -> dict[str, Any]:
    if block.data is not None:
        source: dict[str, Any] = {"type": "base64", "media_type": block.media_type, "data": block.data}
    else:
        source = {"type": "url", "url": block.url}
    return {"type": "image", "source": source}


def _tool_result(block: ToolResultBlock) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": sanitize_tool_id(block.tool_use_id)}
    content = block.content
    if isinstance(content, str):
        if content:
            out["content"] = content
    else:
        parts = [
            {"type": "text", "text": part.text} if isinstance(part, TextBlock) else _image(part)
            for part in content
            if not (isinstance(part, TextBlock) and not part.text)
        ]
        if parts:
            out["content"] = parts
    if block.is_error:
        out["is_error"] = True
    return out


def _block(block: ContentBlock) -> dict[str, Any] | None:
    """The wire block, or None for what this request must not carry."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text} if block.text else None
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": sanitize_tool_id(block.id), "name": block.name,
                "input": block.input}
    if isinstance(block, ToolResultBlock):
        return _tool_result(block)
    if isinstance(block, ImageBlock):
        return _image(block)
    if isinstance(block, ProviderBlock):
        # Server-tool blocks go back exactly as the API sent them (a copy: caching marks it);
        # another vendor's opaque blocks mean nothing here.
        return dict(block.data) if block.provider == PROVIDER else None
    # Thinking: a signature only verifies at the vendor that made it, so other vendors' (and
    # unsigned) reasoning is dropped rather than sent to be rejected.
    if block.provider != PROVIDER:
        return None
    if block.redacted_data is not None:
        return {"type": "redacted_thinking", "data": block.redacted_data}
    if block.signature:
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    return None


def _message(message: Message) -> dict[str, Any] | None:
    if isinstance(message, UserMessage):
        if isinstance(message.content, str):
            blocks = [{"type": "text", "text": message.content}] if message.content else []
        else:
            converted = [b for b in map(_block, message.content) if b is not None]
            # The API requires a user turn's tool results to come before anything else in it.
            blocks = [b for b in converted if b["type"] == "tool_result"]
            blocks += [b for b in converted if b["type"] != "tool_result"]
    else:
        blocks = [b for b in map(_block, message.content) if b is not None]
    if not blocks:
        return None  # the API rejects empty turns; e.g. a reply that was only foreign reasoning
    return {"role": message.role, "content": blocks}


def _mark_last_cacheable(messages: list[dict[str, Any]]) -> None:
    if not messages:
        return
    for block in reversed(messages[-1]["content"]):
        # Thinking blocks cannot carry a cache breakpoint themselves.
        if block["type"] not in ("thinking", "redacted_thinking"):
            block["cache_control"] = _ephemeral()
            return


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    if tool.builtin_type is not None:
        # A built-in tool is named by its type; the API knows its schema.
        return {**tool.builtin_options, "type": tool.builtin_type, "name": tool.name}
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = tool.input_schema
    return out


def _tool_choice(choice: ToolChoice) -> dict[str, Any]:
    if choice.mode == "tool":
        return {"type": "tool", "name": choice.name}
    return {"type": choice.mode}


_BETA = "anthropic-beta"


def request_headers(provider_headers: Mapping[str, str], request: Mapping[str, str]) -> dict[str, str]:
    """The extra HTTP headers of one call: the provider's, then the request's (names compared
    case-insensitively; the request's value wins), except ``anthropic-beta``, a comma-separated
    list the API reads as one: the request's betas are added to the provider's."""
    merged: dict[str, str] = {}
    betas: list[str] = []
    for headers in (provider_headers, request):
        for name, value in headers.items():
            if name.lower() == _BETA:
                betas += [b.strip() for b in value.split(",") if b.strip() and b.strip() not in betas]
            else:
                merged = {k: v for k, v in merged.items() if k.lower() != name.lower()}
                merged[name] = value
    if betas:
        merged[_BETA] = ",".join(betas)
    return merged


def build_params(
    request: LLMRequest, *, model: str, max_tokens: int, prompt_caching: bool,
    headers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Keyword arguments for ``messages.create``; anything unset is left out, never sent as null.

    With ``prompt_caching`` three breakpoints (of the API's four) go on the system prompt, the last
    tool and the last message, so the whole stable prefix is cached turn after turn. ``headers``
    are the provider's extra HTTP headers, merged with the request's (``request_headers``).
    """
    messages = [m for m in map(_message, request.messages) if m is not None]
    params: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
    if request.system:
        if prompt_caching:
            params["system"] = [{"type": "text", "text": request.system, "cache_control": _ephemeral()}]
        else:
            params["system"] = request.system
    if request.tools:
        tools = [_tool(t) for t in request.tools]
        if prompt_caching:
            tools[-1]["cache_control"] = _ephemeral()
        params["tools"] = tools
    if request.tool_choice is not None:
        params["tool_choice"] = _tool_choice(request.tool_choice)
    if request.stop_sequences:
        params["stop_sequences"] = list(request.stop_sequences)
    if prompt_caching:
        _mark_last_cacheable(messages)
    # The SDK has no `temperature` argument; it goes in the body, where `extra` may still override it.
    body: dict[str, Any] = {}
    if request.temperature is not None:
        body["temperature"] = request.temperature
    body.update(request.extra)
    if request.response_format is not None:  # structured outputs, beside any output_config in extra
        config = body.get("output_config")
        body["output_config"] = {
            **(config if isinstance(config, dict) else {}),
            "format": {"type": "json_schema", "schema": request.response_format.json_schema},
        }
    if body:
        params["extra_body"] = body
    if extra_headers := request_headers(headers or {}, request.headers):
        params["extra_headers"] = extra_headers
    return params


# ---------------------------------------------------------------------------------------- responses

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "stop_sequence": StopReason.STOP_SEQUENCE,
    "refusal": StopReason.REFUSAL,
    "pause_turn": StopReason.PAUSE,
    "model_context_window_exceeded": StopReason.MAX_TOKENS,
}


def stop_reason_from(reason: str | None) -> StopReason:
    """agcore's reason for Anthropic's; an unknown (newer) one reads as a normal end of turn."""
    return _STOP_REASONS.get(reason or "", StopReason.END_TURN)


def usage_from(usage: Mapping[str, Any] | None) -> Usage:
    """From a ``usage`` object: Anthropic already excludes cache tokens from ``input_tokens``, which
    is agcore's meaning too. Absent and null counts read as 0."""
    if not usage:
        return Usage()
    return Usage(
        input_tokens=usage.get("input_tokens") or 0,
        output_tokens=usage.get("output_tokens") or 0,
        cache_read_tokens=usage.get("cache_read_input_tokens") or 0,
        cache_write_tokens=usage.get("cache_creation_input_tokens") or 0,
    )


def tool_use_block(block: Mapping[str, Any], arguments: str | None = None) -> ToolUseBlock:
    """A ``tool_use`` block; ``arguments`` is the JSON streamed for it, if it was streamed."""
    raw = arguments if arguments else block.get("input")
    parsed, parse_error = parse_tool_arguments(raw)
    return ToolUseBlock(id=block["id"], name=block["name"], input=parsed, parse_error=parse_error)


def message_from_json(data: Mapping[str, Any], *, model: str) -> AssistantMessage:
    """An ``AssistantMessage`` from a Messages API response body. Blocks agcore has no type for
    (server-side tools: ``server_tool_use``, ``web_search_tool_result``, code execution results...)
    are kept whole as ``ProviderBlock``s, so the history replays to Anthropic as it was."""
    content: list[ContentBlock] = []
    for block in data["content"]:
        kind = block["type"]
        if kind == "text":
            content.append(TextBlock(text=block["text"]))
        elif kind == "tool_use":
            content.append(tool_use_block(block))
        elif kind == "thinking":
            content.append(ThinkingBlock(thinking=block["thinking"], signature=block.get("signature") or None,
                                         provider=PROVIDER))
        elif kind == "redacted_thinking":
            content.append(ThinkingBlock(redacted_data=block["data"], provider=PROVIDER))
        else:
            content.append(ProviderBlock(provider=PROVIDER, data=dict(block)))
    return AssistantMessage(
        content=content,
        stop_reason=stop_reason_from(data.get("stop_reason")),
        model=model,
        provider=PROVIDER,
        usage=usage_from(data.get("usage")),
    )


# ---------------------------------------------------------------------------------------- errors

# The HTTP status each of Anthropic's error types stands for: an `error` event inside a stream
# arrives on a 200 response, so its type is all there is to classify it by.
_STATUS_BY_ERROR_TYPE: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def status_for_error_type(error_type: str | None) -> int:
    return _STATUS_BY_ERROR_TYPE.get(error_type or "", 500)


def error_detail(body: object) -> tuple[str | None, str | None]:
    """``(error.type, error.message)`` from an Anthropic error body (``{"type": "error", "error":
    {...}}``), or from the inner error object alone (the SDK hands that over as ``APIStatusError.body``)."""
    if not isinstance(body, Mapping):
        return None, None
    error = body.get("error")
    if not isinstance(error, Mapping):
        if not ("type" in body and "message" in body):
            return None, None
        error = body
    kind, message = error.get("type"), error.get("message")
    return (kind if isinstance(kind, str) else None,
            message if isinstance(message, str) else None)
