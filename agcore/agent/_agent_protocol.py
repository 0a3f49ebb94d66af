"""The ``Agent`` protocol (see ``_agent`` for how it is used), apart from ``BasicAgent``, so that what
runs an agent needs only the protocol."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from agcore.agent._bundle import RuntimeBundle
    from agcore.llm.types import ToolDefinition

__all__ = ["Agent", "default_tool_definitions"]


def default_tool_definitions(bundle: RuntimeBundle) -> list[ToolDefinition]:
    """Every tool in ``bundle.tool_registry()``, server and client, in registration order."""
    return bundle.tool_registry().definitions()


@runtime_checkable
class Agent(Protocol):
    """A role a session plays. ``name`` identifies it in hooks and logs; ``system_prompt`` is sent
    with every model call (None: no system prompt); ``tool_definitions(bundle)`` is what the model
    may call, asked before every model call (override it to filter)."""

    # Type checkers see read-only properties, so a frozen dataclass, a property or a plain attribute
    # all satisfy the protocol. At runtime they are plain class attributes: a property here would be
    # a data descriptor that breaks a dataclass subclass assigning ``name`` or ``system_prompt``.
    if TYPE_CHECKING:

        @property
        def name(self) -> str: ...

        @property
        def system_prompt(self) -> str | None:
            return None

    else:
        name: str
        system_prompt = None

    def tool_definitions(self, bundle: RuntimeBundle) -> list[ToolDefinition]:
        """The tools offered to the model in its next call; the default offers every tool in the bundle's
        registry."""
        return default_tool_definitions(bundle)


