"""``SessionLike``: what the turn's steps, the capabilities and persistence need of a session.

``AgentSession`` is the one implementation agcore ships; the steps (``agcore.agent.steps``) and
every capability are written against this protocol, not against ``AgentSession``, so the kernel's
modules depend downward only and a runtime may bring a session of its own. What a session holds
besides its messages is its ``state`` (``SessionState``), one object every runtime saves.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal, Protocol, cast

from agcore.llm.types import Message, ToolUseBlock

if TYPE_CHECKING:
    from agcore.agent._agent_protocol import Agent
    from agcore.agent._bundle import RuntimeBundle
    from agcore.agent._cost import CostTracker
    from agcore.agent._messages import AgentMessage
    from agcore.agent._result import TurnResult
    from agcore.agent.session_state import SessionState
    from agcore.hooks import HookContext
    from agcore.memory import SessionStore
    from agcore.tools import Tool, ToolContext

__all__ = ["ConfirmCallback", "ContextTransform", "SessionLike", "checked_confirm"]

#: Asked before a tool with ``requires_confirmation`` runs: True runs it, False refuses it, "always"
#: runs it and every later call of that tool in this session. Sync or async.
ConfirmCallback = Callable[
    [ToolUseBlock, "Tool"],
    "bool | Literal['always'] | Awaitable[bool | Literal['always']]",
]


def checked_confirm(confirm: object) -> ConfirmCallback | None:
    """``confirm`` if it is a ``ConfirmCallback`` or None; anything else (``"always"``, ``True``) is a
    ``ValueError`` now, rather than a ``TypeError`` at the first tool that needs confirmation."""
    if confirm is None:
        return None
    if callable(confirm):  # its signature is the caller's promise: a callable cannot be checked further
        return cast("ConfirmCallback", confirm)
    raise ValueError(
        f"confirm={confirm!r} is not accepted: pass a callable (call, tool) returning True, False or "
        '"always" (sync or async), or None to refuse every tool that needs confirmation. To run them all '
        "without asking, pass confirm=lambda call, tool: True."
    )


#: Rewrites what the model sees before each call (compaction plugs in here). Sync or async.
ContextTransform = Callable[[list[Message]], "list[Message] | Awaitable[list[Message]]"]


class SessionLike(Protocol):
    """A conversation the turn's steps run on (``AgentSession`` is one)."""

    session_id: str
    agent: Agent
    bundle: RuntimeBundle
    #: The history; the steps only ever append to it (through ``record``).
    messages: list[AgentMessage]
    #: Everything else the session holds, as one object (``SessionState``).
    state: SessionState
    #: Tokens and cost so far (the steps add each reply's usage).
    usage: CostTracker
    confirm: ConfirmCallback | None
    transform: ContextTransform | None
    #: The latest turn's result (the steps set it when a turn ends).
    last_result: TurnResult | None
    #: What the session's tools get.
    tool_context: ToolContext
    #: Turns started so far (``state.turn_index``).
    turn_index: int
    #: Whether the session switched to text-mode tool calls (``state.text_mode``).
    switched_to_text_mode: bool

    @property
    def parent(self) -> SessionLike | None:
        """The session that delegated to this one (a sub-agent's), or None."""
        ...

    @property
    def created_at(self) -> float:
        """When the conversation began, epoch seconds."""
        ...

    @property
    def store(self) -> SessionStore | None:
        """Where the session is saved (None: nowhere)."""
        ...

    @property
    def pending_client_calls(self) -> list[ToolUseBlock]:
        """The client calls a paused turn waits for."""
        ...

    def hook_context(self) -> HookContext:
        """The ``HookContext`` hooks get now."""
        ...

    async def record(self, message: AgentMessage, *, save: bool = True) -> None:
        """Append ``message`` to the history, save it (with a store), show it to ``on_message``."""
        ...

    async def save(self, *, replace: bool = False) -> None:
        """Write what changed since the last save (``store`` must be set)."""
        ...
