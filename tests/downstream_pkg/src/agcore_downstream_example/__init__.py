"""A downstream agent: a code reviewer that may read the workspace but never change it."""

from __future__ import annotations

from agcore.agent import Agent, SystemPrompt
from agcore.llm import ToolDefinition

READ_ONLY_TOOLS = frozenset({"read_file", "list_dir", "glob", "grep"})


class ReviewerAgent(Agent):
    """Subclasses agcore's ``Agent`` protocol explicitly and overrides the tool filter."""

    name = "reviewer"
    system_prompt = SystemPrompt(
        identity="You are a careful code reviewer.",
        tool_rules=["Read before you judge.", "Quote the lines you comment on."],
    ).render()

    def tool_definitions(self, bundle: object) -> list[ToolDefinition]:
        return [d for d in super().tool_definitions(bundle) if d.name in READ_ONLY_TOOLS]


__all__ = ["READ_ONLY_TOOLS", "ReviewerAgent"]
