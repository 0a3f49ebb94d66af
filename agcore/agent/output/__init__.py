"""Typed final answers: ``StructuredOutput`` (how the answer is asked for and validated) and the
``TypedOutput`` capability that settles a turn's answer.

All of it is also importable from ``agcore.agent``; loaded on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agcore._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from agcore.agent.output._output import (
        OutputMode,
        OutputValidationError,
        StructuredOutput,
        resolve_output,
    )
    from agcore.agent.output._output_capability import TypedOutput

#: Each public name and the module defining it (``agcore.agent`` re-exports them from this map).
EXPORTS = {
    "OutputMode": "agcore.agent.output._output",
    "OutputValidationError": "agcore.agent.output._output",
    "StructuredOutput": "agcore.agent.output._output",
    "TypedOutput": "agcore.agent.output._output_capability",
    "resolve_output": "agcore.agent.output._output",
}

__all__ = [
    "OutputMode",
    "OutputValidationError",
    "StructuredOutput",
    "TypedOutput",
    "resolve_output",
]


def __getattr__(name: str) -> Any:
    return lazy_getattr(__name__, EXPORTS, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, EXPORTS)
