"""Which runtime runs a session: agcore's own loop, or a backend such as LangGraph.

``AgentConfig.backend`` names it (``AgentBuilder().backend("langgraph")``); ``open_session`` makes
the session on it with ``AgentSession``'s arguments. ``"loop"`` is ``AgentSession``; any other name is
looked up in the ``agcore.backends`` entry-point group, whose entries name a session class taking
``(agent, session_id, bundle, **kwargs)`` (agcore's own: ``langgraph`` ->
``agcore.integrations.langgraph:GraphSession``, with the ``langgraph`` extra). The kernel never
imports a backend: the backend's package registers itself, as hook plugins do.
"""

from __future__ import annotations

import difflib
from collections.abc import AsyncIterator, Iterable
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Protocol, cast

from agcore.agent._backend_names import LANGGRAPH_BACKEND, LOOP_BACKEND
from agcore.agent._errors import ConfigError

if TYPE_CHECKING:
    from agcore.agent._agent_protocol import Agent
    from agcore.agent._bundle import RuntimeBundle
    from agcore.agent._cost import CostTracker
    from agcore.agent._events import AgentEvent
    from agcore.agent._messages import AgentMessage
    from agcore.agent._session import AgentSession
    from agcore.agent._turn import TurnResult
    from agcore.llm.types import ToolResultBlock, UserMessage

__all__ = ["BACKEND_GROUP", "ConversationSession", "backend_names", "check_backend", "open_session"]

#: The entry-point group backends register their session class in.
BACKEND_GROUP = "agcore.backends"


class ConversationSession(Protocol):
    """What ``AgentSession`` and every backend's session have in common: the turn API."""

    session_id: str

    @property
    def messages(self) -> list[AgentMessage]:
        """The history so far, in order (what the model saw and said, tool results, notes)."""

    @property
    def last_result(self) -> TurnResult | None:
        """How the latest turn ended; None before the first turn ends."""

    @property
    def usage(self) -> CostTracker:
        """Tokens and cost of the conversation so far."""

    @property
    def in_process(self) -> AgentSession:
        """The ``AgentSession`` the conversation's turns run on in this process (itself, for one)."""

    async def submit_turn(self, input: str | UserMessage) -> TurnResult:
        """Run a turn on ``input`` to its end and return how it ended."""

    def stream_turn(self, input: str | UserMessage) -> AsyncIterator[AgentEvent]:
        """Run a turn on ``input``, yielding its events as they happen; ``last_result`` holds how it ended."""

    async def resume(self, tool_results: Iterable[ToolResultBlock]) -> TurnResult:
        """Continue a turn paused for client tools with their results."""

    def steer(self, message: str | UserMessage) -> None:
        """New user input for the running turn: the model reads it in its next call."""

    def follow_up(self, message: str | UserMessage) -> None:
        """User input taken when the loop would otherwise end: the turn continues with it."""

    async def close(self) -> None:
        """End the session for the hooks (``on_session_end``)."""


def backend_names() -> list[str]:
    """The backends a session can run on here: ``"loop"`` and the installed entry points."""
    return [LOOP_BACKEND, *sorted({e.name for e in entry_points(group=BACKEND_GROUP)} - {LOOP_BACKEND})]


def check_backend(name: str) -> None:
    """``ConfigError`` unless ``name`` is a backend installed here, saying which one was meant (a
    misspelling or an abbreviation: ``lg`` is ``langgraph``) or which extra brings it."""
    names = backend_names()
    if name not in names:
        known = [*names, *(k for k in _EXTRAS if k not in names)]
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6) or _abbreviated(name, known)
        if close and close[0] in names:
            fix = f"Did you mean {close[0]!r}?"
        elif close:  # a known backend whose extra is missing
            fix = f"It needs agcore's extra: pip install 'agcore[{close[0]}]'."
        elif missing := [k for k in _EXTRAS if k not in names]:
            fix = f"Other backends come with agcore's extras, e.g. pip install 'agcore[{missing[0]}]'."
        else:
            fix = "Choose one of them."
        raise ConfigError(
            f"No session backend named {name!r}: the installed ones are {', '.join(names)}. {fix}",
            piece="backend",
        )


#: The backends agcore's extras bring (``pip install 'agcore[NAME]'``).
_EXTRAS = (LANGGRAPH_BACKEND,)


def _abbreviated(name: str, known: list[str]) -> list[str]:
    """The one name in ``known`` that ``name`` abbreviates (its letters in order, the first first)."""
    def abbreviates(full: str) -> bool:
        letters = iter(full)
        return bool(name) and full.startswith(name[0]) and all(c in letters for c in name)

    found = [k for k in known if abbreviates(k)]
    return found if len(found) == 1 else []


def open_session(
    agent: Agent, session_id: str | None = None, bundle: RuntimeBundle | None = None, **kwargs: Any
) -> ConversationSession:
    """A session with ``AgentSession``'s arguments, on the backend ``bundle.config().backend`` names
    (``AgentSession`` itself for ``"loop"``). ``ConfigError`` for a backend not installed here."""
    from agcore.agent._session import AgentSession

    name = bundle.config().backend if bundle is not None else LOOP_BACKEND
    if name == LOOP_BACKEND:
        return AgentSession(agent, session_id, bundle, **kwargs)
    check_backend(name)
    [entry] = [e for e in entry_points(group=BACKEND_GROUP) if e.name == name][:1]
    try:
        session_class = entry.load()
    except ImportError as exc:
        raise ConfigError(
            f"The {name!r} backend could not be loaded ({exc}); install what it needs "
            f"(pip install 'agcore[{name}]').",
            piece="backend",
            cause=exc,
        ) from exc
    return cast(ConversationSession, session_class(agent, session_id, bundle, **kwargs))
