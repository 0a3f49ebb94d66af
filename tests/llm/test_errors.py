"""HTTP failures map onto the LLMError tree with messages that say what to do."""

from __future__ import annotations

import email.utils
import time

import pytest

from agcore.llm.errors import (
    AuthenticationError,
    ContextWindowExceededError,
    InvalidRequestError,
    LLMError,
    ModelNotFoundError,
    OverloadedError,
    RateLimitError,
    RequestTimeoutError,
    ServerError,
    error_class_named,
    error_from_status,
    parse_retry_after,
)
from agcore.llm.events import ErrorEvent


@pytest.mark.parametrize(
    ("status", "detail", "cls", "retryable"),
    [
        (400, "messages: field required", InvalidRequestError, False),
        (400, "prompt is too long: 210000 tokens > 200000 maximum", ContextWindowExceededError, False),
        (400, "This model's maximum context length is 128000 tokens", ContextWindowExceededError, False),
        (401, "invalid x-api-key", AuthenticationError, False),
        (403, "forbidden", AuthenticationError, False),
        (404, "model: claude-nope", ModelNotFoundError, False),
        (408, "timeout", RequestTimeoutError, True),
        (429, "slow down", RateLimitError, True),
        (500, "internal", ServerError, True),
        (502, "bad gateway", ServerError, True),
        (503, "unavailable", ServerError, True),
        (529, "Overloaded", OverloadedError, True),
    ],
)
def test_status_mapping(status: int, detail: str, cls: type[LLMError], retryable: bool) -> None:
    error = error_from_status(status, detail, provider="anthropic", model="m", request_id="req_1")
    assert type(error) is cls
    assert error.is_retryable is retryable
    assert error.status_code == status
    assert detail in error.message
    assert "req_1" in str(error)
    assert "anthropic:m" in str(error)


def test_authentication_error_names_the_credential_to_fix() -> None:
    error = error_from_status(401, "bad key", provider="openai",
                              credentials_hint="the OPENAI_API_KEY environment variable")
    assert "OPENAI_API_KEY" in error.message


def test_rate_limit_carries_retry_after() -> None:
    error = error_from_status(429, "slow down", provider="x", headers={"Retry-After": "7"})
    assert error.retry_after == 7.0
    assert "7s" in error.message


def test_retry_after_ms_is_preferred_and_dates_are_understood() -> None:
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    seconds = parse_retry_after({"retry-after": future})
    assert seconds is not None
    assert 25 < seconds <= 31
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after(None) is None


def test_error_event_round_trips_to_the_same_error_type() -> None:
    error = error_from_status(529, "Overloaded", provider="anthropic", model="m")
    event = ErrorEvent.from_exception(error)
    assert event.to_exception() is error
    rebuilt = ErrorEvent.model_validate_json(event.model_dump_json()).to_exception()
    assert type(rebuilt) is OverloadedError
    assert rebuilt.is_retryable
    assert rebuilt.status_code == 529
    assert error_class_named("NoSuchError") is LLMError
