"""``FixedClock``: a deterministic clock for tests and replays (``agcore.use_clock(FixedClock())``)."""

from __future__ import annotations

__all__ = ["FixedClock"]

#: 2026-01-01T00:00:00Z: a fixed start, so runs under a fresh FixedClock produce identical records.
DEFAULT_START = 1_767_225_600.0


class FixedClock:
    """Ids ``id-000001``, ``id-000002``, …; ``now()`` starts at ``start`` and advances by ``step`` seconds
    per call, ``monotonic()`` likewise from 0. Two runs of the same code under two fresh FixedClocks
    see the same ids and times."""

    def __init__(self, *, start: float = DEFAULT_START, step: float = 0.001, prefix: str = "id-") -> None:
        self.prefix = prefix
        self.step = step
        self._ids = 0
        self._now = start
        self._monotonic = 0.0

    def new_id(self) -> str:
        """The next id in sequence: ``prefix`` and a six-digit counter (``id-000001``, ``id-000002``...)."""
        self._ids += 1
        return f"{self.prefix}{self._ids:06d}"

    def now(self) -> float:
        """The fixed time, advanced by ``step`` seconds on every call (timestamps still differ and sort)."""
        self._now += self.step
        return self._now

    def monotonic(self) -> float:
        """Starts at 0 and advances by ``step`` seconds on every call."""
        self._monotonic += self.step
        return self._monotonic

    def __repr__(self) -> str:
        return f"FixedClock({self._ids} ids so far)"
