"""The hook table drives the executor: every hook has one rule, and a rule's fold is what callers get."""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator
from typing import Any

import pluggy
import pytest

from agcore.hooks import (
    HOOK_KINDS,
    HOOK_RULES,
    AgcoreHookSpecs,
    HookContext,
    HookExecutor,
    ToolCallDecision,
    hookimpl,
)
from agcore.llm import AssistantMessage, LLMRequest, ToolResultBlock, ToolUseBlock, UserMessage

pytestmark = pytest.mark.anyio

CTX = HookContext(session_id="s", agent_name="a", turn_index=1)
REQUEST = LLMRequest.build("hi")
CALL = ToolUseBlock(id="c1", name="t", input={"x": 1})
RESULT = ToolResultBlock(tool_use_id="c1", content="ok")


def test_every_hookspec_has_exactly_one_rule() -> None:
    specs = {name for name, member in inspect.getmembers(AgcoreHookSpecs) if callable(member)
             and not name.startswith("_")}
    assert specs == set(HOOK_RULES)
    assert {name: rule.kind for name, rule in HOOK_RULES.items()} == HOOK_KINDS


def test_the_executor_reaches_pluggy_only_through_its_public_api() -> None:
    import agcore.hooks._executor as executor
    import agcore.hooks._plugins as plugins

    for module in (executor, plugins):
        source = inspect.getsource(module)
        assert "._hookimpls" not in source
        assert "_verify_hook" not in source


async def test_with_no_plugin_each_hook_gives_its_neutral_result() -> None:
    hooks = HookExecutor()
    assert await hooks.on_llm_request(CTX, REQUEST) is REQUEST
    assert await hooks.on_turn_end(CTX, AssistantMessage()) is True
    assert (await hooks.before_tool_call(CTX, CALL)).action == "allow"
    assert await hooks.after_tool_call(CTX, CALL, RESULT) is RESULT
    assert await hooks.on_message(CTX, "anything") is None


class _EveryFold:
    @hookimpl
    def on_llm_request(self, request: LLMRequest) -> LLMRequest:
        return request.model_copy(update={"max_tokens": 7})

    @hookimpl
    def on_turn_end(self) -> bool:
        return False

    @hookimpl
    def before_tool_call(self, call: ToolUseBlock) -> ToolCallDecision:
        return ToolCallDecision.rewrite({"x": call.input["x"] + 1})

    @hookimpl
    def after_tool_call(self, result: ToolResultBlock) -> ToolResultBlock:
        return result.model_copy(update={"content": "rewritten"})

    @hookimpl
    def on_turn_start(self) -> None:
        raise RuntimeError("observers fail quietly")


async def test_each_rule_folds_the_results_its_way() -> None:
    hooks = HookExecutor()
    hooks.register(_EveryFold())
    assert (await hooks.on_llm_request(CTX, REQUEST)).max_tokens == 7
    assert await hooks.on_turn_end(CTX, AssistantMessage()) is False
    decision = await hooks.before_tool_call(CTX, CALL)
    assert decision.action == "rewrite"
    assert decision.arguments == {"x": 2}
    assert (await hooks.after_tool_call(CTX, CALL, RESULT)).text == "rewritten"
    await hooks.on_turn_start(CTX, UserMessage(content="hi"))  # an observer: logged, not raised


async def test_an_async_wrapper_marked_with_agcore_hookimpl_wraps() -> None:
    seen: list[str] = []

    class Timing:
        @hookimpl(wrapper=True)
        async def on_llm_request(self, request: LLMRequest) -> AsyncGenerator[Any, Any]:
            seen.append("before")
            result = yield
            seen.append(f"after {result.max_tokens}")

    hooks = HookExecutor()
    hooks.register(Timing())
    hooks.register(_EveryFold())
    await hooks.on_llm_request(CTX, REQUEST)
    assert seen == ["before", "after 7"]


def test_an_async_wrapper_marked_with_pluggys_marker_says_what_to_use() -> None:
    plain = pluggy.HookimplMarker("agcore")

    class Timing:
        @plain(wrapper=True)
        async def on_llm_request(self, request: LLMRequest) -> AsyncGenerator[Any, Any]:
            yield

    with pytest.raises(pluggy.PluginValidationError) as caught:
        HookExecutor().register(Timing())
    assert any("agcore.hooks.hookimpl" in note for note in caught.value.__notes__)
