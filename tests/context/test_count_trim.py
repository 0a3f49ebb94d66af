"""Count-based trimming: the task and the last N messages, never a tool call without its result."""

from __future__ import annotations

from pathlib import Path

import pytest

from agcore.agent import AgentBuilder, AgentSession, BasicAgent
from agcore.context import keep_last_messages, trim_messages
from agcore.llm import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from agcore.memory import SqliteSessionStore
from agcore.testing import ScriptedProvider, tool_call_reply, tool_calls_reply
from agcore.tools import tool
from tests.context._history import AnyMessage, assert_valid, long_history, tool_round


def test_a_short_history_is_unchanged() -> None:
    history = long_history(3)
    assert trim_messages(history, 30) == history


def test_the_task_and_the_last_messages_stay() -> None:
    history = long_history(40)  # 1 + 80 + 2 messages
    trimmed = trim_messages(history, 10)
    assert len(trimmed) <= 10
    assert_valid(trimmed)
    first = trimmed[0]
    assert isinstance(first, UserMessage)
    assert first.blocks[0] == TextBlock(text="Refactor the handlers.")
    assert "left out here to fit the context window" in first.blocks[1].text  # type: ignore[union-attr]
    assert trimmed[1:] == history[len(history) - len(trimmed) + 1 :]  # the tail as it was
    assert trimmed[-1] == UserMessage(content="Now summarise what you found.")


@pytest.mark.parametrize("max_messages", range(2, 16))
def test_every_size_gives_a_valid_history(max_messages: int) -> None:
    history: list[AnyMessage] = [UserMessage(content="Task.")]
    for n in range(12):  # parallel calls, text answers and plain user turns mixed
        history.extend(tool_round(n, calls=1 + n % 3))
        if n % 4 == 3:
            history.append(AssistantMessage(content=[TextBlock(text=f"Progress {n}.")]))
            history.append(UserMessage(content=f"Go on {n}."))
    trimmed = trim_messages(history, max_messages)
    assert len(trimmed) <= max_messages
    assert_valid(trimmed)
    assert trimmed[0].blocks[0] == TextBlock(text="Task.")  # type: ignore[union-attr]
    calls = {c.id for m in trimmed if isinstance(m, AssistantMessage) for c in m.tool_calls}
    results = {r.tool_use_id for m in trimmed if isinstance(m, UserMessage) for r in m.tool_results}
    assert calls == results


def test_a_kept_user_turn_is_merged_into_the_task() -> None:
    history: list[AnyMessage] = [
        UserMessage(content="Task."),
        AssistantMessage(content=[TextBlock(text="a")]),
        UserMessage(content="second"),
        AssistantMessage(content=[TextBlock(text="b")]),
        UserMessage(content="third"),
    ]
    trimmed = trim_messages(history, 4, note=False)  # the tail starts at "second"
    assert trimmed == [
        UserMessage(content=[TextBlock(text="Task."), TextBlock(text="second")]),
        AssistantMessage(content=[TextBlock(text="b")]),
        UserMessage(content="third"),
    ]
    assert trim_messages(history, 3, note=False) == [history[0], *history[3:]]


def test_when_no_safe_cut_fits_nothing_is_cut() -> None:
    calls = [ToolUseBlock(id=f"c{i}", name="t") for i in range(3)]
    history: list[AnyMessage] = [
        UserMessage(content="Task."),
        AssistantMessage(content=[TextBlock(text="x")]),
        UserMessage(content="more"),
        AssistantMessage(content=calls),
        UserMessage(content=[ToolResultBlock(tool_use_id=c.id, content="r") for c in calls]),
    ]
    assert trim_messages(history, 2) == history  # the last pair alone is two messages + the task
    with pytest.raises(ValueError, match="at least 2"):
        keep_last_messages(1)


@pytest.mark.anyio
async def test_a_session_sends_the_trimmed_history_and_stores_it_whole(tmp_path: Path) -> None:
    @tool
    def read(path: str) -> str:
        """Read a file."""
        return f"contents of {path}"

    script: list[object] = []
    for turn in range(4):
        script += [tool_call_reply("read", {"path": f"a{turn}.py"}),
                   tool_calls_reply([("read", {"path": f"b{turn}.py"}), ("read", {"path": f"c{turn}.py"})]),
                   f"Answer {turn}."]
    model = ScriptedProvider(script)  # type: ignore[arg-type]
    bundle = AgentBuilder().provider(model).tools(read).build()
    async with SqliteSessionStore(tmp_path / "sessions.db") as store:
        session = AgentSession(BasicAgent("a"), "s1", bundle, store=store, transform=keep_last_messages(6))
        for turn in range(4):
            await session.submit_turn(f"Task {turn}.")
        for request in model.requests:
            assert len(request.messages) <= 6
            assert_valid(request.messages)
            assert request.messages[0].blocks[0] == TextBlock(text="Task 0.")  # type: ignore[union-attr]
        assert any("left out here" in str(r.messages[0]) for r in model.requests)  # it did cut
        loaded = await AgentSession.load(store, "s1", BasicAgent("a"), bundle)
    assert len(loaded.messages) == len(session.messages)  # the store keeps every message
    assert len(session.messages) > 20
