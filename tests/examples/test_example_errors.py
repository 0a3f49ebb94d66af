"""What the two examples say when something is wrong: a model server that is not running, a mistyped
workspace, script or persona, a missing image, end of input at a confirmation, and the caps that end
a long request (each says which flag to change)."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agcore.agent import LimitExceeded
from agcore.llm import AssistantMessage, LLMRequest, UserMessage
from agcore.testing import ScriptedProvider, text_reply, tool_call_reply
from examples.coding_agent.__main__ import run_task
from examples.coding_agent.agent import Settings as CodingSettings
from examples.coding_agent.agent import coding_session
from examples.countbot.__main__ import chat, stop_message
from examples.countbot.bot import Settings as BotSettings
from examples.countbot.bot import countbot

REPO = Path(__file__).resolve().parents[2]
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
NOTHING_LISTENING = "http://127.0.0.1:9"  # the discard port: nothing listens there


def run_example(name: str, *args: str, lines: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("AGCORE_MODEL", "OPENAI_BASE_URL")}
    return subprocess.run([sys.executable, "-m", f"examples.{name}", *args], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=120, input=lines, check=False)


def one_clear_line(done: subprocess.CompletedProcess[str], prefix: str) -> str:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert prefix in lines[0]
    return lines[0]


# B1: a failed request says why, and the exit status says it failed.

@pytest.mark.parametrize("name", ["coding_agent", "countbot"])
def test_a_model_server_that_is_not_running_is_named_with_what_to_do(name: str, tmp_path: Path) -> None:
    where = ["-w", str(tmp_path)] if name == "coding_agent" else ["--home", str(tmp_path / "home")]
    done = run_example(name, "hello", "--base-url", NOTHING_LISTENING, *where)
    assert done.returncode == 1
    assert f"{name}: " in done.stderr
    assert "nothing is listening at http://127.0.0.1:9/v1" in done.stderr
    assert "Start the model server first" in done.stderr


@pytest.mark.parametrize("name", ["coding_agent", "countbot"])
def test_a_conversation_with_a_failed_request_exits_non_zero(name: str, tmp_path: Path) -> None:
    where = ["-w", str(tmp_path)] if name == "coding_agent" else ["--home", str(tmp_path / "home")]
    done = run_example(name, "--base-url", NOTHING_LISTENING, *where, lines="hello\n\n")
    assert done.returncode == 1
    assert "nothing is listening" in done.stderr


# B5: end of input at the confirmation prompt is a no.

class ClosedTerminal(io.StringIO):
    """A terminal whose input has ended: ``input()`` raises EOFError, as after Ctrl-D."""

    def isatty(self) -> bool:
        return True


def told(request: LLMRequest) -> str:
    """What the last tool result said to the model."""
    last = request.messages[-1]
    return last.tool_results[0].text if isinstance(last, UserMessage) else ""


@pytest.mark.anyio
async def test_end_of_input_at_the_confirmation_is_a_no(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", ClosedTerminal(""))
    (tmp_path / "calc.py").write_text("x = 1\n", encoding="utf-8")
    model = ScriptedProvider([
        tool_call_reply("write_file", {"path": "calc.py", "content": "x = 2\n"}),
        lambda request: text_reply("Told: " + told(request)),
    ])
    settings = CodingSettings(tmp_path, yes=False, tool_calls="off")
    async with coding_session(model, settings) as session:
        assert await run_task(session, "Write calc.py with x = 2.")
        result = session.last_result
    assert result is not None
    assert "did not approve" in result.text
    assert (tmp_path / "calc.py").read_text(encoding="utf-8") == "x = 1\n"  # nothing written


# B6: a mistyped workspace, script, model or persona is one clear line.

def test_a_mistyped_workspace_is_refused_not_created(tmp_path: Path) -> None:
    done = run_example("coding_agent", "hello", "-w", str(tmp_path / "typo"), "--model", "bogus")
    line = one_clear_line(done, "coding_agent: ")
    assert "no such directory" in line
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize("name", ["coding_agent", "countbot"])
def test_a_missing_script_or_a_bad_model_spec_is_one_clear_line(name: str, tmp_path: Path) -> None:
    where = ["-w", str(tmp_path)] if name == "coding_agent" else ["--home", str(tmp_path / "home")]
    missing = one_clear_line(run_example(name, "hello", *where, "--model", f"scripted:{tmp_path}/no.json"),
                             f"{name}: --model scripted:")
    assert "no.json" in missing
    bad = one_clear_line(run_example(name, "hello", *where, "--model", "bogus"), f"{name}: --model bogus")
    assert "<provider>:<model>" in bad


def test_an_unknown_persona_lists_the_personas(tmp_path: Path) -> None:
    done = run_example("countbot", "hello", "--persona", "pirate", "--home", str(tmp_path / "home"))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "'pirate'" in done.stderr
    assert all(name in done.stderr for name in ("assistant", "concise", "engineer", "friendly", "tutor"))
    assert not (tmp_path / "home").exists()


# B7: with the defaults, the tool-call cap is reached before the model-call cap, and says so.

def one_call_per_reply(request: LLMRequest) -> AssistantMessage:
    """A different call each time (the same call again and again trips the repetition guard)."""
    return tool_call_reply("glob", {"pattern": f"*{len(request.messages)}*"})


@pytest.mark.anyio
async def test_one_call_per_reply_reaches_the_tool_cap_and_its_notice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = BotSettings(tmp_path)  # the defaults: 25 tool calls
    model = ScriptedProvider([*[one_call_per_reply] * 26, "Here is what I found."])
    async with countbot(model, settings) as session:
        assert await chat(session, "Look around, one thing at a time.", [])
        result = session.last_result
    assert result is not None
    assert result.text.startswith("Here is what I found.")
    assert "[Stopped after 25 tool calls" in result.text
    assert "[Stopped after 25 tool calls" in capsys.readouterr().out


@pytest.mark.anyio
async def test_the_model_call_cap_names_the_flag_to_raise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = ScriptedProvider([one_call_per_reply] * 10)  # keeps calling, even with no tools offered
    async with countbot(model, BotSettings(tmp_path, max_iterations=1)) as session:
        assert not await chat(session, "Look around.", [])
    err = capsys.readouterr().err
    assert "raise --max-iterations" in err
    assert "AgentConfig" not in err
    assert "max_turns" not in stop_message(LimitExceeded("max_turns", value=3))


# B8: an image is checked in every mode and goes with a conversation's first message.

def test_a_conversation_sends_the_image_with_its_first_message(tmp_path: Path) -> None:
    (tmp_path / "photo.png").write_bytes(PIXEL)
    script = tmp_path / "talk.json"
    replies = [{"text": "A pixel.", "expect": "[image image/png]"}, "Still a pixel."]
    script.write_text(json.dumps(replies), encoding="utf-8")
    done = run_example("countbot", "--image", str(tmp_path / "photo.png"), "--home", str(tmp_path / "home"),
                       "--model", f"scripted:{script}", lines="What is this?\nAnd now?\n\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == ["A pixel.", "Still a pixel."]


def test_a_missing_image_is_refused_in_a_conversation_too(tmp_path: Path) -> None:
    done = run_example("countbot", "--image", str(tmp_path / "nope.png"), "--home", str(tmp_path / "home"),
                       "--model", "bogus", lines="What is this?\n\n")
    line = one_clear_line(done, "countbot: ")
    assert "nope.png" in line
    assert not (tmp_path / "home").exists()
