"""Runs a persisted session in its own process, for the kill tests.

Usage: ``python run_session.py DB SESSION_ID STEPS BACKEND``. A session the file already holds is
loaded (as a new process would after a crash) and continued with a new turn; otherwise it is created.
The scripted model calls one to three ``work`` tools per reply (each sleeps a little, so a kill can
land anywhere: mid-tool, mid-model-call, mid-write) for STEPS replies, then answers. After every write
the store commits, this prints ``SAVED <count> <id of the last saved message>``; it prints ``READY``
once imports are done and ``FINISHED`` at the end.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence

import anyio

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, messages_from_json
from agcore.memory._session_store import SessionRecord, SqliteSessionStore
from agcore.testing import ScriptedProvider, tool_calls_reply
from agcore.tools import tool


class ReportingStore(SqliteSessionStore):
    """Says what it has committed, so the parent knows what must survive a kill."""

    def _report(self, count: int, messages: Sequence[str]) -> None:
        last = messages_from_json(f"[{messages[-1]}]")[0].id if messages else "-"
        print(f"SAVED {count} {last}", flush=True)

    async def append_messages(
        self, session_id: str, messages: Sequence[str], *, record: SessionRecord | None = None
    ) -> int:
        count = await super().append_messages(session_id, messages, record=record)
        if messages:
            self._report(count, messages)
        return count


@tool
async def work(n: int) -> str:
    """Do a little work.

    Args:
        n: Which piece of work.
    """
    await anyio.sleep(0.002 + (n % 5) * 0.002)
    return f"piece {n} done"


async def main(db: str, session_id: str, steps: int) -> None:
    rng = random.Random()
    replies = []
    n = 0
    for _ in range(steps):
        calls = []
        for _ in range(rng.randint(1, 3)):
            n += 1
            calls.append(("work", {"n": n}))
        replies.append(tool_calls_reply(calls, text=f"step with {len(calls)} calls"))
    replies.append("all done")
    bundle = (
        AgentBuilder().provider(ScriptedProvider(replies)).tools(work)
        .config(max_turns=steps + 5, max_tool_turns=steps + 5).build()
    )
    agent = BasicAgent(name="worker", system_prompt="You work.")
    async with ReportingStore(db) as store:
        print("READY", flush=True)
        if await store.load(session_id) is None:
            session = AgentSession(agent, session_id, bundle, store=store)
        else:
            session = await AgentSession.load(store, session_id, agent, bundle)
        result = await session.submit_turn("do the work")
        assert result.ok, result.error
    print("FINISHED", flush=True)


if __name__ == "__main__":
    db, session_id, steps, backend = sys.argv[1:5]
    anyio.run(main, db, session_id, int(steps), backend=backend)
