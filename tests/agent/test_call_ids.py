"""Tool-call ids a server repeats, within a reply or across replies (some OpenAI-compatible servers
number calls ``call_0``, ``call_1``... in every reply). Found by issue 17's fault campaign: two calls
with one id got one result twice (the other call's result lost: the model was handed the wrong data),
and the history then held duplicate ``tool_use`` ids, which Anthropic rejects on every later turn."""

from __future__ import annotations

import pytest

from agcore.agent import AssistantReply, ToolResults, convert_to_llm
from agcore.llm import LLMRequest, ToolUseBlock
from agcore.llm.providers._anthropic_wire import build_params
from agcore.testing import ScriptedProvider, tool_calls_reply
from agcore.tools import tool

from .test_loop_basic import assert_history_valid, make_session

pytestmark = pytest.mark.anyio


@tool
def lookup(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def calls(*cities: str) -> list[ToolUseBlock]:
    return [ToolUseBlock(id="call_0", name="lookup", input={"city": city}) for city in cities]


async def test_repeated_ids_get_their_own_results_and_a_history_every_vendor_takes() -> None:
    model = ScriptedProvider([tool_calls_reply(calls("Paris", "Rome")), "first",
                              tool_calls_reply(calls("Oslo")), "second"])
    session = make_session(model, lookup)
    assert (await session.submit_turn("go")).text == "first"
    assert (await session.submit_turn("again")).text == "second"
    replies = [m.message for m in session.messages if isinstance(m, AssistantReply) and m.message.tool_calls]
    ids = [c.id for reply in replies for c in reply.tool_calls]
    assert ids == ["call_0", "call_0_2", "call_0_3"]
    results = {r.tool_use_id: r.text
               for m in session.messages if isinstance(m, ToolResults) for r in m.results}
    assert results == {"call_0": "sunny in Paris", "call_0_2": "sunny in Rome", "call_0_3": "sunny in Oslo"}
    assert_history_valid(session)
    body = build_params(LLMRequest.build(convert_to_llm(session.messages)), model="m", max_tokens=10,
                        prompt_caching=False)
    sent = [b["id"] for m in body["messages"] for b in m["content"] if b["type"] == "tool_use"]
    assert len(sent) == len(set(sent)) == 3


async def test_unique_ids_are_left_as_they_are() -> None:
    reply = tool_calls_reply([ToolUseBlock(id="a", name="lookup", input={"city": "Paris"}),
                              ToolUseBlock(id="b", name="lookup", input={"city": "Rome"})])
    session = make_session(ScriptedProvider([reply, "done"]), lookup)
    await session.submit_turn("go")
    recorded = next(m.message for m in session.messages if isinstance(m, AssistantReply))
    assert [c.id for c in recorded.tool_calls] == ["a", "b"]
