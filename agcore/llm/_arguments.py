"""Reading the argument JSON a model wrote for a tool call.

Models (small local ones especially) write trailing commas, unterminated strings, missing commas.
What json-repair can mend is mended; what it cannot becomes ``parse_error`` on the ``ToolUseBlock``,
which the loop answers with an error result the model can read, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["parse_tool_arguments"]


def parse_tool_arguments(raw: str | Mapping[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    """Return ``(arguments, parse_error)``; ``parse_error`` is None when arguments could be read."""
    if raw is None:
        return {}, None
    if isinstance(raw, Mapping):  # some OpenAI-compatible servers send an object, not a string
        return dict(raw), None
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError:
        import json_repair  # only for broken JSON: most calls never pay its import

        value = json_repair.loads(raw)
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
    if isinstance(value, dict):
        return value, None
    shown = raw if len(raw) <= 200 else raw[:200] + "…"
    if isinstance(value, str) and not value:
        problem = "are not valid JSON and could not be repaired"
    else:
        problem = f"must be a JSON object, not {type(value).__name__}"
    return {}, f"The tool arguments {problem}: {shown!r}. Call the tool again with one JSON object."
