"""``agcore plan run FILE`` and ``agcore plan draft "goal"``.

``run`` loads a JSON/YAML plan, executes it with ``DefaultTaskAgent.execute_plan`` and prints a line
each time a step changes status (running, done, failed, skipped), the tool calls of the step turns, and
a final status table. ``draft`` asks the model for a plan, shows it, and saves it with ``--save``.
"""

from __future__ import annotations

import importlib
import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agcore.agent import (
    PLAN_STATE_KEY,
    AcceptanceChecks,
    AgentError,
    AgentSession,
    DefaultTaskAgent,
    FailurePolicy,
    Plan,
    PlanParseError,
    RuntimeBundle,
    Step,
)
from agcore.agent import StepStatus as S
from agcore.cli._errors import CliError, ExitCode, cli_advice, exit_code_for
from agcore.cli._local import LocalOptions
from agcore.cli._models import close_provider, resolve_provider
from agcore.cli._render import Renderer, count, format_usage, shorten
from agcore.cli._served import model_or_served
from agcore.cli._setup import Confirm, build_bundle, coding_prompt, open_workspace, run_interruptible
from agcore.cli._store import open_store, resume_command, store_error, unknown_session
from agcore.hooks import HookContext, hookimpl
from agcore.llm.types import ToolResultBlock, ToolUseBlock
from agcore.memory import MemoryStoreError, SqliteSessionStore

__all__ = ["draft_plan", "load_plan", "plan_table", "run_plan", "save_plan"]

_SAVE_SUFFIXES = (".json", ".yaml", ".yml")
_STYLE = {S.PENDING: "dim", S.RUNNING: "cyan", S.COMPLETED: "green", S.FAILED: "red", S.SKIPPED: "yellow"}
_SHOWN = {S.COMPLETED: "done", S.FAILED: "failed", S.SKIPPED: "skipped", S.RUNNING: "running",
          S.PENDING: "pending"}


def load_plan(file: Path) -> Plan:
    """The plan in ``file``; exit 2 with the parse error if it cannot be read."""
    if not file.is_file():
        raise CliError(f"Plan file {str(file)!r} does not exist (or is not a file).", ExitCode.USAGE)
    try:
        return Plan.load(file)
    except PlanParseError as exc:
        raise CliError(f"Cannot read the plan: {exc.message}", ExitCode.USAGE) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"Cannot read the plan file {str(file)!r}: {exc}", ExitCode.USAGE) from None


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


class _ToolLines:
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


class _Progress:
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
                self.renderer.line(f"✗ {where} {_failed_words(step)}: {shorten(message, 160)}", style="red")
            elif step.status is S.SKIPPED:
                reason = shorten(step.skip_reason or "", 120)
                self.renderer.line(f"- {where} skipped: {reason}", style="yellow")


async def run_plan(
    console: Console,
    file: Path | None,
    *,
    session_id: str | None,
    db: Path | None,
    model: str | None,
    base_url: str | None,
    workspace: Path | None,
    yes: bool,
    plugins: bool,
    on_failure: FailurePolicy | None,
    local: LocalOptions | None = None,
) -> ExitCode:
    """``agcore plan run FILE`` (``file``) or ``agcore plan resume ID`` (``file`` None): the plan runs
    in a session saved as it goes, so the same command continues it after Ctrl-C or a failure."""
    plan = load_plan(file) if file is not None else None
    renderer = Renderer(console, follow_up=False)
    chosen: list[Plan] = []
    async with open_store(db, existing=file is None) as store:
        # A resumed run keeps the options it was started with, unless given again.
        saved = await _saved_options(store, session_id, db, must_exist=file is None)
        model = model or saved.get("model")
        base_url = base_url or saved.get("base_url")
        if workspace is None and saved.get("workspace"):
            workspace = Path(saved["workspace"])
        policy: FailurePolicy = on_failure or saved.get("on_failure") or "stop"
        space = open_workspace(workspace)
        renderer.base_url = base_url
        model = await model_or_served(console, model, base_url)
        provider = resolve_provider(model, base_url)
        options = {"model": model, "base_url": base_url, "workspace": str(space.root), "on_failure": policy}
        try:
            local = await (local or LocalOptions()).with_served_window(provider, base_url)
            tool_lines = _ToolLines(renderer)
            bundle = build_bundle(provider, space, entry_point_plugins=plugins,
                                  plugins=(tool_lines,), config=local.config_changes(provider),
                                  capabilities=(AcceptanceChecks(space),))  # runs the plan's check:
            transform = local.compaction(provider)
            for note in local.notes(transform, provider):
                renderer.line(note, style="dim")
            agent = DefaultTaskAgent("agcore", coding_prompt(space), failure_policy=policy)

            async def open_session(confirm: Confirm) -> AgentSession:
                session = await _plan_session(store, session_id, agent, bundle, confirm, db,
                                              new=plan is not None, transform=transform)
                chosen.append(_plan_to_run(session, plan, file))
                tool_lines.watch(session)
                session.app_state[_OPTIONS_KEY] = options  # saved with the plan's progress
                _announce(console, chosen[0], file, session)
                return session

            session, interrupted = await run_interruptible(
                console, renderer, yes=yes, open_session=open_session,
                work=lambda s: agent.execute_plan(s, chosen[0], on_update=_Progress(renderer, chosen[0])),
            )
        finally:
            await close_provider(provider)
    ran = chosen[0]
    if interrupted:
        renderer.line("⏹ cancelled", style="yellow")
    console.print(plan_table(ran, title="plan status", results=True, interrupted=interrupted))
    tracker = session.usage
    cost = f"${tracker.cost_usd:.4f}" if tracker.cost_usd is not None else "cost unknown"
    console.print(f"{sum(1 for s in ran.steps if s.done)}/{len(ran.steps)} steps {_plan_words(ran)} · "
                  f"{count(tracker.calls, 'model call')} · {format_usage(tracker.usage)} · {cost}",
                  markup=False, highlight=False)
    if interrupted or not ran.succeeded:
        again = resume_command("plan", "resume", session.session_id, db=db, model=None, base_url=None,
                               options=(local or LocalOptions()).arguments())
        console.print(f"continue with: {again}", style="dim", markup=False, highlight=False)
    if interrupted:
        return ExitCode.INTERRUPTED
    return ExitCode.OK if ran.succeeded else ExitCode.TASK_FAILED


def _failed_words(step: Step) -> str:
    """``failed``, or ``failed · check 'pytest -q' exit 1`` for a step its checks failed."""
    error = step.error
    if error is not None and error.check is not None:
        return f"failed · check {error.check!r} {error.check_status}"
    return "failed"


def _plan_words(plan: Plan) -> str:
    """How the plan's closing line says it went, in ``agcore run``'s words: ``done · checks passed``,
    ``done (unchecked)`` (no check in the plan), or ``done · failed · check 'pytest -q' exit 1``."""
    failed = next((s for s in plan.steps if s.error is not None and s.error.check is not None), None)
    if failed is not None:
        return f"done · {_failed_words(failed)}"
    checked = plan.checks or any(s.checks for s in plan.steps)
    return "done · checks passed" if checked and plan.succeeded else "done" if checked else "done (unchecked)"


#: Where a plan run keeps the CLI options it was started with (``app_state``, saved with the session).
_OPTIONS_KEY = "cli_plan_options"


async def _saved_options(
    store: SqliteSessionStore, session_id: str | None, db: Path | None, *, must_exist: bool
) -> dict[str, Any]:
    """The options a saved plan run was started with; ``must_exist`` (``plan resume``): a session
    that is not there is said before anything else (the model is resolved from these options)."""
    if session_id is None:
        return {}
    try:
        record = await store.load(session_id)
    except (MemoryStoreError, OSError) as exc:
        raise store_error(store.path, exc) from None
    if record is None:
        if must_exist:
            raise unknown_session(session_id, db, "agcore plan run FILE")
        return {}
    options = (record.state.get("app_state") or {}).get(_OPTIONS_KEY)
    return dict(options) if isinstance(options, dict) else {}


async def _plan_session(
    store: SqliteSessionStore, session_id: str | None, agent: DefaultTaskAgent, bundle: RuntimeBundle,
    confirm: Confirm, db: Path | None, *, new: bool, transform: Any = None,
) -> AgentSession:
    """The session ``session_id`` from the store; a new one (saved under ``session_id`` if given)
    when there is none and a plan file was given."""
    if session_id is not None:
        try:
            return await AgentSession.load(store, session_id, agent, bundle, confirm=confirm,
                                           transform=transform)
        except LookupError:
            if not new:
                raise unknown_session(session_id, db, "agcore plan run FILE") from None
        except (MemoryStoreError, OSError) as exc:
            raise store_error(db, exc) from None
    return AgentSession(agent, session_id, bundle, confirm=confirm, store=store, transform=transform)


def _plan_to_run(session: AgentSession, plan: Plan | None, file: Path | None) -> Plan:
    """The session's saved plan, continued (its completed steps are not redone), or ``plan``."""
    saved = session.app_state.get(PLAN_STATE_KEY)
    if saved is None:
        if plan is None:
            raise CliError(f"Session {session.session_id!r} holds no plan to resume: run one with "
                           f"agcore plan run FILE --session {session.session_id}", ExitCode.USAGE)
        return plan
    progress = Plan.from_dict(saved)
    if plan is not None and _steps(plan) != _steps(progress):
        raise CliError(f"Session {session.session_id!r} holds a different plan than {file}: continue it "
                       f"with `agcore plan resume {session.session_id}`, or give another --session.",
                       ExitCode.USAGE)
    return progress


def _steps(plan: Plan) -> list[tuple[str, str]]:
    return [(step.id, step.description) for step in plan.steps]


def _announce(console: Console, plan: Plan, file: Path | None, session: AgentSession) -> None:
    goal = f" · goal: {plan.goal}" if plan.goal else ""
    done = sum(1 for s in plan.steps if s.done)
    name = f"plan {file.name}" if file is not None else "plan"
    resuming = f" · continuing: {done}/{len(plan.steps)} done" if done else ""
    console.print(f"{name}: {len(plan.steps)} steps{goal}{resuming}", markup=False, highlight=False)
    console.print(f"session {session.session_id}", style="dim", markup=False, highlight=False)


async def draft_plan(
    console: Console,
    goal: str,
    *,
    save: Path | None,
    model: str | None,
    base_url: str | None,
    workspace: Path | None,
    plugins: bool,
) -> ExitCode:
    if save is not None and save.suffix.lower() not in _SAVE_SUFFIXES:
        raise CliError(f"--save {save}: name the file .json, .yaml or .yml (the format follows the suffix).",
                       ExitCode.USAGE)
    space = open_workspace(workspace)
    provider = resolve_provider(await model_or_served(console, model, base_url), base_url)
    try:
        bundle = build_bundle(provider, space, entry_point_plugins=plugins)
        agent = DefaultTaskAgent("agcore", coding_prompt(space))
        session = AgentSession(agent, bundle=bundle)
        live = console.is_terminal and not console.is_dumb_terminal
        with console.status("drafting the plan…") if live else nullcontext():
            try:
                plan = await agent.draft_plan(session, goal)
            except PlanParseError as exc:
                raise CliError(f"{exc.message.rstrip('.')}. Try again, reword the goal, or use a "
                               "stronger model (--model).", ExitCode.TASK_FAILED) from None
            except AgentError as exc:
                raise CliError(str(exc), exit_code_for(exc)) from None
        console.print(plan_table(plan, title=f"plan: {plan.goal or goal}", results=False))
        for warning in plan.warnings:  # what the parser mended in the model's answer
            console.print(f"! {warning}", style="yellow", markup=False, highlight=False)
        if save is not None:
            save_plan(plan, save)
            console.print(f"saved to {save} · run it with: agcore plan run {save}",
                          markup=False, highlight=False)
        return ExitCode.OK
    finally:
        await close_provider(provider)


def save_plan(plan: Plan, file: Path) -> None:
    """Write ``plan`` as JSON or YAML (by ``file``'s suffix), without run state: ready for ``plan run``."""
    data: dict[str, Any] = {"goal": plan.goal, "steps": [
        {"id": s.id, "description": s.description,
         **({"depends_on": s.depends_on} if s.depends_on else {}),
         **({"tool_hints": s.tool_hints} if s.tool_hints else {}),
         **({"check": s.checks} if s.checks else {})}
        for s in plan.steps
    ], **({"check": plan.checks} if plan.checks else {})}
    if file.suffix.lower() == ".json":
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    else:
        try:
            yaml: Any = importlib.import_module("yaml")
        except ImportError:
            raise CliError("Saving YAML needs PyYAML (`pip install pyyaml`); or --save a .json file.",
                           ExitCode.CONFIG) from None
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    if not file.parent.is_dir():  # a typo in the path should not create directories
        raise CliError(f"--save {file}: the directory {file.parent} does not exist; create it first or "
                       "save elsewhere.", ExitCode.USAGE)
    try:
        file.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"Cannot save the plan to {file}: {exc}", ExitCode.USAGE) from None

