"""No "done" without an answer: an empty final reply, the runtime's reminder echoed back, or a reply
that is only a tool call written as text is asked again once, then fails the turn (``NoAnswer``);
and the text-mode reminder after tool results stops pushing for a call once the work is visibly done.
Real sessions on scripted providers, asyncio and trio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agcore.agent import (
    AgentBuilder,
    AgentConfig,
    AgentSession,
    BasicAgent,
    ContextNote,
    NoAnswer,
    not_an_answer,
    restated_as_done,
)
from agcore.agent.textcalls import is_reminder_echo
from agcore.llm import LLMRequest, TextBlock, UserMessage
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import tool
from agcore.tools.workspace import Workspace

pytestmark = pytest.mark.anyio

CALL_AS_JSON = '{"name": "add", "arguments": {"a": 2, "b": 3}}'


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def session_for(model: ScriptedProvider, *tools: Any, mode: str = "off") -> AgentSession:
    bundle = (AgentBuilder().provider(model).tools(*(tools or (add,)))
              .config(AgentConfig(text_mode_tools=mode)).build())  # type: ignore[arg-type]
    return AgentSession(BasicAgent(name="t", system_prompt="Be brief."), "s1", bundle)


def notes(session: AgentSession) -> list[str]:
    return [m.text for m in session.messages if isinstance(m, ContextNote)]


@pytest.mark.parametrize(("reply", "why"), [
    pytest.param("", "was empty", id="empty"),
    pytest.param("   \n", "was empty", id="blank"),
    pytest.param(CALL_AS_JSON, "was only a tool call to add written as text, which was not run", id="json"),
    pytest.param(f"```json\n{CALL_AS_JSON}\n```", "was only a tool call to add", id="fenced"),
    pytest.param("{'name': 'add', 'arguments': {'a': 2, 'b': 3,}}", "was only a tool call to add",
                 id="repaired"),
    pytest.param("Continue with the task: add 2 and 3\nWrite the next tool call now for the part of the task "
                 "still to do.", "repeated the reminder", id="reminder"),
])
async def test_a_reply_that_is_no_answer_is_asked_again_with_the_reason(reply: str, why: str) -> None:
    model = ScriptedProvider([reply, "2 + 3 is 5."])
    session = session_for(model)
    result = await session.submit_turn("add 2 and 3")
    assert result.stop == "done"
    assert result.text == "2 + 3 is 5."
    (note,) = notes(session)
    assert f"Your last reply {why}" in note
    assert "If the task is done, say in plain text what you did" in note
    assert "Your last reply" in str(model.requests[1].messages[-1].content)  # the model read it


async def test_no_answer_twice_fails_the_turn_saying_why() -> None:
    model = ScriptedProvider(["", ""])
    session = session_for(model)
    result = await session.submit_turn("add 2 and 3")
    assert result.stop == "error"
    assert isinstance(result.error, NoAnswer)
    assert result.error.why == "was empty"
    assert result.error.is_recoverable()
    message = str(result.error)
    assert "ended without an answer: its reply was empty, again after it was asked for one" in message
    assert result.turns == 2
    model.add("5")  # the history stays valid: the session takes another turn
    assert (await session.submit_turn("again")).text == "5"


async def test_work_between_two_empty_replies_counts_afresh() -> None:
    model = ScriptedProvider(["", tool_call_reply("add", {"a": 2, "b": 3}), "", "It is 5."])
    session = session_for(model)
    result = await session.submit_turn("add 2 and 3")
    assert result.stop == "done"
    assert result.text == "It is 5."
    assert len(notes(session)) == 2


async def test_prose_around_a_call_is_an_answer() -> None:
    model = ScriptedProvider([f"I would call {CALL_AS_JSON} but the sum is simply 5."])
    session = session_for(model)
    result = await session.submit_turn("add 2 and 3")
    assert result.stop == "done"
    assert notes(session) == []


async def test_without_tools_json_is_an_answer() -> None:
    model = ScriptedProvider([CALL_AS_JSON])
    bundle = AgentBuilder().provider(model).build()
    session = AgentSession(BasicAgent(name="t", system_prompt="Answer in JSON."), "s1", bundle)
    result = await session.submit_turn("give me a call as JSON")
    assert result.stop == "done"
    assert result.text == CALL_AS_JSON


# ----------------------------------------------------------------------- the text-mode reminder


def reminder(request: LLMRequest) -> str:
    last = request.messages[-1]
    assert isinstance(last, UserMessage)
    block = last.content[-1]
    assert isinstance(block, TextBlock)
    return block.text


async def test_the_reminder_asks_for_the_answer_once_the_named_file_is_written(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, confirm_writes=False, confirm_commands=False)
    model = ScriptedProvider([
        '<tool_call>{"name": "write_file", "arguments": {"path": "notes.txt", "content": "hi"}}</tool_call>',
        "Wrote notes.txt.",
    ])
    session = session_for(model, *workspace.tools(), mode="on")
    result = await session.submit_turn("Write hi to notes.txt")
    assert result.text == "Wrote notes.txt."
    text = reminder(model.requests[1])
    assert text.startswith("Continue with the task: Write hi to notes.txt\n")
    assert "Your last tool call succeeded (it changed notes.txt, the file the task names)" in text
    assert "answer now in plain text" in text
    assert "Write the next tool call now" not in text


async def test_the_reminder_still_pushes_after_a_failed_call_or_other_work(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, confirm_writes=False, confirm_commands=False)
    model = ScriptedProvider([
        '<tool_call>{"name": "read_file", "arguments": {"path": "missing.txt"}}</tool_call>',  # fails
        '<tool_call>{"name": "write_file", "arguments": {"path": "scratch.txt", "content": "x"}}</tool_call>',
        "Done.",
    ])
    session = session_for(model, *workspace.tools(), mode="on")
    await session.submit_turn("Write hi to notes.txt")
    assert "Write the next tool call now" in reminder(model.requests[1])  # the call failed
    assert "Write the next tool call now" in reminder(model.requests[2])  # not the file the task names


async def test_the_reminder_takes_the_models_word_that_it_is_finished() -> None:
    model = ScriptedProvider([
        'The task is done after this.\n<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>',
        "5",
    ])
    session = session_for(model, mode="on")
    await session.submit_turn("add 2 and 3")
    text = reminder(model.requests[1])
    assert "Your last tool call succeeded. If that completes the task" in text
    assert "Write the next tool call now" not in text


async def test_an_echo_of_the_new_reminder_is_no_answer_either() -> None:
    echo = ("Your last tool call succeeded. If that completes the task, answer now in plain text saying what "
            "you did, without a tool call.")
    model = ScriptedProvider([echo, "Done: 5."])
    session = session_for(model)
    result = await session.submit_turn("add 2 and 3")
    assert result.text == "Done: 5."
    assert "repeated the reminder" in notes(session)[0]


@pytest.mark.parametrize("echo", [
    # seen from Qwen2.5-Coder 1.5B: the task repeated, then the reminder without its parenthesis
    "List the files in this repo.\nWrite the next tool call now for the part of the task still to do. "
    "Only when nothing is left to do, answer in plain text.",
    "Write the file the task asks for.",  # a fragment, reworded
    "If that completes the task, answer now in plain text saying what you did.",
])
async def test_an_echo_in_part_or_reworded_is_no_answer(echo: str) -> None:
    model = ScriptedProvider([echo, "Done: 5."])
    session = session_for(model)
    result = await session.submit_turn("add 2 and 3")
    assert result.text == "Done: 5."
    assert "repeated the reminder" in notes(session)[0]


@pytest.mark.parametrize("answer", [
    "I wrote hello.py; it prints hi.",
    "Done. The task is complete: count.txt holds 37.",
    "I created the file the task asks for: notes.txt with the summary.",
    "The function add in calc.py returned a - b; I changed it to a + b and the tests pass.",
])
def test_an_answer_in_its_own_words_is_not_an_echo(answer: str) -> None:
    """Measured: 0 of 797 prose paragraphs of agcore's docs are taken for an echo (1 flagged paragraph
    quotes the reminder itself)."""
    assert not is_reminder_echo(answer)


TASK = "Run `python generate.py` and write exactly what it prints into output.txt."


async def test_a_reply_that_restates_the_task_is_asked_again_then_fails() -> None:
    restated = "Run python generate.py and write exactly what it prints into output.txt"
    model = ScriptedProvider([TASK, restated])
    session = session_for(model)
    result = await session.submit_turn(TASK)
    assert result.stop == "error"
    assert isinstance(result.error, NoAnswer)
    assert result.error.why == "only restated the task"
    (note,) = notes(session)
    assert "Your last reply only restated the task" in note


async def test_a_reply_that_restates_the_task_then_an_answer_is_done() -> None:
    model = ScriptedProvider([TASK, "I ran it; it printed 5fcf87609c8d, which output.txt now holds."])
    session = session_for(model)
    result = await session.submit_turn(TASK)
    assert result.stop == "done"
    assert "5fcf87609c8d" in result.text


@pytest.mark.parametrize("answer", [
    "Renamed the function get_usr to get_user in users.py and updated every use of it in app.py.",
    "I ran python generate.py and wrote exactly what it prints into output.txt",
    "I wrote exactly what python generate.py prints into output.txt",
    "I ran `python generate.py` and wrote exactly what it prints into output.txt.",
    "I wrote the names of the Python files in src into files.txt, one name per line.",
    "count.txt holds 37",
])
async def test_an_answer_in_the_tasks_own_terms_is_an_answer_after_work(answer: str) -> None:
    model = ScriptedProvider([tool_call_reply("add", {"a": 2, "b": 3}), answer])  # the work: a call
    session = session_for(model)
    task = ("Rename the function get_usr to get_user in users.py and update every use of it in app.py. "
            + TASK + " Count the lines of data.csv and write the count into count.txt. Write the names "
            "of the Python files in src into files.txt, one name per line.")
    result = await session.submit_turn(task)
    assert result.stop == "done"
    assert notes(session) == []


EXPLAIN = ("Read settings.py and explain in two sentences what it configures, including the release "
           "codename.")


@pytest.mark.parametrize("reply", [
    "I read settings.py and explained in two sentences what it configures, including the release codename.",
    "I have read settings.py and explained what it configures, including the release codename.",
])
async def test_the_task_said_back_as_done_with_nothing_done_is_asked_again_then_fails(reply: str) -> None:
    # seen from Qwen2.5-Coder 1.5B on a question, after only reading: the review took it for done
    model = ScriptedProvider([reply, reply])
    session = session_for(model)
    result = await session.submit_turn(EXPLAIN)
    assert result.stop == "error"
    assert isinstance(result.error, NoAnswer)
    assert result.error.why == "only said the task back as done, and nothing in this turn did it"


async def test_the_task_said_back_as_done_then_a_real_answer_is_done() -> None:
    said_back = "I read settings.py and explained in two sentences what it configures, with the codename."
    model = ScriptedProvider([said_back, "It configures billing; the release codename is heliotrope-5731."])
    result = await session_for(model).submit_turn(EXPLAIN)
    assert result.stop == "done"
    assert "heliotrope-5731" in result.text


@pytest.mark.parametrize(("reply", "task"), [
    ("It configures the billing service; the release codename is heliotrope-5731.", EXPLAIN),
    ("An order of 180 gets a 5% discount.", "What discount does an order total of 180 get?"),
    ("Yes, config.ini sets the port to 8080.", "Does config.ini set the port?"),
])
def test_an_answer_with_content_of_its_own_is_not_the_task_said_back(reply: str, task: str) -> None:
    assert not restated_as_done(reply, task)


async def test_the_task_said_back_after_a_change_is_a_summary() -> None:
    summary = "I renamed the function get_usr to get_user in users.py and updated every use of it in app.py."
    model = ScriptedProvider([tool_call_reply("add", {"a": 2, "b": 3}), summary])  # a tool not read-only
    session = session_for(model)
    result = await session.submit_turn(
        "Rename the function get_usr to get_user in users.py and update every use of it in app.py."
    )
    assert result.stop == "done", result.error
    assert result.text == summary


async def test_a_reply_that_repeats_the_runtimes_note_is_no_answer() -> None:
    model = ScriptedProvider(["", "If the task is done, say in plain text what you did and what came of it."])
    session = session_for(model)
    result = await session.submit_turn("add 2 and 3")
    assert isinstance(result.error, NoAnswer)
    assert result.error.why == "only repeated the runtime's own note back"


def test_a_reply_is_a_repeat_only_when_long_enough_and_word_for_word() -> None:
    note = ("The acceptance check `pytest` failed. The check runs on what is on disk, so reading files "
            "again or answering again without a change does not fix it.")
    echo = "The check runs on what is on disk, so reading files again or answering again without a change."
    assert not_an_answer(echo, frozenset(), notes=[note]) == "only repeated the runtime's own note back"
    prefixed = "The task is now done. " + echo
    assert not_an_answer(prefixed, frozenset(), notes=[note]) == "only repeated the runtime's own note back"
    assert not_an_answer("The check failed.", frozenset(), notes=[note]) is None  # short
    answer = "I fixed calc.py; the check runs on what is on disk."
    assert not_an_answer(answer, frozenset(), notes=[note]) is None


def test_a_reply_that_only_quotes_the_task_after_words_of_its_own_is_not_said_back() -> None:
    # an echo with a prefix of its own ("streamed: <the step's prompt>") is left to the other rules
    task = "Now carry out step s1 of 2: flaky first. Do only this step, then answer with its outcome."
    assert not restated_as_done(f"streamed: {task}", task)
    assert restated_as_done(f"I have {task.lower()}", task)
