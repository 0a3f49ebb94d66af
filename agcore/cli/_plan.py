"""``agcore plan run FILE`` and ``agcore plan draft "goal"``.

``run`` loads a JSON/YAML plan, executes it with ``DefaultTaskAgent.execute_plan`` and prints a line
each time a step changes status (running, done, failed, skipped), the tool calls of the step turns, and
a final status table. ``draft`` asks the model for a plan, shows it, and saves it with ``--save``.
Either runs on the loop or on LangGraph (``--backend``; where each keeps its sessions:
``_plan_sessions``).
"""

from __future__ import annotations

import importlib
import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any, cast

from rich.console import Console

from agcore.agent import (
    LOOP_BACKEND,
    PLAN_STATE_KEY,
    AcceptanceChecks,
    AgentError,
    AgentSession,
    ConversationSession,
    DefaultTaskAgent,
    FailurePolicy,
    Plan,
    PlanApproval,
    PlanParseError,
    PlanRejected,
    open_session,
    settle_plan,
)
from agcore.cli._checkpoints import choose_backend
from agcore.cli._errors import CliError, ExitCode, exit_code_for
from agcore.cli._local import LocalOptions
from agcore.cli._models import close_provider, resolve_provider
from agcore.cli._plan_sessions import OPTIONS_KEY, plan_sessions
from agcore.cli._plan_view import Progress, ToolLines, plan_approval, plan_file_data, plan_summary, plan_table
from agcore.cli._render import Renderer
from agcore.cli._served import model_or_served
from agcore.cli._setup import Confirm, build_bundle, coding_prompt, open_workspace, run_interruptible
from agcore.cli._store import resume_command

__all__ = ["draft_plan", "load_plan", "plan_table", "run_plan", "save_plan"]

_SAVE_SUFFIXES = (".json", ".yaml", ".yml")


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
    approve_plan: bool = False,
    backend: str | None = None,
) -> ExitCode:
    """``agcore plan run FILE`` (``file``) or ``agcore plan resume ID`` (``file`` None): the plan runs
    in a session saved as it goes, so the same command continues it after Ctrl-C or a failure. With
    ``approve_plan`` a plan not started yet is shown and runs only once approved (``--yes``: at once).
    ``backend``: the loop (sessions in the store) or langgraph (threads in the checkpoints beside it);
    None: the saved session's, else the loop."""
    plan = load_plan(file) if file is not None else None
    backend = await choose_backend(backend, db, session_id, must_exist=file is None, start_with=_START)
    renderer = Renderer(console, follow_up=False)
    chosen: list[Plan] = []
    approval: list[PlanApproval] = []
    rejected: list[PlanRejected] = []
    async with plan_sessions(backend, db) as sessions:
        # A resumed run keeps the options it was started with, unless given again.
        saved = await sessions.saved_options(session_id)
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
            tool_lines = ToolLines(renderer)
            bundle = build_bundle(provider, space, entry_point_plugins=plugins, backend=backend,
                                  plugins=(tool_lines,), config=local.config_changes(provider),
                                  # AcceptanceChecks runs the plan's and the steps' check:
                                  capabilities=(*local.capabilities(), AcceptanceChecks(space)))
            transform = local.compaction(provider)
            for note in local.notes(transform, provider):
                renderer.line(note, style="dim")
            agent = DefaultTaskAgent("agcore", coding_prompt(space), failure_policy=policy)

            async def opened(confirm: Confirm) -> ConversationSession:
                session = await sessions.open(session_id, agent, bundle, confirm, new=plan is not None,
                                              transform=transform)
                chosen.append(_plan_to_run(session, plan, file, db))
                tool_lines.watch(session.in_process)
                _app_state(session)[OPTIONS_KEY] = options  # saved with the plan's progress
                _announce(console, chosen[0], file, session)
                return session

            async def work(conversation: ConversationSession) -> None:
                session = _for_plans(conversation)
                if approval and not any(step.done for step in chosen[0].steps):
                    try:
                        chosen[0] = await settle_plan(
                            session, chosen[0].goal, chosen[0], approval[0],
                            max_revisions=agent.max_plan_revisions,
                            redraft=lambda s, goal, note: agent.draft_plan(s, goal, revision=note))
                    except PlanRejected as exc:
                        rejected.append(exc)
                        return
                progress = Progress(renderer, chosen[0])

                async def update(plan: Plan) -> None:  # each status change: shown, then saved
                    progress(plan)
                    await sessions.save(conversation)

                await agent.execute_plan(session, chosen[0], on_update=update)

            session, interrupted = await run_interruptible(
                console, renderer, yes=yes, open_session=opened, work=work,
                on_terminal=(lambda t: approval.append(plan_approval(t, console, yes=yes))) if approve_plan
                else None,
            )
        finally:
            await close_provider(provider)
    if rejected:
        renderer.line(f"✗ {rejected[0]}", style="red")
        return ExitCode.TASK_FAILED
    ran = chosen[0]
    if interrupted:
        renderer.line("⏹ cancelled", style="yellow")
    console.print(plan_table(ran, title="plan status", results=True, interrupted=interrupted))
    console.print(plan_summary(ran, session.usage), markup=False, highlight=False)
    if interrupted or not ran.succeeded:
        again = resume_command("plan", "resume", session.session_id, db=db, model=None, base_url=None,
                               options=(local or LocalOptions()).arguments())
        console.print(f"continue with: {again}", style="dim", markup=False, highlight=False)
    if interrupted:
        return ExitCode.INTERRUPTED
    return ExitCode.OK if ran.succeeded else ExitCode.TASK_FAILED


_START = "agcore plan run FILE"


def _for_plans(session: ConversationSession) -> AgentSession:
    """``session`` as ``execute_plan`` and ``settle_plan`` take it: an ``AgentSession``, or a
    backend's session with its plan API (``GraphSession``: ``app_state``, ``plan_step_index``,
    ``usage``, ``submit_turn(output_type=)``), which they run on as they do on the loop's."""
    return cast(AgentSession, session)


def _app_state(session: ConversationSession) -> dict[str, Any]:
    return _for_plans(session).app_state


def _plan_to_run(session: ConversationSession, plan: Plan | None, file: Path | None, db: Path | None) -> Plan:
    """The session's saved plan, continued (its completed steps are not redone), or ``plan``. The
    commands a refusal suggests name ``db`` (--db) as given: without it they look elsewhere."""
    sid = session.session_id
    saved = _app_state(session).get(PLAN_STATE_KEY)
    if saved is None:
        if plan is None:
            start = resume_command("plan", "run", "FILE", "--session", sid, db=db, model=None, base_url=None)
            raise CliError(f"Session {sid!r} holds no plan to resume: run one with {start}", ExitCode.USAGE)
        return plan
    progress = Plan.from_dict(saved)
    if plan is not None and _steps(plan) != _steps(progress):
        again = resume_command("plan", "resume", sid, db=db, model=None, base_url=None)
        raise CliError(f"Session {sid!r} holds a different plan than {file}: continue it with `{again}`, "
                       "or give another --session.", ExitCode.USAGE)
    return progress


def _steps(plan: Plan) -> list[tuple[str, str]]:
    return [(step.id, step.description) for step in plan.steps]


def _announce(console: Console, plan: Plan, file: Path | None, session: ConversationSession) -> None:
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
    read_only: bool = False,
    backend: str = LOOP_BACKEND,
) -> ExitCode:
    """``agcore plan draft GOAL``: the model's plan, shown (and saved with ``save``); with
    ``read_only`` the model may look around the workspace with the read-only tools first (their
    calls are shown), so drafting changes nothing. The draft is asked in a session on ``backend``
    (drafting is a model call of its own, not a turn: both backends make the same one)."""
    if save is not None and save.suffix.lower() not in _SAVE_SUFFIXES:
        raise CliError(f"--save {save}: name the file .json, .yaml or .yml (the format follows the suffix).",
                       ExitCode.USAGE)
    space = open_workspace(workspace)
    provider = resolve_provider(await model_or_served(console, model, base_url), base_url)
    try:
        shown = (ToolLines(Renderer(console, follow_up=False)),) if read_only else ()
        bundle = build_bundle(provider, space, entry_point_plugins=plugins, plugins=shown, backend=backend)
        agent = DefaultTaskAgent("agcore", coding_prompt(space))
        session = _for_plans(open_session(agent, bundle=bundle))
        live = console.is_terminal and not console.is_dumb_terminal and not read_only
        if read_only:
            console.print("drafting the plan; reading the workspace (nothing is changed)…", style="dim",
                          markup=False, highlight=False)
        with console.status("drafting the plan…") if live else nullcontext():
            try:
                plan = await agent.draft_plan(session.in_process, goal, read_only=read_only)
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
    data = plan_file_data(plan)
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

