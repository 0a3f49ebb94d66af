"""Typed final answers on the LangGraph backend: an agent's ``output_type`` types its graph turns as it
does ``AgentSession``'s (the final-answer tool, text answers, retries with the errors), with the same
history. LangGraph runs on asyncio only, so this module runs on asyncio only (not on trio)."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, OutputValidationError
from agcore.integrations.langgraph import GraphSession
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import tool

from .conftest import comparable

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Sum(BaseModel):
    total: int
    explanation: str


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


AGENT = BasicAgent("adder", system_prompt="You add.", output_type=Sum)


def script() -> list[Any]:
    return [
        tool_call_reply("add", {"a": 2, "b": 3}, id="call_add"),
        tool_call_reply("final_result", {"total": "five"}, id="call_final"),  # invalid: sent back
        '{"total": 5, "explanation": "2 + 3"}',  # a text answer holding the JSON is accepted too
    ]


async def test_the_graph_turn_ends_typed_with_the_loops_history() -> None:
    bundle = AgentBuilder().provider(ScriptedProvider(script())).tools(add).build()
    graph = GraphSession(AGENT, "t1", bundle, checkpointer=InMemorySaver())
    result = await graph.submit_turn("2 + 3?")
    assert result.ok, result.error
    assert result.output == Sum(total=5, explanation="2 + 3")
    loop = AgentSession(AGENT, "t1", AgentBuilder().provider(ScriptedProvider(script())).tools(add).build())
    same = await loop.submit_turn("2 + 3?")
    assert same.output == result.output
    assert comparable(graph.session.messages) == comparable(loop.messages)


async def test_retries_run_out_on_the_graph_as_in_the_loop() -> None:
    bad = tool_call_reply("final_result", {"total": 1})
    bundle = AgentBuilder().provider(ScriptedProvider([bad, bad, bad])).build()
    graph = GraphSession(AGENT, "t2", bundle, checkpointer=InMemorySaver())
    result = await graph.submit_turn("1?")
    assert result.stop == "error"
    assert isinstance(result.error, OutputValidationError)
    assert "explanation: Field required" in result.error.errors
