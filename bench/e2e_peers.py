"""The local-model e2e tasks (``tests/e2e_local``) through peer agent frameworks: smolagents'
``ToolCallingAgent`` and pydantic-ai's ``Agent``, on the same model and the same llama-server (context
8192, 2 threads, temperature 0, seed 1), through its OpenAI-compatible endpoint, judged by the same
checks. A bench, never a test: it prints and writes a table (achieved, false successes, model calls,
wall time per framework), and nothing fails on the numbers.

    python bench/e2e_peers.py --gguf ~/models/qwen2.5-coder-1.5b-q4_k_m.gguf [--frameworks smolagents]
        [--tasks count-lines,create-file] [--set tasks|heldout] [--out .e2e-peers]
        [--base-url URL --model NAME]

The frameworks live in ``bench/.venv-e2e-peers`` (``bench/peers/e2e-requirements.txt``), created on
first use; the script re-runs itself there. Never agcore dependencies.

Same footing for every framework: the same four tools (``read_file``, ``write_file``, ``edit_file``
with an exact old/new replacement, ``run_command`` in the workspace with a 120 s cap and the last
4,000 characters of output), the same cap of 12 model calls, 5 minutes per task, replies capped at
1,638 tokens (what ``agcore run`` sets for an 8k window), and the coding-assistant sentence agcore's
plan runner uses as the system prompt. Each framework makes native tool calls (llama-server's
``--jinja`` chat template); the plans' steps go in as one numbered task, as neither has a plan runner.
A framework "said done" when its run returned an answer (not a step limit, not an error).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e_local.runner import TaskResult, write_results  # noqa: E402
from tests.e2e_local.task_sets import TASK_SETS  # noqa: E402
from tests.e2e_local.tasks import Outcome, Task  # noqa: E402

VENV = ROOT / "bench" / ".venv-e2e-peers"
REQUIREMENTS = ROOT / "bench" / "peers" / "e2e-requirements.txt"
FRAMEWORKS = ("smolagents", "pydantic-ai")
MAX_CALLS = 12
TIMEOUT = 300.0
REPLY_CAP = 1638
REPORT = "E2E-PEER-REPORT "
IDENTITY = (
    "You are a careful coding assistant. You work in the user's workspace with the tools given: read "
    "before you change, make the smallest change that does the job, run the relevant command to check "
    "it when you can, and finish with a short summary of what you did."
)


# ------------------------------------------------------------------------------ the tools


class Tools:
    """The four tools, confined to ``root``; each returns text (an error as text the model reads)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.calls = 0

    def _path(self, path: str) -> Path:
        full = (self.root / path).resolve()
        if full != self.root and self.root not in full.parents:
            raise ValueError(f"{path} is outside the workspace")
        return full

    def read_file(self, path: str) -> str:
        self.calls += 1
        try:
            return self._path(path).read_text(encoding="utf-8")
        except (OSError, ValueError) as exc:
            return f"Error: {exc}"

    def write_file(self, path: str, content: str) -> str:
        self.calls += 1
        try:
            full = self._path(path)
            full.parent.mkdir(parents=True, exist_ok=True)
            full.write_text(content, encoding="utf-8")
        except (OSError, ValueError) as exc:
            return f"Error: {exc}"
        return f"Wrote {path} ({len(content)} characters)."

    def edit_file(self, path: str, old: str, new: str) -> str:
        self.calls += 1
        try:
            full = self._path(path)
            text = full.read_text(encoding="utf-8")
        except (OSError, ValueError) as exc:
            return f"Error: {exc}"
        count = text.count(old)
        if count != 1:
            return f"Error: the old text occurs {count} times in {path}; it must occur exactly once."
        full.write_text(text.replace(old, new, 1), encoding="utf-8")
        return f"Edited {path}."

    def run_command(self, command: str) -> str:
        self.calls += 1
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        try:
            done = subprocess.run(command, shell=True, cwd=self.root, env=env, capture_output=True, text=True,
                                  timeout=120, check=False)
        except subprocess.TimeoutExpired:
            return "Error: the command timed out after 120 s"
        output = (done.stdout + done.stderr)[-4000:]
        return f"exit {done.returncode}\n{output}"


_PATH = "The file's path, relative to the workspace."
_DOCS = {
    "read_file": ("Read a text file of the workspace.", {"path": _PATH}),
    "write_file": ("Write a text file of the workspace (created or replaced).",
                   {"path": _PATH, "content": "The whole new content."}),
    "edit_file": ("Replace the exact text old (which must occur exactly once) with new in a file.",
                  {"path": _PATH, "old": "The exact text to replace.",
                   "new": "The text to put in its place."}),
    "run_command": ("Run a shell command in the workspace; returns its exit status and output.",
                    {"command": "The shell command."}),
}


def _documented(tools: Tools) -> list[Any]:
    """The tools as plain functions with Google-style docstrings (both frameworks read them)."""
    out = []
    for name, (summary, args) in _DOCS.items():
        method = getattr(tools, name)

        def bound(*a: Any, _m: Any = method, **k: Any) -> str:
            return str(_m(*a, **k))

        lines = "\n".join(f"    {arg}: {text}" for arg, text in args.items())
        bound.__name__ = name
        bound.__doc__ = f"{summary}\n\nArgs:\n{lines}\n"
        bound.__annotations__ = {**{arg: "str" for arg in args}, "return": "str"}
        import inspect

        bound.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(arg, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str) for arg in args],
            return_annotation=str)
        out.append(bound)
    return out


# ------------------------------------------------------------------------ one task, one framework


def _prompt(task: Task) -> str:
    if task.via == "cli":
        return task.prompt
    import yaml

    plan = yaml.safe_load(textwrap.dedent(task.plan))
    steps = "\n".join(f"{n}. {s['description']}" for n, s in enumerate(plan["steps"], 1))
    return f"{plan['goal']}. Do these steps in order:\n{steps}"


def _run_smolagents(task: Task, tools: Tools, base_url: str, model: str) -> dict[str, Any]:
    from smolagents import OpenAIServerModel, ToolCallingAgent, tool

    served = OpenAIServerModel(model_id=model, api_base=base_url, api_key="none", temperature=0,
                               max_tokens=REPLY_CAP)
    agent = ToolCallingAgent(tools=[tool(f) for f in _documented(tools)], model=served, max_steps=MAX_CALLS,
                             instructions=f"{IDENTITY}\nThe workspace is {tools.root}.", verbosity_level=0)
    result = agent.run(_prompt(task), return_full_result=True)
    calls = sum(1 for s in agent.memory.steps if type(s).__name__ == "ActionStep")
    done = result.state == "success"
    return {"answer": str(result.output or ""), "claimed": done, "model_calls": calls,
            "error": None if done else f"state {result.state}"}


def _run_pydantic_ai(task: Task, tools: Tools, base_url: str, model: str) -> dict[str, Any]:
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import UsageLimitExceeded
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    served = OpenAIChatModel(model, provider=OpenAIProvider(base_url=base_url, api_key="none"))
    agent = Agent(served, tools=_documented(tools),
                  system_prompt=f"{IDENTITY}\nThe workspace is {tools.root}.",
                  model_settings={"temperature": 0, "max_tokens": REPLY_CAP})
    try:
        result = agent.run_sync(_prompt(task), usage_limits=UsageLimits(request_limit=MAX_CALLS))
    except UsageLimitExceeded as exc:
        return {"answer": "", "claimed": False, "model_calls": MAX_CALLS, "error": f"{exc}"}
    calls = result.usage.requests
    return {"answer": str(result.output), "claimed": True, "model_calls": calls, "error": None}


def run_one(framework: str, task: Task, workspace: Path, base_url: str, model: str) -> dict[str, Any]:
    tools = Tools(workspace)
    runner = _run_smolagents if framework == "smolagents" else _run_pydantic_ai
    try:
        report = runner(task, tools, base_url, model)
    except Exception as exc:  # the framework gave up: said failed, the workspace is judged anyway
        error = f"{type(exc).__name__}: {exc}"
        report = {"answer": "", "claimed": False, "model_calls": None, "error": error}
    report["tool_calls"] = tools.calls
    return report


# --------------------------------------------------------------------------------- the parent


def _judge(framework: str, task: Task, workspace: Path, *, base_url: str, model: str,
           logs: Path, timeout: float) -> TaskResult:
    shutil.rmtree(workspace, ignore_errors=True)
    workspace.mkdir(parents=True)
    task.setup(workspace)
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{framework}-{task.name}.log"
    command = [sys.executable, str(Path(__file__).resolve()), "--one", framework, task.name,
               "--workspace", str(workspace), "--base-url", base_url, "--model", model]
    started = time.monotonic()
    timed_out = False
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=workspace,
                                   start_new_session=True)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            process.kill()
            process.wait()
    seconds = time.monotonic() - started
    text = log.read_text(encoding="utf-8", errors="replace")
    line = next((ln for ln in reversed(text.splitlines()) if ln.startswith(REPORT)), None)
    report: dict[str, Any] = json.loads(line.removeprefix(REPORT)) if line else {"claimed": False}
    check = task.check(workspace, Outcome(0 if report.get("claimed") else 1, report.get("answer", "")))
    reason = check.reason if not check.achieved else ""
    if timed_out and not check.achieved:
        reason = f"timed out after {timeout:.0f}s; {reason}"
    detail = report.get("error") or ("answered" if report.get("claimed") else "no report")
    shutil.copytree(workspace, logs / f"{framework}-{task.name}.workspace", dirs_exist_ok=True)
    claimed = bool(report.get("claimed")) and not timed_out
    return TaskResult(task.name, task.via, check.achieved, reason, claimed,
                      0 if report.get("claimed") else 1, report.get("model_calls"), report.get("tool_calls"),
                      round(seconds, 1), timed_out, str(detail)[:300])


def _ensure_venv() -> Path:
    python = VENV / "bin" / "python"
    stamp = VENV / ".installed-stamp"
    want = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    if not (python.exists() and stamp.exists() and stamp.read_text() == want):
        print(f"setting up {VENV.relative_to(ROOT)} (pip install -r {REQUIREMENTS.relative_to(ROOT)}) ...",
              flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "-r", str(REQUIREMENTS)], check=True)
        stamp.write_text(want)
    return python


@contextlib.contextmanager
def _server(args: argparse.Namespace) -> Any:
    if args.base_url:
        yield args.base_url, args.model
        return
    from tests.e2e_local.llama_server import build_llama_server, start_llama_server

    gguf = Path(args.gguf).expanduser()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    threads = int(os.environ.get("AGCORE_E2E_THREADS", "2"))  # as the suite: 2 unless told
    with start_llama_server(build_llama_server(), gguf, log=out / "llama-server.log", context=8192,
                            threads=threads,
                            alias=gguf.stem, extra=("--temp", "0", "--seed", "1")) as server:
        yield server.base_url, server.model


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="e2e_peers", description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", default=os.environ.get("AGCORE_E2E_GGUF", ""))
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS))
    parser.add_argument("--tasks", default="")
    parser.add_argument("--set", default="tasks", choices=sorted(TASK_SETS),
                        help="the project's tasks, or the held-out ones (tests/e2e_local/heldout.py)")
    parser.add_argument("--out", default=str(ROOT / ".e2e-peers"))
    parser.add_argument("--base-url", default="")
    parser.add_argument("--model", default="")
    parser.add_argument("--one", nargs=2, metavar=("FRAMEWORK", "TASK"))
    parser.add_argument("--workspace", default="")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds per task (300)")
    args = parser.parse_args(argv)
    chosen = TASK_SETS[args.set]
    by_name = {t.name: t for sets in TASK_SETS.values() for t in sets}
    if args.one:
        framework, name = args.one
        report = run_one(framework, by_name[name], Path(args.workspace), args.base_url, args.model)
        print(REPORT + json.dumps(report), flush=True)
        return 0
    if Path(sys.prefix).resolve() != VENV.resolve():
        python = _ensure_venv()
        return subprocess.run([str(python), str(Path(__file__).resolve()), *argv], check=False).returncode
    tasks = [by_name[n] for n in args.tasks.split(",")] if args.tasks else list(chosen)
    out = Path(args.out)
    with _server(args) as (base_url, model):
        for framework in args.frameworks.split(","):
            results = [_judge(framework, task, out / "workspace", base_url=base_url, model=model,
                              logs=out / "logs", timeout=args.timeout) for task in tasks]
            meta = {"framework": framework, "model": args.gguf or model,
                    "server": "llama-server (default --jinja), ctx 8192, temperature 0, seed 1",
                    "threads": os.environ.get("AGCORE_E2E_THREADS", "2"),
                    "max model calls": MAX_CALLS,
                    "per-task timeout (s)": args.timeout, "reply cap (tokens)": REPLY_CAP,
                    "task set": args.set}
            markdown = write_results(results, out / framework, title=f"{framework} on the e2e-local tasks",
                                     meta=meta)
            print(markdown.read_text(encoding="utf-8"), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
