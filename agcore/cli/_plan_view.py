"""How the command line shows a plan: as a table (``plan_table``), its steps' progress as they
change (``Progress``) and their tool calls (``ToolLines``), and the question asked before a drafted
plan runs (``plan_approval``: run it, edit it in a file, redraft it with feedback, or stop)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.to_thread
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agcore.agent import AgentSession, CostTracker, Plan, PlanApproval, PlanDecision, PlanParseError, Step
from agcore.agent import StepStatus as S
from agcore.cli._errors import cli_advice
from agcore.cli._render import Renderer, count, format_usage, shorten
from agcore.cli._terminal import Terminal
from agcore.hooks import HookContext, hookimpl
from agcore.llm.types import ToolResultBlock, ToolUseBlock

__all__ = [
    "Progress", "ToolLines", "failed_words", "plan_approval", "plan_file_data", "plan_summary", "plan_table",
    "plan_words",
]

_STYLE = {S.PENDING: "dim", S.RUNNING: "cyan", S.COMPLETED: "green", S.FAILED: "red", S.SKIPPED: "yellow"}
_SHOWN = {S.COMPLETED: "done", S.FAILED: "failed", S.SKIPPED: "skipped", S.RUNNING: "running",
          S.PENDING: "pending"}
_Answer = Literal["run", "edit", "revise", "stop"]
_ANSWERS: dict[str, _Answer] = {"y": "run", "yes": "run", "e": "edit", "edit": "edit", "r": "revise",
                                "revise": "revise", "n": "stop", "no": "stop"}
_HINT = "y = run it / e = edit it / r = redraft with feedback / n = stop"
NO_ANSWER = "no answer (pass --yes to run the plan without asking)"


def plan_table(plan: Plan, *, title: str, results: bool, interrupted: bool = False) -> Table:
    """The plan's steps as a table: with statuses and outcomes (``results``) or as drafted. After an
    ``interrupted`` run, the step that was running shows as interrupted (the next run redoes it)."""
    table = Table(title=title, title_justify="left", show_lines=False)
    table.add_column("step", no_wrap=True)
    table.add_column("description")
    if results:
        table.add_column("status", no_wrap=True)
        table.add_column("tries", justify="right")
        table.add_column("outcome")
    else:
        table.add_column("depends on", no_wrap=True)
        table.add_column("tool hints")
    # Text cells, not strings: a description like "fix [a] and [b]" is not rich markup.
    for step in plan.steps:
        if results:
            failure = cli_advice(step.error.message) if step.error else None
            outcome = step.result or failure or step.skip_reason or ""
            shown = Text(_SHOWN[step.status], style=_STYLE[step.status])
            if interrupted and step.status is S.RUNNING:
                shown = Text("interrupted", style="yellow")
            # A failure's cause is shown whole (wrapped): cut, it loses the part that says what broke.
            whole = failure is not None and not step.result
            table.add_row(Text(step.id), Text(step.description), shown, str(step.attempts),
                          Text(" ".join(outcome.split()) if whole else shorten(outcome, 100)))
        else:
            table.add_row(Text(step.id), Text(step.description), Text(", ".join(step.depends_on)),
                          Text(", ".join(step.tool_hints)))
    return table


class ToolLines:
    """A hook plugin showing the step turns' tool calls (``execute_plan`` runs them without events)."""

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer
        self._session: AgentSession | None = None
        self._text_mode_told = False

    def watch(self, session: AgentSession) -> None:
        """Say when ``session`` switches to text-mode tool calls (as ``agcore run`` does from its
        event, which a plan's step turns do not stream); a session that had switched already is not
        announced again."""
        self._session = session
        self._text_mode_told = session.switched_to_text_mode

    @hookimpl
    def before_tool_call(self, ctx: HookContext, call: ToolUseBlock) -> None:
        # A switch happens with the first call written as text: it is known by the time it runs.
        if self._session is not None and self._session.switched_to_text_mode and not self._text_mode_told:
            self._text_mode_told = True
            self.renderer.line(f"{ctx.model or 'the model'} writes its tool calls as text: text-mode tool "
                               "calls from now on", style="dim")
        self.renderer.tool_call(call, indent="    ")

    @hookimpl
    def after_tool_call(self, ctx: HookContext, call: ToolUseBlock, result: ToolResultBlock,
                        status: str) -> None:
        self.renderer.tool_result(result, status, indent="    ")


class Progress:
    """Prints a line for each step status change (``execute_plan``'s ``on_update``)."""

    def __init__(self, renderer: Renderer, plan: Plan | None = None) -> None:
        self.renderer = renderer
        # Steps a resumed plan had completed before are not announced again.
        self._seen: dict[str, tuple[S, int]] = {
            step.id: (step.status, step.attempts) for step in (plan.steps if plan else ()) if step.done
        }

    def __call__(self, plan: Plan) -> None:
        total = len(plan.steps)
        for n, step in enumerate(plan.steps, 1):
            state = (step.status, step.attempts)
            if self._seen.get(step.id) == state or step.status is S.PENDING:
                self._seen[step.id] = state
                continue
            self._seen[step.id] = state
            where = f"step {step.id} ({n}/{total})"
            if step.status is S.RUNNING:
                again = f" (attempt {step.attempts})" if step.attempts > 1 else ""
                if step.last_error is not None:
                    why = shorten(step.last_error.message, 120)
                    again = f" (attempt {step.attempts}; the last one failed: {why})"
                text = shorten(step.description, 100)
                self.renderer.line(f"▶ {where} running{again}: {text}", style="cyan")
            elif step.status is S.COMPLETED:
                checked = " · checks passed" if plan.checks_for(step) else ""
                self.renderer.line(f"✓ {where} done{checked}: {shorten(step.result or '', 100)}",
                                   style="green")
            elif step.status is S.FAILED:
                message = cli_advice(step.error.message) if step.error else ""
                self.renderer.line(f"✗ {where} {failed_words(step)}: {shorten(message, 160)}", style="red")
            elif step.status is S.SKIPPED:
                reason = shorten(step.skip_reason or "", 120)
                self.renderer.line(f"- {where} skipped: {reason}", style="yellow")


def plan_approval(terminal: Terminal, console: Console, *, yes: bool) -> PlanApproval:
    """Shows each drafted plan and asks whether to run it: y runs it, r asks what should change and
    has the model redraft it, n (or no answer) stops. With ``yes`` the plan runs without asking."""

    async def approve(drafted: Plan) -> PlanDecision:
        plan = drafted
        while True:
            title = f"plan: {plan.goal}" if plan.goal else "plan"
            console.print(plan_table(plan, title=title, results=False))
            if yes:
                console.print("approved (--yes)", style="dim", markup=False, highlight=False)
                return PlanDecision.approve()
            answer = await terminal.ask("Run this plan?", _ANSWERS, "stop", hint=_HINT)
            if answer == "run":
                return PlanDecision.approve(plan if plan is not drafted else None)
            if answer == "edit":
                plan = await _edited(plan, terminal, console) or plan
                continue
            if answer == "revise":
                feedback = await terminal.read_line("What should change? ")
                if feedback and feedback.strip():
                    return PlanDecision.revise(feedback)
            return PlanDecision.reject("stopped at the approval prompt" if not terminal.at_eof else NO_ANSWER)

    return approve


def failed_words(step: Step) -> str:
    """``failed``, or ``failed · check 'pytest -q' exit 1`` for a step its checks failed."""
    error = step.error
    if error is not None and error.check is not None:
        return f"failed · check {error.check!r} {error.check_status}"
    return "failed"


def plan_words(plan: Plan, *, checked: bool = False) -> str:
    """How the plan's closing line says it went, in ``agcore run``'s words: ``done · checks passed``,
    ``done (unchecked)`` (no check in the plan, and not ``checked`` by ``--check``), or ``done ·
    failed · check 'pytest -q' exit 1``."""
    failed = next((s for s in plan.steps if s.error is not None and s.error.check is not None), None)
    if failed is not None:
        return f"done · {failed_words(failed)}"
    checked = checked or bool(plan.checks) or any(s.checks for s in plan.steps)
    return "done · checks passed" if checked and plan.succeeded else "done" if checked else "done (unchecked)"


def plan_summary(plan: Plan, usage: CostTracker, *, checked: bool = False) -> str:
    """A plan run's closing line: steps done, how it went (``plan_words``), model calls, tokens, cost."""
    cost = f"${usage.cost_usd:.4f}" if usage.cost_usd is not None else "cost unknown"
    words = plan_words(plan, checked=checked)
    return (f"{sum(1 for s in plan.steps if s.done)}/{len(plan.steps)} steps {words} · "
            f"{count(usage.calls, 'model call')} · {format_usage(usage.usage)} · {cost}")


def plan_file_data(plan: Plan) -> dict[str, Any]:
    """``plan`` as a plan file holds it: the goal, the steps and the checks, without run state."""
    return {"goal": plan.goal, "steps": [
        {"id": s.id, "description": s.description,
         **({"depends_on": s.depends_on} if s.depends_on else {}),
         **({"tool_hints": s.tool_hints} if s.tool_hints else {}),
         **({"check": s.checks} if s.checks else {})}
        for s in plan.steps
    ], **({"check": plan.checks} if plan.checks else {})}


async def _edited(plan: Plan, terminal: Terminal, console: Console) -> Plan | None:
    """The plan as the user edits it in a JSON file (in their own editor, while this waits for Enter);
    None when they cancel or the file cannot be read (the error is shown)."""
    path = await anyio.to_thread.run_sync(_write_for_editing, plan)
    try:
        console.print(f"edit the plan in {path}, save it, then press Enter (or type c to cancel)",
                      markup=False, highlight=False)
        done = await terminal.read_line("")
        if done is None or done.strip().lower() in ("c", "cancel"):
            return None
        try:
            return await anyio.to_thread.run_sync(Plan.load, path)
        except (PlanParseError, OSError, UnicodeDecodeError) as exc:
            why = exc.message if isinstance(exc, PlanParseError) else str(exc)
            console.print(f"the edited plan cannot be read ({why}); it is unchanged", style="red",
                          markup=False, highlight=False)
            return None
    finally:
        await anyio.Path(path).unlink(missing_ok=True)


def _write_for_editing(plan: Plan) -> Path:
    handle, name = tempfile.mkstemp(prefix="agcore-plan-", suffix=".json")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(json.dumps(plan_file_data(plan), indent=2, ensure_ascii=False) + "\n")
    return Path(name)
