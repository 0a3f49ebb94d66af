"""``agcore plan run`` and ``agcore plan draft``: progress, the status table, files written, exit codes."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from agcore.agent import Plan
from tests.cli import finish, write_script
from tests.cli.conftest import Invoke, SpawnCli

PLAN_YAML = """\
goal: Write a greeting and check it
steps:
  - id: write
    description: Write hello.txt with a greeting
    tool_hints: [write_file]
  - id: check
    description: Show the file's content
    depends_on: [write]
"""

STEP_REPLIES = [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "hello.txt", "content": "hi there"}}]},
    {"text": "hello.txt written."},
    {"tool_calls": [{"name": "run_command", "arguments": {"command": "cat hello.txt"}}]},
    {"text": "It says hi there.", "expect": "hi there"},
]



def test_plan_run_shows_progress_a_final_table_and_writes_files(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    (tmp_path / "plan.yaml").write_text(PLAN_YAML)
    write_script(tmp_path, STEP_REPLIES)
    child = spawn_cli("plan", "run", "plan.yaml", "--model", "scripted:model.json", "--no-plugins")
    child.expect("plan plan.yaml: 2 steps · goal: Write a greeting and check it")
    child.expect(r"▶ step write \(1/2\) running: Write hello.txt")
    child.expect(r'▸ write_file\(path="hello.txt"')
    child.expect("Allow write_file")  # plan steps ask too, without --yes
    child.sendline("y")
    child.expect(r"✓ step write \(1/2\) done: hello.txt written.")
    child.expect(r"▶ step check \(2/2\) running")
    child.expect("Allow run_command")
    child.sendline("y")
    child.expect(r"✓ \$ cat hello.txt → exit code: 0")
    child.expect(r"✓ step check \(2/2\) done: It says hi there.")
    child.expect("plan status")
    child.expect(r"│ write\s+│ Write hello.txt with a greeting\s+│ done\s+│\s+1 │ hello.txt written.")
    child.expect(r"│ check\s+│ Show the file's content\s+│ done\s+│\s+1 │ It says hi there.")
    child.expect(r"2/2 steps done \(unchecked\) · 4 model calls")
    assert finish(child) == 0
    assert (tmp_path / "hello.txt").read_text() == "hi there"


def test_a_failed_step_skips_its_dependents_and_exits_1(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "plan.yaml").write_text(PLAN_YAML)
    write_script(tmp_path, [{"error": {"status": 400, "message": "bad request from the model"}}])
    done = invoke("plan", "run", "plan.yaml", "--model", "scripted:model.json", "--yes",
                "--no-plugins")
    assert done.exit_code == 1, done.stdout + done.stderr
    assert re.search(r"✗ step write \(1/2\) failed: .*bad request from the model", done.stdout)
    assert re.search(r"- step check \(2/2\) skipped: step write .* failed", done.stdout)
    assert re.search(r"│ write\s+│.*│ failed\s+│", done.stdout)
    assert re.search(r"│ check\s+│.*│ skipped\s+│", done.stdout)
    assert "0/2 steps done" in done.stdout


def test_a_bad_plan_file_shows_the_parse_error_and_exits_2(tmp_path: Path, invoke: Invoke) -> None:
    bad = {"steps": [{"id": 1, "description": "x", "depends_on": [7]}]}
    (tmp_path / "plan.json").write_text(json.dumps(bad))
    done = invoke("plan", "run", "plan.json", "--model", "scripted:none.json")
    assert done.exit_code == 2
    assert "depends_on refers to unknown step '7'" in done.stderr
    (tmp_path / "broken.yaml").write_text("steps: [unclosed\n")
    done = invoke("plan", "run", "broken.yaml")
    assert done.exit_code == 2
    assert "not valid YAML" in done.stderr
    assert 'in "broken.yaml", line 1' in done.stderr  # the file is named, not "<unicode string>"
    assert "<unicode string>" not in done.stderr
    assert "Traceback" not in done.stderr
    done = invoke("plan", "run", "missing.json")
    assert done.exit_code == 2
    assert "does not exist" in done.stderr


def test_ctrl_c_during_a_plan_stops_it_with_exit_130(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    (tmp_path / "plan.yaml").write_text(PLAN_YAML)
    write_script(tmp_path, [{"text": "slow", "delay": 20}])
    child = spawn_cli("plan", "run", "plan.yaml", "--model", "scripted:model.json", "--no-plugins")
    child.expect("running")
    time.sleep(0.5)
    child.sendintr()
    child.expect("⏹ cancelled")
    child.expect("plan status")
    child.expect("interrupted")  # the step that was running; the next run redoes it
    child.expect(r"continue with: agcore plan resume [0-9a-f]{32}\s")
    assert finish(child) == 130


def test_plan_draft_prints_the_plan_and_saves_it_for_plan_run(tmp_path: Path, invoke: Invoke) -> None:
    drafted = {"goal": "Greet", "steps": [
        {"id": "1", "description": "Write hello.txt", "tool_hints": ["write_file"]},
        {"id": "2", "description": "Read it back [twice]", "depends_on": ["1"]},  # not rich markup
    ]}
    write_script(tmp_path, [{"text": "```json\n" + json.dumps(drafted) + "\n```"}], name="draft.json")
    done = invoke("plan", "draft", "Greet the user in a file", "--model", "scripted:draft.json",
                "--save", "greet.yaml")
    assert done.exit_code == 0, done.stderr
    assert re.search(r"│ 1\s+│ Write hello.txt\s+│\s+│ write_file", done.stdout)
    assert re.search(r"│ 2\s+│ Read it back \[twice\]\s+│ 1\s+│", done.stdout)
    assert "saved to greet.yaml" in done.stdout
    saved = Plan.load(tmp_path / "greet.yaml")
    assert [(s.id, s.description, s.depends_on) for s in saved.steps] == [
        ("1", "Write hello.txt", []), ("2", "Read it back [twice]", ["1"])]

    write_script(tmp_path, [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "hello.txt", "content": "hi"}}]},
        "Step one done.", "Step two done."], name="steps.json")
    done = invoke("plan", "run", "greet.yaml", "--model", "scripted:steps.json", "--no-plugins", "--yes")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "2/2 steps done" in done.stdout


def test_plan_run_fails_a_step_the_model_only_claims_to_have_done(tmp_path: Path, invoke: Invoke) -> None:
    # A small model's usual false success: it says the file is written, and calls nothing.
    (tmp_path / "plan.yaml").write_text(PLAN_YAML)
    write_script(tmp_path, ["I have written hello.txt with a greeting."])
    done = invoke("plan", "run", "plan.yaml", "--model", "scripted:model.json", "--yes", "--no-plugins")
    assert done.exit_code == 1, done.stdout + done.stderr
    assert re.search(r"✗ step write \(1/2\) failed: not done: the turn made no tool calls, though the step "
                     r"needs its tools \(write_file\)", done.stdout)
    assert re.search(r"│ write\s+│.*│ failed\s+│\s+1 │ not done: the turn made no tool calls", done.stdout)
    assert "0/2 steps done" in done.stdout
    assert not (tmp_path / "hello.txt").exists()


def test_plan_draft_prints_what_it_mended_in_the_models_plan(tmp_path: Path, invoke: Invoke) -> None:
    drafted = {"steps": [{"id": "1", "description": "Install requests", "depends_on": ["pip"]},
                         {"id": "2", "description": "Fetch the page", "depends_on": ["1"]}]}
    write_script(tmp_path, [{"text": json.dumps(drafted)}])
    done = invoke("plan", "draft", "Fetch a page", "--model", "scripted:model.json")
    assert done.exit_code == 0, done.stderr
    assert ("! step 1 ('Install requests'): depends_on 'pip' is not the id of a step (the ids are ['1', "
            "'2']); it was dropped") in done.stdout


def test_plan_draft_saves_json_and_rejects_other_suffixes(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, ['{"steps": ["only step"]}'])
    done = invoke("plan", "draft", "g", "--model", "scripted:model.json", "--save", "p.json")
    assert done.exit_code == 0, done.stderr
    assert json.loads((tmp_path / "p.json").read_text())["steps"] == [{"id": "1", "description": "only step"}]
    done = invoke("plan", "draft", "g", "--model", "scripted:model.json", "--save", "p.txt")
    assert done.exit_code == 2
    assert ".json, .yaml or .yml" in done.stderr


def test_plan_draft_that_the_model_cannot_produce_exits_1(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, ["I would rather not.", "Still no plan."])
    done = invoke("plan", "draft", "g", "--model", "scripted:model.json")
    assert done.exit_code == 1
    assert "could not be read" in done.stderr


def test_an_unreadable_draft_is_reported_once_with_what_to_do(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, ["I would rather not plan.", "Still no plan, sorry."])
    done = invoke("plan", "draft", "do something", "--model", "scripted:model.json", "--no-plugins")
    assert done.exit_code == 1
    assert done.stderr.count("could not be read") == 1  # it used to say so three times
    assert "even when asked again: it contains no JSON plan" in done.stderr
    assert "--model" in done.stderr


def test_a_retried_step_says_why_the_last_attempt_failed(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "plan.json").write_text(json.dumps({"steps": [{"id": "fetch", "description": "Fetch it"}]}))
    write_script(tmp_path, [{"error": {"status": 529, "message": "overloaded right now"}}, "Fetched."])
    done = invoke("plan", "run", "plan.json", "--model", "scripted:model.json", "--on-failure", "retry",
                  "--no-plugins")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert re.search(r"running \(attempt 2; the last one failed: .*overloaded right now", done.stdout)
    assert "1/1 steps done" in done.stdout


TWO_STEPS = {"steps": [{"id": "a", "description": "Step A"},
                       {"id": "b", "description": "Step B", "depends_on": ["a"]}]}


def test_a_failed_plan_continues_where_it_stopped(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    write_script(tmp_path, ["A done.", {"error": {"status": 400, "message": "bad thing"}}], name="m1.json")
    done = invoke("plan", "run", "plan.json", "--session", "s-1", "--model", "scripted:m1.json",
                  "--no-plugins")
    assert done.exit_code == 1
    assert "continue with: agcore plan resume s-1\n" in done.stdout  # the options are remembered
    # Step a is not redone: the one reply this script holds is step b's, and asking the model
    # anything else would run the script out (exit 2).
    write_script(tmp_path, [{"text": "B done.", "expect": "Step B"}], name="m2.json")
    done = invoke("plan", "resume", "s-1", "--model", "scripted:m2.json", "--no-plugins")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "continuing: 1/2 done" in done.stdout
    assert "step a (1/2)" not in done.stdout  # not run, not even announced again
    assert re.search(r"running \(attempt 2; the last one failed: .*bad thing", done.stdout)
    assert "2/2 steps done" in done.stdout
    assert "continue with" not in done.stdout


def test_the_same_run_command_continues_its_session(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    write_script(tmp_path, ["A done.", {"error": {"status": 400, "message": "bad"}}], name="m1.json")
    assert invoke("plan", "run", "plan.json", "-s", "s-2", "--model", "scripted:m1.json",
                  "--no-plugins").exit_code == 1
    write_script(tmp_path, ["B done."], name="m2.json")
    done = invoke("plan", "run", "plan.json", "-s", "s-2", "--model", "scripted:m2.json", "--no-plugins")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "2/2 steps done" in done.stdout
    other = {"steps": [{"id": "x", "description": "Something else"}]}
    (tmp_path / "other.json").write_text(json.dumps(other))
    done = invoke("plan", "run", "other.json", "-s", "s-2", "--model", "scripted:m2.json", "--no-plugins")
    assert done.exit_code == 2
    assert "holds a different plan" in done.stderr


def test_resuming_what_is_not_there_is_a_usage_error(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, ["unused"])
    done = invoke("plan", "resume", "nope", "--model", "scripted:model.json")
    assert done.exit_code == 2
    assert "No session database" in done.stderr
    assert not (tmp_path / "home" / "sessions.db").exists()
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    write_script(tmp_path, ["A.", "B."])
    assert invoke("plan", "run", "plan.json", "--model", "scripted:model.json").exit_code == 0
    done = invoke("plan", "resume", "nope", "--model", "scripted:model.json")
    assert done.exit_code == 2
    assert "No session 'nope'" in done.stderr
    done = invoke("plan", "resume", "nope")  # no --model and no key: the session is looked up first
    assert done.exit_code == 2
    assert "No session 'nope'" in done.stderr


def test_plan_draft_save_does_not_create_directories(tmp_path: Path, invoke: Invoke) -> None:
    drafted = {"goal": "G", "steps": [{"id": "1", "description": "Do it"}]}
    write_script(tmp_path, [{"text": json.dumps(drafted)}])
    done = invoke("plan", "draft", "G", "--model", "scripted:model.json", "--save", "nowhere/p.yaml")
    assert done.exit_code == 2
    assert "does not exist" in done.stderr
    assert not (tmp_path / "nowhere").exists()


def test_plan_resume_keeps_the_options_the_run_started_with(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(TWO_STEPS))
    work = tmp_path / "work"
    work.mkdir()
    # Step b fails twice with a transient error: with the remembered --on-failure retry, the resume
    # retries it (once more than the one retry left would allow under "stop").
    write_script(tmp_path, ["A done.", {"error": {"status": 400, "message": "bad"}}])
    done = invoke("plan", "run", "plan.json", "-s", "s-3", "--model", "scripted:model.json",
                  "--on-failure", "retry", "--workspace", str(work), "--no-plugins")
    assert done.exit_code == 1
    write_script(tmp_path, [{"error": {"status": 529, "message": "busy"}}, "B done."])
    done = invoke("plan", "resume", "s-3", "--no-plugins")  # no --model, no --on-failure, no --workspace
    assert done.exit_code == 0, done.stdout + done.stderr
    assert re.search(r"attempt 3; the last one failed: .*busy", done.stdout)  # retried: the policy held
    assert "2/2 steps done" in done.stdout


def test_the_status_table_shows_a_failure_cause_whole(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "plan.yaml").write_text(PLAN_YAML)
    cause = ("the request was refused because the tool schema for write_file declares an argument the "
             "server does not accept (AttributeError: 'UserMessage' object has no attribute 'text')")
    write_script(tmp_path, [{"error": {"status": 400, "message": cause}}])
    done = invoke("plan", "run", "plan.yaml", "--model", "scripted:model.json", "--yes", "--no-plugins")
    assert done.exit_code == 1, done.stdout + done.stderr
    table = done.stdout[done.stdout.index("plan status"):]
    outcome = " ".join(row.split("│")[5].strip() for row in table.splitlines() if row.count("│") == 6)
    assert "(AttributeError: 'UserMessage' object has no attribute 'text')" in " ".join(outcome.split())
    assert "…" not in table
