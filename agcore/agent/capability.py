"""Capabilities: features that plug into the turn's public steps (``agcore.agent.steps``).

A capability is an object with any of the methods of ``Capability`` below; the steps call each at
its point of the turn, in the order the capabilities are listed (agcore's own first, then the
bundle's ``capabilities``). Every method is optional: the base class does nothing, so a capability
overrides only what it needs. agcore's own features beyond the bare loop are capabilities on this same
interface (text-mode tool calls, typed output, the turn limits, the repetition and cycle guards,
sub-agent links, the refusal of a final reply that is no answer, the user's "do not change FILE";
the acceptance checks, the claims held to the workspace and the answer review are ones you add), so
the loop names none of them, and a third party's capability is as strong as theirs.
docs/runtimes.md has one written from scratch in a dozen lines.

The points, in turn order:

* ``start_turn``: the user's input is recorded, before the first model call (classify it, look
  something up: the one point that may await before the model is called);
* ``before_model_call``: may end the turn (``Finish``) before a model call (limits, budgets);
* ``shape_request`` then ``encode_request`` then, after the ``on_llm_request`` hooks,
  ``review_request``: rewrite the ``ModelCall`` (what is asked for, how tools are offered);
* ``read_reply``: rewrite the model's reply before it is recorded (calls written as text);
* ``after_reply``: the reply is recorded; answer some of its calls, or ask the model again;
* ``before_finish``: the model answered without calls; accept the answer or ask again;
* ``before_tools``: the reply's calls are about to run; may end the turn instead;
* ``vet_call``: judge one call before the hooks do (``Vetting``) or leave it (None);
* ``batch_started`` / ``batch_done``: around a batch; ``batch_done`` may end the turn once the batch
  is recorded.

State a capability keeps for a turn lives in ``steps.turn`` (``TurnState``), saved with the turn;
a capability object itself is shared by every session of a bundle, so it keeps none.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from agcore.agent._batch import Batch
    from agcore.agent._config import AgentConfig
    from agcore.agent._errors import AgentError
    from agcore.agent._events import AgentEvent, TurnStop
    from agcore.agent._messages import AgentMessage
    from agcore.agent._turn import TurnState
    from agcore.agent.session_like import SessionLike
    from agcore.hooks import HookExecutor
    from agcore.llm.provider import LLMProvider
    from agcore.llm.types import AssistantMessage, LLMRequest, ToolUseBlock, UserMessage
    from agcore.tools import Tool

__all__ = [
    "CallMode",
    "CallModel",
    "Capability",
    "Finish",
    "ModelCall",
    "Next",
    "Reply",
    "RunTools",
    "TextFilter",
    "TurnView",
    "Vetting",
]

#: How a model call offers tools: natively, described in the prompt with calls written as text, or
#: natively with the reply checked for calls written as text (``"auto"``).
CallMode = Literal["native", "text", "auto"]


class TextFilter(Protocol):
    """Decides what of a streamed reply the user sees (calls written as text are held back)."""

    def feed(self, delta: str) -> str: ...
    def flush(self) -> str: ...
    def unseen(self, answer: str) -> str: ...


@dataclass(slots=True)
class ModelCall:
    """One model call, prepared: the provider to call, the request, and how tools are offered."""

    provider: LLMProvider
    request: LLMRequest
    tool_mode: CallMode = "native"
    #: The tools the model may call in this reply; a call to any other is refused, not run.
    offered: frozenset[str] = frozenset()
    #: Filters the streamed text before anyone sees it (None: shown as it comes).
    text_filter: TextFilter | None = None


@dataclass(slots=True)
class Reply:
    """The model's reply as the steps read it: the message, what to tell the model about it, and
    what follows (``ask_again``: nothing in it to act on, the notes say why, and ``why`` says it in a
    few words for the user; ``error``: nothing usable at all, the turn ends with it)."""

    message: AssistantMessage
    notes: list[str] = field(default_factory=list)
    ask_again: bool = False
    why: str = ""
    error: AgentError | None = None
    #: The calls still to run (a capability that answered some itself leaves the rest).
    calls: list[ToolUseBlock] = field(default_factory=list)


# ------------------------------------------------------------------- what follows a step


@dataclass(frozen=True, slots=True)
class CallModel:
    """Call the model again. A capability asking again instead of accepting the reply says ``why`` in
    a few words for the user (the steps report it as an ``AskedAgain`` event; the CLI prints it)."""

    why: str = ""


@dataclass(frozen=True, slots=True)
class RunTools:
    """Run the calls of ``batch`` (vet each, run, record)."""

    batch: Batch


@dataclass(frozen=True, slots=True)
class Finish:
    """End the turn with ``stop`` (and ``error`` for limits and failures)."""

    stop: TurnStop
    error: AgentError | None = None

    def __post_init__(self) -> None:
        if self.stop in ("error", "limit") and self.error is None:
            raise ValueError(
                f"Finish({self.stop!r}) needs the error that ended the turn: Finish({self.stop!r}, "
                "AgentError('what happened and what to do'))"
            )


Next = CallModel | RunTools | Finish

#: What the steps decided about one call: run it (``call`` is the call as it will run, arguments
#: rewritten by a hook), ask the user first, hand it to the client, nothing more to do (it has its
#: result in the batch), or stop vetting (this call and the rest have their results).
VetAction = Literal["run", "confirm", "client", "answered", "stop"]


@dataclass(frozen=True, slots=True)
class Vetting:
    """What the steps decided about one call (``action``: see ``VetAction``); ``call`` as it will
    run, ``tool`` the registry's tool (for ``run``, ``confirm`` and ``client``)."""

    action: VetAction
    call: ToolUseBlock
    tool: Tool | None = None


class TurnView(Protocol):
    """What a capability sees of the running turn (``agcore.agent.steps.TurnSteps``)."""

    @property
    def session(self) -> SessionLike: ...
    @property
    def turn(self) -> TurnState: ...
    @property
    def config(self) -> AgentConfig: ...
    @property
    def hooks(self) -> HookExecutor: ...
    def emit(self, event: AgentEvent) -> None: ...
    def record(self, message: AgentMessage) -> Awaitable[None]: ...
    def decline(self, calls: list[ToolUseBlock], reason: str) -> Awaitable[None]: ...


class Capability:
    """A feature on the turn's steps. Each method is called at its point of the turn, in the order
    the capabilities are listed (agcore's own first, then ``RuntimeBundle.capabilities``); every
    one is optional, as this base class does nothing. docs/runtimes.md has a worked example."""

    async def start_turn(self, steps: TurnView, message: UserMessage) -> None:
        """A turn started with ``message`` (recorded already), before its first model call; keep what
        you learn in ``steps.turn.capabilities`` for the points that follow."""
        return None

    def before_model_call(self, steps: TurnView) -> Finish | None:
        """Before each model call: a ``Finish`` ends the turn instead (a limit, a budget)."""
        return None

    def shape_request(self, steps: TurnView, call: ModelCall) -> Awaitable[None] | None:
        """Shape ``call`` (its request, ``tool_mode``) before the tools offered are fixed. May be
        ``async def`` (to ask the server what it can do first); the steps await it."""
        return None

    def encode_request(self, steps: TurnView, call: ModelCall) -> None:
        """Rewrite ``call.request`` for the wire once ``call.offered`` is known (before the hooks)."""
        return None

    def review_request(self, steps: TurnView, call: ModelCall) -> None:
        """Look at ``call`` after the ``on_llm_request`` hooks rewrote it (the request as sent)."""
        return None

    async def read_reply(self, steps: TurnView, call: ModelCall, reply: Reply) -> None:
        """Rewrite ``reply`` (its message, notes, ``ask_again``, ``error``) before it is recorded."""
        return None

    async def after_reply(self, steps: TurnView, reply: Reply) -> Next | None:
        """The reply is recorded: answer calls yourself (drop them from ``reply.calls``), or return
        what follows instead (``CallModel`` to ask again)."""
        return None

    async def before_finish(self, steps: TurnView, reply: Reply) -> Next | None:
        """The model answered without calls: None accepts the answer; ``CallModel`` asks again
        (record what the model should read first), ``Finish`` ends the turn otherwise."""
        return None

    async def before_tools(self, steps: TurnView, calls: list[ToolUseBlock]) -> Finish | None:
        """The reply's calls are about to run: a ``Finish`` ends the turn instead (answer the calls
        with ``steps.decline``)."""
        return None

    def vet_call(self, steps: TurnView, batch: Batch, call: ToolUseBlock) -> Vetting | None:
        """Judge ``call`` before the hooks and the approval: a ``Vetting`` decides it (answer the call
        in ``batch`` for ``answered``/``stop``), None leaves it to the next check."""
        return None

    def batch_started(self, steps: TurnView, batch: Batch) -> None:
        """A batch is about to run."""
        return None

    def batch_done(self, steps: TurnView, batch: Batch) -> Finish | None:
        """Every call of ``batch`` has its result (or waits for the client), before it is recorded;
        a ``Finish`` ends the turn once the batch is recorded."""
        return None
