"""Sub-agents: an agent run as a tool in a child session (``agent_tool``), its links to the parent
(events, budgets: the ``SubagentLinks`` capability) and its sessions in the parent's store.

All of it is also importable from ``agcore.agent``; loaded on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agcore._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from agcore.agent.subagents._subagent import (
        DEFAULT_MAX_DEPTH,
        DEFAULT_SUBAGENT_TIMEOUT,
        agent_tool,
        run_subagent,
        subagent_of,
        subagent_session_id,
    )
    from agcore.agent.subagents._subagent_links import SubagentLinks
    from agcore.agent.subagents._subagent_store import list_subagent_sessions

#: Each public name and the module defining it (``agcore.agent`` re-exports them from this map).
EXPORTS = {
    "DEFAULT_MAX_DEPTH": "agcore.agent.subagents._subagent",
    "DEFAULT_SUBAGENT_TIMEOUT": "agcore.agent.subagents._subagent",
    "SubagentLinks": "agcore.agent.subagents._subagent_links",
    "agent_tool": "agcore.agent.subagents._subagent",
    "list_subagent_sessions": "agcore.agent.subagents._subagent_store",
    "run_subagent": "agcore.agent.subagents._subagent",
    "subagent_of": "agcore.agent.subagents._subagent",
    "subagent_session_id": "agcore.agent.subagents._subagent",
}

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_SUBAGENT_TIMEOUT",
    "SubagentLinks",
    "agent_tool",
    "list_subagent_sessions",
    "run_subagent",
    "subagent_of",
    "subagent_session_id",
]


def __getattr__(name: str) -> Any:
    return lazy_getattr(__name__, EXPORTS, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, EXPORTS)
