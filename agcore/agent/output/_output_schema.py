"""The JSON side of typed answers: the schema sent for an output type (a JSON object, its objects
closed), whether OpenAI's strict mode can take it, and the JSON value a text answer holds."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["WRAP_KEY", "closed_schema", "json_values", "object_schema", "strict_compatible"]

#: The property a non-object answer is wrapped in (``{"result": [...]}``).
WRAP_KEY = "result"
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


#: How many ``{``/``[`` positions of a prose answer are tried as the start of its JSON.
_MAX_STARTS = 32


def json_values(text: str) -> Iterator[Any]:
    """The JSON values ``text`` may hold, most likely first: the whole text, each fenced block, then
    the JSON starting at each ``{`` or ``[`` of the prose (trailing prose ignored). Not repaired: a
    broken answer goes back to the model, nothing is invented."""
    stripped = text.strip()
    candidates = [stripped]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    starts = [i for i, ch in enumerate(stripped) if ch in "{["][:_MAX_STARTS]
    candidates += [stripped[i:] for i in starts if i > 0]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        if not candidate:
            continue
        try:
            value, _ = decoder.raw_decode(candidate)
        except ValueError:
            continue
        yield value


def object_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A JSON object schema for the answer: the type's own when it is an object, else it wrapped in
    ``{"result": ...}`` (vendors and tools take objects only), ``$defs`` kept at the top."""
    if schema.get("type") == "object":
        return schema, False
    defs = schema.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object", "properties": {WRAP_KEY: schema}, "required": [WRAP_KEY],
    }
    if defs:
        wrapped["$defs"] = defs
    return wrapped, True


def _subschemas(schema: dict[str, Any]) -> list[Any]:
    """The schemas nested in ``schema`` (property names and enum values are not schemas)."""
    nested: list[Any] = []
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        if isinstance(schema.get(key), dict):
            nested.extend(schema[key].values())
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(schema.get(key), list):
            nested.extend(schema[key])
    for key in ("items", "additionalProperties", "not"):
        if isinstance(schema.get(key), dict):
            nested.append(schema[key])
    return nested


def closed_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` whose objects with properties say ``additionalProperties: false`` (pydantic
    ignores extra keys anyway; strict vendors require it said)."""
    copy = json.loads(json.dumps(schema))
    pending: list[Any] = [copy]
    while pending:
        node = pending.pop()
        if not isinstance(node, dict):
            continue
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("additionalProperties", False)
        pending.extend(_subschemas(node))
    return copy  # type: ignore[no-any-return]


#: The keywords OpenAI's strict mode takes; a schema using any other (``default``, ``minLength``,
#: ``allOf``...) is sent non-strict rather than rewritten, and validation catches what slips through.
_STRICT_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const",
    "$ref", "$defs", "definitions", "title", "description", "pattern", "format", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
})


def strict_compatible(schema: dict[str, Any]) -> bool:
    """Whether OpenAI's strict mode takes ``schema``: known keywords only, every object closed, with
    all its properties required (a field with a default is optional, which strict mode cannot say)."""
    pending: list[Any] = [schema]
    while pending:
        node = pending.pop()
        if not isinstance(node, dict) or not set(node) <= _STRICT_KEYWORDS:
            return False
        if node.get("type") == "object":
            props = node.get("properties")
            if not isinstance(props, dict) or node.get("additionalProperties") is not False:
                return False
            if set(node.get("required", ())) != set(props):
                return False
        pending.extend(_subschemas(node))
    return True
