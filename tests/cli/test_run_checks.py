"""``agcore run TASK --check CMD``: the closing line says whether the work was checked and passed, in
a real subprocess with a scripted model and real check commands in the workspace's sandbox."""

from __future__ import annotations

from pathlib import Path

from tests.cli import finish, write_script
from tests.cli.conftest import Invoke, SpawnCli

CHECK = "python3 check_answer.py"
CHECK_SCRIPT = """\
import pathlib, sys
path = pathlib.Path("answer.txt")
if not path.exists() or path.read_text().strip() != "42":
    print("FAILED test_answer - answer.txt does not hold 42")
    sys.exit(1)
print("1 passed")
"""
WRITE_42 = {"tool_calls": [{"name": "write_file", "arguments": {"path": "answer.txt", "content": "42\n"}}]}


def test_a_check_that_fails_then_passes_ends_done_with_checks_passed(
    tmp_path: Path, spawn_cli: SpawnCli
) -> None:
    (tmp_path / "check_answer.py").write_text(CHECK_SCRIPT)
    # the second reply comes only if the model was shown the failing check's output
    write_script(tmp_path, [{"text": "Done."}, {**WRITE_42, "expect": "answer.txt does not hold 42"},
                            {"text": "Fixed."}])
    child = spawn_cli("run", "put 42 in answer.txt", "--model", "scripted:model.json", "--no-plugins",
                      "--yes", "--check", CHECK)
    child.expect(r"checks: 'python3 check_answer.py' \(up to 3 rounds of fixes\)")
    child.expect(r"⧗ check: python3 check_answer.py")
    child.expect(r"✗ check failed: python3 check_answer.py \(exit 1\)")
    child.expect("FAILED test_answer")
    child.expect(r"⧗ check: python3 check_answer.py \(round 2\)")
    child.expect(r"✓ check passed: python3 check_answer.py")
    child.expect(r"✓ done · checks passed · 3 model calls · ")
    assert finish(child) == 0


def test_a_check_that_keeps_failing_fails_the_task_with_exit_1(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "check_answer.py").write_text(CHECK_SCRIPT)
    # "Done again." with nothing changed since the failure is asked for the change once, unchecked.
    write_script(tmp_path, [{"text": "Done."}, {"text": "Done again."}, {"text": "Done, really."}])
    result = invoke("run", "put 42 in answer.txt", "--model", "scripted:model.json", "--no-plugins", "--yes",
                    "--check", CHECK, "--check-rounds", "1")
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert lines[-1].startswith("✗ failed · check 'python3 check_answer.py' exit 1 · 3 model calls · ")
    assert result.output.count("⧗ check: python3 check_answer.py") == 2
    assert "answer.txt does not hold 42" in result.output  # the error line carries the output
    assert "Done again." in lines  # each reply on a line of its own, not glued to the one before
    # each re-ask is said on a line of its own
    assert "↻ asked again: check failed: python3 check_answer.py (exit 1)" in lines
    assert "↻ asked again: it answered with nothing changed since the check failed" in lines


def test_a_reply_that_is_no_answer_is_said_to_be_asked_again(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [{"text": ""}, {"text": "All done."}])
    result = invoke("run", "say done", "--model", "scripted:model.json", "--no-plugins")
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines.index("↻ asked again: the reply was empty") < lines.index("All done.")


def test_without_checks_the_summary_says_unchecked(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [{"text": "All done."}])
    result = invoke("run", "say done", "--model", "scripted:model.json", "--no-plugins")
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("✓ done (unchecked) · no tool call succeeded · 1 model call · ")


def test_several_checks_run_in_order(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [{"text": "All done."}])
    result = invoke("run", "say done", "--model", "scripted:model.json", "--no-plugins",
                    "--check", "true", "--check", "test -d .")
    assert result.exit_code == 0, result.output
    assert result.output.index("⧗ check: true") < result.output.index("⧗ check: test -d .")
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("✓ done · checks passed · no tool call succeeded · 1 model call · ")


def test_check_is_refused_with_temporal(tmp_path: Path, invoke: Invoke) -> None:
    result = invoke("run", "say done", "--temporal", "localhost:7233", "--check", "true")
    assert result.exit_code == 2
    assert "--check" in result.output


PLAN_WITH_CHECKS = """\
goal: put 42 in answer.txt
check: python3 check_answer.py
steps:
  - id: write
    description: write 42 to answer.txt
    check: test -f answer.txt
"""


def test_plan_run_runs_the_plans_checks_and_says_so(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "check_answer.py").write_text(CHECK_SCRIPT)
    (tmp_path / "plan.yaml").write_text(PLAN_WITH_CHECKS)
    write_script(tmp_path, [{"text": "Done."},  # test -f fails: asked again
                            {**WRITE_42, "expect": "test -f answer.txt"}, {"text": "Written."}])
    result = invoke("plan", "run", "plan.yaml", "--model", "scripted:model.json", "--no-plugins", "--yes")
    assert result.exit_code == 0, result.output
    assert "✓ step write (1/1) done · checks passed: Written." in result.output
    assert "1/1 steps done · checks passed · 3 model calls · " in result.output


def test_plan_run_with_a_failing_check_names_it_and_exits_1(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "check_answer.py").write_text(CHECK_SCRIPT)
    (tmp_path / "plan.yaml").write_text(PLAN_WITH_CHECKS)
    (tmp_path / "answer.txt").write_text("41\n")
    write_script(tmp_path, [{"text": "Done."}] * 4)
    result = invoke("plan", "run", "plan.yaml", "--model", "scripted:model.json", "--no-plugins", "--yes")
    assert result.exit_code == 1, result.output
    assert "✗ step write (1/1) failed · check 'python3 check_answer.py' exit 1: " in result.output
    assert "0/1 steps done · failed · check 'python3 check_answer.py' exit 1 · 4 model calls" in result.output


def test_one_check_round_is_said_in_the_singular(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "check_answer.py").write_text(CHECK_SCRIPT)
    write_script(tmp_path, [WRITE_42, {"text": "Done."}])
    done = invoke("run", "put 42 in answer.txt", "--model", "scripted:model.json", "--no-plugins", "--yes",
                  "--check", CHECK, "--check-rounds", "1")
    assert done.exit_code == 0, done.output
    assert "(up to 1 round of fixes)" in done.output


def test_check_options_without_a_check_are_a_usage_error(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [{"text": "All done."}])
    for option, value in (("--check-rounds", "2"), ("--check-timeout", "30")):
        result = invoke("run", "say done", "--model", "scripted:model.json", "--no-plugins", option, value)
        assert result.exit_code == 2, result.output
        assert "only means something with --check: add --check CMD" in result.output
        assert option in result.output
        assert "All done." not in result.output  # refused before the model ran


def test_a_check_past_its_timeout_is_killed_and_fails_the_task(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [{"text": "Done."}])
    result = invoke("run", "say done", "--model", "scripted:model.json", "--no-plugins", "--yes",
                    "--check", "sleep 60", "--check-timeout", "0.5", "--check-rounds", "0")
    assert result.exit_code == 1, result.output
    assert "(up to 0 rounds of fixes, each stopped after 0.5s)" in result.output
    assert result.output.strip().splitlines()[-1].startswith(
        "✗ failed · check 'sleep 60' timed out after 0.5s · ")


def test_check_timeout_must_be_positive(tmp_path: Path, invoke: Invoke) -> None:
    result = invoke("run", "say done", "--check", "true", "--check-timeout", "0")
    assert result.exit_code == 2, result.output
    assert "--check-timeout" in result.output
