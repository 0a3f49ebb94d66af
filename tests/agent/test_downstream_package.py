"""The downstream use, proven with a real installed package (tests/downstream_pkg): it subclasses
``Agent`` and ships a hook plugin through the ``agcore`` entry-point group, and agcore picks both up."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest

from agcore.agent import Agent, AgentBuilder, AgentSession, BasicAgent
from agcore.hooks import HookExecutor
from agcore.llm import ToolResultBlock
from agcore.testing import ScriptedProvider, tool_calls_reply
from agcore.tools import Workspace

downstream = pytest.importorskip(
    "agcore_downstream_example",
    reason="run `make .venv/.installed-stamp`: it installs tests/downstream_pkg for the tests",
)
plugin = pytest.importorskip("agcore_downstream_example.plugin")


def test_the_plugin_is_published_in_the_agcore_entry_point_group() -> None:
    names = {ep.name: ep.value for ep in entry_points(group="agcore")}
    assert names.get("review_guard") == "agcore_downstream_example.plugin"
    executor = HookExecutor()
    assert executor.load_entrypoints() >= 1
    assert any(info.plugin is plugin for info in executor.plugins())


def test_the_subclass_inherits_the_protocol_and_filters_tools(tmp_path: Path) -> None:
    agent = downstream.ReviewerAgent()
    assert isinstance(agent, Agent)
    bundle = AgentBuilder().provider(ScriptedProvider([])).tools(Workspace(tmp_path).tools()).build()
    offered = {d.name for d in agent.tool_definitions(bundle)}
    assert offered == set(downstream.READ_ONLY_TOOLS)
    assert "careful code reviewer" in (agent.system_prompt or "")


@pytest.mark.anyio
async def test_an_installed_plugin_steers_a_real_turn(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print('hi')\n")
    model = ScriptedProvider([
        tool_calls_reply([("read_file", {"path": "app.py"}),
                          ("write_file", {"path": "app.py", "content": ""})]),
        "app.py prints hi; I was not allowed to change it.",
    ])
    bundle = (AgentBuilder().provider(model).tools(Workspace(tmp_path, confirm_writes=False).tools())
              .plugins(entry_points=True).build())
    plugin.seen_turns.clear()
    # An agent named "reviewer" that offers every tool: the package's plugin is what stops the write.
    session = AgentSession(BasicAgent(name="reviewer"), "review-1", bundle)
    result = await session.submit_turn("Review app.py")
    assert result.text == "app.py prints hi; I was not allowed to change it."
    assert plugin.seen_turns == [("reviewer", 1)]  # turns count from 1
    read, write = tool_results(model)
    assert "print('hi')" in read.text
    assert not read.is_error
    assert write.is_error
    assert "the reviewer agent may only read" in write.text
    assert (tmp_path / "app.py").read_text() == "print('hi')\n"  # the denied write never happened


@pytest.mark.anyio
async def test_a_tool_the_subclass_does_not_offer_is_not_run(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print('hi')\n")
    model = ScriptedProvider([
        tool_calls_reply([("write_file", {"path": "app.py", "content": ""})]),
        "I cannot write here.",
    ])
    bundle = (AgentBuilder().provider(model).tools(Workspace(tmp_path, confirm_writes=False).tools())
              .build())  # no plugins: the agent's own tool filter is what refuses the call
    await AgentSession(downstream.ReviewerAgent(), "review-2", bundle).submit_turn("Empty app.py")
    (write,) = tool_results(model)
    assert write.is_error
    assert "'write_file' is not one of the tools available to you" in write.text
    assert "read_file" in write.text  # it names what the model may use instead
    assert (tmp_path / "app.py").read_text() == "print('hi')\n"


def tool_results(model: ScriptedProvider) -> list[ToolResultBlock]:
    content = model.requests[1].messages[-1].content
    assert isinstance(content, list)
    assert all(isinstance(block, ToolResultBlock) for block in content)
    return [block for block in content if isinstance(block, ToolResultBlock)]
