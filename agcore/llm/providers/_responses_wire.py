"""OpenAI Responses API wire format: agcore requests to ``POST /responses`` bodies, response objects
back to agcore messages.

The API is used statelessly (``store: false``): every request carries the whole history as ``input``
items, and the model's reasoning travels with it as the reasoning items' ``encrypted_content``. A
reasoning item is kept in the assistant message as a ``ThinkingBlock`` tagged with the provider that
wrote it (``signature`` = the item's id, ``redacted_data`` = its encrypted content, ``thinking`` =
its summary) and replayed to that provider only: another vendor cannot decrypt it.

Shapes follow the ``openai`` SDK's ``types/responses`` (the API's generated spec); replies are read as
plain dicts, leniently, as the Chat Completions reader does, since compatible servers (vLLM, Ollama,
gateways) leave fields out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agcore.llm._arguments import parse_tool_arguments
from agcore.llm.errors import LLMError, ResponseFormatError
from agcore.llm.providers._openai_wire import (
    arguments_text,
    error_from_body,
    new_call_id,
    sanitize_tool_id,
)
from agcore.llm.types import (
    AssistantMessage,
    ContentBlock,
    ImageBlock,
    LLMRequest,
    ResponseFormat,
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
    "ENCRYPTED_REASONING",
    "block_from_item",
    "build_body",
    "failure_of",
    "is_refusal",
    "message_from_response",
    "stop_reason_of",
    "usage_of",
]

#: The ``include`` value that makes reasoning items carry their ``encrypted_content``.
ENCRYPTED_REASONING = "reasoning.encrypted_content"


# ----------------------------------------------------------------------------- request


def _image_part(block: ImageBlock) -> dict[str, Any]:
    url = block.url if block.url is not None else f"data:{block.media_type};base64,{block.data}"
    return {"type": "input_image", "image_url": url, "detail": "auto"}


def _tool_output(block: ToolResultBlock) -> str | list[dict[str, Any]]:
    if isinstance(block.content, str):
        return block.content
    if not any(isinstance(part, ImageBlock) for part in block.content):
        return block.text
    # A function_call_output takes images itself (unlike a Chat Completions tool message).
    return [
        {"type": "input_text", "text": part.text} if isinstance(part, TextBlock) else _image_part(part)
        for part in block.content
    ]


def _user_items(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"role": "user", "content": message.content}] if message.content else []
    items: list[dict[str, Any]] = []  # tool outputs first: they answer the previous reply's calls
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append({"type": "input_text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append(_image_part(block))
        elif isinstance(block, ToolResultBlock):
            items.append({"type": "function_call_output", "call_id": sanitize_tool_id(block.tool_use_id),
                          "output": _tool_output(block)})
        # Thinking and tool calls have no form in a user message.
    if parts:
        content: str | list[dict[str, Any]] = parts
        if all(part["type"] == "input_text" for part in parts):
            content = "\n".join(part["text"] for part in parts)
        items.append({"role": "user", "content": content})
    return items


def _reasoning_item(block: ThinkingBlock) -> dict[str, Any]:
    # No ``id``: with store=false the server has nothing stored under it (an id it cannot find, or
    # one its paired items do not carry, is a 400); the encrypted content is the whole item.
    summary = [{"type": "summary_text", "text": block.thinking}] if block.thinking else []
    return {"type": "reasoning", "summary": summary, "encrypted_content": block.redacted_data}


def _replayable(block: ThinkingBlock, provider: str) -> bool:
    # Only this provider can decrypt its reasoning; an item without encrypted content would be
    # looked up by id, which store=false never kept.
    return block.provider == provider and bool(block.redacted_data)


def _assistant_items(message: AssistantMessage, provider: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []  # reasoning waits for the item it led to
    for block in message.content:
        if isinstance(block, ThinkingBlock):
            if _replayable(block, provider):
                pending.append(_reasoning_item(block))
            continue
        if isinstance(block, TextBlock):
            if not block.text:
                continue
            item: dict[str, Any] = {"role": "assistant", "content": block.text}
        elif isinstance(block, ToolUseBlock):
            item = {"type": "function_call", "call_id": sanitize_tool_id(block.id), "name": block.name,
                    "arguments": json.dumps(block.input, ensure_ascii=False)}
        else:
            continue
        items += pending
        pending = []
        items.append(item)
    # Reasoning that led to nothing (a reply cut off while thinking) is left out: the API rejects a
    # reasoning item "provided without its required following item".
    return items


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "function", "name": tool.name}
    if tool.description:
        spec["description"] = tool.description
    spec["parameters"] = tool.input_schema
    # Strict mode (the API's default) rejects any schema that is not closed and all-required, which
    # most tool schemas are not; the arguments are validated by the tool anyway.
    spec["strict"] = False
    return spec


def _tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    if choice.mode == "tool":
        return {"type": "function", "name": choice.name}
    return "required" if choice.mode == "any" else choice.mode


def build_body(
    request: LLMRequest, *, model: str, provider: str, max_tokens: int | None, encrypted_reasoning: bool
) -> dict[str, Any]:
    """The JSON body of a ``POST /responses`` call (without ``stream``). ``extra`` is merged in last,
    so it wins (``{"reasoning": {"effort": "high", "summary": "auto"}}``, ``{"store": True}``...)."""
    items: list[dict[str, Any]] = []
    for message in request.messages:
        if isinstance(message, AssistantMessage):
            items += _assistant_items(message, provider)
        else:
            items += _user_items(message)
    body: dict[str, Any] = {"model": model, "input": items, "store": False}
    if request.system:
        body["instructions"] = request.system
    if encrypted_reasoning:
        body["include"] = [ENCRYPTED_REASONING]
    if request.tools:
        body["tools"] = [_tool(tool) for tool in request.tools]
        if request.tool_choice is not None:
            body["tool_choice"] = _tool_choice(request.tool_choice)
    if max_tokens is not None:
        body["max_output_tokens"] = max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.response_format is not None:
        body["text"] = {"format": text_format(request.response_format)}
    if request.extra:
        body.update(request.extra)
    return body


def text_format(fmt: ResponseFormat) -> dict[str, Any]:
    """The Responses API's ``text.format`` for a JSON Schema answer (flat, unlike Chat Completions'
    ``response_format``; ``strict`` as the caller decided, see ``ResponseFormat``)."""
    spec: dict[str, Any] = {"type": "json_schema", "name": fmt.name, "schema": fmt.json_schema,
                            "strict": fmt.strict}
    if fmt.description:
        spec["description"] = fmt.description
    return spec


# ----------------------------------------------------------------------------- response


def _texts(parts: object, kind: str, key: str) -> list[str]:
    if not isinstance(parts, list):
        return []
    return [part[key] for part in parts
            if isinstance(part, dict) and part.get("type") == kind and isinstance(part.get(key), str)]


def is_refusal(item: Mapping[str, Any]) -> bool:
    """Whether a ``message`` output item holds a refusal."""
    return bool(_texts(item.get("content"), "refusal", "refusal"))


def block_from_item(
    item: Mapping[str, Any], *, provider: str, call_id: str | None = None
) -> ContentBlock | None:
    """The agcore block for one output item: ``message`` -> text (refusals included), ``function_call``
    -> tool call, ``reasoning`` -> a ``ThinkingBlock`` tagged with ``provider``; None for an empty
    message and for items agcore does not model (hosted tools' calls). ``call_id`` is the id to use
    when the item has none (the stream's, so start and end agree)."""
    kind = item.get("type")
    if kind == "message":
        content = item.get("content")
        text = "".join(_texts(content, "output_text", "text") + _texts(content, "refusal", "refusal"))
        return TextBlock(text=text) if text else None
    if kind == "function_call":
        arguments, error = parse_tool_arguments(arguments_text(item.get("arguments")))
        wire_id = item.get("call_id")
        name = item.get("name")
        return ToolUseBlock(
            id=wire_id if isinstance(wire_id, str) and wire_id else call_id or new_call_id(),
            name=name if isinstance(name, str) else "", input=arguments, parse_error=error,
        )
    if kind == "reasoning":
        # The summary is what the API shows of the reasoning; open models served by compatible
        # servers send the reasoning text itself as ``content`` instead.
        shown = _texts(item.get("summary"), "summary_text", "text") or _texts(
            item.get("content"), "reasoning_text", "text")
        item_id, encrypted = item.get("id"), item.get("encrypted_content")
        return ThinkingBlock(
            thinking="\n\n".join(shown),
            signature=item_id if isinstance(item_id, str) and item_id else None,
            redacted_data=encrypted if isinstance(encrypted, str) and encrypted else None,
            provider=provider,
        )
    return None


def _count(value: object) -> int:
    return value if isinstance(value, int) else 0


def usage_of(usage: object) -> Usage:
    """agcore ``Usage`` from a response's ``usage``: input excludes cached and cache-written tokens
    (the API counts them in ``input_tokens``); output includes the reasoning tokens (billed as output),
    which ``reasoning_tokens`` also gives apart."""
    if not isinstance(usage, dict):
        return Usage()
    details = usage.get("input_tokens_details")
    cached = written = 0
    if isinstance(details, dict):
        cached, written = _count(details.get("cached_tokens")), _count(details.get("cache_write_tokens"))
    output_details = usage.get("output_tokens_details")
    reasoning = _count(output_details.get("reasoning_tokens")) if isinstance(output_details, dict) else 0
    return Usage(
        input_tokens=max(0, _count(usage.get("input_tokens")) - cached - written),
        output_tokens=_count(usage.get("output_tokens")),
        cache_read_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=reasoning,
    )


def stop_reason_of(response: Mapping[str, Any], *, has_tool_calls: bool, refused: bool) -> StopReason:
    """Why the reply ended: ``incomplete_details.reason`` when the response is incomplete
    (``max_output_tokens`` -> ``MAX_TOKENS``, ``content_filter`` -> ``REFUSAL``), else a refusal,
    tool calls, or a normal end."""
    details = response.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    if reason == "max_output_tokens":
        return StopReason.MAX_TOKENS
    if reason == "content_filter" or refused:
        return StopReason.REFUSAL
    return StopReason.TOOL_USE if has_tool_calls else StopReason.END_TURN


def failure_of(response: Mapping[str, Any], *, provider: str, model: str) -> LLMError | None:
    """The error of a response whose generation failed (``status: "failed"`` with an ``error``
    object), or None."""
    error = response.get("error")
    if error or response.get("status") == "failed":
        body = error if isinstance(error, dict) else {"message": "the response failed without an error"}
        return error_from_body(body, provider=provider, model=model)
    return None


def message_from_response(body: object, *, provider: str, model: str) -> AssistantMessage:
    """The ``AssistantMessage`` for a decoded response object: one block per output item, in order."""
    output = body.get("output") if isinstance(body, dict) else None
    if not isinstance(body, dict) or not isinstance(output, list):
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            raise error_from_body(body["error"], provider=provider, model=model)
        raise ResponseFormatError(
            f"the server answered something that is not a response object ({str(body)[:200]!r}); check "
            "that the base URL points at an endpoint serving the Responses API (POST /v1/responses)",
            provider=provider, model=model,
        )
    failure = failure_of(body, provider=provider, model=model)
    if failure is not None:
        raise failure
    blocks: list[ContentBlock] = []
    refused = False
    for item in _items(output):
        block = block_from_item(item, provider=provider)
        if block is not None:
            blocks.append(block)
            refused = refused or (item.get("type") == "message" and is_refusal(item))
    return AssistantMessage(
        content=blocks,
        stop_reason=stop_reason_of(body, has_tool_calls=any(isinstance(b, ToolUseBlock) for b in blocks),
                                   refused=refused),
        model=model,
        provider=provider,
        usage=usage_of(body.get("usage")),
    )


def _items(output: Sequence[object]) -> list[Mapping[str, Any]]:
    return [item for item in output if isinstance(item, dict)]
