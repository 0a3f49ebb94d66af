"""The package's hook plugin, found by agcore through the ``agcore`` entry-point group.

It counts the turns it sees and denies any tool call that would write while the package's own
``reviewer`` agent runs. Entry-point plugins load into every app of the environment, so a policy
plugin scopes itself to the agents it is meant for (this package is installed in agcore's dev venv).
"""

from __future__ import annotations

from agcore.hooks import HookContext, ToolCallDecision, hookimpl
from agcore.llm import ToolUseBlock, UserMessage

WRITING_TOOLS = frozenset({"write_file", "apply_patch", "undo_patch", "run_command"})
seen_turns: list[tuple[str, int]] = []


@hookimpl
def on_turn_start(ctx: HookContext, user_input: UserMessage) -> None:
    seen_turns.append((ctx.agent_name, ctx.turn_index))


@hookimpl
def before_tool_call(ctx: HookContext, call: ToolUseBlock) -> ToolCallDecision | None:
    if ctx.agent_name == "reviewer" and call.name in WRITING_TOOLS:
        return ToolCallDecision.deny(f"the {ctx.agent_name} agent may only read: {call.name} is not allowed")
    return None
