"""``agcore run --approve-plan "task"``: the task as a plan the user approves before it runs (seed
000's plan mode). The model drafts the plan reading the workspace with the read-only tools only; the
plan is shown and runs once approved (``--yes``: at once), or is redrafted with the user's feedback,
or stops with the reason. With ``--intent``, a task that needs no plan is answered directly."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from agcore.agent import AgentSession, DefaultTaskAgent, Plan, PlanRejected, RuntimeBundle
from agcore.agent.intent import IntentGate
from agcore.cli._errors import ExitCode
from agcore.cli._plan_view import Progress, plan_approval, plan_table
from agcore.cli._render import Renderer, count, format_usage
from agcore.cli._setup import Confirm, run_interruptible
from agcore.cli._terminal import Terminal

__all__ = ["run_planned"]


async def run_planned(
    console: Console, renderer: Renderer, task: str, *, prompt: str, bundle: RuntimeBundle,
    transform: Any, yes: bool, gate: IntentGate | None,
) -> ExitCode:
    """Draft (read-only), approve and execute ``task`` as a plan; the run's exit code."""
    agent = DefaultTaskAgent("agcore", prompt, read_only_planning=True, intent=gate,
                             on_update=Progress(renderer))
    outcome: list[Plan | PlanRejected] = []

    def ask_on(terminal: Terminal) -> None:
        agent.approve_plan = plan_approval(terminal, console, yes=yes)

    async def new_session(confirm: Confirm) -> AgentSession:
        return AgentSession(agent, bundle=bundle, confirm=confirm, transform=transform)

    async def work(session: AgentSession) -> None:
        try:
            outcome.append(await agent.run(session, task))
        except PlanRejected as exc:
            outcome.append(exc)

    session, interrupted = await run_interruptible(console, renderer, yes=yes, open_session=new_session,
                                                   work=work, on_terminal=ask_on)
    if interrupted or not outcome:
        return ExitCode.INTERRUPTED
    ran = outcome[0]
    if isinstance(ran, PlanRejected):
        renderer.line(f"✗ {ran}", style="red")
        return ExitCode.TASK_FAILED
    console.print(plan_table(ran, title="plan status", results=True))
    tracker = session.usage
    cost = f"${tracker.cost_usd:.4f}" if tracker.cost_usd is not None else "cost unknown"
    console.print(f"{sum(1 for s in ran.steps if s.done)}/{len(ran.steps)} steps done · "
                  f"{count(tracker.calls, 'model call')} · {format_usage(tracker.usage)} · {cost}",
                  markup=False, highlight=False)
    return ExitCode.OK if ran.succeeded else ExitCode.TASK_FAILED
