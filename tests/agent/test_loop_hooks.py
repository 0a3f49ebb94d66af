"""The loop's hook points: order, vetoes, rewrites, and what a failing plugin does to a turn."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from agcore.agent import (
    AgentBuilder,
    AgentConfig,
    AgentSession,
    AssistantReply,
    BasicAgent,
    Done,
    Failed,
    HookBlocked,
    ToolResults,
    UserInput,
)
from agcore.hooks import HookContext, ToolCallDecision, hookimpl
from agcore.llm import AssistantMessage, LLMRequest, ToolResultBlock, ToolUseBlock, UserMessage
from agcore.testing import ScriptedProvider, tool_call_reply

from .test_loop_basic import add, assert_history_valid, results_of

pytestmark = pytest.mark.anyio


def session_with(model: ScriptedProvider, *plugins: Any, config: AgentConfig | None = None) -> AgentSession:
    bundle = (AgentBuilder().provider(model).tools(add).plugins(*plugins)
              .config(config or AgentConfig()).build())
    return AgentSession(BasicAgent(name="hooked", system_prompt="sys"), "s-h", bundle)


class Recorder:
    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl
    def on_session_start(self, ctx: HookContext) -> None:
        self.calls.append("session_start")

    @hookimpl
    async def on_turn_start(self, ctx: HookContext, user_input: UserMessage) -> None:
        self.calls.append(f"turn_start:{ctx.turn_index}:{user_input.content}")

    @hookimpl
    def on_llm_request(self, ctx: HookContext, request: LLMRequest) -> None:
        self.calls.append("llm_request")

    @hookimpl
    def on_llm_response(self, ctx: HookContext, message: AssistantMessage) -> None:
        self.calls.append("llm_response")

    @hookimpl
    def on_turn_end(self, ctx: HookContext, message: AssistantMessage) -> None:
        self.calls.append("turn_end")

    @hookimpl
    def before_tool_call(self, ctx: HookContext, call: ToolUseBlock) -> None:
        self.calls.append(f"before:{call.name}")

    @hookimpl
    def after_tool_call(self, ctx: HookContext, call: ToolUseBlock, result: ToolResultBlock) -> None:
        self.calls.append(f"after:{result.content}")

    @hookimpl
    def on_message(self, ctx: HookContext, message: Any) -> None:
        self.calls.append(f"message:{message.kind}")

    @hookimpl
    def on_session_end(self, ctx: HookContext) -> None:
        self.calls.append("session_end")


async def test_hook_order_over_a_tool_turn() -> None:
    rec = Recorder()
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), "3"])
    session = session_with(model, rec)
    await session.submit_turn("1+2")
    await session.close()
    assert rec.calls == [
        "session_start", "turn_start:1:1+2", "message:user",
        "llm_request", "message:assistant", "llm_response", "turn_end",
        "before:add", "after:3", "message:tool_results",
        "llm_request", "message:assistant", "llm_response", "turn_end",
        "session_end",
    ]
    model.add("x")
    await session.submit_turn("again")
    assert rec.calls.count("session_start") == 2  # close() ended it, the next turn starts it again


async def test_before_tool_call_deny_becomes_error_result() -> None:
    class Guard:
        @hookimpl
        def before_tool_call(self, ctx: HookContext, call: ToolUseBlock) -> ToolCallDecision:
            return ToolCallDecision.deny("adding is forbidden on Sundays")

    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), "ok"])
    session = session_with(model, Guard())
    result = await session.submit_turn("go")
    (res,) = results_of(session)
    assert res.is_error
    assert "denied: adding is forbidden on Sundays" in res.text
    assert result.stop == "done"


async def test_before_tool_call_rewrites_arguments() -> None:
    class Clamp:
        @hookimpl
        async def before_tool_call(self, ctx: HookContext, call: ToolUseBlock) -> ToolCallDecision:
            return ToolCallDecision.rewrite({"a": 10, "b": call.input["b"]})

    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}, id="c1"), "ok"])
    session = session_with(model, Clamp())
    await session.submit_turn("go")
    assert results_of(session) == [ToolResultBlock(tool_use_id="c1", content="12")]
    # The history keeps the call as the model wrote it.
    reply = next(m for m in session.messages if isinstance(m, AssistantReply))
    assert reply.message.tool_calls[0].input == {"a": 1, "b": 2}


async def test_on_llm_request_rewrite_reaches_provider() -> None:
    class Temp:
        @hookimpl
        def on_llm_request(self, ctx: HookContext, request: LLMRequest) -> LLMRequest:
            return request.model_copy(update={"temperature": 0.1, "system": "rewritten"})

    model = ScriptedProvider(["ok"])
    session = session_with(model, Temp())
    await session.submit_turn("go")
    assert model.last_request.temperature == 0.1
    assert model.last_request.system == "rewritten"


async def test_after_tool_call_rewrites_result() -> None:
    class Redact:
        @hookimpl
        def after_tool_call(self, ctx: HookContext, call: ToolUseBlock,
                            result: ToolResultBlock) -> ToolResultBlock:
            return result.model_copy(update={"content": "[redacted]"})

    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}, id="c1"), "ok"])
    session = session_with(model, Redact())
    await session.submit_turn("go")
    assert results_of(session) == [ToolResultBlock(tool_use_id="c1", content="[redacted]")]
    assert model.last_request.messages[-1].content == results_of(session)


async def test_observer_failure_is_logged_and_run_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        @hookimpl
        def on_message(self, ctx: HookContext, message: Any) -> None:
            raise RuntimeError("database down")

    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), "3"])
    session = session_with(model, Broken())
    with caplog.at_level(logging.WARNING, logger="agcore.hooks"):
        result = await session.submit_turn("go")
    assert result.stop == "done"
    assert result.text == "3"
    assert "database down" in caplog.text or "RuntimeError" in caplog.text


async def test_on_turn_end_false_stops_cleanly_and_answers_calls() -> None:
    class Stopper:
        @hookimpl
        def on_turn_end(self, ctx: HookContext, message: AssistantMessage) -> bool:
            return False

    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), "never"])
    session = session_with(model, Stopper())
    events = [e async for e in session.stream_turn("go")]
    result = session.last_result
    assert result is not None
    assert result.stop == "stopped_by_hook"
    assert result.error is None
    assert isinstance(events[-1], Done)
    assert events[-1].stop == "stopped_by_hook"
    assert model.calls == 1
    (res,) = results_of(session)
    assert res.is_error
    assert "hook stopped the turn" in res.text
    assert_history_valid(session)


async def test_gatekeeper_failure_blocks_turn() -> None:
    errors: list[BaseException] = []

    class Faulty:
        @hookimpl
        def before_tool_call(self, ctx: HookContext, call: ToolUseBlock) -> None:
            raise ValueError("policy service unreachable")

        @hookimpl
        def on_error(self, ctx: HookContext, error: BaseException) -> None:
            errors.append(error)

    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2})])
    session = session_with(model, Faulty())
    events = [e async for e in session.stream_turn("go")]
    result = session.last_result
    assert result is not None
    assert result.stop == "error"
    assert isinstance(result.error, HookBlocked)
    assert result.error.hook_name == "before_tool_call"
    assert "policy service unreachable" in str(result.error)
    assert isinstance(events[-1], Failed)
    assert events[-1].error_type == "HookBlocked"
    assert errors == [result.error]
    assert_history_valid(session)  # the unanswered call got a result
    model.add("recovered")
    # Once the plugin is gone, the session works again.
    session.bundle.hook_executor().unregister("Faulty")
    assert (await session.submit_turn("again")).text == "recovered"


async def test_on_message_sees_every_recorded_message() -> None:
    kinds: list[str] = []

    class Persist:
        @hookimpl
        async def on_message(self, ctx: HookContext, message: Any) -> None:
            kinds.append(message.kind)

    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), "3"])
    session = session_with(model, Persist())
    await session.submit_turn("go")
    assert [m.kind for m in session.messages] == kinds
    assert isinstance(session.messages[0], UserInput)
    assert isinstance(session.messages[2], ToolResults)
