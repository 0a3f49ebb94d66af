"""Persona presets for the prompt's identity, and the memory guidance the builder adds when the
bundle has memory (a real SQLite store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agcore.agent import (
    PERSONAS,
    AgentBuilder,
    AgentSession,
    BasicAgent,
    Persona,
    SystemPrompt,
    memory_guidance,
)
from agcore.hooks import HookExecutor
from agcore.memory import KeywordRetriever, SqliteMemoryStore
from agcore.testing import ScriptedProvider, tool_call_reply


def test_presets_render_as_the_identity() -> None:
    assert set(PERSONAS) == {"assistant", "engineer", "researcher", "tutor", "concise", "friendly"}
    text = SystemPrompt().persona("engineer", agent_name="Ada", user_name="Sam").memory("m").render()
    assert text.startswith("You are Ada, a careful software engineer. Read before you change")
    assert text.split("\n\n")[0].endswith("Address the user as Sam.")
    assert SystemPrompt().persona("concise").render().startswith("You are a terse assistant. Reply")
    own = Persona("pirate", "a ship's navigator", "Speak like a sailor.")
    assert SystemPrompt().persona(own, agent_name="Flint").render() == (
        "You are Flint, a ship's navigator. Speak like a sailor.")


def test_an_unknown_persona_lists_the_presets() -> None:
    with pytest.raises(KeyError, match="no persona 'pirate'; choose one of: assistant, engineer"):
        SystemPrompt().persona("pirate")


@pytest.mark.anyio
async def test_memory_guidance_reaches_the_model_with_a_store(tmp_path: Path) -> None:
    async with SqliteMemoryStore(tmp_path / "memory.db") as store:
        await store.add("The user prefers tabs over spaces.")
        model = ScriptedProvider([tool_call_reply("retrieve", {"query": "tabs"}), "You prefer tabs."])
        bundle = (AgentBuilder().provider(model).memory_store(store, remember_tool=True)
                  .retriever(KeywordRetriever(store)).build())
        session = AgentSession(BasicAgent("a", "You are Ada."), "s1", bundle)
        result = await session.submit_turn("Tabs or spaces for me?")
    assert result.text == "You prefer tabs."
    system = model.requests[0].system or ""
    assert system.startswith("You are Ada.\n\n# Memory\n")
    assert "Search it with `retrieve`" in system
    assert "Store with `remember`" in system
    assert "prefers tabs" in str(model.requests[1].messages[-1])  # the tool really searched SQLite


@pytest.mark.anyio
async def test_guidance_names_only_the_tools_there_are(tmp_path: Path) -> None:
    async with SqliteMemoryStore(tmp_path / "memory.db") as store:
        only_store = AgentBuilder().provider(ScriptedProvider(["ok"])).memory_store(store).build()
        text = memory_guidance(only_store)
        assert text is not None
        assert "`retrieve`" not in text
        assert "`remember`" not in text
        assert "long-term memory store" in text
        retriever = KeywordRetriever(store)
        retrieve_only = AgentBuilder().provider(ScriptedProvider(["ok"])).retriever(retriever).build()
        text = memory_guidance(retrieve_only) or ""
        assert "`retrieve`" in text
        assert "`remember`" not in text
    assert memory_guidance(AgentBuilder().provider(ScriptedProvider(["ok"])).build()) is None


@pytest.mark.anyio
async def test_no_memory_no_guidance_and_an_own_section_wins(tmp_path: Path) -> None:
    model = ScriptedProvider(["ok", "ok", "ok"])
    plain = AgentBuilder().provider(model).build()
    await AgentSession(BasicAgent("a", "You are Ada."), "s1", plain).submit_turn("hi")
    assert model.requests[0].system == "You are Ada."
    async with SqliteMemoryStore(tmp_path / "memory.db") as store:
        with_store = AgentBuilder().provider(model).memory_store(store).build()
        own = SystemPrompt("You are Ada.").memory("Only remember project names.").render()
        await AgentSession(BasicAgent("a", own), "s2", with_store).submit_turn("hi")
        assert model.requests[1].system == own  # a prompt with its own memory section keeps it
        off = AgentBuilder().provider(model).memory_store(store).memory_guidance(False).build()
        await AgentSession(BasicAgent("a", "You are Ada."), "s3", off).submit_turn("hi")
        assert model.requests[2].system == "You are Ada."


@pytest.mark.anyio
async def test_custom_guidance_and_a_shared_executor(tmp_path: Path) -> None:
    executor = HookExecutor()
    model = ScriptedProvider(["ok", "ok"])
    async with SqliteMemoryStore(tmp_path / "memory.db") as store:
        for n in range(2):  # two builds on one executor: one guidance plugin
            bundle = (AgentBuilder().provider(model).hook_executor(executor).memory_store(store)
                      .memory_guidance(f"Remember birthdays ({n}).").build())
        await AgentSession(BasicAgent("a", None), "s1", bundle).submit_turn("hi")
    assert model.requests[0].system == "# Memory\nRemember birthdays (1)."
