"""``agcore run/chat --intent`` and ``--max-tool-calls``: a chat request answered without tools, a
question about the agent answered from its tool list, and a capped run ending with its notice."""

from __future__ import annotations

from pathlib import Path

from tests.cli import write_script
from tests.cli.conftest import Invoke


def test_run_with_intent_answers_chat_without_tools(tmp_path: Path, invoke: Invoke) -> None:
    # The reply comes only if the prompt says the user is chatting (the route's instructions).
    write_script(tmp_path, [{"expect": "The user is chatting", "text": "Hello to you too."}])
    done = invoke("run", "hello there", "--model", "scripted:model.json", "--no-plugins",
                  "--intent", "keywords")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "Hello to you too." in done.stdout


def test_chat_with_model_intent_lists_the_tools_for_a_capability_question(
    tmp_path: Path, invoke: Invoke
) -> None:
    write_script(tmp_path, [
        {"expect": "Classify the user's message", "text": '{"label": "capability_query", "confidence": 0.9}'},
        {"expect": "- read_file:", "text": "I read, write and run things."},
    ])
    done = invoke("chat", "--model", "scripted:model.json", "--no-plugins", "--intent", "model",
                  input="tell me about yourself\n")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "I read, write and run things." in done.stdout
    assert "--intent model" in done.stdout  # the resume command keeps it


def test_a_bad_intent_is_a_usage_error(tmp_path: Path, invoke: Invoke) -> None:
    write_script(tmp_path, [{"text": "never"}])
    done = invoke("run", "x y", "--model", "scripted:model.json", "--no-plugins", "--intent", "psychic")
    assert done.exit_code == 2
    assert "choose off, keywords or model" in done.stdout + done.stderr


def test_run_with_max_tool_calls_ends_with_the_notice(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    write_script(tmp_path, [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}},
                        {"name": "list_dir", "arguments": {"path": "."}}]},
        {"expect": "limit of 1 tool calls", "text": "a.txt says alpha."},
    ])
    done = invoke("run", "read everything", "--model", "scripted:model.json", "--no-plugins", "--yes",
                  "--max-tool-calls", "1")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "a.txt says alpha." in done.stdout
    assert "[Stopped after 1 tool calls" in done.stdout
