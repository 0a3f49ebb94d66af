"""``load_script(path)``: a ``ScriptedProvider`` from a JSON or YAML file, for offline runs.

The CLI's ``--model scripted:PATH``, the demo and subprocess tests use it: a model is then a file a
test writes, not Python code. The file is a list of replies, or an object holding one::

    {"model": "claude-haiku-4-5",          # optional: the model id replies carry (prices apply)
     "replies": [
       {"text": "Hello!"},                                          # a text answer
       "Also a text answer",
       {"text": "Writing it.", "tool_calls": [{"name": "write_file",
                                                "arguments": {"path": "a.txt", "content": "hi"}}]},
       {"error": {"status": 529, "message": "overloaded"}},        # the call fails (HTTP 529)
       {"text": "Slow answer", "delay": 1.5},                       # waits 1.5 s first (cancellable)
       {"text": "I remember", "expect": "banana"}                   # the request must contain "banana"
     ]}

Per reply: ``text``, ``tool_calls`` (``name``, ``arguments``, optional ``id``), ``error`` (``status``
and ``message``: mapped like a vendor's HTTP failure, so 529 is an ``OverloadedError``), ``usage``
(``input_tokens``, ``output_tokens``...; estimated when absent), ``delay`` (seconds the provider waits
before answering; a cancelled turn stops waiting) and ``expect`` (text that must appear in the request's
messages, else the call fails with ``ScriptExpectationError`` saying so: how a test in another process
checks what the model was sent). YAML needs PyYAML.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

from agcore.llm.errors import LLMError, error_from_status
from agcore.llm.types import (
    AssistantMessage,
    ImageBlock,
    LLMRequest,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from agcore.testing._providers import (
    ScriptedProvider,
    ScriptedReply,
    ScriptedResponse,
    text_reply,
    tool_calls_reply,
)

__all__ = ["ScriptExpectationError", "ScriptFileError", "load_script", "script_responses"]

_REPLY_KEYS = frozenset({"text", "tool_calls", "error", "usage", "delay", "expect"})


class ScriptFileError(ValueError):
    """A script file cannot be read, or one of its replies is malformed (the message says which)."""


class ScriptExpectationError(LLMError):
    """A scripted reply's ``expect`` text was not in the request it answers."""


def load_script(path: str | Path, *, model_id: str | None = None) -> ScriptedProvider:
    """A ``ScriptedProvider`` playing the replies of the JSON/YAML file ``path``: a list of replies,
    or an object with ``replies`` and an optional ``model``. A reply is a string (a text answer) or an
    object with ``text``, ``tool_calls`` (``name``, ``arguments``, optional ``id``), ``error``
    (``status``, ``message``), ``usage``, ``delay`` and ``expect``; the guide's "Testing your agent"
    page shows one. ``model_id`` overrides the file's ``model``. ``ScriptFileError`` says what is
    wrong."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptFileError(f"cannot read the script file {str(file)!r}: {exc.strerror or exc}") from None
    data = _parse(file, text)
    model = model_id
    replies: Any = data
    if isinstance(data, Mapping):
        unknown = set(data) - {"model", "replies"}
        if unknown or "replies" not in data:
            raise ScriptFileError(
                f"{file}: a script object needs `replies` (a list) and may have `model`; "
                f"found keys {sorted(data)}"
            )
        replies = data["replies"]
        if model is None and data.get("model") is not None:
            model = str(data["model"])
    if not isinstance(replies, list):
        raise ScriptFileError(f"{file}: the script must be a list of replies, not {type(replies).__name__}")
    if not replies:
        raise ScriptFileError(
            f"{file}: the script holds no replies; give one per model call (a string, or an object "
            "with text and/or tool_calls)"
        )
    responses = script_responses(replies, source=str(file))
    provider = ScriptedProvider(responses, model_id=model or "scripted-model")
    provider.source = str(file)
    return provider


def script_responses(replies: list[Any], *, source: str = "script") -> list[ScriptedResponse]:
    """The ``ScriptedProvider`` responses for parsed script ``replies`` (``source`` names them in errors)."""
    return [_response(raw, f"{source}: reply {i}") for i, raw in enumerate(replies, 1)]


def _parse(file: Path, text: str) -> Any:
    if file.suffix.lower() in (".yaml", ".yml"):
        try:
            yaml: Any = importlib.import_module("yaml")
        except ImportError:
            raise ScriptFileError(
                f"{file}: reading a YAML script needs PyYAML (`pip install pyyaml`); or write it as JSON"
            ) from None
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            where = str(exc).replace('"<unicode string>"', f'"{file}"')
            raise ScriptFileError(f"{file} is not valid YAML: {where}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ScriptFileError(f"{file} is not valid JSON: {exc}") from None


def _response(raw: Any, where: str) -> ScriptedResponse:
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, Mapping):
        raise ScriptFileError(f"{where}: a reply is an object or a string, not {type(raw).__name__}")
    unknown = set(raw) - _REPLY_KEYS
    if unknown:
        raise ScriptFileError(
            f"{where}: unknown key(s) {sorted(unknown)}; a reply may have {', '.join(sorted(_REPLY_KEYS))}"
        )
    if "error" in raw and ("text" in raw or "tool_calls" in raw):
        raise ScriptFileError(f"{where}: a reply is either an `error` or an answer (`text`/`tool_calls`)")
    outcome: AssistantMessage | LLMError = (
        _error(raw["error"], where) if "error" in raw else _message(raw, where)
    )
    delay = raw.get("delay", 0)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0:
        raise ScriptFileError(f"{where}: `delay` must be a number of seconds (0 or more), not {delay!r}")
    expect = raw.get("expect")
    if expect is not None and not isinstance(expect, str):
        raise ScriptFileError(f"{where}: `expect` must be a string, not {type(expect).__name__}")
    if not delay and expect is None:
        return outcome
    return _Deferred(outcome, float(delay), expect, where)


def _message(raw: Mapping[str, Any], where: str) -> AssistantMessage:
    text = raw.get("text")
    if text is not None and not isinstance(text, str):
        raise ScriptFileError(f"{where}: `text` must be a string, not {type(text).__name__}")
    usage = _usage(raw.get("usage"), where)
    calls = raw.get("tool_calls")
    if calls is None:
        if text is None:
            raise ScriptFileError(f"{where}: a reply needs `text`, `tool_calls` or `error`")
        return text_reply(text, usage=usage)
    if not isinstance(calls, list) or not calls:
        raise ScriptFileError(f"{where}: `tool_calls` must be a non-empty list of {{name, arguments}}")
    blocks: list[ToolUseBlock | tuple[str, Mapping[str, Any]]] = []
    for n, call in enumerate(calls, 1):
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
            raise ScriptFileError(f"{where}, tool call {n}: needs a `name` (and `arguments`, an object)")
        arguments = call.get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise ScriptFileError(f"{where}, tool call {n}: `arguments` must be an object")
        if call.get("id"):
            blocks.append(ToolUseBlock(id=str(call["id"]), name=call["name"], input=dict(arguments)))
        else:
            blocks.append((call["name"], arguments))
    message = tool_calls_reply(blocks, text=text)
    return message.model_copy(update={"usage": usage}) if usage is not None else message


def _usage(raw: Any, where: str) -> Usage | None:
    if raw is None:
        return None
    try:
        return Usage.model_validate(raw)
    except ValueError as exc:
        raise ScriptFileError(f"{where}: `usage` is not valid: {exc}") from None


def _error(raw: Any, where: str) -> LLMError:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("status"), int):
        raise ScriptFileError(f"{where}: `error` needs a `status` (an HTTP code) and a `message`")
    return error_from_status(raw["status"], str(raw.get("message", "")), provider="scripted")


def _request_text(request: LLMRequest) -> str:
    parts = [request.system or ""]
    for message in request.messages:
        blocks = message.blocks if isinstance(message, UserMessage) else message.content
        for block in blocks:
            if isinstance(block, TextBlock | ToolResultBlock):
                parts.append(block.text)
            elif isinstance(block, ToolUseBlock):
                parts.append(json.dumps(block.input))
            elif isinstance(block, ImageBlock):  # so a script can expect an image: "[image image/png]"
                parts.append(f"[image {block.media_type or block.url}]")
    return "\n".join(parts)


class _Deferred:
    """A reply given after ``delay`` seconds, once the request is checked for ``expect``."""

    def __init__(self, outcome: AssistantMessage | LLMError, delay: float, expect: str | None,
                 where: str) -> None:
        self.outcome = outcome
        self.delay = delay
        self.expect = expect
        self.where = where

    async def __call__(self, request: LLMRequest) -> ScriptedReply:
        if self.delay:
            await anyio.sleep(self.delay)
        if self.expect is not None and self.expect not in _request_text(request):
            raise ScriptExpectationError(
                f"{self.where} expected the request to contain {self.expect!r}, and it does not "
                "(the history the model was sent lacks it)", provider="scripted",
            )
        if isinstance(self.outcome, LLMError):
            raise self.outcome
        return self.outcome
