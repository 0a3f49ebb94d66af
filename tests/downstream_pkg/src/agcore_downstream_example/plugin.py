"""The package's hook plugin, found by agcore through the ``agcore`` entry-point group.

It counts the turns it sees and denies any tool call that would write, whatever agent runs.
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
    if call.name in WRITING_TOOLS:
        return ToolCallDecision.deny(f"the {ctx.agent_name} agent may only read: {call.name} is not allowed")
    return None
