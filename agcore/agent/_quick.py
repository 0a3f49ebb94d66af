"""One object, one call: ``QuickAgent(name=..., model=..., tools=[...]).run_sync("…")``.

What ``run()`` does is what an application writes by hand with the three objects, and nothing more:
a bundle from the agent's model (or provider) and tools (``AgentBuilder``), a new ``AgentSession``,
one ``submit_turn``, then the session closed and the provider it made given back. The three-object
form stays the way to grow: plugins, memory, saved sessions, streaming, steering, client tools; and
a ``QuickAgent`` is a ``BasicAgent``, so the same object goes into an ``AgentSession`` unchanged.
(A class of its own, not methods on ``BasicAgent``: the session imports the agent module, so the
agent module importing the session would close an import circle.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, get_args

import anyio

from agcore.agent._agent import BasicAgent
from agcore.agent._builder import AgentBuilder
from agcore.agent._cost import CostTracker
from agcore.agent._errors import ConfigError
from agcore.agent._messages import AgentMessage
from agcore.agent._session import AgentSession, ConfirmCallback
from agcore.agent._turn import TurnResult
from agcore.llm.provider import LLMProvider
from agcore.llm.types import UserMessage
from agcore.tools import Tool

if TYPE_CHECKING:
    from agcore.agent._bundle import RuntimeBundle

__all__ = ["AgentRunResult", "QuickAgent"]


@dataclass(frozen=True)
class AgentRunResult:
    """What ``BasicAgent.run()`` returns. ``output`` is the answer: validated into the output type
    when the agent or the call has one, else the text; ``text`` is the text either way; ``turn`` the
    full ``TurnResult`` (how it ended, the model calls made)."""

    output: Any
    text: str
    turn: TurnResult
    session_id: str
    _messages: list[AgentMessage] = field(repr=False)
    _usage: CostTracker = field(repr=False)

    def usage(self) -> CostTracker:
        """Tokens and cost in one place: ``input_tokens``, ``output_tokens``, ``total_tokens``,
        ``cost_usd`` (None for a model the registry has no price for), ``calls``, ``by_model``."""
        return self._usage

    def all_messages(self) -> list[AgentMessage]:
        """The conversation so far (the history given, then this run's messages): pass it as the next
        run's ``message_history`` to go on with it."""
        return list(self._messages)

    def new_messages(self) -> list[AgentMessage]:
        """The messages this run added."""
        return list(self.turn.messages)


@dataclass(frozen=True)
class QuickAgent(BasicAgent):
    """A ``BasicAgent`` that runs on its own: ``model`` (a spec such as
    ``"anthropic:claude-haiku-4-5"``) or ``provider`` (an ``LLMProvider``: a test double, a provider
    you configured) and its ``tools`` (``Tool`` s or plain functions) are all it needs.

    ``await agent.run("…")`` or ``agent.run_sync("…")`` runs one turn in a new session and returns an
    ``AgentRunResult``. In an ``AgentSession`` with a bundle it is a ``BasicAgent`` like any other
    (``model`` and ``provider`` play no part there: the bundle's model runs)."""

    #: The model ``run()`` calls (an ``agcore.llm.create_provider`` spec).
    model: str | None = None
    #: The provider ``run()`` calls, instead of ``model``.
    provider: LLMProvider | None = None

    async def run(
        self,
        prompt: str | UserMessage,
        *,
        output_type: Any = None,
        message_history: Sequence[AgentMessage] = (),
        confirm: ConfirmCallback | None = None,
    ) -> AgentRunResult:
        """One turn on this agent's model with its tools, in a new session: ``.output`` is the answer
        (typed by ``output_type`` or the agent's, else the text), ``.usage()`` the tokens and cost.
        ``message_history`` (a previous ``result.all_messages()``) continues that conversation;
        ``confirm`` is asked before tools that need confirmation (without it they are refused). A
        turn that fails raises its ``AgentError`` (``LimitExceeded``, ``AgentLLMError``, ...)."""
        bundle = quick_bundle(self)
        session = AgentSession(self, None, bundle, confirm=confirm, messages=_history(message_history))
        try:
            turn = await session.submit_turn(prompt, output_type=output_type)
        finally:
            await session.close()
            if self.provider is None:  # made from `model`: give back this run's share of its client
                aclose = getattr(bundle.provider(), "aclose", None)
                if aclose is not None:
                    await aclose()
        if turn.error is not None:
            raise turn.error
        typed = output_type is not None or self.output_type is not None
        return AgentRunResult(output=turn.output if typed else turn.text, text=turn.text, turn=turn,
                              session_id=session.session_id, _messages=list(session.messages),
                              _usage=session.usage)

    def run_sync(
        self,
        prompt: str | UserMessage,
        *,
        output_type: Any = None,
        message_history: Sequence[AgentMessage] = (),
        confirm: ConfirmCallback | None = None,
    ) -> AgentRunResult:
        """``run()`` from synchronous code, in an event loop of its own (from async code, await
        ``run()``: this raises ``RuntimeError`` there)."""
        try:
            anyio.get_current_task()
        except RuntimeError:  # no event loop running: the one case run_sync is for
            return anyio.run(partial(self.run, prompt, output_type=output_type,
                                     message_history=message_history, confirm=confirm))
        raise RuntimeError("run_sync() was called from async code (an event loop is running): "
                           "use `await agent.run(...)` there instead.")

    def as_tool(self, bundle: RuntimeBundle | None = None, **options: Any) -> Tool:
        """This agent as a sub-agent tool (``BasicAgent.as_tool``). Without ``bundle`` it runs on its
        own model (or provider) with its own tools, as ``run()`` does, not on the parent's: the tools
        it was given are not in the parent's bundle."""
        return super().as_tool(bundle if bundle is not None else quick_bundle(self), **options)


def quick_bundle(agent: QuickAgent) -> RuntimeBundle:
    """The bundle ``run()`` uses: the agent's model or provider, and the tools it was given as
    ``Tool`` s or functions. ``ConfigError`` when it has neither a model nor a provider, or both."""
    if (agent.model is None) == (agent.provider is None):
        given = "both model= and provider=" if agent.model is not None else "no model"
        raise ConfigError(
            f"QuickAgent {agent.name!r} has {given}: give it one, model='anthropic:claude-haiku-4-5' "
            "(any create_provider spec) or provider=... (a test double, say); or run it in an "
            "AgentSession with a bundle from AgentBuilder.",
            piece="provider",
        )
    builder = AgentBuilder()
    if agent.provider is not None:
        builder.provider(agent.provider)
    else:
        builder.model(agent.model or "")
    if agent.tools is not None and not callable(agent.tools):
        builder.tools(t for t in agent.tools if isinstance(t, Tool))
    return builder.build()


# The kinds of AgentMessage, read from its union (Annotated[A | B | ..., discriminator]).
_AGENT_MESSAGE_TYPES: tuple[type, ...] = get_args(get_args(AgentMessage)[0])


def _history(messages: Sequence[AgentMessage]) -> list[AgentMessage]:
    """``message_history`` as the session takes it: the messages a result gave
    (``result.all_messages()``), not strings or LLM-level ``UserMessage``s."""
    history = list(messages)
    strays = [m for m in history if not isinstance(m, _AGENT_MESSAGE_TYPES)]
    if strays:
        raise TypeError(
            f"message_history takes the messages of an earlier run (result.all_messages()), not "
            f"{type(strays[0]).__name__}: to start a conversation with text, put it in the prompt, or "
            "pass agcore.agent.UserInput(content=...) messages"
        )
    return history
