"""The same scripted session on AgentSession and on the compiled LangGraph graph: equal histories
(message ids and times aside), equal turn results, and the same hook calls in the same order.

LangGraph runs on asyncio only, so this module runs on asyncio only (not on trio).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agcore.agent import AgentBuilder, AgentConfig, AgentEvent, AgentSession, BasicAgent, TurnResult
from agcore.hooks import HookContext, ToolCallDecision, hookimpl
from agcore.integrations.langgraph import GraphSession
from agcore.llm import (
    AssistantMessage,
    LLMRequest,
    StopReason,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from agcore.llm.errors import InvalidRequestError
from agcore.testing import ScriptedProvider, tool_calls_reply
from agcore.tools import Tool, ToolContext, tool

from .conftest import comparable

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def forbidden(path: str) -> str:
    """A tool the policy hook denies."""
    raise AssertionError("a denied call must not run")


@tool(requires_confirmation=True)
def risky(target: str) -> str:
    """A tool that needs the user's approval."""
    return f"wiped {target}"


ask_user = Tool.client("ask_user", "Ask the user a question.", {
    "type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"],
})


class Recorder:
    """Records every hook call, with what identifies it."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl
    def on_session_start(self, ctx: HookContext) -> None:
        self.calls.append("session_start")

    @hookimpl
    def on_session_end(self, ctx: HookContext) -> None:
        self.calls.append("session_end")

    @hookimpl
    def on_turn_start(self, ctx: HookContext, user_input: UserMessage) -> None:
        self.calls.append(f"turn_start:{ctx.turn_index}:{user_input.content}")

    @hookimpl
    def on_llm_request(self, ctx: HookContext, request: LLMRequest) -> None:
        self.calls.append(f"llm_request:{len(request.messages)}:{sorted(t.name for t in request.tools)}")

    @hookimpl
    def on_llm_response(self, ctx: HookContext, message: AssistantMessage) -> None:
        self.calls.append(f"llm_response:{message.text}:{[c.id for c in message.tool_calls]}")

    @hookimpl
    def on_turn_end(self, ctx: HookContext, message: AssistantMessage) -> None:
        self.calls.append(f"turn_end:{ctx.usage.total_tokens}")

    @hookimpl
    def before_tool_call(self, ctx: HookContext, call: ToolUseBlock) -> ToolCallDecision | None:
        self.calls.append(f"before:{call.id}")
        if call.name == "forbidden":
            return ToolCallDecision.deny("paths outside the workspace are off limits")
        return None

    @hookimpl
    def after_tool_call(self, ctx: HookContext, call: ToolUseBlock, result: ToolResultBlock,
                        status: str) -> None:
        self.calls.append(f"after:{call.id}:{status}:{result.content}")

    @hookimpl
    def on_confirmation(self, ctx: HookContext, call: ToolUseBlock, answer: str) -> None:
        self.calls.append(f"confirmation:{call.id}:{answer}")

    @hookimpl
    def on_message(self, ctx: HookContext, message: Any) -> None:
        self.calls.append(f"message:{message.kind}")

    @hookimpl
    def on_turn_result(self, ctx: HookContext, result: TurnResult) -> None:
        self.calls.append(f"turn_result:{result.stop}:{type(result.error).__name__}:{result.turns}")

    @hookimpl
    def on_error(self, ctx: HookContext, error: BaseException) -> None:
        self.calls.append(f"error:{type(error).__name__}")


def call(id: str, name: str, **arguments: Any) -> ToolUseBlock:
    return ToolUseBlock(id=id, name=name, input=arguments)


def script() -> list[Any]:
    return [
        # turn 1: two parallel adds, a denied call, a confirmed call; then a refused confirmation
        tool_calls_reply([call("c1", "add", a=1, b=2), call("c2", "add", a=3, b=4),
                          call("c3", "forbidden", path="/etc"), call("c4", "risky", target="tmp")],
                         text="working"),
        tool_calls_reply([call("c5", "risky", target="home")]),
        # "always": asked once, then not again for that tool
        tool_calls_reply([call("c5b", "risky", target="cache")]),
        tool_calls_reply([call("c5c", "risky", target="logs")]),
        "sum is 10",
        # turn 2: a client call next to a server call; then the queued follow-up
        tool_calls_reply([call("c6", "ask_user", question="which?"), call("c7", "add", a=5, b=5)]),
        "you said blue",
        "followed up",
        # turn 3: an unknown tool, then tool rounds until max_tool_turns stops the turn
        tool_calls_reply([call("c8", "nope"), call("c9", "add", a=1, b=1)]),
        tool_calls_reply([call("c10", "add", a=2, b=2)]),
        tool_calls_reply([call("c11", "add", a=3, b=3)]),
        tool_calls_reply([call("c12", "add", a=4, b=4)]),
        tool_calls_reply([call("c12b", "add", a=5, b=5)]),
        # turn 4: a client call left unanswered; turn 5 instead
        tool_calls_reply([call("c13", "ask_user", question="still?")]),
        "fine, forgotten",
    ]


def confirm_answers() -> Any:
    answers = iter([True, False, "always"])

    def confirm(call: ToolUseBlock, tool: Tool) -> Any:
        return next(answers)

    return confirm


async def run_session(session: AgentSession | GraphSession) -> list[TurnResult]:
    results = [await session.submit_turn("compute")]
    session.follow_up("and then?")
    paused = await session.submit_turn("ask me")
    assert paused.stop == "client_tools"
    assert [c.id for c in paused.pending_tool_calls] == ["c6"]
    results += [paused, await session.resume([ToolResultBlock(tool_use_id="c6", content="blue")])]
    results.append(await session.submit_turn("keep going"))
    # paused for a client tool again, and the user answers with a new message instead
    paused = await session.submit_turn("ask again")
    assert paused.stop == "client_tools"
    results += [paused, await session.submit_turn("forget the question")]
    await session.close()
    return results


@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "sequential"])
async def test_same_session_same_history_and_hooks(parallel: bool) -> None:
    runs: dict[str, tuple[list[Any], list[str], list[Any]]] = {}
    for backend in ("loop", "graph"):
        recorder = Recorder()
        bundle = (AgentBuilder().provider(ScriptedProvider(script())).tools(add, forbidden, risky, ask_user)
                  .plugins(recorder).config(AgentConfig(max_tool_turns=4, parallel_tool_calls=parallel))
                  .build())
        agent = BasicAgent(name="parity", system_prompt="be brief")
        session: AgentSession | GraphSession
        if backend == "loop":
            session = AgentSession(agent, "s1", bundle, confirm=confirm_answers())
            results = await run_session(session)
            history = session.messages
        else:
            session = GraphSession(agent, "s1", bundle, confirm=confirm_answers())
            results = await run_session(session)
            history = await session.history()
        outcome = [(r.stop, r.text, r.turns, type(r.error).__name__, r.usage, comparable(r.messages))
                   for r in results]
        runs[backend] = (comparable(history), recorder.calls, outcome)

    loop_history, loop_hooks, loop_results = runs["loop"]
    graph_history, graph_hooks, graph_results = runs["graph"]
    assert graph_history == loop_history
    assert graph_hooks == loop_hooks
    assert graph_results == loop_results
    # and the session did what the script says, on both
    stops = [r[0] for r in loop_results]
    assert stops == ["done", "client_tools", "done", "limit", "client_tools", "done"]
    results_by_id = {r["tool_use_id"]: r for m in loop_history if m["kind"] == "tool_results"
                     for r in m["results"]}
    assert results_by_id["c1"]["content"] == "3"
    assert "denied" in results_by_id["c3"]["content"]
    assert results_by_id["c4"]["content"] == "wiped tmp"
    assert "did not approve" in results_by_id["c5"]["content"]
    assert results_by_id["c6"]["content"] == "blue"
    assert "Unknown tool" in results_by_id["c8"]["content"] or results_by_id["c8"]["is_error"]
    assert "max_tool_turns" in results_by_id["c12b"]["content"]
    assert "confirmation:c4:yes" in loop_hooks
    assert "confirmation:c5:no" in loop_hooks
    assert "confirmation:c5b:always" in loop_hooks
    assert not any(h.startswith("confirmation:c5c") for h in loop_hooks)
    assert results_by_id["c5c"]["content"] == "wiped logs"
    assert "instead of returning" in results_by_id["c13"]["content"]


async def test_no_confirm_callback_means_not_run_on_both() -> None:
    histories = []
    for backend in ("loop", "graph"):
        model = ScriptedProvider([tool_calls_reply([call("c1", "risky", target="x")]), "ok"])
        bundle = AgentBuilder().provider(model).tools(risky).build()
        agent = BasicAgent(name="p", system_prompt="s")
        if backend == "loop":
            loop_session = AgentSession(agent, "s", bundle)
            await loop_session.submit_turn("go")
            histories.append(comparable(loop_session.messages))
        else:
            graph_session = GraphSession(agent, "s", bundle)
            await graph_session.submit_turn("go")
            histories.append(comparable(await graph_session.history()))
    assert histories[0] == histories[1]
    assert "no way to ask" in histories[1][2]["results"][0]["content"]


# ------------------------------------------------------------------ streaming, steering, errors


@tool
def interrupting(ctx: ToolContext) -> str:
    """A tool during which the user types a new message (steering)."""
    ctx.require("session").steer("actually, stop and say hi")
    return "noted"


class StopAfterTwo:
    """on_turn_end says stop at the second reply of a turn."""

    def __init__(self) -> None:
        self.replies = 0

    @hookimpl
    def on_turn_end(self, ctx: HookContext, message: AssistantMessage) -> bool:
        self.replies += 1
        return self.replies % 2 == 1


def event_view(event: AgentEvent) -> dict[str, Any]:
    data = event.model_dump(mode="json", exclude={"duration"})
    data.pop("duration", None)
    return data


def streaming_script() -> list[Any]:
    return [
        # a steering tool next to an add: sequentially the add is skipped, in parallel it runs
        tool_calls_reply([call("s1", "interrupting"), call("s2", "add", a=1, b=1)], text="let me see"),
        "hi!",
        # the model fails (not retryable): the turn ends with an error, the history stays valid
        InvalidRequestError("the request was malformed"),
        # on_turn_end stops the turn at its second reply: that reply's calls are answered "not run"
        tool_calls_reply([call("s3", "add", a=2, b=2)]),
        tool_calls_reply([call("s4", "add", a=3, b=3)]),
    ]


@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "sequential"])
async def test_streamed_turns_give_the_same_events_history_and_hooks(parallel: bool) -> None:
    runs = {}
    for backend in ("loop", "graph"):
        recorder = Recorder()
        bundle = (AgentBuilder().provider(ScriptedProvider(streaming_script())).tools(add, interrupting)
                  .plugins(recorder, StopAfterTwo()).config(AgentConfig(parallel_tool_calls=parallel))
                  .build())
        agent = BasicAgent(name="parity", system_prompt="be brief")
        session: AgentSession | GraphSession = (
            AgentSession(agent, "s2", bundle) if backend == "loop" else GraphSession(agent, "s2", bundle)
        )
        events = []
        stops = []
        for text in ("look", "again", "more"):
            events += [event_view(e) async for e in session.stream_turn(text)]
            assert session.last_result is not None
            stops.append(session.last_result.stop)
        history = session.messages if isinstance(session, AgentSession) else await session.history()
        runs[backend] = (events, comparable(history), recorder.calls, stops)
    assert runs["graph"][0] == runs["loop"][0]
    assert runs["graph"][1] == runs["loop"][1]
    assert runs["graph"][2] == runs["loop"][2]
    # the hook stops every second reply: the first turn at "hi!", the third at its second tool round
    assert runs["loop"][3] == runs["graph"][3] == ["stopped_by_hook", "error", "stopped_by_hook"]
    types = [e["type"] for e in runs["loop"][0]]
    assert "steered" in types
    assert "text_delta" in types
    assert "failed" in types
    results = {r["tool_use_id"]: r for m in runs["loop"][1] if m["kind"] == "tool_results"
               for r in m["results"]}
    assert ("Skipped" in results["s2"]["content"]) is (not parallel)
    assert "a hook stopped the turn" in results["s4"]["content"]


async def test_a_cancelled_graph_run_answers_its_calls_at_once_as_the_loop_does() -> None:
    import anyio

    started = anyio.Event()

    @tool
    async def hang() -> str:
        """Never finishes."""
        started.set()
        await anyio.sleep_forever()
        return "unreachable"

    model = ScriptedProvider([tool_calls_reply([call("h1", "hang"), call("h2", "add", a=1, b=2)]), "fine"])
    bundle = AgentBuilder().provider(model).tools(hang, add).build()
    session = GraphSession(BasicAgent(name="c", system_prompt="s"), "s3", bundle)
    async with anyio.create_task_group() as group:
        group.start_soon(session.submit_turn, "hang please")
        await started.wait()
        await anyio.sleep(0.05)
        group.cancel_scope.cancel()
    # At once, before any next turn: the history and the checkpoint answer every call, h2 with the
    # result it had when the run was cut short, h1 "cancelled"; the turn ended "cancelled".
    assert session.last_result is not None
    assert session.last_result.stop == "cancelled"
    for history in (session.messages, await session.history()):
        assert [m.kind for m in history] == ["user", "assistant", "tool_results"]
        answered = {r.tool_use_id: r for r in history[2].results}
        assert answered["h1"].is_error
        assert "Cancelled" in str(answered["h1"].content)
        assert answered["h2"].content == "3"
    assert not session.running
    result = await session.submit_turn("never mind")
    assert result.stop == "done"
    history = await session.history()
    assert [m.kind for m in history] == ["user", "assistant", "tool_results", "user", "assistant"]


async def test_a_resolver_switching_models_mid_turn_reads_the_same_on_both() -> None:
    runs = {}
    for backend in ("loop", "graph"):
        small = ScriptedProvider([tool_calls_reply([call("r1", "add", a=1, b=1)])], model_id="small")
        large = ScriptedProvider(["two"], model_id="large", provider_name="other")
        seen: list[str] = []

        def resolver(session: Any, request: LLMRequest, seen: list[str] = seen,
                     small: ScriptedProvider = small, large: ScriptedProvider = large) -> ScriptedProvider:
            seen.append(session.session_id)
            return small if len(request.messages) == 1 else large

        bundle = AgentBuilder().provider_resolver(resolver).tools(add).build()
        agent = BasicAgent(name="switch", system_prompt="s")
        session: AgentSession | GraphSession = (
            AgentSession(agent, "s4", bundle) if backend == "loop" else GraphSession(agent, "s4", bundle)
        )
        events = [event_view(e) async for e in session.stream_turn("1+1")]
        runs[backend] = (events, comparable(session.messages), seen)
    assert runs["graph"] == runs["loop"]
    switched = [e for e in runs["loop"][0] if e["type"] == "provider_switched"]
    assert switched == [{"type": "provider_switched", "from_provider": "scripted", "from_model": "small",
                         "to_provider": "other", "to_model": "large"}]
    assert runs["loop"][2] == ["s4", "s4"]


async def test_a_paused_reply_goes_on_in_the_same_turn_on_both() -> None:
    # Anthropic's pause_turn (StopReason.PAUSE): the history goes back as it is, the model goes on.
    runs = {}
    for backend in ("loop", "graph"):
        paused = AssistantMessage(content=[TextBlock(text="Searching...")], stop_reason=StopReason.PAUSE)
        model = ScriptedProvider([paused, "Found it."])
        bundle = AgentBuilder().provider(model).build()
        agent = BasicAgent(name="pauser", system_prompt="s")
        session: AgentSession | GraphSession = (
            AgentSession(agent, "s5", bundle) if backend == "loop" else GraphSession(agent, "s5", bundle)
        )
        result = await session.submit_turn("find it")
        runs[backend] = (result.text, result.stop, comparable(session.messages), len(model.requests))
    assert runs["graph"] == runs["loop"]
    assert runs["loop"][:2] == ("Found it.", "done")
    assert runs["loop"][3] == 2


@tool
async def long_job(ctx: ToolContext, steps: int) -> str:
    """A tool that reports its progress."""
    for i in range(steps):
        await ctx.report_progress(f"step {i + 1} of {steps}", fraction=(i + 1) / steps)
    return "finished"


async def test_tool_progress_lands_in_the_history_as_tool_logs_on_both() -> None:
    runs = {}
    for backend in ("loop", "graph"):
        recorder = Recorder()
        model = ScriptedProvider([tool_calls_reply([call("p1", "long_job", steps=3)]), "all done"])
        bundle = AgentBuilder().provider(model).tools(long_job).plugins(recorder).build()
        agent = BasicAgent(name="progress", system_prompt="s")
        session: AgentSession | GraphSession = (
            AgentSession(agent, "s5", bundle) if backend == "loop" else GraphSession(agent, "s5", bundle)
        )
        await session.submit_turn("run the job")
        history = session.messages if isinstance(session, AgentSession) else await session.history()
        runs[backend] = (comparable(history), recorder.calls)
    assert runs["graph"] == runs["loop"]
    kinds = [m["kind"] for m in runs["loop"][0]]
    assert kinds == ["user", "assistant", "tool_log", "tool_log", "tool_log", "tool_results", "assistant"]
    assert runs["loop"][0][4]["text"] == "step 3 of 3"


async def test_text_mode_tool_calls_read_the_same_on_both() -> None:
    from agcore._clock import use_clock
    from agcore.testing import FixedClock

    runs = {}
    for backend in ("loop", "graph"):
        model = ScriptedProvider(['Let me add.\n{"tool": "add", "arguments": {"a": 2, "b": 2}}', "It is 4."])
        bundle = AgentBuilder().provider(model).tools(add).config(text_mode_tools="on").build()
        agent = BasicAgent(name="text", system_prompt="s")
        with use_clock(FixedClock()):  # the call id text mode makes is the same on both
            session: AgentSession | GraphSession = (
                AgentSession(agent, "s6", bundle) if backend == "loop" else GraphSession(agent, "s6", bundle)
            )
            result = await session.submit_turn("2+2?")
        runs[backend] = (comparable(session.messages), [r.model_dump() for r in model.requests], result.text)
    assert runs["graph"] == runs["loop"]
    assert runs["loop"][2] == "It is 4."
    assert runs["loop"][1][0]["tools"] == []  # the tools were described in the prompt instead


async def test_auto_text_mode_switches_and_asks_again_the_same_on_both() -> None:
    from agcore._clock import use_clock
    from agcore.testing import FixedClock

    runs = {}
    for backend in ("loop", "graph"):
        model = ScriptedProvider([
            '```json\n{"name": "add", "arguments": {"a": 2, "b": 2}}\n```',  # a call as text: switched
            '<tool_call>{"name": "ad", "arguments": {"a": 2}}</tool_call>',  # no such tool: ask again
            "It is 4.",
            "Still 4.",
        ], model_id="local-qwen")
        bundle = AgentBuilder().provider(model).tools(add).build()
        agent = BasicAgent(name="auto", system_prompt="s")
        with use_clock(FixedClock()):
            session: AgentSession | GraphSession = (
                AgentSession(agent, "s7", bundle) if backend == "loop" else GraphSession(agent, "s7", bundle)
            )
            events = [type(e).__name__ async for e in session.stream_turn("2+2?")]
            result = await session.submit_turn("and again?")
        history = session.messages if isinstance(session, AgentSession) else await session.history()
        runs[backend] = (comparable(history), [r.model_dump() for r in model.requests], result.text, events)
    assert runs["graph"] == runs["loop"]
    requests = runs["loop"][1]
    assert [bool(r["tools"]) for r in requests] == [True, False, False, False]  # switched for good
    assert "there is no tool named" in str(requests[2]["messages"])
    assert "TextModeSwitched" in runs["loop"][3]
    assert runs["loop"][2] == "Still 4."


async def test_unreadable_text_calls_end_with_the_same_error_on_both() -> None:
    from agcore._clock import use_clock
    from agcore.agent import UnreadableToolCalls
    from agcore.testing import FixedClock

    runs = {}
    for backend in ("loop", "graph"):
        model = ScriptedProvider(["<tool_call>oops</tool_call>"] * 3 + ["hi"], model_id="local-qwen")
        bundle = AgentBuilder().provider(model).tools(add).build()
        agent = BasicAgent(name="auto", system_prompt="s")
        with use_clock(FixedClock()):
            session: AgentSession | GraphSession = (
                AgentSession(agent, "s8", bundle) if backend == "loop" else GraphSession(agent, "s8", bundle)
            )
            result = await session.submit_turn("2+2?")
            assert isinstance(result.error, UnreadableToolCalls)
            after = await session.submit_turn("hello")
        history = session.messages if isinstance(session, AgentSession) else await session.history()
        runs[backend] = (comparable(history), [r.model_dump() for r in model.requests], result.stop,
                         str(result.error), after.text)
    assert runs["graph"] == runs["loop"]
    assert runs["loop"][2:] == ("error", runs["loop"][3], "hi")
    assert "could not be read" in runs["loop"][3]


async def test_memory_tools_from_the_bundle_work_the_same_on_both() -> None:
    from agcore._clock import use_clock
    from agcore.memory import InMemoryStore, KeywordRetriever
    from agcore.testing import FixedClock

    runs = {}
    for backend in ("loop", "graph"):
        with use_clock(FixedClock()):  # the memory ids the store makes are the same on both
            store = InMemoryStore()
            await store.add("The deploy key lives in the vault under ops/deploy.")
            model = ScriptedProvider([
                tool_calls_reply([call("m1", "remember", content="Friday deploys are frozen.")]),
                tool_calls_reply([call("m2", "retrieve", query="deploy key")]),
                "In the vault.",
            ])
            bundle = (AgentBuilder().provider(model).memory_store(store, remember_tool=True)
                      .retriever(KeywordRetriever(store)).build())
            agent = BasicAgent(name="memory", system_prompt="s")
            session: AgentSession | GraphSession = (
                AgentSession(agent, "s7", bundle) if backend == "loop" else GraphSession(agent, "s7", bundle)
            )
            await session.submit_turn("where is the deploy key?")
        runs[backend] = (comparable(session.messages), [item.content for item in await store.list()])
    assert runs["graph"] == runs["loop"]
    results = {r["tool_use_id"]: r["content"] for m in runs["loop"][0] if m["kind"] == "tool_results"
               for r in m["results"]}
    assert results["m1"].startswith("Remembered")
    assert "ops/deploy" in results["m2"]
    assert "Friday deploys are frozen." in runs["loop"][1]


async def test_a_closed_session_starts_again_on_its_next_turn_on_both() -> None:
    runs = {}
    for backend in ("loop", "graph"):
        recorder = Recorder()
        bundle = AgentBuilder().provider(ScriptedProvider(["a", "b"])).plugins(recorder).build()
        agent = BasicAgent(name="closing", system_prompt="s")
        session: AgentSession | GraphSession = (
            AgentSession(agent, "s8", bundle) if backend == "loop" else GraphSession(agent, "s8", bundle)
        )
        await session.submit_turn("one")
        await session.close()
        await session.close()  # a second close: nothing more to end
        await session.submit_turn("two")
        runs[backend] = [c for c in recorder.calls if c.startswith("session_")]
    assert runs["graph"] == runs["loop"] == ["session_start", "session_end", "session_start"]


async def test_a_cycle_of_calls_is_nudged_then_stopped_the_same_on_both() -> None:
    """read/list/read/list... (a small model going round in circles): the same nudge in the same
    result, the same stop naming the calls, on both backends."""
    from agcore._clock import use_clock
    from agcore.testing import FixedClock

    runs = {}
    for backend in ("loop", "graph"):
        with use_clock(FixedClock()):  # the same call ids on both
            pair = [tool_calls_reply([("add", {"a": 1, "b": 1})]),
                    tool_calls_reply([("add", {"a": 2, "b": 2})])]
            model = ScriptedProvider([*pair * 4, "never"])
            bundle = AgentBuilder().provider(model).tools(add).build()
            agent = BasicAgent(name="cycle", system_prompt="s")
            session: AgentSession | GraphSession = (
                AgentSession(agent, "s7", bundle) if backend == "loop" else GraphSession(agent, "s7", bundle)
            )
            result = await session.submit_turn("go")
        runs[backend] = (comparable(session.messages), str(result.error), result.stop, model.calls)
    assert runs["graph"] == runs["loop"]
    assert runs["loop"][2:] == ("limit", 6)
    assert 'add({"a":1,"b":1}), add({"a":2,"b":2})' in runs["loop"][1]


async def test_the_same_call_after_its_nudge_stops_the_turn_the_same_on_both() -> None:
    """The same call four times in a row: the third is nudged, the fourth stops the turn with an error
    that names the call, on both backends."""
    from agcore._clock import use_clock
    from agcore.testing import FixedClock

    runs = {}
    for backend in ("loop", "graph"):
        with use_clock(FixedClock()):
            model = ScriptedProvider([tool_calls_reply([("add", {"a": 1, "b": 1})])] * 4 + ["never"])
            bundle = AgentBuilder().provider(model).tools(add).build()
            agent = BasicAgent(name="repeat", system_prompt="s")
            session: AgentSession | GraphSession = (
                AgentSession(agent, "s8", bundle) if backend == "loop" else GraphSession(agent, "s8", bundle)
            )
            result = await session.submit_turn("go")
        runs[backend] = (comparable(session.messages), str(result.error), result.stop)
    assert runs["graph"] == runs["loop"]
    assert runs["loop"][2] == "limit"
    assert 'the same tool call, add({"a":1,"b":1})' in runs["loop"][1]


async def test_a_read_and_a_change_in_one_parallel_reply_run_in_the_models_order_on_both() -> None:
    order: list[str] = []

    async def look() -> str:
        order.append("start look")
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        order.append("end look")
        return "seen"

    async def change() -> str:
        order.append("start change")
        await anyio.lowlevel.checkpoint()
        order.append("end change")
        return "changed"

    read_only = Tool.from_function(look, name="look", description="Look.", read_only=True)
    writes = Tool.from_function(change, name="change", description="Change.")
    runs = {}
    for backend in ("loop", "graph"):
        order.clear()
        reply = tool_calls_reply([ToolUseBlock(id="a", name="look"), ToolUseBlock(id="b", name="change"),
                                  ToolUseBlock(id="c", name="look")])
        bundle = (AgentBuilder().provider(ScriptedProvider([reply, "done"])).tools(read_only, writes)
                  .config(AgentConfig(parallel_tool_calls=True)).build())
        agent = BasicAgent(name="ordered", system_prompt="s")
        session: AgentSession | GraphSession = (
            AgentSession(agent, "s9", bundle) if backend == "loop" else GraphSession(agent, "s9", bundle)
        )
        result = await session.submit_turn("go")
        history = session.messages if isinstance(session, AgentSession) else await session.history()
        runs[backend] = (list(order), comparable(history), result.text)
    assert runs["graph"] == runs["loop"]
    expected = ["start look", "end look", "start change", "end change", "start look", "end look"]
    assert runs["loop"][0] == expected


async def test_read_only_calls_alone_still_run_together_on_both() -> None:
    order: list[str] = []

    async def look(name: str) -> str:
        order.append(f"start {name}")
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        order.append(f"end {name}")
        return name

    read_only = Tool.from_function(look, name="look", description="Look.", read_only=True)
    for backend in ("loop", "graph"):
        order.clear()
        reply = tool_calls_reply([ToolUseBlock(id="a", name="look", input={"name": "a"}),
                                  ToolUseBlock(id="b", name="look", input={"name": "b"})])
        bundle = (AgentBuilder().provider(ScriptedProvider([reply, "done"])).tools(read_only)
                  .config(AgentConfig(parallel_tool_calls=True)).build())
        agent = BasicAgent(name="together", system_prompt="s")
        session: AgentSession | GraphSession = (
            AgentSession(agent, "s10", bundle) if backend == "loop" else GraphSession(agent, "s10", bundle)
        )
        await session.submit_turn("go")
        assert order[:2] == ["start a", "start b"], (backend, order)
