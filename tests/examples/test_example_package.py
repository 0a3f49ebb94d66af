"""The example package (examples/agcore_example_pkg), installed as a user installs it: its plugin is
found through the ``agcore`` entry point, its ``Agent`` subclass filters tools, and its plugins steer
and count a real turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from agcore.agent import Agent, AgentBuilder, AgentSession
from agcore.hooks import HookExecutor
from agcore.llm import ToolResultBlock
from agcore.memory import InMemoryStore, KeywordRetriever
from agcore.testing import ScriptedProvider, tool_calls_reply
from agcore.tools import Workspace

example = pytest.importorskip(
    "agcore_example",
    reason="run `make .venv/.installed-stamp`: it installs examples/agcore_example_pkg for the tests",
)


def test_the_package_plugin_is_found_through_its_entry_point() -> None:
    executor = HookExecutor(load_entrypoints=True)
    found = {info.name: info for info in executor.plugins()}
    assert found["example_protected_paths"].plugin is example.protected_paths
    assert found["example_protected_paths"].hooks == ("before_tool_call",)


def test_docs_agent_subclasses_agent_and_filters_its_tools(tmp_path: Path) -> None:
    agent = example.DocsAgent(tmp_path, style="Short sentences. American spelling.")
    assert isinstance(agent, Agent)
    prompt = agent.system_prompt or ""
    for section in ("You are a technical writer.", "# Using tools", "# Safety", "# Memory",
                    f"- Workspace: {tmp_path}", "# House style\nShort sentences."):
        assert section in prompt
    bundle = (AgentBuilder().provider(ScriptedProvider([])).tools(Workspace(tmp_path).tools())
              .retriever(KeywordRetriever(InMemoryStore())).build())
    offered = [d.name for d in agent.tool_definitions(bundle)]
    assert set(offered) == example.DocsAgent.TOOLS
    assert "run_command" not in offered


@pytest.mark.anyio
async def test_protected_paths_denies_writes_and_the_tally_counts_them(tmp_path: Path) -> None:
    (tmp_path / "LICENSE").write_text("MIT\n")
    patch = ("--- a/.github/workflows/ci.yml\n+++ b/.github/workflows/ci.yml\n@@ -1 +1 @@\n-a\n+b\n")
    model = ScriptedProvider([
        tool_calls_reply([("write_file", {"path": "docs/index.md", "content": "# Docs\n"}),
                          ("write_file", {"path": "./LICENSE", "content": "mine now\n"}),
                          ("apply_patch", {"patch": patch})]),
        "Wrote docs/index.md; LICENSE and the CI workflow are protected.",
    ])
    policy, tally = example.ProtectedPaths(), example.ToolTally()
    bundle = (AgentBuilder().provider(model).tools(Workspace(tmp_path, confirm_writes=False).tools())
              .plugins(policy, tally).build())
    session = AgentSession(example.DocsAgent(tmp_path), "docs-1", bundle)
    result = await session.submit_turn("Start the docs")
    assert result.ok
    assert (tmp_path / "docs" / "index.md").read_text() == "# Docs\n"
    assert (tmp_path / "LICENSE").read_text() == "MIT\n"
    results = model.requests[1].messages[-1].content
    assert isinstance(results, list)
    blocks = [r for r in results if isinstance(r, ToolResultBlock)]
    assert [r.is_error for r in blocks] == [False, True, True]
    assert "./LICENSE is protected (matches 'LICENSE*')" in blocks[1].text
    assert policy.denials == [("write_file", "./LICENSE"), ("apply_patch", ".github/workflows/ci.yml")]
    assert tally.summary() == "write_file x2 (1 denied), apply_patch x1 (1 denied)"


def test_patch_paths_reads_the_files_a_diff_touches() -> None:
    diff = "--- /dev/null\n+++ b/new.md\n@@ -0,0 +1 @@\n+x\n--- a/old.txt\t2024-01-01\n+++ /dev/null\n"
    assert example.plugins.patch_paths(diff) == ["new.md", "old.txt"]
