"""The graph's state: agcore's own messages plus the counters of the turn in progress.

The history is the channel ``messages``: ``AgentMessage``s exactly as ``AgentSession`` records them
(each node appends what it recorded), so a history is the same whichever backend made it. It is a
``DeltaChannel``: a checkpoint stores what each step appended (a full copy every 100 updates), not the
whole history again, so a step's checkpoint costs what it added, not the conversation's length (with
the plain reducer every step re-serialised the history: 13 message encodings in a 4-message
tool-call turn instead of 4).

What a session holds besides its messages is one JSON value, ``session_state``
(``SessionState.to_json``: the same object a ``SessionStore`` saves, with the turn in progress and its
tool batch); where the vetting of a batch has got to is ``phase``. Tool tasks (one per call, sent
with ``Send``) report through ``outcomes``, a dict merged by call id, so a finished call's result is a
pending write LangGraph keeps across a crash and the call is not run again.

Checkpoints keep the messages typed: ``serde_allowlist()`` names every agcore class that can appear
in the state, and ``compile_agent`` registers it with the checkpointer's serializer, so LangGraph's
strict msgpack mode (``LANGGRAPH_STRICT_MSGPACK=true``) loads them as the same pydantic models.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, TypedDict, get_args, get_type_hints, is_typeddict

from langgraph.channels.delta import DeltaChannel
from pydantic import BaseModel

from agcore.agent import AgentMessage, ToolLog
from agcore.llm.types import ToolResultBlock, ToolUseBlock, UserMessage

__all__ = [
    "AgentState", "GraphInput", "ToolTask", "append_message_batches", "merge_outcomes", "serde_allowlist",
    "state_types",
]


def append_message_batches(
    history: list[AgentMessage], batches: list[list[AgentMessage]]
) -> list[AgentMessage]:
    """The ``messages`` reducer: a node's update is what it appended to the history; LangGraph hands
    over the updates of one or more steps at once (``DeltaChannel``)."""
    return [*history, *(message for batch in batches for message in batch)]


def merge_outcomes(
    left: dict[str, Any] | None, right: dict[str, Any] | None
) -> dict[str, Any]:
    """The ``outcomes`` reducer: tool tasks add their results by call id; an empty dict clears them
    (the batch they belong to was recorded)."""
    if right is None:
        return left or {}
    if not right:
        return {}
    return {**(left or {}), **right}


class ToolOutcome(TypedDict, total=False):
    """What one tool task reports: the result answering the model's call, with its status, and the
    progress lines the tool reported (recorded with the batch, in the order they came)."""

    result: ToolResultBlock
    status: str
    duration: float
    logs: list[ToolLog]


class ToolTask(TypedDict):
    """The input of one ``tool`` task (sent with ``Send``): the call to run, the id it answers, and
    the session it runs in."""

    call: ToolUseBlock
    answers: str
    session: str


class GraphInput(TypedDict, total=False):
    """What a run of the graph takes: the user's new input (a string or a ``UserMessage``)."""

    input: UserMessage | str | None


class AgentState(TypedDict, total=False):
    """The graph's state: agcore's own messages (channel ``messages``, the same ``AgentMessage``s
    ``AgentSession`` records) plus the counters of the turn in progress and the tool batch in flight,
    as JSON data. Tool tasks report through ``outcomes``, merged by call id, so a finished call is not
    run again after a crash."""

    #: The conversation's session id (the thread's id; a new one for a run without a thread).
    session_id: str
    #: The history: agcore's messages, as ``AgentSession.messages`` holds them.
    messages: Annotated[list[AgentMessage], DeltaChannel(append_message_batches)]
    #: The input of the turn about to start (consumed by the ``start`` node).
    input: UserMessage | str | None
    #: The session's ``SessionState`` as JSON (turn counter, approvals, the last model, the turn in
    #: progress with its batch, ...): the one object every runtime saves.
    session_state: dict[str, Any] | None
    #: How far the vetting of the batch in flight has got (see ``_tool_nodes``).
    phase: dict[str, Any] | None
    #: Results of the tool tasks of the batch in flight, by the call id they answer.
    outcomes: Annotated[dict[str, ToolOutcome], merge_outcomes]
    #: How the latest turn ended (``TurnResult.stop``) and its error's message, if any.
    stop: str | None
    error: str | None


def serde_allowlist() -> set[tuple[str, str]]:
    """``(module, class)`` of every agcore type the state can hold: the messages and what they hold
    (content blocks, usage, stop reasons), for the checkpointer's msgpack allowlist."""
    return {(typ.__module__, typ.__name__) for typ in state_types()}


def state_types() -> set[type]:
    """Every agcore class (pydantic models and enums) the state can hold (``serde_allowlist``)."""
    found: set[type] = set()
    _collect(AgentState, found, set())
    _collect(ToolTask, found, set())
    return found


def _collect(typ: Any, found: set[type], seen: set[int]) -> None:
    if id(typ) in seen:
        return
    seen.add(id(typ))
    if isinstance(typ, type) and issubclass(typ, BaseModel):
        if typ.__module__.startswith("agcore."):
            found.add(typ)
        for field in typ.model_fields.values():
            _collect(field.annotation, found, seen)
        return
    if isinstance(typ, type) and issubclass(typ, Enum):
        if typ.__module__.startswith("agcore."):
            found.add(typ)
        return
    if is_typeddict(typ):
        for hint in get_type_hints(typ).values():
            _collect(hint, found, seen)
        return
    for arg in get_args(typ):  # unions, Annotated, list[...], dict[...]
        _collect(arg, found, seen)
