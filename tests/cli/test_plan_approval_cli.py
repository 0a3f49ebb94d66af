"""``agcore plan draft --read-only``, ``agcore plan run FILE --approve-plan`` and ``agcore run
--approve-plan``: the plan is shown, runs once approved (``--yes`` at once), is redrafted with
feedback, or stops with the reason, nothing executed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import finish, write_script
from tests.cli.conftest import Invoke, SpawnCli

PLAN = {"goal": "Write the notes", "steps": [{"id": "1", "description": "Write notes.txt"}]}
WRITE = {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "hi\n"}}]}


def plan_text(*steps: str) -> str:
    return json.dumps({"steps": [{"id": str(i + 1), "description": s} for i, s in enumerate(steps)]})


def test_plan_draft_read_only_explores_with_read_only_tools(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "app.py").write_text("def main(): pass\n")
    write_script(tmp_path, [
        # offered only the read-only tools while drafting: the reply comes only if the prompt says so
        {"expect": "read-only tools: read_file, list_dir, glob, grep",
         "tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
        {"expect": "app.py", "text": plan_text("Add a docstring to main in app.py")},
    ])
    done = invoke("plan", "draft", "document app.py", "--model", "scripted:model.json", "--no-plugins",
                  "--read-only")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "nothing is changed" in done.stdout
    assert "list_dir" in done.stdout  # the exploring call is shown
    assert "Add a docstring to main in app.py" in done.stdout


def test_plan_run_approve_plan_no_stops_with_nothing_executed(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    write_script(tmp_path, [WRITE, "Written."])
    done = invoke("plan", "run", "plan.json", "--model", "scripted:model.json", "--no-plugins",
                  "--approve-plan", input="n\n")
    assert done.exit_code == 1, done.stdout + done.stderr
    assert "Run this plan?" in done.stdout
    assert "The plan was rejected: stopped at the approval prompt. Nothing was executed." in done.stdout
    assert not (tmp_path / "notes.txt").exists()


def test_plan_run_approve_plan_yes_runs_it(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    write_script(tmp_path, [WRITE, "Written."])
    done = invoke("plan", "run", "plan.json", "--model", "scripted:model.json", "--no-plugins",
                  "--approve-plan", "--yes")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "approved (--yes)" in done.stdout
    assert (tmp_path / "notes.txt").read_text() == "hi\n"


def test_plan_run_revise_redrafts_with_the_feedback(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    write_script(tmp_path, [
        {"expect": "The user's feedback: call it README.txt", "text": plan_text("Write README.txt")},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "README.txt", "content": "hi\n"}}]},
        "Written.",
    ])
    # redraft with feedback, approve the new plan, allow its write
    done = invoke("plan", "run", "plan.json", "--model", "scripted:model.json", "--no-plugins",
                  "--approve-plan", input="r\ncall it README.txt\ny\ny\n")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert done.stdout.count("Run this plan?") == 2
    assert "Write README.txt" in done.stdout
    assert (tmp_path / "README.txt").read_text() == "hi\n"
    assert not (tmp_path / "notes.txt").exists()


def test_run_approve_plan_drafts_read_only_then_runs_once_approved(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [
        {"expect": "read-only tools", "text": plan_text("Write notes.txt")},
        WRITE, "Written.",
    ])
    done = invoke("run", "write the notes", "--model", "scripted:model.json", "--no-plugins",
                  "--approve-plan", input="y\ny\n")  # the plan, then the write
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "Run this plan?" in done.stdout
    assert "1/1 steps done (unchecked)" in done.stdout
    assert (tmp_path / "notes.txt").read_text() == "hi\n"


def test_run_approve_plan_with_intent_answers_chat_without_a_plan(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [{"expect": "The user is chatting", "text": "Hello!"}])
    done = invoke("run", "hello", "--model", "scripted:model.json", "--no-plugins", "--approve-plan",
                  "--intent", "keywords")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "Run this plan?" not in done.stdout
    assert "Hello!" in done.stdout


def test_approve_plan_refuses_what_it_cannot_do(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [{"text": "never"}])
    done = invoke("run", "x y", "--model", "scripted:model.json", "--approve-plan", "--image", "x.png")
    assert done.exit_code == 2
    assert "not with --temporal or --image" in done.stdout + done.stderr


def test_the_plan_is_edited_in_a_file_then_run(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    write_script(tmp_path, [
        {"expect": "Write CHANGES.txt",  # the step runs as edited
         "tool_calls": [{"name": "write_file", "arguments": {"path": "CHANGES.txt", "content": "hi\n"}}]},
        "Written.",
    ])
    child = spawn_cli("plan", "run", "plan.json", "--model", "scripted:model.json", "--no-plugins",
                      "--approve-plan")
    child.expect(r"Run this plan\?")
    child.sendline("e")
    child.expect(r"edit the plan in (\S+\.json), save it")
    edited = Path(child.match.group(1))
    edited.write_text(edited.read_text().replace("Write notes.txt", "Write CHANGES.txt"))
    child.sendline("")
    child.expect("Write CHANGES.txt")  # shown again, as edited
    child.expect(r"Run this plan\?")
    child.sendline("y")
    child.expect(r"Allow write_file")
    child.sendline("y")
    child.expect(r"1/1 steps done")
    assert finish(child) == 0
    assert (tmp_path / "CHANGES.txt").read_text() == "hi\n"
    assert not edited.exists()  # the file to edit is removed afterwards


def test_run_approve_plan_says_in_one_line_why_drafting_failed(tmp_path: Path, invoke: Invoke) -> None:
    """A server that is down while drafting: one line saying so (as `plan draft` says it), no
    traceback; the closing line of a plan that ran says how it went, as `plan run`'s does."""
    done = invoke("run", "write the notes", "--model", "openai-compatible:x", "--base-url",
                  "http://127.0.0.1:9/v1", "--no-plugins", "--approve-plan", "--yes")
    assert done.exit_code == 4, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "nothing is listening at http://127.0.0.1:9/v1" in done.stdout


def test_run_approve_plan_checks_the_steps_not_the_drafting(tmp_path: Path, invoke: Invoke) -> None:
    """--check runs when a step's agent says it is done, not on the read-only drafting turn, and the
    closing line says how the checks went."""
    write_script(tmp_path, [
        {"expect": "read-only tools", "text": plan_text("Write notes.txt")},
        WRITE, "Written.",
    ])
    done = invoke("run", "write the notes", "--model", "scripted:model.json", "--no-plugins",
                  "--approve-plan", "--yes", "--check", "test -f notes.txt", "--check-rounds", "0")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "1/1 steps done · checks passed" in done.stdout
    assert (tmp_path / "notes.txt").read_text() == "hi\n"
