"""The pluggy markers for agcore hooks: ``@hookspec`` declares a hook, ``@hookimpl`` implements one.

``hookimpl`` is pluggy's ``HookimplMarker`` with one addition, agcore's ``async def`` generator
wrappers. pluggy accepts only (sync) generator functions as wrappers, so such a wrapper is marked as
a generator stand-in with the same signature that carries the real function (``async_wrapper_of``);
pluggy validates and orders the stand-in like any wrapper, and agcore's multicall runs the real one.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable, Generator
from typing import Any, Final, TypeVar, cast, overload

import pluggy
from pluggy import HookImpl

__all__ = ["ENTRYPOINT_GROUP", "PROJECT_NAME", "async_wrapper_of", "hookimpl", "hookspec"]

#: The pluggy project name; a ``PluginManager`` for agcore hooks must be created with it.
PROJECT_NAME: Final = "agcore"
#: The entry-point group plugins are published under (``[project.entry-points.agcore]``).
ENTRYPOINT_GROUP: Final = "agcore"

_F = TypeVar("_F", bound=Callable[..., object])
_REAL_WRAPPER: Final = "__agcore_async_wrapper__"


def _generator_stand_in(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)  # the signature (pluggy reads argument names through __wrapped__)
    def stand_in(*args: Any, **kwargs: Any) -> Generator[None, Any, None]:
        yield  # pragma: no cover - never called: agcore's multicall calls the real wrapper

    setattr(stand_in, _REAL_WRAPPER, function)
    return stand_in


def async_wrapper_of(impl: HookImpl) -> Callable[..., Any] | None:
    """The ``async def`` generator behind a wrapper marked with agcore's ``hookimpl`` (bound to its
    plugin like ``impl.function``), or None for any other implementation."""
    function = impl.function
    real: Callable[..., Any] | None = getattr(function, _REAL_WRAPPER, None)
    if real is None:
        return None
    return types.MethodType(real, function.__self__) if inspect.ismethod(function) else real


class AgcoreHookimplMarker:
    """pluggy's ``HookimplMarker("agcore")``, same arguments and meaning; an ``async def`` generator
    wrapper is marked as its generator stand-in (pluggy's marker class is final: this delegates)."""

    __slots__ = ("_marker",)

    def __init__(self, project_name: str) -> None:
        self._marker = pluggy.HookimplMarker(project_name)

    @property
    def project_name(self) -> str:
        return self._marker.project_name

    @overload
    def __call__(
        self, function: _F, hookwrapper: bool = ..., optionalhook: bool = ..., tryfirst: bool = ...,
        trylast: bool = ..., specname: str | None = ..., wrapper: bool = ...,
    ) -> _F: ...

    @overload
    def __call__(
        self, function: None = ..., hookwrapper: bool = ..., optionalhook: bool = ..., tryfirst: bool = ...,
        trylast: bool = ..., specname: str | None = ..., wrapper: bool = ...,
    ) -> Callable[[_F], _F]: ...

    def __call__(
        self,
        function: _F | None = None,
        hookwrapper: bool = False,
        optionalhook: bool = False,
        tryfirst: bool = False,
        trylast: bool = False,
        specname: str | None = None,
        wrapper: bool = False,
    ) -> _F | Callable[[_F], _F]:
        def mark(func: _F) -> _F:
            marked = self._marker(
                func, hookwrapper=hookwrapper, optionalhook=optionalhook, tryfirst=tryfirst,
                trylast=trylast, specname=specname, wrapper=wrapper,
            )
            if (wrapper or hookwrapper) and inspect.isasyncgenfunction(marked):
                return cast(_F, _generator_stand_in(marked))  # copies the options with __dict__
            return marked

        return mark if function is None else mark(function)


hookspec: Final = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl: Final = AgcoreHookimplMarker(PROJECT_NAME)
