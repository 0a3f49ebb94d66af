"""The tools' context of an ``AgentSession``, holding the session weakly.

A session's ``ToolContext`` names the session among its dependencies (``ctx.get("session")``) and
reports progress through it. Held strongly, the two made every session a reference cycle (session ->
context -> session): a dropped session, with its whole history, waited for the cyclic garbage
collector instead of being freed at once. A server opening a session per request, and
``GraphSession`` (a session per conversation), then paid a collection every few turns: measured on
the LangGraph benchmark's tool-call turn, 60 objects a turn left for the collector and ~95 µs a turn
of collections (2.3% of the turn). Held weakly, a session is freed as soon as its last user lets go;
while it lives, tools see exactly what they saw before.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from agcore.tools import ToolContext, ToolProgress

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from agcore.agent.session_like import SessionLike

__all__ = ["session_tool_context"]

SESSION_KEY = "session"


class _SessionDependencies(Mapping[str, Any]):
    """``{"session": the session, **others}``, the session held weakly (absent once it is gone)."""

    __slots__ = ("_others", "_session")

    def __init__(self, session: SessionLike, others: Mapping[str, Any]) -> None:
        self._session = weakref.ref(session)
        self._others = dict(others)  # without "session" (session_tool_context took it out)

    def __getitem__(self, key: str) -> Any:
        if key == SESSION_KEY:
            session = self._session()
            if session is not None:
                return session
        return self._others[key]

    def __iter__(self) -> Iterator[str]:
        if self._session() is not None:
            yield SESSION_KEY
        yield from self._others

    def __len__(self) -> int:
        return len(self._others) + (self._session() is not None)

    def __repr__(self) -> str:
        return f"{dict(self)!r}"


def session_tool_context(
    session: SessionLike,
    dependencies: Mapping[str, Any],
    record_progress: Callable[[ToolProgress], Awaitable[None]],
) -> ToolContext:
    """The ``ToolContext`` of ``session``'s tools: its id, ``dependencies`` with the session itself
    under ``"session"`` (unless ``dependencies`` names another), and progress handed to
    ``record_progress`` (a method of the session); no strong reference back to the session."""
    others = dict(dependencies)
    given = others.pop(SESSION_KEY, None)
    deps: Mapping[str, Any]
    if given is None or given is session:
        deps = _SessionDependencies(session, others)
    else:  # the caller put something else under "session": theirs, as before
        deps = {SESSION_KEY: given, **others}
    recorder = weakref.WeakMethod(record_progress)

    async def progress(update: ToolProgress) -> None:
        record = recorder()
        if record is not None:
            await record(update)

    return ToolContext(session_id=session.session_id, dependencies=deps, progress=progress)
