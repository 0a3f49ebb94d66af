"""``LoopBound``: a provider's HTTP client, made again when calls come from another event loop.

httpx, and the vendor SDKs built on it, pool connections that belong to the event loop that opened
them. A provider kept across two ``anyio.run`` calls (``QuickAgent.run_sync`` twice, a script that
runs one loop per request, ``create_provider``'s cache shared by tests that each start a loop) would
otherwise fail every call on the second loop with "Event loop is closed". The first call from a new
loop therefore gets a new client, made the way the first one was. The old one is closed there: its
connections cannot be closed cleanly without their loop, so that fails part way, silently, but the
client counts as closed and its SDK does not try again (with an error report) when it is collected.

A client the caller passed in (``client=``, ``http_client=``) is the caller's to manage and is never
replaced (``remake`` is None).
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from anyio.lowlevel import current_token

__all__ = ["LoopBound"]

T = TypeVar("T")


class LoopBound(Generic[T]):
    """``client`` for calls from the loop it was first used on; a new one (``remake()``) per new loop."""

    __slots__ = ("_client", "_close", "_loop", "_remake")

    def __init__(
        self, client: T, remake: Callable[[], T] | None = None,
        close: Callable[[T], Awaitable[None]] | None = None,
    ) -> None:
        self._client = client
        self._remake = remake
        self._close = close
        self._loop: weakref.ref[Any] | None = None

    @classmethod
    def made_by(
        cls, make: Callable[[], T], close: Callable[[T], Awaitable[None]] | None = None
    ) -> LoopBound[T]:
        """A client ``make()`` makes now and again for each new event loop; ``close`` closes one."""
        return cls(make(), make, close)

    @property
    def latest(self) -> T:
        """The client made last (what a caller inspecting the provider outside a call should see)."""
        return self._client

    async def for_this_loop(self) -> T:
        """The client for a call from the running event loop."""
        loop = current_token().native_token
        seen = self._loop() if self._loop is not None else None
        if seen is loop:
            return self._client
        if self._loop is not None and self._remake is not None:
            old, self._client = self._client, self._remake()
            await self._close_old(old)
        self._loop = weakref.ref(loop)
        return self._client

    async def aclose(self) -> None:
        """Close the client (when this object may: it made it). From another loop than the one it
        last ran on, as ``_close_old`` does."""
        if self._close is None:
            return
        if self._loop is None or self._loop() is current_token().native_token:  # unused, or used here
            await self._close(self._client)
        else:
            await self._close_old(self._client)

    async def _close_old(self, client: T) -> None:
        if self._close is None:
            return
        # Its connections belong to a loop that is gone: closing them fails with whatever that
        # loop's transports raise ("Event loop is closed"); the client is marked closed first.
        with contextlib.suppress(Exception):
            await self._close(client)
