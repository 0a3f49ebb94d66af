"""HookExecutor calling: sync and async impls, pluggy's order, argument subsets, how each hook's results
combine, failure semantics (observer logs, gatekeeper raises HookFailure), cancellation, fast path."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from agcore.hooks import HookContext, HookExecutor, HookFailure, ToolCallDecision, hookimpl, hookspec
from agcore.llm import AssistantMessage, LLMRequest, ToolResultBlock, ToolUseBlock, UserMessage
from tests.hooks import make_call, make_ctx, make_message, make_request, make_result

pytestmark = pytest.mark.anyio


class Recorder:
    """A plugin implementing every observer hook, sync, that records what it saw."""

    def __init__(self, log: list[str], label: str = "rec") -> None:
        self.log = log
        self.label = label

    @hookimpl
    def on_session_start(self, ctx: HookContext) -> None:
        self.log.append(f"{self.label}:session_start:{ctx.session_id}")

    @hookimpl
    def on_session_end(self, ctx: HookContext) -> None:
        self.log.append(f"{self.label}:session_end")

    @hookimpl
    def on_turn_start(self, ctx: HookContext, user_input: UserMessage) -> None:
        self.log.append(f"{self.label}:turn_start:{user_input.content}")

    @hookimpl
    def on_llm_response(self, message: AssistantMessage) -> None:
        self.log.append(f"{self.label}:llm_response:{message.text}")

    @hookimpl
    def on_message(self, message: Any) -> None:
        self.log.append(f"{self.label}:message:{message}")

    @hookimpl
    def on_plan_step_complete(self, ctx: HookContext, step: Any) -> None:
        self.log.append(f"{self.label}:step:{step}:{ctx.plan_step_index}")

    @hookimpl
    def on_error(self, error: BaseException) -> None:
        self.log.append(f"{self.label}:error:{error}")


class AsyncRecorder(Recorder):
    @hookimpl
    async def on_session_start(self, ctx: HookContext) -> None:
        await anyio.lowlevel.checkpoint()
        self.log.append(f"{self.label}:async_session_start")


def _labelled(label: str, log: list[str], **opts: Any) -> object:
    class Plugin:
        @hookimpl(**opts)
        def on_session_start(self) -> None:
            log.append(label)

    return Plugin()


async def test_every_observer_reaches_sync_and_async_impls() -> None:
    log: list[str] = []
    executor = HookExecutor()
    executor.register(Recorder(log, "sync"))
    executor.register(AsyncRecorder(log, "async"))
    ctx = make_ctx().replace(plan_step_index=4)

    assert await executor.on_session_start(ctx) is None
    await executor.on_turn_start(ctx, UserMessage(content="hello"))
    await executor.on_llm_response(ctx, make_message("answer"))
    await executor.on_message(ctx, "m1")
    await executor.on_plan_step_complete(ctx, "step-a")
    await executor.on_error(ctx, RuntimeError("boom"))
    await executor.on_session_end(ctx)

    assert log == [
        "async:async_session_start",  # registered last, called first (pluggy's LIFO)
        "sync:session_start:s-1",
        "async:turn_start:hello",
        "sync:turn_start:hello",
        "async:llm_response:answer",
        "sync:llm_response:answer",
        "async:message:m1",
        "sync:message:m1",
        "async:step:step-a:4",
        "sync:step:step-a:4",
        "async:error:boom",
        "sync:error:boom",
        "async:session_end",
        "sync:session_end",
    ]


async def test_order_is_lifo_with_tryfirst_and_trylast() -> None:
    log: list[str] = []
    executor = HookExecutor()
    executor.register(_labelled("last", log, trylast=True), name="last")
    executor.register(_labelled("first", log, tryfirst=True), name="first")
    executor.register(_labelled("a", log), name="a")
    executor.register(_labelled("b", log), name="b")

    await executor.on_session_start(make_ctx())

    assert log == ["first", "b", "a", "last"]


async def test_impls_may_take_a_subset_of_the_arguments_or_default_them() -> None:
    seen: list[object] = []

    class Plugin:
        @hookimpl
        def after_tool_call(self, result: ToolResultBlock) -> None:
            seen.append(result.text)

        @hookimpl
        async def before_tool_call(self, call: ToolUseBlock, ctx: HookContext | None = None) -> None:
            seen.append((call.name, ctx is not None))

        @hookimpl
        def on_session_start(self) -> None:
            seen.append("no args")

    executor = HookExecutor()
    executor.register(Plugin())
    await executor.after_tool_call(make_ctx(), make_call(), make_result("out"))
    await executor.before_tool_call(make_ctx(), make_call())
    await executor.on_session_start(make_ctx())

    assert seen == ["out", ("shell", True), "no args"]


# ------------------------------------------------------------------------------------ combination


async def test_llm_request_rewrites_chain_in_call_order() -> None:
    def appender(suffix: str, is_async: bool) -> object:
        class Plugin:
            if is_async:

                @hookimpl
                async def on_llm_request(self, request: LLMRequest) -> LLMRequest:
                    return request.model_copy(update={"system": f"{request.system}+{suffix}"})
            else:

                @hookimpl
                def on_llm_request(self, request: LLMRequest) -> LLMRequest:
                    return request.model_copy(update={"system": f"{request.system}+{suffix}"})

        return Plugin()

    class KeepsIt:
        @hookimpl
        def on_llm_request(self, request: LLMRequest) -> None:
            assert request.system == "base+first"

    executor = HookExecutor()
    executor.register(appender("second", is_async=False), name="second")
    executor.register(KeepsIt(), name="keeps")
    executor.register(appender("first", is_async=True), name="first")
    original = make_request()

    rewritten = await executor.on_llm_request(make_ctx(), original)

    assert rewritten.system == "base+first+second"
    assert original.system == "base"


async def test_llm_request_untouched_is_the_same_object() -> None:
    class Watcher:
        @hookimpl
        def on_llm_request(self) -> None:
            return None

    executor = HookExecutor()
    request = make_request()
    assert await executor.on_llm_request(make_ctx(), request) is request
    executor.register(Watcher())
    assert await executor.on_llm_request(make_ctx(), request) is request


def _decider(name: str, log: list[str], decision: ToolCallDecision | None) -> object:
    class Plugin:
        @hookimpl
        def before_tool_call(self, call: ToolUseBlock) -> ToolCallDecision | None:
            log.append(f"{name}:{call.input}")
            return decision

    return Plugin()


async def test_before_tool_call_allows_when_nobody_objects() -> None:
    log: list[str] = []
    executor = HookExecutor()
    assert await executor.before_tool_call(make_ctx(), make_call()) == ToolCallDecision.allow()
    executor.register(_decider("none", log, None), name="none")
    executor.register(_decider("allow", log, ToolCallDecision.allow()), name="allow")

    assert await executor.before_tool_call(make_ctx(), make_call()) == ToolCallDecision.allow()
    assert log == ["allow:{'cmd': 'ls'}", "none:{'cmd': 'ls'}"]


async def test_rewrites_chain_and_later_impls_see_the_rewritten_call() -> None:
    log: list[str] = []
    executor = HookExecutor()
    executor.register(_decider("observer", log, None), name="observer")
    executor.register(
        _decider("second", log, ToolCallDecision.rewrite({"cmd": "ls -la"}, reason="long listing")),
        name="second",
    )
    executor.register(_decider("first", log, ToolCallDecision.rewrite({"cmd": "ls -l"})), name="first")

    decision = await executor.before_tool_call(make_ctx(), make_call())

    assert decision == ToolCallDecision.rewrite({"cmd": "ls -la"}, reason="long listing")
    assert log == ["first:{'cmd': 'ls'}", "second:{'cmd': 'ls -l'}", "observer:{'cmd': 'ls -la'}"]


async def test_first_deny_wins_over_rewrites_and_stops_asking() -> None:
    log: list[str] = []
    executor = HookExecutor()
    executor.register(_decider("never", log, ToolCallDecision.deny("second opinion")), name="never")
    executor.register(_decider("guard", log, ToolCallDecision.deny("rm is not allowed")), name="guard")
    executor.register(_decider("rewriter", log, ToolCallDecision.rewrite({"cmd": "rm -rf /"})), name="rw")

    decision = await executor.before_tool_call(make_ctx(), make_call())

    assert decision == ToolCallDecision.deny("rm is not allowed")
    assert log == ["rewriter:{'cmd': 'ls'}", "guard:{'cmd': 'rm -rf /'}"]


async def test_on_turn_end_any_false_stops_but_every_impl_sees_the_turn() -> None:
    seen: list[str] = []

    def voter(name: str, vote: bool | None) -> object:
        class Plugin:
            @hookimpl
            async def on_turn_end(self, message: AssistantMessage) -> bool | None:
                seen.append(name)
                return vote

        return Plugin()

    executor = HookExecutor()
    assert await executor.on_turn_end(make_ctx(), make_message()) is True
    executor.register(voter("yes", True), name="yes")
    executor.register(voter("abstain", None), name="abstain")
    assert await executor.on_turn_end(make_ctx(), make_message()) is True

    executor.register(voter("budget", False), name="budget")
    executor.register(voter("billing", None), name="billing")

    assert await executor.on_turn_end(make_ctx(), make_message()) is False
    assert seen[-4:] == ["billing", "budget", "abstain", "yes"]


async def test_after_tool_call_rewrites_chain() -> None:
    class Redact:
        @hookimpl
        def after_tool_call(self, result: ToolResultBlock) -> ToolResultBlock:
            return result.model_copy(update={"content": result.text.replace("secret", "***")})

    class Upper:
        @hookimpl(tryfirst=True)
        async def after_tool_call(self, result: ToolResultBlock) -> ToolResultBlock:
            return result.model_copy(update={"content": result.text + " secret"})

    executor = HookExecutor()
    executor.register(Redact())
    executor.register(Upper())

    final = await executor.after_tool_call(make_ctx(), make_call(), make_result("out"))

    assert final.text == "out ***"


async def test_firstresult_on_an_application_hook() -> None:
    class AppSpecs:
        @hookspec(firstresult=True)
        def choose_model(self, ctx: HookContext, task: str) -> str | None:
            """An application's own hook."""

        @hookspec
        def collect_tags(self, task: str) -> list[str]:
            """All answers."""

    called: list[str] = []

    def chooser(name: str, answer: str | None) -> object:
        class Plugin:
            @hookimpl
            async def choose_model(self, task: str) -> str | None:
                called.append(name)
                return answer

            @hookimpl
            def collect_tags(self, task: str) -> str:
                return f"{name}:{task}"

        return Plugin()

    executor = HookExecutor()
    executor.add_hookspecs(AppSpecs)
    assert await executor.call("choose_model", ctx=make_ctx(), task="t") is None
    assert await executor.call("collect_tags", task="t") == []
    executor.register(chooser("c", "never asked"), name="c")
    executor.register(chooser("b", "small-model"), name="b")
    executor.register(chooser("a", None), name="a")

    assert await executor.call("choose_model", ctx=make_ctx(), task="t") == "small-model"
    assert called == ["a", "b"]
    assert await executor.call("collect_tags", task="t") == ["a:t", "b:t", "c:t"]


async def test_call_rejects_unknown_agcore_and_underspecified_hooks() -> None:
    class AppSpecs:
        @hookspec
        def needs_task(self, task: str) -> None:
            """An application hook."""

    class Plugin:
        @hookimpl
        def needs_task(self, task: str) -> None: ...

    executor = HookExecutor()
    executor.add_hookspecs(AppSpecs)
    executor.register(Plugin())
    with pytest.raises(ValueError, match="add_hookspecs"):
        await executor.call("nope")
    with pytest.raises(ValueError, match=r"HookExecutor\.on_turn_end\(\)"):
        await executor.call("on_turn_end", ctx=make_ctx())
    with pytest.raises(Exception, match=r"must be called with argument\(s\) \['task'\]"):
        await executor.call("needs_task")


# --------------------------------------------------------------------------------------- failures


async def test_observer_failure_is_logged_and_the_next_impl_still_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[str] = []

    class Broken:
        @hookimpl
        async def on_message(self, message: Any) -> None:
            raise ConnectionError("database is down")

    executor = HookExecutor()
    executor.register(Recorder(log), name="recorder")
    executor.register(Broken(), name="persist")

    with caplog.at_level(logging.WARNING, logger="agcore.hooks"):
        assert await executor.on_message(make_ctx(), "m1") is None

    assert log == ["rec:message:m1"]
    [record] = caplog.records
    assert record.name == "agcore.hooks"
    assert record.levelno == logging.WARNING
    assert "'persist'" in record.getMessage()
    assert "'on_message'" in record.getMessage()
    assert "ConnectionError" in record.getMessage()
    assert (record.agcore_plugin, record.agcore_hook) == ("persist", "on_message")  # type: ignore[attr-defined]
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], ConnectionError)


async def test_after_tool_call_failure_keeps_the_result_so_far(caplog: pytest.LogCaptureFixture) -> None:
    class Tag:
        @hookimpl(tryfirst=True)
        def after_tool_call(self, result: ToolResultBlock) -> ToolResultBlock:
            return result.model_copy(update={"content": result.text + "!"})

    class Broken:
        @hookimpl
        def after_tool_call(self) -> ToolResultBlock:
            raise KeyError("x")

    class WrongType:
        @hookimpl(trylast=True)
        def after_tool_call(self) -> str:
            return "not a block"

    executor = HookExecutor()
    for plugin in (Tag(), Broken(), WrongType()):
        executor.register(plugin)

    with caplog.at_level(logging.WARNING, logger="agcore.hooks"):
        final = await executor.after_tool_call(make_ctx(), make_call(), make_result("out"))

    assert final.text == "out!"
    assert [r.agcore_plugin for r in caplog.records] == ["Broken", "WrongType"]  # type: ignore[attr-defined]
    assert "must return a ToolResultBlock" in str(caplog.records[1].exc_info[1])  # type: ignore[index]


@pytest.mark.parametrize("is_async", [False, True])
async def test_gatekeeper_failure_raises_hook_failure(
    is_async: bool, caplog: pytest.LogCaptureFixture
) -> None:
    log: list[str] = []
    error = PermissionError("policy service unreachable")

    class Policy:
        if is_async:

            @hookimpl
            async def before_tool_call(self) -> None:
                raise error
        else:

            @hookimpl
            def before_tool_call(self) -> None:
                raise error

    executor = HookExecutor()
    executor.register(_decider("later", log, None), name="later")
    executor.register(Policy(), name="policy")

    with pytest.raises(HookFailure) as info:
        await executor.before_tool_call(make_ctx(), make_call())

    assert (info.value.hook_name, info.value.plugin_name, info.value.error) == (
        "before_tool_call",
        "policy",
        error,
    )
    assert info.value.__cause__ is error
    assert "turn was stopped" in str(info.value)
    assert log == []  # the impls after the failing one did not run
    assert caplog.records == []


@pytest.mark.parametrize(
    ("hook", "bad", "message"),
    [
        ("on_llm_request", {"system": "x"}, "on_llm_request must return a LLMRequest"),
        ("on_turn_end", "stop", "on_turn_end must return True/None"),
        ("before_tool_call", False, "before_tool_call must return a ToolCallDecision"),
    ],
)
async def test_gatekeeper_returning_the_wrong_type_is_a_failure(hook: str, bad: object, message: str) -> None:
    def impl(self: object) -> object:
        return bad

    impl.__name__ = hook
    plugin_class = type("Sloppy", (), {hook: hookimpl(impl)})
    executor = HookExecutor()
    executor.register(plugin_class())
    args: tuple[object, ...] = {
        "on_llm_request": (make_request(),),
        "on_turn_end": (make_message(),),
        "before_tool_call": (make_call(),),
    }[hook]

    with pytest.raises(HookFailure, match="Sloppy") as info:
        await getattr(executor, hook)(make_ctx(), *args)

    assert isinstance(info.value.error, TypeError)
    assert message in str(info.value.error)


async def test_on_turn_end_failure_is_a_gatekeeper_failure() -> None:
    class Billing:
        @hookimpl
        def on_turn_end(self) -> bool:
            raise RuntimeError("credit service down")

    executor = HookExecutor()
    executor.register(Billing(), name="billing")
    with pytest.raises(HookFailure, match="'billing' failed in gatekeeper hook 'on_turn_end'"):
        await executor.on_turn_end(make_ctx(), make_message())


# ------------------------------------------------------------------------------------ cancellation


@pytest.mark.parametrize("hook", ["on_session_start", "on_turn_end"])
async def test_cancellation_propagates_while_an_async_impl_awaits(
    hook: str, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[str] = []
    started = anyio.Event()

    class Slow:
        @hookimpl(specname=hook)
        async def wait(self) -> None:
            started.set()
            try:
                await anyio.sleep_forever()
            finally:
                events.append("impl cleaned up")

    class Never:
        @hookimpl(specname=hook, trylast=True)
        def never(self) -> None:
            events.append("never ran")

    class Swallower:
        @hookimpl(specname=hook, wrapper=True)
        def guard(self) -> Any:
            try:
                return (yield)
            except BaseException:
                events.append("wrapper saw the cancellation")
                return None  # tries to swallow it: cancellation propagates anyway

    class AsyncSwallower:
        @hookimpl(specname=hook, wrapper=True, tryfirst=True)
        async def guard(self) -> Any:
            try:
                yield
            except BaseException:
                events.append("async wrapper saw the cancellation")

    executor = HookExecutor()
    for plugin in (Never(), Slow(), Swallower(), AsyncSwallower()):
        executor.register(plugin)
    args = (make_message(),) if hook == "on_turn_end" else ()
    caught: list[BaseException] = []

    async def run() -> None:
        try:
            await getattr(executor, hook)(make_ctx(), *args)
        except BaseException as exc:
            caught.append(exc)
            raise
        events.append("returned normally")

    with caplog.at_level(logging.DEBUG, logger="agcore.hooks"):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await started.wait()
            tg.cancel_scope.cancel()

    assert [type(exc) for exc in caught] == [anyio.get_cancelled_exc_class()]
    assert events == ["impl cleaned up", "wrapper saw the cancellation", "async wrapper saw the cancellation"]
    assert caplog.records == []


async def test_a_wrapper_failing_during_cancellation_cannot_replace_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    started = anyio.Event()

    class Slow:
        @hookimpl
        async def before_tool_call(self) -> None:
            started.set()
            await anyio.sleep_forever()

    class Clumsy:
        @hookimpl(wrapper=True)
        def before_tool_call(self) -> Any:
            try:
                return (yield)
            finally:
                raise RuntimeError("cleanup failed")

    executor = HookExecutor()
    executor.register(Slow())
    executor.register(Clumsy(), name="clumsy")
    caught: list[BaseException] = []

    async def run() -> None:
        try:
            await executor.before_tool_call(make_ctx(), make_call())
        except BaseException as exc:
            caught.append(exc)
            raise

    with caplog.at_level(logging.WARNING, logger="agcore.hooks"):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await started.wait()
            tg.cancel_scope.cancel()

    assert [type(exc) for exc in caught] == [anyio.get_cancelled_exc_class()]
    [record] = caplog.records
    assert "'clumsy'" in record.getMessage()
    assert "cancellation goes on" in record.getMessage()


class Abort(BaseException):
    """Stands for KeyboardInterrupt / SystemExit: not a plugin failure."""


@pytest.mark.parametrize("hook", ["on_message", "on_turn_end"])
async def test_base_exceptions_propagate_unwrapped_and_unlogged(
    hook: str, caplog: pytest.LogCaptureFixture
) -> None:
    class Aborts:
        @hookimpl(specname=hook)
        async def abort(self) -> None:
            raise Abort("stop now")

    executor = HookExecutor()
    executor.register(Aborts())

    with caplog.at_level(logging.DEBUG, logger="agcore.hooks"), pytest.raises(Abort, match="stop now"):
        await getattr(executor, hook)(make_ctx(), make_message())
    assert caplog.records == []


# ------------------------------------------------------------------------------------- fast path


async def test_has_impls_follows_registration() -> None:
    class Plugin:
        @hookimpl
        def on_turn_end(self) -> None: ...

    executor = HookExecutor()
    assert not any(executor.has_impls(name) for name in ("on_turn_end", "on_message", "no_such_hook"))
    plugin = Plugin()
    executor.register(plugin)
    assert executor.has_impls("on_turn_end")
    assert not executor.has_impls("on_message")
    executor.unregister(plugin)
    assert not executor.has_impls("on_turn_end")


async def test_unimplemented_hooks_return_their_input_unchanged() -> None:
    executor = HookExecutor()
    request, call, result = make_request(), make_call(), make_result()
    ctx = make_ctx()

    assert await executor.on_llm_request(ctx, request) is request
    assert await executor.after_tool_call(ctx, call, result) is result
    assert (await executor.before_tool_call(ctx, call)).action == "allow"
    assert await executor.on_turn_end(ctx, make_message()) is True
    assert await executor.on_error(ctx, ValueError()) is None
