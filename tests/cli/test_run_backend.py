"""``agcore run --backend langgraph``: the same coding turn, run on the LangGraph graph, asked on
the terminal as with agcore's own loop (LangGraph runs on asyncio; the CLI does too)."""

from __future__ import annotations

import time
from pathlib import Path

from tests.cli import finish, write_script
from tests.cli.conftest import Invoke, SpawnCli

WRITE = {"text": "Writing notes.", "tool_calls": [
    {"name": "write_file", "arguments": {"path": "notes.txt", "content": "hello from the graph"}}]}


def test_run_on_langgraph_asks_writes_and_summarises(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    write_script(tmp_path, [WRITE, {"text": "Wrote notes.txt."}])
    child = spawn_cli("run", "write notes", "--model", "scripted:model.json", "--no-plugins",
                      "--backend", "langgraph", timeout=30)
    child.expect("Writing notes.")
    child.expect(r"Allow write_file.*\[y = yes / n = no / a = always\]")
    child.sendline("y")
    child.expect("✓ Created 'notes.txt'")
    child.expect("Wrote notes.txt.")
    child.expect(r"✓ done \(unchecked\) · 2 model calls")
    assert finish(child) == 0
    assert (tmp_path / "notes.txt").read_text() == "hello from the graph"


def test_an_unknown_backend_is_a_usage_error_naming_the_installed_ones(
    tmp_path: Path, invoke: Invoke
) -> None:
    write_script(tmp_path, [{"text": "never"}])
    result = invoke("run", "hi", "--model", "scripted:model.json", "--no-plugins", "--backend", "nope")
    assert result.exit_code == 2  # a usage error, as the --temporal clash is
    assert "No session backend named 'nope'" in result.output
    assert "loop, langgraph" in result.output


def test_an_empty_or_abbreviated_backend_is_refused_before_anything_runs(
    tmp_path: Path, invoke: Invoke
) -> None:
    write_script(tmp_path, [{"text": "ran on the loop"}])
    empty = invoke("run", "hi", "--model", "scripted:model.json", "--no-plugins", "--backend", "")
    assert empty.exit_code == 2
    assert "No session backend named ''" in empty.output
    assert "ran on the loop" not in empty.output
    short = invoke("chat", "--model", "scripted:model.json", "--no-plugins", "--backend", "lg")
    assert short.exit_code == 2
    assert "Did you mean 'langgraph'?" in short.output
    assert "pip install" not in short.output  # it is installed


def test_ctrl_c_on_langgraph_cancels_with_exit_130_and_the_summary(
    tmp_path: Path, spawn_cli: SpawnCli
) -> None:
    write_script(tmp_path, [{"tool_calls": [{"name": "list_dir"}]}, {"text": "never shown", "delay": 20}])
    child = spawn_cli("run", "slow task", "--model", "scripted:model.json", "--no-plugins",
                      "--backend", "langgraph", timeout=30)
    child.expect(r"▸ list_dir\(\)")
    child.expect("✓ ")
    time.sleep(0.3)  # the turn is waiting for the model's second answer
    child.sendintr()
    child.expect("⏹ cancelled")
    assert finish(child) == 130
    assert "Traceback" not in (child.before or "")
    assert "AssertionError" not in (child.before or "")


def test_the_backend_names_are_public_once_and_the_cli_offers_them(invoke: Invoke) -> None:
    from importlib.metadata import entry_points

    from agcore.agent import LANGGRAPH_BACKEND, LOOP_BACKEND, AgentConfig, backend_names

    assert AgentConfig().backend == LOOP_BACKEND == "loop"
    # the name agcore's langgraph extra registers its session under is the public one
    assert LANGGRAPH_BACKEND in {entry.name for entry in entry_points(group="agcore.backends")}
    assert backend_names()[:2] == [LOOP_BACKEND, LANGGRAPH_BACKEND]
    helped = " ".join(invoke("run", "--help").output.split())
    assert f"The runtime: {LOOP_BACKEND} (agcore's own, the default) or {LANGGRAPH_BACKEND}" in helped
