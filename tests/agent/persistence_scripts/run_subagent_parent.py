"""Runs a parent session whose sub-agent is mid-tool when the test kills this process.

Usage: ``python run_subagent_parent.py DB``. The parent ("lead", session ``parent``) calls the
``researcher`` sub-agent; the researcher calls ``lookup``, which prints ``CHILD_RUNNING`` and then
waits forever, so the kill lands while the child runs. Both sessions are saved to the SQLite file DB.
"""

from __future__ import annotations

import sys

import anyio

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, agent_tool
from agcore.memory import SqliteSessionStore
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import tool

LEAD = BasicAgent("lead", "You lead.", tools=["researcher"])
RESEARCHER = BasicAgent("researcher", "You research.", tools=["lookup"])


@tool
async def lookup(topic: str) -> str:
    """Look a topic up."""
    print("CHILD_RUNNING", flush=True)
    await anyio.sleep_forever()
    return "never"


async def main(db: str) -> None:
    parent_model = ScriptedProvider([tool_call_reply("researcher", {"task": "find otters"}, id="p1")])
    child_model = ScriptedProvider([tool_call_reply("lookup", {"topic": "otters"}, id="c1")])
    child_bundle = AgentBuilder().provider(child_model).tools(lookup).build()
    bundle = AgentBuilder().provider(parent_model).tools(agent_tool(RESEARCHER, child_bundle)).build()
    async with SqliteSessionStore(db) as store:
        session = AgentSession(LEAD, "parent", bundle, store=store)
        await session.submit_turn("Tell me about otters.")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
