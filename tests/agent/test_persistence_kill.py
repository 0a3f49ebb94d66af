"""Kill -9 a process mid-session at random points; the session loads valid and loses nothing saved.

``persistence_scripts/run_session.py`` runs a session in a subprocess: a scripted model calling small
sleeping tools for many replies, saved to one SQLite file that several processes write at once (each
its own session). A session the file already holds is loaded and continued, as a restarted process
would. Each chain here runs a session, SIGKILLs the process at a random moment, runs it again (the
new process loads the killed session, repairs it and takes a new turn), kills that one too; then this
process loads every session: the history pairs every tool call with exactly one result, every save a
process reported is in it, and the session takes another turn.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import signal
import sys
import time
from collections import Counter
from pathlib import Path

import anyio
import pytest
from anyio.streams.text import TextReceiveStream

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, convert_to_llm
from agcore.llm import AssistantMessage, ToolResultBlock, UserMessage
from agcore.memory import SqliteSessionStore
from agcore.testing import ScriptedProvider
from agcore.tools import tool

# Subprocess start-up dominates (~1 s of imports each), so the kill chains run on one backend of the
# test process; the subprocesses alternate asyncio and trio, and test_persistence.py covers loading
# on both backends.
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize("anyio_backend", ["asyncio"]),
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL"),
]

SCRIPT = Path(__file__).parent / "persistence_scripts" / "run_session.py"
STEPS = 60  # model replies with tool calls per run: ~0.7 s of work, hundreds of committed writes
CHAINS = 3
KILLS_PER_CHAIN = 2


@tool
async def work(n: int) -> str:
    """Do a little work."""
    return f"piece {n} done (resumed)"


class Run:
    """One subprocess: which session, which backend, when to kill it (None: let it finish)."""

    def __init__(self, session_id: str, backend: str, delay: float | None) -> None:
        self.session_id = session_id
        self.backend = backend
        self.delay = delay
        self.lines: list[str] = []
        self.returncode: int | None = None

    @property
    def saves(self) -> list[tuple[int, str]]:
        out = []
        for line in self.lines:
            if line.startswith("SAVED "):
                _, count, last_id = line.split()
                out.append((int(count), last_id))
        return out


async def drive(run: Run, db: Path) -> None:
    ready = anyio.Event()
    command = [sys.executable, str(SCRIPT), str(db), run.session_id, str(STEPS), run.backend]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    async with await anyio.open_process(command, env=env) as process:
        assert process.stdout is not None

        async def read() -> None:
            assert process.stdout is not None
            pending = ""
            async for chunk in TextReceiveStream(process.stdout):
                pending += chunk
                *complete, pending = pending.split("\n")
                for line in complete:
                    run.lines.append(line)
                    if line == "READY":
                        ready.set()

        async with anyio.create_task_group() as group:
            group.start_soon(read)
            with anyio.fail_after(20):
                await ready.wait()
                if run.delay is not None:
                    await anyio.sleep(run.delay)
                    with contextlib.suppress(ProcessLookupError):  # it ended before the kill point
                        process.send_signal(signal.SIGKILL)
                run.returncode = await process.wait()


def assert_llm_history_pairs(messages: list[UserMessage | AssistantMessage]) -> None:
    """What a provider receives: each assistant tool call answered exactly once, in the next message."""
    for i, message in enumerate(messages):
        if not isinstance(message, AssistantMessage) or not message.tool_calls:
            continue
        assert i + 1 < len(messages), "the history ends with unanswered tool calls"
        following = messages[i + 1]
        assert isinstance(following, UserMessage)
        answers = Counter(b.tool_use_id for b in following.blocks if isinstance(b, ToolResultBlock))
        assert answers == Counter(c.id for c in message.tool_calls), f"message {i}: {answers}"
    for previous, current in itertools.pairwise(messages):
        assert previous.role != current.role


async def test_killed_sessions_reload_valid_and_lose_nothing_saved(tmp_path: Path) -> None:
    seed = time.time_ns()
    rng = random.Random(seed)
    db = tmp_path / "sessions.db"
    backends = ["asyncio", "trio"]
    chains = [
        [Run(f"chain-{c}", backends[(c + k) % 2], rng.uniform(0.0, 0.6)) for k in range(KILLS_PER_CHAIN)]
        for c in range(CHAINS)
    ]
    finishing = Run("finishes", "trio", None)

    async def run_chain(chain: list[Run]) -> None:
        for run in chain:  # one after another: each run continues what the killed one left
            await drive(run, db)

    async with anyio.create_task_group() as group:
        for chain in chains:
            group.start_soon(run_chain, chain)
        group.start_soon(drive, finishing, db)
    context = f"(seed {seed}, delays {[[r.delay for r in chain] for chain in chains]})"
    assert finishing.returncode == 0, f"the unkilled run failed: {finishing.lines[-5:]} {context}"
    assert finishing.lines[-1] == "FINISHED"
    killed = [run for chain in chains for run in chain]
    # A run on a busy machine may reach its end before its kill point: then it must have finished.
    assert all(
        r.returncode == -signal.SIGKILL or (r.returncode == 0 and r.lines[-1:] == ["FINISHED"])
        for r in killed
    ), f"{[(r.returncode, r.lines[-3:]) for r in killed]} {context}"
    agent = BasicAgent(name="worker", system_prompt="You work.")

    async with SqliteSessionStore(db) as store:
        for chain in [*chains, [finishing]]:
            session_id = chain[0].session_id
            saves = [save for run in chain for save in run.saves]
            if await store.load(session_id) is None:  # killed before its first write committed
                assert saves == [], f"{session_id} reported saves that are gone {context}"
                continue
            stored = len(await store.load_messages(session_id))
            bundle = AgentBuilder().provider(ScriptedProvider(["carried on"])).tools(work).build()
            session = await AgentSession.load(store, session_id, agent, bundle)
            ids = [m.id for m in session.messages]
            # every save any process of the chain reported is there, in place
            for count, last_id in saves:
                assert count <= stored, f"{session_id}: save {count} lost {context}"
                assert ids[count - 1] == last_id, f"{session_id}: message {count} changed {context}"
            assert_llm_history_pairs(convert_to_llm(session.messages))
            result = await session.submit_turn("please go on")
            assert result.ok, f"{session_id}: {result.error} {context}"
            assert result.text == "carried on"
            assert_llm_history_pairs(convert_to_llm(session.messages))
            assert len(await store.load_messages(session_id)) == len(session.messages)
        finished = await store.load("finishes")
        assert finished is not None
        assert finished.turn_index == 2  # its own turn, then the one taken here
