"""Stream events: what ``LLMProvider.stream()`` yields.

Contract, for every provider:

* blocks are announced by ``*Start`` with a content ``index``, grow by ``*Delta`` and close with
  ``*End``, which carries the finished block; indexes are the block positions in the final message;
  a block only its vendor understands (``ProviderBlock``: Anthropic's server-tool blocks) arrives
  whole, as one ``ProviderBlockEnd``;
* ``UsageEvent`` may come any number of times and always carries the usage *so far* (it replaces,
  not adds to, the previous one);
* the stream ends with exactly one ``DoneEvent`` (carrying the final ``AssistantMessage``, identical
  to what ``complete()`` returns for the same exchange) or one ``ErrorEvent``. A stream never raises
  for a provider failure: the error arrives as data, with whatever had arrived before it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from agcore.llm.types import AssistantMessage, ProviderBlock, ThinkingBlock, ToolUseBlock, Usage

if TYPE_CHECKING:
    from agcore.llm.errors import LLMError

__all__ = [
    "DoneEvent",
    "ErrorEvent",
    "ProviderBlockEnd",
    "StreamEvent",
    "TextDelta",
    "TextEnd",
    "TextStart",
    "ThinkingDelta",
    "ThinkingEnd",
    "ThinkingStart",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "UsageEvent",
]


class _Event(BaseModel):
    # defer_build: built on first use, not at import (see agcore.llm.types._Frozen).
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class TextStart(_Event):
    """A text block ``index`` of the reply starts."""

    type: Literal["text_start"] = "text_start"
    index: int


class TextDelta(_Event):
    """A piece of text block ``index``, as the model streams it."""

    type: Literal["text_delta"] = "text_delta"
    index: int
    text: str


class TextEnd(_Event):
    """Text block ``index`` is finished; ``text`` is all of it."""

    type: Literal["text_end"] = "text_end"
    index: int
    text: str


class ThinkingStart(_Event):
    """A reasoning block ``index`` starts."""

    type: Literal["thinking_start"] = "thinking_start"
    index: int


class ThinkingDelta(_Event):
    """A piece of reasoning block ``index``, as the model streams it."""

    type: Literal["thinking_delta"] = "thinking_delta"
    index: int
    thinking: str


class ThinkingEnd(_Event):
    """Reasoning block ``index`` is finished; ``block`` is all of it, with its signature."""

    type: Literal["thinking_end"] = "thinking_end"
    index: int
    block: ThinkingBlock


class ToolCallStart(_Event):
    """Tool call ``id`` (of tool ``name``) starts at block ``index``; its arguments follow as
    ``ToolCallDelta``s."""

    type: Literal["tool_call_start"] = "tool_call_start"
    index: int
    id: str
    name: str


class ToolCallDelta(_Event):
    """A fragment of the call's argument JSON, exactly as the model wrote it."""

    type: Literal["tool_call_delta"] = "tool_call_delta"
    index: int
    arguments: str


class ToolCallEnd(_Event):
    """The finished call, its arguments parsed (and repaired where needed)."""

    type: Literal["tool_call_end"] = "tool_call_end"
    index: int
    tool_call: ToolUseBlock


class ProviderBlockEnd(_Event):
    """Block ``index`` is one only its vendor understands (a server tool's call or result), whole."""

    type: Literal["provider_block_end"] = "provider_block_end"
    index: int
    block: ProviderBlock


class UsageEvent(_Event):
    """The tokens used so far (the last one of a stream holds the totals)."""

    type: Literal["usage"] = "usage"
    usage: Usage


class DoneEvent(_Event):
    """A stream ended well: ``message`` is the whole reply, the same ``complete()`` would return."""

    type: Literal["done"] = "done"
    message: AssistantMessage
    request_id: str | None = None


class ErrorEvent(_Event):
    """A failed stream. ``partial`` holds what had been assembled before the failure.

    The fields are plain data so the event serialises; ``to_exception()`` gives back the typed
    ``LLMError`` (the original instance when the event was made in this process).
    """

    type: Literal["error"] = "error"
    error_type: str
    message: str
    is_retryable: bool = False
    status_code: int | None = None
    retry_after: float | None = None
    provider: str | None = None
    model: str | None = None
    request_id: str | None = None
    partial: AssistantMessage | None = None
    vendor_type: str | None = None
    vendor_code: str | None = None
    vendor_param: str | None = None
    _exception: LLMError | None = PrivateAttr(default=None)

    @classmethod
    def from_exception(cls, error: LLMError, partial: AssistantMessage | None = None) -> ErrorEvent:
        """The event of a failed stream, for ``error`` (kept, so ``to_exception()`` returns the same
        instance), with what was assembled before it."""
        event = cls(
            error_type=type(error).__name__,
            message=error.message,
            is_retryable=error.is_retryable,
            status_code=error.status_code,
            retry_after=error.retry_after,
            provider=error.provider,
            model=error.model,
            request_id=error.request_id,
            partial=partial,
            vendor_type=error.vendor_type,
            vendor_code=error.vendor_code,
            vendor_param=error.vendor_param,
        )
        event._exception = error
        return event

    def to_exception(self) -> LLMError:
        """The typed ``LLMError`` this event stands for: the original instance, or one rebuilt from the
        fields (an event loaded from JSON)."""
        if self._exception is not None:
            return self._exception
        from agcore.llm.errors import error_class_named

        return error_class_named(self.error_type)(
            self.message,
            provider=self.provider,
            model=self.model,
            status_code=self.status_code,
            request_id=self.request_id,
            retry_after=self.retry_after,
            vendor_type=self.vendor_type,
            vendor_code=self.vendor_code,
            vendor_param=self.vendor_param,
        )


StreamEvent = Annotated[
    TextStart
    | TextDelta
    | TextEnd
    | ThinkingStart
    | ThinkingDelta
    | ThinkingEnd
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | ProviderBlockEnd
    | UsageEvent
    | DoneEvent
    | ErrorEvent,
    Field(discriminator="type"),
]
