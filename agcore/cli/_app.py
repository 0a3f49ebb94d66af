"""The typer application: commands, their options, and how a command's outcome becomes an exit code.

Each command builds its consoles, runs its coroutine with ``anyio.run`` and exits with the code it
returns. Expected failures are ``CliError``s: their message goes to stderr, without a traceback.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from agcore import __version__
from agcore.agent import LOOP_BACKEND
from agcore.cli._errors import EXIT_CODES_HELP
from agcore.cli._execution import execute, execute_durable
from agcore.cli._options import (
    ApiKey,
    ApprovePlan,
    Backend,
    BaseUrl,
    CheckRounds,
    Checks,
    CheckTimeout,
    Compact,
    ConstrainedCalls,
    ContextWindow,
    EnvAllow,
    FailurePolicyOption,
    Images,
    Intent,
    MaxSnapshotBytes,
    MaxTokens,
    MaxToolCalls,
    MaxTurns,
    Model,
    ModelReview,
    Namespace,
    PayloadStore,
    Plugins,
    Readable,
    ReadOnly,
    Review,
    SessionDb,
    SkillsDir,
    TaskQueue,
    Temperature,
    Temporal,
    TextTools,
    Tls,
    WorkspaceDir,
    Yes,
    _base_url,
    _check_snapshot_budget,
    _durable_compaction,
    _local,
    _no_graph_on_temporal,
    require_checks,
    worker_side,
)
from agcore.cli._temporal_commands import Address, dev_server, worker

if TYPE_CHECKING:
    from agcore.agent import FailurePolicy

__all__ = ["app", "run_app"]

app = typer.Typer(
    name="agcore",
    help="agcore: run a coding agent, chat with it, execute plans, and inspect models and plugins.",
    epilog=EXIT_CODES_HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
plan_app = typer.Typer(
    help="Execute a plan file, or have the model draft one.", no_args_is_help=True, epilog=EXIT_CODES_HELP,
    rich_markup_mode=None,
)
app.add_typer(plan_app, name="plan")
session_app = typer.Typer(
    help="Durable sessions on Temporal: their state, read from Temporal itself.", no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(session_app, name="session")

def _version(value: bool) -> None:
    if value:
        typer.echo(f"agcore {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Show the version and exit.")] = False,
) -> None:
    """agcore: run a coding agent, chat with it, execute plans, and inspect models and plugins."""


# ------------------------------------------------------------------------------------ commands


@app.command(epilog=EXIT_CODES_HELP)
def run(
    task: Annotated[str, typer.Argument(metavar="TASK", help="What the agent should do.")],
    model: Model = None,
    base_url: BaseUrl = None,
    workspace: WorkspaceDir = None,
    env: EnvAllow = None,
    readable: Readable = None,
    yes: Yes = False,
    plugins: Plugins = True,
    backend: Backend = None,
    text_tools: TextTools = None,
    constrained_calls: ConstrainedCalls = None,
    max_turns: MaxTurns = None,
    temperature: Temperature = None,
    context_window: ContextWindow = None,
    compact: Compact = None,
    skills: SkillsDir = None,
    image: Images = None,
    max_tokens: MaxTokens = None,
    check: Checks = None,
    check_rounds: CheckRounds = None,
    check_timeout: CheckTimeout = None,
    review: Review = True,
    answer_review: ModelReview = True,
    max_tool_calls: MaxToolCalls = None,
    intent: Intent = None,
    approve_plan: ApprovePlan = False,
    temporal: Temporal = None,
    session: Annotated[str | None, typer.Option(
        "--session", "-s", metavar="ID",
        help="With --temporal: run the task as a turn of the durable session ID (its workflow id), "
             "started if new and left open, so the next `run --session ID` continues it.")] = None,
    task_queue: TaskQueue = "agcore",
    namespace: Namespace = "default",
    tls: Tls = False,
    api_key: ApiKey = None,
    payload_store: PayloadStore = None,
    max_snapshot_bytes: MaxSnapshotBytes = None,
) -> None:
    """Have the coding assistant do TASK in the workspace: streams its text, shows each tool call,
    asks before writes and commands (unless --yes), runs the --check commands when it says it is
    done, ends with how it went (done · checks passed, failed · check 'CMD' exit N, or done
    (unchecked)), model calls, tokens and cost."""
    _require_words(task, "TASK", 'agcore run "add a --verbose flag to cli.py"')
    _no_graph_on_temporal(backend, temporal)
    require_checks(check, check_rounds=check_rounds, check_timeout=check_timeout)
    _check_snapshot_budget(max_snapshot_bytes, payload_store, temporal)
    if approve_plan and (temporal is not None or image):
        raise typer.BadParameter("not with --temporal or --image", param_hint="--approve-plan")
    worker_side(temporal, {
        "--model": model, "--base-url": base_url, "--workspace": workspace, "--text-tools": text_tools,
        "--constrained-calls": constrained_calls, "--max-turns": max_turns, "--temperature": temperature,
        "--max-tokens": max_tokens, "--max-tool-calls": max_tool_calls, "--intent": intent,
    })
    if temporal is not None:
        if skills is not None or image:
            raise typer.BadParameter("not available with --temporal yet; run without --temporal to use "
                                     "skills or images", param_hint="--skills/--image")
        if check:
            raise typer.BadParameter("not available with --temporal yet; run without --temporal to check "
                                     "the work", param_hint="--check")
        from agcore.cli._durable_run import durable_run

        execute_durable(functools.partial(durable_run, task=task, address=temporal, namespace=namespace,
                                           tls=tls, api_key=api_key, payload_store=payload_store,
                                           task_queue=task_queue, yes=yes, session_id=session,
                                           compaction=_durable_compaction(compact, context_window),
                                           max_snapshot_bytes=max_snapshot_bytes))
        return
    if session is not None:
        raise typer.BadParameter("only with --temporal (a local run keeps no session: use `agcore chat "
                                 "--session ID`)", param_hint="--session")
    from agcore.cli._run import run_task

    execute(functools.partial(run_task, task=task, model=model, base_url=base_url, workspace=workspace,
                               yes=yes, plugins=plugins, backend=backend or LOOP_BACKEND, skills_dir=skills,
                               images=image,
                               checks=check or [], check_rounds=3 if check_rounds is None else check_rounds,
                               check_timeout=check_timeout, approve_plan=approve_plan, review=review,
                               answer_review=answer_review,
                               local=_local(text_tools, max_turns, temperature, context_window, compact,
                                            max_tokens, constrained_calls, max_tool_calls=max_tool_calls,
                                            intent=intent)))


@app.command(epilog=EXIT_CODES_HELP)
def chat(
    session: Annotated[str | None, typer.Option(
        "--session", "-s", metavar="ID", help="Resume this session (its id is shown at the start).")] = None,
    db: SessionDb = None,
    model: Model = None,
    base_url: BaseUrl = None,
    workspace: WorkspaceDir = None,
    env: EnvAllow = None,
    readable: Readable = None,
    yes: Yes = False,
    plugins: Plugins = True,
    backend: Backend = None,
    text_tools: TextTools = None,
    constrained_calls: ConstrainedCalls = None,
    max_turns: MaxTurns = None,
    temperature: Temperature = None,
    context_window: ContextWindow = None,
    compact: Compact = None,
    skills: SkillsDir = None,
    image: Images = None,
    max_tokens: MaxTokens = None,
    max_tool_calls: MaxToolCalls = None,
    intent: Intent = None,
) -> None:
    """Chat with the coding assistant; the session is saved as it goes. Typing during a turn steers it;
    Ctrl-C cancels the turn; Ctrl-C or Ctrl-D at the prompt quits."""
    from agcore.cli._chat import chat as chat_main

    execute(functools.partial(chat_main, session_id=session, db=db, model=model, base_url=base_url,
                               workspace=workspace, yes=yes, plugins=plugins, backend=backend,
                               skills_dir=skills, images=image,
                               local=_local(text_tools, max_turns, temperature, context_window, compact,
                                            max_tokens, constrained_calls, max_tool_calls=max_tool_calls,
                                            intent=intent)))


@plan_app.command("run", epilog=EXIT_CODES_HELP)
def plan_run(
    file: Annotated[Path, typer.Argument(
        metavar="FILE", help="A plan as JSON or YAML (.json, .yaml, .yml).")],
    session: Annotated[str | None, typer.Option(
        "--session", "-s", metavar="ID",
        help="Save the run as this session (new or existing): the same command continues it, without "
             "redoing completed steps. Default: a new session id, printed at the start. With --temporal: "
             "the plan workflow's id (default: the plan file's id).")] = None,
    db: SessionDb = None,
    model: Model = None,
    base_url: BaseUrl = None,
    workspace: WorkspaceDir = None,
    env: EnvAllow = None,
    readable: Readable = None,
    yes: Yes = False,
    plugins: Plugins = True,
    on_failure: FailurePolicyOption = None,
    approve_plan: ApprovePlan = False,
    backend: Backend = None,
    text_tools: TextTools = None,
    constrained_calls: ConstrainedCalls = None,
    max_turns: MaxTurns = None,
    temperature: Temperature = None,
    context_window: ContextWindow = None,
    compact: Compact = None,
    max_tokens: MaxTokens = None,
    max_tool_calls: MaxToolCalls = None,
    temporal: Temporal = None,
    task_queue: TaskQueue = "agcore",
    namespace: Namespace = "default",
    tls: Tls = False,
    api_key: ApiKey = None,
    payload_store: PayloadStore = None,
    max_snapshot_bytes: MaxSnapshotBytes = None,
) -> None:
    """Execute the plan in FILE, one turn per step, showing progress and a final status table; exits 1
    if a step failed. The run is saved as it goes: after Ctrl-C or a failure, `agcore plan resume ID`
    (printed at the end) continues it."""
    from agcore.cli._plan import run_plan

    _no_graph_on_temporal(backend, temporal)
    _check_snapshot_budget(max_snapshot_bytes, payload_store, temporal)
    policy = _policy(on_failure)
    worker_side(temporal, {
        "--model": model, "--base-url": base_url, "--workspace": workspace, "--text-tools": text_tools,
        "--constrained-calls": constrained_calls, "--max-turns": max_turns, "--temperature": temperature,
        "--max-tokens": max_tokens, "--max-tool-calls": max_tool_calls,
    })
    if approve_plan and temporal is not None:
        raise typer.BadParameter("not with --temporal yet: approve the plan file before starting it",
                                 param_hint="--approve-plan")
    if temporal is not None:
        from agcore.cli._durable import durable_plan

        execute_durable(functools.partial(durable_plan, file=file, address=temporal, namespace=namespace,
                                           tls=tls, api_key=api_key, payload_store=payload_store,
                                           task_queue=task_queue, on_failure=policy or "stop",
                                           session_id=session,
                                           compaction=_durable_compaction(compact, context_window),
                                           max_snapshot_bytes=max_snapshot_bytes))
        return
    execute(functools.partial(run_plan, file=file, session_id=session, db=db, model=model,
                               base_url=base_url, workspace=workspace, yes=yes, plugins=plugins,
                               on_failure=policy, approve_plan=approve_plan, backend=backend,
                               local=_local(text_tools, max_turns, temperature, context_window, compact,
                                            max_tokens, constrained_calls, max_tool_calls=max_tool_calls)))


@plan_app.command("resume", epilog=EXIT_CODES_HELP)
def plan_resume(
    session: Annotated[str, typer.Argument(metavar="ID", help="The session the plan was run in.")],
    db: SessionDb = None,
    model: Model = None,
    base_url: BaseUrl = None,
    workspace: WorkspaceDir = None,
    env: EnvAllow = None,
    readable: Readable = None,
    yes: Yes = False,
    plugins: Plugins = True,
    on_failure: FailurePolicyOption = None,
    backend: Backend = None,
    text_tools: TextTools = None,
    constrained_calls: ConstrainedCalls = None,
    max_turns: MaxTurns = None,
    temperature: Temperature = None,
    context_window: ContextWindow = None,
    compact: Compact = None,
    max_tokens: MaxTokens = None,
    max_tool_calls: MaxToolCalls = None,
) -> None:
    """Continue the plan saved in session ID: completed steps are not redone; the step that was
    running or failed runs again."""
    from agcore.cli._plan import run_plan

    policy = _policy(on_failure)
    execute(functools.partial(run_plan, file=None, session_id=session, db=db, model=model,
                               base_url=base_url, workspace=workspace, yes=yes, plugins=plugins,
                               on_failure=policy, backend=backend,
                               local=_local(text_tools, max_turns, temperature, context_window, compact,
                                            max_tokens, constrained_calls, max_tool_calls=max_tool_calls)))


def _require_words(value: str, name: str, example: str) -> None:
    if not value.strip():
        raise typer.BadParameter(f"it is empty; say what to do, e.g. {example}", param_hint=name)


def _policy(value: str | None) -> FailurePolicy | None:
    if value is None or value in ("stop", "continue", "retry"):
        return cast("FailurePolicy", value)
    raise typer.BadParameter("choose stop, continue or retry", param_hint="--on-failure")


@plan_app.command("draft", epilog=EXIT_CODES_HELP)
def plan_draft(
    goal: Annotated[str, typer.Argument(metavar="GOAL", help="What the plan should achieve.")],
    save: Annotated[Path | None, typer.Option(
        "--save", metavar="FILE", help="Also save the plan, as JSON or YAML by FILE's suffix.")] = None,
    model: Model = None,
    base_url: BaseUrl = None,
    workspace: WorkspaceDir = None,
    env: EnvAllow = None,
    readable: Readable = None,
    plugins: Plugins = True,
    backend: Backend = None,
    read_only: ReadOnly = False,
) -> None:
    """Have the model draft a plan for GOAL and print it as a table (nothing is executed); with
    --read-only it may read the workspace first."""
    from agcore.cli._plan import draft_plan

    _require_words(goal, "GOAL", 'agcore plan draft "release version 1.2"')
    execute(functools.partial(draft_plan, goal=goal, save=save, model=model, base_url=base_url,
                               workspace=workspace, plugins=plugins, read_only=read_only,
                               backend=backend or LOOP_BACKEND))




app.command(epilog=EXIT_CODES_HELP)(worker)
app.command("dev-server")(dev_server)


@plan_app.command("status", epilog=EXIT_CODES_HELP)
def plan_status(
    workflow_id: Annotated[str, typer.Argument(metavar="ID", help="The plan workflow's id.")],
    address: Address = "localhost:7233",
    namespace: Namespace = "default",
    tls: Tls = False,
    api_key: ApiKey = None,
    payload_store: PayloadStore = None,
) -> None:
    """Show a durable plan's state (running, waiting for a worker, done, failed) and step progress,
    read from Temporal itself: no worker needed."""
    from agcore.cli._durable import plan_status as show_status

    execute_durable(functools.partial(show_status, workflow_id=workflow_id, address=address,
                                       namespace=namespace, tls=tls, api_key=api_key,
                                       payload_store=payload_store))


@session_app.command("status", epilog=EXIT_CODES_HELP)
def session_status(
    workflow_id: Annotated[str, typer.Argument(metavar="ID", help="The session workflow's id.")],
    address: Address = "localhost:7233",
    namespace: Namespace = "default",
    tls: Tls = False,
    api_key: ApiKey = None,
    payload_store: PayloadStore = None,
) -> None:
    """Show a durable session's state (idle, running, waiting for a worker or for approval, done,
    failed), its turns and last stop, read from Temporal itself: no worker needed."""
    from agcore.cli._durable import session_status as show_status

    execute_durable(functools.partial(show_status, workflow_id=workflow_id, address=address,
                                       namespace=namespace, tls=tls, api_key=api_key,
                                       payload_store=payload_store))


@app.command()
def models(
    provider: Annotated[str | None, typer.Option(
        "--provider", "-p", metavar="NAME", help="Only this provider's models (anthropic...).")] = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", metavar="URL", callback=_base_url,
        help="Instead, ask the OpenAI-compatible server at URL (llama-server, Ollama, LM Studio, vLLM) "
             "which models it serves: checks it is up, and shows the context size where it says.",
    )] = None,
) -> None:
    """The model registry: context window, max output, prices per million tokens, capabilities; with
    --base-url, the models a local or self-hosted server serves."""
    if base_url is not None:
        from agcore.cli._served import list_served

        execute(functools.partial(list_served, base_url=base_url))
        return
    from agcore.cli._catalog import list_models

    execute(functools.partial(list_models, provider=provider))


@app.command()
def plugins() -> None:
    """The hook plugins installed in the 'agcore' entry-point group and the hooks each implements."""
    from agcore.cli._catalog import list_plugins

    execute(list_plugins)


def run_app(argv: list[str] | None = None) -> None:
    app(args=argv, prog_name="agcore")
