"""Acceptance checks on a LangGraph ``GraphSession``: the steps are shared, so the capability that
checks the in-process loop's answers checks the graph's too. LangGraph runs on asyncio only."""

from __future__ import annotations

from pathlib import Path

import pytest

from agcore.agent import AcceptanceChecks, AgentBuilder, BasicAgent, ChecksFailed, check_report, open_session
from agcore.integrations.langgraph import GraphSession
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools.workspace import Workspace

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_failing_check_sends_the_graph_back_to_the_model_until_it_passes(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, confirm_commands=False, confirm_writes=False)
    provider = ScriptedProvider([
        "done",  # nothing written: the check fails and the graph asks again
        tool_call_reply("write_file", {"path": "answer.txt", "content": "42\n"}),
        "done now",
    ])
    bundle = (AgentBuilder().provider(provider).tools(workspace.tools()).backend("langgraph")
              .capabilities(AcceptanceChecks(workspace, ["grep -qx 42 answer.txt"])).build())
    session = open_session(BasicAgent(name="coder", system_prompt="You code."), "g1", bundle)
    assert isinstance(session, GraphSession)
    result = await session.submit_turn("write 42 to answer.txt")
    assert result.stop == "done", result.error
    report = check_report(result)
    assert report is not None
    assert report.passed
    assert report.rounds == 2
    assert (tmp_path / "answer.txt").read_text() == "42\n"
    await session.close()


async def test_a_check_failing_every_round_fails_the_graphs_turn(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, confirm_commands=False, confirm_writes=False)
    # the second "done", with nothing changed since the failure, is asked for the change once
    bundle = (AgentBuilder().provider(ScriptedProvider(["done", "done", "done"])).backend("langgraph")
              .capabilities(AcceptanceChecks(workspace, ["false"], rounds=1)).build())
    session = open_session(BasicAgent(name="coder", system_prompt="You code."), "g2", bundle)
    result = await session.submit_turn("go")
    assert result.stop == "error"
    assert isinstance(result.error, ChecksFailed)
    assert result.error.outcome.status == "exit 1"
    await session.close()
