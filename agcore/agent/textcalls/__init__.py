"""Text-mode tool calls: the calls a model writes in its text read back into ``ToolUseBlock``s, the
protocol taught in the prompt, the stream filtered, and the ``TextModeCalls`` capability.

All of it is also importable from ``agcore.agent``; loaded on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agcore._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from agcore.agent.textcalls._constrained import ConstrainedCalls
    from agcore.agent.textcalls._reminder_echo import is_reminder_echo
    from agcore.agent.textcalls._reply_shape import answer_format, calls_format, is_constrained
    from agcore.agent.textcalls._text_calls import parse_text_calls
    from agcore.agent.textcalls._text_capability import TextModeCalls
    from agcore.agent.textcalls._text_tools import call_mode

#: Each public name and the module defining it (``agcore.agent`` re-exports them from this map).
EXPORTS = {
    "ConstrainedCalls": "agcore.agent.textcalls._constrained",
    "TextModeCalls": "agcore.agent.textcalls._text_capability",
    "answer_format": "agcore.agent.textcalls._reply_shape",
    "call_mode": "agcore.agent.textcalls._text_tools",
    "calls_format": "agcore.agent.textcalls._reply_shape",
    "is_constrained": "agcore.agent.textcalls._reply_shape",
    "is_reminder_echo": "agcore.agent.textcalls._reminder_echo",
    "parse_text_calls": "agcore.agent.textcalls._text_calls",
}

__all__ = [
    "ConstrainedCalls",
    "TextModeCalls",
    "answer_format",
    "call_mode",
    "calls_format",
    "is_constrained",
    "is_reminder_echo",
    "parse_text_calls",
]


def __getattr__(name: str) -> Any:
    return lazy_getattr(__name__, EXPORTS, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, EXPORTS)
