"""examples/countbot does real jobs offline on scripted models: a streamed answer to a message with
an image, a skill loaded on demand, a file written, a fact remembered in SQLite, a sub-agent's
research; a long conversation's overflow summarised into memory; a flaky tool retried; and the
command line continuing a conversation in a second process."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agcore.llm import ImageBlock, LLMRequest, Message, ToolDefinition, UserMessage
from agcore.memory import KeywordRetriever, SqliteMemoryStore
from agcore.testing import FunctionProvider, ScriptedProvider, text_reply, tool_call_reply, tool_calls_reply
from examples.countbot.__main__ import chat
from examples.countbot.bot import Settings, countbot

REPO = Path(__file__).resolve().parents[2]
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
PLAN = "# Lisbon\n\n## 2026-12-04\nMorning: Alfama.\n\n## 2026-12-05\nMorning: Belem.\n"


def last_text(request: LLMRequest) -> str:
    """The last message's text, or its tool results' text."""
    last = request.messages[-1]
    results = last.tool_results if isinstance(last, UserMessage) else []
    return "\n".join(result.text for result in results) if results else last.text


@pytest.mark.anyio
async def test_a_trip_is_planned_with_a_skill_a_file_a_memory_and_a_sub_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "photo.png").write_bytes(PIXEL)
    model = ScriptedProvider([
        tool_call_reply("load_skill", {"name": "trip-planner"}),
        tool_call_reply("write_file", {"path": "trips/lisbon-2026-12-04.md", "content": PLAN}),
        tool_call_reply("remember", {"content": "Sam's trip: Lisbon, 2026-12-04 to 2026-12-05."}),
        tool_call_reply("researcher", {"task": "Which trip plans are in trips/? Name the files."}),
        tool_call_reply("glob", {"pattern": "trips/*.md"}),                  # the researcher's turn
        lambda request: text_reply(f"Plans found: {last_text(request).strip()}"),
        lambda request: text_reply(f"Your plan is saved. {last_text(request)}"),
    ])
    settings = Settings(tmp_path / "home", user_name="Sam")
    async with countbot(model, settings) as session:
        assert await chat(session, "Plan two days in Lisbon from 2026-12-04, like this photo.",
                          [tmp_path / "photo.png"])

    workspace = settings.home / "workspace"
    assert (workspace / "trips" / "lisbon-2026-12-04.md").read_text(encoding="utf-8") == PLAN
    first = model.requests[0]
    assert any(isinstance(block, ImageBlock) for block in first.messages[0].content)  # the photo went along
    system = first.system or ""
    assert "You are CountBot" in system                                       # the persona...
    assert "Address the user as Sam" in system
    assert "Answer first, in one or two sentences" in system                  # the always-on skill
    assert "trip-planner: Plan a trip day by day" in system                   # listed, not loaded
    assert "# Memory" in system                                               # when to remember
    assert "Save the plan with `write_file`" in last_text(model.requests[1])  # ...loaded on demand
    researcher = model.requests[4]
    assert "research question" in (researcher.system or "")
    assert {t.name for t in researcher.tools} == {"list_dir", "glob", "grep", "read_file", "retrieve"}
    out = capsys.readouterr().out
    assert "[researcher: glob]" in out
    assert out.rstrip().endswith("Your plan is saved. Plans found: trips/lisbon-2026-12-04.md")

    async with SqliteMemoryStore(settings.home / "memory.db") as memory:  # a real SQLite file
        hits = await KeywordRetriever(memory).retrieve("Lisbon trip")
    assert [hit.content for hit in hits] == ["Sam's trip: Lisbon, 2026-12-04 to 2026-12-05."]


def notes_and_answers(messages: list[Message], tools: list[ToolDefinition]) -> str:
    """The summariser writes notes; the bot acknowledges each message."""
    text = messages[-1].text
    if text.startswith("Below is part of a conversation"):  # OverflowToMemory's request
        return "- Sam prefers window seats.\n- Sam is vegetarian."
    if text.startswith("Summarise the conversation transcript"):  # compaction's own summary
        return "Sam told CountBot about travel preferences."
    return "Noted."


@pytest.mark.anyio
async def test_a_long_conversation_overflows_into_memory_and_is_there_after_a_restart(tmp_path: Path) -> None:
    settings = Settings(tmp_path / "home", context_window=800)
    facts = ["I prefer window seats on planes", "I am vegetarian", "I like museums", "I walk a lot",
             "I dislike early flights", "I travel with one bag", "I speak some Portuguese", "I avoid taxis"]
    async with countbot(FunctionProvider(notes_and_answers), settings, "sam") as session:
        for fact in facts:
            assert await chat(session, f"{fact}. " + "Please keep that in mind for later. " * 10, [])
        held = len(session.messages)

    async with SqliteMemoryStore(settings.home / "memory.db") as memory:
        hits = await KeywordRetriever(memory).retrieve("window seats")
    assert hits, "the overflow notes were not stored"
    assert hits[0].content.startswith("- Sam prefers window seats.")
    assert hits[0].metadata["kind"] == "conversation_summary"
    assert hits[0].metadata["session"] == "sam"

    async with countbot(FunctionProvider(notes_and_answers), settings, "sam") as session:  # a restart
        assert len(session.messages) == held  # the whole history came back from SQLite


class FlakyRates(BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        type(self).hits += 1
        status, body = (503, b"busy") if type(self).hits == 1 else (200, b"1 EUR = 1.08 USD")
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def rates_url() -> Iterator[str]:
    FlakyRates.hits = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), FlakyRates)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/rates"
    server.shutdown()
    server.server_close()


@pytest.mark.anyio
async def test_a_failing_tool_is_retried_after_a_pause(tmp_path: Path, rates_url: str) -> None:
    model = ScriptedProvider([
        tool_call_reply("fetch_url", {"url": rates_url}),
        lambda request: text_reply(f"Today: {last_text(request)}"),
    ])
    async with countbot(model, Settings(tmp_path, retry_delay=0.05)) as session:
        assert await chat(session, "What is the euro worth in dollars?", [])
        result = session.last_result
    assert FlakyRates.hits == 2  # a 503, then the answer
    assert result is not None
    assert result.text == "Today: 1 EUR = 1.08 USD"


@pytest.mark.anyio
async def test_the_tool_call_cap_stops_the_calls_and_says_so_in_the_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    three = tool_calls_reply([("list_dir", {"path": "."}), ("glob", {"pattern": "*"}),
                              ("grep", {"pattern": "x"})])
    model = ScriptedProvider([three, "The workspace is empty."])
    async with countbot(model, Settings(tmp_path, max_iterations=2)) as session:
        assert await chat(session, "Look around the workspace.", [])
        result = session.last_result
    assert result is not None
    assert result.text.startswith("The workspace is empty.")
    assert "[Stopped after 2 tool calls" in result.text
    assert "[Stopped after 2 tool calls" in capsys.readouterr().out  # streamed to the user too
    assert not model.requests[1].tools  # asked to answer with what it had


def run_cli(*args: str, lines: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("AGCORE_MODEL", "OPENAI_BASE_URL")}
    return subprocess.run([sys.executable, "-m", "examples.countbot", *args], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=120, input=lines or "", check=False)


def test_without_a_message_it_converses_line_by_line_until_an_empty_line(tmp_path: Path) -> None:
    script = tmp_path / "talk.json"
    replies = ["Hi Sam!", {"text": "You said hello.", "expect": "Hello, I am Sam"}, "never reached"]
    script.write_text(json.dumps(replies), encoding="utf-8")
    done = run_cli("--home", str(tmp_path / "home"), "--model", f"scripted:{script}",
                   lines="Hello, I am Sam\nWhat did I say?\n\nignored after the empty line\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == ["Hi Sam!", "You said hello."]


def test_the_command_line_streams_takes_an_image_and_continues_in_a_second_process(tmp_path: Path) -> None:
    (tmp_path / "photo.png").write_bytes(PIXEL)
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps(["A single pixel, probably red."]), encoding="utf-8")
    # The second process's model must be sent the first exchange: the session came back from SQLite.
    reply = {"text": "It was one pixel.", "expect": "A single pixel"}
    second.write_text(json.dumps([reply]), encoding="utf-8")
    home = str(tmp_path / "home")

    done = run_cli("What is this?", "--image", str(tmp_path / "photo.png"), "--home", home,
                   "--model", f"scripted:{first}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("A single pixel, probably red.")
    done = run_cli("What was in the picture?", "--home", home, "--model", f"scripted:{second}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("It was one pixel.")


def test_a_missing_image_is_refused_before_any_model_call(tmp_path: Path) -> None:
    script = tmp_path / "never.json"
    script.write_text(json.dumps(["never sent"]), encoding="utf-8")
    done = run_cli("What is this?", "--image", str(tmp_path / "nope.png"), "--home", str(tmp_path / "home"),
                   "--model", f"scripted:{script}")
    assert done.returncode == 1
    assert done.stderr.startswith("countbot: ")
    assert "nope.png" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "home").exists()  # refused before the bot started
