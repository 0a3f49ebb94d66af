"""examples/coding_agent does a real job offline: a scripted model writing its tool calls as text
(as llama.cpp models do) finds a bug with search_code, reads, edits and runs the code in a tmp
workspace, with confirmations, the repo map in its prompt and the audit and trace logs on disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agcore.agent.intent import latest_intent
from agcore.llm import AssistantMessage, LLMRequest, StopReason, TextBlock, ToolResultBlock
from agcore.testing import ScriptedProvider, text_reply
from examples.coding_agent.__main__ import run_task
from examples.coding_agent.agent import STATE_DIR, Settings, coding_session

REPO = Path(__file__).resolve().parents[2]
BUGGY = "def add(a, b):\n    \"\"\"Add two numbers.\"\"\"\n    return a - b\n"


def text_call(name: str, **arguments: Any) -> str:
    """A tool call the way a small local model writes it: prose, then the call as tagged JSON."""
    return f"Next step.\n<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def fix_the_bug_script() -> list[Any]:
    return [
        text_call("search_code", query="add two numbers"),
        text_call("read_file", path="calc.py"),
        text_call("edit_file", path="calc.py", old="    return a - b", new="    return a + b"),
        text_call("run_command", command="python3 -c 'import calc; print(calc.add(2, 3))'"),
        answer_with_last_result,
    ]


def answer_with_last_result(request: LLMRequest) -> AssistantMessage:
    """The final answer quotes what the last tool really returned (in text mode, as text)."""
    last = request.messages[-1]
    seen = last.text if hasattr(last, "text") else ""
    blocks = [b for b in getattr(last, "content", []) if isinstance(b, ToolResultBlock)]
    seen += "".join(b.text for b in blocks)
    return text_reply("Fixed: add(2, 3) is now 5." if "5" in seen else f"Still broken: {seen[-200:]}")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "calc.py").write_text(BUGGY, encoding="utf-8")
    shapes = "class Square:\n    def area(self, side):\n        return side * side\n"
    (root / "shapes.py").write_text(shapes, encoding="utf-8")
    return root


@pytest.mark.anyio
async def test_it_fixes_a_bug_through_text_mode_calls(repo: Path) -> None:
    model = ScriptedProvider(fix_the_bug_script())
    async with coding_session(model, Settings(repo, yes=True)) as session:
        assert await run_task(session, "add() subtracts; fix it and show add(2, 3).")
        result = session.last_result
    assert result is not None
    assert result.text == "Fixed: add(2, 3) is now 5."
    assert (repo / "calc.py").read_text(encoding="utf-8") == BUGGY.replace("a - b", "a + b")
    first = model.requests[0]
    assert "def add" in (first.system or "")
    assert "class Square" in (first.system or "")
    assert not first.tools  # text mode: the tools are described in the prompt, not sent natively
    assert "calc.py" in model.requests[1].messages[-1].text  # search_code found it
    logs = repo / STATE_DIR / "logs"
    audited = [json.loads(line) for line in (logs / "audit.jsonl").read_text().splitlines()]
    tools_run = [(r["data"]["name"], r["data"]["status"]) for r in audited if r["event"] == "tool_call"]
    assert tools_run == [(name, "ok") for name in ("search_code", "read_file", "edit_file", "run_command")]
    assert any(r["event"] == "confirmation" for r in audited)  # the edit and the command were approved
    assert (logs / "trace.jsonl").stat().st_size > 0


@pytest.mark.anyio
async def test_without_a_yes_writes_are_refused_and_the_model_is_told(repo: Path) -> None:
    model = ScriptedProvider([
        text_call("read_file", path="calc.py"),
        text_call("write_file", path="calc.py", content="def add(a, b):\n    return a + b\n"),
        lambda request: text_reply("Told: " + request.messages[-1].text.split("</tool_response>")[0][-120:]),
    ])
    async with coding_session(model, Settings(repo, yes=False)) as session:
        assert await run_task(session, "Rewrite calc.py.")
        result = session.last_result
    assert (repo / "calc.py").read_text(encoding="utf-8") == BUGGY  # nothing written
    assert result is not None
    assert "the user did not approve this call to 'write_file'" in result.text


@pytest.mark.anyio
async def test_a_chat_message_is_answered_without_tools_and_a_task_gets_them(repo: Path) -> None:
    model = ScriptedProvider(["Hello! What shall we work on?", text_call("read_file", path="calc.py"),
                              "It subtracts."])
    async with coding_session(model, Settings(repo)) as session:
        assert await run_task(session, "hello there")
        chat = latest_intent(session)
        assert await run_task(session, "Read calc.py and explain what add() does.")
        task = latest_intent(session)
    assert chat is not None
    assert chat.label == "chat"
    assert "answer briefly and naturally, without tools" in (model.requests[0].system or "")
    assert "<tool_call>" not in (model.requests[0].system or "")  # no tools described to call
    assert task is not None
    assert task.label in ("coding_task", "repo_analysis")
    assert "<tool_call>" in (model.requests[1].system or "")


@pytest.mark.anyio
async def test_a_runaway_reply_is_cut_and_the_model_asked_again(repo: Path) -> None:
    runaway = AssistantMessage(content=[TextBlock(text="[" * 2000)], stop_reason=StopReason.MAX_TOKENS)
    model = ScriptedProvider([runaway, "add() subtracts b from a."])
    async with coding_session(model, Settings(repo)) as session:
        assert await run_task(session, "What does add() in calc.py do?")
        result = session.last_result
    assert result is not None
    assert result.text == "add() subtracts b from a."
    again = model.requests[1].messages
    assert "[" * 300 not in "".join(m.text for m in again)  # the repetition was cut out of the history


def test_the_command_line_runs_a_task_offline_on_a_script_file(repo: Path, tmp_path: Path) -> None:
    script = tmp_path / "fix.json"
    replies = [{"text": reply} for reply in fix_the_bug_script()[:4]] + [{"text": "Fixed.", "expect": "5"}]
    script.write_text(json.dumps({"replies": replies}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("AGCORE_MODEL", "OPENAI_BASE_URL")}
    done = subprocess.run(
        [sys.executable, "-m", "examples.coding_agent", "Fix add().", "-w", str(repo), "--yes",
         "--model", f"scripted:{script}"],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=120, stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stderr
    assert "The model is SCRIPTED" in done.stdout
    assert "-> edit_file" in done.stdout
    assert "-> run_command" in done.stdout
    assert done.stdout.rstrip().endswith("[done: 5 model calls]")
    assert "return a + b" in (repo / "calc.py").read_text(encoding="utf-8")
