"""``OpenAIResponsesProvider``: OpenAI's Responses API (``POST /v1/responses``), and any server that
speaks it (``base_url``).

Built on ``OpenAIProvider``: the same ``AsyncOpenAI`` client setup (keys, base URL, timeouts, the
SDK's retries off), the same mapping of HTTP and transport failures to ``LLMError``, the same health
check; only the endpoint, the wire format (``_responses_wire``) and the stream
(``_responses_stream``) differ. The API is used statelessly (``store: false``): each request sends
the whole history, with this provider's reasoning items replayed from their encrypted content.
The API has no stop sequences: ``_responses_stops`` applies them to the reply.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
import httpx
import openai

from agcore.llm._assembly import StreamAssembler, message_to_events
from agcore.llm.errors import ResponseFormatError, StreamInterruptedError, stream_broke_off
from agcore.llm.events import DoneEvent, StreamEvent
from agcore.llm.models import default_registry
from agcore.llm.providers._openai_stream import SSEDecoder
from agcore.llm.providers._openai_wire import error_detail
from agcore.llm.providers._responses import is_json
from agcore.llm.providers._responses_stops import StopSequenceCutter, cut_at_stop
from agcore.llm.providers._responses_stream import ResponseEventReader
from agcore.llm.providers._responses_wire import ENCRYPTED_REASONING, build_body, message_from_response
from agcore.llm.providers.openai import _TRANSPORT_ERRORS, OpenAIProvider
from agcore.llm.retry import RetryPolicy
from agcore.llm.types import LLMRequest, LLMResponse

if TYPE_CHECKING:
    import httpx2

__all__ = ["OpenAIResponsesProvider"]

#: The Responses endpoint, relative to the client's base URL.
_RESPONSES = "/responses"

# Model ids of OpenAI's reasoning models, for ids the registry does not know (o1, o3-mini, o4-mini,
# gpt-5*, gpt-6*, codex-mini...): only these accept a request for encrypted reasoning.
_REASONING_MODEL = re.compile(r"^(?:o\d|gpt-[5-9]|codex)", re.IGNORECASE)


def _is_reasoning_model(model_id: str) -> bool:
    info = default_registry.get(model_id)
    if info is not None:
        return info.supports_thinking
    # "openai/o4-mini" behind a gateway, "ft:o4-mini-2025-04-16:org::id" fine-tuned
    return bool(_REASONING_MODEL.match(model_id.rsplit("/", 1)[-1].removeprefix("ft:")))


def _refuses_encrypted_reasoning(error: openai.APIStatusError) -> bool:
    # "Encrypted content is not supported with this model." (a 400 for gpt-4.1, gpt-4o, ...)
    detail = error_detail(error.body, error.message).lower()
    return error.status_code == 400 and "encrypted content" in detail and "not supported" in detail


class OpenAIResponsesProvider(OpenAIProvider):
    """The Responses API through ``AsyncOpenAI``; ``create_provider("openai-responses:<model>")``.

    Configured as ``OpenAIProvider`` is (``api_key`` / ``OPENAI_API_KEY``, ``base_url`` /
    ``OPENAI_BASE_URL``, ``client``, ``http_client``, ``timeout``, ``organization``...) and named
    ``"openai-responses"`` unless ``provider_name`` says otherwise. Reasoning items come back as
    ``ThinkingBlock``s tagged with that name and are sent back, statelessly, to this provider only.

    ``encrypted_reasoning`` asks for each reasoning item's ``encrypted_content``, which is what makes
    the reasoning replayable with ``store: false``. ``None`` (the default) asks for reasoning models
    only (the registry's ``supports_thinking``, or an id like ``o3``, ``gpt-5-mini``), since other
    models reject the request; a model that still refuses it turns it off for this provider.
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
        encrypted_reasoning: bool | None = None,
    ) -> None:
        super().__init__(
            model_id, api_key=api_key, base_url=base_url, provider_name=provider_name or "openai-responses",
            client=client, timeout=timeout, retry_policy=retry_policy, default_max_tokens=default_max_tokens,
            http_client=http_client, organization=organization,
        )
        self.encrypted_reasoning = (
            _is_reasoning_model(model_id) if encrypted_reasoning is None else encrypted_reasoning
        )

    # ----------------------------------------------------------------- calls

    def _params(self, request: LLMRequest) -> dict[str, Any]:
        max_tokens = request.max_tokens if request.max_tokens is not None else self._default_max_tokens
        return build_body(request, model=self.model_id, provider=self.provider_name, max_tokens=max_tokens,
                          encrypted_reasoning=self.encrypted_reasoning)

    async def _post(self, body: dict[str, Any], *, stream: bool, headers: dict[str, str]) -> Any:
        """POST the body (with the request's own ``headers``); when the model refuses encrypted
        reasoning, stop asking and send it again."""
        options: dict[str, Any] = (
            {"cast_to": object, "stream": True, "stream_cls": openai.AsyncStream[Any]} if stream
            else {"cast_to": httpx.Response}
        )
        if headers:
            options["options"] = {"headers": headers}
        client = await self._http.for_this_loop()
        try:
            return await client.post(_RESPONSES, body=body, **options)
        except openai.APIStatusError as exc:
            if ENCRYPTED_REASONING not in body.get("include", ()) or not _refuses_encrypted_reasoning(exc):
                raise
        self.encrypted_reasoning = False
        include = [value for value in body["include"] if value != ENCRYPTED_REASONING]
        retry = {key: value for key, value in body.items() if key != "include"}
        if include:
            retry["include"] = include
        return await client.post(_RESPONSES, body=retry, **options)

    async def _complete_once(self, request: LLMRequest) -> LLMResponse:
        raw: httpx.Response = await self._post(self._params(request), stream=False, headers=request.headers)
        try:
            body = json.loads(raw.content)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise self._unreadable(raw.content[:200]) from exc
        message = message_from_response(body, provider=self.provider_name, model=self.model_id)
        message = cut_at_stop(message, request.stop_sequences)
        return LLMResponse(message=message, request_id=raw.headers.get("x-request-id"))

    async def _stream_once(
        self, request: LLMRequest, assembler: StreamAssembler
    ) -> AsyncIterator[StreamEvent]:
        params = self._params(request)
        params["stream"] = True
        stream = await self._post(params, stream=True, headers=request.headers)
        response = stream.response
        request_id = response.headers.get("x-request-id")
        if is_json(response.headers):
            # A server (or gateway) that ignores "stream": true sends the whole response object.
            try:
                raw = await response.aread()
            finally:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
            try:
                body = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise self._unreadable(raw[:200]) from exc
            message = message_from_response(body, provider=self.provider_name, model=self.model_id)
            message = cut_at_stop(message, request.stop_sequences)
            for event in message_to_events(message, request_id=request_id):
                yield event
            return
        reader = ResponseEventReader(self.provider_name, self.model_id)
        stops = StopSequenceCutter(request.stop_sequences)
        decoder = SSEDecoder()
        try:
            async for piece in response.aiter_bytes():
                for payload in decoder.feed(piece):
                    for event in stops.filter(reader.read(payload)):
                        yield event
                if reader.finished:
                    break  # nothing follows response.completed: release the connection now
            else:
                for payload in decoder.flush():
                    for event in stops.filter(reader.read(payload)):
                        yield event
        except _TRANSPORT_ERRORS as exc:
            if not reader.finished:
                raise stream_broke_off(self._base_url, exc, provider=self.provider_name,
                                       model=self.model_id) from exc
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise self._unreadable(str(exc)) from exc
        finally:
            with anyio.CancelScope(shield=True):  # release the connection even when cancelled
                await response.aclose()
        if not reader.finished:
            raise StreamInterruptedError(
                "the stream ended before the server finished the response (no response.completed); "
                "try the call again", provider=self.provider_name, model=self.model_id,
            )
        message = assembler.message(stop_reason=stops.stop_reason(reader.stop_reason()),
                                    model=self.model_id, provider=self.provider_name)
        yield DoneEvent(message=message, request_id=request_id)

    def _unreadable(self, what: object) -> ResponseFormatError:
        return ResponseFormatError(
            f"{self._base_url} answered something that is not a Responses API reply ({what!r}); check "
            "that the base URL points at an endpoint serving POST /v1/responses",
            provider=self.provider_name, model=self.model_id,
        )
