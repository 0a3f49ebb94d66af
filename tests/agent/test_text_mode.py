"""Text-mode tool calls in the loop: every call in a reply run in order, what could not be read told to
the model, made-up results cut off, the protocol and its stop sequence, auto mode (the switch, its
event, log line and persistence; known native models never switch), and streaming that never shows
call JSON as the answer. On asyncio and trio, with the scripted provider."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from agcore.agent import (
    AgentBuilder,
    AgentConfig,
    AgentSession,
    AssistantReply,
    BasicAgent,
    ContextNote,
    Done,
    TextDelta,
    TextModeSwitched,
    UnreadableToolCalls,
)
from agcore.agent.textcalls._text_calls import RESULT_LABEL
from agcore.llm import LLMRequest, ModelInfo, StopReason, TextBlock, register_model
from agcore.llm._arguments import CUT_AT_MAX_TOKENS
from agcore.memory import SqliteSessionStore
from agcore.testing import FunctionProvider, ScriptedProvider, text_reply, tool_call_reply
from agcore.tools import tool

from .test_loop_basic import assert_history_valid, results_of

pytestmark = pytest.mark.anyio

ran: list[str] = []


@tool
def read_file(path: str) -> str:
    """Read a file."""
    ran.append(f"read {path}")
    return f"<contents of {path}>"


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    ran.append(f"add {a} {b}")
    return a + b


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


def session_for(model: Any, mode: Any = "on", store: Any = None, **config: Any) -> AgentSession:
    bundle = (
        AgentBuilder().provider(model).tools(read_file, add)
        .config(AgentConfig(text_mode_tools=mode, **config)).build()
    )
    return AgentSession(BasicAgent(name="t", system_prompt="Be brief."), "s1", bundle, store=store)


def notes(session: AgentSession) -> list[str]:
    return [m.text for m in session.messages if isinstance(m, ContextNote)]


def request_text(request: LLMRequest) -> str:
    parts: list[str] = []
    for message in request.messages:
        if isinstance(message.content, str):
            parts.append(message.content)
        else:
            parts.extend(b.text for b in message.content if isinstance(b, TextBlock))
    return "\n".join(parts)


# ------------------------------------------------------------------------ several calls


async def test_every_call_in_a_reply_runs_in_order() -> None:
    reply = (
        "I need both files and a sum.\n```json\n"
        '{"tool": "read_file", "arguments": {"path": "a.py"}}\n'
        '{"tool": "read_file", "arguments": {"path": "b.py"}}\n```\n'
        '<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>'
    )
    model = ScriptedProvider([reply, "Done: both read, sum 5."])
    session = session_for(model, parallel_tool_calls=False)
    result = await session.submit_turn("go")
    assert result.text == "Done: both read, sum 5."
    assert ran == ["read a.py", "read b.py", "add 2 3"]
    assert [r.content for r in results_of(session)] == ["<contents of a.py>", "<contents of b.py>", "5"]
    (first_reply, _) = [m for m in session.messages if isinstance(m, AssistantReply)]
    assert first_reply.message.text == "I need both files and a sum."
    assert first_reply.message.stop_reason == StopReason.TOOL_USE
    assert notes(session) == []
    assert_history_valid(session)


async def test_qwen3_coder_calls_run_with_their_values_validated() -> None:
    reply = (
        "<tool_call>\n<function=add>\n<parameter=a>\n2\n</parameter>\n<parameter=b>\n3\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    model = ScriptedProvider([reply, "5"])
    session = session_for(model)
    await session.submit_turn("2+3?")
    assert ran == ["add 2 3"]
    assert [r.content for r in results_of(session)] == ["5"]


async def test_the_protocol_request_and_how_history_is_written_back() -> None:
    model = ScriptedProvider(['{"tool": "add", "arguments": {"a": 2, "b": 2}}', "It is 4."])
    session = session_for(model)
    await session.submit_turn("2+2?")
    first, second = model.requests
    assert first.tools == []
    assert first.tool_choice is None
    assert first.system is not None
    assert first.system.startswith("Be brief.")
    assert "<tool_call>" in first.system
    assert "- add: Add two numbers." in first.system
    assert "Never write a tool's result yourself" in first.system
    # One example, with placeholders only: nothing a model could copy as a real value.
    assert first.system.count('{"name": "<tool name>"') == 1
    assert first.stop_sequences == [RESULT_LABEL]
    text = request_text(second)
    assert '<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 2}}\n</tool_call>' in text
    assert '<tool_response name="add" status="ok">\n4\n</tool_response>' in text
    assert "Tool result" not in text


async def test_after_results_the_task_is_restated_and_the_model_asked_to_go_on() -> None:
    # A 1.5B model on llama-server read the file and then answered instead of writing what the task
    # asked for; restating the task after the results made it go on (measured with make e2e-local).
    # Only in text mode, only right after results, never in the first request.
    model = ScriptedProvider(['{"tool": "read_file", "arguments": {"path": "data.csv"}}',
                              '{"tool": "add", "arguments": {"a": 36, "b": 1}}', "Wrote 37."])
    session = session_for(model)
    await session.submit_turn("Count the lines of data.csv")
    first, second, third = model.requests
    assert "Work in small steps" in (first.system or "")
    assert "Continue with the task" not in request_text(first)
    for request in (second, third):
        last = request.messages[-1]
        assert not isinstance(last.content, str)
        assert isinstance(last.content[-1], TextBlock)
        assert last.content[-1].text.startswith("Continue with the task: Count the lines of data.csv\n")
    # What is saved is the history as it was: the reminder is only in what the model is sent.
    assert "Continue with the task" not in repr(session.messages)


async def test_native_requests_get_no_reminder() -> None:
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 1}), "2"])
    session = session_for(model, mode="off")
    await session.submit_turn("1+1?")
    assert "Continue with the task" not in request_text(model.requests[1])


async def test_stop_sequences_of_the_request_are_kept() -> None:
    model = FunctionProvider(lambda messages, tools: "fine")

    class Stops(BasicAgent):
        pass

    bundle = AgentBuilder().provider(model).tools(add).config(AgentConfig(text_mode_tools="on")).build()
    session = AgentSession(Stops(name="x"), "s", bundle)
    from agcore.hooks import hookimpl

    class AddStop:
        @hookimpl(tryfirst=True)
        def on_llm_request(self, ctx: Any, request: LLMRequest) -> LLMRequest:
            return request.model_copy(update={"stop_sequences": [*request.stop_sequences, "END"]})

    bundle.hook_executor().register(AddStop())
    await session.submit_turn("hi")
    assert model.last_request.stop_sequences == [RESULT_LABEL, "END"]


# ----------------------------------------------------------------- what cannot be read


async def test_an_unreadable_call_is_told_to_the_model_and_the_readable_one_runs() -> None:
    reply = (
        '{"tool": "add", "arguments": {"a": 1, "b": 1}}\n'
        '{"tool": "delete_everything", "arguments": {}}'
    )
    model = ScriptedProvider([reply, "2"])
    session = session_for(model)
    await session.submit_turn("go")
    assert ran == ["add 1 1"]
    (note,) = notes(session)
    assert "delete_everything" in note
    assert "could not be read" in note
    # The model reads it with the results, in the next request.
    assert "delete_everything" in request_text(model.requests[1])
    assert_history_valid(session)


async def test_a_reply_with_only_unreadable_calls_is_not_taken_as_the_answer() -> None:
    # The false success of issue 18: a call attempt printed as the answer, the turn "done", nothing run.
    model = ScriptedProvider([
        '<tool_call>{"name": "read_files", "arguments": {"path": "a.py"}}</tool_call>',
        '<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>',
        "a.py holds its contents.",
    ])
    session = session_for(model)
    result = await session.submit_turn("read a.py")
    assert result.stop == "done"
    assert result.text == "a.py holds its contents."
    assert ran == ["read a.py"]
    (note,) = notes(session)
    assert "no tool named 'read_files'" in note
    assert "read_files" in request_text(model.requests[1])


async def test_asking_again_is_bounded_and_junk_is_never_the_answer() -> None:
    bad = '<tool_call>{"name": "nope", "arguments": {}}</tool_call>'
    model = ScriptedProvider([bad, bad, "<tool_call>oops</tool_call>", "Hello again."])
    session = session_for(model)
    result = await session.submit_turn("go")
    assert model.calls == 3  # the reply, then two more chances
    assert result.stop == "error"  # not "done" with the unreadable call as its answer
    assert isinstance(result.error, UnreadableToolCalls)
    assert result.error.is_recoverable()
    assert result.error.text_mode
    message = str(result.error)
    assert "could not be read" in message
    assert "no JSON call inside" in message
    assert "text_mode_tools='off'" in message
    assert "session can take another turn" in message
    assert len(notes(session)) == 3
    assert ran == []
    assert_history_valid(session)
    again = await session.submit_turn("hi")  # the session goes on
    assert (again.stop, again.text) == ("done", "Hello again.")


async def test_prose_beside_an_unreadable_call_is_still_an_answer_after_the_re_asks() -> None:
    # A model that cannot write a call must still be able to answer in text.
    bad = 'I cannot call it. <tool_call>{"name": "nope", "arguments": {}}</tool_call>'
    model = ScriptedProvider([bad, bad, bad])
    result = await session_for(model).submit_turn("go")
    assert (result.stop, model.calls) == ("done", 3)
    assert result.text.startswith("I cannot call it.")


async def test_only_made_up_results_end_the_turn_with_an_error() -> None:
    model = ScriptedProvider(["Tool result: 18C"] * 3)
    session = session_for(model)
    result = await session.submit_turn("weather?")
    assert result.stop == "error"
    assert isinstance(result.error, UnreadableToolCalls)
    assert "wrote itself" in str(result.error)
    assert_history_valid(session)


@pytest.mark.parametrize(
    "label", ["Tool result: 18C", "Observation: sunny", "**Tool output:** 18C", "工具结果\uff1a18C"]
)
async def test_a_result_label_without_a_call_is_cut_and_asked_again(label: str) -> None:
    model = ScriptedProvider([f"{label}\nIt is sunny.", "It is 18C."])
    session = session_for(model, streaming="always")
    shown, _ = await _shown(session, "weather?")
    assert shown == "It is 18C."  # the made-up result is not shown while it streams either
    result = session.last_result
    assert result is not None
    assert (result.stop, result.text, model.calls) == ("done", "It is 18C.", 2)
    (note,) = notes(session)
    assert "without calling a tool" in note
    assert "It is sunny." not in request_text(model.requests[1])


@pytest.mark.parametrize("mode", ["on", "off"])
async def test_an_answer_opening_with_result_or_output_is_an_answer(mode: str) -> None:
    # Bare "Result:"/"Output:" lines open real answers; only result labels count without a call.
    answer = "Result: 5\nOutput: the sum of 2 and 3."
    model = ScriptedProvider([answer])
    result = await session_for(model, mode=mode).submit_turn("2+3?")
    assert (result.text, model.calls) == (answer, 1)


@pytest.mark.parametrize("model_id", ["claude-haiku-4-5", "some-local-model"])
async def test_a_result_label_answer_with_native_tools_is_the_answer(model_id: str) -> None:
    # Native tools offered (auto mode, before any switch): a prose answer is never cut, nor hidden.
    answer = "Observation: the tests pass."
    model = ScriptedProvider([answer], model_id=model_id)
    session = session_for(model, mode="auto", streaming="always")
    shown, _ = await _shown(session, "status?")
    assert session.last_result is not None
    assert (shown, session.last_result.text, model.calls) == (answer, answer, 1)


async def test_data_json_in_an_answer_is_the_answer() -> None:
    answer = 'The config should be:\n```json\n{"debug": true, "port": 8080}\n```'
    model = ScriptedProvider([answer])
    session = session_for(model)
    result = await session.submit_turn("config?")
    assert result.text == answer
    assert notes(session) == []
    assert model.calls == 1


async def test_invented_result_is_cut_and_the_real_one_used() -> None:
    model = ScriptedProvider([
        '{"tool": "add", "arguments": {"a": 2, "b": 3}}\nTool result (add, ok):\n99\nSo the answer is 99.',
        "The answer is 5.",
    ])
    session = session_for(model)
    result = await session.submit_turn("2+3?")
    assert result.text == "The answer is 5."
    assert [r.content for r in results_of(session)] == ["5"]
    replies = [m for m in session.messages if isinstance(m, AssistantReply)]
    assert "99" not in replies[0].message.text
    assert "99" not in request_text(model.requests[1]).split("</tool_response>")[0]
    (note,) = notes(session)
    assert "result you wrote yourself" in note


async def test_a_made_up_result_without_a_call_is_not_the_answer() -> None:
    model = ScriptedProvider([
        '<tool_response name="read_file" status="ok">\nprint("hi")\n</tool_response>\nThe file prints hi.',
        '<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>',
        "It holds <contents of a.py>.",
    ])
    session = session_for(model)
    result = await session.submit_turn("what is in a.py?")
    assert ran == ["read a.py"]
    assert result.text == "It holds <contents of a.py>."
    (note,) = notes(session)
    assert "without calling a tool" in note
    assert "The file prints hi." not in request_text(model.requests[1])


async def test_a_call_cut_by_max_tokens_is_not_run() -> None:
    cut = text_reply('{"tool": "read_file", "arguments": {"path": "very/long/pa')
    cut = cut.model_copy(update={"stop_reason": StopReason.MAX_TOKENS})
    model = ScriptedProvider([cut, "ok"])
    session = session_for(model)
    await session.submit_turn("go")
    assert ran == []
    (result,) = results_of(session)
    assert result.is_error
    assert CUT_AT_MAX_TOKENS in result.text


async def test_a_call_repeated_as_text_after_its_result_is_nudged() -> None:
    # The common small-model failure: the same call again right after its result came back.
    again = '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>'
    model = ScriptedProvider([again, again, again, "a.py holds its contents."])
    session = session_for(model)  # the default repetition_limit (3) and action ("nudge")
    result = await session.submit_turn("what is in a.py?")
    assert result.text == "a.py holds its contents."
    outcomes = results_of(session)
    assert [r.is_error for r in outcomes] == [False, False, True]
    assert "same arguments 3 times in a row" in outcomes[2].text
    assert ran == ["read a.py", "read a.py"]  # the third call was not run


# ------------------------------------------------------------------------------ settings


def test_bools_and_strings_are_read() -> None:
    assert AgentConfig(text_mode_tools=True).text_mode_tools == "on"
    assert AgentConfig(text_mode_tools=False).text_mode_tools == "off"
    assert AgentConfig().text_mode_tools == "auto"
    assert AgentConfig().replace(text_mode_tools=True).text_mode_tools == "on"
    with pytest.raises(ValidationError):
        AgentConfig(text_mode_tools="sometimes")


async def test_agent_attribute_still_turns_text_mode_on() -> None:
    class TextAgent(BasicAgent):
        text_mode_tools = True

    model = ScriptedProvider(["No tools needed {not json}"])
    bundle = AgentBuilder().provider(model).tools(add).build()
    session = AgentSession(TextAgent(name="t"), "s", bundle)
    result = await session.submit_turn("hi")
    assert result.text == "No tools needed {not json}"
    assert model.last_request.tools == []


# ------------------------------------------------------------------------------ auto mode

CALL_AS_TEXT = '```json\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n```'


async def test_auto_runs_a_call_written_as_text_and_switches(caplog: pytest.LogCaptureFixture) -> None:
    model = ScriptedProvider([CALL_AS_TEXT, "5", "second turn"], model_id="qwen2.5-coder-1.5b-instruct")
    session = session_for(model, mode="auto")
    assert not session.switched_to_text_mode
    with caplog.at_level(logging.INFO, logger="agcore.agent"):
        events = [e async for e in session.stream_turn("2+3?")]
    assert ran == ["add 2 3"]
    assert session.last_result is not None
    assert session.last_result.text == "5"
    assert [e for e in events if isinstance(e, TextModeSwitched)] == [
        TextModeSwitched(provider="scripted", model="qwen2.5-coder-1.5b-instruct")
    ]
    assert "text-mode tool calls from now on" in caplog.text
    assert session.switched_to_text_mode
    first, second = model.requests
    assert [t.name for t in first.tools] == ["read_file", "add"]  # native tools were offered first
    assert second.tools == []
    assert second.stop_sequences == [RESULT_LABEL]
    await session.submit_turn("again")
    assert model.last_request.tools == []  # switched for the rest of the session
    assert_history_valid(session)


@pytest.mark.parametrize(("model_id", "provider"), [("gpt-4.1", "openai"), ("claude-haiku-4-5", "anthropic")])
async def test_known_native_models_never_switch(model_id: str, provider: str) -> None:
    model = ScriptedProvider([CALL_AS_TEXT], model_id=model_id, provider_name=provider)
    session = session_for(model, mode="auto")
    result = await session.submit_turn("2+3?")
    assert ran == []
    assert result.text == CALL_AS_TEXT
    assert not session.switched_to_text_mode
    assert [t.name for t in model.last_request.tools] == ["read_file", "add"]


async def test_off_never_reads_calls_from_text() -> None:
    model = ScriptedProvider([CALL_AS_TEXT], model_id="some-local-model")
    session = session_for(model, mode="off")
    result = await session.submit_turn("2+3?")
    assert ran == []
    assert result.text == CALL_AS_TEXT
    assert not session.switched_to_text_mode


async def test_auto_does_not_switch_on_a_repaired_or_unknown_call() -> None:
    model = ScriptedProvider(
        ["{'name': 'add', 'arguments': {'a': 2, 'b': 3,}}", "2 + 3 is 5.",
         '{"tool": "subtract", "arguments": {}}', "I have no tool to subtract with."],
        model_id="some-local-model",
    )
    session = session_for(model, mode="auto")
    first = await session.submit_turn("one")
    assert ran == []  # repaired JSON is not run, and no switch for it; but it is no answer either
    (asked,) = notes(session)
    assert "was only a tool call to add written as text, which was not run" in asked
    assert first.text == "2 + 3 is 5."
    # A reply that is nothing but a call to a tool that does not exist is no answer: the model is told
    # (the e2e-local suite saw a 1.5B model "call" add_function this way and the turn end "done").
    second = await session.submit_turn("two")
    assert second.text == "I have no tool to subtract with."
    assert ran == []
    assert not session.switched_to_text_mode
    _, note = notes(session)
    assert "subtract" in note


async def test_auto_tells_the_model_about_an_unreadable_tool_call_tag() -> None:
    # A <tool_call> tag is a call attempt beyond doubt: told and asked again, not the answer.
    model = ScriptedProvider([
        '<tool_call>{"name": "ad", "arguments": {"a": 2, "b": 3}}</tool_call>',
        '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>',
        "5",
    ], model_id="some-local-model")
    session = session_for(model, mode="auto")
    events = [e async for e in session.stream_turn("2+3?")]
    assert session.last_result is not None
    assert (session.last_result.stop, session.last_result.text) == ("done", "5")
    assert ran == ["add 2 3"]
    (note,) = notes(session)
    assert "there is no tool named 'ad'" in note
    assert "<tool_call>" in note
    assert [t.name for t in model.requests[1].tools] == ["read_file", "add"]  # no switch on the bad one
    assert len([e for e in events if isinstance(e, TextModeSwitched)]) == 1  # the good one switched
    assert session.switched_to_text_mode
    assert_history_valid(session)


async def test_auto_ends_with_an_error_when_tool_call_tags_stay_unreadable() -> None:
    model = ScriptedProvider(["<tool_call>oops</tool_call>"] * 3 + ["hi"], model_id="some-local-model")
    session = session_for(model, mode="auto")
    result = await session.submit_turn("go")
    assert (result.stop, model.calls) == ("error", 3)
    assert isinstance(result.error, UnreadableToolCalls)
    assert not result.error.text_mode
    assert "text_mode_tools='on'" in str(result.error)
    assert not session.switched_to_text_mode
    assert len(notes(session)) == 3
    assert (await session.submit_turn("hello")).text == "hi"
    assert_history_valid(session)


async def test_auto_keeps_native_calls_native() -> None:
    from agcore.testing import tool_call_reply

    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), "3"], model_id="some-local-model")
    session = session_for(model, mode="auto")
    await session.submit_turn("1+2?")
    assert ran == ["add 1 2"]
    assert not session.switched_to_text_mode
    assert model.last_request.tools  # still native


async def test_registry_local_and_toolless_models(monkeypatch: pytest.MonkeyPatch) -> None:
    from agcore.llm import models

    # A registry of this test's own: the default one stays as it was for other tests.
    monkeypatch.setattr(models, "default_registry", models.ModelRegistry(models.default_registry))
    register_model(ModelInfo(id="textmode-test-local", provider="ollama", context_window=8192,
                             max_output_tokens=2048, input_usd_per_mtok=0, output_usd_per_mtok=0))
    register_model(ModelInfo(id="textmode-test-toolless", provider="openai-compatible", context_window=8192,
                             max_output_tokens=2048, input_usd_per_mtok=0, output_usd_per_mtok=0,
                             supports_tools=False))
    local = ScriptedProvider([CALL_AS_TEXT, "5"], model_id="textmode-test-local")
    session = session_for(local, mode="auto")
    await session.submit_turn("2+3?")
    assert ran == ["add 2 3"]
    assert session.switched_to_text_mode
    toolless = ScriptedProvider(["hello"], model_id="textmode-test-toolless")
    await session_for(toolless, mode="auto").submit_turn("hi")
    assert toolless.last_request.tools == []  # text mode from the first call


async def test_the_switch_survives_a_reload(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SqliteSessionStore(path) as store:
        model = ScriptedProvider([CALL_AS_TEXT, "5"], model_id="some-local-model")
        session = session_for(model, mode="auto", store=store)
        await session.submit_turn("2+3?")
        assert session.switched_to_text_mode
    async with SqliteSessionStore(path) as store:
        again = ScriptedProvider(["still 5"], model_id="some-local-model")
        bundle = AgentBuilder().provider(again).tools(read_file, add).build()
        loaded = await AgentSession.load(store, "s1", BasicAgent(name="t"), bundle)
        assert loaded.switched_to_text_mode
        await loaded.submit_turn("and now?")
        assert again.last_request.tools == []
        assert '<tool_response name="add" status="ok">' in request_text(again.last_request)


# ------------------------------------------------------------------------------ streaming


async def _shown(session: AgentSession, prompt: str) -> tuple[str, list[Any]]:
    events = [e async for e in session.stream_turn(prompt)]
    return "".join(e.text for e in events if isinstance(e, TextDelta)), events


@pytest.mark.parametrize("streaming", ["always", "never"])
async def test_streamed_text_never_shows_call_json(streaming: str) -> None:
    reply = (
        'Let me check.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>\n'
        "<tool_response>\nmade up\n</tool_response>"
    )
    model = ScriptedProvider([reply, "Here is the summary: it prints {x}."])
    session = session_for(model, streaming=streaming)
    shown, events = await _shown(session, "summarise a.py")
    assert "Let me check." in shown
    assert "Here is the summary: it prints {x}." in shown
    assert "read_file" not in shown
    assert "tool_call" not in shown
    assert "made up" not in shown
    assert isinstance(events[-1], Done)


async def test_streamed_prose_and_code_are_shown_whole() -> None:
    answer = 'Use this:\n```python\nconfig = {"debug": True}\n```\nand call it with [1, 2].'
    model = ScriptedProvider([answer])
    shown, _ = await _shown(session_for(model, streaming="always"), "how?")
    assert shown == answer


async def test_auto_mode_stream_does_not_echo_the_call() -> None:
    model = ScriptedProvider([CALL_AS_TEXT, "It is 5."], model_id="some-local-model")
    shown, events = await _shown(session_for(model, mode="auto", streaming="always"), "2+3?")
    assert shown == "It is 5."
    assert any(isinstance(e, TextModeSwitched) for e in events)


async def test_an_answer_that_only_looked_like_a_call_is_shown_whole() -> None:
    # Held back while it streamed (it looked like a call), then taken as the answer (repaired JSON is
    # never run before the switch): the user must see it, not a bare "done".
    answer = "Sure.\n{'name': 'add', 'arguments': {'a': 2, 'b': 3,}}"
    model = ScriptedProvider([answer], model_id="some-local-model")
    session = session_for(model, mode="auto", streaming="always")
    shown, _ = await _shown(session, "2+3?")
    assert shown == answer
    assert session.last_result is not None
    assert session.last_result.text == answer
