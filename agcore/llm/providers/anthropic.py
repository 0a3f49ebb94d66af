"""``AnthropicProvider``: the Messages API through the official SDK's ``AsyncAnthropic``.

The SDK does the transport (auth, headers, HTTP errors); the wire format is converted here, straight
from the JSON. Streaming reads the raw SSE events of ``messages.create(stream=True)``, not the SDK's
``messages.stream()`` helper (which rebuilds a snapshot of the whole message on every event) nor
its typed events (built only to be converted again): agcore assembles the message once
(``StreamAssembler``), so the per-event work is one ``json.loads``, one dispatch and one small event.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anthropic
import httpx2
from anthropic import AsyncAnthropic, AsyncStream

from agcore.llm._arguments import parse_tool_arguments
from agcore.llm._assembly import StreamAssembler, message_to_events
from agcore.llm._loop_bound import LoopBound
from agcore.llm._urls import check_base_url, refused_on_loopback
from agcore.llm.errors import (
    LLMConnectionError,
    LLMError,
    MissingCredentialsError,
    RequestTimeoutError,
    ResponseFormatError,
    ServerNotRunningError,
    connection_broke_off,
    error_from_status,
    stream_broke_off,
)
from agcore.llm.events import (
    DoneEvent,
    ProviderBlockEnd,
    StreamEvent,
    TextDelta,
    TextEnd,
    TextStart,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from agcore.llm.provider import BaseProvider
from agcore.llm.providers._anthropic_wire import (
    PROVIDER,
    build_params,
    error_detail,
    message_from_json,
    sanitize_tool_id,
    status_for_error_type,
    stop_reason_from,
    tool_use_block,
    usage_from,
)
from agcore.llm.providers._responses import is_json
from agcore.llm.retry import RetryPolicy
from agcore.llm.types import LLMRequest, LLMResponse, ProviderBlock, ThinkingBlock, Usage

__all__ = ["AnthropicProvider", "sanitize_tool_id"]

_KEY_ENV = "ANTHROPIC_API_KEY"
_BASE_URL_ENV = "ANTHROPIC_BASE_URL"
#: Where calls go without ``base_url`` or ``ANTHROPIC_BASE_URL`` (an empty variable counts as unset).
ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com"
_CREDENTIALS_HINT = f"the {_KEY_ENV} environment variable"
_CONNECT_TIMEOUT = 10.0
# A health check should answer quickly, whatever the generation timeout is.
_HEALTH_CHECK_TIMEOUT = 30.0
# Transport failures that mean the server was never reached (anything else mid-stream broke off).
_CONNECT_ERRORS = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.ProxyError, httpx2.UnsupportedProtocol)
_BROKE_OFF = (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError)
# Block types agcore models; any other (server-side tool blocks) is kept whole as a ProviderBlock.
_STREAMED_KINDS = frozenset({"text", "tool_use", "thinking", "redacted_thinking"})


class _OpenBlock:
    """A content block between its ``content_block_start`` and ``content_block_stop``."""

    __slots__ = ("index", "kind", "parts", "signature", "start")

    def __init__(self, index: int, start: dict[str, Any]) -> None:
        self.index = index
        self.start = start  # the block as content_block_start announced it
        self.kind: str = start["type"]
        self.parts: list[str] = []
        self.signature: str = start.get("signature") or ""

    def start_events(self) -> list[StreamEvent]:
        index, start, kind = self.index, self.start, self.kind
        if kind not in _STREAMED_KINDS:
            return []  # a server-tool block is announced whole, when it ends
        if kind == "tool_use":
            return [ToolCallStart(index=index, id=start["id"], name=start["name"])]
        opened: StreamEvent = TextStart(index=index) if kind == "text" else ThinkingStart(index=index)
        # Blocks normally start empty and grow by deltas; text given up front counts as a first one.
        initial = start.get("text") if kind == "text" else start.get("thinking")
        if not initial:
            return [opened]
        self.parts.append(initial)
        grown = (TextDelta(index=index, text=initial) if kind == "text"
                 else ThinkingDelta(index=index, thinking=initial))
        return [opened, grown]

    def end_event(self) -> StreamEvent:
        index, kind = self.index, self.kind
        if kind == "text":
            return TextEnd(index=index, text="".join(self.parts))
        if kind == "tool_use":
            return ToolCallEnd(index=index, tool_call=tool_use_block(self.start, "".join(self.parts)))
        if kind == "thinking":
            return ThinkingEnd(index=index, block=ThinkingBlock(
                thinking="".join(self.parts), signature=self.signature or None, provider=PROVIDER))
        if kind == "redacted_thinking":
            return ThinkingEnd(index=index, block=ThinkingBlock(redacted_data=self.start["data"],
                                                                provider=PROVIDER))
        # A server-tool block: as content_block_start gave it, with the input its deltas streamed
        # (server_tool_use starts with an empty one), so it equals the block complete() returns.
        data = dict(self.start)
        if self.parts:
            data["input"] = parse_tool_arguments("".join(self.parts))[0]
        return ProviderBlockEnd(index=index, block=ProviderBlock(provider=PROVIDER, data=data))


def _merge_usage(usage: Usage, update: dict[str, Any] | None) -> Usage | None:
    """The usage after a message_delta, or None when it did not change. ``output_tokens`` there is
    cumulative; newer API versions also repeat the input and cache counts."""
    if not update:
        return None
    merged = Usage(
        input_tokens=_count(update, "input_tokens", usage.input_tokens),
        output_tokens=_count(update, "output_tokens", usage.output_tokens),
        cache_read_tokens=_count(update, "cache_read_input_tokens", usage.cache_read_tokens),
        cache_write_tokens=_count(update, "cache_creation_input_tokens", usage.cache_write_tokens),
    )
    return None if merged == usage else merged


def _count(update: dict[str, Any], key: str, default: int) -> int:
    value = update.get(key)
    return default if value is None else int(value)


class AnthropicProvider(BaseProvider):
    """Claude models over the Messages API.

    The key comes from ``api_key`` or ``ANTHROPIC_API_KEY``, the endpoint from ``base_url`` or
    ``ANTHROPIC_BASE_URL`` (default ``https://api.anthropic.com``). A ready ``client`` may be given
    instead; it is then the caller's to close, as is an ``http_client`` (an ``httpx2.AsyncClient``,
    the HTTP library this SDK uses). ``prompt_caching`` puts cache breakpoints on the system prompt,
    the last tool and the last message. ``headers`` go on every call (e.g. ``{"anthropic-beta":
    "context-1m-2025-08-07"}``); a request's ``headers`` add to them.
    """

    provider_name = PROVIDER

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: AsyncAnthropic | None = None,
        timeout: float = 600.0,
        retry_policy: RetryPolicy | None = None,
        prompt_caching: bool = False,
        default_max_tokens: int | None = None,
        http_client: httpx2.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(model_id, retry_policy=retry_policy)
        self.prompt_caching = prompt_caching
        self.headers: dict[str, str] = dict(headers or {})
        if default_max_tokens is not None:
            self.default_max_tokens = default_max_tokens
        if client is not None:
            self._http = LoopBound(client)
            return
        key = api_key or os.environ.get(_KEY_ENV)
        if not key:
            raise MissingCredentialsError(
                f"no Anthropic API key: set the {_KEY_ENV} environment variable, or pass api_key=... "
                "(or a configured client=AsyncAnthropic(...)) to AnthropicProvider",
                provider=PROVIDER, model=model_id,
            )
        endpoint = base_url or os.environ.get(_BASE_URL_ENV) or None
        if endpoint is not None:
            check_base_url(endpoint, example="https://api.anthropic.com")
        def make_client() -> AsyncAnthropic:
            return AsyncAnthropic(
                api_key=key,
                # Never None: the SDK would read ANTHROPIC_BASE_URL itself, and take "" as the URL.
                base_url=endpoint or ANTHROPIC_DEFAULT_URL,
                # An unreachable host should fail in seconds, not after the whole generation timeout.
                timeout=httpx2.Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT)),
                max_retries=0,  # agcore's retry layer is the only one
                http_client=http_client,
            )

        # A passed-in http_client belongs to the caller: closing the SDK client would close it, and a
        # new event loop does not get a new one.
        owns_client = http_client is None
        self._http = LoopBound.made_by(make_client, AsyncAnthropic.close) if owns_client \
            else LoopBound(make_client())

    @property
    def client(self) -> AsyncAnthropic:
        """The ``AsyncAnthropic`` client calls go through (for vendor features agcore does not model)."""
        return self._http.latest

    async def _close_client(self) -> None:
        await self._http.aclose()  # only a client it made: the LoopBound has no close otherwise

    async def health_check(self) -> bool:
        try:
            client = await self._http.for_this_loop()
            await client.models.retrieve(self.model_id, timeout=_HEALTH_CHECK_TIMEOUT)
        except Exception:
            return False
        return True

    # ------------------------------------------------------------------------------ calls

    def _params(self, request: LLMRequest) -> dict[str, Any]:
        return build_params(request, model=self.model_id, max_tokens=self._max_tokens(request),
                            prompt_caching=self.prompt_caching, headers=self.headers)

    async def _complete_once(self, request: LLMRequest) -> LLMResponse:
        # The raw body, converted once: parsing it into the SDK's models first would double the work.
        client = await self._http.for_this_loop()
        raw = await client.messages.with_raw_response.create(**self._params(request))
        try:
            message = message_from_json(json.loads(await raw.read()), model=self.model_id)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise self._format_error("a response", exc, raw.request_id) from exc
        return LLMResponse(message=message, request_id=raw.request_id)

    async def _stream_once(
        self, request: LLMRequest, assembler: StreamAssembler
    ) -> AsyncIterator[StreamEvent]:
        client = await self._http.for_this_loop()
        stream = await client.messages.create(**self._params(request), stream=True)
        response = stream.response
        request_id = response.headers.get("request-id")
        if is_json(response.headers):
            # A gateway that ignores "stream": true sends the whole message as JSON: take it as it is
            # (reading it as SSE would find no events and report a broken stream, retried in vain).
            try:
                raw = await response.aread()
            finally:
                await stream.close()
            try:
                message = message_from_json(json.loads(raw), model=self.model_id)
            except (AttributeError, KeyError, TypeError, ValueError) as exc:
                raise self._format_error("a response", exc, request_id) from exc
            for event in message_to_events(message, request_id=request_id):
                yield event
            return
        blocks: dict[int, _OpenBlock] = {}
        usage = Usage()
        stop_reason: str | None = None
        finished = False
        loads = json.loads
        try:
            # The SSE events as sent, decoded here once: the SDK's typed events would be built only
            # to be converted again. This loop runs per event; branches go in order of frequency.
            async for sse in AsyncStream.raw_events(response):
                name = sse.event
                if name is None or name == "ping":
                    continue
                if name == "error":
                    raise self._stream_error(sse.data, response.headers, request_id)
                if not (payload := sse.data):
                    continue
                try:
                    data = loads(payload)
                    kind = data["type"]
                    if kind == "content_block_delta":
                        block = blocks.get(data["index"])
                        if block is None:
                            continue
                        delta = data["delta"]
                        delta_kind = delta["type"]
                        if delta_kind == "text_delta":
                            text = delta["text"]
                            block.parts.append(text)
                            yield TextDelta(index=block.index, text=text)
                        elif delta_kind == "input_json_delta":
                            if fragment := delta["partial_json"]:
                                block.parts.append(fragment)
                                if block.kind == "tool_use":  # not a server tool's input
                                    yield ToolCallDelta(index=block.index, arguments=fragment)
                        elif delta_kind == "thinking_delta":
                            text = delta["thinking"]
                            block.parts.append(text)
                            yield ThinkingDelta(index=block.index, thinking=text)
                        elif delta_kind == "signature_delta":
                            block.signature += delta["signature"]
                    elif kind == "content_block_start":
                        block = _OpenBlock(data["index"], data["content_block"])
                        blocks[block.index] = block
                        for event in block.start_events():
                            yield event
                    elif kind == "content_block_stop":
                        block = blocks.pop(data["index"], None)
                        if block is not None:
                            yield block.end_event()
                    elif kind == "message_delta":
                        stop_reason = data["delta"].get("stop_reason")
                        updated = _merge_usage(usage, data.get("usage"))
                        if updated is not None:
                            usage = updated
                            yield UsageEvent(usage=usage)
                    elif kind == "message_start":
                        usage = usage_from(data["message"].get("usage"))
                        yield UsageEvent(usage=usage)
                    elif kind == "message_stop":
                        # Not returning yet: reading the body to its end lets the connection go back
                        # to the pool; closing it unread would cost a new connection per call.
                        finished = True
                except (AttributeError, KeyError, TypeError, ValueError) as exc:
                    raise self._format_error("a stream event", exc, request_id) from exc
        finally:
            await stream.close()
        if finished:
            message = assembler.message(stop_reason=stop_reason_from(stop_reason), model=self.model_id,
                                        provider=PROVIDER)
            yield DoneEvent(message=message, request_id=request_id)
        # Without message_stop the body broke off early: the base reports the interrupted stream.

    # ------------------------------------------------------------------------------ errors

    def _map_error(self, error: Exception) -> LLMError | None:
        if isinstance(error, anthropic.APIStatusError):
            error_type, api_message = error_detail(error.body)
            return self._error(error.status_code, api_message or error.message,
                               headers=error.response.headers, request_id=error.request_id,
                               vendor_type=error_type)
        base_url = self._http.latest.base_url
        if isinstance(error, anthropic.APITimeoutError):
            return RequestTimeoutError(
                f"no answer from {base_url} within the timeout; try again, or raise timeout= for "
                "long generations (streaming avoids idle waits)",
                provider=PROVIDER, model=self.model_id,
            )
        cause = error.__cause__
        if isinstance(error, anthropic.APIConnectionError) and isinstance(cause, _BROKE_OFF):
            # The server was reached, then the connection broke (a reset, a body cut short).
            return connection_broke_off(str(base_url), cause, provider=PROVIDER, model=self.model_id)
        if isinstance(error, anthropic.APIConnectionError) and refused_on_loopback(str(base_url), error):
            return ServerNotRunningError(
                f"nothing is listening at {base_url} ({_BASE_URL_ENV} or base_url): this machine refused "
                "the connection", provider=PROVIDER, model=self.model_id,
            )
        if isinstance(error, anthropic.APIConnectionError):
            return LLMConnectionError(
                f"could not connect to the Anthropic API at {base_url}: {error.__cause__ or error}. "
                f"Check the network, and {_BASE_URL_ENV} or base_url if you set one",
                provider=PROVIDER, model=self.model_id,
            )
        # Raw transport errors only surface while a stream body is being read.
        if isinstance(error, _CONNECT_ERRORS):
            return LLMConnectionError(
                f"lost the connection to {base_url}: {error!r}; try the call again",
                provider=PROVIDER, model=self.model_id,
            )
        if isinstance(error, httpx2.TransportError | httpx2.StreamError):
            return stream_broke_off(str(base_url), error, provider=PROVIDER, model=self.model_id)
        return None

    def _error(self, status: int, detail: str, *, headers: Mapping[str, str] | None,
               request_id: str | None, vendor_type: str | None = None) -> LLMError:
        return error_from_status(status, detail, provider=PROVIDER, model=self.model_id, headers=headers,
                                 request_id=request_id, credentials_hint=_CREDENTIALS_HINT,
                                 vendor_type=vendor_type)

    def _stream_error(self, payload: str, headers: Mapping[str, str], request_id: str | None) -> LLMError:
        """The error for an SSE ``error`` event. It arrives inside a 200 response (e.g. an
        ``overloaded_error`` mid-reply), so its type is all there is to classify it by."""
        try:
            body = json.loads(payload)
        except ValueError:
            body = None
        error_type, message = error_detail(body)
        return self._error(status_for_error_type(error_type), message or payload, headers=headers,
                           request_id=request_id, vendor_type=error_type)

    def _format_error(self, what: str, exc: Exception, request_id: str | None) -> ResponseFormatError:
        return ResponseFormatError(
            f"the Anthropic API sent {what} agcore cannot read ({exc!r}); if this persists, the API "
            "may have changed: report it with the request id",
            provider=PROVIDER, model=self.model_id, request_id=request_id,
        )
