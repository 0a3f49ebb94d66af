"""Reading the argument JSON a model wrote for a tool call.

Models (small local ones especially) write trailing commas, unterminated strings, missing commas,
and now and then something that is not an object at all (a list, a number, a bare string). Vendors
hand the arguments over as JSON text (OpenAI, streams), as an already decoded value (Anthropic's
``tool_use.input``, Ollama), or as null. Whatever the shape: what is an object (or can be repaired
into one) becomes the arguments; anything else becomes ``parse_error`` on the ``ToolUseBlock``,
which the loop answers with an error result the model can read and correct, never an exception.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from typing import Any

from agcore.llm._lenient_json import read_lenient_object
from agcore.llm.types import AssistantMessage, StopReason, ToolUseBlock

__all__ = ["CUT_AT_MAX_TOKENS", "flag_cut_call", "parse_tool_arguments"]

#: The ``parse_error`` of a call whose arguments the output token limit cut short.
CUT_AT_MAX_TOKENS = (
    "The reply was cut off at the output token limit (max_tokens) while this call's arguments were being "
    "written, so they are incomplete and the call was not run. Call the tool again with shorter "
    "arguments, or split the work over several calls."
)

# The JSON names of Python's decoded types, so the message speaks the model's language.
_JSON_TYPE = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}
# An argument name as tools have them; a "key" with spaces, line breaks or quotes is a string's
# content that a repair split off.
_KEY = re.compile(r"[^\s\"'\\]{1,64}")


def parse_tool_arguments(raw: object) -> tuple[dict[str, Any], str | None]:
    """Return ``(arguments, parse_error)``; ``parse_error`` is None when arguments could be read.

    ``raw`` is the JSON text a model wrote, or a value a vendor already decoded (an object, a list, a
    number, a string, a boolean, or None). None, JSON ``null`` and empty text mean no arguments.
    """
    if raw is None:
        return {}, None
    if isinstance(raw, Mapping):  # Anthropic, Ollama, and OpenAI-compatible servers that send objects
        return dict(raw), None
    if not isinstance(raw, str):  # a decoded non-object: a list, a number, a boolean
        return {}, _not_an_object(raw, _shown(raw))
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return _read_broken(raw, exc)
    if value is None:
        return {}, None
    if isinstance(value, str) and value.lstrip().startswith("{"):
        # Encoded twice (some models do): the same object a vendor's decoded string would give.
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    if isinstance(value, dict):
        return value, None
    return {}, _not_an_object(value, _shown(raw))


def _read_broken(raw: str, exc: ValueError) -> tuple[dict[str, Any], str | None]:
    """Arguments that are not valid JSON: strings written the Python way first (triple quotes,
    bare quotes inside), then json-repair; a repair that split a string into keys is refused."""
    lenient = read_lenient_object(raw)
    if lenient is not None:
        return lenient, None
    import json_repair  # only for broken JSON: most calls never pay its import

    try:
        value = json_repair.loads(raw)
    except Exception:  # json-repair raises on some inputs instead of giving up
        value = None
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not isinstance(value, dict):  # a repair that is no object was a guess, not a reading
        return {}, _message(f"are not valid JSON ({_where(raw, exc)}) and could not be repaired", _shown(raw))
    split = next((key for key in value if not _KEY.fullmatch(key)), None)
    if split is not None:  # text that was a string's content came out as a key: not what was meant
        return {}, _message(
            f"could not be read as meant: the text {_shown(split)!r} came out as an argument name, so a "
            "string value before it holds quotes that end it early. Inside a JSON string write a "
            'double quote as \\" and a line break as \\n (triple quotes are not JSON)',
            _shown(raw),
        )
    return value, None


def _where(raw: str, exc: ValueError) -> str:
    """Where the JSON broke, for the model: the decoder's reason and the text around it."""
    if not isinstance(exc, json.JSONDecodeError):
        return str(exc)
    near = raw[max(exc.pos - 20, 0) : exc.pos + 20]
    return f"{exc.msg} at character {exc.pos}, near {near!r}"


def _shown(raw: object) -> str:
    text = raw if isinstance(raw, str) else _dumps(raw)
    return text if len(text) <= 200 else text[:200] + "…"


def _dumps(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _not_an_object(value: object, shown: str) -> str:
    kind = _JSON_TYPE.get(type(value), type(value).__name__)
    return _message(f"must be a JSON object, not {'an' if kind[0] in 'aeiou' else 'a'} {kind}", shown)


def _message(problem: str, shown: str) -> str:
    return f"The tool arguments {problem}: {shown!r}. Call the tool again with one JSON object."


def flag_cut_call(message: AssistantMessage) -> AssistantMessage:
    """``message``, with a ``parse_error`` on its last block if that is a tool call the output token
    limit cut short. Arguments cut mid-value often still parse (or repair) into an object, one with a
    truncated value: running that call would act on data the model never finished writing. Only the
    last block can be cut; a reply cut after its last call finished ends in another block."""
    if message.stop_reason is not StopReason.MAX_TOKENS or not message.content:
        return message
    last = message.content[-1]
    if not isinstance(last, ToolUseBlock) or last.parse_error is not None:
        return message
    flagged = last.model_copy(update={"parse_error": CUT_AT_MAX_TOKENS})
    return message.model_copy(update={"content": [*message.content[:-1], flagged]})
