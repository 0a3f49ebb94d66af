"""``Agent``: what a session runs — a name, a system prompt, and the tools it offers the model.

``Agent`` is a ``typing.Protocol`` used two ways:

* subclass it explicitly to inherit the defaults (``system_prompt`` is None, ``tool_definitions``
  offers every tool in the bundle's registry)::

      class Reviewer(Agent):
          name = "reviewer"
          system_prompt = SystemPrompt("You review pull requests.").tool_rules(*DEFAULT_TOOL_RULES).render()

* or satisfy it structurally: any object with ``name``, ``system_prompt`` and ``tool_definitions``
  passes ``isinstance(obj, Agent)``.

``BasicAgent`` is a ready-made one for applications that do not subclass (``QuickAgent``, one that
also runs on its own, subclasses it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agcore.agent._agent_protocol import Agent, default_tool_definitions
from agcore.agent._errors import ConfigError
from agcore.llm.types import ToolDefinition
from agcore.tools import Tool, UnknownToolError

if TYPE_CHECKING:
    from agcore.agent._bundle import RuntimeBundle

__all__ = ["Agent", "BasicAgent", "default_tool_definitions"]


@dataclass(frozen=True)
class BasicAgent:
    """An ``Agent`` from data. ``tools`` picks the tools offered: None for all of the registry's, a
    sequence of tools (``Tool`` s, plain functions, or names of tools in the bundle; in that order; a
    name the registry lacks is a ``ConfigError``), or a predicate on each ``Tool``. ``output_type`` (a
    pydantic type, or a ``StructuredOutput``) types every turn's final answer unless
    ``submit_turn(..., output_type=...)`` says otherwise; any ``Agent`` may carry an ``output_type``
    attribute to the same effect. (A ``Tool`` or function is offered by its name: the bundle must
    have it; ``QuickAgent`` registers them in the bundle it builds.)"""

    name: str
    system_prompt: str | None = None
    tools: Sequence[str | Tool | Callable[..., Any]] | Callable[[Tool], bool] | None = None
    #: The type every turn's answer is validated into (``TurnResult.output``); None: plain text.
    output_type: Any = None

    def __post_init__(self) -> None:
        if self.output_type is not None:  # a bad type is a ConfigError here, not at the first turn
            from agcore.agent.output._output import resolve_output

            resolve_output(self.output_type, None)
        tools = self.tools
        if tools is not None and not callable(tools) and not isinstance(tools, str) \
                and not all(isinstance(t, str | Tool) for t in tools):
            # Functions become tools once, here: a bad signature fails now, not at the first call.
            object.__setattr__(self, "tools", [_as_tool(t, self.name) for t in tools])

    def tool_definitions(self, bundle: RuntimeBundle) -> list[ToolDefinition]:
        """The tools ``tools`` picks from the bundle's registry. Raises ``ConfigError`` for a name the
        registry lacks."""
        registry = bundle.tool_registry()
        if self.tools is None:
            return registry.definitions()
        if callable(self.tools):
            return registry.definitions(predicate=self.tools)
        names = [self.tools] if isinstance(self.tools, str) else [
            t if isinstance(t, str) else t.name for t in self.tools if isinstance(t, str | Tool)
        ]
        try:
            return registry.definitions(names=names)
        except UnknownToolError as exc:
            raise ConfigError(
                f"Agent '{self.name}' offers the tool '{exc.tool_name}', which the bundle's tool "
                "registry does not have: register the tool, or remove it from the agent's tools.",
                piece="tools",
                cause=exc,
            ) from exc

    def as_tool(self, bundle: RuntimeBundle | None = None, **options: Any) -> Tool:
        """This agent as a sub-agent tool: ``agent_tool(self, bundle, **options)`` (``name``,
        ``description``, ``max_turns``, ``max_depth``, ``timeout``...)."""
        from agcore.agent.subagents._subagent import agent_tool

        return agent_tool(self, bundle, **options)


def _as_tool(item: object, agent: str) -> str | Tool:
    if isinstance(item, str | Tool):
        return item
    if callable(item):
        return Tool.from_function(item)
    raise ConfigError(
        f"Agent '{agent}' was given {item!r} as a tool: give a Tool (@tool), a function, or the name of "
        "a tool in the bundle.",
        piece="tools",
    )
