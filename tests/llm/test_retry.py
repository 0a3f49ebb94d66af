"""The one retry layer: backoff, retry-after, nothing retried that cannot succeed."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from agcore.llm.errors import AuthenticationError, OverloadedError, RateLimitError
from agcore.llm.events import DoneEvent, ErrorEvent, StreamEvent, TextDelta, UsageEvent
from agcore.llm.retry import RetryPolicy, retry_call, retry_stream
from agcore.llm.types import AssistantMessage, Usage

pytestmark = pytest.mark.anyio


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def policy(sleeps: Sleeps, **kwargs: float) -> RetryPolicy:
    return RetryPolicy(sleep=sleeps, rng=random.Random(0), **kwargs)  # type: ignore[arg-type]


async def test_retries_retryable_errors_then_succeeds() -> None:
    sleeps, calls = Sleeps(), []

    async def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise OverloadedError("busy")
        return "ok"

    assert await retry_call(flaky, policy(sleeps, base_delay=1.0, jitter=0.0)) == "ok"
    assert len(calls) == 3
    assert sleeps.delays == [1.0, 2.0]


async def test_never_retries_what_cannot_succeed() -> None:
    sleeps, calls = Sleeps(), []

    async def denied() -> str:
        calls.append(1)
        raise AuthenticationError("bad key")

    with pytest.raises(AuthenticationError):
        await retry_call(denied, policy(sleeps))
    assert calls == [1]
    assert sleeps.delays == []


async def test_gives_up_after_max_attempts_with_the_last_error() -> None:
    sleeps, calls = Sleeps(), []

    async def always_busy() -> str:
        calls.append(1)
        raise OverloadedError(f"busy {len(calls)}")

    with pytest.raises(OverloadedError, match="busy 3"):
        await retry_call(always_busy, policy(sleeps, max_attempts=3))
    assert len(calls) == 3


async def test_honours_retry_after_and_refuses_absurd_waits() -> None:
    sleeps = Sleeps()
    retry = policy(sleeps, base_delay=0.1, jitter=0.0)
    assert retry.delay_for(1, RateLimitError("x", retry_after=5.0)) == 5.0
    assert retry.delay_for(1, RateLimitError("x", retry_after=3600.0)) is None
    assert retry.delay_for(1, RateLimitError("x")) == pytest.approx(0.1)


def test_backoff_is_capped_and_jittered_downwards() -> None:
    retry = RetryPolicy(base_delay=1.0, max_delay=5.0, jitter=0.5, max_attempts=20, rng=random.Random(1))
    delays = [retry.delay_for(n, OverloadedError("x")) for n in range(1, 10)]
    assert all(d is not None and 0.0 < d <= 5.0 for d in delays)
    assert delays[-1] is not None
    assert delays[-1] >= 2.5


def _stream(*events: StreamEvent) -> AsyncIterator[StreamEvent]:
    async def gen() -> AsyncIterator[StreamEvent]:
        for event in events:
            yield event

    return gen()


async def test_stream_is_retried_only_before_its_first_event() -> None:
    sleeps = Sleeps()
    done = DoneEvent(message=AssistantMessage())
    busy = ErrorEvent.from_exception(OverloadedError("busy"))
    attempts = iter([_stream(busy), _stream(TextDelta(index=0, text="hi"), busy), _stream(done)])
    events = [e async for e in retry_stream(lambda: next(attempts), policy(sleeps))]
    # first attempt retried silently; the second failed after output, so its error is delivered
    assert [type(e).__name__ for e in events] == ["TextDelta", "ErrorEvent"]
    assert len(sleeps.delays) == 1


async def test_stream_failing_after_usage_alone_is_retried_and_its_usage_dropped() -> None:
    """Anthropic sends ``message_start`` (usage) first; an ``overloaded_error`` right after it came
    before any output, so it is retried (issue 17's fault campaign found it was not), and only the
    reply that arrived reports usage."""
    sleeps = Sleeps()
    early = UsageEvent(usage=Usage(input_tokens=10, output_tokens=1))
    final = UsageEvent(usage=Usage(input_tokens=10, output_tokens=5))
    busy = ErrorEvent.from_exception(OverloadedError("busy"))
    done = DoneEvent(message=AssistantMessage())
    attempts = iter([_stream(early, busy), _stream(early, TextDelta(index=0, text="hi"), final, done)])
    events = [e async for e in retry_stream(lambda: next(attempts), policy(sleeps))]
    assert events == [early, TextDelta(index=0, text="hi"), final, done]
    assert len(sleeps.delays) == 1


async def test_usage_before_a_final_error_is_delivered_with_it() -> None:
    sleeps = Sleeps()
    early = UsageEvent(usage=Usage(input_tokens=10, output_tokens=1))
    denied = ErrorEvent.from_exception(AuthenticationError("bad key"))
    events = [e async for e in retry_stream(lambda: _stream(early, denied), policy(sleeps))]
    assert events == [early, denied]
    assert sleeps.delays == []


async def test_stream_error_that_is_not_retryable_is_delivered() -> None:
    sleeps = Sleeps()
    denied = ErrorEvent.from_exception(AuthenticationError("bad key"))
    events = [e async for e in retry_stream(lambda: _stream(denied), policy(sleeps))]
    assert events == [denied]
    assert sleeps.delays == []


async def test_a_reason_already_logged_is_not_repeated_in_full(caplog: pytest.LogCaptureFixture) -> None:
    sleeps = Sleeps()
    reason = "could not connect to http://127.0.0.1:9/v1: connection refused; is the server running?"

    async def down() -> str:
        raise OverloadedError(reason)

    with caplog.at_level("WARNING", logger="agcore.llm"), pytest.raises(OverloadedError):
        await retry_call(down, policy(sleeps, max_attempts=4))
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3  # one per retry
    assert sum(reason in line for line in lines) == 1  # the long reason once, then "same error"
    assert all("same error" in line for line in lines[1:])
