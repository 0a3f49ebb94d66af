"""The vendor's own error ``type`` / ``code`` / ``param`` on ``LLMError`` (``vendor_type``,
``vendor_code``, ``vendor_param``) for Anthropic, OpenAI and compatible servers (llama.cpp), and
Ollama, from their real error bodies over respx; and a dropped keep-alive connection, on real
loopback HTTP (``bench.chaos_vendor``), reported as broken off (not "could not connect") whether
the retry recovers it or not (issue 18)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from agcore.llm.errors import (
    ContextWindowExceededError,
    InvalidRequestError,
    LLMConnectionError,
    LLMError,
    OverloadedError,
    RateLimitError,
)
from agcore.llm.events import ErrorEvent
from agcore.llm.provider import BaseProvider
from agcore.llm.providers.anthropic import AnthropicProvider
from agcore.llm.providers.ollama import OllamaProvider
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import NO_RETRY, RetryPolicy
from agcore.llm.types import LLMRequest, UserMessage
from bench.chaos_vendor import ChaosVendor
from tests.llm.test_anthropic_errors import api_error as anthropic_error
from tests.llm.test_anthropic_provider import MESSAGES, message_start
from tests.llm.test_anthropic_provider import make as make_anthropic
from tests.llm.test_anthropic_provider import sse as anthropic_sse
from tests.llm.test_openai_provider import CHAT, COMPAT, COMPAT_CHAT, openai_router, respond_json
from tests.llm.test_openai_provider import api_error as openai_error
from tests.llm.test_openai_provider import make as make_openai

pytestmark = pytest.mark.anyio

HI = LLMRequest.build("hi")


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    yield from openai_router(monkeypatch)


async def failure(provider: BaseProvider, *, stream: bool = False) -> LLMError:
    if stream:
        events = [event async for event in provider.stream(HI)]
        last = events[-1]
        assert isinstance(last, ErrorEvent)
        # The fields travel as data too (a stream event dumped to JSON and loaded back).
        rebuilt = ErrorEvent.model_validate_json(last.model_dump_json()).to_exception()
        original = last.to_exception()
        assert (rebuilt.vendor_type, rebuilt.vendor_code, rebuilt.vendor_param) == (
            original.vendor_type, original.vendor_code, original.vendor_param)
        return original
    with pytest.raises(LLMError) as caught:
        await provider.complete(HI)
    return caught.value


# ------------------------------------------------------------------ vendor type / code / param


@pytest.mark.parametrize("stream", [False, True])
async def test_openai_error_type_code_and_param(api: respx.MockRouter, stream: bool) -> None:
    api.post(CHAT).mock(return_value=respond_json(openai_error(
        "This model's maximum context length is 128000 tokens. However, your messages resulted in "
        "130412 tokens.", "invalid_request_error", "context_length_exceeded", "messages"), status=400))
    error = await failure(make_openai(), stream=stream)
    assert isinstance(error, ContextWindowExceededError)
    assert (error.vendor_type, error.vendor_code, error.vendor_param) == (
        "invalid_request_error", "context_length_exceeded", "messages")


async def test_openai_error_sent_inside_a_stream_keeps_its_type_and_code(api: respx.MockRouter) -> None:
    body = (b'data: {"error": {"message": "Rate limit reached for gpt-4.1", "type": "tokens", '
            b'"param": null, "code": "rate_limit_exceeded"}}\n\n')
    api.post(CHAT).mock(return_value=httpx.Response(
        200, content=body, headers={"content-type": "text/event-stream"}))
    error = await failure(make_openai(), stream=True)
    assert isinstance(error, RateLimitError)
    assert (error.vendor_type, error.vendor_code, error.vendor_param) == (
        "tokens", "rate_limit_exceeded", None)


async def test_llama_cpp_context_error_keeps_its_type_and_numeric_code(api: respx.MockRouter) -> None:
    # llama-server's body for a prompt over the context size: the HTTP status as a number in `code`.
    body = {"error": {"code": 400, "message": "request (5012 tokens) exceeds the available context size "
                      "(4096 tokens), try increasing it", "type": "exceed_context_size_error",
                      "n_prompt_tokens": 5012, "n_ctx": 4096}}
    api.post(COMPAT_CHAT).mock(return_value=respond_json(body, status=400))
    error = await failure(make_openai(base_url=COMPAT))
    assert isinstance(error, InvalidRequestError)
    assert (error.vendor_type, error.vendor_code, error.vendor_param) == (
        "exceed_context_size_error", "400", None)


async def test_a_server_with_a_plain_detail_body_has_no_vendor_fields(api: respx.MockRouter) -> None:
    api.post(COMPAT_CHAT).mock(return_value=respond_json({"detail": "Not authenticated"}, status=401))
    error = await failure(make_openai(base_url=COMPAT))
    assert (error.vendor_type, error.vendor_code, error.vendor_param) == (None, None, None)
    assert "Not authenticated" in error.message


@pytest.mark.parametrize("stream", [False, True])
async def test_anthropic_error_type(api: respx.MockRouter, stream: bool) -> None:
    api.post(MESSAGES).mock(return_value=anthropic_error(529, "overloaded_error", "Overloaded"))
    error = await failure(make_anthropic(), stream=stream)
    assert isinstance(error, OverloadedError)
    assert (error.vendor_type, error.vendor_code, error.vendor_param) == ("overloaded_error", None, None)


async def test_anthropic_error_event_inside_a_stream_keeps_its_type(api: respx.MockRouter) -> None:
    body = anthropic_sse(message_start(), {"type": "error", "error": {
        "type": "rate_limit_error", "message": "Number of request tokens has exceeded your rate limit"}})
    api.post(MESSAGES).mock(return_value=httpx.Response(
        200, content=body, headers={"content-type": "text/event-stream"}))
    error = await failure(make_anthropic(), stream=True)
    assert isinstance(error, RateLimitError)
    assert error.vendor_type == "rate_limit_error"


@pytest.mark.parametrize(("body", "fields"), [
    ({"error": "model requires more system memory (11.2 GiB) than is available (7.6 GiB)"},
     (None, None, None)),  # Ollama's native API: a message only
    ({"error": {"message": "model is required", "type": "invalid_request_error", "param": "model",
                "code": None}}, ("invalid_request_error", None, "model")),  # its /v1 shape, via a proxy
])
async def test_ollama_error_fields(body: dict[str, Any], fields: tuple[str | None, ...]) -> None:
    with respx.mock() as router:
        router.post("http://ollama.test:11434/api/chat").mock(return_value=httpx.Response(400, json=body))
        host = "http://ollama.test:11434"
        async with OllamaProvider("llama3.2", host=host, retry_policy=NO_RETRY) as model:
            error = await failure(model)
    assert isinstance(error, InvalidRequestError)
    assert (error.vendor_type, error.vendor_code, error.vendor_param) == fields
    message = body["error"] if isinstance(body["error"], str) else body["error"]["message"]
    assert message in error.message


# ------------------------------------------------------------------ dropped keep-alive connections


@pytest.fixture(scope="module")
def chaos() -> Iterator[ChaosVendor]:
    with ChaosVendor() as server:
        yield server


def chaos_provider(vendor: str, base_url: str, policy: RetryPolicy) -> BaseProvider:
    if vendor == "anthropic":
        return AnthropicProvider("claude-haiku-4-5", api_key="k", base_url=base_url, retry_policy=policy)
    if vendor == "ollama":
        return OllamaProvider("llama3.2", host=base_url, retry_policy=policy)
    return OpenAIProvider("gpt-4.1", api_key="k", base_url=base_url, retry_policy=policy)


async def _no_wait(seconds: float) -> None:
    return None


VENDORS = ["anthropic", "openai", "ollama"]


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("stream", [False, True])
async def test_a_dropped_keep_alive_connection_that_the_retry_recovers_is_not_called_unreachable(
    chaos: ChaosVendor, anyio_backend: str, vendor: str, stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    key = f"keepalive-{vendor}-{stream}-{anyio_backend}"
    # The first call leaves its connection in the pool; the server drops it when the second arrives.
    chaos.plan(key, faults=["ok", "reset"], tools=[])
    policy = RetryPolicy(max_attempts=3, sleep=_no_wait)
    request = LLMRequest.build([UserMessage(content="hi")])
    async with chaos_provider(vendor, chaos.base_url(key, vendor), policy) as model:
        await model.complete(request)
        with caplog.at_level(logging.WARNING, logger="agcore.llm.retry"):
            if stream:
                events = [event async for event in model.stream(request)]
                assert not isinstance(events[-1], ErrorEvent), events[-1]
                reply = events[-1].message  # type: ignore[union-attr]
            else:
                reply = (await model.complete(request)).message
    assert reply.text
    assert [served.fault for served in chaos.log(key)] == ["ok", "reset", "ok"]
    warnings = " ".join(record.getMessage() for record in caplog.records)
    assert "broke off" in warnings
    assert "could not connect" not in warnings
    assert "running" not in warnings


@pytest.mark.parametrize("vendor", VENDORS)
async def test_a_dropped_connection_that_stays_dropped_says_it_broke_off(
    chaos: ChaosVendor, anyio_backend: str, vendor: str
) -> None:
    key = f"dropped-{vendor}-{anyio_backend}"
    chaos.plan(key, faults=["reset", "reset"], tools=[])
    policy = RetryPolicy(max_attempts=2, sleep=_no_wait)
    async with chaos_provider(vendor, chaos.base_url(key, vendor), policy) as model:
        with pytest.raises(LLMConnectionError) as caught:
            await model.complete(LLMRequest.build("hi"))
    message = caught.value.message
    assert "broke off before the reply was complete" in message
    assert "server was reached" in message
    assert "could not connect" not in message
    assert "running" not in message
    assert caught.value.is_retryable


async def test_ollama_that_is_not_there_still_cannot_be_reached(anyio_backend: str) -> None:
    async with OllamaProvider("llama3.2", host="http://127.0.0.1:9", retry_policy=NO_RETRY) as model:
        with pytest.raises(LLMConnectionError) as caught:
            await model.complete(LLMRequest.build("hi"))
    assert "nothing is listening at http://127.0.0.1:9" in caught.value.message  # loopback: not up
