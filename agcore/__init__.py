"""agcore: a protocol-first agent-runtime kernel.

The names a program reaches for first are importable from here::

    from agcore import AgentBuilder, AgentSession, BasicAgent, tool

They are loaded on first use (PEP 562), so ``import agcore`` itself stays free: each name comes from
its subpackage (``agcore.agent``, ``agcore.tools``, ``agcore.llm``, ``agcore.hooks``,
``agcore.memory``), which holds the rest of that layer's API. Test doubles for downstream users are in
``agcore.testing``. The clock/id seam (``Clock``, ``SystemClock``, ``use_clock``, ``current_clock``)
is here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agcore._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from agcore._clock import Clock, SystemClock, current_clock, use_clock
    from agcore.agent import (
        Agent,
        AgentBuilder,
        AgentConfig,
        AgentError,
        AgentEvent,
        AgentSession,
        BasicAgent,
        ConfigError,
        DefaultTaskAgent,
        Plan,
        QuickAgent,
        RuntimeBundle,
        Step,
        StepStatus,
        SystemPrompt,
        TaskAgent,
        TurnResult,
    )
    from agcore.hooks import HookContext, hookimpl
    from agcore.llm import AssistantMessage, LLMRequest, UserMessage, create_provider
    from agcore.memory import KeywordRetriever, SqliteMemoryStore, SqliteSessionStore
    from agcore.tools import Tool, ToolContext, ToolRegistry, tool

__version__ = "0.1.0"

_FROM = {
    "agcore._clock": ("Clock", "SystemClock", "current_clock", "use_clock"),
    "agcore.agent": (
        "Agent", "AgentBuilder", "AgentConfig", "AgentError", "AgentEvent", "AgentSession", "BasicAgent",
        "ConfigError", "DefaultTaskAgent", "Plan", "QuickAgent", "RuntimeBundle", "Step", "StepStatus",
        "SystemPrompt", "TaskAgent", "TurnResult",
    ),
    "agcore.hooks": ("HookContext", "hookimpl"),
    "agcore.llm": ("AssistantMessage", "LLMRequest", "UserMessage", "create_provider"),
    "agcore.memory": ("KeywordRetriever", "SqliteMemoryStore", "SqliteSessionStore"),
    "agcore.tools": ("Tool", "ToolContext", "ToolRegistry", "tool"),
}
_LAZY = {name: module for module, names in _FROM.items() for name in names}

__all__ = [
    "Agent",
    "AgentBuilder",
    "AgentConfig",
    "AgentError",
    "AgentEvent",
    "AgentSession",
    "AssistantMessage",
    "BasicAgent",
    "Clock",
    "ConfigError",
    "DefaultTaskAgent",
    "HookContext",
    "KeywordRetriever",
    "LLMRequest",
    "Plan",
    "QuickAgent",
    "RuntimeBundle",
    "SqliteMemoryStore",
    "SqliteSessionStore",
    "Step",
    "StepStatus",
    "SystemClock",
    "SystemPrompt",
    "TaskAgent",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "TurnResult",
    "UserMessage",
    "__version__",
    "create_provider",
    "current_clock",
    "hookimpl",
    "tool",
    "use_clock",
]


def __getattr__(name: str) -> Any:
    return lazy_getattr(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, _LAZY)
