"""``OpenTelemetryPlugin`` on real runs, exported by the SDK's in-memory exporter from a private
``TracerProvider`` (the global one is never touched): span names, GenAI attributes, parent/child
structure, error statuses, and every span ended whatever ends the turn."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agcore.agent import AgentConfig
from agcore.integrations.otel import OpenTelemetryPlugin
from agcore.llm import LLMRequest, OverloadedError, ToolResultBlock, ToolUseBlock
from agcore.testing import ScriptedProvider, tool_call_reply, tool_calls_reply
from agcore.tools import Tool, tool
from tests.plugins._support import DenyD, add, mixed_batch, session_with

pytestmark = pytest.mark.anyio


class OpenSpans(SpanProcessor):
    """Tracks spans started and not yet ended."""

    def __init__(self) -> None:
        self.open: dict[int, str] = {}
        self.started = 0

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.open[span.context.span_id] = span.name
        self.started += 1

    def on_end(self, span: ReadableSpan) -> None:
        assert span.context is not None
        self.open.pop(span.context.span_id, None)


class Traced:
    def __init__(self, capture_content: bool = False) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracking = OpenSpans()
        self.provider = TracerProvider()
        self.provider.add_span_processor(self.tracking)
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.plugin = OpenTelemetryPlugin(self.provider, capture_content=capture_content)

    @property
    def spans(self) -> Sequence[ReadableSpan]:
        return self.exporter.get_finished_spans()

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, [s.name for s in self.spans]
        return found[0]

    def tool(self, call_id: str) -> ReadableSpan:
        found = [s for s in self.spans if attrs(s).get("gen_ai.tool.call.id") == call_id]
        assert len(found) == 1
        return found[0]

    def assert_all_ended(self) -> None:
        assert self.tracking.started > 0
        assert self.tracking.open == {}


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def trace_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.trace_id


async def test_a_turn_is_a_span_tree_with_genai_attributes() -> None:
    t = Traced()
    config = AgentConfig(max_tokens=512, temperature=0.25)
    session = session_with(ScriptedProvider([mixed_batch(), "All done."]), t.plugin, DenyD(), config=config)
    await session.submit_turn("please do things")
    t.assert_all_ended()

    turn = t.one("invoke_agent auditor")
    assert parent_id(turn) is None
    assert attrs(turn) == {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "auditor",
        "gen_ai.conversation.id": "s-1", "agcore.turn.index": 1, "agcore.turn.stop": "done",
        "agcore.turn.model_calls": 2,
        "gen_ai.usage.input_tokens": attrs(turn)["gen_ai.usage.input_tokens"],
        "gen_ai.usage.output_tokens": attrs(turn)["gen_ai.usage.output_tokens"],
    }
    assert attrs(turn)["gen_ai.usage.input_tokens"] > 0
    assert turn.status.status_code is StatusCode.UNSET
    assert turn.kind is trace.SpanKind.INTERNAL

    chats = t.named("chat scripted-model")
    assert len(chats) == 2
    first = attrs(chats[0])
    assert first == {
        "gen_ai.operation.name": "chat", "gen_ai.conversation.id": "s-1",
        "gen_ai.request.max_tokens": 512, "gen_ai.request.temperature": 0.25,
        "gen_ai.request.model": "scripted-model", "gen_ai.response.model": "scripted-model",
        "gen_ai.provider.name": "scripted", "gen_ai.system": "scripted",
        "gen_ai.response.finish_reasons": ("tool_use",),
        "gen_ai.usage.input_tokens": first["gen_ai.usage.input_tokens"],
        "gen_ai.usage.output_tokens": first["gen_ai.usage.output_tokens"],
    }
    assert attrs(chats[1])["gen_ai.response.finish_reasons"] == ("end_turn",)
    assert (attrs(chats[0])["gen_ai.usage.output_tokens"] + attrs(chats[1])["gen_ai.usage.output_tokens"]
            == attrs(turn)["gen_ai.usage.output_tokens"])
    assert all(c.kind is trace.SpanKind.CLIENT and not c.events for c in chats)

    tools = [s for s in t.spans if s.name.startswith("execute_tool ")]
    assert sorted(s.name for s in tools) == sorted([
        "execute_tool add", "execute_tool boom", "execute_tool add", "execute_tool delete",
        "execute_tool delete", "execute_tool dump",
    ])
    for span in [*chats, *tools]:
        assert parent_id(span) == span_id(turn)
        assert trace_id(span) == trace_id(turn)
    ok = t.tool("ok")
    assert attrs(ok) == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add", "gen_ai.tool.call.id": "ok",
        "gen_ai.tool.type": "function", "agcore.tool.status": "ok",
    }
    assert ok.status.status_code is StatusCode.UNSET
    for call_id, error_type in [("err", "error"), ("d", "denied"), ("no", "not_approved")]:
        span = t.tool(call_id)
        assert span.status.status_code is StatusCode.ERROR, call_id
        assert attrs(span)["error.type"] == error_type
    assert "disk on fire" in (t.tool("err").status.description or "")
    assert [(e.name, dict(e.attributes or {})) for e in t.tool("yes").events] == [
        ("agcore.confirmation", {"agcore.confirmation.answer": "yes"})]
    assert [dict(e.attributes or {}) for e in t.tool("no").events] == [{"agcore.confirmation.answer": "no"}]
    assert "gen_ai.tool.call.arguments" not in attrs(t.tool("yes"))  # no content unless asked


async def test_capture_content_adds_prompts_replies_arguments_and_results() -> None:
    t = Traced(capture_content=True)
    model = ScriptedProvider([tool_call_reply("add", {"a": 2, "b": 3}, id="c1", text="Adding."), "5"])
    session = session_with(model, t.plugin, system_prompt="You add.")
    await session.submit_turn("2+3?")
    first, second = t.named("chat scripted-model")
    (event,) = first.events
    assert event.name == "gen_ai.client.inference.operation.details"
    details = dict(event.attributes or {})
    assert json.loads(details["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "2+3?"}]}]
    assert json.loads(details["gen_ai.system_instructions"]) == [{"type": "text", "content": "You add."}]
    assert json.loads(details["gen_ai.output.messages"]) == [{
        "role": "assistant", "finish_reason": "tool_use", "parts": [
            {"type": "text", "content": "Adding."},
            {"type": "tool_call", "id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}},
        ]}]
    replayed = json.loads(dict(second.events[0].attributes or {})["gen_ai.input.messages"])
    assert replayed[-1] == {
        "role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "5"}]}
    add_span = t.tool("c1")
    assert attrs(add_span)["gen_ai.tool.call.arguments"] == '{"a":2,"b":3}'
    assert attrs(add_span)["gen_ai.tool.call.result"] == "5"


async def test_a_failed_model_call_marks_the_chat_and_turn_spans() -> None:
    t = Traced()
    session = session_with(ScriptedProvider([OverloadedError("busy", status_code=529)]), t.plugin)
    assert (await session.submit_turn("hi")).stop == "error"
    t.assert_all_ended()
    chat = t.one("chat scripted-model")  # named from the error, as no reply came
    assert chat.status.status_code is StatusCode.ERROR
    assert attrs(chat)["error.type"] == "OverloadedError"
    assert attrs(chat)["gen_ai.request.model"] == "scripted-model"
    assert attrs(chat)["gen_ai.provider.name"] == "scripted"
    assert [e.name for e in chat.events] == ["exception"]
    turn = t.one("invoke_agent auditor")
    assert turn.status.status_code is StatusCode.ERROR
    assert attrs(turn)["error.type"] == "AgentLLMError"
    assert attrs(turn)["agcore.turn.stop"] == "error"


async def test_a_limit_marks_the_turn_span() -> None:
    t = Traced()
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 1})])
    await session_with(model, t.plugin, config=AgentConfig(max_turns=1)).submit_turn("1+1")
    t.assert_all_ended()
    turn = t.one("invoke_agent auditor")
    assert turn.status.status_code is StatusCode.ERROR
    assert attrs(turn)["error.type"] == "LimitExceeded"
    assert "max_turns" in (turn.status.description or "")


async def test_every_span_ends_when_a_tool_is_cancelled() -> None:
    t = Traced()
    started = anyio.Event()

    @tool
    async def hang() -> str:
        """Never returns."""
        started.set()
        await anyio.sleep_forever()
        return "unreachable"

    calls = [ToolUseBlock(id="a", name="add", input={"a": 1, "b": 1}), ToolUseBlock(id="h", name="hang")]
    session = session_with(ScriptedProvider([tool_calls_reply(calls)]), t.plugin, tools=(hang, add))
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.submit_turn, "go")
        await started.wait()
        tg.cancel_scope.cancel()
    t.assert_all_ended()
    turn = t.one("invoke_agent auditor")
    assert turn.status.status_code is StatusCode.ERROR
    assert attrs(turn)["error.type"] == "Cancelled"
    hung = t.tool("h")
    assert hung.status.status_code is StatusCode.ERROR
    assert attrs(hung)["error.type"] == "Cancelled"
    assert parent_id(hung) == span_id(turn)


async def test_every_span_ends_when_the_model_call_is_cancelled() -> None:
    t = Traced()
    asked = anyio.Event()

    async def slow(request: LLMRequest) -> str:
        asked.set()
        await anyio.sleep_forever()
        return "unreachable"

    session = session_with(ScriptedProvider([slow]), t.plugin)
    with anyio.move_on_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.submit_turn, "go")
            await asked.wait()
            tg.cancel_scope.cancel()
    t.assert_all_ended()
    chat = t.one("chat scripted-model")  # named after the model about to be called, never answered
    assert chat.status.status_code is StatusCode.ERROR
    assert attrs(chat)["error.type"] == "Cancelled"
    assert t.one("invoke_agent auditor").status.status_code is StatusCode.ERROR


async def test_parallel_tool_calls_get_one_span_each() -> None:
    t = Traced()
    calls = [ToolUseBlock(id=f"n{i}", name="nap", input={"seconds": 0.01 * i}) for i in range(4)]
    session = session_with(ScriptedProvider([tool_calls_reply(calls), "rested"]), t.plugin,
                           config=AgentConfig(parallel_tool_calls=True))
    await session.submit_turn("nap in parallel")
    t.assert_all_ended()
    turn = t.one("invoke_agent auditor")
    naps = t.named("execute_tool nap")
    assert sorted(attrs(s)["gen_ai.tool.call.id"] for s in naps) == ["n0", "n1", "n2", "n3"]
    assert all(parent_id(s) == span_id(turn) for s in naps)
    assert all(s.status.status_code is StatusCode.UNSET for s in naps)
    # Each span lasts as long as its tool ran (after_tool_call's duration), and they ran at once: the
    # naps add up to 60 ms, yet they all fit in a shorter window.
    lengths = {attrs(s)["gen_ai.tool.call.id"]: ((s.end_time or 0) - (s.start_time or 0)) / 1e9 for s in naps}
    assert all(lengths[f"n{i}"] >= 0.01 * i for i in range(4))
    window = (max(s.end_time or 0 for s in naps) - min(s.start_time or 0 for s in naps)) / 1e9
    assert window < sum(lengths.values())


async def test_concurrent_sessions_keep_their_spans_apart() -> None:
    t = Traced()

    async def run(n: int) -> None:
        model = ScriptedProvider([tool_call_reply("nap", {"seconds": 0.02 * (2 - n)}), f"done {n}"])
        await session_with(model, t.plugin, session_id=f"s{n}", agent=f"agent{n}").submit_turn("go")

    async with anyio.create_task_group() as tg:
        for n in range(3):
            tg.start_soon(run, n)
    t.assert_all_ended()
    for n in range(3):
        turn = t.one(f"invoke_agent agent{n}")
        children = [s for s in t.spans if parent_id(s) == span_id(turn)]
        assert sorted(s.name for s in children) == ["chat scripted-model", "chat scripted-model",
                                                     "execute_tool nap"]
        assert all(trace_id(s) == trace_id(turn) for s in children)
    assert len({trace_id(s) for s in t.spans}) == 3


async def test_the_turn_span_joins_the_applications_current_span() -> None:
    t = Traced()
    tracer = t.provider.get_tracer("app")
    with tracer.start_as_current_span("POST /chat") as request_span:
        await session_with(ScriptedProvider(["hi"]), t.plugin).submit_turn("hello")
    turn = t.one("invoke_agent auditor")
    assert parent_id(turn) == request_span.get_span_context().span_id
    assert trace_id(turn) == request_span.get_span_context().trace_id


async def test_a_client_tool_pause_ends_the_spans_and_resume_continues() -> None:
    t = Traced()
    pick = Tool.client("pick", "Ask the user to pick.", {"type": "object", "properties": {}})
    session = session_with(ScriptedProvider([tool_call_reply("pick", {}, id="p1"), "blue"]), t.plugin,
                           tools=(pick,))
    await session.submit_turn("choose")
    t.assert_all_ended()
    paused = t.one("invoke_agent auditor")
    assert paused.status.status_code is StatusCode.UNSET
    assert attrs(paused)["agcore.turn.stop"] == "client_tools"
    assert attrs(t.tool("p1"))["agcore.tool.status"] == "awaiting_client"
    await session.resume([ToolResultBlock(tool_use_id="p1", content="blue")])
    t.assert_all_ended()
    _first, resumed = t.named("invoke_agent auditor")
    assert attrs(resumed)["agcore.turn.stop"] == "done"
    answered = [s for s in t.named("execute_tool pick") if attrs(s)["agcore.tool.status"] == "client"]
    assert len(answered) == 1
    assert parent_id(answered[0]) == span_id(resumed)


def test_a_missing_opentelemetry_api_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m.startswith("agcore.integrations.otel")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)  # what a missing package looks like
    with pytest.raises(ImportError, match=r"pip install 'agcore\[otel\]'"):
        importlib.import_module("agcore.integrations.otel")


async def test_calls_that_skip_vetting_still_get_a_tool_span() -> None:
    """An unknown tool or unreadable arguments never reach before_tool_call: the span is made when the
    result is reported."""
    t = Traced()
    calls = [ToolUseBlock(id="u", name="nope"), ToolUseBlock(id="p", name="add", parse_error="bad JSON")]
    await session_with(ScriptedProvider([tool_calls_reply(calls), "sorry"]), t.plugin).submit_turn("go")
    t.assert_all_ended()
    turn = t.one("invoke_agent auditor")
    unknown, unreadable = t.tool("u"), t.tool("p")
    assert unknown.name == "execute_tool nope"
    assert attrs(unknown)["error.type"] == "unknown_tool"
    assert attrs(unreadable)["error.type"] == "parse_error"
    assert parent_id(unknown) == span_id(turn)
    assert parent_id(unreadable) == span_id(turn)
