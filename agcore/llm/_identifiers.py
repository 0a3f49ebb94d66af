"""Fitting an identifier someone else wrote to a vendor's rules (alphabet, length).

Tool-call ids and tool names cross vendors: an id one API wrote may break another's pattern or
length. An identifier that fits is kept; any other is cleaned and suffixed with a short hash of the
original, so the result is deterministic (a tool call and its result still agree) and two originals
that clean to the same text stay distinct.
"""

from __future__ import annotations

import hashlib
import re

from agcore._clock import new_id

__all__ = ["fit_identifier", "new_call_id"]

_HASH_LENGTH = 8


def fit_identifier(
    value: str, *, max_length: int, invalid: re.Pattern[str] | None = None, empty_prefix: str = "id"
) -> str:
    """``value`` if it has at most ``max_length`` characters and (when ``invalid`` is given) is
    non-empty with no character ``invalid`` matches; otherwise the cleaned, cut value (or
    ``empty_prefix`` when nothing is left) followed by ``_`` and 8 hex digits of its SHA-256."""
    fits = len(value) <= max_length and (invalid is None or (bool(value) and not invalid.search(value)))
    if fits:
        return value
    digest = hashlib.sha256(value.encode()).hexdigest()[:_HASH_LENGTH]
    cleaned = invalid.sub("_", value) if invalid is not None else value
    base = cleaned[: max_length - _HASH_LENGTH - 1]
    return f"{base}_{digest}" if base else f"{empty_prefix}_{digest}"


def new_call_id() -> str:
    """A fresh tool-call id, OpenAI-shaped (``call_`` + 24 hex digits), for calls that came without
    one (Ollama, some OpenAI-compatible servers, the test doubles)."""
    return f"call_{new_id()[:24]}"
