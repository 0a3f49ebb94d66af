"""``DocsAgent``: an agent that writes a project's documentation.

It subclasses agcore's ``Agent`` protocol explicitly, builds its system prompt from ``SystemPrompt``
sections, and overrides ``tool_definitions`` so the model is only offered the tools a documentation
writer needs: it can read and search everything, write files, search memory, but never run commands.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from agcore.agent import DEFAULT_SAFETY_RULES, DEFAULT_TOOL_RULES, Agent, SystemPrompt
from agcore.llm import ToolDefinition

if TYPE_CHECKING:
    from agcore.agent import RuntimeBundle

__all__ = ["DocsAgent"]


class DocsAgent(Agent):
    """Writes and updates Markdown documentation in a workspace.

    ``workspace`` is named in the system prompt (the tools themselves are bound to it by the
    application); ``style`` is a house style guide added as its own section.
    """

    name = "docs_writer"
    #: The tools this agent is offered when the bundle has them; everything else is hidden from it.
    TOOLS = frozenset({"read_file", "list_dir", "glob", "grep", "write_file", "apply_patch", "retrieve"})

    def __init__(self, workspace: str | os.PathLike[str] | None = None, *, style: str | None = None) -> None:
        prompt = (
            SystemPrompt("You are a technical writer. You document the project in the workspace: "
                         "accurate, short, with examples taken from the code itself.")
            .tool_rules(*DEFAULT_TOOL_RULES,
                        "Read the code before you describe it; quote real names, never invented ones.")
            .safety_rules(*DEFAULT_SAFETY_RULES)
            .memory("Search memory (`retrieve`) for the project's conventions before you write.")
        )
        if workspace is not None:
            prompt.workspace(workspace, summary="Documentation lives in docs/ and README.md.")
        if style:
            prompt.extra(style, title="House style")
        self._prompt = prompt.render()

    @property
    def system_prompt(self) -> str:
        return self._prompt

    def tool_definitions(self, bundle: RuntimeBundle) -> list[ToolDefinition]:
        # super() gives every tool of the bundle's registry (the protocol's default); keep ours.
        return [d for d in super().tool_definitions(bundle) if d.name in self.TOOLS]
