"""The ``LLMProvider`` protocol, and ``BaseProvider`` which every built-in provider extends.

A provider owns all wire-format conversion: callers hand it one ``LLMRequest`` (the way an httpx
transport takes one ``Request``) and get one ``LLMResponse``, or a stream of events, back.
``BaseProvider`` holds what is the same for every vendor (the retry layer, mapping exceptions to
``LLMError``, assembling the streamed message, and the rule that a stream ends in exactly one
``DoneEvent`` or ``ErrorEvent``), so a vendor module only translates.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from agcore.llm._arguments import flag_cut_call
from agcore.llm._assembly import StreamAssembler, message_to_events
from agcore.llm.errors import LLMError, StreamInterruptedError
from agcore.llm.events import DoneEvent, ErrorEvent, StreamEvent
from agcore.llm.retry import RetryPolicy, retry_call, retry_stream
from agcore.llm.types import LLMRequest, LLMResponse

__all__ = ["BaseProvider", "LLMProvider"]


@runtime_checkable
class LLMProvider(Protocol):
    """What the kernel needs from a model: one ``LLMRequest`` in, one reply out.

    ``complete(request)`` returns the whole reply; ``stream(request)`` yields its ``StreamEvent``s and
    ends in exactly one ``DoneEvent`` (the same message ``complete`` would return) or ``ErrorEvent``.
    The request is plain serialisable data, so a durable runtime can ship it to another process.
    Build one with ``LLMRequest.build(messages, system=..., tools=..., ...)``.
    """

    @property
    def provider_name(self) -> str:
        """The vendor's name (``"anthropic"``, ``"openai"``...), recorded on each reply and used in
        errors."""

    @property
    def model_id(self) -> str:
        """The model this provider calls."""

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """The model's whole reply to ``request``. Raises ``LLMError`` when the call fails (after any
        retries)."""

    def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        """The reply to ``request`` as events, ending in one ``DoneEvent`` or one ``ErrorEvent`` (a
        failure ends the stream; it is not raised)."""

    async def health_check(self) -> bool:
        """True when the endpoint answers and knows the model; never raises."""


class BaseProvider(ABC):
    """Subclasses set ``provider_name`` and implement ``_complete_once`` and ``health_check``; for
    token-by-token streaming also ``_stream_once`` (by default a stream replays the complete reply),
    and ``_map_error`` to turn their vendor's exceptions into ``LLMError``s. They never retry and
    never build ``ErrorEvent``s."""

    provider_name: str = "base"
    #: Output cap used when a request gives none (Anthropic requires one on every call).
    default_max_tokens: int = 4096

    def __init__(self, model_id: str, *, retry_policy: RetryPolicy | None = None) -> None:
        self._model_id = model_id
        self.retry_policy = retry_policy or RetryPolicy()

    @property
    def model_id(self) -> str:
        """The model this provider calls."""
        return self._model_id

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.provider_name}:{self._model_id})"

    # ----------------------------------------------------------------- public surface

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """The model's whole reply to ``request``, retried per ``retry_policy``; raises ``LLMError``."""
        return await retry_call(lambda: self._complete_guarded(request), self.retry_policy)

    def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        """The reply as events; retried only before any output (see ``retry``); never raises for a provider
        failure (it ends in an ``ErrorEvent``)."""
        return retry_stream(lambda: self._stream_guarded(request), self.retry_policy)

    @abstractmethod
    async def health_check(self) -> bool:
        """True when the endpoint answers and knows the model; never raises."""

    #: How many holders ``create_provider``'s cache has handed this instance to; see ``aclose``.
    _shares: int = 0
    _closed: bool = False

    @property
    def closed(self) -> bool:
        """Whether ``aclose`` released the HTTP client (a closed provider cannot make calls)."""
        return self._closed

    async def aclose(self) -> None:
        """Release the underlying HTTP client. An instance that ``create_provider`` handed out several
        times is shared: each ``aclose`` gives back one share, and the client closes with the last,
        so one holder closing it never breaks another's calls. Idempotent."""
        if self._shares > 1:
            self._shares -= 1
            return
        self._shares = 0
        if not self._closed:
            self._closed = True
            await self._close_client()

    def _share(self) -> None:
        """One more holder (``create_provider``'s cache hands this instance out again)."""
        self._shares += 1

    async def _close_client(self) -> None:
        """Close the HTTP client this provider owns; providers that hold none keep the default."""
        return None

    async def __aenter__(self) -> BaseProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ----------------------------------------------------------------- for subclasses

    @abstractmethod
    async def _complete_once(self, request: LLMRequest) -> LLMResponse:
        """One non-streaming call."""

    async def _stream_once(
        self, request: LLMRequest, assembler: StreamAssembler
    ) -> AsyncIterator[StreamEvent]:
        """One streaming call: yield content and usage events, then one ``DoneEvent`` whose message
        is ``assembler.message(...)`` (the base feeds every yielded event to ``assembler`` first).

        By default: one ``_complete_once`` call, replayed as the events a stream of that reply would
        carry, so a provider that only completes still works wherever the loop streams."""
        response = await self._complete_once(request)
        for event in message_to_events(response.message, request_id=response.request_id):
            yield event

    def _map_error(self, error: Exception) -> LLMError | None:
        """The ``LLMError`` for a vendor/transport exception, or None to let it propagate."""
        return None

    def _max_tokens(self, request: LLMRequest) -> int:
        return request.max_tokens if request.max_tokens is not None else self.default_max_tokens

    # ----------------------------------------------------------------- shared machinery

    async def _complete_guarded(self, request: LLMRequest) -> LLMResponse:
        try:
            response = await self._complete_once(request)
        except LLMError:
            raise
        except Exception as exc:
            mapped = self._map_error(exc)
            if mapped is None:
                raise
            raise mapped from exc
        flagged = flag_cut_call(response.message)
        return response if flagged is response.message else response.model_copy(update={"message": flagged})

    async def _stream_guarded(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        assembler = StreamAssembler()
        stream = self._stream_once(request, assembler)
        failure: LLMError | None = None
        finished = False
        try:
            async for event in stream:
                assembler.feed(event)
                if isinstance(event, DoneEvent):
                    flagged = flag_cut_call(event.message)
                    if flagged is not event.message:
                        event = event.model_copy(update={"message": flagged})
                    yield event
                    finished = True
                    break
                yield event
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
