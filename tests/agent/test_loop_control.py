"""Steering the loop: confirmation, client tools, steering and follow-up queues, limits, repetition,
text-mode tool calls (their own module: test_text_mode.py)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agcore.agent import (
    AgentConfig,
    AgentSession,
    AssistantReply,
    ClientToolsRequested,
    CostTracker,
    Failed,
    LimitExceeded,
    Steered,
    ToolLog,
    ToolResults,
    UserInput,
)
from agcore.llm import (
    LLMRequest,
    ModelInfo,
    ModelRegistry,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from agcore.testing import ScriptedProvider, text_reply, tool_call_reply, tool_calls_reply
from agcore.tools import Tool, ToolContext, tool

from .test_loop_basic import assert_history_valid, make_session, results_of

pytestmark = pytest.mark.anyio

runs: list[str] = []


@tool(requires_confirmation=True)
def delete(path: str) -> str:
    """Delete a file."""
    runs.append(path)
    return f"deleted {path}"


@pytest.fixture(autouse=True)
def _clear_runs() -> None:
    runs.clear()


# ----------------------------------------------------------------------------- confirmation


async def test_confirmation_approved() -> None:
    asked: list[tuple[str, str]] = []

    async def confirm(call: ToolUseBlock, t: Tool) -> bool:
        asked.append((t.name, call.input["path"]))
        return True

    model = ScriptedProvider([tool_call_reply("delete", {"path": "a.txt"}), "gone"])
    session = make_session(model, delete, confirm=confirm)
    await session.submit_turn("delete a.txt")
    assert asked == [("delete", "a.txt")]
    assert runs == ["a.txt"]
    assert results_of(session)[0].content == "deleted a.txt"


async def test_confirmation_denied_tells_the_model() -> None:
    model = ScriptedProvider([tool_call_reply("delete", {"path": "a.txt"}), "ok, I won't"])
    session = make_session(model, delete, confirm=lambda call, t: False)
    result = await session.submit_turn("delete a.txt")
    assert runs == []
    (res,) = results_of(session)
    assert res.is_error
    assert "did not approve" in res.text
    assert result.stop == "done"
    assert result.text == "ok, I won't"


async def test_no_confirm_callback_means_deny() -> None:
    model = ScriptedProvider([tool_call_reply("delete", {"path": "a.txt"}), "cannot"])
    session = make_session(model, delete)
    await session.submit_turn("delete a.txt")
    assert runs == []
    assert "needs the user's approval" in results_of(session)[0].text


@pytest.mark.parametrize("wrong", ["always", True, "yes"])
def test_a_confirm_that_is_no_callback_is_refused_at_construction(wrong: object) -> None:
    with pytest.raises(ValueError, match="pass a callable \\(call, tool\\) returning True, False or "
                                         '"always" \\(sync or async\\), or None') as raised:
        make_session(ScriptedProvider(["unused"]), delete, confirm=wrong)
    assert f"confirm={wrong!r} is not accepted" in str(raised.value)
    assert "confirm=lambda call, tool: True" in str(raised.value)  # how to approve everything


async def test_confirmation_always_is_remembered() -> None:
    asked: list[str] = []

    def confirm(call: ToolUseBlock, t: Tool) -> str:
        asked.append(call.input["path"])
        return "always"

    model = ScriptedProvider([
        tool_call_reply("delete", {"path": "a"}), tool_call_reply("delete", {"path": "b"}), "done",
    ])
    session = make_session(model, delete, confirm=confirm)
    await session.submit_turn("delete both")
    assert asked == ["a"]
    assert runs == ["a", "b"]


# ----------------------------------------------------------------------------- client tools


async def test_client_tool_pauses_after_server_calls_and_resume_continues() -> None:
    show = Tool.client("show_photos", "Show photos to the user")
    reply = tool_calls_reply([
        ToolUseBlock(id="s1", name="show_photos", input={"ids": [1]}),
        ToolUseBlock(id="a1", name="add", input={"a": 1, "b": 1}),
    ])
    model = ScriptedProvider([reply, "shown and added"])
    from .test_loop_basic import add

    session = make_session(model, add, show)
    events = [e async for e in session.stream_turn("go")]
    result = session.last_result
    assert result is not None
    assert result.stop == "client_tools"
    assert [c.id for c in result.pending_tool_calls] == ["s1"]
    assert session.pending_client_calls == result.pending_tool_calls
    assert isinstance(events[-2], ClientToolsRequested)
    assert model.calls == 1
    # The server call already ran; nothing is recorded until the batch is complete.
    assert not any(isinstance(m, ToolResults) for m in session.messages)

    result = await session.resume([ToolResultBlock(tool_use_id="s1", content="shown")])
    assert result.stop == "done"
    assert result.text == "shown and added"
    assert result.turns == 2
    assert [(r.tool_use_id, r.content) for r in results_of(session)] == [("s1", "shown"), ("a1", "2")]
    assert session.pending_client_calls == []
    assert_history_valid(session)


async def test_resume_rejects_unknown_ids_and_without_pause() -> None:
    session = make_session(ScriptedProvider(["x"]))
    with pytest.raises(RuntimeError, match="paused for client tools"):
        await session.resume([])
    show = Tool.client("show")
    session = make_session(ScriptedProvider([tool_call_reply("show", id="c1")]), show)
    await session.submit_turn("go")
    with pytest.raises(ValueError, match="answers no pending client call"):
        await session.resume([ToolResultBlock(tool_use_id="nope", content="x")])


async def test_new_turn_while_paused_closes_the_client_calls() -> None:
    show = Tool.client("show")
    model = ScriptedProvider([tool_call_reply("show", id="c1"), "fine"])
    session = make_session(model, show)
    assert (await session.submit_turn("go")).stop == "client_tools"
    result = await session.submit_turn("never mind")
    assert result.text == "fine"
    (res,) = results_of(session)
    assert res.is_error
    assert "new message" in res.text
    assert_history_valid(session)


async def test_missing_client_result_becomes_error_result() -> None:
    show = Tool.client("show")
    model = ScriptedProvider([tool_calls_reply([("show", {}), ("show", {"x": 1})]), "ok"])
    session = make_session(model, show)
    result = await session.submit_turn("go")
    first, _second = result.pending_tool_calls
    await session.resume([ToolResultBlock(tool_use_id=first.id, content="ok")])
    res = results_of(session)
    assert res[0].content == "ok"
    assert res[1].is_error
    assert "no result" in res[1].text


# ----------------------------------------------------------------------------- queues


async def test_steering_mid_batch_skips_remaining_calls() -> None:
    session_ref: list[AgentSession] = []

    @tool
    def first() -> str:
        """Runs first, and the user interrupts meanwhile."""
        session_ref[0].steer("stop, do something else")
        return "first done"

    @tool
    def second() -> str:
        """Never runs."""
        runs.append("second")
        return "second done"

    reply = tool_calls_reply([ToolUseBlock(id="1", name="first"), ToolUseBlock(id="2", name="second"),
                              ToolUseBlock(id="3", name="second")])
    model = ScriptedProvider([reply, "switching"])
    session = make_session(model, first, second, config=AgentConfig(parallel_tool_calls=False))
    session_ref.append(session)
    events = [e async for e in session.stream_turn("go")]
    assert runs == []
    res = results_of(session)
    assert res[0].content == "first done"
    assert res[1].is_error
    assert "Skipped" in res[1].text
    assert res[2].is_error
    steered = [e for e in events if isinstance(e, Steered)]
    assert steered == [Steered(skipped=["2", "3"], text="stop, do something else")]
    # The model saw the results and the new message in one user message.
    last = model.last_request.messages[-1]
    assert isinstance(last.content, list)
    assert last.content[-1] == TextBlock(text="stop, do something else")
    assert_history_valid(session)


async def test_steering_in_parallel_mode_via_confirm() -> None:
    session_ref: list[AgentSession] = []

    def confirm(call: ToolUseBlock, t: Tool) -> bool:
        session_ref[0].steer("wait!")
        return True

    model = ScriptedProvider([tool_calls_reply([("delete", {"path": "a"}), ("delete", {"path": "b"})]),
                              "waiting"])
    session = make_session(model, delete, confirm=confirm)
    session_ref.append(session)
    await session.submit_turn("go")
    assert runs == ["a"]  # the first was approved before the user spoke; the second skipped
    assert results_of(session)[1].is_error


async def test_follow_up_continues_the_turn() -> None:
    model = ScriptedProvider(["first answer", "second answer"])
    session = make_session(model)
    session.follow_up("and also this")
    result = await session.submit_turn("question")
    assert result.text == "second answer"
    assert result.turns == 2
    kinds = [type(m) for m in session.messages]
    assert kinds == [UserInput, AssistantReply, UserInput, AssistantReply]
    assert model.last_request.messages[-1] == UserMessage(content="and also this")


async def test_follow_up_from_a_running_turn() -> None:
    session_ref: list[AgentSession] = []

    def answer(request: LLMRequest) -> str:
        if len(request.messages) == 1:
            session_ref[0].follow_up(UserMessage(content="more"))
            return "one"
        return "two"

    session = make_session(ScriptedProvider([answer, answer]))
    session_ref.append(session)
    assert (await session.submit_turn("q")).text == "two"


# ----------------------------------------------------------------------------- limits


async def test_max_turns_limit() -> None:
    from .test_loop_basic import add

    model = ScriptedProvider([tool_call_reply("add", {"a": i, "b": 0}) for i in range(2)])
    session = make_session(model, add, config=AgentConfig(max_turns=2))
    events = [e async for e in session.stream_turn("loop")]
    result = session.last_result
    assert result is not None
    assert result.stop == "limit"
    assert isinstance(result.error, LimitExceeded)
    assert result.error.limit == "max_turns"
    assert result.error.partial is result
    assert result.turns == 2
    assert model.calls == 2
    assert isinstance(events[-1], Failed)
    assert events[-1].stop == "limit"
    assert_history_valid(session)
    model.add("finally")
    assert (await session.submit_turn("stop looping")).text == "finally"


async def test_max_tool_turns_answers_pending_calls() -> None:
    from .test_loop_basic import add

    model = ScriptedProvider([tool_call_reply("add", {"a": i, "b": 0}) for i in range(3)])
    session = make_session(model, add, config=AgentConfig(max_tool_turns=1))
    result = await session.submit_turn("loop")
    assert result.stop == "limit"
    assert isinstance(result.error, LimitExceeded)
    assert result.error.limit == "max_tool_turns"
    res = results_of(session)
    assert res[0].content == "0"
    assert res[1].is_error
    assert "max_tool_turns" in res[1].text
    assert_history_valid(session)


async def test_token_budget() -> None:
    model = ScriptedProvider([text_reply("a", usage=Usage(input_tokens=60, output_tokens=50)), "b"])
    session = make_session(model, config=AgentConfig(max_total_tokens=100))
    assert (await session.submit_turn("one")).stop == "done"
    result = await session.submit_turn("two")
    assert result.stop == "limit"
    assert result.turns == 0
    assert isinstance(result.error, LimitExceeded)
    assert result.error.limit == "max_total_tokens"
    assert model.calls == 1


async def test_cost_budget() -> None:
    prices = ModelRegistry([ModelInfo(id="budget-test-model", provider="scripted", context_window=1000,
                                      max_output_tokens=100, input_usd_per_mtok=1_000_000.0,
                                      output_usd_per_mtok=1_000_000.0)])
    model = ScriptedProvider([text_reply("a", usage=Usage(input_tokens=1, output_tokens=1)), "b"],
                             model_id="budget-test-model")
    session = make_session(model, config=AgentConfig(max_cost_usd=1.5))
    session.usage = CostTracker(registry=prices)  # prices for a made-up model, not the global registry
    first = await session.submit_turn("one")
    assert first.cost_usd == pytest.approx(2.0)
    result = await session.submit_turn("two")
    assert result.stop == "limit"
    assert isinstance(result.error, LimitExceeded)
    assert result.error.limit == "max_cost_usd"


# ----------------------------------------------------------------------------- repetition


async def test_repetition_nudge() -> None:
    from .test_loop_basic import add

    same = [tool_call_reply("add", {"b": 1, "a": 1}) for _ in range(3)]
    model = ScriptedProvider([*same, "ok I stop"])
    session = make_session(model, add, config=AgentConfig(repetition_limit=3))
    result = await session.submit_turn("go")
    assert result.stop == "done"
    res = results_of(session)
    assert [r.is_error for r in res] == [False, False, True]
    assert "same arguments 3 times in a row" in res[2].text


async def test_repetition_stop() -> None:
    from .test_loop_basic import add

    same = [tool_call_reply("add", {"a": 1, "b": 1}) for _ in range(5)]
    model = ScriptedProvider(same)
    session = make_session(model, add,
                           config=AgentConfig(repetition_limit=2, repetition_action="stop"))
    result = await session.submit_turn("go")
    assert result.stop == "limit"
    assert isinstance(result.error, LimitExceeded)
    assert result.error.limit == "repetition_limit"
    assert model.calls == 2
    assert_history_valid(session)


async def test_tool_context_carries_session() -> None:
    seen: list[Any] = []

    @tool
    def whoami(ctx: ToolContext) -> str:
        """Report the session."""
        seen.append(ctx.require("session"))
        return ctx.session_id

    session = make_session(ScriptedProvider([tool_call_reply("whoami"), "ok"]), whoami)
    await session.submit_turn("go")
    assert seen == [session]
    assert results_of(session)[0].content == "s1"


async def test_a_dropped_session_is_freed_at_once_not_by_the_cycle_collector() -> None:
    """A server opening a session per request frees each one, history and all, when it lets go: the
    tools' context holds the session weakly (no reference cycle), while it lives as before."""
    import gc
    import weakref

    seen: list[Any] = []

    @tool
    async def whoami(ctx: ToolContext) -> str:
        """Report the session, with a progress line."""
        await ctx.report_progress("looking")
        seen.append((ctx.get("session"), sorted(ctx.dependencies), ctx.get("extra")))
        return "me"

    model = ScriptedProvider([tool_call_reply("whoami"), "ok"])
    session = make_session(model, whoami)
    session.tool_context.dependencies  # noqa: B018 (read before the turn, as a tool would)
    result = await session.submit_turn("go")
    assert result.ok
    assert seen == [(session, ["session"], None)]
    seen.clear()
    gc.disable()
    try:
        extra = AgentSession(session.agent, "s2", session.bundle, dependencies={"extra": 1})
        extra_ref = weakref.ref(extra)
        extra.tool_context.dependencies["extra"]
        del extra
        assert extra_ref() is None
        ref = weakref.ref(session)
        assert [type(m).__name__ for m in session.messages].count("ToolLog") == 1  # progress recorded
        del session
        assert ref() is None
    finally:
        gc.enable()


async def test_a_dependency_named_session_given_by_the_caller_is_kept() -> None:
    seen: list[Any] = []

    @tool
    def whose(ctx: ToolContext) -> str:
        """Report the session dependency."""
        seen.append(ctx.require("session"))
        return "ok"

    model = ScriptedProvider([tool_call_reply("whose"), "ok"])
    session = make_session(model, whose)
    mine = AgentSession(session.agent, "s3", session.bundle, dependencies={"session": "the caller's"})
    await mine.submit_turn("go")
    assert seen == ["the caller's"]
    assert dict(session.tool_context.dependencies) == {"session": session}


async def test_steer_from_another_task_while_a_tool_runs() -> None:
    release = anyio.Event()
    running = anyio.Event()

    @tool
    async def wait_for_user() -> str:
        """Blocks until released."""
        running.set()
        await release.wait()
        return "released"

    reply = tool_calls_reply([ToolUseBlock(id="w", name="wait_for_user"),
                              ToolUseBlock(id="x", name="wait_for_user", input={})])
    model = ScriptedProvider([reply, "read your message"])
    session = make_session(model, wait_for_user, config=AgentConfig(parallel_tool_calls=False))

    async def user() -> None:
        await running.wait()
        session.steer("actually, stop")
        release.set()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(user)
            result = await session.submit_turn("go")
    assert result.text == "read your message"
    res = results_of(session)
    assert res[0].content == "released"
    assert res[1].is_error
    assert "Skipped" in res[1].text


async def test_confirm_callback_crash_ends_turn_with_error_and_valid_history() -> None:
    def confirm(call: ToolUseBlock, t: Tool) -> bool:
        raise KeyError("ui gone")

    model = ScriptedProvider([tool_call_reply("delete", {"path": "a"})])
    session = make_session(model, delete, confirm=confirm)
    result = await session.submit_turn("go")
    assert result.stop == "error"
    assert result.error is not None
    assert "KeyError" in str(result.error)
    assert runs == []
    assert_history_valid(session)
    model.add("ok")
    assert (await session.submit_turn("again")).stop == "done"


async def test_sync_transform_and_submit_equals_stream_history() -> None:
    calls: list[int] = []

    def count(messages: list[Any]) -> list[Any]:
        calls.append(len(messages))
        return messages

    from .test_loop_basic import add

    script = [tool_call_reply("add", {"a": 1, "b": 1}, id="c1"), "two"]
    quiet = make_session(ScriptedProvider(script), add, transform=count)
    loud = make_session(ScriptedProvider(script), add, transform=count)
    submitted = await quiet.submit_turn("1+1")
    _ = [e async for e in loud.stream_turn("1+1")]
    streamed = loud.last_result
    assert streamed is not None
    assert calls == [1, 3, 1, 3]
    assert [m.kind for m in quiet.messages] == [m.kind for m in loud.messages]
    assert (submitted.text, submitted.turns, submitted.stop) == (streamed.text, streamed.turns, streamed.stop)


async def test_session_ttl() -> None:
    model = ScriptedProvider(["fresh", "never"])
    session = make_session(model, config=AgentConfig(session_ttl=60))
    assert (await session.submit_turn("one")).stop == "done"
    session.created_at -= 61
    result = await session.submit_turn("two")
    assert result.stop == "limit"
    assert isinstance(result.error, LimitExceeded)
    assert result.error.limit == "session_ttl"
    assert model.calls == 1


async def test_tool_progress_is_recorded_as_tool_log() -> None:
    @tool
    async def build(ctx: ToolContext) -> str:
        """Builds."""
        await ctx.report_progress("compiling", fraction=0.5)
        return "built"

    model = ScriptedProvider([tool_call_reply("build", id="b1"), "done"])
    session = make_session(model, build)
    await session.submit_turn("go")
    logs = [m for m in session.messages if isinstance(m, ToolLog)]
    assert [(log.text, log.tool_use_id, log.tool_name, log.fraction) for log in logs] == [
        ("compiling", "b1", "build", 0.5)
    ]
    assert_history_valid(session)
    assert all("compiling" not in str(m.content) for m in model.last_request.messages)


async def test_steering_during_the_final_model_call_is_answered() -> None:
    session_ref: list[AgentSession] = []

    def first(request: LLMRequest) -> str:
        session_ref[0].steer("one more thing")
        return "my answer"

    model = ScriptedProvider([first, "answering the new message"])
    session = make_session(model)
    session_ref.append(session)
    events = [e async for e in session.stream_turn("q")]
    assert session.last_result is not None
    assert session.last_result.text == "answering the new message"
    assert [e for e in events if isinstance(e, Steered)] == [Steered(skipped=[], text="one more thing")]
    assert model.last_request.messages[-1] == UserMessage(content="one more thing")


async def test_steering_while_parallel_batch_runs_is_read_before_next_call() -> None:
    session_ref: list[AgentSession] = []

    @tool
    async def work() -> str:
        """Works, and the user speaks meanwhile."""
        session_ref[0].steer("hurry up")
        return "worked"

    model = ScriptedProvider([tool_calls_reply([("work", {}), ("work", {})]), "ok"])
    session = make_session(model, work)
    session_ref.append(session)
    await session.submit_turn("go")
    # Both calls had started (parallel), so neither is skipped; the message reaches the model next.
    assert [r.content for r in results_of(session)] == ["worked", "worked"]
    last = model.last_request.messages[-1]
    assert isinstance(last.content, list)
    assert last.content[-1] == TextBlock(text="hurry up")
