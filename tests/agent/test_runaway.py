"""Runaway replies: ``find_runaway`` on what small models write when stuck, and on normal long replies
cut at max_tokens; the built-in guard asking once more, then ending the turn with ``RunawayOutput``."""

from __future__ import annotations

from pathlib import Path

import pytest

from agcore.agent import (
    AgentBuilder,
    AgentConfig,
    AgentSession,
    AssistantReply,
    BasicAgent,
    ContextNote,
    RunawayOutput,
    find_runaway,
)
from agcore.llm import AssistantMessage, StopReason, TextBlock, ThinkingBlock
from agcore.testing import ScriptedProvider, tool_call_reply

from .test_loop_basic import add

ROOT = Path(__file__).resolve().parents[2]


def cut(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextBlock(text=text)], stop_reason=StopReason.MAX_TOKENS)


@pytest.mark.parametrize(("text", "unit", "start"), [
    ("Here is the list: " + "[" * 400, "[", 18),
    ("ok\n" + "{" * 60 + "\n" * 300, "\n", 63),
    ("Summary:\n" + "The cat sat on the mat. " * 30 + "The cat s", "The cat sat on the mat. ", 9),
    ("代码如下" + "这个函数返回参数之和。" * 40, "这个函数返回参数之和。", 4),
    ("x = [" + "0, " * 200, "0, ", 5),
])
def test_finds_the_repetition_a_reply_ends_in(text: str, unit: str, start: int) -> None:
    found = find_runaway(text)
    assert found is not None
    assert (found.unit, found.start) == (unit, start)
    assert found.times >= 30


@pytest.mark.parametrize("path", ["agcore/agent/steps.py", "docs/runtimes.md", "roadmap.md"])
def test_normal_text_cut_anywhere_is_not_a_runaway(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    for end in range(600, min(len(text), 30_000), 397):  # cut mid-line, mid-word
        assert find_runaway(text[:end]) is None, (path, end)
    assert find_runaway("-" * 72 + "\nsection\n" + "=" * 100) is None  # separators are short


def session_for(model: ScriptedProvider, **config: object) -> AgentSession:
    bundle = AgentBuilder().provider(model).tools(add).config(**config).build()
    return AgentSession(BasicAgent("a", "You help."), "s1", bundle)


@pytest.mark.anyio
async def test_a_runaway_is_cut_out_and_asked_once_more() -> None:
    model = ScriptedProvider([cut("The answer is " + "[" * 400), "The answer is 4."])
    session = session_for(model)
    result = await session.submit_turn("2 + 2?")
    assert result.stop == "done"
    assert result.text == "The answer is 4."
    recorded = [m.message.text for m in session.messages if isinstance(m, AssistantReply)]
    assert recorded[0] == "The answer is ["  # one copy kept, the rest removed
    notes = [m.text for m in session.messages if isinstance(m, ContextNote)]
    assert "repeated the same text ('[' 400 times)" in notes[0]
    assert "removed" in str(model.requests[1].messages[-1])


@pytest.mark.anyio
async def test_a_second_runaway_ends_the_turn_with_a_clear_error() -> None:
    model = ScriptedProvider([cut("[" * 400), cut("ok " + "{" * 300)])
    result = await session_for(model).submit_turn("2 + 2?")
    assert result.stop == "error"
    assert isinstance(result.error, RunawayOutput)
    assert result.error.is_recoverable()
    assert "'{' repeated 300 times" in str(result.error)
    assert "token limit" in str(result.error)


@pytest.mark.anyio
async def test_stop_ends_at_the_first_and_off_lets_it_through() -> None:
    stopped = await session_for(ScriptedProvider([cut("[" * 400)]), runaway_action="stop").submit_turn("?")
    assert isinstance(stopped.error, RunawayOutput)
    assert stopped.stop == "error"
    passed = await session_for(ScriptedProvider([cut("[" * 400)]), runaway_action="off").submit_turn("?")
    assert passed.stop == "done"
    assert passed.text == "[" * 400


@pytest.mark.anyio
async def test_normal_replies_are_left_alone() -> None:
    long_code = (ROOT / "agcore/agent/steps.py").read_text(encoding="utf-8")[:6000]
    thinking = AssistantMessage(content=[ThinkingBlock(thinking="hm"), TextBlock(text="[" * 400)],
                                stop_reason=StopReason.END_TURN)  # not cut: the model meant it
    model = ScriptedProvider([cut(long_code), thinking, tool_call_reply("add", {"a": 1, "b": 2}), "3"])
    session = session_for(model)
    first = await session.submit_turn("show me the code")
    assert first.text == long_code
    second = await session.submit_turn("brackets please")
    assert second.text == "[" * 400
    third = await session.submit_turn("add")
    assert third.text == "3"


@pytest.mark.anyio
async def test_thinking_is_kept_when_the_repetition_is_cut() -> None:
    blocks = [ThinkingBlock(thinking="plan", signature="sig"), TextBlock(text="Sure: " + "ha" * 300)]
    runaway = AssistantMessage(content=blocks, stop_reason=StopReason.MAX_TOKENS)
    model = ScriptedProvider([runaway, "Done."])
    session = session_for(model)
    assert (await session.submit_turn("laugh")).text == "Done."
    first = next(m.message for m in session.messages if isinstance(m, AssistantReply))
    assert first.thinking[0].signature == "sig"
    assert first.text == "Sure: ha"


def test_config_refuses_an_unknown_action() -> None:
    with pytest.raises(ValueError, match="runaway_action"):
        AgentConfig(runaway_action="maybe")  # type: ignore[arg-type]
