"""Every example runs, as a user runs it: the scripts as subprocesses (offline, no API keys), the
example package through its installed entry point, the plan files through the loaders. The asserts
are on what the examples promise: files written, commands run and refused, the audit log, the memory,
the session continued by a second process."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from agcore.agent import JsonPlanParser, Plan
from agcore.testing import load_script
from agcore.tools.workspace import TOOL_NAMES
from bench.fake_vendor import FakeVendor

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
PLANS = sorted((EXAMPLES / "plans").glob("*.*"))


Completed = subprocess.CompletedProcess[str]
Demo = tuple[Completed, Path]


def run(script: str, *args: str, env: Mapping[str, str] | None = None, timeout: float = 60) -> Completed:
    """The example run as `python examples/<script>`, offline: no API keys, no model in the environment."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AGCORE_MODEL", "OPENAI_BASE_URL")}
    clean.update(env or {})
    return subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True,
                          env=clean, cwd=REPO, timeout=timeout, stdin=subprocess.DEVNULL, check=False)


def audit_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# ------------------------------------------------------------------------------ demo.py (make demo)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    workdir = tmp_path_factory.mktemp("demo")
    return run("demo.py", "--workdir", str(workdir)), workdir


def test_demo_says_plainly_that_its_model_is_scripted(demo: Demo) -> None:
    result, _ = demo
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("MODEL: SCRIPTED.")
    assert "DEMO FAILED" not in result.stderr
    assert "raised" not in result.stderr  # no hook plugin failed


def test_demo_executes_the_shipped_plan_with_real_files_and_commands(
    demo: Demo,
) -> None:
    result, workdir = demo
    out = result.stdout
    workspace = workdir / "workspace"
    assert (workspace / "greet.py").read_text().startswith("def greet(name: str) -> str:")
    assert "class GreetTest(unittest.TestCase):" in (workspace / "test_greet.py").read_text()
    # The files really work: the demo's test command passes here too.
    check = subprocess.run([sys.executable, "-m", "unittest", "-q"], cwd=workspace, capture_output=True,
                           text=True, check=False)
    assert check.returncode == 0, check.stderr
    for step in ("code", "tests", "remember", "run"):
        assert re.search(rf"^  {step} +completed ", out, re.MULTILINE), step
    # The command guard refused the install (no network), and the recalled command ran for real.
    assert "<- run_command [denied] Denied: `pip install -e .` is refused" in out
    assert "<- run_command [ok] $ python3 -m unittest -q | exit code: 0" in out
    assert "model: The tests pass (Ran 2 tests, OK)." in out  # read from the command's real output


def test_demo_hook_plugin_prints_events_as_they_happen(demo: Demo) -> None:
    out = demo[0].stdout
    first_turn = out.index("[turn 1 (plan step 'code')]")
    assert first_turn < out.index("-> write_file(path='greet.py'") < out.index(
        "confirmation for write_file: yes") < out.index("<- write_file [ok] Created 'greet.py'") < out.index(
        "step 'code': completed") < out.index("[turn 2 (plan step 'tests')]")


def test_demo_stores_a_memory_and_retrieves_it_through_the_tool(
    demo: Demo,
) -> None:
    result, workdir = demo
    with sqlite3.connect(workdir / "memory.db") as db:
        contents = [row[0] for row in db.execute("SELECT content FROM agcore_memory_items")]
    assert "This project's tests run with `python3 -m unittest -q`." in contents
    assert len(contents) == 3  # two facts the application seeded, one the agent remembered
    hit = r'<- retrieve \[ok\] \[\{"id": "\w+", "score": [\d.]+, "content": "([^"]+)"'
    retrieved = re.findall(hit, result.stdout)
    assert retrieved == ["This project's tests run with `python3 -m unittest -q`."] * 2  # both processes


def test_demo_resumes_the_session_in_a_second_process(demo: Demo) -> None:
    result, workdir = demo
    out = result.stdout
    pids = re.findall(r"== Process (\d) \(pid (\d+)\)", out)
    assert [p[0] for p in pids] == ["1", "2"]
    assert pids[0][1] != pids[1][1]
    session_id = re.search(r"session (demo-\w+)", out)
    assert session_id is not None
    assert f"loading session {session_id.group(1)} from sessions.db" in out
    assert "restored 20 messages: 4 user inputs, 10 model replies, 6 tool results" in out
    assert "plan state restored: code completed, tests completed, remember completed, run completed" in out
    assert "resume_plan(): every step is completed, nothing to redo" in out
    # The scripted answer is built from the request alone: this is the history the model was sent.
    assert ("In it I wrote greet.py and test_greet.py, stored the test command in memory, was refused "
            "`pip install -e .`, and ran `python3 -m unittest -q`.") in out
    assert "[turn 5] What have we done in this session so far" in out  # turn numbering went on
    with sqlite3.connect(workdir / "sessions.db") as db:
        (saved,) = db.execute("SELECT COUNT(*) FROM agcore_session_messages WHERE session_id = ?",
                              (session_id.group(1),)).fetchone()
    assert saved == 24  # the 20 of the first process and the 4 of the resumed turn


def test_demo_writes_the_audit_log(demo: Demo) -> None:
    result, workdir = demo
    path = workdir / "logs" / "audit.jsonl"
    assert f"== Audit log {path}:" in result.stdout
    records = audit_records(path)
    events = [r["event"] for r in records]
    assert events.count("plan_step") == 4
    assert events.count("user_message") == 5  # four plan steps, then the resumed process's question
    assert events.count("denial") == 1
    assert {r["data"]["name"] for r in records if r["event"] == "tool_call"} == {
        "write_file", "remember", "retrieve", "run_command"}
    assert len({r["trace_id"] for r in records}) == 5  # one trace per turn, across both processes
    assert len({r["session_id"] for r in records}) == 1
    assert (workdir / "logs" / "trace.jsonl").stat().st_size > path.stat().st_size


def test_demo_exits_non_zero_when_the_showcase_fails(tmp_path: Path) -> None:
    # A directory where the plan writes greet.py: the write fails, so the project's tests fail.
    (tmp_path / "workspace" / "greet.py").mkdir(parents=True)
    result = run("demo.py", "--workdir", str(tmp_path))
    assert result.returncode == 1
    assert "<- write_file [error] 'greet.py' is a directory" in result.stdout
    assert "DEMO FAILED: no command ran successfully in the workspace" in result.stderr


def test_demo_with_base_url_runs_on_that_server_in_both_processes(tmp_path: Path) -> None:
    # The loopback fake of the OpenAI API answers every request with a get_weather call and then
    # text: a "real" model that ignores the plan. The demo uses it, and says the showcase failed:
    # its first step is not done (its one tool call failed), so the plan stops there in each process.
    with FakeVendor() as server:
        result = run("demo.py", "--workdir", str(tmp_path), "--base-url", server.openai_base_url,
                     "--model", "gpt-4o-mini")
        posts = [r for r in server.requests if r[0] == "POST" and r[1].endswith("/chat/completions")]
    assert result.stdout.startswith("MODEL: openai-compatible:gpt-4o-mini (a real model")
    assert len(posts) == 6  # step 'code' in each process (two calls each), two for the resumed turn
    first, last = json.loads(posts[0][3]), json.loads(posts[-1][3])
    assert "You are a careful software engineer" in first["messages"][0]["content"]
    assert "What have we done in this session so far" in json.dumps(last["messages"])
    assert "Now carry out step code of 4" in json.dumps(last["messages"])  # the restored history
    assert result.returncode == 1
    assert "DEMO FAILED: the plan did not complete: code failed" in result.stderr
    assert "DEMO FAILED: the agent stored nothing in memory" in result.stderr
    assert "refused: `curl -s https://example.com/install.sh` is refused" in result.stdout  # shown directly


# ------------------------------------------------------------------------------ bootstrap.py and tour.py


def test_bootstrap_runs_a_task_and_a_second_run_continues_the_session(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("print('hello')\n")
    env = {"BOOTSTRAP_HOME": str(tmp_path / "home")}
    first = run("bootstrap.py", "What is in this project?", "--workspace", str(project), env=env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("No AGCORE_MODEL or API key: the model is SCRIPTED")
    assert "That listing is the project's top level." in first.stdout
    assert "[done: 3 model calls" in first.stdout
    assert "session bootstrap has 6 messages" in first.stdout
    assert 'tool list_dir({"path":"."}) -> ok' in first.stderr  # LoggingPlugin's lines

    second = run("bootstrap.py", "And now?", "--workspace", str(project), env=env)
    assert second.returncode == 0, second.stderr
    assert "session bootstrap has 12 messages" in second.stdout  # loaded from the session store
    assert "model call: 7 messages" in second.stderr  # the model was sent the earlier turn
    with sqlite3.connect(tmp_path / "home" / "memory.db") as db:
        (remembered,) = db.execute("SELECT COUNT(*) FROM agcore_memory_items").fetchone()
    assert remembered == 2
    assert {r["event"] for r in audit_records(tmp_path / "home" / "logs" / "audit.jsonl")} >= {
        "user_message", "tool_call", "final_text"}


def test_bootstrap_script_is_a_valid_load_script_file() -> None:
    model = load_script(EXAMPLES / "scripts" / "bootstrap.yaml")
    assert model.remaining == 3
    assert model.model_id == "scripted-example"


def test_tour_runs_offline_against_the_fake_vendor() -> None:
    result = run("tour.py")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "running against agcore's loopback fake" in out
    assert "[switch] anthropic:claude-haiku-5-5 -> openai:gpt-6-luna" in out
    assert "<- get_weather [ok]: Paris: 18 degrees" in out
    assert "deleting files is not allowed in this demo" in out
    assert "retried: 'Back on my feet.' after 2 calls" in out


# ------------------------------------------------------------------------------ the plan files


@pytest.mark.parametrize("path", PLANS, ids=[p.name for p in PLANS])
def test_plan_files_load_and_parse(path: Path) -> None:
    plan = Plan.load(path)
    assert plan.goal
    assert plan.steps
    data = json.loads(path.read_text()) if path.suffix == ".json" else yaml.safe_load(path.read_text())
    parsed = JsonPlanParser().parse_text(json.dumps(data), goal="unused")  # as if a model answered it
    assert [(s.id, s.depends_on) for s in parsed.steps] == [(s.id, s.depends_on) for s in plan.steps]


def test_the_demo_plan_names_only_tools_the_demo_offers() -> None:
    plan = Plan.load(EXAMPLES / "plans" / "demo.yaml")
    assert [s.id for s in plan.steps] == ["code", "tests", "remember", "run"]
    assert plan.get("run").depends_on == ["tests", "remember"]
    hinted = {hint for step in plan.steps for hint in step.tool_hints}
    assert hinted <= set(TOOL_NAMES) | {"remember", "retrieve"}


# ---------------------------------------------------------------------- durable_demo.py (make demo)


def test_the_durable_demo_survives_a_killed_worker_and_runs_every_call_once() -> None:
    done = run("durable_demo.py", timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "SIGKILL worker A" in out
    assert "worker A  tool   build" in out
    assert "build finished" not in out  # the killed call was not run again
    assert "worker B  model  report 'Interrupted" in out
    assert out.count("write_file NOTES.md") == 2  # asked for once, run once: not redone by worker B
    assert "every model and tool call ran once" in out
