"""``agcore chat`` in a pseudo-terminal: steering, Ctrl-C mid-turn, confirmations, resuming by id."""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path

from tests.cli import finish, write_script
from tests.cli.conftest import SpawnCli

PROMPT = "you> "
# A quick first model call: once its tool line shows, the turn is surely running (a line typed or a
# Ctrl-C pressed earlier would meet the prompt instead), and the next, delayed call is under way.
LOOK = {"tool_calls": [{"name": "list_dir", "arguments": {}}]}


def test_text_typed_during_a_turn_steers_it(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    write_script(tmp_path, [
        LOOK,
        {"text": "Thinking about it...", "delay": 1.5},
        {"text": "Using tabs as you asked.", "expect": "use tabs"},  # only if the steering reached the model
    ])
    child = spawn_cli("chat", "--model", "scripted:model.json", "--no-plugins")
    child.expect(PROMPT)
    child.sendline("format the file")
    child.expect(r"▸ list_dir\(\)")
    child.expect("✓ ")
    child.sendline("use tabs")  # the model is still "thinking"
    child.expect("↪ steering taken: use tabs")
    child.expect("Thinking about it...")
    child.expect("↪ steered: use tabs")
    child.expect("Using tabs as you asked.")
    child.expect(r"✓ done \(unchecked\) · 3 model calls")
    child.expect(PROMPT)
    child.sendeof()
    assert finish(child) == 0


def test_ctrl_c_cancels_only_the_running_turn(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    write_script(tmp_path, [
        LOOK,
        {"text": "never finished", "delay": 20},
        {"text": "Still here.", "expect": "first question"},  # the cancelled turn's input stayed in history
    ])
    child = spawn_cli("chat", "--model", "scripted:model.json", "--no-plugins")
    child.expect(PROMPT)
    child.sendline("first question")
    child.expect(r"▸ list_dir\(\)")
    child.expect("✓ ")
    time.sleep(0.2)
    child.sendintr()
    child.expect("⏹ cancelled")
    child.expect(PROMPT)
    child.sendline("second question")
    child.expect("Still here.")
    child.expect(r"✓ done")
    child.expect(PROMPT)
    child.sendintr()  # Ctrl-C at an empty prompt quits
    child.expect("bye")
    assert finish(child) == 0
    assert "never finished" not in (child.before or "")


def test_confirmation_in_chat_uses_the_same_reader(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    write_script(tmp_path, [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "A"}}]},
        {"text": "Written."},
    ])
    child = spawn_cli("chat", "--model", "scripted:model.json", "--no-plugins")
    child.expect(PROMPT)
    child.sendline("write a.txt")
    child.expect("Allow write_file")
    child.sendline("y")
    child.expect("Written.")
    child.expect(PROMPT)
    child.sendeof()
    assert finish(child) == 0
    assert (tmp_path / "a.txt").read_text() == "A"


def test_a_session_resumes_by_id_in_another_process(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    # Each process loads the script afresh; its one reply only comes if the request holds "banana",
    # which the second process's question does not: only the history loaded from the store does.
    write_script(tmp_path, [{"text": "Noted: banana.", "expect": "banana"}], name="first.json")
    db = tmp_path / "chats.db"
    child = spawn_cli("chat", "--model", "scripted:first.json", "--db", str(db), "--no-plugins",
                      "--context-window", "4096", "--text-tools", "off", "--temperature", "0.5",
                      "--max-turns", "7")
    child.expect(r"session ([0-9a-f]{32}) · resume with: (agcore chat --session \1[^\r\n]*)")
    session_id, printed = child.match.group(1), child.match.group(2)
    assert f"--db {db}" in printed  # the printed command finds the session when pasted as it is
    assert "--model scripted:first.json" in printed
    # ... and runs it the same way: the options it was started with are in it too
    assert "--text-tools off --max-turns 7 --temperature 0.5 --context-window 4096" in printed
    child.expect(PROMPT)
    child.sendline("remember the word banana")
    child.expect("Noted: banana.")
    child.expect(PROMPT)
    child.sendeof()
    assert finish(child) == 0

    child = spawn_cli(*shlex.split(printed)[1:])  # pasted: everything after "agcore"
    child.expect("compaction: on, context window 4,096 tokens")  # --context-window came along
    child.expect(f"resumed session {session_id}")
    child.expect("you: remember the word banana")
    child.expect("assistant: Noted: banana.")
    child.expect(PROMPT)
    child.sendline("what word?")
    child.expect("Noted: banana.")
    child.expect(PROMPT)
    child.sendeof()
    assert finish(child) == 0


def test_default_store_lives_under_agcore_home(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    write_script(tmp_path, ["hi"])
    child = spawn_cli("chat", "--model", "scripted:model.json", "--no-plugins")
    child.expect(PROMPT)
    child.sendeof()
    assert finish(child) == 0
    assert (tmp_path / "home" / "sessions.db").is_file()


def test_unknown_session_id_is_a_usage_error(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    write_script(tmp_path, ["hi"])
    child = spawn_cli("chat", "--session", "does-not-exist", "--model", "scripted:model.json")
    child.expect("No session database at")  # looking a session up creates no database
    assert finish(child) == 2
    assert not (tmp_path / "home" / "sessions.db").exists()
    child = spawn_cli("chat", "--model", "scripted:model.json", "--no-plugins")  # creates it
    child.expect(PROMPT)
    child.sendeof()
    assert finish(child) == 0
    child = spawn_cli("chat", "--session", "does-not-exist", "--model", "scripted:model.json")
    child.expect("No session 'does-not-exist'")
    assert finish(child) == 2
    assert re.search("Traceback", child.before or "") is None


