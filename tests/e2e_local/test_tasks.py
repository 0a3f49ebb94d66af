"""The e2e suite's own machinery, offline (runs in ``make test``): every check fails on the untouched
workspace and passes once the work is really done; the runner drives the real CLI and the plan runner
against a loopback OpenAI-compatible fake and judges the workspace, flagging a false success; the
llama-server launcher waits for /health and reports a server that dies."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_local.compare import comparison_table
from tests.e2e_local.heldout import HELDOUT
from tests.e2e_local.llama_server import BuildError, find_llama_server, start_llama_server
from tests.e2e_local.runner import TaskResult, markdown_table, run_task, write_results
from tests.e2e_local.tasks import TASKS, Outcome, Task, final_answer

_ALL = (*TASKS, *HELDOUT)
_BY_NAME = {t.name: t for t in _ALL}


@pytest.mark.parametrize("tasks", [TASKS, HELDOUT], ids=["tasks", "heldout"])
def test_there_are_a_dozen_tasks_through_both_entry_points(tasks: tuple[Task, ...]) -> None:
    assert len(tasks) >= 12
    assert {t.via for t in tasks} == {"cli", "plan"}
    assert len({t.name for t in tasks}) == len(tasks)
    assert all(t.prompt if t.via == "cli" else t.plan for t in tasks)
    assert all(t.check_cmd for t in tasks)


def test_the_held_out_tasks_are_other_tasks() -> None:
    assert not {t.name for t in TASKS} & {t.name for t in HELDOUT}
    assert not {t.prompt for t in TASKS if t.prompt} & {t.prompt for t in HELDOUT if t.prompt}


@pytest.mark.parametrize("task", _ALL, ids=lambda t: t.name)
def test_check_fails_untouched_and_passes_when_solved(task: Task, tmp_path: Path) -> None:
    task.setup(tmp_path)
    untouched = task.check(tmp_path, Outcome(0, "✓ done"))
    assert not untouched.achieved
    assert untouched.reason
    task.solve(tmp_path)
    solved = task.check(tmp_path, Outcome(0, task.answer))
    assert solved.achieved, solved.reason


def _check_command(root: Path, command: str, answer: str = "") -> int:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(command, shell=True, cwd=root, env=env, input=answer, capture_output=True,
                          text=True, timeout=120, check=False).returncode


@pytest.mark.parametrize("task", _ALL, ids=lambda t: t.name)
def test_check_command_fails_untouched_and_passes_when_solved(task: Task, tmp_path: Path) -> None:
    task.setup(tmp_path)
    assert _check_command(tmp_path, task.check_cmd) != 0
    task.solve(tmp_path)
    assert _check_command(tmp_path, task.check_cmd, task.answer) == 0


_ANSWERS = (
    "",
    "It configures the billing service's deployment.",
    "Read settings.py and explain in two sentences what it configures, including the release codename.",
    "It configures billing. The release codename is heliotrope-5731.",
    "The codename, HELIOTROPE-5731, tags log lines.",
)


@pytest.mark.parametrize("answer", _ANSWERS)
def test_the_explain_check_command_passes_only_when_the_judge_does(answer: str, tmp_path: Path) -> None:
    """The check reads the answer on its standard input: passing it is achieving the task."""
    task = _BY_NAME["explain-file"]
    task.setup(tmp_path)
    judged = task.check(tmp_path, Outcome(0, answer)).achieved
    assert (_check_command(tmp_path, task.check_cmd, answer) == 0) == judged
    assert "heliotrope" not in task.check_cmd  # it gives nothing away
    assert "5731" not in task.check_cmd


def test_the_explain_check_command_guards_the_file(tmp_path: Path) -> None:
    task = _BY_NAME["explain-file"]
    task.setup(tmp_path)
    answer = "The codename is heliotrope-5731."
    assert _check_command(tmp_path, task.check_cmd, answer) == 0
    (tmp_path / "settings.py").write_text("RETRY_LIMIT = 4\n")
    assert _check_command(tmp_path, task.check_cmd, answer) != 0


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


#: Work a model may do that its task's judge rejects, each with the answer it gives.
_NEAR_MISSES: list[tuple[str, dict[str, str], str]] = [
    ("explain-file", {"settings.py": 'RELEASE_CODENAME = "orchid-1"\n'}, "The codename is orchid-1."),
    ("count-lines", {"data.csv": "a\nb\nc\n", "count.txt": "3\n"}, "3 lines"),
    ("add-function-and-test", {"mathutils.py": "def add(a, b):\n    return a + b\n\n\n"
                                               "def multiply(a, b):\n    return a + b\n",
                               "test_mathutils.py": "from mathutils import multiply\n\n\n"
                                                    "def test_multiply():\n    assert multiply(2, 2) == 4\n"},
     "Added multiply and its test."),
    ("list-files", {"files.txt": "alpha.py beta.py gamma.py\n"}, "Listed them."),
    ("list-files", {"src/delta.py": "D = 4\n", "files.txt": "alpha.py\nbeta.py\ndelta.py\ngamma.py\n"},
     "Listed them."),
    ("find-definition", {"pkg/other.py": "def parse_header(line):\n    return line\n",
                         "answer.txt": "pkg/other.py\n"}, "pkg/other.py"),
    ("run-command", {"generate.py": "print('x')\n", "output.txt": "x\n"}, "Saved the output."),
    ("plan-greet", {"greet.py": "def greet(name):\n    return 'Hello, ' + name + '!'\n",
                    "test_greet.py": "def test_other():\n    assert True\n"}, "Done."),
    ("plan-notes", {"settings.py": "A = 1\n", "NOTES.md": "A = 1\n"}, "Wrote NOTES.md."),
    ("explain-function", {}, "An order of 180 gets 15% off."),
    ("explain-function", {}, "It gets 0.5%."),
    ("explain-function", {"pricing.py": "def discount(total):\n    return 0.2\n"}, "It gets 0.2, 20%."),
    ("count-words", {"poem.txt": "one two\n", "words.txt": "2\n"}, "2 words"),
    ("find-caller", {"caller.txt": "mail/send.py\n"}, "mail/send.py"),
    ("run-script", {"stats.py": "print('x')\n", "result.txt": "x\n"}, "Saved it."),
    ("plan-scores", {"scores.csv": "name,score\nbob,1\n", "summary.md": "best: bob\ncount: 1\n"}, "Done."),
    ("plan-scores", {"summary.md": "best: grace_x\ncount: 5\n"}, "Done."),
]


@pytest.mark.parametrize(("name", "files", "answer"), _NEAR_MISSES, ids=[m[0] for m in _NEAR_MISSES])
def test_a_check_command_never_passes_work_its_judge_rejects(
    name: str, files: dict[str, str], answer: str, tmp_path: Path
) -> None:
    """With checks a false success is impossible by construction: a check passes only where the judge
    does, so work the judge rejects (a file the facts come from changed, a test that agrees with a
    wrong function, a path outside the tree) fails its check too."""
    task = _BY_NAME[name]
    task.setup(tmp_path)
    _write(tmp_path, files)
    assert not task.check(tmp_path, Outcome(0, answer)).achieved
    assert _check_command(tmp_path, task.check_cmd, answer) != 0


def test_an_absolute_path_is_no_answer_to_the_find_task(tmp_path: Path) -> None:
    task = _BY_NAME["find-definition"]
    task.setup(tmp_path)
    _write(tmp_path, {"answer.txt": f"{tmp_path}/pkg/net/wire.py\n"})
    assert not task.check(tmp_path, Outcome(0, "")).achieved
    assert _check_command(tmp_path, task.check_cmd) != 0


def test_explain_is_judged_by_a_fact_only_the_file_holds(tmp_path: Path) -> None:
    task = _BY_NAME["explain-file"]
    task.setup(tmp_path)
    assert not task.check(tmp_path, Outcome(0, "It configures the billing service's deployment.")).achieved
    assert task.check(tmp_path, Outcome(0, "The release codename is heliotrope-5731.")).achieved


def test_explain_is_judged_on_the_answer_after_the_last_tool_result(tmp_path: Path) -> None:
    task = _BY_NAME["explain-file"]
    task.setup(tmp_path)
    echoed = ('▸ read_file(path="settings.py")\n  ✓ settings.py: lines 1-5 of 5 (180 bytes)\n'
              '▸ write_file(path="settings.py", content="RELEASE_CODENAME = heliotrope-5731")\n'
              "  ✓ Overwrote 'settings.py' (36 bytes; it had 180 bytes).\n"
              "It configures the billing service.\n✓ done · 3 model calls · 36 in / 15 out tokens\n")
    assert final_answer(echoed) == "It configures the billing service."
    assert not task.check(tmp_path, Outcome(0, echoed)).achieved
    answered = ('▸ read_file(path="settings.py")\n  ✓ settings.py: lines 1-5 of 5 (180 bytes)\n'
                "It configures billing; the codename is heliotrope-5731.\n✓ done · 2 model calls\n")
    assert task.check(tmp_path, Outcome(0, answered)).achieved


def test_a_checks_command_naming_the_fact_is_no_answer(tmp_path: Path) -> None:
    """Checked runs print the check's command, which may name the fact; the answer is judged alone."""
    task = _BY_NAME["explain-file"]
    task.setup(tmp_path)
    checked = ('▸ read_file(path="settings.py")\n  ✓ settings.py: lines 1-5 of 5 (180 bytes)\n'
               "I read settings.py and explained what it configures.\n"
               "⧗ check: grep -q heliotrope-5731 settings.py\n"
               "  ✓ check passed: grep -q heliotrope-5731 settings.py\n"
               "✓ done · checks passed · 2 model calls\n")
    assert final_answer(checked) == "I read settings.py and explained what it configures."
    assert not task.check(tmp_path, Outcome(0, checked)).achieved


def test_fixing_the_test_instead_of_the_code_is_not_achieved(tmp_path: Path) -> None:
    task = _BY_NAME["fix-failing-test"]
    task.setup(tmp_path)
    (tmp_path / "test_calc.py").write_text("def test_nothing():\n    pass\n", encoding="utf-8")
    check = task.check(tmp_path, Outcome(0, ""))
    assert not check.achieved
    assert "test_calc.py was changed" in check.reason


# ------------------------------------------------------------------ the runner, against a fake server


class _ScriptedServer(ThreadingHTTPServer):
    """An OpenAI-compatible chat endpoint answering from a list of replies, in order: a reply is a
    text or a tool call ``(name, arguments)``; streamed (SSE) when the request asks for it."""

    def __init__(self, replies: list[str | tuple[str, dict[str, Any]]], delay: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies = replies
        self.delay = delay
        self.requests = 0
        self.bodies: list[dict[str, Any]] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: _ScriptedServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append(body)
        time.sleep(self.server.delay)
        reply = self.server.replies[min(self.server.requests, len(self.server.replies) - 1)]
        n = self.server.requests = self.server.requests + 1
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        if isinstance(reply, str):
            message: dict[str, Any] = {"role": "assistant", "content": reply}
            finish = "stop"
        else:
            call = {"id": f"call_{n}", "type": "function",
                    "function": {"name": reply[0], "arguments": json.dumps(reply[1])}}
            message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        base = {"id": f"chatcmpl-{n}", "created": 1, "model": body["model"]}
        if not body.get("stream"):
            payload = {**base, "object": "chat.completion", "usage": usage,
                       "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        delta = dict(message)
        if "tool_calls" in delta:
            delta["tool_calls"] = [{"index": 0, **delta["tool_calls"][0]}]
        chunks = [{**base, "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  {**base, "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                  {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage}]
        data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextlib.contextmanager
def _serve(replies: list[str | tuple[str, dict[str, Any]]], delay: float = 0.0) -> Iterator[_ScriptedServer]:
    server = _ScriptedServer(replies, delay)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _run(task: Task, server: _ScriptedServer, tmp_path: Path, timeout: float = 60,
         text_tools: str | None = None, checked: bool = False) -> TaskResult:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return run_task(task, workspace, base_url=server.base_url, model="tiny-local", timeout=timeout,
                    max_turns=12, context=8192, logs=tmp_path / "logs", text_tools=text_tools,
                    checked=checked)


def test_cli_task_done_for_real_is_achieved_with_its_counts(tmp_path: Path) -> None:
    replies: list[str | tuple[str, dict[str, Any]]] = [
        ("write_file", {"path": "hello.txt", "content": "Hello from agcore\n"}), "Created hello.txt.",
        '{"missing": "", "done": true}']  # agcore run's review of the work
    with _serve(replies) as server:
        result = _run(_BY_NAME["create-file"], server, tmp_path)
    assert result.achieved, result.reason
    assert (result.claimed, result.exit_code, result.model_calls, result.tool_calls) == (True, 0, 2, 1)
    assert not result.false_success
    assert result.detail.startswith("✓ done · reviewed · 2 model calls (+1 review call) ·")


def test_cli_task_claimed_but_not_done_is_a_false_success(tmp_path: Path) -> None:
    # (an answer naming hello.txt as created would be held to the workspace by agcore run: see the next)
    with _serve(["Done."]) as server:
        result = _run(_BY_NAME["create-file"], server, tmp_path)
    assert not result.achieved
    assert result.reason == "hello.txt was not written"
    assert result.claimed
    assert result.false_success
    assert (result.model_calls, result.tool_calls) == (1, 0)


def test_cli_task_claiming_a_file_it_never_wrote_says_failed(tmp_path: Path) -> None:
    claim = "I created hello.txt with the text you asked for."
    with _serve([claim, claim]) as server:
        result = _run(_BY_NAME["create-file"], server, tmp_path)
    assert not result.achieved
    assert not result.claimed  # agcore run held the claim to the workspace: failed, not done
    assert not result.false_success
    assert "does not match the workspace" in result.detail


def test_checked_cli_task_claimed_but_not_done_fails_on_its_check(tmp_path: Path) -> None:
    with _serve(["I created hello.txt with the text you asked for."]) as server:
        result = _run(_BY_NAME["create-file"], server, tmp_path, checked=True)
    assert result.checked
    assert not result.achieved
    assert not result.claimed  # the check failed: agcore said failed, not done
    assert not result.false_success
    assert "check" in result.detail
    assert result.model_calls is not None
    assert result.model_calls > 1  # asked to fix the failing check


def test_checked_plan_task_passes_its_check_when_done(tmp_path: Path) -> None:
    task = _BY_NAME["plan-notes"]
    notes = 'SERVICE_NAME = "billing"\nRELEASE_CODENAME = "heliotrope-5731"\nRETRY_LIMIT = 4\n'
    replies: list[str | tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": "settings.py"}), "settings.py defines three settings.",
        ("write_file", {"path": "NOTES.md", "content": notes}), "Wrote NOTES.md."]
    with _serve(replies) as server:
        result = _run(task, server, tmp_path, checked=True)
    assert result.checked
    assert result.achieved, result.reason
    assert result.claimed


def test_plan_task_runs_execute_plan_and_is_judged_by_the_workspace(tmp_path: Path) -> None:
    task = _BY_NAME["plan-notes"]
    notes = 'SERVICE_NAME = "billing"\nRELEASE_CODENAME = "heliotrope-5731"\nRETRY_LIMIT = 4\n'
    replies: list[str | tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": "settings.py"}), "settings.py defines three settings.",
        ("write_file", {"path": "NOTES.md", "content": notes}), "Wrote NOTES.md."]
    with _serve(replies) as server:
        result = _run(task, server, tmp_path)
    assert result.achieved, result.reason
    assert (result.via, result.claimed, result.model_calls, result.tool_calls) == ("plan", True, 4, 2)
    assert result.detail == "steps: read completed, write completed"
    assert "tools" in server.bodies[0]  # agcore's default for this model: native tool calls


def test_plan_task_can_force_text_mode_tools(tmp_path: Path) -> None:
    with _serve(["I cannot do that."]) as server:
        result = _run(_BY_NAME["plan-notes"], server, tmp_path, text_tools="on")
    assert not result.achieved
    assert result.model_calls == len(server.bodies)
    # Text mode describes the tools in the prompt instead of sending them as native tools.
    assert all("tools" not in body for body in server.bodies)


def test_a_task_over_its_time_is_stopped_and_reported(tmp_path: Path) -> None:
    # The model keeps listing the directory: the runner interrupts the CLI at the cap.
    with _serve([("list_dir", {"path": "."})], delay=1.0) as server:
        result = _run(_BY_NAME["create-file"], server, tmp_path, timeout=4)
    assert result.timed_out
    assert not result.achieved
    assert not result.claimed
    assert result.reason.startswith("timed out after 4s")


def test_results_are_written_as_json_and_a_markdown_table(tmp_path: Path) -> None:
    results = [TaskResult("create-file", "cli", True, "", True, 0, 2, 1, 12.3, False),
               TaskResult("count-lines", "cli", False, "count.txt was not written", True, 0, 1, 0, 5.0,
                          False),
               TaskResult("plan-greet", "plan", False, "timed out", False, None, None, 3, 240.0, True)]
    markdown = write_results(results, tmp_path, title="t", meta={"model": "m.gguf"})
    text = markdown.read_text(encoding="utf-8")
    assert "| count-lines | cli | no | no | failed" not in text
    row = ("| count-lines | cli | no | no | done (**false success**) | 1 | 0 | 5 s | "
           "count.txt was not written |")
    assert row in text
    assert "| plan-greet | plan | no | no | timed out | ? | 3 | 240 s |" in text
    assert "1/3 achieved · 1 false success(es)" in text
    data = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert data["meta"] == {"model": "m.gguf"}
    assert [r["false_success"] for r in data["results"]] == [False, True, False]
    assert markdown_table(results, title="t") in text


def test_runs_are_compared_side_by_side(tmp_path: Path) -> None:
    unchecked = [TaskResult("create-file", "cli", True, "", True, 0, 2, 1, 60.0, False),
                 TaskResult("count-lines", "cli", False, "not written", True, 0, 1, 0, 30.0, False)]
    checked = [TaskResult("create-file", "cli", True, "", True, 0, 2, 1, 60.0, False, checked=True),
               TaskResult("count-lines", "cli", False, "not written", False, 1, 4, 2, 90.0, False,
                          checked=True)]
    for name, rows in (("a", unchecked), ("b", checked)):
        write_results(rows, tmp_path / name, title=name, meta={})
    loaded = [(label, json.loads((tmp_path / label / "results.json").read_text())["results"])
              for label in ("a", "b")]
    table = comparison_table(loaded)
    assert "| task | a | b |" in table
    assert "| count-lines | FALSE (1) | no (4) |" in table
    assert "| **achieved** | 1/2 | 1/2 |" in table
    assert "| **false successes** | 1 | 0 |" in table
    assert "| **wall time** | 1.5 min | 2.5 min |" in table


# ---------------------------------------------------------------------------------- the launcher

_FAKE_SERVER = """
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
port = int(sys.argv[sys.argv.index("--port") + 1])
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def _executable(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "llama-server"
    script.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    script.chmod(0o755)
    return script


def test_launcher_waits_for_health_and_stops_the_server(tmp_path: Path) -> None:
    binary = _executable(tmp_path, _FAKE_SERVER)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    with start_llama_server(binary, model, log=tmp_path / "server.log", alias="m") as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        assert server.process.poll() is None
    assert server.process.poll() is not None


def test_launcher_reports_a_server_that_dies_with_its_log(tmp_path: Path) -> None:
    binary = _executable(tmp_path, "print('error: unknown model format')\nraise SystemExit(1)\n")
    with pytest.raises(BuildError, match=r"exited with 1 while starting:(.|\n)*unknown model format"), \
            start_llama_server(binary, tmp_path / "m.gguf", log=tmp_path / "server.log"):
        pass


def test_an_explicit_binary_must_be_executable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGCORE_E2E_LLAMA_SERVER", str(tmp_path / "missing"))
    with pytest.raises(BuildError, match="not an executable file"):
        find_llama_server()
    binary = _executable(tmp_path, _FAKE_SERVER)
    monkeypatch.setenv("AGCORE_E2E_LLAMA_SERVER", str(binary))
    assert find_llama_server() == binary


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the suite's machinery: the kernel's tests cover trio
@pytest.mark.parametrize("task", _ALL, ids=lambda t: t.name)
async def test_check_commands_run_as_agcore_runs_them(task: Task, tmp_path: Path, anyio_backend: str) -> None:
    """Through ``Workspace.execute`` (agcore's shell reader, the answer on standard input), as
    ``--check`` runs them, not only through ``sh``."""
    from agcore.tools.workspace import Workspace

    task.setup(tmp_path)
    task.solve(tmp_path)
    space = Workspace(tmp_path, sandbox="off", confirm_commands=False, env={"PATH": _path_with_python()})
    result = await space.execute(task.check_cmd, stdin=task.answer, confirmed=True)
    assert result.passed, result.output_tail(600)


def _path_with_python() -> str:
    return f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
