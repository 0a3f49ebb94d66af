"""A LangGraph thread whose last run stopped midway (its process was killed): found when a chat
resumes it, and finished as ``GraphSession.recover()`` finishes it.

A new turn on such a thread would start from the last checkpoint and answer every call of the
stopped batch "cancelled", even a call that had finished (its result is a pending write that only a
recovery keeps). So the chat finishes the run first: the calls that had finished keep their results,
the others run again (asking for confirmation as any call does), and the model answers them. The loop
backend has no such state: a killed loop session's open calls are answered "interrupted, whether it
took effect is unknown" when it is loaded.
"""

from __future__ import annotations

from collections.abc import Sequence

from agcore.agent import AgentMessage, AssistantReply, ConversationSession, ToolResults
from agcore.cli._render import Renderer

__all__ = ["UNFINISHED_NOTE", "finish_unfinished", "show_messages", "unfinished_run"]

UNFINISHED_NOTE = ("The last run of this session did not finish (its process was stopped): finishing it "
                   "from its last checkpoint. Calls that finished keep their results; the others run again.")


async def unfinished_run(session: ConversationSession) -> bool:
    """Whether ``session`` is a LangGraph thread left in the middle of a run (``pending()``'s
    ``agcore.unfinished``); a loop session never is."""
    from agcore.integrations.langgraph import UNFINISHED, GraphSession

    if not isinstance(session, GraphSession):
        return False
    pending = await session.pending()
    return pending is not None and pending.get("type") == UNFINISHED


async def finish_unfinished(session: ConversationSession, renderer: Renderer) -> None:
    """Finish the run ``session``'s thread was left in (``recover()``), then show what it added: the
    recovered batch's results and the replies after them (a recovery streams no events)."""
    from agcore.integrations.langgraph import GraphSession

    assert isinstance(session, GraphSession)  # unfinished_run said so
    shown = len(session.messages)
    try:
        await session.recover()
    finally:
        show_messages(renderer, session.messages[shown:])


def show_messages(renderer: Renderer, messages: Sequence[AgentMessage]) -> None:
    """Replies (their text and tool calls) and tool results, as a streamed turn shows them."""
    for message in messages:
        if isinstance(message, AssistantReply):
            if message.message.text:
                renderer.line(message.message.text)
            for call in message.message.tool_calls:
                renderer.tool_call(call)
        elif isinstance(message, ToolResults):
            for result in message.results:
                renderer.tool_result(result, "error" if result.is_error else "ok")
