"""Finding a session's sub-agents in its store: what its children did, from any process.

A child session is saved in its parent's store under ``subagent_session_id(parent_id, call_id)``, with
``app_state["subagent"]`` saying whose child it is; ``list_subagent_sessions`` finds a parent's
children from the store alone (the parent need not be loaded), and ``AgentSession.load`` opens one.
A child whose process stopped mid-turn loads like any interrupted session: its open calls get
"interrupted" results, so its history is valid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agcore.agent.subagents._subagent import subagent_session_id

if TYPE_CHECKING:
    from agcore.memory import SessionRecord, SessionStore

__all__ = ["list_subagent_sessions"]


async def list_subagent_sessions(
    store: SessionStore, parent_session_id: str, *, recursive: bool = False
) -> list[SessionRecord]:
    """The records of the sessions ``parent_session_id``'s sub-agents ran in (its direct children; with
    ``recursive``, their children too), oldest first. Reads every record of the store: fine for the
    stores agcore ships; page through ``store.list_sessions`` yourself for a very large one."""
    prefix = subagent_session_id(parent_session_id, "")
    found = []
    for record in await store.list_sessions():
        rest = record.session_id[len(prefix):] if record.session_id.startswith(prefix) else None
        if rest and (recursive or "/sub/" not in rest):
            found.append(record)
    found.sort(key=lambda r: (r.created_at, r.session_id))
    return found
