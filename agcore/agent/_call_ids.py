"""Tool-call ids made unique before a reply enters the history.

Results are matched to calls by id, so two calls sharing one would get one result twice (the other's
lost, the model handed the wrong data) and a history some vendors reject: Anthropic requires every
``tool_use`` id in a request to be unique, so one such reply would fail every later turn. Models do
not choose ids, servers do, and some OpenAI-compatible servers number calls (``call_0``, ``call_1``
in every reply) or repeat one id. A repeated id gets a suffix (``call_0`` -> ``call_0_2``), the same
in the call and its result, so the history stays valid for every vendor.
"""

from __future__ import annotations

from collections.abc import Sequence

from agcore.agent._messages import AgentMessage
from agcore.llm.types import AssistantMessage, ContentBlock, ToolUseBlock

__all__ = ["unique_call_ids"]


def unique_call_ids(message: AssistantMessage, history: Sequence[AgentMessage]) -> AssistantMessage:
    """``message`` with each tool call's id unique within itself and ``history`` (itself if it is)."""
    calls = message.tool_calls
    if not calls:
        return message
    # By ``kind``, not isinstance: cheap in Temporal's workflow sandbox too (see convert_to_llm).
    taken = {c.id for m in history if m.kind == "assistant" for c in m.message.tool_calls}
    if len({c.id for c in calls}) == len(calls) and taken.isdisjoint(c.id for c in calls):
        return message
    content: list[ContentBlock] = []
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            unique, n = block.id, 1
            while unique in taken:
                n += 1
                unique = f"{block.id}_{n}"
            taken.add(unique)
            if unique != block.id:
                block = block.model_copy(update={"id": unique})
        content.append(block)
    return message.model_copy(update={"content": content})
