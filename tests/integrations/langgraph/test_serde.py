"""The graph's checkpoint serializer: agcore's messages and models written as agcore's own JSON,
read back as the same typed values; anything else, and checkpoints written before, as LangGraph's."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from agcore.agent import (
    AssistantReply,
    ContextNote,
    Summary,
    SystemEvent,
    ToolLog,
    ToolResults,
    UserInput,
)
from agcore.integrations.langgraph import AgentSerializer, serde_allowlist, typed_checkpointer
from agcore.integrations.langgraph._serde import MESSAGES_TYPE, MODEL_TYPE_PREFIX
from agcore.llm.types import (
    AssistantMessage,
    ImageBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)


def _serializer() -> AgentSerializer:
    return AgentSerializer(allowed_msgpack_modules=sorted(serde_allowlist()))


def _history() -> list:  # type: ignore[type-arg]
    call = ToolUseBlock(id="c1", name="read_file", input={"path": "a.py", "lines": [1, 2]})
    return [
        UserInput(content=[TextBlock(text="what is in it?"),
                           ImageBlock(media_type="image/png", data="aGk=")]),
        AssistantReply(message=AssistantMessage(
            content=[ThinkingBlock(thinking="look", signature="sig"), TextBlock(text="reading"), call],
            stop_reason=StopReason.TOOL_USE, usage=Usage(input_tokens=12, output_tokens=3), model="m",
        )),
        ToolLog(text="opened", tool_use_id="c1", tool_name="read_file", fraction=0.5),
        ToolResults(results=[ToolResultBlock(tool_use_id="c1", content="x = 1", is_error=False)]),
        ContextNote(text="a note"),
        Summary(text="so far"),
        SystemEvent(text="switched", data={"from": "a", "to": ["b", 1]}),
    ]


def test_a_history_of_every_kind_is_written_as_agcore_json_and_read_back_typed() -> None:
    serde = _serializer()
    history = _history()
    tag, data = serde.dumps_typed(history)
    assert tag == MESSAGES_TYPE
    assert data.startswith(b"[{")  # JSON, the SessionStore format
    loaded = serde.loads_typed((tag, data))
    assert loaded == history
    assert [type(m) for m in loaded] == [type(m) for m in history]


def test_an_agcore_model_alone_is_its_json_and_reads_back_as_its_class() -> None:
    serde = _serializer()
    message = UserMessage(content="weather?")
    tag, data = serde.dumps_typed(message)
    assert tag == f"{MODEL_TYPE_PREFIX}agcore.llm.types:UserMessage"
    assert serde.loads_typed((tag, data)) == message


def test_other_values_and_checkpoints_written_before_go_through_langgraphs_serializer() -> None:
    serde = _serializer()
    outcome = {"c1": {"result": ToolResultBlock(tool_use_id="c1", content="ok"), "status": "ok"}}
    tag, data = serde.dumps_typed(outcome)
    assert tag == "msgpack"
    assert serde.loads_typed((tag, data)) == outcome
    assert serde.dumps_typed(None) == ("null", b"")
    assert serde.dumps_typed([]) [0] == "msgpack"  # an empty list is not a history
    mixed = [UserInput(content="hi"), {"role": "user"}]
    assert serde.dumps_typed(mixed)[0] == "msgpack"
    old = JsonPlusSerializer(allowed_msgpack_modules=sorted(serde_allowlist()))
    history = _history()
    assert serde.loads_typed(old.dumps_typed(history)) == history


def test_a_free_form_value_json_cannot_hold_falls_back_to_langgraphs_serializer() -> None:
    serde = _serializer()
    odd = [SystemEvent(text="odd", data={"raw": b"\xff\x00"})]  # bytes that are not UTF-8
    tag, data = serde.dumps_typed(odd)
    assert tag == "msgpack"
    assert serde.loads_typed((tag, data))[0].data["raw"] == b"\xff\x00"


def test_a_tag_naming_a_class_outside_the_state_types_is_refused() -> None:
    serde = _serializer()
    with pytest.raises(ValueError, match="not one of agcore's state types"):
        serde.loads_typed((f"{MODEL_TYPE_PREFIX}os:Popen", b"{}"))


def test_typed_checkpointer_puts_it_on_a_stock_saver_and_keeps_a_custom_one() -> None:
    saver = InMemorySaver()
    typed = typed_checkpointer(saver)
    assert isinstance(typed.serde, AgentSerializer)
    assert type(saver.serde) is JsonPlusSerializer  # the caller's saver is unchanged
    assert typed_checkpointer(typed).serde is typed.serde  # typing twice changes nothing
    custom = InMemorySaver(serde=JsonPlusSerializer(pickle_fallback=True))
    assert not isinstance(typed_checkpointer(custom).serde, AgentSerializer)
