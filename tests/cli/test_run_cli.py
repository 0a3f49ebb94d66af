"""``agcore run``, driven in a pseudo-terminal as a user would: confirmations, --yes, Ctrl-C, failures."""

from __future__ import annotations

import time
from pathlib import Path

import pexpect
import pytest

from tests.cli import finish, write_script
from tests.cli.conftest import Invoke, SpawnCli

WRITE = {"text": "Writing notes.", "tool_calls": [
    {"name": "write_file", "arguments": {"path": "notes.txt", "content": "hello from the agent"}}]}



def test_answering_yes_writes_the_file_and_shows_the_summary(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    review = {"text": '{"missing": "", "done": true}', "expect": "THE TASK:"}  # agcore run's review
    write_script(tmp_path, [WRITE, {"text": "Wrote notes.txt."}, review])
    child = spawn_cli("run", "write notes", "--model", "scripted:model.json", "--no-plugins")
    child.expect("Writing notes.")
    child.expect(r'▸ write_file\(path="notes.txt"')
    child.expect(r"Allow write_file.*\[y = yes / n = no / a = always\]")
    child.sendline("y")
    child.expect("✓ Created 'notes.txt'")
    child.expect("Wrote notes.txt.")
    child.expect(r"✓ done · reviewed · 2 model calls \(\+1 review call\) · [\d,]+ in / [\d,]+ out tokens · "
                 "cost unknown")
    assert finish(child) == 0
    assert (tmp_path / "notes.txt").read_text() == "hello from the agent"


def test_answering_no_writes_nothing_and_the_model_is_told(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    # The second reply only comes if the request the model gets holds the refusal.
    write_script(tmp_path, [WRITE, {"text": "Understood, not writing.", "expect": "did not approve"}])
    child = spawn_cli("run", "write notes", "--model", "scripted:model.json", "--no-plugins")
    child.expect("Allow write_file")
    child.sendline("n")
    child.expect("✗ not_approved: Not run: the user did not approve")
    child.expect("Understood, not writing.")
    assert finish(child) == 0
    assert not (tmp_path / "notes.txt").exists()


def test_always_approves_the_tool_for_the_rest_of_the_run(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    second = {"tool_calls": [{"name": "write_file", "arguments": {"path": "more.txt", "content": "again"}}]}
    write_script(tmp_path, [WRITE, second, {"text": "Both written."}])
    child = spawn_cli("run", "write two files", "--model", "scripted:model.json", "--no-plugins")
    child.expect("Allow write_file")
    child.sendline("a")
    child.expect("Both written.")
    child.expect(pexpect.EOF)
    assert child.before.count("Allow write_file") == 0  # asked once only (before this read)
    child.close()
    assert child.exitstatus == 0
    assert (tmp_path / "more.txt").read_text() == "again"


def test_an_unclear_answer_is_asked_again(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    write_script(tmp_path, [WRITE, {"text": "ok"}])
    child = spawn_cli("run", "write notes", "--model", "scripted:model.json", "--no-plugins")
    child.expect("Allow write_file")
    child.sendline("maybe")
    child.expect("Please answer one of")
    child.expect("Allow write_file")
    child.sendline("yes")
    assert finish(child) == 0
    assert (tmp_path / "notes.txt").exists()


def test_yes_flag_never_asks(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [WRITE, {"text": "Done."}])
    done = invoke("run", "write notes", "--model", "scripted:model.json", "--yes", "--no-plugins")
    assert done.exit_code == 0, done.stderr
    assert "Allow" not in done.stdout
    assert "Done." in done.stdout
    assert (tmp_path / "notes.txt").read_text() == "hello from the agent"


def test_workspace_option_points_the_tools_elsewhere(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "ws").mkdir()
    write_script(tmp_path, [WRITE, {"text": "Done."}])
    done = invoke("run", "x", "--model", "scripted:model.json", "--yes", "--no-plugins",
                "--workspace", "ws")
    assert done.exit_code == 0, done.stderr
    assert (tmp_path / "ws" / "notes.txt").exists()
    assert not (tmp_path / "notes.txt").exists()
    missing = invoke("run", "x", "--model", "scripted:model.json", "--workspace", "nope")
    assert missing.exit_code == 2
    assert "--workspace" in missing.stderr
    assert "no such directory" in missing.stderr


def test_ctrl_c_cancels_the_run_with_exit_130(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    write_script(tmp_path, [{"tool_calls": [{"name": "list_dir"}]}, {"text": "never shown", "delay": 20}])
    child = spawn_cli("run", "slow task", "--model", "scripted:model.json", "--no-plugins")
    child.expect(r"▸ list_dir\(\)")
    child.expect("✓ ")
    time.sleep(0.2)  # the turn is waiting for the model's second answer
    child.sendintr()
    child.expect("⏹ cancelled")
    assert "^C" not in child.after  # the echoed ^C stays on its own line, not before the summary
    assert (child.before or "").rstrip(" ").endswith("\n")
    assert finish(child) == 130
    assert "Traceback" not in (child.before or "")


def test_entry_point_plugins_are_active_unless_no_plugins(tmp_path: Path, invoke: Invoke) -> None:
    # The test venv has agcore_downstream_example installed; its plugin records the turns it sees.
    from agcore_downstream_example import plugin

    write_script(tmp_path, ["one", "two"])
    plugin.seen_turns.clear()
    assert invoke("run", "hi", "--model", "scripted:model.json").exit_code == 0
    assert [agent for agent, _ in plugin.seen_turns] == ["agcore"]
    plugin.seen_turns.clear()
    assert invoke("run", "hi", "--model", "scripted:model.json", "--no-plugins").exit_code == 0
    assert plugin.seen_turns == []


def test_missing_api_key_names_the_variable_and_exits_3(tmp_path: Path, invoke: Invoke) -> None:
    done = invoke("run", "hi", "--model", "anthropic:claude-haiku-4-5")
    assert done.exit_code == 3
    assert "ANTHROPIC_API_KEY" in done.stderr
    assert "Traceback" not in done.stderr


def test_no_model_at_all_says_what_to_set(tmp_path: Path, invoke: Invoke) -> None:
    done = invoke("run", "hi")
    assert done.exit_code == 3
    assert "ANTHROPIC_API_KEY or OPENAI_API_KEY" in done.stderr
    assert "--model" in done.stderr


def test_bad_script_file_is_a_configuration_error(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "model.json").write_text("[{\"txt\": 1}]")
    done = invoke("run", "hi", "--model", "scripted:model.json")
    assert done.exit_code == 3
    assert "unknown key" in done.stderr
    assert "Traceback" not in done.stderr


def test_unreachable_endpoint_names_the_url_and_exits_4(tmp_path: Path, invoke: Invoke) -> None:
    done = invoke("run", "hi", "--model", "some-local-model", "--base-url",
                "http://127.0.0.1:9/v1", "--no-plugins")
    assert done.exit_code == 4, done.stdout + done.stderr
    assert "nothing is listening at http://127.0.0.1:9/v1" in done.stdout  # loopback: said at once
    assert "Traceback" not in done.stdout + done.stderr


def test_api_error_from_the_provider_exits_4(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [{"error": {"status": 529, "message": "overloaded right now"}}])
    done = invoke("run", "hi", "--model", "scripted:model.json", "--no-plugins")
    assert done.exit_code == 4
    assert "✗ failed" in done.stdout
    assert "overloaded right now" in done.stdout


def test_piped_answers_are_read_and_echoed(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [WRITE, {"text": "Fine, no file."}])
    done = invoke("run", "write notes", "--model", "scripted:model.json", "--no-plugins", input="n\n")
    assert done.exit_code == 0
    assert "[y = yes / n = no / a = always] n\n" in done.stdout
    assert "✗ not_approved" in done.stdout
    assert not (tmp_path / "notes.txt").exists()


# ------------------------------------------------------------------- what a new user trips on


def test_an_empty_task_is_refused_at_once(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [{"text": "never asked"}])
    done = invoke("run", "  ", "--model", "scripted:model.json")
    assert done.exit_code == 2
    assert "TASK" in done.stderr
    assert "it is empty" in done.stderr


@pytest.mark.parametrize("url", ["not-a-url", "ftp://example.com/v1", "http://"])
def test_a_malformed_base_url_is_a_usage_error_before_any_request(
    tmp_path: Path, invoke: Invoke, url: str
) -> None:
    started = time.monotonic()
    done = invoke("run", "hi", "--model", "qwen", "--base-url", url, "--no-plugins")
    assert done.exit_code == 2, done.stdout + done.stderr
    assert "http:// or https://" in done.stderr
    assert "retrying" not in done.stdout + done.stderr  # it used to be retried as a transient failure
    assert time.monotonic() - started < 3


def test_the_missing_key_message_speaks_to_a_cli_user(tmp_path: Path, invoke: Invoke) -> None:
    done = invoke("run", "hi", "--model", "openai:gpt-4.1")
    assert done.exit_code == 3
    assert "export OPENAI_API_KEY=" in done.stderr
    assert "api_key=" not in done.stderr  # a CLI user passes no arguments to a class


def test_a_misspelt_vendor_gets_did_you_mean(tmp_path: Path, invoke: Invoke) -> None:
    done = invoke("run", "hi", "--model", "antropic:claude-haiku-4-5")
    assert done.exit_code == 3
    assert "did you mean 'anthropic'" in done.stderr


def test_a_misspelt_model_gets_did_you_mean(tmp_path: Path, invoke: Invoke) -> None:
    done = invoke("run", "hi", "--model", "claude-haku-4-5")
    assert done.exit_code == 3
    assert "did you mean --model claude-haiku-4-5?" in done.stderr


def test_running_out_of_scripted_replies_is_a_usage_error(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [{"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]}])
    done = invoke("run", "look around", "--model", "scripted:model.json", "--no-plugins")
    assert done.exit_code == 2, done.stdout
    assert "holds only 1 reply" in done.stdout
    assert "model.json" in done.stdout
    assert "ScriptedProvider" not in done.stdout  # no Python advice for a CLI user
    assert "provider's configuration" not in done.stdout
    assert "1 model call ·" not in done.stdout
    assert "2 model calls ·" in done.stdout


def test_an_empty_script_file_is_refused(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "model.json").write_text('{"replies": []}')
    done = invoke("run", "hi", "--model", "scripted:model.json")
    assert done.exit_code == 3
    assert "holds no replies" in done.stderr


def test_the_help_names_the_task_argument_as_the_docs_do(tmp_path: Path, invoke: Invoke) -> None:
    done = invoke("run", "--help")
    assert "TASK" in done.stdout
    assert "{task}" not in done.stdout


def test_an_unmet_script_expectation_is_a_usage_error(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [{"text": "hello", "expect": "banana"}])
    done = invoke("run", "say hi", "--model", "scripted:model.json", "--no-plugins")
    assert done.exit_code == 2, done.stdout
