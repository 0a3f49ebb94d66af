"""The one clock and id source: every id and timestamp agcore makes comes from here.

Message ids, the tool-call ids agcore generates, session ids and creation times, plan ids, TTL checks,
tool durations, memory items and trace ids all call ``new_id()``, ``now()`` or ``monotonic()``, and
nothing else in agcore calls ``uuid4``, ``datetime.now``, ``time.time`` or ``time.perf_counter``
(ruff's banned-api rule enforces it). A runtime that replays the loop (Temporal) must get the same ids
and times back on every replay: it runs the loop under its own deterministic ``Clock`` with
``use_clock(clock)``. The active clock is a context variable, so concurrent runs in one process (many
workflows on one worker) each see their own, and anyio task groups carry it into their tasks.

Real-time waits that are not timestamps (a SQLite busy timeout, retry sleeps) keep the system clock.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "SystemClock", "current_clock", "monotonic", "new_id", "now", "now_datetime", "use_clock"]


@runtime_checkable
class Clock(Protocol):
    """Where ids and times come from. ``now()`` is epoch seconds; ``monotonic()`` only ever grows and
    is for durations; ``new_id()`` is a unique string (32 hex characters from the system clock)."""

    def new_id(self) -> str:
        """A new unique id (a string; the system clock gives 32 hex characters)."""

    def now(self) -> float:
        """The current time, in seconds since the epoch."""

    def monotonic(self) -> float:
        """Seconds on a clock that only ever grows, for durations (its zero means nothing)."""


class SystemClock:
    """The default: random ids (uuid4) and the machine's clocks."""

    __slots__ = ()

    def new_id(self) -> str:
        """A random id in ``uuid4().hex``'s form (version 4, RFC 4122 variant), made from 16 random bytes
        directly: ``uuid4()`` builds a ``UUID`` object first, ~5x the time, and every message, reply
        and tool call takes an id (five a tool-call turn)."""
        raw = bytearray(os.urandom(16))
        raw[6] = (raw[6] & 0x0F) | 0x40
        raw[8] = (raw[8] & 0x3F) | 0x80
        return raw.hex()

    def now(self) -> float:
        """``time.time()``."""
        return time.time()

    def monotonic(self) -> float:
        """``time.perf_counter()``."""
        return time.perf_counter()

    def __repr__(self) -> str:
        return "SystemClock()"


# The default is shared by every context; SystemClock holds no state, so sharing it is safe.
_current: ContextVar[Clock] = ContextVar("agcore_clock", default=SystemClock())  # noqa: B039


def current_clock() -> Clock:
    """The clock in force here (the system clock unless ``use_clock`` says otherwise)."""
    return _current.get()


@contextmanager
def use_clock(clock: Clock) -> Iterator[Clock]:
    """Make ``clock`` the source of ids and times for the code inside the block (and the tasks it
    starts); the previous clock is back afterwards."""
    token = _current.set(clock)
    try:
        yield clock
    finally:
        _current.reset(token)


def new_id() -> str:
    return _current.get().new_id()


def now() -> float:
    return _current.get().now()


def now_datetime() -> datetime:
    """``now()`` as an aware UTC datetime."""
    return datetime.fromtimestamp(_current.get().now(), UTC)


def monotonic() -> float:
    return _current.get().monotonic()
