"""``agcore run "task"``: one turn of the coding assistant in a workspace, shown as it happens."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from pathlib import Path
from typing import cast

from rich.console import Console

from agcore.agent import (
    LOOP_BACKEND,
    AcceptanceChecks,
    AgentEvent,
    AnswerReview,
    BasicAgent,
    ClaimedChanges,
    ConversationSession,
    TurnResult,
    open_session,
)
from agcore.agent.intent import IntentGate
from agcore.cli._errors import ExitCode, exit_code_for
from agcore.cli._local import LocalOptions
from agcore.cli._models import close_provider, resolve_provider
from agcore.cli._plan_view import ToolLines
from agcore.cli._planned import run_planned
from agcore.cli._render import Renderer, count
from agcore.cli._served import model_or_served
from agcore.cli._setup import (
    Confirm,
    build_bundle,
    coding_prompt,
    load_images,
    load_skills,
    open_workspace,
    run_interruptible,
    with_images,
)
from agcore.llm.types import UserMessage

__all__ = ["result_exit_code", "run_task", "stream_turn"]


async def run_task(
    console: Console,
    task: str,
    *,
    model: str | None,
    base_url: str | None,
    workspace: Path | None,
    yes: bool,
    plugins: bool,
    backend: str = LOOP_BACKEND,
    local: LocalOptions | None = None,
    skills_dir: Path | None = None,
    images: list[Path] | None = None,
    checks: list[str] | None = None,
    check_rounds: int = 3,
    check_timeout: float | None = None,
    approve_plan: bool = False,
    review: bool = True,
    answer_review: bool = True,
) -> ExitCode:
    local = local or LocalOptions()
    space = open_workspace(workspace)
    skills = load_skills(skills_dir)
    pictures = load_images(images)
    provider = resolve_provider(await model_or_served(console, model, base_url), base_url)
    try:
        local = await local.with_served_window(provider, base_url)
        checked = ((AcceptanceChecks(space, checks, rounds=check_rounds, timeout=check_timeout),)
                   if checks else ())
        judged = [AnswerReview(space)] if answer_review else []  # the model's review of the work
        reviewed = (ClaimedChanges(space), *judged) if review else ()
        capabilities = (*local.capabilities(), *reviewed, *checked)
        renderer = Renderer(console, follow_up=False, base_url=base_url)
        bundle = build_bundle(provider, space, entry_point_plugins=plugins, backend=backend,
                              config=local.config_changes(provider), skills=skills,
                              capabilities=capabilities,
                              plugins=(ToolLines(renderer),) if approve_plan else ())
        transform = local.compaction(provider)
        agent = BasicAgent("agcore", coding_prompt(space, skills))
        renderer.line(f"commands: {space.sandbox_description}", style="dim")
        for missing in space.protections_off:
            renderer.line(f"  off: {missing}", style="dim")
        if checks:
            listed = ", ".join(repr(c) for c in checks)
            rounds = count(check_rounds, "round")
            each = f", each stopped after {check_timeout:g}s" if check_timeout is not None else ""
            renderer.line(f"checks: {listed} (up to {rounds} of fixes{each})", style="dim")
        for note in local.notes(transform, provider):
            renderer.line(note, style="dim")
        if approve_plan:
            gate = next((c for c in capabilities if isinstance(c, IntentGate)), None)
            return await run_planned(console, renderer, task, prompt=coding_prompt(space, skills),
                                     bundle=bundle, transform=transform, yes=yes, gate=gate,
                                     checked=bool(checks))

        async def new_session(confirm: Confirm) -> ConversationSession:
            # on the bundle's backend
            return open_session(agent, bundle=bundle, confirm=confirm, transform=transform)

        session, _ = await run_interruptible(
            console, renderer, yes=yes, open_session=new_session,
            work=lambda s: stream_turn(s, with_images(task, pictures), renderer),
        )
        result = session.last_result
        assert result is not None
        renderer.summary(result)
        return result_exit_code(result)
    finally:
        await close_provider(provider)


async def stream_turn(session: ConversationSession, text: str | UserMessage, renderer: Renderer) -> None:
    """Run a turn, rendering its events; a cancellation of the caller's scope cancels the turn."""
    # stream_turn is an async generator; closing it (here, on cancellation) cancels the turn.
    stream = cast("AsyncGenerator[AgentEvent, None]", session.stream_turn(text))
    async with aclosing(stream) as events:
        async for event in events:
            renderer.event(event)


def result_exit_code(result: TurnResult) -> ExitCode:
    if result.stop in ("done", "stopped_by_hook"):
        return ExitCode.OK
    if result.stop == "cancelled":
        return ExitCode.INTERRUPTED
    if result.error is not None:
        return exit_code_for(result.error)
    return ExitCode.TASK_FAILED
