"""``AgentMessage``: what a session's history holds, a superset of what the model sees.

Seven kinds, discriminated on ``kind``:

| class          | ``kind``        | sent to the model as                                   |
|----------------|-----------------|--------------------------------------------------------|
| ``UserInput``    | ``user``          | user content                                          |
| ``AssistantReply`` | ``assistant``   | the ``AssistantMessage`` itself                       |
| ``ToolResults``  | ``tool_results``  | user content: the ``ToolResultBlock`` s               |
| ``Summary``      | ``summary``       | user content: text wrapped in ``<conversation_summary>`` |
| ``ContextNote``  | ``context_note``  | user content: text wrapped in ``<context_note>``       |
| ``SystemEvent``  | ``system_event``  | never (rate-limit notices, credit warnings, audit)    |
| ``ToolLog``      | ``tool_log``      | never (a tool's progress and log lines)               |

``convert_to_llm()`` is the one place that decides what the model sees. It runs before every model
call, so it is a single pass that reuses the stored ``AssistantMessage`` objects and builds one
``UserMessage`` per run of user-side items.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agcore._clock import new_id, now_datetime
from agcore.llm.types import (
    AssistantMessage,
    ContentBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

__all__ = [
    "AgentMessage",
    "AgentMessageAdapter",
    "AssistantReply",
    "ContextNote",
    "SystemEvent",
    "Summary",
    "ToolLog",
    "ToolResults",
    "UserInput",
    "convert_to_llm",
    "messages_from_json",
    "messages_to_json",
]


class _AgentMessageBase(BaseModel):
    # defer_build: built on first use, not at import (see agcore.llm.types._Frozen).
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)
    # convert_to_llm caches an item's UserMessage here. A slot, not a field or private attribute, so
    # it is invisible to equality, serialisation, copies and pickling; the item is frozen, so the
    # cached message never goes stale.
    __slots__ = ("_llm_message",)

    id: str = Field(default_factory=new_id)
    created_at: datetime = Field(default_factory=now_datetime)


class UserInput(_AgentMessageBase):
    """What the user said: text, or blocks (text and images)."""

    kind: Literal["user"] = "user"
    content: str | list[ContentBlock]

    @classmethod
    def of(cls, value: str | UserMessage | UserInput) -> UserInput:
        """A ``UserInput`` from a string, a ``UserMessage`` or a ``UserInput`` (returned as is)."""
        if isinstance(value, UserInput):
            return value
        if isinstance(value, UserMessage):
            return cls(content=value.content)
        return cls(content=value)

    @property
    def text(self) -> str:
        """The input's text blocks joined (images left out)."""
        if isinstance(self.content, str):
            return self.content
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


class AssistantReply(_AgentMessageBase):
    """What the model answered, with who answered (``message.provider``/``message.model``)."""

    kind: Literal["assistant"] = "assistant"
    message: AssistantMessage

    @property
    def text(self) -> str:
        """The reply's text blocks joined."""
        return self.message.text

    @property
    def tool_calls(self) -> list[ToolUseBlock]:
        """The tool calls in the reply, in the model's order."""
        return self.message.tool_calls


class ToolResults(_AgentMessageBase):
    """Results of the previous reply's tool calls (one per call, whatever happened to it)."""

    kind: Literal["tool_results"] = "tool_results"
    results: list[ToolResultBlock]


class Summary(_AgentMessageBase):
    """A summary that replaces compacted history; the model reads it as user content."""

    kind: Literal["summary"] = "summary"
    text: str

    def to_llm_text(self) -> str:
        # The same wrapper agcore.context writes, so either kind of summary reads alike to the model.
        # Imported here: agcore.context is loaded only by runs that compact (or hold a summary).
        """The summary as the model reads it: wrapped in the same summary tags ``agcore.context`` writes."""
        from agcore.context import SUMMARY_CLOSE, SUMMARY_OPEN

        return f"{SUMMARY_OPEN}\n{self.text}\n{SUMMARY_CLOSE}"


class ContextNote(_AgentMessageBase):
    """Context the application injects (retrieved facts, "you were switched to a smaller model")."""

    kind: Literal["context_note"] = "context_note"
    text: str

    def to_llm_text(self) -> str:
        """The note as the model reads it, inside ``<context_note>`` tags."""
        return f"<context_note>\n{self.text}\n</context_note>"


class SystemEvent(_AgentMessageBase):
    """Something the application records in the history that the model never sees."""

    kind: Literal["system_event"] = "system_event"
    text: str
    data: dict[str, Any] = Field(default_factory=dict)


class ToolLog(_AgentMessageBase):
    """A running tool's progress or log line; kept for the user and audit, never sent to the model."""

    kind: Literal["tool_log"] = "tool_log"
    text: str
    tool_use_id: str | None = None
    tool_name: str | None = None
    fraction: float | None = None


AgentMessage = Annotated[
    UserInput | AssistantReply | ToolResults | Summary | ContextNote | SystemEvent | ToolLog,
    Field(discriminator="kind"),
]

#: Validates serialised messages: ``AgentMessageAdapter.validate_json(data)``.
AgentMessageAdapter: TypeAdapter[list[AgentMessage]] = TypeAdapter(
    list[AgentMessage], config=ConfigDict(defer_build=True)
)


def messages_to_json(messages: Sequence[AgentMessage]) -> bytes:
    """A history as JSON (a list of objects, each with its ``kind``)."""
    return AgentMessageAdapter.dump_json(list(messages))


def messages_from_json(data: str | bytes) -> list[AgentMessage]:
    """The inverse of ``messages_to_json``."""
    return AgentMessageAdapter.validate_json(data)


# ----------------------------------------------------------------------------------- conversion


def convert_to_llm(messages: Iterable[AgentMessage]) -> list[UserMessage | AssistantMessage]:
    """The model's view of a history.

    * user input, tool results, summaries and context notes are user content; a run of them becomes
      ONE ``UserMessage`` (tool results first, as Anthropic requires; the rest in order), so roles
      alternate. A ``UserInput`` alone in its run keeps its content as is (a string stays a string).
    * assistant replies are passed through unchanged; one with no content is dropped (there is
      nothing to send), and replies with no user content between them are joined into one message
      (the later reply's ``provider``/``model``/``stop_reason`` are kept).
    * system events and tool logs are dropped.

    So the result alternates roles and starts with a user message whenever the first item the model
    can see is user-side. The ``UserMessage`` of an item alone in its run (the usual case) is built
    once and cached on the (immutable) item, so converting a long history again costs little.
    """
    out: list[UserMessage | AssistantMessage] = []
    # The current run of user-side items: ``lone`` holds its first item until a second one arrives;
    # only then are block lists built (tool results apart, to put them first).
    lone: _UserSide | None = None
    results: list[ContentBlock] | None = None
    others: list[ContentBlock] | None = None
    for m in messages:
        # Told apart by ``kind``, the union's discriminator, not by isinstance: the same test, and a
        # cheap one where isinstance is not (Temporal's workflow sandbox wraps it for all code).
        kind = m.kind
        if kind == "assistant":
            reply = cast(AssistantReply, m).message
            if not reply.content:
                continue
            if lone is not None or others is not None:
                _append_user(out, lone, results, others)
                lone = results = others = None
            _append_reply(out, reply)
        elif kind in _UNSEEN_KINDS:
            continue
        elif lone is None and others is None:
            lone = cast(_UserSide, m)
        else:
            if results is None or others is None:
                results, others = [], []
                if lone is not None:
                    _add_content(lone, results, others)
                    lone = None
            _add_content(cast(_UserSide, m), results, others)
    _append_user(out, lone, results, others)
    return out


def _append_user(
    out: list[UserMessage | AssistantMessage], lone: _UserSide | None,
    results: list[ContentBlock] | None, others: list[ContentBlock] | None,
) -> None:
    """The run of user-side items that just ended, as one message (none when it has no content)."""
    user = _lone_message(lone) if lone is not None else _run_message(results, others)
    if user is not None:
        out.append(user)


def _append_reply(out: list[UserMessage | AssistantMessage], reply: AssistantMessage) -> None:
    """A reply after the last message; joined to it when that is a reply too (roles alternate)."""
    if out and out[-1].role == "assistant":
        out[-1] = _join(out[-1], reply)
    else:
        out.append(reply)


_UserSide = UserInput | ToolResults | Summary | ContextNote
#: What the model never sees (``SystemEvent``, ``ToolLog``), by ``kind``.
_UNSEEN_KINDS = frozenset({"system_event", "tool_log"})
_NOT_CACHED: Any = object()


def _add_content(m: _UserSide, results: list[ContentBlock], others: list[ContentBlock]) -> None:
    if isinstance(m, ToolResults):
        results.extend(m.results)
    elif isinstance(m, UserInput):
        if isinstance(m.content, str):
            others.append(TextBlock(text=m.content))
            return
        for block in m.content:
            (results if isinstance(block, ToolResultBlock) else others).append(block)
    else:
        others.append(TextBlock(text=m.to_llm_text()))


def _lone_message(m: _UserSide) -> UserMessage | None:
    """The message for an item alone in its run; None when it has no content (empty results)."""
    cached: UserMessage | None = getattr(m, "_llm_message", _NOT_CACHED)
    if cached is not _NOT_CACHED:
        return cached
    if isinstance(m, UserInput):
        message: UserMessage | None = UserMessage(content=m.content)
    else:
        results: list[ContentBlock] = []
        others: list[ContentBlock] = []
        _add_content(m, results, others)
        message = _run_message(results, others)
    object.__setattr__(m, "_llm_message", message)  # a slot outside the fields: see _AgentMessageBase
    return message


def _run_message(results: list[ContentBlock] | None, others: list[ContentBlock] | None) -> UserMessage | None:
    if results:
        results.extend(others or ())
        return UserMessage(content=results)
    return UserMessage(content=others) if others else None


def _join(first: AssistantMessage, second: AssistantMessage) -> AssistantMessage:
    return AssistantMessage.model_construct(
        content=[*first.content, *second.content],
        stop_reason=second.stop_reason,
        model=second.model,
        provider=second.provider,
        usage=first.usage + second.usage,
    )
