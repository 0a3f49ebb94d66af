"""``AgentMessage`` kinds, ``convert_to_llm()`` (what the model sees) and the JSON round trip."""

from __future__ import annotations

import itertools
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agcore.agent import (
    AgentMessage,
    AssistantReply,
    ContextNote,
    Summary,
    SystemEvent,
    ToolLog,
    ToolResults,
    UserInput,
    convert_to_llm,
    messages_from_json,
    messages_to_json,
)
from agcore.llm.types import (
    AssistantMessage,
    ImageBlock,
    StopReason,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from tests.llm.strategies import assistant_messages, images, text, text_blocks, tool_results

CALL = ToolUseBlock(id="call_1", name="read_file", input={"path": "a.txt"})
RESULT = ToolResultBlock(tool_use_id="call_1", content="hello")


def test_every_kind_converts_as_documented() -> None:
    reply = AssistantMessage(content=[TextBlock(text="Reading."), CALL], model="m", provider="p")
    history: list[AgentMessage] = [
        SystemEvent(text="credits low", data={"left": 3}),
        UserInput(content="read a.txt"),
        AssistantReply(message=reply),
        ToolLog(text="opened a.txt", tool_use_id="call_1", tool_name="read_file"),
        ToolResults(results=[RESULT]),
        AssistantReply(message=AssistantMessage(content=[TextBlock(text="It says hello.")])),
        Summary(text="the user asked about a.txt"),
        ContextNote(text="switched to a smaller model"),
        UserInput(content="thanks"),
    ]
    assert convert_to_llm(history) == [
        UserMessage(content="read a.txt"),
        reply,
        UserMessage(content=[RESULT]),
        AssistantMessage(content=[TextBlock(text="It says hello.")]),
        UserMessage(
            content=[
                TextBlock(text="<conversation_summary>\nthe user asked about a.txt\n</conversation_summary>"),
                TextBlock(text="<context_note>\nswitched to a smaller model\n</context_note>"),
                TextBlock(text="thanks"),
            ]
        ),
    ]


def test_assistant_messages_are_passed_through_not_copied() -> None:
    reply = AssistantMessage(content=[TextBlock(text="hi")], model="m", provider="p")
    converted = convert_to_llm([UserInput(content="hello"), AssistantReply(message=reply)])
    assert converted[1] is reply


def test_converting_again_reuses_the_user_messages_without_changing_the_items() -> None:
    question = UserInput(content="q")
    results = ToolResults(results=[RESULT])
    history: list[AgentMessage] = [
        question, AssistantReply(message=AssistantMessage(content=[CALL])), results
    ]
    first, second = convert_to_llm(history), convert_to_llm(history)
    assert first == second
    assert first[0] is second[0]
    assert first[2] is second[2]
    copy = messages_from_json(messages_to_json(history))
    assert copy == history
    assert b"_llm" not in messages_to_json(history)
    assert question.model_dump() == copy[0].model_dump()


def test_tool_results_come_first_in_a_merged_user_message() -> None:
    # Anthropic rejects a user message where text precedes the tool results.
    image = ImageBlock(media_type="image/png", data="iVBORw0KGgo=")
    history: list[AgentMessage] = [
        UserInput(content="go"),
        AssistantReply(message=AssistantMessage(content=[CALL])),
        ContextNote(text="note"),
        UserInput(content=[TextBlock(text="steer"), image]),
        ToolResults(results=[RESULT]),
    ]
    last = convert_to_llm(history)[-1]
    assert isinstance(last, UserMessage)
    assert last.content == [
        RESULT,
        TextBlock(text="<context_note>\nnote\n</context_note>"),
        TextBlock(text="steer"),
        image,
    ]


def test_replies_with_nothing_user_side_between_them_are_joined() -> None:
    first = AssistantMessage(content=[TextBlock(text="part one")], usage=Usage(output_tokens=5),
                             model="a", provider="x", stop_reason=StopReason.MAX_TOKENS)
    second = AssistantMessage(content=[TextBlock(text="part two")], usage=Usage(output_tokens=7),
                              model="b", provider="y", stop_reason=StopReason.END_TURN)
    converted = convert_to_llm([
        UserInput(content="q"),
        AssistantReply(message=first),
        SystemEvent(text="hidden"),
        ToolResults(results=[]),
        AssistantReply(message=second),
    ])
    assert len(converted) == 2
    joined = converted[1]
    assert isinstance(joined, AssistantMessage)
    assert joined.content == [TextBlock(text="part one"), TextBlock(text="part two")]
    assert (joined.model, joined.provider, joined.stop_reason) == ("b", "y", StopReason.END_TURN)
    assert joined.usage.output_tokens == 12


def test_empty_replies_and_hidden_kinds_are_dropped() -> None:
    converted = convert_to_llm([
        UserInput(content="a"),
        AssistantReply(message=AssistantMessage(content=[])),
        ToolLog(text="progress"),
        UserInput(content="b"),
    ])
    assert converted == [UserMessage(content=[TextBlock(text="a"), TextBlock(text="b")])]
    assert convert_to_llm([SystemEvent(text="x"), ToolLog(text="y")]) == []
    assert convert_to_llm([]) == []


def test_user_input_of_and_text() -> None:
    assert UserInput.of("hi").content == "hi"
    blocks = UserMessage(content=[TextBlock(text="a"), TextBlock(text="b")])
    assert UserInput.of(blocks).text == "ab"
    existing = UserInput(content="x")
    assert UserInput.of(existing) is existing


def test_every_message_has_an_id_and_a_creation_time() -> None:
    a, b = UserInput(content="x"), UserInput(content="x")
    assert a.id != b.id
    assert isinstance(a.created_at, datetime)
    assert a.created_at.tzinfo is not None


def test_unknown_kind_is_rejected_when_loading() -> None:
    with pytest.raises(ValidationError):
        messages_from_json(b'[{"kind": "telepathy", "text": "?"}]')


def test_messages_are_frozen() -> None:
    note = ContextNote(text="x")
    with pytest.raises(ValidationError):
        note.text = "y"  # type: ignore[misc]


# ---------------------------------------------------------------------------------- properties

# Text that must never reach the model: unique markers no other strategy produces.
HIDDEN = st.uuids().map(lambda u: f"hidden-{u}")

user_inputs = st.builds(UserInput, content=text | st.lists(text_blocks | images, min_size=1, max_size=3))
replies = st.builds(AssistantReply, message=assistant_messages)
empty_replies = st.builds(AssistantReply, message=st.builds(AssistantMessage, content=st.just([])))
results_msgs = st.builds(ToolResults, results=st.lists(tool_results, max_size=3))
summaries = st.builds(Summary, text=text)
notes = st.builds(ContextNote, text=text)
hidden = st.builds(SystemEvent, text=HIDDEN) | st.builds(ToolLog, text=HIDDEN, tool_name=st.just("t"))
nonempty_results = st.builds(ToolResults, results=st.lists(tool_results, min_size=1, max_size=3))
user_side = user_inputs | results_msgs | summaries | notes
any_message = user_side | replies | empty_replies | hidden
histories = st.lists(any_message, max_size=14)


def _visible_texts(message: UserMessage | AssistantMessage) -> list[str]:
    if isinstance(message.content, str):
        return [message.content]
    texts = []
    for block in message.content:
        if isinstance(block, TextBlock | ToolResultBlock):
            texts.append(block.text)
    return texts


@settings(max_examples=50, deadline=None)
@given(
    first=user_inputs | summaries | notes | nonempty_results,
    rest=histories,
    lead=st.lists(hidden, max_size=2),
)
def test_conversion_alternates_roles_and_starts_with_the_user(
    first: AgentMessage, rest: list[AgentMessage], lead: list[AgentMessage]
) -> None:
    history = [*lead, first, *rest]
    converted = convert_to_llm(history)
    assert converted
    assert converted[0].role == "user"
    for before, after in itertools.pairwise(converted):
        assert before.role != after.role
    for message in converted:
        assert message.content  # nothing empty is sent
        assert not any("hidden-" in t for t in _visible_texts(message))


@settings(max_examples=50, deadline=None)
@given(history=histories)
def test_conversion_keeps_every_visible_block(history: list[AgentMessage]) -> None:
    converted = convert_to_llm(history)
    for before, after in itertools.pairwise(converted):
        assert before.role != after.role
    sent_results = [b for m in converted if isinstance(m, UserMessage) for b in m.tool_results]
    given_results = [r for m in history if isinstance(m, ToolResults) for r in m.results]
    assert sent_results == given_results
    sent_calls = [c for m in converted if isinstance(m, AssistantMessage) for c in m.tool_calls]
    given_calls = [c for m in history if isinstance(m, AssistantReply) for c in m.message.tool_calls]
    assert sent_calls == given_calls


@settings(max_examples=50, deadline=None)
@given(history=histories)
def test_json_round_trip(history: list[AgentMessage]) -> None:
    data = messages_to_json(history)
    loaded = messages_from_json(data)
    assert loaded == history
    assert [type(m) for m in loaded] == [type(m) for m in history]
    assert convert_to_llm(loaded) == convert_to_llm(history)
