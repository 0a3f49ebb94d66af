"""The outcome hooks audit and tracing plugins rely on: ``after_tool_call``'s ``status``,
``on_confirmation`` and ``on_turn_result`` (which also runs for a cancelled turn)."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from agcore.agent import AgentBuilder, AgentConfig, AgentSession, BasicAgent, TurnResult
from agcore.hooks import HookContext, ToolCallDecision, hookimpl
from agcore.llm import ToolResultBlock, ToolUseBlock
from agcore.testing import ScriptedProvider, tool_call_reply, tool_calls_reply
from agcore.tools import Tool, tool

from .test_loop_basic import add, assert_history_valid

pytestmark = pytest.mark.anyio


@tool(requires_confirmation=True)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
def boom() -> str:
    """Always fails."""
    raise RuntimeError("disk on fire")


class Outcomes:
    def __init__(self) -> None:
        self.statuses: list[tuple[str, str]] = []
        self.answers: list[tuple[str, str]] = []
        self.results: list[TurnResult] = []
        self.durations: dict[str, float] = {}

    @hookimpl
    def after_tool_call(self, call: ToolUseBlock, status: str, duration: float) -> None:
        self.statuses.append((call.id, status))
        self.durations[call.id] = duration

    @hookimpl
    def on_confirmation(self, ctx: HookContext, call: ToolUseBlock, answer: str) -> None:
        self.answers.append((call.id, answer))

    @hookimpl
    async def on_turn_result(self, ctx: HookContext, result: Any) -> None:
        await anyio.lowlevel.checkpoint()  # an async observer really awaits, even in a cancelled turn
        self.results.append(result)


class DenyBoom:
    @hookimpl
    def before_tool_call(self, call: ToolUseBlock) -> ToolCallDecision | None:
        return ToolCallDecision.deny("not today") if call.id == "d" else None


def session_with(model: ScriptedProvider, *plugins: Any, confirm: Any = None,
                 config: AgentConfig | None = None) -> AgentSession:
    bundle = (AgentBuilder().provider(model).tools(add, delete, boom).plugins(*plugins)
              .config(config or AgentConfig()).build())
    return AgentSession(BasicAgent(name="outcomes"), "s-o", bundle, confirm=confirm)


async def test_after_tool_call_reports_how_each_call_ended() -> None:
    out = Outcomes()
    calls = [
        ToolUseBlock(id="ok", name="add", input={"a": 1, "b": 2}),
        ToolUseBlock(id="err", name="boom"),
        ToolUseBlock(id="d", name="add", input={"a": 0, "b": 0}),
        ToolUseBlock(id="bad", name="add", input={"a": "x"}),
        ToolUseBlock(id="no", name="delete", input={"path": "a"}),
        ToolUseBlock(id="missing", name="nope"),
    ]
    session = session_with(ScriptedProvider([tool_calls_reply(calls), "done"]), out, DenyBoom(),
                           confirm=lambda call, t: False)
    await session.submit_turn("go")
    assert dict(out.statuses) == {
        "ok": "ok", "err": "error", "d": "denied", "bad": "invalid_arguments",
        "no": "not_approved", "missing": "unknown_tool",
    }
    assert out.answers == [("no", "no")]
    assert out.durations["ok"] > 0  # the tool ran (in a worker thread: never zero)
    assert out.durations["d"] == out.durations["no"] == 0.0  # refused before running


async def test_on_confirmation_reports_yes_always_and_unavailable() -> None:
    out = Outcomes()

    def always(call: ToolUseBlock, t: Tool) -> str:
        return "always"

    model = ScriptedProvider([
        tool_call_reply("delete", {"path": "a"}, id="c1"), tool_call_reply("delete", {"path": "b"}, id="c2"),
        "done",
    ])
    await session_with(model, out, confirm=always).submit_turn("delete both")
    assert out.answers == [("c1", "always")]  # "always" is not asked again

    out = Outcomes()
    model = ScriptedProvider([tool_call_reply("delete", {"path": "a"}, id="c3"), "cannot"])
    await session_with(model, out).submit_turn("delete a")
    assert out.answers == [("c3", "unavailable")]
    assert out.statuses == [("c3", "not_approved")]

    out = Outcomes()
    model = ScriptedProvider([tool_call_reply("delete", {"path": "a"}, id="c4"), "gone"])
    await session_with(model, out, confirm=lambda call, t: True).submit_turn("delete a")
    assert out.answers == [("c4", "yes")]
    assert out.statuses == [("c4", "ok")]


async def test_on_turn_result_sees_every_turn_and_its_stop() -> None:
    out = Outcomes()
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), "3"])
    session = session_with(model, out, config=AgentConfig(max_turns=1))
    first = await session.submit_turn("1+2")
    assert first.stop == "limit"  # max_turns=1: the tool round needs a second model call
    session.bundle.config.override(AgentConfig())
    assert (await session.submit_turn("go on")).text == "3"
    assert [r.stop for r in out.results] == ["limit", "done"]
    assert out.results[1].text == "3"
    assert out.results[0] is first


async def test_client_tool_results_report_status_client() -> None:
    out = Outcomes()
    bundle = (AgentBuilder().provider(ScriptedProvider([tool_call_reply("pick", {}, id="p1"), "thanks"]))
              .tools(Tool.client("pick", "Ask the user to pick.", {"type": "object", "properties": {}}))
              .plugins(out).build())
    session = AgentSession(BasicAgent(name="c"), "s-c", bundle)
    paused = await session.submit_turn("choose")
    assert paused.stop == "client_tools"
    await session.resume([ToolResultBlock(tool_use_id="p1", content="blue")])
    assert out.statuses == [("p1", "client")]
    assert [r.stop for r in out.results] == ["client_tools", "done"]


async def test_on_turn_result_runs_for_a_cancelled_turn() -> None:
    out = Outcomes()
    started = anyio.Event()

    @tool
    async def hang() -> str:
        """Never returns."""
        started.set()
        await anyio.sleep_forever()
        return "unreachable"

    bundle = (AgentBuilder().provider(ScriptedProvider([tool_call_reply("hang", {})]))
              .tools(hang).plugins(out).build())
    session = AgentSession(BasicAgent(name="c"), "s-x", bundle)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.submit_turn, "go")
        await started.wait()
        tg.cancel_scope.cancel()
    assert [r.stop for r in out.results] == ["cancelled"]
    assert_history_valid(session)
