"""``agcore chat --backend langgraph`` in a pseudo-terminal: the conversation is a LangGraph thread in
a SQLite checkpointer beside the session store (thread id = session id), resumed by id in another
process; a session continues only on the backend it was started on."""

from __future__ import annotations

import io
import shlex
import sqlite3
import time
from pathlib import Path

import pytest

from tests.cli import finish, write_script
from tests.cli.conftest import SpawnCli

PROMPT = "you> "
RESUME = r"session ([0-9a-f]{32}) · resume with: (agcore chat --session \1[^\r\n]*)"


def _start(spawn_cli: SpawnCli, *args: str) -> tuple[object, str, str]:
    child = spawn_cli("chat", "--no-plugins", *args, timeout=30)
    child.expect(RESUME)
    return child, child.match.group(1), child.match.group(2)


def test_a_langgraph_chat_resumes_by_id_in_another_process(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    # The one reply comes only if the request holds "banana", which the second process's question
    # does not: only the history loaded from the checkpoint does.
    write_script(tmp_path, [{"text": "Noted: banana.", "expect": "banana"}], name="first.json")
    db = tmp_path / "chats.db"
    child, session_id, printed = _start(spawn_cli, "--model", "scripted:first.json", "--db", str(db),
                                        "--backend", "langgraph")
    assert "--backend langgraph" in printed
    child.expect(PROMPT)
    child.sendline("remember the word banana")
    child.expect("Noted: banana.")
    child.expect(PROMPT)
    child.sendeof()
    assert finish(child) == 0
    checkpoints = tmp_path / "chats.langgraph.db"  # beside --db, named after it
    with sqlite3.connect(checkpoints) as saved:
        assert saved.execute("select count(*) from checkpoints where thread_id = ?",
                             (session_id,)).fetchone()[0] > 0
    assert not db.exists()

    child = spawn_cli(*shlex.split(printed)[1:], timeout=30)  # pasted: everything after "agcore"
    child.expect(f"resumed session {session_id}")
    child.expect("you: remember the word banana")
    child.expect("assistant: Noted: banana.")
    child.expect(PROMPT)
    child.sendline("what word?")
    child.expect("Noted: banana.")
    child.expect(r"✓ done")
    child.expect(PROMPT)
    child.sendeof()
    assert finish(child) == 0


def test_a_new_langgraph_chat_can_be_resumed_before_its_first_turn(
    tmp_path: Path, spawn_cli: SpawnCli
) -> None:
    write_script(tmp_path, ["hello"])
    child, session_id, _ = _start(spawn_cli, "--model", "scripted:model.json", "--backend", "langgraph")
    child.expect(PROMPT)
    child.sendeof()
    assert finish(child) == 0
    # Without --backend: the session is found in the checkpoints and continues there.
    child = spawn_cli("chat", "--session", session_id, "--model", "scripted:model.json", "--no-plugins",
                      timeout=30)
    child.expect(f"resumed session {session_id} \\(0 messages\\)")
    child.expect(PROMPT)
    child.sendline("hi")
    child.expect("hello")
    child.expect(PROMPT)
    child.sendeof()
    assert finish(child) == 0


def test_a_chat_resumed_on_the_other_backend_says_which_one_continues_it(
    tmp_path: Path, spawn_cli: SpawnCli
) -> None:
    write_script(tmp_path, ["hello"])
    for started, other in (("langgraph", "loop"), ("loop", "langgraph")):
        child, session_id, _ = _start(spawn_cli, "--model", "scripted:model.json", "--backend", started)
        child.expect(PROMPT)
        child.sendeof()
        assert finish(child) == 0
        child = spawn_cli("chat", "--session", session_id, "--model", "scripted:model.json",
                          "--backend", other)
        child.expect(f"Session '{session_id}' was started on the {started} backend and continues only there")
        child.expect(f"use --backend {started}, or leave --backend out.")
        assert finish(child) == 2
        assert "Traceback" not in (child.before or "")


def test_ctrl_c_cancels_a_langgraph_chat_turn_and_the_chat_goes_on(
    tmp_path: Path, spawn_cli: SpawnCli
) -> None:
    write_script(tmp_path, [
        {"tool_calls": [{"name": "list_dir", "arguments": {}}]},
        {"text": "never finished", "delay": 20},
        {"text": "Still here.", "expect": "first question"},  # the cancelled turn's input stayed in history
    ])
    child, _, _ = _start(spawn_cli, "--model", "scripted:model.json", "--backend", "langgraph")
    child.expect(PROMPT)
    child.sendline("first question")
    child.expect(r"▸ list_dir\(\)")
    child.expect("✓ ")
    time.sleep(0.3)
    child.sendintr()
    child.expect("⏹ cancelled")
    child.expect(PROMPT)
    child.sendline("second question")
    child.expect("Still here.")
    child.expect(PROMPT)
    child.sendeof()
    assert finish(child) == 0


def test_text_typed_during_a_langgraph_turn_steers_it(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    write_script(tmp_path, [
        {"tool_calls": [{"name": "list_dir", "arguments": {}}]},
        {"text": "Thinking about it...", "delay": 1.5},
        {"text": "Using tabs as you asked.", "expect": "use tabs"},  # only if the steering reached the model
    ])
    child, _, _ = _start(spawn_cli, "--model", "scripted:model.json", "--backend", "langgraph")
    child.expect(PROMPT)
    child.sendline("format the file")
    child.expect(r"▸ list_dir\(\)")
    child.expect("✓ ")
    child.sendline("use tabs")  # the model is still "thinking"
    child.expect("↪ steering taken: use tabs")
    child.expect("Thinking about it...")
    child.expect("↪ steered: use tabs")  # the graph's Steered event, shown as on the loop
    child.expect("Using tabs as you asked.")
    child.expect(r"✓ done \(unchecked\) · 3 model calls")
    child.expect(PROMPT)
    child.sendeof()
    assert finish(child) == 0


def test_a_langgraph_chat_killed_mid_batch_is_finished_on_resume_keeping_the_finished_call(
    tmp_path: Path, spawn_cli: SpawnCli, cli_env: dict[str, str]
) -> None:
    # The first call finishes, the second is cut short by SIGKILL. A new turn would answer both
    # "cancelled" (the first's result is a pending write only a recovery keeps); the resumed chat
    # finishes the run instead: the first call keeps its result and does not run again, the second
    # runs again. Under LangGraph's strict msgpack mode: every read of the CLI's loads agcore's types.
    cli_env["LANGGRAPH_STRICT_MSGPACK"] = "true"
    write_script(tmp_path, [
        {"text": "Running.", "tool_calls": [
            {"name": "run_command", "arguments": {"command": "echo fast >> k.log"}},
            {"name": "run_command", "arguments": {"command": "sleep 4; echo slow >> k.log"}}]},
    ], name="first.json")
    db = tmp_path / "chats.db"
    child, session_id, _ = _start(spawn_cli, "--model", "scripted:first.json", "--db", str(db),
                                  "--backend", "langgraph", "--yes")
    child.expect(PROMPT)
    child.sendline("go")
    log = tmp_path / "k.log"
    for _ in range(200):  # the first call has run: its command wrote the file
        if log.is_file() and "fast" in log.read_text():
            break
        time.sleep(0.05)
    time.sleep(1)  # its result reaches the checkpoint as its task ends; the second call sleeps on
    child.kill(9)
    child.wait()

    # The model's reply comes only if the results say exit 0; k.log shows what ran, and how often.
    write_script(tmp_path, [{"text": "Both ran.", "expect": "exit code: 0"}, "Next answer."],
                 name="again.json")
    child = spawn_cli("chat", "--no-plugins", "--session", session_id, "--model", "scripted:again.json",
                      "--db", str(db), "--yes", timeout=60)
    child.logfile_read = seen = io.StringIO()
    child.expect("The last run of this session did not finish")
    child.expect(r"✓ \$ echo fast >> k.log → exit code: 0")
    child.expect(r"✓ \$ sleep 4; echo slow >> k.log → exit code: 0")
    child.expect("Both ran.")
    child.expect(PROMPT)
    child.sendline("and now?")
    child.expect("Next answer.")
    child.expect(PROMPT)
    child.sendeof()
    assert finish(child) == 0
    output = seen.getvalue()
    assert (tmp_path / "k.log").read_text().count("fast") == 1  # it ran once
    for line in ("Cancelled", "unregistered type", "Blocked deserialization", "Traceback"):
        assert line not in output


@pytest.mark.parametrize("backend", ["loop", "langgraph"])
def test_a_second_chat_on_a_session_in_use_is_refused_until_the_first_ends(
    tmp_path: Path, spawn_cli: SpawnCli, backend: str
) -> None:
    write_script(tmp_path, ["hello", "again"])
    first, session_id, _ = _start(spawn_cli, "--model", "scripted:model.json", "--backend", backend)
    first.expect(PROMPT)
    second = spawn_cli("chat", "--no-plugins", "--session", session_id, "--model", "scripted:model.json")
    second.expect(f"Session '{session_id}' is in use by another agcore process \\(pid {first.pid}\\)")
    assert finish(second) == 2
    first.sendeof()
    assert finish(first) == 0
    assert not list((tmp_path / "home").glob("sessions.locks/*.lock"))  # released on exit

    # A process killed while it holds the lock leaves it stale: the next one takes it.
    killed = spawn_cli("chat", "--no-plugins", "--session", session_id, "--model", "scripted:model.json")
    killed.expect(PROMPT)
    killed.kill(9)
    killed.wait()
    again = spawn_cli("chat", "--no-plugins", "--session", session_id, "--model", "scripted:model.json")
    again.expect(PROMPT)
    again.sendline("hi")
    again.expect("hello")
    again.expect(PROMPT)
    again.sendeof()
    assert finish(again) == 0
