"""Chat Completions wire format: agcore requests to request parameters, completions back to agcore.

Shared by the official API and the many servers that copy it (vLLM, llama.cpp, LM Studio, Ollama,
DeepSeek, OpenRouter...), so reading is lenient: every field a server may leave out, rename or
send with another type is tolerated here, in one place, for ``complete()`` and ``stream()`` alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agcore.llm._arguments import parse_tool_arguments
from agcore.llm._identifiers import fit_identifier, new_call_id
from agcore.llm.errors import (
    InvalidRequestError,
    LLMError,
    ResponseFormatError,
    error_from_status,
    vendor_fields,
)
from agcore.llm.providers._reasoning_echo import NEVER, ReasoningEcho
from agcore.llm.providers._think_tags import split_leading_think
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
    "MAX_TOOL_ID_LENGTH",
    "arguments_text",
    "build_params",
    "error_detail",
    "error_from_body",
    "message_from_completion",
    "new_call_id",
    "reasoning_of",
    "refuse_builtin_tools",
    "sanitize_tool_id",
    "stop_reason_for",
    "text_of",
    "usage_from",
]

#: OpenAI rejects longer tool-call ids ("string too long. Expected ... maximum length 40").
MAX_TOOL_ID_LENGTH = 40

_FINISH: dict[str, StopReason] = {
    "stop": StopReason.END_TURN,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "length": StopReason.MAX_TOKENS,
    "content_filter": StopReason.REFUSAL,
}


# ----------------------------------------------------------------------------- request


def sanitize_tool_id(tool_id: str) -> str:
    """``tool_id`` cut to fit OpenAI's limit; the hash suffix keeps ids that share a prefix apart and
    makes the result the same for the tool call and its result."""
    return fit_identifier(tool_id, max_length=MAX_TOOL_ID_LENGTH, empty_prefix="call")


def _image_part(block: ImageBlock) -> dict[str, Any]:
    url = block.url if block.url is not None else f"data:{block.media_type};base64,{block.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def _user_content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    # Plain strings are what every compatible server understands; parts only when images need them.
    if all(part["type"] == "text" for part in parts):
        return "\n".join(part["text"] for part in parts)
    return parts


def _user_messages(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"role": "user", "content": message.content}] if message.content else []
    out: list[dict[str, Any]] = []  # tool messages first, then at most one user message
    tool_images: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append(_image_part(block))
        elif isinstance(block, ToolResultBlock):
            call_id = sanitize_tool_id(block.tool_use_id)
            text = block.text
            images = [] if isinstance(block.content, str) else [
                b for b in block.content if isinstance(b, ImageBlock)
            ]
            if images:
                # A tool message holds text only: the images travel in a user message right after.
                tool_images.append({"type": "text", "text": f"Images returned by tool call {call_id}:"})
                tool_images.extend(_image_part(image) for image in images)
                if not text:
                    text = f"The tool returned {len(images)} image(s), attached in the next message."
            out.append({"role": "tool", "tool_call_id": call_id, "content": text})
        # Thinking and tool calls have no form in a Chat Completions user message.
    # Tool messages must directly follow the assistant message that made the calls.
    combined = tool_images + parts
    if combined:
        out.append({"role": "user", "content": _user_content(combined)})
    return out


def _assistant_message(
    message: AssistantMessage, reasoning_field: str | None = None
) -> dict[str, Any] | None:
    """The wire message; with ``reasoning_field``, the reply's own reasoning goes back in that field
    (the caller has checked that the vendor wants it and wrote it)."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text:
                texts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            calls.append({
                "id": sanitize_tool_id(block.id),
                "type": "function",
                "function": {"name": block.name, "arguments": json.dumps(block.input, ensure_ascii=False)},
            })
        # Thinking is dropped unless its own vendor wants it back (``reasoning_field``).
    if not texts and not calls:
        return None
    out: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) if texts else None}
    if reasoning_field is not None:
        reasoning = "".join(b.thinking for b in message.thinking
                            if b.provider == message.provider and b.redacted_data is None)
        if reasoning:
            out[reasoning_field] = reasoning
    if calls:
        out["tool_calls"] = calls
    return out


def _starts_turn(message: UserMessage) -> bool:
    # Tool results continue the model's turn; anything else the user says starts a new one.
    return isinstance(message.content, str) or any(
        not isinstance(b, ToolResultBlock) for b in message.content)


def _echo_field(message: AssistantMessage, *, position: int, turn_start: int, rule: ReasoningEcho,
                provider: str, model: str) -> str | None:
    """The field this message's reasoning goes back in under ``rule``, or None."""
    if rule.field is None or message.provider != provider:
        return None  # never another vendor's (or another server's) reasoning
    if rule.same_model and message.model != model:
        return None
    if rule.current_turn_only and position < turn_start:
        return None
    if rule.tool_calls_only and not message.tool_calls:
        return None
    return rule.field


def refuse_builtin_tools(tools: list[ToolDefinition], *, provider: str, model: str) -> None:
    """Raise ``InvalidRequestError`` for a vendor's built-in tool (``ToolDefinition.builtin``) offered
    to a provider that has none: left out silently, the model would lack a tool the caller chose."""
    for tool in tools:
        if tool.builtin_type is not None:
            raise InvalidRequestError(
                f"the tool {tool.name!r} is a vendor's built-in tool ({tool.builtin_type}), which {provider} "
                "cannot offer: give this provider a tool with an input_schema instead, or leave it out of "
                "the request's tools", provider=provider, model=model,
            )


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    function["parameters"] = tool.input_schema
    return {"type": "function", "function": function}


def _tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    if choice.mode == "tool":
        return {"type": "function", "function": {"name": choice.name}}
    return "required" if choice.mode == "any" else choice.mode


def build_params(
    request: LLMRequest, *, model: str, max_tokens: int | None, official: bool,
    provider: str = "", reasoning: ReasoningEcho = NEVER,
) -> dict[str, Any]:
    """The JSON body of a Chat Completions request (without the streaming fields). ``extra`` is merged
    in last, so it wins, as the SDK's ``extra_body`` does. ``reasoning`` is the vendor's rule for
    sending back the reasoning of replies that ``provider`` wrote (``_reasoning_echo``)."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    turn_start = 0
    if reasoning.field is not None:
        turn_start = max((i for i, m in enumerate(request.messages)
                          if isinstance(m, UserMessage) and _starts_turn(m)), default=-1) + 1
    for position, message in enumerate(request.messages):
        if isinstance(message, AssistantMessage):
            field = _echo_field(message, position=position, turn_start=turn_start, rule=reasoning,
                                provider=provider, model=model)
            converted = _assistant_message(message, field)
            if converted is not None:
                messages.append(converted)
        else:
            messages.extend(_user_messages(message))
    params: dict[str, Any] = {"model": model, "messages": messages}
    if request.tools:
        refuse_builtin_tools(request.tools, provider=provider or "openai", model=model)
        params["tools"] = [_tool(tool) for tool in request.tools]
        # Only with tools: OpenAI rejects a tool_choice when no tools are given.
        if request.tool_choice is not None:
            params["tool_choice"] = _tool_choice(request.tool_choice)
    if max_tokens is not None:
        # OpenAI's reasoning models reject max_tokens; compatible servers mostly know only max_tokens.
        params["max_completion_tokens" if official else "max_tokens"] = max_tokens
    if request.temperature is not None:
        params["temperature"] = request.temperature
    if request.stop_sequences:
        params["stop"] = list(request.stop_sequences)
    if request.response_format is not None:
        params["response_format"] = response_format(request.response_format)
    if request.extra:
        params.update(request.extra)
    return params


def response_format(fmt: ResponseFormat) -> dict[str, Any]:
    """Chat Completions' ``response_format`` for a JSON Schema answer (``strict`` only when the schema
    meets OpenAI's strict subset: the caller decides, see ``ResponseFormat``)."""
    spec: dict[str, Any] = {"name": fmt.name, "schema": fmt.json_schema, "strict": fmt.strict}
    if fmt.description:
        spec["description"] = fmt.description
    return {"type": "json_schema", "json_schema": spec}


# ----------------------------------------------------------------------------- response
# Replies are read as decoded JSON, not as SDK models: the SDK's per-chunk model building costs more
# than all of agcore's streaming work, and plain dicts take the servers' variations in stride.


def text_of(content: object) -> str:
    """Message text from ``content``, which a few servers send as a list of parts, not a string."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"] for part in content
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        )
    return ""


def reasoning_of(message: Mapping[str, Any]) -> str:
    """Reasoning text a compatible server adds: ``reasoning_content`` (DeepSeek, vLLM, llama.cpp) or
    ``reasoning`` (OpenRouter, Ollama, newer vLLM). Some send both with the same text: take one."""
    value = message.get("reasoning_content") or message.get("reasoning")
    return value if isinstance(value, str) else ""


def arguments_text(arguments: object) -> str:
    """A call's argument JSON as text; some servers send an object instead of a JSON string."""
    if arguments is None:
        return ""
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def stop_reason_for(finish_reason: object, *, has_tool_calls: bool, refused: bool) -> StopReason:
    if refused:
        return StopReason.REFUSAL
    reason = StopReason.END_TURN
    if isinstance(finish_reason, str):
        reason = _FINISH.get(finish_reason, StopReason.END_TURN)  # unknown values: a normal end
    # Some servers say "stop" (or nothing) although the reply is tool calls.
    if has_tool_calls and reason is StopReason.END_TURN:
        return StopReason.TOOL_USE
    return reason


def _count(value: object) -> int:
    return value if isinstance(value, int) else 0


def usage_from(usage: object) -> Usage:
    """agcore's ``Usage`` from a Chat Completions ``usage`` object (OpenAI's, DeepSeek's, and what
    compatible servers send)."""
    if not isinstance(usage, dict):
        return Usage()
    details = usage.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    if not cached:
        cached = _count(usage.get("prompt_cache_hit_tokens"))  # DeepSeek's name for it
    prompt = _count(usage.get("prompt_tokens"))
    output = _count(usage.get("completion_tokens"))
    completion_details = usage.get("completion_tokens_details")
    reasoning = _count(completion_details.get("reasoning_tokens")) if isinstance(
        completion_details, dict) else 0
    # OpenAI and DeepSeek count reasoning inside completion_tokens. A server whose total shows it
    # left them out (total = prompt + completion + reasoning) would otherwise have them go unbilled.
    total = usage.get("total_tokens")
    if reasoning and isinstance(total, int) and total == prompt + output + reasoning:
        output += reasoning
    return Usage(
        # prompt_tokens includes the cached part; agcore counts it apart.
        input_tokens=max(0, prompt - cached),
        output_tokens=output,
        cache_read_tokens=cached,
        reasoning_tokens=min(reasoning, output),
    )


def _tool_use(call_id: object, function: Mapping[str, Any]) -> ToolUseBlock:
    arguments, error = parse_tool_arguments(arguments_text(function.get("arguments")))
    name = function.get("name")
    return ToolUseBlock(
        id=call_id if isinstance(call_id, str) and call_id else new_call_id(),
        name=name if isinstance(name, str) else "",
        input=arguments,
        parse_error=error,
    )


def message_from_completion(body: object, *, provider: str, model: str) -> AssistantMessage:
    """The ``AssistantMessage`` for a decoded chat completion. Blocks: thinking, text, tool calls."""
    choices = body.get("choices") if isinstance(body, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        if isinstance(body, dict) and body.get("error"):  # some servers answer 200 with an error
            raise error_from_body(body["error"], provider=provider, model=model)
        raise ResponseFormatError(
            f"the server answered with no choices ({str(body)[:200]!r}); check that the base URL points "
            "at an OpenAI-compatible /v1 endpoint", provider=provider, model=model,
        )
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        message = {}
    blocks: list[ContentBlock] = []
    reasoning = reasoning_of(message)
    tagged, content = split_leading_think(text_of(message.get("content")))
    if reasoning or tagged:
        blocks.append(ThinkingBlock(thinking=reasoning or tagged, provider=provider))
    refusal = message.get("refusal")
    refusal = refusal if isinstance(refusal, str) else ""
    text = content + refusal
    if text:
        blocks.append(TextBlock(text=text))
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):  # not a custom tool call: agcore never declares those
            blocks.append(_tool_use(call.get("id"), function))
    legacy = message.get("function_call")  # the pre-tools form, still sent by some old servers
    if isinstance(legacy, dict) and not any(isinstance(b, ToolUseBlock) for b in blocks):
        blocks.append(_tool_use(None, legacy))
    has_calls = isinstance(blocks[-1], ToolUseBlock) if blocks else False
    return AssistantMessage(
        content=blocks,
        stop_reason=stop_reason_for(choice.get("finish_reason"), has_tool_calls=has_calls,
                                    refused=bool(refusal)),
        model=model,
        provider=provider,
        usage=usage_from(body.get("usage") if isinstance(body, dict) else None),
    )


# ----------------------------------------------------------------------------- errors


def error_detail(body: object, fallback: str = "") -> str:
    """The readable part of an error body: OpenAI's ``message``, FastAPI's ``detail``, or the body."""
    if isinstance(body, Mapping):
        for key in ("message", "detail", "error"):
            value = body.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
            if isinstance(value, Mapping) and (nested := error_detail(value)):
                return nested
            if isinstance(value, list) and value:  # FastAPI validation errors
                return json.dumps(value)[:500]
        return fallback
    if isinstance(body, str) and body.strip():
        return body.strip()[:500]
    return fallback


# Error ``type``/``code`` words of an error sent in a 200 stream, to the HTTP status they stand for.
_ERROR_WORDS = (
    ("context_length", 400), ("rate_limit", 429), ("quota", 429), ("api_key", 401), ("auth", 401),
    ("permission", 403), ("not_found", 404), ("overloaded", 529), ("timeout", 408), ("invalid", 400),
)


def error_from_body(body: object, *, provider: str, model: str) -> LLMError:
    """The ``LLMError`` for an error object sent inside a successful response (a stream's
    ``data: {"error": ...}``): its HTTP status was 200, so the kind is read from its code and type."""
    status: int | None = None
    words = ""
    if isinstance(body, Mapping):
        code = body.get("code")
        if isinstance(code, int) or (isinstance(code, str) and code.isdigit()):
            status = int(code) if 400 <= int(code) < 600 else None
        words = f"{body.get('type') or ''} {code or ''}".lower()
    inferred = status or next((s for word, s in _ERROR_WORDS if word in words), 500)
    detail = error_detail(body, "the server reported an error without a message")
    if isinstance(body, Mapping) and isinstance(body.get("code"), str) and body["code"] not in detail:
        detail = f"{detail} (code {body['code']})"
    vendor_type, vendor_code, vendor_param = vendor_fields(body)
    error = error_from_status(inferred, f"{detail} (sent inside the response)", provider=provider,
                              model=model, vendor_type=vendor_type, vendor_code=vendor_code,
                              vendor_param=vendor_param)
    error.status_code = status
    return error
