"""A re-ask is never invisible: whenever the model is asked again instead of its reply ending the turn
(a reply that is no answer, a capability's ``CallModel``, a reply marked ``ask_again``), the turn's
stream carries one ``AskedAgain`` saying why and which capability asked. Real sessions on scripted
providers, asyncio and trio."""

from __future__ import annotations

import pytest

from agcore.agent import (
    AgentBuilder,
    AgentEvent,
    AgentEventAdapter,
    AgentSession,
    AskedAgain,
    BasicAgent,
    TurnEnded,
    TurnStarted,
)
from agcore.agent.capability import CallModel, Capability, ModelCall, Next, Reply, TurnView
from agcore.testing import ScriptedProvider

pytestmark = pytest.mark.anyio


class SecondLook(Capability):
    """Asks again once per turn, saying why (``why``) or not (blank)."""

    def __init__(self, why: str) -> None:
        self.why = why

    async def before_finish(self, steps: TurnView, reply: Reply) -> Next | None:
        if steps.turn.capabilities.get("second_look"):
            return None
        steps.turn.capabilities["second_look"] = True
        return CallModel(why=self.why)


class MarksTooShort(Capability):
    """Marks a reply of fewer than three words to be asked again, as a reply-reading capability does."""

    async def read_reply(self, steps: TurnView, call: ModelCall, reply: Reply) -> None:
        if len(reply.message.text.split()) < 3:
            reply.notes.append("Answer in a full sentence.")
            reply.ask_again = True
            reply.why = "the reply was too short"


async def events_of(model: ScriptedProvider, *capabilities: Capability) -> list[AgentEvent]:
    bundle = AgentBuilder().provider(model).capabilities(*capabilities).build()
    session = AgentSession(BasicAgent(name="t", system_prompt="Be brief."), "s1", bundle)
    events = [event async for event in session.stream_turn("what is 2 + 3?")]
    assert session.last_result is not None
    assert session.last_result.stop == "done"
    return events


def asked(events: list[AgentEvent]) -> list[AskedAgain]:
    return [event for event in events if isinstance(event, AskedAgain)]


def between_the_calls(events: list[AgentEvent], event: AgentEvent) -> bool:
    """Whether ``event`` comes after the first model call ended and before the second started."""
    starts = [i for i, e in enumerate(events) if isinstance(e, TurnStarted)]
    first_end = next(i for i, e in enumerate(events) if isinstance(e, TurnEnded))
    return first_end < events.index(event) < starts[1]


async def test_a_reply_that_is_no_answer_is_reported_as_asked_again() -> None:
    events = await events_of(ScriptedProvider(["", "2 + 3 is 5."]))
    (event,) = asked(events)
    assert event == AskedAgain(why="the reply was empty", by="AnswerRequired")
    assert between_the_calls(events, event)
    assert AgentEventAdapter.validate_json(event.model_dump_json()) == event  # serialisable as every event


async def test_a_capability_asking_again_is_reported_with_its_reason_and_name() -> None:
    events = await events_of(ScriptedProvider(["5.", "2 + 3 is 5."]), SecondLook("a second look"))
    (event,) = asked(events)
    assert event == AskedAgain(why="a second look", by="SecondLook")
    assert between_the_calls(events, event)


async def test_a_capability_that_gives_no_reason_is_still_named() -> None:
    events = await events_of(ScriptedProvider(["5.", "2 + 3 is 5."]), SecondLook(""))
    assert asked(events) == [AskedAgain(why="", by="SecondLook")]


async def test_a_reply_marked_ask_again_is_reported_with_the_replys_why() -> None:
    events = await events_of(ScriptedProvider(["5.", "2 + 3 is 5."]), MarksTooShort())
    (event,) = asked(events)
    assert event == AskedAgain(why="the reply was too short", by="")
    assert between_the_calls(events, event)


async def test_an_answer_accepted_at_once_reports_no_re_ask() -> None:
    assert asked(await events_of(ScriptedProvider(["2 + 3 is 5."]), MarksTooShort())) == []
