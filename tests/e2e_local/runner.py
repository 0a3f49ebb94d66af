"""Running one task through ``agcore run`` or ``execute_plan`` (each a subprocess with a time cap),
judging it, and writing the per-task table as JSON and markdown."""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from tests.e2e_local.tasks import Outcome, Task

__all__ = ["TaskResult", "cli_flags", "cli_has", "markdown_table", "run_task", "write_results"]

_REPO = Path(__file__).resolve().parents[2]
_CALLS = re.compile(r"(\d[\d,]*) model calls?\b")
_PLAN_REPORT = "E2E-PLAN-REPORT "
#: Options passed to ``agcore run`` when its ``--help`` lists them (so the same suite runs on a CLI
#: that predates them): a turn cap like the plan runner's, and the server's real context size.
_OPTIONAL_FLAGS = {"--max-turns": "{max_turns}", "--context-window": "{context}"}


@dataclass
class TaskResult:
    """One row of the table."""

    task: str
    via: str
    achieved: bool
    reason: str
    claimed: bool  # what agcore said: exit 0 (cli) or plan.succeeded (plan)
    exit_code: int | None
    model_calls: int | None
    tool_calls: int | None
    seconds: float
    timed_out: bool
    detail: str = ""  # agcore's own closing line (cli) or the steps' statuses (plan)
    checked: bool = False  # the task's acceptance check was passed to agcore (--check / plan check:)

    @property
    def false_success(self) -> bool:
        """agcore reported success for work that was not done."""
        return self.claimed and not self.achieved


def _agcore() -> list[str]:
    return [sys.executable, "-m", "agcore.cli"]


@functools.cache
def _run_help() -> str:
    return subprocess.run([*_agcore(), "run", "--help"], capture_output=True, text=True, env=_env(None),
                          check=False).stdout


def cli_has(flag: str) -> bool:
    """Whether this ``agcore run`` has ``flag`` (the suite runs on CLIs that predate some)."""
    return re.search(rf"{re.escape(flag)}\b", _run_help()) is not None


@functools.cache
def cli_flags(max_turns: int, context: int, text_tools: str | None = None,
              constrained: str | None = None) -> tuple[str, ...]:
    """The optional flags this ``agcore run`` understands, with their values; ``--text-tools`` and
    ``--constrained-calls`` only when asked for (``AGCORE_E2E_TEXT_TOOLS``,
    ``AGCORE_E2E_CONSTRAINED``: the default is the CLI's own)."""
    help_text = _run_help()
    wanted = dict(_OPTIONAL_FLAGS)
    if text_tools:
        wanted["--text-tools"] = text_tools
    if constrained:
        wanted["--constrained-calls"] = constrained
    flags: list[str] = []
    for flag, value in wanted.items():
        if re.search(rf"{re.escape(flag)}\b", help_text):
            flags += [flag, value.format(max_turns=max_turns, context=context)]
    return tuple(flags)


def _env(home: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGCORE_MODEL"))}
    env.update({"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200", "PYTHONUNBUFFERED": "1"})
    # The workspace's commands (`python -m pytest`) find this interpreter and its pytest first.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    if home is not None:
        env["AGCORE_HOME"] = str(home)
    return env


def _run_capped(command: list[str], *, cwd: Path, env: dict[str, str], timeout: float,
                log: Path) -> tuple[int | None, str, bool]:
    """Run ``command``; at ``timeout`` send SIGINT (agcore then cancels the turn and prints its
    summary), and kill it 30 s later. Returns exit code, output, whether it timed out."""
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        timed_out = False
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    return process.returncode, log.read_text(encoding="utf-8", errors="replace"), timed_out


def run_task(task: Task, workspace: Path, *, base_url: str, model: str, timeout: float, max_turns: int,
             context: int, logs: Path, text_tools: str | None = None, constrained: str | None = None,
             checked: bool = False) -> TaskResult:
    """Set up ``workspace``, run ``task`` against the server, and judge the workspace. ``text_tools``
    and ``constrained`` (on/off/auto) force agcore's text-mode tool calls and constrained calls where
    the CLI has the flag (None: defaults); ``checked``: pass the task's acceptance check
    (``--check``, a plan's ``check:``) where agcore takes it."""
    task.setup(workspace)
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{task.name}.log"
    home = logs / f"{task.name}.home"
    home.mkdir(exist_ok=True)
    started = time.monotonic()
    if task.via == "cli":
        checks = ["--check", task.check_cmd] if checked and cli_has("--check") else []
        command = [*_agcore(), "run", task.prompt, "--model", model, "--base-url", base_url,
                   "--workspace", str(workspace), "--yes", "--no-plugins",
                   *cli_flags(max_turns, context, text_tools, constrained), *checks]
        code, output, timed_out = _run_capped(command, cwd=workspace, env=_env(home), timeout=timeout,
                                              log=log)
        seconds = time.monotonic() - started
        found = _CALLS.findall(output)
        calls = int(found[-1].replace(",", "")) if found else None
        tools = sum(1 for line in output.splitlines() if line.lstrip().startswith("▸ "))
        claimed = code == 0 and not timed_out
        detail = _closing_line(output)
    else:
        plan_file = logs / f"{task.name}.plan.yaml"
        plan_file.write_text(_dedent(task.plan), encoding="utf-8")
        command = [sys.executable, "-m", "tests.e2e_local.plan_main", str(plan_file),
                   "--workspace", str(workspace), "--base-url", base_url, "--model", model,
                   "--timeout", str(timeout), "--max-tool-turns", str(max_turns),
                   *(["--text-tools", text_tools] if text_tools else []),
                   *(["--constrained-calls", constrained] if constrained else []),
                   *(["--check", task.check_cmd] if checked else [])]
        code, output, timed_out = _run_capped(command, cwd=_REPO, env=_env(home), timeout=timeout + 60,
                                              log=log)
        seconds = time.monotonic() - started
        report = _plan_report(output)
        timed_out = timed_out or bool(report.get("timed_out"))
        calls = report.get("model_calls")
        tools = report.get("tool_calls")
        claimed = bool(report.get("succeeded"))
        detail = _steps_line(report)
        checks = ["--check"] if report.get("checked") else []
    check = task.check(workspace, Outcome(code, output))
    reason = check.reason if not check.achieved else ""
    if timed_out and not check.achieved:
        reason = f"timed out after {timeout:.0f}s; {reason}"
    return TaskResult(task.name, task.via, check.achieved, reason, claimed, code, calls, tools,
                      round(seconds, 1), timed_out, detail, checked=bool(checks))


def _closing_line(output: str) -> str:
    """The CLI's summary (``✓ done (unchecked) · 2 model calls · …``), after its error line if it
    printed one."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    ends = [n for n, line in enumerate(lines) if _CALLS.search(line)]
    if not ends:
        return lines[-1][:300] if lines else "(no output)"
    last = ends[-1]
    before = lines[last - 1] if last and lines[last - 1].startswith(("✗", "■", "⏹", "error")) else ""
    return " / ".join(x for x in (before[:200], lines[last][:200]) if x)


def _steps_line(report: dict[str, object]) -> str:
    steps = report.get("steps")
    if not isinstance(steps, list):
        return f"no report from the plan runner ({report.get('error') or 'it died'})"
    text = ", ".join(f"{s.get('id')} {s.get('status')}" for s in steps if isinstance(s, dict))
    error = report.get("error")
    return f"steps: {text}" + (f"; error: {error}" if error else "")


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text).lstrip("\n")


def _plan_report(output: str) -> dict[str, object]:
    for line in reversed(output.splitlines()):
        if line.startswith(_PLAN_REPORT):
            loaded: dict[str, object] = json.loads(line.removeprefix(_PLAN_REPORT))
            return loaded
    return {}


def markdown_table(results: list[TaskResult], *, title: str) -> str:
    """The results as a markdown table, with totals."""
    lines = [f"### {title}", "",
             "| task | via | checked | achieved | agcore said | model calls | tool calls | wall time "
             "| why not |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        said = ("done" if r.claimed else "failed") + (" (**false success**)" if r.false_success else "")
        if r.timed_out:
            said = "timed out"
        lines.append(
            f"| {r.task} | {r.via} | {'yes' if r.checked else 'no'} | "
            f"{'yes' if r.achieved else 'no'} | {said} | "
            f"{'?' if r.model_calls is None else r.model_calls} | "
            f"{'?' if r.tool_calls is None else r.tool_calls} | {r.seconds:.0f} s | "
            f"{r.reason.replace('|', '/')} |"
        )
    achieved = sum(r.achieved for r in results)
    false = sum(r.false_success for r in results)
    total = sum(r.seconds for r in results)
    lines += ["", f"{achieved}/{len(results)} achieved · {false} false success(es) · "
                  f"{total / 60:.1f} min in all", "", "What agcore said, per task:", ""]
    lines += [f"- {r.task}: {r.detail.replace(chr(10), ' ')}" for r in results]
    return "\n".join(lines) + "\n"


def write_results(results: list[TaskResult], directory: Path, *, title: str, meta: dict[str, object]) -> Path:
    """``results.json`` and ``results.md`` in ``directory``; returns the markdown file."""
    directory.mkdir(parents=True, exist_ok=True)
    rows = [asdict(r) | {"false_success": r.false_success} for r in results]
    (directory / "results.json").write_text(json.dumps({"meta": meta, "results": rows}, indent=2) + "\n",
                                            encoding="utf-8")
    markdown = directory / "results.md"
    details = "\n".join(f"- {k}: {v}" for k, v in meta.items())
    markdown.write_text(markdown_table(results, title=title) + "\n" + details + "\n", encoding="utf-8")
    return markdown
