"""The async multicall: pluggy's call loop (``pluggy._callers._multicall``) with awaiting added.

pluggy calls implementations synchronously; here a non-wrapper implementation may return a coroutine
(it is awaited), and a wrapper may be a sync generator or (agcore's extension) an async generator.
How results combine is a ``Fold``: pluggy's list or first result, or one of the agcore hooks' rules
(chained rewrites, first deny, any False). ``observer`` selects the failure semantics.
"""

from __future__ import annotations

import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Generator, Sequence
from typing import Any, Final

import anyio
from pluggy import HookImpl, Result

from agcore.hooks._errors import HookFailure
from agcore.hooks._folds import Fold
from agcore.hooks._markers import async_wrapper_of

__all__ = ["log_observer_failure", "multicall"]

logger: Final = logging.getLogger("agcore.hooks")


# ----------------------------------------------------------------------------------------- wrappers


def _wrapfail(impl: HookImpl, message: str, rule: str = "a wrapper yields exactly once") -> RuntimeError:
    return RuntimeError(
        f"hook wrapper {impl.function.__qualname__} of plugin {impl.plugin_name!r} {message}: {rule}"
    )


class _Teardown(ABC):
    """The part of a started wrapper that runs after the inner implementations."""

    __slots__ = ("gen", "impl")

    def __init__(self, impl: HookImpl, gen: Any) -> None:
        self.impl = impl
        self.gen = gen

    @abstractmethod
    async def finish(self, result: object, exception: BaseException | None) -> object:
        """Resume the wrapper with the inner result (or exception); return the result that stands."""


class _SyncWrapper(_Teardown):
    """``wrapper=True`` generator: the yield receives the result (or raises), its return replaces it."""

    __slots__ = ()

    async def finish(self, result: object, exception: BaseException | None) -> object:
        gen: Generator[None, object, object] = self.gen
        try:
            if exception is None:
                gen.send(result)
            else:
                gen.throw(exception)
        except StopIteration as stop:
            return stop.value
        gen.close()
        raise _wrapfail(self.impl, "has a second yield")


class _SyncHookwrapper(_Teardown):
    """Old-style ``hookwrapper=True`` generator: the yield receives a ``pluggy.Result``."""

    __slots__ = ()

    async def finish(self, result: object, exception: BaseException | None) -> object:
        gen: Generator[None, Result[object], None] = self.gen
        outcome = Result(result, exception)
        try:
            gen.send(outcome)
        except StopIteration:
            return outcome.get_result()
        gen.close()
        raise _wrapfail(self.impl, "has a second yield")


class _AsyncWrapper(_Teardown):
    """``wrapper=True`` async generator. It cannot ``return`` a value, so it replaces the result by
    yielding the replacement a second time; ending after the first yield keeps the result."""

    __slots__ = ()

    async def finish(self, result: object, exception: BaseException | None) -> object:
        gen: AsyncGenerator[object, object] = self.gen
        try:
            if exception is None:
                replaced = await gen.asend(result)
            else:
                replaced = await gen.athrow(exception)
        except StopAsyncIteration:
            return result if exception is None else None
        try:
            await gen.asend(None)
        except StopAsyncIteration:
            return replaced
        await gen.aclose()
        raise _wrapfail(
            self.impl,
            "has a third yield",
            "an async wrapper yields once, then at most its replacement result",
        )


class _AsyncHookwrapper(_Teardown):
    """Old-style ``hookwrapper=True`` async generator: the yield receives a ``pluggy.Result``."""

    __slots__ = ()

    async def finish(self, result: object, exception: BaseException | None) -> object:
        gen: AsyncGenerator[None, Result[object]] = self.gen
        outcome = Result(result, exception)
        try:
            await gen.asend(outcome)
        except StopAsyncIteration:
            return outcome.get_result()
        await gen.aclose()
        raise _wrapfail(self.impl, "has a second yield")


async def _start_wrapper(impl: HookImpl, gen: object) -> _Teardown:
    """Run a wrapper up to its yield."""
    if inspect.isgenerator(gen):
        try:
            next(gen)
        except StopIteration:
            raise _wrapfail(impl, "did not yield") from None
        return _SyncHookwrapper(impl, gen) if impl.hookwrapper else _SyncWrapper(impl, gen)
    if inspect.isasyncgen(gen):
        try:
            await anext(gen)
        except StopAsyncIteration:
            raise _wrapfail(impl, "did not yield") from None
        return _AsyncHookwrapper(impl, gen) if impl.hookwrapper else _AsyncWrapper(impl, gen)
    raise TypeError(
        f"hook wrapper {impl.function.__qualname__} of plugin {impl.plugin_name!r} returned "
        f"{type(gen).__name__}: a wrapper must be a generator (or async generator) function with one yield"
    )


def log_observer_failure(hook_name: str, plugin_name: str, error: BaseException) -> None:
    logger.warning(
        "plugin %r raised %s in observer hook %r; the run goes on",
        plugin_name,
        type(error).__name__,
        hook_name,
        exc_info=error,
        extra={"agcore_hook": hook_name, "agcore_plugin": plugin_name},
    )


# ---------------------------------------------------------------------------------------- multicall


async def multicall(
    hook_name: str,
    impls: Sequence[HookImpl],
    kwargs: dict[str, object],
    fold: Fold,
    observer: bool,
) -> object:
    """Call ``impls`` (pluggy's order: the list runs from its end) with the arguments each declares.

    observer: an implementation or wrapper that raises is logged and skipped. Otherwise (gatekeeper)
    the exception stops the call, is thrown into the wrappers started so far (pluggy's meaning: they
    may handle it), and what remains is raised as ``HookFailure`` naming the plugin that raised it.
    BaseExceptions (cancellation above all) are never logged nor wrapped, and cancellation propagates
    even when a wrapper swallows it.
    """
    teardowns: list[_Teardown] = []
    exception: BaseException | None = None
    culprit: str | None = None  # the plugin whose exception is pending; None: not a plugin failure
    for impl in reversed(impls):
        try:
            function = impl.function
            if impl.wrapper or impl.hookwrapper:  # an async wrapper is registered as its stand-in
                function = async_wrapper_of(impl) or function
            args = [kwargs[name] for name in impl.argnames]
            if impl.kwargnames:
                extra = {name: kwargs[name] for name in impl.kwargnames if name in kwargs}
                res = function(*args, **extra)
            else:
                res = function(*args)
            if impl.wrapper or impl.hookwrapper:
                teardowns.append(await _start_wrapper(impl, res))
                continue
            if inspect.iscoroutine(res):
                res = await res
            if res is not None and fold.feed(res, kwargs):
                break
        except Exception as exc:
            if observer:
                log_observer_failure(hook_name, impl.plugin_name, exc)
                continue
            exception, culprit = exc, impl.plugin_name
            break
        except BaseException as exc:
            exception, culprit = exc, None
            break

    result = fold.value(kwargs) if exception is None else None
    cancelled: BaseException | None = None
    if exception is not None and not isinstance(exception, Exception):
        cancelled = exception if isinstance(exception, anyio.get_cancelled_exc_class()) else None
    for teardown in reversed(teardowns):
        try:
            replaced = await teardown.finish(result, exception)
            if cancelled is not None:  # cancellation cannot be swallowed: outer wrappers see it too
                continue
            result = fold.replacement(replaced, kwargs)
            exception = culprit = None
        except BaseException as exc:
            if exc is exception:  # the wrapper let the exception through
                continue
            if cancelled is not None and isinstance(exc, Exception):
                logger.warning(
                    "plugin %r raised %s in hook %r while the call was cancelled; the cancellation goes on",
                    teardown.impl.plugin_name,
                    type(exc).__name__,
                    hook_name,
                    exc_info=exc,
                    extra={"agcore_hook": hook_name, "agcore_plugin": teardown.impl.plugin_name},
                )
                continue
            if isinstance(exc, Exception):
                if observer:
                    log_observer_failure(hook_name, teardown.impl.plugin_name, exc)
                    continue
                exception, culprit = exc, teardown.impl.plugin_name
            else:
                exception, culprit = exc, None
                if cancelled is None and isinstance(exc, anyio.get_cancelled_exc_class()):
                    cancelled = exc

    if cancelled is not None:
        raise cancelled
    if exception is None:
        return result
    if culprit is None:
        raise exception
    raise HookFailure(hook_name, culprit, exception) from exception
