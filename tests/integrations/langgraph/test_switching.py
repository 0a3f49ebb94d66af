"""Switching backends in one line: ``AgentBuilder().backend("langgraph")`` and ``open_session``.

LangGraph runs on asyncio only, so this module runs on asyncio only (not on trio).
"""

from __future__ import annotations

import pytest

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, ConfigError, backend_names, open_session
from agcore.integrations.langgraph import GraphSession
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import tool

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@tool
def shout(text: str) -> str:
    """Shout."""
    return text.upper()


def build(backend: str | None) -> AgentBuilder:
    builder = AgentBuilder().provider(ScriptedProvider([tool_call_reply("shout", {"text": "hi"}), "HI"]))
    builder.tools(shout)
    return builder.backend(backend) if backend is not None else builder


@pytest.mark.parametrize("backend", [None, "loop", "langgraph"])
async def test_one_line_picks_the_backend_and_the_turn_is_the_same(backend: str | None) -> None:
    bundle = build(backend).build()
    session = open_session(BasicAgent(name="a", system_prompt="s"), "s1", bundle)
    assert isinstance(session, GraphSession if backend == "langgraph" else AgentSession)
    result = await session.submit_turn("shout hi")
    assert result.stop == "done"
    assert result.text == "HI"
    assert [m.kind for m in session.messages] == ["user", "assistant", "tool_results", "assistant"]
    await session.close()


def test_the_installed_backends_are_listed() -> None:
    assert backend_names()[:1] == ["loop"]
    assert "langgraph" in backend_names()


def test_an_unknown_backend_fails_at_build_with_what_to_do() -> None:
    with pytest.raises(ConfigError, match="No session backend named 'temporal'") as caught:
        build("temporal").build()
    assert caught.value.piece == "backend"
    assert "pip install 'agcore[langgraph]'" in str(caught.value)
