"""A ``GraphSession``'s state between turns: loaded from its thread's checkpoint, and saved to it.

The nodes keep the checkpoint current while a turn runs. Between turns, an application may change
what the session holds (``app_state``: ``execute_plan`` keeps a plan's progress there), and a new
process may pick a thread up before its next turn (to show its history, or to continue its plan).
``load_thread`` and ``save_thread`` are, for a thread, what ``AgentSession.load`` and
``AgentSession.save`` are for a session in a store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from agcore.integrations.langgraph._shell import sync_session

if TYPE_CHECKING:
    from agcore.integrations.langgraph._session import GraphSession

__all__ = ["load_thread", "save_thread"]

#: The node a between-turns update is written as: the model node routes with ``Command``s, so an
#: update as it schedules no step (the thread stays finished, nothing runs on the next read).
_WRITER = "model"


async def load_thread(session: GraphSession) -> bool:
    """Bring ``session`` (in this process) in step with its thread's checkpoint: the history, the
    usage it adds up to and the session's state (``app_state`` with a plan's progress, approvals
    remembered, the turn counter). False when the thread has no checkpoint yet."""
    snapshot = await session.graph.aget_state(_config(session))
    if not snapshot.values:
        return False
    saved = snapshot.values.get("session_state")
    sync_session(session.session, cast(Any, snapshot.values))
    # What the checkpoint holds, as this process would have written it: the session in this process
    # is now the newer copy (changes made before the next turn are kept, not reloaded over).
    session._thread.written = saved
    return True


async def save_thread(session: GraphSession) -> bool:
    """Write the session's state (``app_state``, the plan step, approvals remembered) to its thread's
    checkpoint between turns, as ``AgentSession.save`` writes it to a store; a new thread gets its
    first checkpoint (so its id can be resumed before its first turn). False, writing nothing, while
    a run is on the thread or it waits at an interrupt: its state is saved as that run goes on.
    Load the thread first (``load_thread``): this writes the state this process holds."""
    if session.running:
        return False
    config = _config(session)
    snapshot = await session.graph.aget_state(config)
    if snapshot.next:
        return False
    written = session.state.to_json()
    await session.graph.aupdate_state(
        config, {"session_id": session.session_id, "session_state": written}, as_node=_WRITER
    )
    session._thread.written = written  # the next run keeps what changes after this, as after a node
    return True


def _config(session: GraphSession) -> Any:
    return {"configurable": {"thread_id": session.session_id}}
