"""``OverflowToMemory``: compaction's overflow summarised by a (scripted) model into a real SQLite
memory store, found again with the retrieve tool's retriever; the transcript kept if the summary fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from agcore.agent import (
    AgentBuilder,
    AgentMessage,
    AgentSession,
    AssistantReply,
    BasicAgent,
    ToolResults,
    UserInput,
)
from agcore.context import create_context_transform
from agcore.llm import AssistantMessage, AuthenticationError
from agcore.memory import KeywordRetriever, OverflowToMemory, SqliteMemoryStore
from agcore.testing import ScriptedProvider
from tests.context._history import long_history

pytestmark = pytest.mark.anyio

NOTE = "- The user's staging database is db-stg-2\n- All 60 handlers delegate to process()"


def as_agent_messages(history: list[object]) -> list[AgentMessage]:
    out: list[AgentMessage] = []
    for message in history:
        if isinstance(message, AssistantMessage):
            out.append(AssistantReply(message=message))
        elif message.tool_results:  # type: ignore[attr-defined]
            out.append(ToolResults(results=message.tool_results))  # type: ignore[attr-defined]
        else:
            out.append(UserInput(content=message.content))  # type: ignore[attr-defined]
    return out


async def test_a_compacted_session_leaves_a_summary_in_memory(tmp_path: Path) -> None:
    main = ScriptedProvider(["Carrying on."])
    cheap = ScriptedProvider(["- 60 handlers read"] * 10, model_id="cheap")
    notes = ScriptedProvider([NOTE], model_id="notes")
    async with SqliteMemoryStore(tmp_path / "memory.db") as store:
        overflow = OverflowToMemory(store, notes, namespace="s1", metadata={"session": "s1"})
        transform = create_context_transform(cheap, 20_000, keep_tail=4, on_overflow=overflow)
        session = AgentSession(
            BasicAgent("worker", "You refactor code."), "s1", AgentBuilder().provider(main).build(),
            transform=transform, messages=as_agent_messages(long_history(60, result_chars=1200)),
        )
        result = await session.submit_turn("Go on.")
        assert result.ok, result.error
        assert notes.calls == 1
        sent = notes.requests[0].messages[0]
        assert "<transcript>" in str(sent)
        assert "call_0_0" in str(sent)  # the transcript of what was cut
        stored = await store.list(namespace="s1")
        assert [item.content for item in stored] == [NOTE]
        assert stored[0].metadata == {"session": "s1", "kind": "conversation_summary", "summarised": True}
        assert overflow.items == stored
        hits = await KeywordRetriever(store).retrieve("staging database")
        assert hits[0].content == NOTE  # what the retrieve tool would find later


async def test_a_failed_summary_stores_the_transcript(tmp_path: Path) -> None:
    failing = ScriptedProvider([AuthenticationError("bad key", provider="scripted", model="m")])
    empty = ScriptedProvider([""])
    async with SqliteMemoryStore(tmp_path / "memory.db") as store:
        await OverflowToMemory(store, failing)("user: the deploy key is in vault\nassistant: noted")
        await OverflowToMemory(store, empty)("user: second part")
        await OverflowToMemory(store, empty)("   ")  # nothing to store
        items = await store.list()
    assert [i.content for i in items] == ["user: the deploy key is in vault\nassistant: noted",
                                          "user: second part"]
    assert all(i.metadata["summarised"] is False for i in items)


async def test_a_long_transcript_is_summarised_in_parts(tmp_path: Path) -> None:
    text = "\n".join(f"user: message {i} " + "x" * 80 for i in range(100))  # ~9,000 characters
    notes = ScriptedProvider(["note 1", "note 2", "note 3"])

    async def pick() -> ScriptedProvider:  # a function choosing the summariser works too
        return notes

    async with SqliteMemoryStore(tmp_path / "memory.db") as store:
        overflow = OverflowToMemory(store, pick, max_input_chars=4000)
        await overflow(text)
        assert [i.content for i in await store.list()] == ["note 1", "note 2", "note 3"]
    sent = [str(r.messages[0]) for r in notes.requests]
    assert "message 0 " in sent[0]
    assert "message 99 " in sent[2]
    assert all(len(r.messages[0].blocks[0].text) < 4000 + 1000 for r in notes.requests)  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="must be positive"):
        OverflowToMemory(store, notes, max_input_chars=0)
