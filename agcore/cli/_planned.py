"""``agcore run --approve-plan "task"``: the task as a plan the user approves before it runs (seed
000's plan mode). The model drafts the plan reading the workspace with the read-only tools only; the
plan is shown and runs once approved (``--yes``: at once), or is redrafted with the user's feedback,
or stops with the reason. With ``--intent``, a task that needs no plan is answered directly."""

from __future__ import annotations

from typing import Any, cast

from rich.console import Console

from agcore.agent import (
    AgentError,
    AgentSession,
    ConversationSession,
    DefaultTaskAgent,
    Plan,
    PlanParseError,
    PlanRejected,
    RuntimeBundle,
    open_session,
)
from agcore.agent.intent import IntentGate
from agcore.cli._errors import ExitCode, cli_advice, exit_code_for
from agcore.cli._plan_view import Progress, plan_approval, plan_summary, plan_table
from agcore.cli._render import Renderer
from agcore.cli._setup import Confirm, run_interruptible
from agcore.cli._terminal import Terminal

__all__ = ["run_planned"]


async def run_planned(
    console: Console, renderer: Renderer, task: str, *, prompt: str, bundle: RuntimeBundle,
    transform: Any, yes: bool, gate: IntentGate | None, checked: bool = False,
) -> ExitCode:
    """Draft (read-only), approve and execute ``task`` as a plan; the run's exit code. ``checked``: the
    bundle's acceptance checks (``--check``) judge each step."""
    agent = DefaultTaskAgent("agcore", prompt, read_only_planning=True, intent=gate,
                            on_update=Progress(renderer))
    outcome: list[Plan | PlanRejected | AgentError] = []

    def ask_on(terminal: Terminal) -> None:
        agent.approve_plan = plan_approval(terminal, console, yes=yes)

    async def new_session(confirm: Confirm) -> ConversationSession:
        # on the bundle's backend (the LangGraph one runs the plan's turns on a GraphSession)
        return open_session(agent, bundle=bundle, confirm=confirm, transform=transform)

    async def work(session: ConversationSession) -> None:
        try:
            outcome.append(await agent.run(cast(AgentSession, session), task))
        except (PlanRejected, AgentError) as exc:  # said in one line below, as `plan draft` says it
            outcome.append(exc)

    session, interrupted = await run_interruptible(console, renderer, yes=yes, open_session=new_session,
                                                   work=work, on_terminal=ask_on)
    if interrupted or not outcome:
        return ExitCode.INTERRUPTED
    ran = outcome[0]
    if isinstance(ran, PlanRejected):
        renderer.line(f"✗ {ran}", style="red")
        return ExitCode.TASK_FAILED
    if isinstance(ran, AgentError):
        renderer.line(f"✗ {cli_advice(str(ran), error=ran)}", style="red")
        return exit_code_for(ran) if not isinstance(ran, PlanParseError) else ExitCode.TASK_FAILED
    console.print(plan_table(ran, title="plan status", results=True))
    console.print(plan_summary(ran, session.usage, checked=checked), markup=False, highlight=False)
    return ExitCode.OK if ran.succeeded else ExitCode.TASK_FAILED
