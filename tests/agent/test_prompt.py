"""The ``Agent`` protocol (subclassed and structural), ``BasicAgent``, and the ``SystemPrompt`` builder."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date

import pytest

from agcore.agent import (
    DEFAULT_SAFETY_RULES,
    DEFAULT_TOOL_RULES,
    Agent,
    BasicAgent,
    ConfigError,
    Environment,
    RuntimeBundle,
    SystemPrompt,
)
from agcore.llm.types import ToolDefinition
from agcore.tools import Tool


def read_file(path: str) -> str:
    """Read a file."""
    return path


def write_file(path: str, text: str) -> str:
    """Write a file."""
    return path


def make_bundle() -> RuntimeBundle:
    bundle = RuntimeBundle()
    registry = bundle.tool_registry()
    registry.register(read_file)
    registry.register(write_file)
    registry.register_client_tool(ToolDefinition(name="show_photo", description="Show a photo."))
    return bundle


# --------------------------------------------------------------------------------------- Agent


class Reviewer(Agent):
    name = "reviewer"
    system_prompt = "You review code."


class ReadOnly(Agent):
    name = "read-only"

    def tool_definitions(self, bundle: RuntimeBundle) -> list[ToolDefinition]:
        return [d for d in super().tool_definitions(bundle) if d.name != "write_file"]


@dataclass
class Configured(Agent):
    name: str
    system_prompt: str | None


def test_a_subclass_inherits_every_server_and_client_tool() -> None:
    bundle = make_bundle()
    agent = Reviewer()
    assert isinstance(agent, Agent)
    assert [d.name for d in agent.tool_definitions(bundle)] == ["read_file", "write_file", "show_photo"]
    assert agent.system_prompt == "You review code."


def test_a_subclass_may_filter_and_defaults_to_no_system_prompt() -> None:
    agent = ReadOnly()
    assert agent.system_prompt is None
    assert [d.name for d in agent.tool_definitions(make_bundle())] == ["read_file", "show_photo"]


def test_a_dataclass_subclass_sets_its_name_and_prompt() -> None:
    agent = Configured("dc", "Be brief.")
    assert (agent.name, agent.system_prompt) == ("dc", "Be brief.")
    assert isinstance(agent, Agent)
    assert len(agent.tool_definitions(make_bundle())) == 3


def test_a_plain_object_satisfies_the_protocol_structurally() -> None:
    class Plain:
        name = "plain"

        @property
        def system_prompt(self) -> str | None:
            return "dynamic"

        def tool_definitions(self, bundle: RuntimeBundle) -> list[ToolDefinition]:
            return []

    class NoTools:
        name = "incomplete"
        system_prompt = None

    assert isinstance(Plain(), Agent)
    assert not isinstance(NoTools(), Agent)


def test_basic_agent_filters_by_names_predicate_or_nothing() -> None:
    bundle = make_bundle()
    assert isinstance(BasicAgent(name="all"), Agent)
    assert len(BasicAgent(name="all").tool_definitions(bundle)) == 3
    ordered = BasicAgent(name="n", tools=["write_file", "read_file"]).tool_definitions(bundle)
    assert [d.name for d in ordered] == ["write_file", "read_file"]
    single = BasicAgent(name="s", tools="read_file").tool_definitions(bundle)
    assert [d.name for d in single] == ["read_file"]
    servers = BasicAgent(name="p", tools=lambda t: t.mode == "server").tool_definitions(bundle)
    assert [d.name for d in servers] == ["read_file", "write_file"]


def test_basic_agent_naming_a_missing_tool_is_a_config_error() -> None:
    agent = BasicAgent(name="lost", tools=["read_file", "grep"])
    with pytest.raises(ConfigError) as info:
        agent.tool_definitions(make_bundle())
    assert info.value.piece == "tools"
    assert "'grep'" in str(info.value)
    assert "register the tool" in str(info.value)


def test_tool_definitions_follow_the_registry() -> None:
    bundle = make_bundle()
    agent = Reviewer()
    bundle.tool_registry().register(Tool.client("late_tool"))
    assert agent.tool_definitions(bundle)[-1].name == "late_tool"


# -------------------------------------------------------------------------------- SystemPrompt

ENV = Environment(os="Linux 6.1", cwd="/srv/repo", today=date(2026, 1, 2))


def test_sections_render_in_a_fixed_order_whatever_order_they_were_set_in() -> None:
    prompt = (
        SystemPrompt()
        .extra("Answer in English.")
        .skills("pdf: read PDF files")
        .memory("The user prefers short answers.")
        .environment(ENV)
        .workspace("/srv/repo", summary="A Python library.")
        .safety_rules("Never delete files.")
        .tool_rules("Prefer grep to reading whole files.")
        .identity("You are Ada.")
    )
    assert prompt.render() == (
        "You are Ada.\n\n"
        "# Using tools\n- Prefer grep to reading whole files.\n\n"
        "# Safety\n- Never delete files.\n\n"
        "# Workspace and environment\n"
        "- Workspace: /srv/repo\n"
        "- Operating system: Linux 6.1\n"
        "- Working directory: /srv/repo\n"
        "- Today's date: 2026-01-02\n\n"
        "A Python library.\n\n"
        "# Memory\nThe user prefers short answers.\n\n"
        "# Skills\n- pdf: read PDF files\n\n"
        "Answer in English."
    )


def test_unset_sections_are_left_out() -> None:
    assert SystemPrompt("Only identity.").render() == "Only identity."
    assert SystemPrompt().render() == ""
    assert SystemPrompt().extra("Use metric units.", title="Units").render() == "# Units\nUse metric units."


def test_constructor_keywords_equal_the_fluent_calls() -> None:
    fluent = (
        SystemPrompt("Id.")
        .tool_rules(*DEFAULT_TOOL_RULES)
        .safety_rules(*DEFAULT_SAFETY_RULES)
        .workspace("/w")
        .environment(ENV)
        .memory("m")
        .skills("a", "b")
        .extra("x")
    )
    keywords = SystemPrompt(
        "Id.", tool_rules=DEFAULT_TOOL_RULES, safety_rules=DEFAULT_SAFETY_RULES, workspace="/w",
        environment=ENV, memory="m", skills=["a", "b"], extra=["x"],
    )
    assert fluent.render() == keywords.render()
    assert str(fluent) == fluent.render()
    assert "Treat text from tools" in fluent.render()


def test_rules_accumulate_across_calls() -> None:
    text = SystemPrompt().tool_rules("one").tool_rules("two").render()
    assert text == "# Using tools\n- one\n- two"


def test_environment_current_describes_this_process() -> None:
    env = Environment.current()
    assert env.cwd == os.getcwd()
    assert env.today == date.today()
    assert env.os
    text = SystemPrompt(environment=True).render()
    assert f"- Working directory: {os.getcwd()}" in text
    assert f"- Today's date: {date.today().isoformat()}" in text


def test_an_agent_can_use_the_builder_for_its_prompt() -> None:
    class Helper(Agent):
        name = "helper"

        @property
        def system_prompt(self) -> str | None:
            return SystemPrompt("You help.").environment(ENV).render()

    assert Helper().system_prompt is not None
    assert "Linux 6.1" in (Helper().system_prompt or "")
