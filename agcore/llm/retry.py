"""The one retry layer for LLM calls.

Vendor SDKs retry on their own; agcore turns that off (``max_retries=0``) so there is exactly one
policy, the same for every provider: exponential backoff with jitter, the server's ``retry-after``
honoured, and nothing retried that ``LLMError.is_retryable`` says will fail again. A stream is
retried only while it has produced no output (no text, thinking or tool-call event): after that the
caller has seen output and a silent restart would duplicate it. Usage reports that come before any
output (Anthropic's ``message_start``) are held back until output begins, so an error right after
them (an ``overloaded_error`` is typical there) is retried like one before them.
"""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import anyio

from agcore.llm.errors import LLMError
from agcore.llm.events import ErrorEvent, StreamEvent, UsageEvent

__all__ = ["NO_RETRY", "RetryPolicy", "retry_call", "retry_stream"]

_log = logging.getLogger("agcore.llm.retry")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``max_attempts`` counts the first try. Delay before retry *n* (1-based) is
    ``min(max_delay, base_delay * multiplier**(n-1))`` scaled by a random factor in
    ``[1 - jitter, 1]``; a server ``retry_after`` wins when longer (capped at ``max_retry_after``:
    past it, waiting is pointless and the error is raised instead)."""

    max_attempts: int = 4
    base_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 20.0
    jitter: float = 0.25
    max_retry_after: float = 60.0
    sleep: Callable[[float], Awaitable[None]] = field(default=anyio.sleep, compare=False)
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def delay_for(self, attempt: int, error: LLMError) -> float | None:
        """Seconds to wait after failed ``attempt`` (1-based), or None when no retry should happen."""
        if not error.is_retryable or attempt >= self.max_attempts:
            return None
        backoff = min(self.max_delay, self.base_delay * self.multiplier ** (attempt - 1))
        backoff *= 1.0 - self.jitter * self.rng.random()
        if error.retry_after is not None:
            if error.retry_after > self.max_retry_after:
                return None
            return max(backoff, error.retry_after)
        return backoff


NO_RETRY = RetryPolicy(max_attempts=1)


def _log_retry(what: str, attempt: int, policy: RetryPolicy, delay: float, reason: str,
               previous: str | None) -> str:
    """One warning per retry; a reason already given for this call is not repeated in full (a server
    that is down fails the same way every time, and its long message would fill the screen)."""
    if reason == previous:
        _log.warning("%s failed again, same error (attempt %d/%d), retrying in %.2fs",
                     what, attempt, policy.max_attempts, delay)
    else:
        _log.warning("%s failed (attempt %d/%d), retrying in %.2fs: %s",
                     what, attempt, policy.max_attempts, delay, reason)
    return reason


async def retry_call(call: Callable[[], Awaitable[T]], policy: RetryPolicy) -> T:
    attempt = 1
    reported: str | None = None
    while True:
        try:
            return await call()
        except LLMError as error:
            delay = policy.delay_for(attempt, error)
            if delay is None:
                raise
            reported = _log_retry("LLM call", attempt, policy, delay, str(error), reported)
            await policy.sleep(delay)
            attempt += 1


async def retry_stream(
    open_stream: Callable[[], AsyncIterator[StreamEvent]], policy: RetryPolicy
) -> AsyncIterator[StreamEvent]:
    """Re-open the stream while it fails with a retryable ``ErrorEvent`` before any output."""
    attempt = 1
    reported: str | None = None
    while True:
        stream = open_stream()
        held: list[StreamEvent] = []  # usage reported before any output, released with the output
        started = False
        retry_delay: float | None = None
        try:
            async for event in stream:
                if not started:
                    if isinstance(event, UsageEvent):
                        held.append(event)
                        continue
                    if isinstance(event, ErrorEvent):
                        retry_delay = policy.delay_for(attempt, event.to_exception())
                        if retry_delay is not None:
                            reported = _log_retry("LLM stream, before any output,", attempt, policy,
                                                  retry_delay, event.message, reported)
                            break
                    started = True
                    for early in held:
                        yield early
                    held.clear()
                yield event
            if retry_delay is None:  # it ended with usage alone: nothing to hold that back for
                for early in held:
                    yield early
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        if retry_delay is None:
            return
        await policy.sleep(retry_delay)
        attempt += 1
