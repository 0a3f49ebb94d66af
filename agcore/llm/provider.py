"""The ``LLMProvider`` protocol, and ``BaseProvider`` which every built-in provider extends.

A provider owns all wire-format conversion: callers hand it agcore messages and get agcore messages
and events back. ``BaseProvider`` holds what is the same for every vendor — request building, the
retry layer, mapping exceptions to ``LLMError``, assembling the streamed message, and the rule that
a stream ends in exactly one ``DoneEvent`` or ``ErrorEvent`` — so a vendor module only translates.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol, runtime_checkable

from agcore.llm._assembly import StreamAssembler
from agcore.llm.errors import LLMError, StreamInterruptedError
from agcore.llm.events import DoneEvent, ErrorEvent, StreamEvent
from agcore.llm.retry import RetryPolicy, retry_call, retry_stream
from agcore.llm.types import (
    AssistantMessage,
    LLMRequest,
    LLMResponse,
    ToolChoice,
    ToolDefinition,
    UserMessage,
)

__all__ = ["BaseProvider", "LLMProvider"]


@runtime_checkable
class LLMProvider(Protocol):
    """What the kernel needs from a model. ``extra`` is merged into the vendor request body."""

    @property
    def provider_name(self) -> str: ...

    @property
    def model_id(self) -> str: ...

    async def complete(
        self,
        messages: Sequence[UserMessage | AssistantMessage],
        *,
        system: str | None = None,
        tools: Sequence[ToolDefinition] | None = None,
        tool_choice: ToolChoice | str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> LLMResponse: ...

    def stream(
        self,
        messages: Sequence[UserMessage | AssistantMessage],
        *,
        system: str | None = None,
        tools: Sequence[ToolDefinition] | None = None,
        tool_choice: ToolChoice | str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]: ...

    async def health_check(self) -> bool: ...


class BaseProvider(ABC):
    """Subclasses set ``provider_name`` and implement ``_complete_once``, ``_stream_once``,
    ``_map_error`` and ``health_check``. They never retry and never build ``ErrorEvent``s."""

    provider_name: str = "base"
    #: Output cap used when a request gives none (Anthropic requires one on every call).
    default_max_tokens: int = 4096

    def __init__(self, model_id: str, *, retry_policy: RetryPolicy | None = None) -> None:
        self._model_id = model_id
        self.retry_policy = retry_policy or RetryPolicy()

    @property
    def model_id(self) -> str:
        return self._model_id

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.provider_name}:{self._model_id})"

    # ----------------------------------------------------------------- public surface

    async def complete(
        self,
        messages: Sequence[UserMessage | AssistantMessage],
        *,
        system: str | None = None,
        tools: Sequence[ToolDefinition] | None = None,
        tool_choice: ToolChoice | str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> LLMResponse:
        request = LLMRequest.build(
            messages, system=system, tools=tools, tool_choice=tool_choice, max_tokens=max_tokens,
            temperature=temperature, stop_sequences=stop_sequences, extra=extra,
        )
        return await self.complete_request(request)

    def stream(
        self,
        messages: Sequence[UserMessage | AssistantMessage],
        *,
        system: str | None = None,
        tools: Sequence[ToolDefinition] | None = None,
        tool_choice: ToolChoice | str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        request = LLMRequest.build(
            messages, system=system, tools=tools, tool_choice=tool_choice, max_tokens=max_tokens,
            temperature=temperature, stop_sequences=stop_sequences, extra=extra,
        )
        return self.stream_request(request)

    async def complete_request(self, request: LLMRequest) -> LLMResponse:
        """``complete()`` for an already-built request (the kernel's path, after hooks rewrote it)."""
        return await retry_call(lambda: self._complete_guarded(request), self.retry_policy)

    def stream_request(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        return retry_stream(lambda: self._stream_guarded(request), self.retry_policy)

    @abstractmethod
    async def health_check(self) -> bool:
        """True when the endpoint answers and knows the model; never raises."""

    async def aclose(self) -> None:
        """Release the underlying HTTP client (a no-op for providers that hold none)."""
        return None

    async def __aenter__(self) -> BaseProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ----------------------------------------------------------------- for subclasses

    @abstractmethod
    async def _complete_once(self, request: LLMRequest) -> LLMResponse:
        """One non-streaming call."""

    @abstractmethod
    def _stream_once(self, request: LLMRequest, assembler: StreamAssembler) -> AsyncIterator[StreamEvent]:
        """One streaming call: yield content and usage events, then one ``DoneEvent`` whose message
        is ``assembler.message(...)`` (the base feeds every yielded event to ``assembler`` first)."""

    @abstractmethod
    def _map_error(self, error: Exception) -> LLMError | None:
        """The ``LLMError`` for a vendor/transport exception, or None to let it propagate."""

    def _max_tokens(self, request: LLMRequest) -> int:
        return request.max_tokens if request.max_tokens is not None else self.default_max_tokens

    # ----------------------------------------------------------------- shared machinery

    async def _complete_guarded(self, request: LLMRequest) -> LLMResponse:
        try:
            return await self._complete_once(request)
        except LLMError:
            raise
        except Exception as exc:
            mapped = self._map_error(exc)
            if mapped is None:
                raise
            raise mapped from exc

    async def _stream_guarded(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        assembler = StreamAssembler()
        stream = self._stream_once(request, assembler)
        failure: LLMError | None = None
        finished = False
        try:
            async for event in stream:
                assembler.feed(event)
                yield event
                if isinstance(event, DoneEvent):
                    finished = True
                    break
        except LLMError as exc:
            failure = exc
        except Exception as exc:
            failure = self._map_error(exc)
            if failure is None:
                raise
            failure.__cause__ = exc
        finally:
            await stream.aclose()  # type: ignore[attr-defined]
        if finished:
            return
        if failure is None:
            failure = StreamInterruptedError(
                "the stream ended before the model finished its reply; try the call again",
                provider=self.provider_name, model=self._model_id,
            )
        partial = assembler.message(stop_reason=None, model=self._model_id,
                                    provider=self.provider_name, partial=True)
        yield ErrorEvent.from_exception(failure, partial=partial if partial.content else None)
