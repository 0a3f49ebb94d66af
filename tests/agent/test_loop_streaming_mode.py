"""``AgentConfig.streaming``: submit_turn makes one complete() call per model turn unless told to
stream; stream_turn streams; both give the same history."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Literal

import pytest

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, TextDelta, convert_to_llm
from agcore.llm import LLMRequest, LLMResponse, OverloadedError, StreamEvent
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import tool

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class CountingProvider(ScriptedProvider):
    def __init__(self) -> None:
        super().__init__([tool_call_reply("add", {"a": 2, "b": 3}), "The sum is 5."])
        self.completed = 0
        self.streamed = 0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.completed += 1
        return await super().complete(request)

    def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        self.streamed += 1
        return super().stream(request)


def session_for(provider: CountingProvider, streaming: Literal["auto", "always", "never"]) -> AgentSession:
    bundle = AgentBuilder().provider(provider).tools(add).config(streaming=streaming).build()
    return AgentSession(BasicAgent(name="calc"), "s", bundle)


@pytest.mark.parametrize(
    ("mode", "completed", "streamed"), [("auto", 2, 0), ("always", 0, 2), ("never", 2, 0)]
)
async def test_submit_turn_calls_the_model_as_configured(
    mode: Literal["auto", "always", "never"], completed: int, streamed: int
) -> None:
    provider = CountingProvider()
    result = await session_for(provider, mode).submit_turn("2 + 3?")
    assert result.text == "The sum is 5."
    assert (provider.completed, provider.streamed) == (completed, streamed)


async def test_stream_turn_streams_unless_told_never() -> None:
    streaming, plain = CountingProvider(), CountingProvider()
    streamed_session, plain_session = session_for(streaming, "auto"), session_for(plain, "never")
    deltas = [e.text async for e in streamed_session.stream_turn("2 + 3?") if isinstance(e, TextDelta)]
    whole = [e.text async for e in plain_session.stream_turn("2 + 3?") if isinstance(e, TextDelta)]
    assert (streaming.streamed, streaming.completed) == (2, 0)
    assert (plain.streamed, plain.completed) == (0, 2)
    assert len(deltas) > 1  # token by token
    assert whole == ["The sum is 5."]  # one delta per reply
    assert "".join(deltas) == "The sum is 5."
    def shape(session: AgentSession) -> list[tuple[str, str, list[tuple[str, dict[str, object]]]]]:
        return [(m.role, m.text if m.role == "assistant" else "", [(c.name, c.input) for c in m.tool_calls]
                 if m.role == "assistant" else []) for m in convert_to_llm(session.messages)]

    assert shape(streamed_session) == shape(plain_session)  # the same history (call ids aside)


async def test_a_failed_complete_call_ends_the_turn_like_a_failed_stream() -> None:
    provider = ScriptedProvider([OverloadedError("busy")])
    bundle = AgentBuilder().provider(provider).build()
    result = await AgentSession(BasicAgent(name="x"), "s", bundle).submit_turn("hi")
    assert result.stop == "error"
    assert result.error is not None
    assert result.error.is_recoverable()
    assert "busy" in str(result.error)
