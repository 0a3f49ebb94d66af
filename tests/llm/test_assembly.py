"""Stream assembly: the events a provider yields must rebuild exactly the message it describes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agcore.llm._assembly import StreamAssembler, message_to_events
from agcore.llm.events import DoneEvent, TextDelta, TextStart, ToolCallStart, UsageEvent
from agcore.llm.types import AssistantMessage, TextBlock, ToolUseBlock, Usage
from tests.llm.strategies import assistant_messages


@settings(max_examples=80, deadline=None)
@given(message=assistant_messages, chunk=st.integers(1, 30))
def test_assembling_the_events_of_a_message_gives_it_back(message: AssistantMessage, chunk: int) -> None:
    assembler = StreamAssembler()
    events = list(message_to_events(message, chunk_size=chunk))
    for event in events:
        assembler.feed(event)
    rebuilt = assembler.message(stop_reason=message.stop_reason, model=message.model,
                                provider=message.provider)
    assert rebuilt == message
    assert isinstance(events[-1], DoneEvent)
    assert events[-1].message == message


def test_partial_message_keeps_streamed_text_but_not_unfinished_tool_calls() -> None:
    assembler = StreamAssembler()
    for event in (
        TextStart(index=0),
        TextDelta(index=0, text="Hello, "),
        TextDelta(index=0, text="wor"),
        ToolCallStart(index=1, id="t1", name="ls"),
        UsageEvent(usage=Usage(input_tokens=5)),
    ):
        assembler.feed(event)
    partial = assembler.message(stop_reason=None, model="m", provider="p", partial=True)
    assert partial.content == [TextBlock(text="Hello, wor")]
    assert partial.usage == Usage(input_tokens=5)
    complete = assembler.message(stop_reason=None, model="m", provider="p")
    assert complete.content == []


def test_usage_event_replaces_rather_than_adds() -> None:
    assembler = StreamAssembler()
    assembler.feed(UsageEvent(usage=Usage(input_tokens=5, output_tokens=1)))
    assembler.feed(UsageEvent(usage=Usage(input_tokens=5, output_tokens=9)))
    assert assembler.usage == Usage(input_tokens=5, output_tokens=9)


def test_events_of_a_tool_call_carry_the_arguments_json() -> None:
    message = AssistantMessage(content=[ToolUseBlock(id="t", name="f", input={"path": "a.txt"})])
    deltas = "".join(getattr(e, "arguments", "") for e in message_to_events(message, chunk_size=3))
    assert deltas == '{"path": "a.txt"}'
