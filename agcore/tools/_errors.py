"""The errors of the tool system.

ToolError                     base: ``message`` (what the model or the developer reads), ``tool_name``
├── RetryableToolError        a transient failure: the registry retries per the tool's ``max_retries``
├── ToolDenied                a guard or policy said no; ``reason`` says why
├── UnknownToolError          (also a KeyError) no tool of that name is registered
├── MissingDependencyError    (also a KeyError) ``ToolContext.require()`` found no such dependency
└── ToolNameCollisionError    (also a ValueError) a name is already taken in a registry

A tool raises ``ToolError`` (or a subclass) to report a failure in words meant for the model: the
registry turns it into an error result with that message, where any other exception is reported as
its type and message.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

__all__ = [
    "MissingDependencyError",
    "RetryableToolError",
    "ToolDenied",
    "ToolError",
    "ToolNameCollisionError",
    "ToolDefinitionWarning",
    "UnknownToolError",
    "describe_invalid_arguments",
]


class ToolDefinitionWarning(UserWarning):
    """A tool was made, but the model will be told less than it needs: a parameter without a type
    hint (the model may send any JSON value there) or a tool without a description; or its name is
    one Anthropic and OpenAI refuse (outside ``^[a-zA-Z0-9_-]{1,64}$``)."""


class ToolError(Exception):
    """A tool failed in a way it can explain; ``message`` is shown to the model as the tool result."""

    def __init__(self, message: str = "", *, tool_name: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.tool_name = tool_name

    def __str__(self) -> str:
        # KeyError subclasses would otherwise print the message in quotes.
        return self.message


class RetryableToolError(ToolError):
    """A transient failure (a busy service, a lock held): the registry tries the call again.

    ``retry_after`` (seconds), when given, replaces the tool's ``retry_delay`` before the next attempt.
    """

    def __init__(
        self, message: str = "", *, tool_name: str | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, tool_name=tool_name)
        self.retry_after = retry_after


class ToolDenied(ToolError):
    """A guard or policy refused the call (a path outside the workspace, a forbidden command)."""

    def __init__(self, reason: str = "", *, tool_name: str | None = None) -> None:
        super().__init__(reason, tool_name=tool_name)
        self.reason = reason


class UnknownToolError(ToolError, KeyError):
    """No tool of that name is registered."""


class MissingDependencyError(ToolError, KeyError):
    """A tool asked its context for a dependency the runtime did not provide."""


class ToolNameCollisionError(ToolError, ValueError):
    """A tool name is already registered (pass ``replace=True`` to swap the old tool out)."""


# ------------------------------------------------------------------ invalid arguments, for a model

_MAX_LISTED = 8
_PLAIN = {
    "a valid integer": "an integer",
    "a valid number": "a number",
    "a valid boolean": "a boolean (true or false)",
    "a valid string": "a string",
    "a valid list": "an array",
    "a valid array": "an array",
    "a valid tuple": "an array",
    "a valid dictionary": "an object",
    "a valid set": "an array of unique items",
}


def describe_invalid_arguments(
    tool_name: str, error: ValidationError, arguments: object, parameters: Sequence[str] | None = None
) -> str:
    """A message a model can act on: each bad field's path, what was expected, what was given.

    ``parameters`` (the names the tool takes) is listed when the model sent an unknown argument.
    """
    problems: dict[str, list[str]] = {}
    given: dict[str, str] = {}
    for err in error.errors(include_url=False):
        path = _path(err["loc"], arguments, missing=err["type"] == "missing")
        kind = err["type"]
        if kind == "missing":
            expected = "required field missing"
        elif kind == "extra_forbidden":
            takes = f" (this tool takes: {', '.join(parameters)})" if parameters is not None else ""
            expected = f"unexpected argument{takes}" if len(err["loc"]) == 1 else "unexpected field"
        else:
            expected = _expected(err["msg"])
            given.setdefault(path, _shown(err["input"]))
        options = problems.setdefault(path, [])
        if expected not in options:
            options.append(expected)
    parts: list[str] = []
    for path, options in list(problems.items())[:_MAX_LISTED]:
        label = f"'{path}'" if path else "arguments"
        if path in given:
            parts.append(f"{label}: expected {' or '.join(options)}, got {given[path]}.")
        else:
            parts.append(f"{label}: {'; '.join(options)}.")
    if len(problems) > _MAX_LISTED:
        parts.append(f"(and {len(problems) - _MAX_LISTED} more problems)")
    return (
        f"Invalid arguments for tool '{tool_name}': {' '.join(parts)} "
        f"Call '{tool_name}' again with corrected arguments."
    )


def _path(loc: tuple[int | str, ...], arguments: object, *, missing: bool) -> str:
    """``a.b[2].c`` from a pydantic location, minus the union-member tags pydantic inserts
    (``('x', 'int')`` for ``x: int | str``): a tag is a step the arguments themselves do not have."""
    text = ""
    value: Any = arguments
    for i, step in enumerate(loc):
        if isinstance(value, dict | list) and _has_step(value, step):
            value = value[step]  # type: ignore[index]
        elif isinstance(step, str) and not (missing and i == len(loc) - 1):
            continue  # not in the arguments, and not the field reported missing: a union tag
        else:
            value = None
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


def _has_step(value: dict[Any, Any] | list[Any], step: int | str) -> bool:
    if isinstance(value, dict):
        return step in value
    return isinstance(step, int) and -len(value) <= step < len(value)


def _expected(msg: str) -> str:
    if not msg.startswith("Input should be "):
        return msg[:1].lower() + msg[1:]
    rest = msg[len("Input should be ") :]
    for prefix, plain in _PLAIN.items():
        if rest.startswith(prefix):
            return plain
    if rest.startswith(("greater", "less", "a multiple", "finite")):
        return f"a value {rest}"
    return rest


def _shown(value: object) -> str:
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= 80 else text[:77] + "…"
