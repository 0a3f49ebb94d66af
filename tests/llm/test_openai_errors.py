"""OpenAIProvider's failures: OpenAI's real error bodies and headers mapped onto agcore's error tree,
and the retry layer driving them (a no-op sleep records the waits)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpcore2
import httpx
import pytest
import respx

from agcore.llm.errors import (
    AuthenticationError,
    ContextWindowExceededError,
    InvalidRequestError,
    LLMError,
    ModelNotFoundError,
    RateLimitError,
    RequestTimeoutError,
    ResponseFormatError,
    ServerError,
)
from agcore.llm.retry import RetryPolicy
from agcore.llm.types import LLMRequest
from tests.llm.test_openai_provider import (
    CHAT,
    COMPAT,
    COMPAT_CHAT,
    HI,
    MODEL,
    REQUEST_ID,
    api_error,
    completion,
    make,
    openai_router,
    respond_json,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    yield from openai_router(monkeypatch)


def recording_policy(max_attempts: int = 3) -> tuple[RetryPolicy, list[float]]:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    return RetryPolicy(max_attempts=max_attempts, sleep=sleep), waits


async def failure(provider: Any) -> LLMError:
    with pytest.raises(LLMError) as caught:
        await provider.complete(LLMRequest.build(HI))
    return caught.value


async def test_bad_request(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=respond_json(api_error(
        "Invalid value: 'tool'. Supported values are: 'system', 'assistant', 'user', 'function', and 'tool'.",
        "invalid_request_error", "invalid_value", "messages[1].role"), status=400))
    error = await failure(make())
    assert type(error) is InvalidRequestError
    assert "Invalid value: 'tool'" in error.message
    assert "invalid_value" in error.message
    assert (error.status_code, error.request_id) == (400, REQUEST_ID)
    assert (error.provider, error.model) == ("openai", MODEL)
    assert not error.is_retryable


@pytest.mark.parametrize("message", [
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. "
    "Please reduce the length of the messages.",
    "Input tokens exceed the configured limit of 272000 tokens.",  # only the code says what it is
])
async def test_context_overflow_is_recognised(api: respx.MockRouter, message: str) -> None:
    api.post(CHAT).mock(return_value=respond_json(api_error(
        message, "invalid_request_error", "context_length_exceeded", "messages"), status=400))
    error = await failure(make())
    assert isinstance(error, ContextWindowExceededError)
    assert "context window" in error.message


async def test_rejected_key_names_the_environment_variable(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=respond_json(api_error(
        "Incorrect API key provided: sk-proj-****-key. You can find your API key at "
        "https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key"),
        status=401))
    error = await failure(make())
    assert type(error) is AuthenticationError
    assert "OPENAI_API_KEY" in error.message
    assert "Incorrect API key" in error.message


async def test_rejected_key_at_a_compatible_server_names_it(api: respx.MockRouter) -> None:
    api.post(COMPAT_CHAT).mock(return_value=httpx.Response(401, json={"detail": "Invalid bearer token"}))
    error = await failure(make(base_url=COMPAT, api_key="wrong"))
    assert isinstance(error, AuthenticationError)
    assert "Invalid bearer token" in error.message
    assert COMPAT in error.message
    assert "OPENAI_API_KEY" in error.message


async def test_forbidden(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=respond_json(api_error(
        "Project `proj_abc` does not have access to model `gpt-4.1`", "invalid_request_error",
        "model_not_found"), status=403))
    assert type(await failure(make())) is AuthenticationError


async def test_unknown_model(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=respond_json(api_error(
        "The model `gpt-9` does not exist or you do not have access to it.", "invalid_request_error",
        "model_not_found"), status=404))
    error = await failure(make())
    assert isinstance(error, ModelNotFoundError)
    assert "gpt-9" in error.message


async def test_rate_limit_is_retried_after_the_servers_wait(api: respx.MockRouter) -> None:
    route = api.post(CHAT).mock(side_effect=[
        respond_json(api_error("Rate limit reached for gpt-4.1 on tokens per min (TPM): Limit 30000, Used "
                               "30000, Requested 1043. Please try again in 1.5s.", "tokens",
                               "rate_limit_exceeded"),
                     status=429, headers={"retry-after-ms": "1500", "retry-after": "2"}),
        respond_json(completion({"content": "Finally."})),
    ])
    policy, waits = recording_policy()
    response = await make(retry_policy=policy).complete(LLMRequest.build(HI))
    assert response.text == "Finally."
    assert route.call_count == 2
    assert waits == [1.5]  # retry-after-ms wins over retry-after and over the backoff


async def test_rate_limit_carries_retry_after(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=respond_json(
        api_error("Rate limit reached", "requests", "rate_limit_exceeded"), status=429,
        headers={"retry-after-ms": "250"}))
    error = await failure(make())
    assert isinstance(error, RateLimitError)
    assert error.retry_after == 0.25
    assert error.is_retryable


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_errors_are_retried_until_attempts_run_out(api: respx.MockRouter, status: int) -> None:
    route = api.post(CHAT).mock(return_value=respond_json(api_error(
        "The server had an error while processing your request. Sorry about that!", "server_error"),
        status=status))
    policy, waits = recording_policy(max_attempts=3)
    error = await failure(make(retry_policy=policy))
    assert isinstance(error, ServerError)
    assert error.status_code == status
    assert route.call_count == 3
    assert len(waits) == 2


async def test_proxy_html_error_page_is_a_server_error(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=httpx.Response(
        502, text="<html><body><h1>502 Bad Gateway</h1></body></html>",
        headers={"content-type": "text/html"}))
    error = await failure(make())
    assert isinstance(error, ServerError)
    assert "502 Bad Gateway" in error.message


async def test_non_retryable_errors_are_sent_once(api: respx.MockRouter) -> None:
    route = api.post(CHAT).mock(return_value=respond_json(api_error(
        "Invalid schema for function 'get_weather'", "invalid_request_error", "invalid_function_parameters"),
        status=400))
    policy, waits = recording_policy(max_attempts=4)
    await failure(make(retry_policy=policy))
    assert route.call_count == 1
    assert waits == []


async def test_timeout(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(side_effect=httpcore2.ReadTimeout("timed out"))
    error = await failure(make(timeout=30.0))
    assert isinstance(error, RequestTimeoutError)
    assert "30s" in error.message
    assert error.is_retryable


async def test_non_json_success_is_a_format_error(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=httpx.Response(200, text="<html>captive portal</html>",
                                                    headers={"content-type": "text/html"}))
    error = await failure(make())
    assert isinstance(error, ResponseFormatError)
    assert "OpenAI-compatible" in error.message


async def test_reply_without_choices_is_a_format_error(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=respond_json({"object": "list", "data": []}))
    error = await failure(make())
    assert isinstance(error, ResponseFormatError)
