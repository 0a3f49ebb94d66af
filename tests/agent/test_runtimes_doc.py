"""docs/runtimes.md's examples, run as the page shows them: the worked runtime drives a real turn
with a tool, and the capability written outside agcore stops a runaway reply (and only that)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, LimitExceeded
from agcore.llm.types import UserMessage
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import tool

from .test_loop_basic import assert_history_valid

pytestmark = pytest.mark.anyio

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtimes.md"


def _page() -> dict[str, Any]:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 3, "the page's examples changed: run the new ones here too"
    namespace: dict[str, Any] = {"AgentBuilder": AgentBuilder}
    for index, code in enumerate(blocks[:2]):
        exec(compile(code, f"{DOC}:block{index + 1}", "exec"), namespace)
    return namespace


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def test_the_worked_runtime_runs_a_turn_with_a_tool() -> None:
    run_turn = _page()["run_turn"]
    model = ScriptedProvider([tool_call_reply("add", {"a": 2, "b": 3}, id="c1"), "5"])
    session = AgentSession(BasicAgent(name="t"), "s", AgentBuilder().provider(model).tools(add).build())
    result = await run_turn(session, UserMessage(content="2+3?"))
    assert result.stop == "done"
    assert result.text == "5"
    assert [m.kind for m in session.messages] == ["user", "assistant", "tool_results", "assistant"]
    assert_history_valid(session)


def _session(*replies: Any) -> AgentSession:
    capability = _page()["StopRunawayReplies"]()
    bundle = (AgentBuilder().provider(ScriptedProvider(list(replies))).tools(add)
              .capabilities(capability).build())
    return AgentSession(BasicAgent(name="t"), "s", bundle)


async def test_the_capability_stops_a_runaway_reply_and_keeps_the_session() -> None:
    session = _session("[" * 400, "fine now")
    result = await session.submit_turn("go")
    assert result.stop == "error"
    assert type(result.error).__name__ == "RunawayReply"
    assert "'[' 400 times" in str(result.error)
    assert result.error is not None
    assert result.error.is_recoverable()
    assert (await session.submit_turn("again")).text == "fine now"


async def test_the_capability_answers_the_calls_of_a_runaway_reply() -> None:
    runaway = tool_call_reply("add", {"a": 1, "b": 1}, id="c1", text="=" * 60)
    session = _session(runaway)
    result = await session.submit_turn("go")
    assert result.stop == "error"
    assert_history_valid(session)
    (answer,) = [r for m in session.messages if m.kind == "tool_results" for r in m.results]
    assert answer.is_error
    assert "ran away" in answer.text


async def test_the_capability_lets_ordinary_replies_through() -> None:
    session = _session(tool_call_reply("add", {"a": 1, "b": 1}, id="c1"), "2 — and 49 dashes: " + "-" * 49)
    result = await session.submit_turn("go")
    assert result.stop == "done"


async def test_a_capability_runs_after_agcores_own() -> None:
    # The limits (agcore's own) end a turn before a user's capability sees the next reply.
    capability = _page()["StopRunawayReplies"]()
    bundle = (AgentBuilder().provider(ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 1})] * 3))
              .tools(add).capabilities(capability).config(max_turns=1).build())
    result = await AgentSession(BasicAgent(name="t"), "s", bundle).submit_turn("go")
    assert isinstance(result.error, LimitExceeded)


def test_capabilities_refuses_what_is_not_one() -> None:
    with pytest.raises(TypeError, match=r"subclass agcore\.agent\.Capability"):
        AgentBuilder().capabilities(object())  # type: ignore[arg-type]


async def test_cancelled_worked_runtime_leaves_a_history_the_next_turn_repairs() -> None:
    run_turn = _page()["run_turn"]

    @tool
    async def slow() -> str:
        """Wait."""
        await anyio.sleep(10)
        return "late"

    model = ScriptedProvider([tool_call_reply("slow", {}, id="c1"), "after"])
    session = AgentSession(BasicAgent(name="t"), "s", AgentBuilder().provider(model).tools(slow).build())
    with anyio.move_on_after(0.2):
        await run_turn(session, UserMessage(content="go"))
    assert (await session.submit_turn("next")).text == "after"
    assert_history_valid(session)


def test_a_finish_that_fails_needs_its_error() -> None:
    from agcore.agent.capability import Finish

    with pytest.raises(ValueError, match="needs the error"):
        Finish("error")
    with pytest.raises(ValueError, match="needs the error"):
        Finish("limit")
    assert Finish("done").error is None


async def test_a_capabilitys_turn_state_is_kept_and_saved_with_the_turn() -> None:
    import json

    from agcore.agent import Capability, TurnState, UserInput
    from agcore.agent.capability import CallModel, Reply, TurnView

    class AtLeastTen(Capability):
        async def before_finish(self, steps: TurnView, reply: Reply) -> CallModel | None:
            asked = steps.turn.capabilities.get("asked", 0)
            if len(reply.message.text) >= 10 or asked >= 2:
                return None
            steps.turn.capabilities["asked"] = asked + 1
            await steps.record(UserInput(content="Answer in a full sentence."))
            return CallModel()

    model = ScriptedProvider(["ok", "fine", "A full sentence, at last."])
    bundle = AgentBuilder().provider(model).capabilities(AtLeastTen()).build()
    session = AgentSession(BasicAgent(name="t"), "s", bundle)
    result = await session.submit_turn("hi")
    assert result.text == "A full sentence, at last."
    assert result.turns == 3
    turn = TurnState(start=0)
    turn.capabilities["asked"] = 2
    assert TurnState.from_json(json.loads(json.dumps(turn.to_json())), 0).capabilities == {"asked": 2}


async def test_the_steps_start_takes_a_string() -> None:
    from agcore.agent.steps import TurnSteps

    bundle = AgentBuilder().provider(ScriptedProvider(["x"])).build()
    session = AgentSession(BasicAgent(name="t"), "s", bundle)
    await TurnSteps(session).start("hello")
    assert session.messages[0].text == "hello"
