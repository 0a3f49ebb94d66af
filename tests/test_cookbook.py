"""Every recipe in docs/cookbook.md runs as the page shows it.

Each Python block is read from the page and executed as it stands, offline: the one line that names
a real model (``MODEL = ...``) becomes a scripted model registered as the ``cookbook`` vendor, and the
local server of the first recipe (``BASE_URL = ...``) is bench/fake_vendor.py's loopback OpenAI API.
The CLI commands the page gives for a local server and for plans are run too, in a subprocess. A
block added to the page without a test here fails ``test_every_python_block_is_tested``.
"""

from __future__ import annotations

import builtins
import gc
import json
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agcore.llm import (
    AssistantMessage,
    AuthenticationError,
    OverloadedError,
    RetryPolicy,
    TextBlock,
    Usage,
    clear_provider_cache,
    register_provider_factory,
)
from agcore.llm import factory as llm_factory
from agcore.testing import ScriptedProvider, tool_call_reply
from bench.fake_vendor import ANSWER_TEXT, FakeVendor

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "cookbook.md"
RECIPES = {
    "local": "## A coding agent on a local OpenAI-compatible server",
    "plan": "## A plan from a YAML file, with retries",
    "budget": "## A plugin that enforces a budget",
    "memory": "## Memory across sessions",
    "testing": "## Testing an agent with `ScriptedProvider`",
}
NO_RETRY = RetryPolicy(max_attempts=1)


def section(key: str) -> str:
    page = DOC.read_text(encoding="utf-8")
    start = page.index(RECIPES[key])
    end = page.find("\n## ", start + 1)
    return page[start : end if end != -1 else len(page)]


def blocks(key: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section(key), re.S)


def with_value(code: str, name: str, value: str) -> str:
    """``code`` with the line ``NAME = ...`` (the one a reader edits) set to ``value``."""
    pattern = re.compile(rf"^{name} = .*$", re.M)
    assert pattern.search(code), f"the recipe lost its {name} line"
    return pattern.sub(f"{name} = {value!r}", code, count=1)


def run_block(code: str, label: str) -> dict[str, Any]:
    """Run a recipe as the script it is, in a thread of its own: a recipe calls ``anyio.run``, which
    refuses to start where an event loop already runs (the Temporal tests' session-scoped fixture
    keeps one open in the main thread for the rest of the session)."""
    namespace: dict[str, Any] = {"__name__": f"cookbook_{label}"}
    failure: list[BaseException] = []

    def script() -> None:
        try:
            exec(compile(code, f"{DOC}:{label}", "exec"), namespace)
        except BaseException as exc:  # re-raised in the test's thread
            failure.append(exc)

    thread = threading.Thread(target=script, name=f"cookbook-{label}")
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), f"the {label} recipe did not finish in 120 s"
    if failure:
        raise failure[0]
    return namespace


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[ScriptedProvider]]:
    """``cookbook:<name>`` models: each provider made hands out the next of the scripts put here."""
    monkeypatch.chdir(tmp_path)
    saved = dict(llm_factory._factories)
    queue: list[ScriptedProvider] = []

    def factory(model: str, **options: Any) -> ScriptedProvider:
        return queue.pop(0)

    register_provider_factory("cookbook", factory)
    clear_provider_cache()
    yield queue
    llm_factory._factories.clear()
    llm_factory._factories.update(saved)
    clear_provider_cache()


def agcore_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agcore.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "AGCORE_HOME": str(cwd / "home"), "NO_COLOR": "1", "COLUMNS": "200"},
    )


def command(key: str, starts: str) -> list[str]:
    """The page's command line starting with ``starts`` (a comment after it dropped), as argv."""
    for block in blocks(key, "sh"):
        for line in block.splitlines():
            if line.startswith(starts):
                return shlex.split(line.split("  #")[0])[1:]
    raise AssertionError(f"the recipe lost its `{starts}` command")


def option(argv: list[str], name: str, value: str) -> list[str]:
    index = argv.index(name)
    return [*argv[: index + 1], value, *argv[index + 2 :]]


def test_every_python_block_is_tested() -> None:
    counts = {key: len(blocks(key, "python")) for key in RECIPES}
    assert counts == {"local": 1, "plan": 2, "budget": 1, "memory": 1, "testing": 1}
    total = len(re.findall(r"```python\n", DOC.read_text(encoding="utf-8")))
    assert total == sum(counts.values()), "a Python block outside the five recipes is not run by this test"


# ------------------------------------------------------------------- a local OpenAI-compatible server


def test_the_coding_agent_runs_on_a_local_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    asked: list[str] = []
    monkeypatch.setattr(builtins, "input", lambda prompt="": asked.append(prompt) or "y")
    (code,) = blocks("local", "python")
    cached_before = set(map(id, llm_factory._cache.values()))  # other tests' providers are theirs
    with FakeVendor() as server:
        code = with_value(with_value(code, "BASE_URL", server.openai_base_url), "PROJECT", str(project))
        run_block(code, "local")
        requests = [json.loads(body) for _, path, _, body in server.requests if path.endswith("/completions")]
    # The recipe closes its provider: a client left open would be closed by the SDK's __del__ on a
    # later test's event loop, which its connections do not belong to.
    providers = [p for p in llm_factory._cache.values() if id(p) not in cached_before]
    assert providers
    assert all(provider.closed for provider in providers)
    clear_provider_cache()
    gc.collect()
    out = capsys.readouterr().out
    assert ANSWER_TEXT in out
    assert "done after 2 model calls" in out
    first = requests[0]
    assert first["model"] == "qwen2.5-coder"
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {"read_file", "write_file", "apply_patch", "run_command"} <= offered
    system = first["messages"][0]
    assert system["role"] == "system"
    assert str(project) in system["content"]
    # The fake server asks for a tool the workspace lacks: the model is told, nothing is confirmed.
    assert "get_weather" in json.dumps(requests[1]["messages"][-1])
    assert asked == []


def test_the_cli_command_for_a_local_server_runs(tmp_path: Path) -> None:
    argv = command("local", "agcore run ")
    workspace = tmp_path / "tool"
    workspace.mkdir()
    with FakeVendor() as server:
        argv = option(option(argv, "--base-url", server.openai_base_url), "--workspace", str(workspace))
        done = agcore_cli(*argv, "--yes", "--no-plugins", cwd=tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    assert ANSWER_TEXT[:40] in done.stdout


# ------------------------------------------------------------------------------ a plan with retries


def plan_file(directory: Path) -> None:
    (yaml_text,) = blocks("plan", "yaml")
    assert yaml_text.startswith("# release.yaml")
    (directory / "release.yaml").write_text(yaml_text, encoding="utf-8")


def test_the_plan_recipe_retries_a_step_that_failed_recoverably(
    scripted: list[ScriptedProvider], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan_file(tmp_path)
    model = ScriptedProvider(
        ["Collected the changes.", OverloadedError("overloaded"), "Bumped to 1.4.0.", "Notes written."],
        retry_policy=NO_RETRY,
    )
    scripted.append(model)
    run, _ = blocks("plan", "python")
    run_block(with_value(run, "MODEL", "cookbook:plans"), "plan")
    assert capsys.readouterr().out.splitlines() == [
        "changelog: completed after 1 attempt(s)",
        "version: completed after 2 attempt(s)",
        "notes: completed after 1 attempt(s)",
        "succeeded",
    ]
    assert model.calls == 4


def test_the_plan_recipe_resumes_in_a_new_process_without_redoing_steps(
    scripted: list[ScriptedProvider], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan_file(tmp_path)
    run, resume = blocks("plan", "python")
    # A rejected key is not recoverable: the step fails at once, and the run stops there.
    scripted.append(ScriptedProvider(["Collected the changes.", AuthenticationError("bad key")]))
    run_block(with_value(run, "MODEL", "cookbook:plans"), "plan")
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["changelog: completed after 1 attempt(s)", "version: failed after 1 attempt(s)"]
    assert out[-1] == "failed"
    clear_provider_cache()
    later = ScriptedProvider(["Bumped to 1.4.0.", "Notes written."])
    scripted.append(later)
    run_block(with_value(resume, "MODEL", "cookbook:plans"), "resume")
    assert capsys.readouterr().out.splitlines() == ["succeeded"]
    assert later.calls == 2  # the completed step was not run again
    notes_input = later.requests[1].messages[-1].blocks[0].text
    assert "Collected the changes." in notes_input  # the completed step's result reached the later one


def test_the_plan_cli_commands_retry_and_resume(tmp_path: Path) -> None:
    plan_file(tmp_path)
    workspace = tmp_path / "project"
    workspace.mkdir()
    db = str(tmp_path / "sessions.db")
    failing = tmp_path / "failing.yaml"
    failing.write_text(
        "replies:\n  - Collected the changes.\n  - {error: {status: 529, message: overloaded}}\n"
        "  - {error: {status: 401, message: invalid key}}\n",
        encoding="utf-8",
    )
    run = option(command("plan", "agcore plan run "), "--workspace", str(workspace))
    done = agcore_cli(*run, "--model", f"scripted:{failing}", "--db", db, "--no-plugins", cwd=tmp_path)
    assert done.returncode == 1, done.stderr + done.stdout
    assert "agcore plan resume release-1.4" in done.stdout + done.stderr
    rest = tmp_path / "rest.yaml"
    rest.write_text("replies:\n  - Bumped to 1.4.0.\n  - Notes written.\n", encoding="utf-8")
    resume = command("plan", "agcore plan resume ")
    done = agcore_cli(*resume, "--model", f"scripted:{rest}", "--db", db, "--workspace", str(workspace),
                      "--no-plugins", cwd=tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "3/3 steps done" in done.stdout


# ---------------------------------------------------------------------------------------- a budget


def test_the_budget_plugin_stops_the_session_past_its_limit(
    scripted: list[ScriptedProvider], capsys: pytest.CaptureFixture[str]
) -> None:
    # 40k tokens in and 5k out on claude-haiku-4-5 ($1 / $5 per million) cost $0.065: over $0.05.
    reply = AssistantMessage(
        content=[TextBlock(text="Paris grew from a Celtic settlement...")],
        usage=Usage(input_tokens=40_000, output_tokens=5_000),
    )
    model = ScriptedProvider([reply, "never sent"], model_id="claude-haiku-4-5")
    scripted.append(model)
    (code,) = blocks("budget", "python")
    namespace = run_block(with_value(code, "MODEL", "cookbook:budget"), "budget")
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("stopped_by_hook: $0.0650 spent")
    assert second.startswith("error: $0.0650 spent")
    assert "BudgetExceeded" in second
    assert "spent $0.07 of $0.05" in second
    assert model.calls == 1  # the second turn never reached the model
    assert issubclass(namespace["BudgetExceeded"], Exception)


# ------------------------------------------------------------------------------------------ memory


def test_memory_and_the_conversation_survive_into_a_later_run(
    scripted: list[ScriptedProvider], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (code,) = blocks("memory", "python")
    code = with_value(code, "MODEL", "cookbook:memory")
    first = ScriptedProvider([tool_call_reply("remember", {"content": "We deploy on Tuesdays."}), "Noted."])
    scripted.append(first)
    monkeypatch.setattr(sys, "argv", ["memory.py"])
    run_block(code, "memory-first")
    assert capsys.readouterr().out.splitlines() == ["Noted."]
    assert not first.requests[1].messages[-1].tool_results[0].is_error

    clear_provider_cache()
    later = ScriptedProvider([
        tool_call_reply("retrieve", {"query": "staging database deploy"}),
        "Staging is db-stg-2, and we deploy on Tuesdays.",
    ])
    scripted.append(later)
    monkeypatch.setattr(sys, "argv", ["memory.py", "--later"])
    run_block(code, "memory-later")  # new stores on the same files, as another process would open them
    assert capsys.readouterr().out.splitlines() == [
        "Staging is db-stg-2, and we deploy on Tuesdays.",
        "8 messages in the conversation",
    ]
    # The later run saw the first conversation, and found both facts in memory.
    history = later.requests[0].messages
    assert history[0].blocks[0].text == "Remember: we deploy on Tuesdays."
    found = later.requests[1].messages[-1].tool_results[0].text
    assert "db-stg-2" in found
    assert "We deploy on Tuesdays." in found


# ----------------------------------------------------------------------------------------- testing


@pytest.mark.anyio
async def test_the_testing_recipe_passes() -> None:
    (code,) = blocks("testing", "python")
    namespace = run_block(code, "testing")
    tests = [name for name in namespace if name.startswith("test_")]
    assert tests == ["test_the_agent_looks_the_weather_up", "test_a_rejected_key_ends_the_turn_with_an_error"]
    for name in tests:
        await namespace[name]()
