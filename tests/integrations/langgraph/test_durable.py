"""The graph on LangGraph's checkpointers, across real processes.

* Crash-resume: a subprocess runs a turn whose tools run as parallel tasks; it is SIGKILLed while one
  tool hangs and the others have finished. A new process resumes the thread from the
  ``AsyncSqliteSaver`` file: it runs the hung tool again, but neither the model call nor the
  finished tools (every run is counted in a file).
* A confirmation interrupt left by one process is answered in another, and this (third) process
  reads the finished thread from the checkpoint.
* The resuming processes run with ``LANGGRAPH_STRICT_MSGPACK=true``: agcore's messages load typed.

LangGraph runs on asyncio only, so this module runs on asyncio only (not on trio).
"""

from __future__ import annotations

import json
import operator
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agcore.agent import AgentBuilder, AgentMessage, AgentSession, BasicAgent, ToolResults
from agcore.integrations.langgraph import GraphSession, compile_agent
from agcore.integrations.langgraph import _graph as graph_module
from agcore.integrations.langgraph._state import merge_outcomes
from agcore.llm import ToolUseBlock
from agcore.testing import ScriptedProvider, tool_calls_reply
from agcore.tools import tool

from .conftest import comparable

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL"),
]

SCRIPT = Path(__file__).parent / "graph_scripts" / "run_graph.py"
ROOT = Path(__file__).parents[3]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def run_script(mode: str, db: Path, counts: Path, *, strict: bool = False) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if strict:
        env["LANGGRAPH_STRICT_MSGPACK"] = "true"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), mode, str(db), str(counts)],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Blocked deserialization" not in done.stderr, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def wait_for_saved_outcomes(db: Path, count: int) -> None:
    """Until the checkpoint file holds ``count`` tool results as pending writes (LangGraph saves a
    finished task's writes as it finishes; the kill must come after, or the tool rightly runs again)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with closing(sqlite3.connect(db, timeout=1)) as connection:
                query = "SELECT COUNT(*) FROM writes WHERE channel = 'outcomes'"
                saved = connection.execute(query).fetchone()[0]
        except sqlite3.OperationalError:  # not created yet, or busy
            saved = 0
        if saved >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"the finished tools' results never reached {db}")


def counted(counts: Path) -> Counter[str]:
    return Counter(counts.read_text().splitlines())


def test_a_killed_process_resumes_without_rerunning_what_finished(tmp_path: Path) -> None:
    db, counts = tmp_path / "graph.sqlite", tmp_path / "counts.txt"
    counts.touch()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), "crash", str(db), str(counts)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            seen = counted(counts)
            if seen["fast 1"] and seen["fast 2"] and seen["slow started"]:
                break
            assert process.poll() is None, process.communicate()[1]
            time.sleep(0.05)
        else:
            raise AssertionError(f"the tools never all started: {counted(counts)}")
        wait_for_saved_outcomes(db, 2)  # the finished tasks' results are pending writes on disk
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert counted(counts) == Counter({"model": 1, "fast 1": 1, "fast 2": 1, "slow started": 1})

    summary = run_script("recover", db, counts, strict=True)

    assert summary["stop"] == "done"
    assert summary["text"] == "all done"
    assert summary["kinds"] == ["user", "assistant", "tool_results", "assistant"]
    # the second process ran the hung tool again and the final model call; nothing else
    assert counted(counts) == Counter({
        "model": 2, "fast 1": 1, "fast 2": 1, "slow started": 2, "slow finished": 1,
    })


async def test_a_confirmation_is_answered_in_another_process(tmp_path: Path) -> None:
    db, counts = tmp_path / "graph.sqlite", tmp_path / "counts.txt"
    counts.touch()

    asked = run_script("ask", db, counts)

    assert asked["kinds"] == ["user", "assistant"]  # waiting: the batch is not recorded yet
    [waiting] = asked["interrupts"]
    assert waiting["type"] == "agcore.confirmation"
    assert waiting["tool"] == "deploy"
    assert waiting["call"]["input"] == {"target": "prod"}
    assert counted(counts) == Counter({"model": 1})  # vetted, nothing run yet

    approved = run_script("approve", db, counts, strict=True)

    assert approved["stop"] == "done"
    assert approved["kinds"] == ["user", "assistant", "tool_results", "assistant"]
    assert counted(counts) == Counter({"model": 2, "fast 1": 1, "deploy prod": 1})
    # this third process reads the finished thread from the same file
    bundle = AgentBuilder().provider(ScriptedProvider([])).tools(*_tool_names()).build()
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        session = GraphSession(BasicAgent(name="durable", system_prompt="s"), "thread-1", bundle,
                               checkpointer=saver)
        history = await session.history()
        assert await session.pending() is None
    [results] = [m for m in history if isinstance(m, ToolResults)]
    assert [r.content for r in results.results] == ["fast 1 done", "deployed prod"]


def _tool_names() -> list[Any]:
    @tool
    def fast(n: int) -> str:
        """Unused here."""
        return ""

    return [fast]


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def add_bundle(*replies: Any) -> Any:
    return AgentBuilder().provider(ScriptedProvider(list(replies))).tools(add).build()


FIRST = (tool_calls_reply([ToolUseBlock(id="c1", name="add", input={"a": 1, "b": 2})]), "3")
SECOND = ("again 3",)


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
async def test_checkpointers_hold_the_history_agent_session_makes(saver: str, tmp_path: Path) -> None:
    agent = BasicAgent(name="a", system_prompt="s")
    reference = AgentSession(agent, "t", add_bundle(*FIRST, *SECOND))
    await reference.submit_turn("add")
    await reference.submit_turn("again")
    if saver == "memory":
        graph = GraphSession(agent, "t", add_bundle(*FIRST, *SECOND), checkpointer=InMemorySaver())
        await graph.submit_turn("add")
        await graph.submit_turn("again")
        history = await graph.history()
    else:
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "g.sqlite")) as sqlite:
            await GraphSession(agent, "t", add_bundle(*FIRST), checkpointer=sqlite).submit_turn("add")
        # a new connection and a new session object: the thread goes on from the file
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "g.sqlite")) as sqlite:
            again = GraphSession(agent, "t", add_bundle(*SECOND), checkpointer=sqlite)
            result = await again.submit_turn("again")
            history = await again.history()
        assert result.text == "again 3"
        assert result.turns == 1
    assert comparable(history) == comparable(reference.messages)


async def test_the_bare_graph_streams_agent_events_in_custom_mode() -> None:
    bundle = add_bundle(tool_calls_reply([("add", {"a": 2, "b": 2})]), "four")
    graph = compile_agent(BasicAgent(name="a", system_prompt="s"), bundle, InMemorySaver())
    events = [e async for e in graph.astream({"input": "2+2"}, {"configurable": {"thread_id": "x"}},
                                             stream_mode="custom")]
    assert [e.type for e in events] == [
        "turn_started", "turn_ended", "tool_call_requested", "tool_result_ready",
        "turn_started", "text_delta", "turn_ended", "done",
    ]
    assert events[3].result.content == "4"
    assert events[-1].text == "four"


def test_after_a_kill_pending_says_the_run_needs_recover(tmp_path: Path) -> None:
    db, counts = tmp_path / "graph.sqlite", tmp_path / "counts.txt"
    counts.touch()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), "crash", str(db), str(counts)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not counted(counts)["slow started"]:
            assert time.monotonic() < deadline, f"the slow tool never started: {counted(counts)}"
            assert process.poll() is None, process.communicate()[1]
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)  # kill -9, mid-run
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

    summary = run_script("pending", db, counts)

    before = summary["before"]
    assert before["type"] == "agcore.unfinished"  # not None: the thread is not at rest
    assert before["next"]
    assert "recover()" in before["advice"]
    assert summary["stop"] == "done"
    assert summary["text"] == "all done"
    assert summary["after"] is None  # recovered: nothing waits any more


def checkpoint_sizes(db: Path) -> list[int]:
    """The size of each checkpoint row the saver wrote, oldest first."""
    with closing(sqlite3.connect(db)) as conn:
        return [size for (size,) in conn.execute("SELECT length(checkpoint) FROM checkpoints ORDER BY rowid")]


async def test_a_checkpoint_holds_what_its_step_added_not_the_whole_history(tmp_path: Path) -> None:
    """The history is a delta channel: a long conversation's checkpoints stay the size of a step,
    so the file grows with the conversation, not with its square."""
    db = tmp_path / "g.sqlite"
    replies = [reply for _ in range(12) for reply in FIRST]
    async with AsyncSqliteSaver.from_conn_string(str(db)) as sqlite:
        agent = BasicAgent(name="a", system_prompt="s")
        session = GraphSession(agent, "t", add_bundle(*replies), checkpointer=sqlite)
        for _ in range(12):
            await session.submit_turn("add")
        history = await session.history()
    assert len(history) == 12 * 4
    sizes = checkpoint_sizes(db)
    early, late = max(sizes[4:12]), max(sizes[-8:])
    assert late < early + 200, (early, late)  # with the whole history in each checkpoint: ~6x


class _OldLayout(TypedDict, total=False):
    """The graph state as agcore saved it before the history became a delta channel."""

    session_id: str
    messages: Annotated[list[AgentMessage], operator.add]
    input: Any
    session_state: dict[str, Any] | None
    phase: dict[str, Any] | None
    outcomes: Annotated[dict[str, Any], merge_outcomes]
    stop: str | None
    error: str | None


async def test_a_thread_saved_by_the_earlier_layout_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "g.sqlite"
    agent = BasicAgent(name="a", system_prompt="s")
    with monkeypatch.context() as old:
        old.setattr(graph_module, "AgentState", _OldLayout)
        async with AsyncSqliteSaver.from_conn_string(str(db)) as sqlite:
            await GraphSession(agent, "t", add_bundle(*FIRST), checkpointer=sqlite).submit_turn("add")
    async with AsyncSqliteSaver.from_conn_string(str(db)) as sqlite:
        session = GraphSession(agent, "t", add_bundle(*SECOND), checkpointer=sqlite)
        result = await session.submit_turn("again")
        history = await session.history()
    assert result.text == "again 3"
    assert [type(m).__name__ for m in history] == [
        "UserInput", "AssistantReply", "ToolResults", "AssistantReply", "UserInput", "AssistantReply",
    ]
