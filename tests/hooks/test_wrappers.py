"""Hook wrappers keep pluggy's meaning around (possibly async) impls: new-style ``wrapper=True`` and
old-style ``hookwrapper=True`` generators, plus agcore's async-generator wrappers."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Generator
from typing import Any

import pluggy
import pytest

from agcore.hooks import HookExecutor, HookFailure, ToolCallDecision, hookimpl
from agcore.llm import LLMRequest
from tests.hooks import make_call, make_ctx, make_message, make_request

pytestmark = pytest.mark.anyio


class AsyncSuffix:
    """An async impl that appends to the request's system prompt."""

    def __init__(self, suffix: str, log: list[str] | None = None) -> None:
        self.suffix = suffix
        self.log = log if log is not None else []

    @hookimpl
    async def on_llm_request(self, request: LLMRequest) -> LLMRequest:
        self.log.append(f"impl {self.suffix}")
        return request.model_copy(update={"system": f"{request.system}+{self.suffix}"})


class Fails:
    def __init__(self, error: Exception) -> None:
        self.error = error

    @hookimpl
    async def on_llm_request(self) -> None:
        raise self.error


def _executor(*plugins: object) -> HookExecutor:
    executor = HookExecutor()
    for plugin in plugins:
        executor.register(plugin)
    return executor


async def test_sync_new_style_wrapper_sees_the_chained_result_and_replaces_it() -> None:
    log: list[str] = []

    class Wrapper:
        @hookimpl(wrapper=True)
        def on_llm_request(self, request: LLMRequest) -> Generator[None, LLMRequest, LLMRequest]:
            log.append(f"before, sees {request.system}")
            result = yield
            log.append(f"after, got {result.system}")
            return result.model_copy(update={"system": result.system + "+wrapped"})

    executor = _executor(Wrapper(), AsyncSuffix("a", log), AsyncSuffix("b", log))

    final = await executor.on_llm_request(make_ctx(), make_request())

    assert final.system == "base+b+a+wrapped"
    assert log == ["before, sees base", "impl b", "impl a", "after, got base+b+a"]


async def test_old_style_hookwrapper_gets_a_result_object_and_may_force_one() -> None:
    class OldStyle:
        @hookimpl(hookwrapper=True)
        def on_llm_request(self) -> Generator[None, pluggy.Result[LLMRequest], None]:
            outcome = yield
            request = outcome.get_result()
            outcome.force_result(request.model_copy(update={"system": request.system + "+forced"}))

    class Observes:
        @hookimpl(hookwrapper=True)
        def on_llm_request(self) -> Generator[None, pluggy.Result[LLMRequest], None]:
            yield  # result untouched

    executor = _executor(OldStyle(), Observes(), AsyncSuffix("a"))

    assert (await executor.on_llm_request(make_ctx(), make_request())).system == "base+a+forced"


async def test_async_wrapper_around_async_impls_sees_and_replaces_the_result() -> None:
    seen: list[str | None] = []

    class Replaces:
        @hookimpl(wrapper=True)
        async def on_llm_request(self) -> AsyncGenerator[LLMRequest | None, LLMRequest]:
            result = yield None
            seen.append(result.system)
            yield result.model_copy(update={"system": "replaced"})  # the replacement

    class KeepsIt:
        @hookimpl(wrapper=True, tryfirst=True)
        async def on_llm_request(self) -> AsyncGenerator[None, LLMRequest]:
            result = yield
            seen.append(result.system)  # outermost: sees the inner wrapper's replacement

    executor = _executor(KeepsIt(), Replaces(), AsyncSuffix("a"))

    assert (await executor.on_llm_request(make_ctx(), make_request())).system == "replaced"
    assert seen == ["base+a", "replaced"]


async def test_async_old_style_hookwrapper_forces_a_result() -> None:
    class OldAsync:
        @hookimpl(hookwrapper=True)
        async def on_turn_end(self) -> AsyncGenerator[None, pluggy.Result[bool]]:
            outcome = yield
            assert outcome.get_result() is True
            outcome.force_result(False)

    executor = _executor(OldAsync())

    assert await executor.on_turn_end(make_ctx(), make_message()) is False


async def test_wrappers_nest_outermost_first_in_and_last_out() -> None:
    log: list[str] = []

    def wrapper(name: str, **opts: Any) -> object:
        class Plugin:
            @hookimpl(wrapper=True, **opts)
            async def on_session_start(self) -> AsyncGenerator[None, object]:
                log.append(f"{name} in")
                yield
                log.append(f"{name} out")

        return Plugin()

    class Impl:
        @hookimpl(tryfirst=True)
        def on_session_start(self) -> None:
            log.append("impl")

    executor = HookExecutor()
    executor.register(Impl(), name="impl")
    executor.register(wrapper("outer", tryfirst=True), name="outer")
    executor.register(wrapper("inner", trylast=True), name="inner")
    executor.register(wrapper("middle"), name="middle")

    await executor.on_session_start(make_ctx())

    assert log == ["outer in", "middle in", "inner in", "impl", "inner out", "middle out", "outer out"]


# ------------------------------------------------------------------------------------- exceptions


async def test_sync_wrapper_sees_the_impl_exception_and_reraising_blames_the_impl() -> None:
    seen: list[BaseException] = []
    error = ValueError("bad request")

    class Wrapper:
        @hookimpl(wrapper=True)
        def on_llm_request(self) -> Generator[None, LLMRequest, LLMRequest]:
            try:
                return (yield)
            except ValueError as exc:
                seen.append(exc)
                raise

    executor = HookExecutor()
    executor.register(Wrapper(), name="wrapper")
    executor.register(Fails(error), name="faulty")

    with pytest.raises(HookFailure) as info:
        await executor.on_llm_request(make_ctx(), make_request())

    assert seen == [error]
    assert (info.value.plugin_name, info.value.error) == ("faulty", error)


async def test_wrapper_may_handle_the_exception_with_a_result() -> None:
    class Recover:
        @hookimpl(wrapper=True)
        def before_tool_call(self) -> Generator[None, ToolCallDecision, ToolCallDecision]:
            try:
                return (yield)
            except ConnectionError:
                return ToolCallDecision.deny("policy service unreachable; refusing to be safe")

    class Policy:
        @hookimpl
        async def before_tool_call(self) -> None:
            raise ConnectionError("down")

    executor = _executor(Recover(), Policy())

    decision = await executor.before_tool_call(make_ctx(), make_call())

    assert decision == ToolCallDecision.deny("policy service unreachable; refusing to be safe")


async def test_async_wrapper_sees_the_exception_and_may_replace_it() -> None:
    seen: list[str] = []

    class AsyncRecover:
        @hookimpl(wrapper=True)
        async def on_llm_request(self, request: LLMRequest) -> AsyncGenerator[LLMRequest | None, LLMRequest]:
            try:
                yield None
            except LookupError as exc:
                seen.append(str(exc))
                yield request.model_copy(update={"system": "fallback"})

    executor = _executor(AsyncRecover(), Fails(LookupError("no such model")))

    assert (await executor.on_llm_request(make_ctx(), make_request())).system == "fallback"
    assert seen == ["no such model"]


async def test_old_style_hookwrapper_sees_the_exception_on_the_result() -> None:
    seen: list[BaseException | None] = []

    class OldStyle:
        @hookimpl(hookwrapper=True)
        async def on_llm_request(self) -> AsyncGenerator[None, pluggy.Result[LLMRequest]]:
            outcome = yield
            seen.append(outcome.exception)

    error = ValueError("nope")
    executor = HookExecutor()
    executor.register(OldStyle(), name="old")
    executor.register(Fails(error), name="faulty")

    with pytest.raises(HookFailure) as info:
        await executor.on_llm_request(make_ctx(), make_request())

    assert seen == [error]
    assert info.value.plugin_name == "faulty"


async def test_wrapper_that_swallows_the_exception_keeps_the_last_good_value() -> None:
    class Swallow:
        @hookimpl(wrapper=True)
        def on_llm_request(self) -> Generator[None, LLMRequest, None]:
            with contextlib.suppress(ValueError):
                yield
            # falls off the end: returns None, which means "no replacement"

    executor = _executor(Swallow(), Fails(ValueError("x")), AsyncSuffix("a"))

    # AsyncSuffix was registered last, so it ran (and rewrote) before the impl that failed.
    assert (await executor.on_llm_request(make_ctx(), make_request())).system == "base+a"


@pytest.mark.parametrize("where", ["before", "after"])
async def test_a_wrapper_raising_its_own_error_is_blamed(where: str) -> None:
    log: list[str] = []

    class Broken:
        @hookimpl(wrapper=True)
        def on_llm_request(self) -> Generator[None, LLMRequest, LLMRequest]:
            if where == "before":
                raise RuntimeError("wrapper setup failed")
            yield
            raise RuntimeError("wrapper teardown failed")

    executor = HookExecutor()
    executor.register(Broken(), name="broken")
    executor.register(AsyncSuffix("a", log), name="fine")

    with pytest.raises(HookFailure, match=f"wrapper {'setup' if where == 'before' else 'teardown'}") as info:
        await executor.on_llm_request(make_ctx(), make_request())

    assert info.value.plugin_name == "broken"
    assert log == ([] if where == "before" else ["impl a"])


async def test_a_wrapper_replacing_with_the_wrong_type_is_blamed() -> None:
    class Wrong:
        @hookimpl(wrapper=True)
        def on_turn_end(self) -> Generator[None, bool, str]:
            yield
            return "yes"

    executor = HookExecutor()
    executor.register(Wrong(), name="wrong")

    with pytest.raises(HookFailure, match="'wrong'") as info:
        await executor.on_turn_end(make_ctx(), make_message())
    assert isinstance(info.value.error, TypeError)


@pytest.mark.parametrize(
    ("style", "message"),
    [
        ("no_yield", "did not yield"),
        ("two_yields", "has a second yield"),
        ("three_async", "has a third yield"),
        ("old_two_yields", "has a second yield"),
        ("async_old_two_yields", "has a second yield"),
        ("async_no_yield", "did not yield"),
    ],
)
async def test_misbehaving_wrappers_are_reported(style: str, message: str) -> None:
    class NoYield:
        @hookimpl(wrapper=True)
        def on_turn_end(self) -> Generator[None, bool, bool]:
            return True
            yield  # makes it a generator

    class TwoYields:
        @hookimpl(wrapper=True)
        def on_turn_end(self) -> Generator[None, bool, bool]:
            yield
            yield
            return True

    class OldTwoYields:
        @hookimpl(hookwrapper=True)
        def on_turn_end(self) -> Generator[None, pluggy.Result[bool], None]:
            yield
            yield

    class AsyncOldTwoYields:
        @hookimpl(hookwrapper=True)
        async def on_turn_end(self) -> AsyncGenerator[None, pluggy.Result[bool]]:
            yield
            yield

    class AsyncNoYield:
        @hookimpl(wrapper=True)
        async def on_turn_end(self) -> AsyncGenerator[None, bool]:
            if False:
                yield

    class ThreeAsync:
        @hookimpl(wrapper=True)
        async def on_turn_end(self) -> AsyncGenerator[bool | None, bool]:
            yield None
            yield True
            yield True

    plugin = {
        "no_yield": NoYield,
        "two_yields": TwoYields,
        "old_two_yields": OldTwoYields,
        "async_old_two_yields": AsyncOldTwoYields,
        "async_no_yield": AsyncNoYield,
        "three_async": ThreeAsync,
    }[style]()
    executor = HookExecutor()
    executor.register(plugin, name=style)

    with pytest.raises(HookFailure, match=message) as info:
        await executor.on_turn_end(make_ctx(), make_message())
    assert info.value.plugin_name == style
    assert isinstance(info.value.error, RuntimeError)


async def test_observer_wrappers_see_a_result_and_their_failures_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[object] = []

    class Watch:
        @hookimpl(wrapper=True, tryfirst=True)
        async def on_message(self) -> AsyncGenerator[None, object]:
            seen.append((yield))

    class BrokenTeardown:
        @hookimpl(wrapper=True)
        def on_message(self) -> Generator[None, object, object]:
            yield
            raise OSError("disk full")

    class BrokenImpl:
        @hookimpl
        def on_message(self) -> None:
            raise ValueError("bad message")

    executor = HookExecutor()
    for plugin in (Watch(), BrokenTeardown(), BrokenImpl()):
        executor.register(plugin)

    with caplog.at_level(logging.WARNING, logger="agcore.hooks"):
        await executor.on_message(make_ctx(), "m")

    assert seen == [None]  # the outer wrapper completed normally, not with an exception
    assert [r.agcore_plugin for r in caplog.records] == ["BrokenImpl", "BrokenTeardown"]  # type: ignore[attr-defined]


def test_wrapper_that_is_not_a_generator_is_rejected_at_registration() -> None:
    class NotAGenerator:
        @hookimpl(wrapper=True)
        async def on_turn_end(self) -> None: ...

    with pytest.raises(pluggy.PluginValidationError, match="not a generator function"):
        HookExecutor().register(NotAGenerator())


def test_async_wrapper_still_gets_pluggys_argument_check() -> None:
    class BadArgs:
        @hookimpl(wrapper=True)
        async def on_turn_end(self, nonsense: int) -> AsyncGenerator[None, bool]:
            yield

    with pytest.raises(pluggy.PluginValidationError, match="nonsense"):
        HookExecutor().register(BadArgs())
