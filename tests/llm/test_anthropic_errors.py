"""AnthropicProvider's failures: the API's error bodies mapped onto agcore's error tree, and which of
them the retry layer retries (the SDK's own retries are off)."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
import respx

from agcore.llm.errors import (
    AuthenticationError,
    ContextWindowExceededError,
    InvalidRequestError,
    LLMConnectionError,
    LLMError,
    ModelNotFoundError,
    OverloadedError,
    RateLimitError,
    RequestTimeoutError,
    ServerError,
)
from agcore.llm.events import DoneEvent, ErrorEvent
from agcore.llm.retry import RetryPolicy
from agcore.llm.types import LLMRequest
from tests.llm.test_anthropic_provider import (
    HI,
    MESSAGE_STOP,
    MESSAGES,
    MODEL,
    SSE_HEADERS,
    block_delta,
    block_start,
    block_stop,
    make,
    message_body,
    message_delta,
    message_start,
    respond_json,
    sse,
)

pytestmark = pytest.mark.anyio

ERROR_REQUEST_ID = "req_011CSHoEeqs5C35K2UUqR7Fz"


class Sleeps:
    """A no-op ``sleep`` that records the delays the retry layer asked for."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def retrying(sleeps: Sleeps, attempts: int = 4) -> RetryPolicy:
    return RetryPolicy(max_attempts=attempts, sleep=sleeps, rng=random.Random(0))


def api_error(
    status: int, error_type: str, message: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    """An error response exactly as the API sends one."""
    body = {"type": "error", "error": {"type": error_type, "message": message},
            "request_id": ERROR_REQUEST_ID}
    return httpx.Response(status, json=body, headers={"request-id": ERROR_REQUEST_ID, **(headers or {})})


def ok() -> httpx.Response:
    return respond_json(message_body([{"type": "text", "text": "Recovered."}]))


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with respx.mock(assert_all_called=False) as router:
        yield router


# ------------------------------------------------------------------ mapping


@pytest.mark.parametrize(
    ("response", "expected", "fragments"),
    [
        (api_error(400, "invalid_request_error", "messages.0.content: Field required"),
         InvalidRequestError, ["messages.0.content: Field required"]),
        (api_error(400, "invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum"),
         ContextWindowExceededError, ["prompt is too long", "context window"]),
        (api_error(401, "authentication_error", "invalid x-api-key"),
         AuthenticationError, ["invalid x-api-key", "ANTHROPIC_API_KEY"]),
        (api_error(403, "permission_error", "Your API key does not have permission to use this resource."),
         AuthenticationError, ["does not have permission", "ANTHROPIC_API_KEY"]),
        (api_error(404, "not_found_error", f"model: {MODEL}-nope"),
         ModelNotFoundError, [f"model: {MODEL}-nope", "model id"]),
        (api_error(500, "api_error", "Internal server error"), ServerError, ["Internal server error"]),
        (api_error(529, "overloaded_error", "Overloaded"), OverloadedError, ["Overloaded"]),
        (httpx.Response(502, text="<html><body>502 Bad Gateway</body></html>"),
         ServerError, ["502 Bad Gateway"]),
    ],
)
async def test_http_errors_map_onto_the_error_tree(
    api: respx.MockRouter, response: httpx.Response, expected: type[LLMError], fragments: list[str]
) -> None:
    api.post(MESSAGES).mock(return_value=response)
    with pytest.raises(expected) as caught:
        await make().complete(LLMRequest.build(HI))
    error = caught.value
    assert type(error) is expected
    assert error.status_code == response.status_code
    assert (error.provider, error.model) == ("anthropic", MODEL)
    for fragment in fragments:
        assert fragment in error.message
    if "request-id" in response.headers:
        assert error.request_id == ERROR_REQUEST_ID
    assert error.is_retryable == (response.status_code >= 500)


async def test_rate_limit_carries_retry_after(api: respx.MockRouter) -> None:
    api.post(MESSAGES).mock(return_value=api_error(
        429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit",
        headers={"retry-after": "7", "anthropic-ratelimit-tokens-remaining": "0"}))
    with pytest.raises(RateLimitError) as caught:
        await make().complete(LLMRequest.build(HI))
    assert caught.value.retry_after == 7.0
    assert caught.value.is_retryable
    assert "wait 7s" in caught.value.message


async def test_connection_failure_names_the_base_url(api: respx.MockRouter) -> None:
    refused = httpx2.ConnectError("connection refused")
    api.post("https://gateway.internal/v1/messages").mock(side_effect=refused)
    with pytest.raises(LLMConnectionError, match=re.escape("https://gateway.internal")) as caught:
        await make(base_url="https://gateway.internal").complete(LLMRequest.build(HI))
    assert caught.value.is_retryable


async def test_client_timeout_is_a_request_timeout(api: respx.MockRouter) -> None:
    api.post(MESSAGES).mock(side_effect=httpx2.ReadTimeout("timed out"))
    with pytest.raises(RequestTimeoutError, match="timeout"):
        await make().complete(LLMRequest.build(HI))


async def test_unknown_exceptions_are_not_mapped() -> None:
    assert make()._map_error(RuntimeError("a bug")) is None


# ------------------------------------------------------------------ retries


async def test_rate_limit_is_retried_after_the_servers_delay(api: respx.MockRouter) -> None:
    route = api.post(MESSAGES).mock(side_effect=[
        api_error(429, "rate_limit_error", "slow down", headers={"retry-after": "3"}), ok()])
    sleeps = Sleeps()
    response = await make(retry_policy=retrying(sleeps)).complete(LLMRequest.build(HI))
    assert response.text == "Recovered."
    assert route.call_count == 2
    assert len(sleeps.delays) == 1
    assert sleeps.delays[0] >= 3.0


@pytest.mark.parametrize(("status", "error_type"), [(500, "api_error"), (529, "overloaded_error")])
async def test_server_errors_are_retried_until_success(
    api: respx.MockRouter, status: int, error_type: str
) -> None:
    route = api.post(MESSAGES).mock(side_effect=[api_error(status, error_type, "busy"),
                                                 api_error(status, error_type, "busy"), ok()])
    sleeps = Sleeps()
    assert (await make(retry_policy=retrying(sleeps)).complete(LLMRequest.build(HI))).text == "Recovered."
    assert route.call_count == 3
    assert len(sleeps.delays) == 2


async def test_overload_gives_up_after_max_attempts(api: respx.MockRouter) -> None:
    route = api.post(MESSAGES).mock(return_value=api_error(529, "overloaded_error", "Overloaded"))
    with pytest.raises(OverloadedError):
        await make(retry_policy=retrying(Sleeps(), attempts=3)).complete(LLMRequest.build(HI))
    assert route.call_count == 3


@pytest.mark.parametrize(("status", "error_type"), [
    (400, "invalid_request_error"), (401, "authentication_error"), (404, "not_found_error")])
async def test_non_retryable_errors_are_sent_once(
    api: respx.MockRouter, status: int, error_type: str
) -> None:
    route = api.post(MESSAGES).mock(return_value=api_error(status, error_type, "no"))
    sleeps = Sleeps()
    with pytest.raises(LLMError):
        await make(retry_policy=retrying(sleeps)).complete(LLMRequest.build(HI))
    assert route.call_count == 1
    assert sleeps.delays == []


# ------------------------------------------------------------------ streaming failures


def ok_stream() -> httpx.Response:
    body = sse(message_start(), block_start(0, {"type": "text", "text": ""}),
               block_delta(0, {"type": "text_delta", "text": "Recovered."}), block_stop(0),
               message_delta("end_turn", 3), MESSAGE_STOP)
    return httpx.Response(200, content=body, headers=SSE_HEADERS)


async def test_stream_overloaded_before_any_event_is_retried(api: respx.MockRouter) -> None:
    overloaded = api_error(529, "overloaded_error", "Overloaded")
    route = api.post(MESSAGES).mock(side_effect=[overloaded, ok_stream()])
    sleeps = Sleeps()
    events = [e async for e in make(retry_policy=retrying(sleeps)).stream(LLMRequest.build(HI))]
    assert route.call_count == 2
    assert not any(isinstance(e, ErrorEvent) for e in events)
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.text == "Recovered."


async def test_stream_auth_failure_is_one_error_event(api: respx.MockRouter) -> None:
    route = api.post(MESSAGES).mock(return_value=api_error(401, "authentication_error", "invalid x-api-key"))
    events: list[Any] = [e async for e in make(retry_policy=retrying(Sleeps())).stream(LLMRequest.build(HI))]
    assert route.call_count == 1
    assert len(events) == 1
    [error] = events
    assert isinstance(error, ErrorEvent)
    assert error.error_type == "AuthenticationError"
    assert error.status_code == 401
    assert error.request_id == ERROR_REQUEST_ID
    assert error.partial is None
    assert "ANTHROPIC_API_KEY" in error.message
