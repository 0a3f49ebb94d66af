"""``AgentConfig.max_tool_calls``: calls counted one by one, not by round; the calls past the cap
not run; the answer given without tools and ending with a notice to the user (seed 004)."""

from __future__ import annotations

import pytest

from agcore.agent import (
    AgentBuilder,
    AgentConfig,
    AgentSession,
    BasicAgent,
    Capability,
    TextDelta,
    ToolResults,
    tool_calls_notice,
)
from agcore.agent.capability import CallModel, Next, Reply, TurnView
from agcore.testing import ScriptedProvider, tool_call_reply, tool_calls_reply

from .test_loop_basic import add

pytestmark = pytest.mark.anyio


def session_for(model: ScriptedProvider, **config: object) -> AgentSession:
    bundle = AgentBuilder().provider(model).tools(add).config(**config).build()
    return AgentSession(BasicAgent("a", "You add."), "s1", bundle)


def results_of(session: AgentSession) -> list[tuple[str, bool]]:
    return [(r.text, r.is_error) for m in session.messages if isinstance(m, ToolResults) for r in m.results]


async def test_calls_past_the_cap_are_not_run_and_the_answer_carries_a_notice() -> None:
    model = ScriptedProvider([
        tool_calls_reply([("add", {"a": 1, "b": 1}), ("add", {"a": 2, "b": 2}), ("add", {"a": 3, "b": 3})]),
        "Sums so far: 2 and 4.",
    ])
    session = session_for(model, max_tool_calls=2)
    result = await session.submit_turn("add three pairs")
    assert result.stop == "done"
    assert result.text == "Sums so far: 2 and 4.\n\n" + tool_calls_notice(2)
    assert "[Stopped after 2 tool calls" in result.text
    texts = results_of(session)
    assert texts[:2] == [("2", False), ("4", False)]
    assert "limit of 2 tool calls" in texts[2][0]
    assert texts[2][1] is True
    assert model.requests[1].tools == []  # the answer is asked for without tools


async def test_the_cap_counts_calls_across_rounds_not_rounds() -> None:
    replies: list[object] = [tool_call_reply("add", {"a": i, "b": 0}) for i in range(4)]
    model = ScriptedProvider([*replies, "Done adding."])
    session = session_for(model, max_tool_calls=3)
    result = await session.submit_turn("keep adding")
    ran = [text for text, error in results_of(session) if not error]
    assert ran == ["0", "1", "2"]
    assert result.text.endswith(tool_calls_notice(3))
    assert result.turns == 5


async def test_no_cap_no_notice_and_a_turn_under_the_cap_is_untouched() -> None:
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), "3"])
    assert (await session_for(model).submit_turn("add")).text == "3"
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 2}), "3",
                              tool_call_reply("add", {"a": 5, "b": 5}), "10"])
    capped = session_for(model, max_tool_calls=1)
    assert (await capped.submit_turn("add")).text == "3"  # one call, the cap not passed
    assert (await capped.submit_turn("again")).text == "10"  # a new turn counts afresh


async def test_the_notice_is_streamed_last() -> None:
    model = ScriptedProvider([tool_calls_reply([("add", {"a": 1, "b": 1}), ("add", {"a": 1, "b": 2})]),
                              "Only the first."])
    session = session_for(model, max_tool_calls=1)
    deltas = [e.text async for e in session.stream_turn("add twice") if isinstance(e, TextDelta)]
    assert "".join(deltas) == "Only the first.\n\n" + tool_calls_notice(1)
    assert session.last_result is not None
    assert session.last_result.text == "Only the first.\n\n" + tool_calls_notice(1)


async def test_config_refuses_a_cap_below_one() -> None:
    with pytest.raises(ValueError, match="max_tool_calls"):
        AgentConfig(max_tool_calls=0)


class _AskOnceMore(Capability):
    """A capability listed after the cap that sends the first answer back (as a failing acceptance
    check does)."""

    async def before_finish(self, steps: TurnView, reply: Reply) -> Next | None:
        if steps.turn.capabilities.get("asked"):
            return None
        steps.turn.capabilities["asked"] = True
        return CallModel()


async def test_an_answer_sent_back_after_the_notice_carries_it_once() -> None:
    model = ScriptedProvider([
        tool_calls_reply([("add", {"a": 1, "b": 1}), ("add", {"a": 2, "b": 2})]),
        "First answer.",
        "Second answer.",
    ])
    bundle = (AgentBuilder().provider(model).tools(add).config(max_tool_calls=1)
              .capabilities(_AskOnceMore()).build())
    result = await AgentSession(BasicAgent("a", "You add."), "s1", bundle).submit_turn("add two pairs")
    assert result.stop == "done"
    assert result.text.count("[Stopped after 1 tool call") == 1
    assert result.text.endswith(tool_calls_notice(1))
