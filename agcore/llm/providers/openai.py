"""``OpenAIProvider``: OpenAI's Chat Completions API, and any server that speaks it (``base_url``).

Uses the official ``openai`` SDK's ``AsyncOpenAI`` for everything up to the reply (auth, the base
URL, headers, timeouts, HTTP errors; its own retries off: agcore's retry layer is the only one),
sending the body ``_openai_wire`` builds with the SDK's ``client.post`` rather than
``chat.completions.create`` (whose per-call parameter validation cost more than the rest of the
call), then reads the reply's JSON itself: for a stream, the SSE ``data:`` payloads.
Building the SDK's models for every chunk costs several times what agcore does with a chunk, plain
dicts absorb what compatible servers do differently, and only the raw stream shows whether
``[DONE]`` arrived. Requests and replies are converted in ``_openai_wire``, streams read in
``_openai_stream``.
"""

from __future__ import annotations

import json
import os
import ssl
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

import anyio
import httpx
import openai

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
    StreamInterruptedError,
    connection_broke_off,
    error_from_status,
    stream_broke_off,
    vendor_fields,
)
from agcore.llm.events import DoneEvent, StreamEvent
from agcore.llm.provider import BaseProvider
from agcore.llm.providers._openai_stream import ChunkReader, SSEDecoder
from agcore.llm.providers._openai_wire import (
    build_params,
    error_detail,
    error_from_body,
    message_from_completion,
)
from agcore.llm.providers._reasoning_echo import COMPATIBLE, echo_rule, vendor_for
from agcore.llm.providers._responses import is_json
from agcore.llm.retry import RetryPolicy
from agcore.llm.types import LLMRequest, LLMResponse

if TYPE_CHECKING:
    import httpx2

#: The Chat Completions endpoint, relative to the client's base URL.
_CHAT = "/chat/completions"

__all__ = ["OpenAIProvider"]

_OFFICIAL_HOST = "api.openai.com"
_PLACEHOLDER_KEY = "not-needed"  # local servers ignore the key, but the SDK insists on one
_HEALTH_TIMEOUT = 30.0  # a probe should not wait as long as a long generation may
_CONNECT_TIMEOUT = 10.0
#: Where calls go without ``base_url`` or ``OPENAI_BASE_URL`` (an empty variable counts as unset).
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"

# What reading a response body can fail with. The SDK moved to httpx2 but still accepts a plain
# httpx client, so both families can show up; anyio and ssl errors are ones httpx2 leaves unmapped.
_TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (
    httpx.HTTPError, anyio.EndOfStream, anyio.BrokenResourceError, ssl.SSLError,
)
# The server was reached, then the connection broke (a reset, a body cut short): not "cannot connect".
_BROKE_OFF: tuple[type[BaseException], ...] = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
try:
    import httpx2 as _httpx2

    _TRANSPORT_ERRORS += (_httpx2.HTTPError,)
    _BROKE_OFF += (_httpx2.RemoteProtocolError, _httpx2.ReadError, _httpx2.WriteError)
except ImportError:  # older SDKs use httpx alone
    pass


class OpenAIProvider(BaseProvider):
    """Chat Completions through ``AsyncOpenAI``.

    Without ``base_url`` (and ``OPENAI_BASE_URL`` unset) it talks to OpenAI, needs ``OPENAI_API_KEY``
    and is named ``"openai"``. With a ``base_url`` it serves any OpenAI-compatible server (vLLM,
    llama.cpp, LM Studio, Ollama's ``/v1``...), is named ``"openai-compatible"`` (or after the vendor
    whose API host it is: ``"deepseek"``, ``"moonshot"``...) unless ``provider_name`` says otherwise,
    and works without a key. Reasoning (``reasoning_content``) goes back to the vendor that wrote it
    where that vendor wants it (``_reasoning_echo``'s table). Pass ``client`` to use an
    ``AsyncOpenAI`` you configured yourself (it is then yours to close).
    """

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        provider_name: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        timeout: float = 600.0,
        retry_policy: RetryPolicy | None = None,
        default_max_tokens: int | None = None,
        http_client: httpx.AsyncClient | httpx2.AsyncClient | None = None,
        organization: str | None = None,
    ) -> None:
        super().__init__(model_id, retry_policy=retry_policy)
        # A caller's client keeps its own timeout; ours is only known for the client built here.
        self._timeout_text = f" ({timeout:g}s)" if client is None else ""
        self._default_max_tokens = default_max_tokens
        if default_max_tokens is not None:
            self.default_max_tokens = default_max_tokens
        resolved = base_url or os.environ.get("OPENAI_BASE_URL") or None
        if client is not None:
            resolved = str(client.base_url)
        elif resolved is not None:
            check_base_url(resolved)
        self._official = resolved is None or _is_official(resolved)
        # A vendor the reasoning table knows goes by its name ("deepseek"), so its replies say whose
        # they are and its reasoning goes back to it alone; any other server is "openai-compatible".
        self.provider_name = provider_name or (
            "openai" if self._official else vendor_for(resolved) or COMPATIBLE)
        self._reasoning_echo = echo_rule(self.provider_name, resolved)
        if client is not None:
            self._http = LoopBound(client)
        else:
            key = api_key or os.environ.get("OPENAI_API_KEY")
            if not key:
                if self._official:
                    raise MissingCredentialsError(
                        "no OpenAI API key: set the OPENAI_API_KEY environment variable or pass "
                        "api_key=... (for a self-hosted server, pass its base_url instead)",
                        provider=self.provider_name, model=model_id,
                    )
                key = _PLACEHOLDER_KEY
            def make_client() -> openai.AsyncOpenAI:
                return openai.AsyncOpenAI(
                    # Never None: the SDK would read OPENAI_BASE_URL itself, and take "" as the URL.
                    api_key=key, base_url=resolved or OPENAI_DEFAULT_URL, organization=organization,
                    # A server that is down should fail fast, even when replies may take minutes.
                    timeout=openai.Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT)), max_retries=0,
                    http_client=cast("httpx2.AsyncClient | None", http_client),
                )

            # A caller's http_client stays the caller's: closing the SDK client would close it, and a
            # new event loop does not get a new one.
            owns_client = http_client is None
            self._http = LoopBound.made_by(make_client, openai.AsyncOpenAI.close) if owns_client \
                else LoopBound(make_client())
        self._base_url = str(self._http.latest.base_url).rstrip("/")

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The ``AsyncOpenAI`` client calls go through (for vendor features agcore does not model)."""
        return self._http.latest

    async def _close_client(self) -> None:
        await self._http.aclose()  # only a client it made: the LoopBound has no close otherwise

    # ----------------------------------------------------------------- calls

    def _params(self, request: LLMRequest) -> dict[str, Any]:
        max_tokens = request.max_tokens if request.max_tokens is not None else self._default_max_tokens
        return build_params(request, model=self.model_id, max_tokens=max_tokens, official=self._official,
                            provider=self.provider_name, reasoning=self._reasoning_echo)

    async def _complete_once(self, request: LLMRequest) -> LLMResponse:
        # ``client.post``: the SDK's documented call for a prepared body. It keeps auth, the base URL,
        # headers, timeouts and the mapping of HTTP errors, and skips what ``create()`` adds per call:
        # validating and transforming the parameters against their TypedDicts by introspection, which
        # cost more CPU than the rest of the call. ``build_params`` already writes the wire shape.
        client = await self._http.for_this_loop()
        raw = await client.post(_CHAT, body=self._params(request), cast_to=httpx.Response,
                                options={"headers": request.headers} if request.headers else {})
        try:
            body = json.loads(raw.content)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise self._unreadable(raw.content[:200]) from exc
        message = message_from_completion(body, provider=self.provider_name, model=self.model_id)
        return LLMResponse(message=message, request_id=raw.headers.get("x-request-id"))

    async def _stream_once(
        self, request: LLMRequest, assembler: StreamAssembler
    ) -> AsyncIterator[StreamEvent]:
        params = self._params(request)
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
        client = await self._http.for_this_loop()
        stream = await client.post(
            _CHAT, body=params, cast_to=object, stream=True, stream_cls=openai.AsyncStream[Any],
            options={"headers": request.headers} if request.headers else {},
        )
        response = stream.response
        if is_json(response.headers):
            # Some compatible servers ignore "stream": true (with tools, say) and send the whole
            # completion: take it as it is (read as SSE it would be a broken stream, retried in vain).
            try:
                raw = await response.aread()
            finally:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
            try:
                body = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise self._unreadable(raw[:200]) from exc
            message = message_from_completion(body, provider=self.provider_name, model=self.model_id)
            for event in message_to_events(message, request_id=response.headers.get("x-request-id")):
                yield event
            return
        reader = ChunkReader(self.provider_name, self.model_id)
        decoder = SSEDecoder()
        try:
            async for piece in response.aiter_bytes():
                for payload in decoder.feed(piece):
                    for event in reader.read(payload):
                        yield event
            for payload in decoder.flush():
                for event in reader.read(payload):
                    yield event
        except _TRANSPORT_ERRORS as exc:
            if not (reader.finished or reader.saw_done):  # else the reply is whole: keep it
                raise stream_broke_off(self._base_url, exc, provider=self.provider_name,
                                       model=self.model_id) from exc
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise self._unreadable(str(exc)) from exc
        finally:
            with anyio.CancelScope(shield=True):  # release the connection even when cancelled
                await response.aclose()
        if not reader.finished:
            if not reader.saw_done:
                raise StreamInterruptedError(
                    "the stream ended before the server finished the reply (no finish_reason, no "
                    "[DONE]); try the call again", provider=self.provider_name, model=self.model_id,
                )
            for event in reader.finish(None):  # [DONE] without a finish_reason: a server's omission
                yield event
        message = assembler.message(stop_reason=reader.stop_reason(), model=self.model_id,
                                    provider=self.provider_name)
        yield DoneEvent(message=message, request_id=response.headers.get("x-request-id"))

    def _unreadable(self, what: object) -> ResponseFormatError:
        return ResponseFormatError(
            f"{self._base_url} answered something that is not a chat completion ({what!r}); check that "
            "the base URL points at an OpenAI-compatible /v1 endpoint",
            provider=self.provider_name, model=self.model_id,
        )

    # ----------------------------------------------------------------- health and errors

    async def health_check(self) -> bool:
        try:
            client = (await self._http.for_this_loop()).with_options(timeout=_HEALTH_TIMEOUT)
            if self._official:
                await client.models.retrieve(self.model_id)
            else:
                # Compatible servers often list aliases, not the name a request uses: answering is enough.
                await client.models.list()
        except Exception:
            return False
        return True

    def _map_error(self, error: Exception) -> LLMError | None:
        provider, model = self.provider_name, self.model_id
        if isinstance(error, openai.APIStatusError):
            detail = error_detail(error.body, error.message)
            if error.code and error.code not in detail:
                # The code can say more than the message: context_length_exceeded is matched on it.
                detail = f"{detail} (code {error.code})"
            hint = "the OPENAI_API_KEY environment variable"
            if not self._official:
                hint = f"the api_key passed for {self._base_url} (or {hint})"
            vendor_type, vendor_code, vendor_param = vendor_fields(error.body)
            return error_from_status(
                error.status_code, detail, headers=error.response.headers, request_id=error.request_id,
                credentials_hint=hint, provider=provider, model=model, vendor_type=vendor_type,
                vendor_code=vendor_code, vendor_param=vendor_param,
            )
        if isinstance(error, openai.APITimeoutError):
            return RequestTimeoutError(
                f"no answer from {self._base_url} within the timeout{self._timeout_text}; try again, "
                "or raise the provider's timeout= for long replies", provider=provider, model=model,
            )
        if isinstance(error, openai.APIConnectionError) and isinstance(error.__cause__, _BROKE_OFF):
            return connection_broke_off(self._base_url, error.__cause__, provider=provider, model=model)
        if isinstance(error, openai.APIConnectionError) and refused_on_loopback(self._base_url, error):
            return ServerNotRunningError(
                f"nothing is listening at {self._base_url}: this machine refused the connection",
                provider=provider, model=model,
            )
        if isinstance(error, openai.APIConnectionError):
            return LLMConnectionError(
                f"could not connect to {self._base_url} ({_cause(error)}). Is the server running at "
                f"{self._base_url}? Check the base URL and your network.", provider=provider, model=model,
            )
        if isinstance(error, openai.APIResponseValidationError | json.JSONDecodeError):
            return self._unreadable(str(error))
        if isinstance(error, openai.APIError):  # any other SDK failure that carries an error body
            body = error.body if error.body is not None else error.message
            return error_from_body(body, provider=provider, model=model)
        if isinstance(error, _TRANSPORT_ERRORS):
            return stream_broke_off(self._base_url, error, provider=provider, model=model)
        return None


def _is_official(base_url: str) -> bool:
    return urlsplit(base_url).hostname == _OFFICIAL_HOST


def _cause(error: BaseException) -> str:
    cause = error.__cause__ or error.__context__
    if cause is None:
        return str(error)
    return f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
