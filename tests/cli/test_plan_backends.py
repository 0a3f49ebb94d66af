"""``agcore plan run/resume/draft --backend langgraph``: the plan's steps run on GraphSessions through
``execute_plan``, with the loop backend's progress lines, checks, approvals and summary, saved in a
LangGraph SQLite checkpointer beside the session store, and continued by ``plan resume`` in a new run.
A session continues on the backend it was started on; combinations that cannot work say what to do."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path

import pytest

from tests.cli import finish, write_script
from tests.cli.conftest import Invoke, SpawnCli
from tests.cli.test_run_checks import CHECK_SCRIPT, PLAN_WITH_CHECKS, WRITE_42

TWO_STEPS = {"steps": [{"id": "a", "description": "Step A"},
                       {"id": "b", "description": "Step B", "depends_on": ["a"]}]}
WRITE = {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "hi\n"}}]}


def _without_ids(output: str) -> str:
    return re.sub(r"[0-9a-f]{32}", "ID", output)


def test_a_plan_with_checks_prints_the_same_lines_on_both_backends(tmp_path: Path, invoke: Invoke) -> None:
    outputs = {}
    for backend in ("loop", "langgraph"):
        (tmp_path / "answer.txt").unlink(missing_ok=True)
        (tmp_path / "check_answer.py").write_text(CHECK_SCRIPT)
        (tmp_path / "plan.yaml").write_text(PLAN_WITH_CHECKS)
        write_script(tmp_path, [{"text": "Done."},  # the step's check fails: asked again
                                {**WRITE_42, "expect": "test -f answer.txt"}, {"text": "Written."}])
        result = invoke("plan", "run", "plan.yaml", "--model", "scripted:model.json", "--no-plugins", "--yes",
                        "--backend", backend)
        assert result.exit_code == 0, result.output
        assert (tmp_path / "answer.txt").is_file(), result.output
        outputs[backend] = _without_ids(result.output)
    assert "✓ step write (1/1) done · checks passed: Written." in outputs["langgraph"]
    assert "1/1 steps done · checks passed · 3 model calls · " in outputs["langgraph"]
    assert outputs["langgraph"] == outputs["loop"]


def test_a_failed_plan_on_langgraph_resumes_from_its_checkpoint(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    write_script(tmp_path, ["A done.", {"error": {"status": 400, "message": "bad thing"}}], name="m1.json")
    done = invoke("plan", "run", "plan.json", "--session", "g-1", "--model", "scripted:m1.json",
                  "--no-plugins", "--backend", "langgraph")
    assert done.exit_code == 1, done.output
    assert "✓ step a (1/2) done: A done." in done.stdout
    assert "continue with: agcore plan resume g-1\n" in done.stdout
    home = tmp_path / "home"
    assert (home / "sessions.langgraph.db").is_file()
    assert not (home / "sessions.db").exists()  # the loop's store is not where a graph run lives
    with sqlite3.connect(home / "sessions.langgraph.db") as db:  # a real LangGraph checkpoint table
        assert db.execute("select count(*) from checkpoints where thread_id = 'g-1'").fetchone()[0] > 0
    # Another run (a new process for the checkpointer): step a is not redone, and no --backend is
    # needed: the session is found in the checkpoints. The script's one reply is step b's.
    write_script(tmp_path, [{"text": "B done.", "expect": "Step B"}], name="m2.json")
    done = invoke("plan", "resume", "g-1", "--model", "scripted:m2.json", "--no-plugins")
    assert done.exit_code == 0, done.output
    assert "continuing: 1/2 done" in done.stdout
    assert "step a (1/2)" not in done.stdout
    assert re.search(r"running \(attempt 2; the last one failed: .*bad thing", done.stdout)
    assert "2/2 steps done" in done.stdout
    calls = re.search(r"(\d+) model calls", done.stdout)
    assert calls is not None
    # The finished plan is in the checkpoint too: resuming it again calls the model no more.
    again = invoke("plan", "resume", "g-1", "--no-plugins", "--backend", "langgraph")
    assert again.exit_code == 0, again.output
    assert "continuing: 2/2 done" in again.stdout
    assert f"2/2 steps done (unchecked) · {calls.group(1)} model calls" in again.stdout


def test_plan_resume_keeps_options_and_model_on_langgraph(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    work = tmp_path / "work"
    work.mkdir()
    write_script(tmp_path, ["A done.", {"error": {"status": 400, "message": "bad"}}])
    done = invoke("plan", "run", "plan.json", "-s", "g-3", "--model", "scripted:model.json",
                  "--on-failure", "retry", "--workspace", str(work), "--no-plugins", "--backend", "langgraph")
    assert done.exit_code == 1, done.output
    write_script(tmp_path, [{"error": {"status": 529, "message": "busy"}}, "B done."])
    done = invoke("plan", "resume", "g-3", "--no-plugins")  # model, policy and workspace from the checkpoint
    assert done.exit_code == 0, done.output
    assert re.search(r"attempt 3; the last one failed: .*busy", done.stdout)
    assert "2/2 steps done" in done.stdout


@pytest.mark.parametrize(("started", "asked"), [("langgraph", "loop"), ("loop", "langgraph")])
def test_a_session_resumed_on_the_other_backend_is_refused_in_one_line(
    tmp_path: Path, invoke: Invoke, started: str, asked: str
) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    write_script(tmp_path, ["A done.", {"error": {"status": 400, "message": "bad"}}])
    assert invoke("plan", "run", "plan.json", "-s", "s-9", "--model", "scripted:model.json", "--no-plugins",
                  "--backend", started).exit_code == 1
    for command in (("plan", "resume", "s-9"), ("plan", "run", "plan.json", "-s", "s-9")):
        done = invoke(*command, "--model", "scripted:model.json", "--backend", asked)
        assert done.exit_code == 2
        assert (f"error: Session 's-9' was started on the {started} backend and continues only there"
                in done.stderr)
        assert f"use --backend {started}, or leave --backend out." in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_resuming_an_unknown_session_with_only_checkpoints_is_a_usage_error(
    tmp_path: Path, invoke: Invoke
) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    write_script(tmp_path, ["A.", "B."])
    assert invoke("plan", "run", "plan.json", "--model", "scripted:model.json", "--no-plugins",
                  "--backend", "langgraph").exit_code == 0
    done = invoke("plan", "resume", "nope", "--backend", "langgraph")
    assert done.exit_code == 2
    assert "No session 'nope'" in done.stderr


def test_plan_run_approve_plan_on_langgraph(tmp_path: Path, invoke: Invoke) -> None:
    plan = {"goal": "Write the notes", "steps": [{"id": "1", "description": "Write notes.txt"}]}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    write_script(tmp_path, [WRITE, "Written."])
    done = invoke("plan", "run", "plan.json", "--model", "scripted:model.json", "--no-plugins",
                  "--approve-plan", "--backend", "langgraph", input="y\ny\n")
    assert done.exit_code == 0, done.output
    assert "Run this plan?" in done.stdout
    assert "Allow write_file" in done.stdout  # the graph's confirmation interrupt, asked on the terminal
    assert "1/1 steps done (unchecked)" in done.stdout
    assert (tmp_path / "notes.txt").read_text() == "hi\n"


@pytest.mark.parametrize("backend", ["loop", "langgraph"])
def test_run_approve_plan_drafts_read_only_then_runs_the_steps_the_same_on_both_backends(
    tmp_path: Path, invoke: Invoke, backend: str
) -> None:
    (tmp_path / "app.py").write_text("def main(): pass\n")
    steps = json.dumps({"steps": [{"id": "1", "description": "Write notes.txt"}]})
    write_script(tmp_path, [
        # offered only the read-only tools while drafting: the reply comes only if the prompt says so
        {"expect": "read-only tools: read_file, list_dir, glob, grep",
         "tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
        {"expect": "app.py", "text": steps},
        WRITE, "Written.",
    ])
    done = invoke("run", "write notes", "--model", "scripted:model.json", "--no-plugins", "--approve-plan",
                  "--yes", "--backend", backend)
    assert done.exit_code == 0, done.output
    assert "approved (--yes)" in done.stdout
    assert "✓ step 1 (1/1) done: Written." in done.stdout
    assert "1/1 steps done (unchecked) · 4 model calls" in done.stdout  # the drafting counted too
    assert (tmp_path / "notes.txt").read_text() == "hi\n"


def test_plan_draft_read_only_on_langgraph_explores_then_prints_the_plan(
    tmp_path: Path, invoke: Invoke
) -> None:
    (tmp_path / "app.py").write_text("def main(): pass\n")
    write_script(tmp_path, [
        {"expect": "read-only tools: read_file, list_dir, glob, grep",
         "tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
        {"expect": "app.py", "text": json.dumps({"steps": [{"id": "1", "description": "Document main"}]})},
    ])
    done = invoke("plan", "draft", "document app.py", "--model", "scripted:model.json", "--no-plugins",
                  "--read-only", "--backend", "langgraph")
    assert done.exit_code == 0, done.output
    assert "list_dir" in done.stdout  # the exploring call is shown
    assert "Document main" in done.stdout


def test_plan_draft_on_langgraph_prints_the_plan(tmp_path: Path, invoke: Invoke) -> None:
    drafted = {"goal": "G", "steps": [{"id": "1", "description": "Do the thing"}]}
    write_script(tmp_path, [{"text": json.dumps(drafted)}])
    done = invoke("plan", "draft", "G", "--model", "scripted:model.json", "--no-plugins", "--backend",
                  "langgraph", "--save", "p.json")
    assert done.exit_code == 0, done.output
    assert "Do the thing" in done.stdout
    assert json.loads((tmp_path / "p.json").read_text())["steps"][0]["description"] == "Do the thing"


@pytest.mark.parametrize("command", [("run", "task"), ("plan", "run", "plan.json")])
def test_langgraph_with_temporal_is_refused_naming_the_alternatives(
    tmp_path: Path, invoke: Invoke, command: tuple[str, ...]
) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    done = invoke(*command, "--temporal", "localhost:7233", "--backend", "langgraph")
    assert done.exit_code == 2
    assert "'langgraph' cannot run on Temporal" in done.output
    assert "leave out --temporal" in done.output


@pytest.mark.parametrize("command", [("run", "task"), ("plan", "run", "plan.json")])
def test_agent_options_with_temporal_are_refused_as_the_workers_to_set(
    tmp_path: Path, invoke: Invoke, command: tuple[str, ...]
) -> None:
    # With --temporal the worker's bundle factory builds the agent: --model here would be ignored.
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    done = invoke(*command, "--temporal", "localhost:1", "--model", "openai:gpt-4.1", "--max-turns", "3")
    assert done.exit_code == 2
    assert "--model, --max-turns shape the agent" in done.output
    assert "agcore worker MODULE:FACTORY" in done.output


def test_an_unknown_backend_for_a_plan_names_the_installed_ones(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    write_script(tmp_path, ["never"])
    done = invoke("plan", "run", "plan.json", "--model", "scripted:model.json", "--no-plugins",
                  "--backend", "nope")
    assert done.exit_code == 2
    assert "No session backend named 'nope'" in done.output


def test_ctrl_c_during_a_langgraph_plan_stops_it_and_resume_redoes_only_that_step(
    tmp_path: Path, spawn_cli: SpawnCli
) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    write_script(tmp_path, ["A done.", {"text": "slow", "delay": 20}])
    child = spawn_cli("plan", "run", "plan.json", "--model", "scripted:model.json", "--no-plugins",
                      "--backend", "langgraph", timeout=30)
    child.expect(r"running: Step B")
    time.sleep(0.5)
    child.sendintr()
    child.expect("⏹ cancelled")
    child.expect("interrupted")  # step b, which the next run redoes
    child.expect(r"continue with: (agcore plan resume [0-9a-f]{32})\s")
    again = child.match.group(1)
    assert finish(child) == 130
    assert "Traceback" not in (child.before or "")
    # Step a is not redone: the one reply is step b's, and the cancelled turn is in the history.
    write_script(tmp_path, [{"text": "B done.", "expect": "Step B"}])
    child = spawn_cli(*again.split()[1:], timeout=30)
    child.expect("continuing: 1/2 done")
    child.expect(r"✓ step b \(2/2\) done: B done.")
    child.expect("2/2 steps done")
    assert finish(child) == 0


@pytest.mark.parametrize("backend", ["loop", "langgraph"])
def test_a_plan_killed_mid_step_resumes_the_same_on_both_backends(
    tmp_path: Path, spawn_cli: SpawnCli, backend: str
) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    write_script(tmp_path, [{"tool_calls": [{"name": "list_dir"}]}, {"text": "slow", "delay": 20}],
                 name="m1.json")
    child = spawn_cli("plan", "run", "plan.json", "--model", "scripted:m1.json", "--no-plugins", "--yes",
                      "--backend", backend, timeout=30)
    child.expect(r"session ([0-9a-f]{32})")
    session_id = child.match.group(1)
    child.expect(r"▸ list_dir\(\)")
    child.expect("✓ ")
    time.sleep(0.5)  # waiting for the model's second answer
    child.kill(9)  # no chance to save anything more
    child.close()
    # The step that was running runs again, then step b; no --backend: the session's own.
    write_script(tmp_path, [{"text": "A again.", "expect": "Step A"},
                            {"text": "B done.", "expect": "Step B"}], name="m2.json")
    child = spawn_cli("plan", "resume", session_id, "--model", "scripted:m2.json", "--no-plugins", "--yes",
                      timeout=30)
    child.expect(r"▶ step a \(1/2\) running \(attempt 2\): Step A")
    child.expect(r"✓ step a \(1/2\) done: A again.")
    child.expect(r"✓ step b \(2/2\) done: B done.")
    child.expect("2/2 steps done")
    assert finish(child) == 0


@pytest.mark.parametrize("backend", ["loop", "langgraph"])
def test_a_different_plan_on_a_session_names_the_db_in_the_resume_hint(
    tmp_path: Path, invoke: Invoke, backend: str
) -> None:
    # The hint is pasted as it is: without the --db that found the session, it would look elsewhere.
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    (tmp_path / "other.json").write_text(json.dumps({"steps": [{"id": "x", "description": "Other"}]}))
    write_script(tmp_path, ["A done.", "B done."])
    db = tmp_path / "elsewhere" / "plans.db"
    common = ("--model", "scripted:model.json", "--no-plugins", "--db", str(db), "-s", "s-1")
    assert invoke("plan", "run", "plan.json", *common, "--backend", backend).exit_code == 0
    done = invoke("plan", "run", "other.json", *common)
    assert done.exit_code == 2
    assert f"continue it with `agcore plan resume s-1 --db {db}`" in done.stderr


@pytest.mark.parametrize("backend", ["loop", "langgraph"])
def test_plan_resume_of_a_plan_still_running_is_refused(
    tmp_path: Path, spawn_cli: SpawnCli, invoke: Invoke, backend: str
) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    write_script(tmp_path, [{"text": "A done.", "delay": 30}])
    running = spawn_cli("plan", "run", "plan.json", "-s", "busy", "--model", "scripted:model.json",
                        "--no-plugins", "--backend", backend)
    running.expect(r"▶ step a \(1/2\) running")
    done = invoke("plan", "resume", "busy", "--model", "scripted:model.json", "--no-plugins")
    assert done.exit_code == 2, done.output
    assert f"Session 'busy' is in use by another agcore process (pid {running.pid})" in done.stderr
    running.kill(9)
    running.wait()
