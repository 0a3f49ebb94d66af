"""A parent whose sub-agent was running when its process was killed (SIGKILL, a real subprocess and
a real SQLite file) resumes in another process: it finds its child in the store, both sessions load
valid (every open call answered "interrupted"), and both take their next turn."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest
from anyio.streams.text import TextReceiveStream

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, agent_tool, list_subagent_sessions
from agcore.memory import SqliteSessionStore
from agcore.testing import ScriptedProvider
from tests.agent._subagent_support import assert_every_call_answered

# One subprocess (~1 s of imports): run on one backend of the test process; the loading side is
# covered on both backends by test_subagents.py.
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize("anyio_backend", ["asyncio"]),
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL"),
]

SCRIPT = Path(__file__).parent / "persistence_scripts" / "run_subagent_parent.py"
LEAD = BasicAgent("lead", "You lead.", tools=["researcher"])
RESEARCHER = BasicAgent("researcher", "You research.", tools=[])


async def kill_while_the_child_runs(db: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    async with await anyio.open_process([sys.executable, str(SCRIPT), str(db)], env=env) as process:
        assert process.stdout is not None
        seen = ""
        with anyio.fail_after(30):
            async for chunk in TextReceiveStream(process.stdout):
                seen += chunk
                if "CHILD_RUNNING" in seen:
                    break
            process.send_signal(signal.SIGKILL)
            assert await process.wait() == -signal.SIGKILL


async def test_a_parent_killed_mid_child_resumes_with_its_child(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    await kill_while_the_child_runs(db)

    parent_model = ScriptedProvider(["The researcher was interrupted; I will ask again."])
    child_model = ScriptedProvider(["Otters hold hands."])
    child_bundle = AgentBuilder().provider(child_model).build()
    bundle = AgentBuilder().provider(parent_model).tools(agent_tool(RESEARCHER, child_bundle)).build()
    async with SqliteSessionStore(db) as store:
        [record] = await list_subagent_sessions(store, "parent")
        assert record.session_id == "parent/sub/p1"
        assert record.agent_name == "researcher"
        assert record.state["app_state"]["subagent"] == {
            "parent_session_id": "parent", "call_id": "p1", "tool": "researcher", "depth": 1,
        }
        parent = await AgentSession.load(store, "parent", LEAD, bundle)
        child = await AgentSession.load(store, record.session_id, RESEARCHER, child_bundle)
        assert [m.kind for m in parent.messages] == ["user", "assistant", "tool_results"]
        assert [m.kind for m in child.messages] == ["user", "assistant", "tool_results"]
        for history in (parent.messages, child.messages):
            assert_every_call_answered(history)
            assert history[-1].results[0].text.startswith("Interrupted")
        assert child.messages[0].content == "find otters"
        # Both continue, and the repairs were saved: a third process sees them.
        assert (await child.submit_turn("go on")).text == "Otters hold hands."
        assert (await parent.submit_turn("and now?")).text.startswith("The researcher was interrupted")
    async with SqliteSessionStore(db) as store:
        again = await AgentSession.load(store, "parent", LEAD, bundle)
        assert len(again.messages) == 5
