"""agcore: a protocol-first agent-runtime kernel.

The LLM layer lives in ``agcore.llm``; test doubles for downstream users in ``agcore.testing``. The
clock/id seam (``Clock``, ``SystemClock``, ``use_clock``, ``current_clock``) is exported here, lazily:
``import agcore`` itself stays free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agcore._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from agcore._clock import Clock, SystemClock, current_clock, use_clock

__version__ = "0.1.0"

_LAZY = {name: "agcore._clock" for name in ("Clock", "SystemClock", "current_clock", "use_clock")}

__all__ = ["Clock", "SystemClock", "__version__", "current_clock", "use_clock"]


def __getattr__(name: str) -> Any:
    return lazy_getattr(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, _LAZY)
