"""What a continue-as-new carries of a long session (``carried_messages``): everything under the
budget; over it, the newest whole turns that fit behind a note that counts what was left behind."""

from __future__ import annotations

import pytest

from agcore.agent import AgentMessage, AssistantReply, SystemEvent, ToolResults, UserInput
from agcore.integrations.temporal import OMITTED_KEY, carried_messages
from agcore.llm.types import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock


def _turn(i: int, padding: int = 200) -> list[AgentMessage]:
    call = ToolUseBlock(id=f"call-{i}", name="echo", input={"text": "x" * padding})
    return [
        UserInput(content=f"turn {i}"),
        AssistantReply(message=AssistantMessage(content=[call])),
        ToolResults(results=[ToolResultBlock(tool_use_id=call.id, content="echoed")]),
        AssistantReply(message=AssistantMessage(content=[TextBlock(text=f"done {i}")])),
    ]


def _texts(turns: int, padding: int = 200) -> list[str]:
    return [m.model_dump_json() for i in range(turns) for m in _turn(i, padding)]


def _parsed(texts: list[str]) -> list[AgentMessage]:
    from pydantic import TypeAdapter

    adapter: TypeAdapter[AgentMessage] = TypeAdapter(AgentMessage)
    return [adapter.validate_json(text) for text in texts]


def test_a_session_under_the_budget_is_carried_whole() -> None:
    texts = _texts(5)
    assert carried_messages(texts, sum(map(len, texts)), workflow_id="s") == texts
    assert carried_messages(texts, None, workflow_id="s") == texts


def test_over_the_budget_the_newest_whole_turns_are_carried_behind_a_note() -> None:
    texts = _texts(40)
    budget = 10_000
    carried = carried_messages(texts, budget, workflow_id="s-1")
    assert sum(map(len, carried)) <= budget
    note, *rest = _parsed(carried)
    assert isinstance(note, SystemEvent)
    omitted = note.data[OMITTED_KEY]
    assert omitted + len(rest) == len(texts)
    assert carried[1:] == texts[omitted:]  # the newest messages, unchanged
    assert isinstance(rest[0], UserInput)  # a whole turn: no tool result without its call
    assert "'s-1'" in note.text
    assert "max_snapshot_bytes" in note.text
    assert note.data["first_carried"] == rest[0].id


def test_a_second_cut_counts_every_message_left_behind_in_all() -> None:
    texts = _texts(40)
    first = carried_messages(texts, 10_000, workflow_id="s")
    grown = first + _texts(20)
    second = carried_messages(grown, 10_000, workflow_id="s")
    note, *rest = _parsed(second)
    assert isinstance(note, SystemEvent)
    assert note.data[OMITTED_KEY] + len(rest) == len(texts) + 4 * 20  # the old note is not a message
    assert sum(isinstance(m, SystemEvent) for m in rest) == 0


def test_a_turn_still_waiting_for_its_tool_results_is_never_cut() -> None:
    texts = _texts(30)
    call = ToolUseBlock(id="open", name="ask_user", input={"question": "?" * 3000})
    paused = [UserInput(content="ask me"), AssistantReply(message=AssistantMessage(content=[call]))]
    carried = carried_messages(texts + [m.model_dump_json() for m in paused], 4_000, workflow_id="s")
    assert [type(m) for m in _parsed(carried)] == [SystemEvent, UserInput, AssistantReply]


@pytest.mark.parametrize("padding", [5_000])
def test_one_turn_over_the_budget_is_still_carried(padding: int) -> None:
    texts = _texts(3, padding)
    carried = carried_messages(texts, 2_000, workflow_id="s")
    assert carried[1:] == texts[-4:]  # the last turn, whatever its size: the session goes on
