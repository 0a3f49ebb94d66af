"""Ollama through its native ``/api/chat`` endpoint, spoken directly over httpx.

The native endpoint rather than Ollama's OpenAI-compatible one: only it takes ``think``,
``keep_alive`` and the model ``options`` (``num_ctx`` and friends), and it reports reasoning apart
from the answer. The JSON conversion (and its quirks, e.g. no ``tool_choice``) is in
``_ollama_wire``; this module does the HTTP and the errors. A failure after the reply started
arrives as an NDJSON line ``{"error": "..."}`` with status 200, not as an HTTP status.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx

from agcore.llm._assembly import StreamAssembler
from agcore.llm._loop_bound import LoopBound
from agcore.llm._urls import refused_on_loopback
from agcore.llm.errors import (
    ContextWindowExceededError,
    LLMConnectionError,
    LLMError,
    ModelNotFoundError,
    RequestTimeoutError,
    ResponseFormatError,
    ServerError,
    ServerNotRunningError,
    StreamInterruptedError,
    connection_broke_off,
    error_from_status,
    stream_broke_off,
    vendor_fields,
)
from agcore.llm.events import DoneEvent, StreamEvent
from agcore.llm.provider import BaseProvider
from agcore.llm.providers._ollama_wire import (
    PROVIDER,
    StreamBlocks,
    build_body,
    parse_reply,
    resolve_ollama_host,
    same_model,
)
from agcore.llm.retry import RetryPolicy
from agcore.llm.types import LLMRequest, LLMResponse

__all__ = ["OllamaProvider", "resolve_ollama_host"]

_DRAIN_SECONDS = 2.0
# The server was reached, then the connection broke (a reset, a keep-alive connection it had closed).
_BROKE_OFF = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


def _is_missing_model(detail: str) -> bool:
    # 'model "x" not found, try pulling it first' (older) or "model 'x' not found" (newer); a bare
    # "404 page not found" is a wrong host or path, not a missing model.
    lowered = detail.lower()
    return "model" in lowered and "not found" in lowered


async def _read_to_end(lines: AsyncIterator[str]) -> None:
    """Read what follows the ``done`` line (the end of the chunked body), so the connection goes back
    to the pool: a response closed unread closes its connection, and every call would open a new
    one. The reply is whole already: a server that keeps the body open is given up on after
    ``_DRAIN_SECONDS``, and a failure here loses nothing."""
    with anyio.move_on_after(_DRAIN_SECONDS):
        try:
            async for _ in lines:
                pass
        except httpx.HTTPError:
            pass


class OllamaProvider(BaseProvider):
    """A model served by Ollama. No key: the server is ``host``, else ``OLLAMA_HOST``, else
    ``http://localhost:11434``. ``timeout`` (seconds) applies to the client built here, not to a
    ``client`` passed in. ``keep_alive`` (e.g. ``"30m"``) and ``think`` (``True``/``False``, or
    ``"low"``/``"medium"``/``"high"`` for models that take a level) go into every request body;
    ``extra`` overrides them, and an ``options`` dict in ``extra`` merges into the model options."""

    provider_name = PROVIDER

    def __init__(
        self,
        model_id: str,
        *,
        host: str | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: float = 600.0,
        retry_policy: RetryPolicy | None = None,
        keep_alive: str | None = None,
        think: bool | str | None = None,
    ) -> None:
        super().__init__(model_id, retry_policy=retry_policy)
        self.host = resolve_ollama_host(host)
        self.timeout = timeout
        self.keep_alive = keep_alive
        self.think = think
        def make_client() -> httpx.AsyncClient:
            return httpx.AsyncClient(timeout=httpx.Timeout(timeout))

        # A caller's client is the caller's: a new event loop does not get a new one.
        self._http = LoopBound(client) if client is not None \
            else LoopBound.made_by(make_client, httpx.AsyncClient.aclose)

    async def _close_client(self) -> None:
        await self._http.aclose()  # only a client it made: the LoopBound has no close otherwise

    def build_body(self, request: LLMRequest, *, stream: bool) -> dict[str, Any]:
        """The JSON body POSTed to ``/api/chat`` for ``request``."""
        return build_body(request, model=self.model_id, stream=stream, keep_alive=self.keep_alive,
                          think=self.think)

    @property
    def _chat_url(self) -> str:
        return f"{self.host}/api/chat"

    # ----------------------------------------------------------------- calls

    async def _complete_once(self, request: LLMRequest) -> LLMResponse:
        client = await self._http.for_this_loop()
        response = await client.post(self._chat_url, json=self.build_body(request, stream=False),
                                     headers=request.headers or None)
        if response.is_error:
            raise self._status_error(response)
        return LLMResponse(message=parse_reply(self._parse_line(response.text), model=self.model_id))

    async def _stream_once(
        self, request: LLMRequest, assembler: StreamAssembler
    ) -> AsyncIterator[StreamEvent]:
        body = self.build_body(request, stream=True)
        client = await self._http.for_this_loop()
        headers = request.headers or None
        async with client.stream("POST", self._chat_url, json=body, headers=headers) as response:
            if response.is_error:
                await response.aread()
                raise self._status_error(response)
            blocks = StreamBlocks()
            lines = response.aiter_lines()
            try:
                async for line in lines:
                    if not line.strip():
                        continue
                    for event in blocks.feed(self._parse_line(line)):
                        yield event
                    if blocks.done:
                        break
                if blocks.done:
                    await _read_to_end(lines)
                    # Built only now: the base has fed the UsageEvent to the assembler.
                    message = assembler.message(stop_reason=blocks.stop_reason, model=self.model_id,
                                                provider=PROVIDER)
                    yield DoneEvent(message=message)
                    return
            except httpx.TimeoutException:
                raise  # _map_error makes it a RequestTimeoutError
            except httpx.TransportError as exc:
                raise stream_broke_off(f"Ollama at {self.host}", exc, provider=PROVIDER,
                                       model=self.model_id) from exc
        raise StreamInterruptedError(
            "the Ollama stream ended before its final `done` line (the server may have stopped or "
            "unloaded the model); try the call again",
            provider=PROVIDER, model=self.model_id,
        )

    def _parse_line(self, text: str) -> dict[str, Any]:
        """One JSON object (a whole reply or one NDJSON line); an ``error`` in it is raised."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise self._unreadable(text) from exc
        if not isinstance(data, dict):
            raise self._unreadable(text)
        if "error" in data:
            raise self._error_line(data["error"])
        return data

    async def health_check(self) -> bool:
        """True when the server lists the model in ``/api/tags`` (a bare name matches ``:latest``)."""
        try:
            client = await self._http.for_this_loop()
            response = await client.get(f"{self.host}/api/tags", timeout=min(self.timeout, 10.0))
            if response.is_error:
                return False
            models = response.json().get("models") or []
            return any(same_model(str(m.get(key) or ""), self.model_id)
                       for m in models for key in ("name", "model"))
        except Exception:
            return False

    # ----------------------------------------------------------------- errors

    def _map_error(self, error: Exception) -> LLMError | None:
        if isinstance(error, httpx.HTTPStatusError):
            return self._status_error(error.response)
        if isinstance(error, httpx.ConnectError) and refused_on_loopback(self.host, error):
            return ServerNotRunningError(
                f"nothing is listening at {self.host}: this machine refused the connection. Start "
                "Ollama with `ollama serve`, or set OLLAMA_HOST to where it runs",
                provider=PROVIDER, model=self.model_id,
            )
        if isinstance(error, httpx.ConnectError):
            return LLMConnectionError(
                f"could not connect to Ollama at {self.host} ({error}). Is Ollama running at "
                f"{self.host}? Start it with `ollama serve` or set OLLAMA_HOST to where it runs.",
                provider=PROVIDER, model=self.model_id,
            )
        if isinstance(error, httpx.TimeoutException):
            return RequestTimeoutError(
                f"Ollama at {self.host} did not answer within {self.timeout:g}s ({type(error).__name__}). "
                "A large model may still be loading: try again, or pass a longer `timeout=`.",
                provider=PROVIDER, model=self.model_id,
            )
        if isinstance(error, _BROKE_OFF):
            # Reached, then dropped: e.g. a keep-alive connection the server had closed. Not "down".
            return connection_broke_off(f"Ollama at {self.host}", error, provider=PROVIDER,
                                        model=self.model_id)
        if isinstance(error, httpx.TransportError):
            return LLMConnectionError(
                f"the connection to Ollama at {self.host} failed ({error!r}); check that the server "
                "is up and try again",
                provider=PROVIDER, model=self.model_id,
            )
        return None

    def _not_found(self, detail: str, status_code: int | None) -> ModelNotFoundError:
        return ModelNotFoundError(
            f"{detail.rstrip('.')}. Run `ollama pull {self.model_id}` to download it "
            f"(`ollama list` shows the models {self.host} has).",
            provider=PROVIDER, model=self.model_id, status_code=status_code,
        )

    def _status_error(self, response: httpx.Response) -> LLMError:
        error: object = None
        with contextlib.suppress(ValueError, AttributeError):
            error = response.json().get("error")
        # Ollama's native API sends {"error": "<message>"}; a proxy in front of it (or its /v1 API)
        # may send an object with the vendor's type and code, kept on the error.
        vendor_type, vendor_code, vendor_param = vendor_fields(error)
        if isinstance(error, dict):
            error = error.get("message")
        detail = str(error or response.text)
        if response.status_code == 404 and _is_missing_model(detail):
            return self._not_found(detail, 404)
        return error_from_status(response.status_code, detail, provider=PROVIDER, model=self.model_id,
                                 headers=response.headers, vendor_type=vendor_type,
                                 vendor_code=vendor_code, vendor_param=vendor_param)

    def _error_line(self, detail: object) -> LLMError:
        """The error for an ``{"error": ...}`` body, which comes with status 200 (mid-stream the
        status is long sent): the model failed while answering."""
        text = str(detail).strip() or "no detail given"
        if _is_missing_model(text):
            return self._not_found(text, None)
        overflow = error_from_status(400, text, provider=PROVIDER, model=self.model_id)
        if isinstance(overflow, ContextWindowExceededError):
            overflow.status_code = None
            return overflow
        return ServerError(
            f"Ollama failed while answering: {text}. Try again; if it persists, see the server log "
            "(`ollama serve` output).",
            provider=PROVIDER, model=self.model_id,
        )

    def _unreadable(self, text: str) -> ResponseFormatError:
        shown = text if len(text) <= 200 else text[:200] + "…"
        return ResponseFormatError(
            f"Ollama at {self.host} answered something that is not a chat reply: {shown!r}. "
            "Check that OLLAMA_HOST points at an Ollama server.",
            provider=PROVIDER, model=self.model_id,
        )
