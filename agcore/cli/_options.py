"""The command line's options, each one type (``Annotated``) that several commands share, with the
checks that turn a mistake into a usage error before anything runs."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agcore.agent import LANGGRAPH_BACKEND, LOOP_BACKEND

if TYPE_CHECKING:
    from agcore.cli._local import LocalOptions

Model = Annotated[str | None, typer.Option(
    "--model", "-m", metavar="SPEC",
    help="vendor:model (anthropic:claude-sonnet-4-6, openai:gpt-5.5, ollama:llama3.1), a model id from "
         "`agcore models`, or scripted:PATH (a JSON/YAML script of replies, offline). Default: "
         "$AGCORE_MODEL, else by which of ANTHROPIC_API_KEY / OPENAI_API_KEY is set.",
)]
def _base_url(value: str | None) -> str | None:
    from agcore.llm import check_base_url

    if value is not None:
        try:
            check_base_url(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    return value


BaseUrl = Annotated[str | None, typer.Option(
    "--base-url", metavar="URL", callback=_base_url,
    help="An OpenAI-compatible server, e.g. http://localhost:8000/v1.",
)]
WorkspaceDir = Annotated[Path | None, typer.Option(
    "--workspace", "-w", metavar="DIR", help="The directory the agent works in (default: the current one).",
)]


def _append_setting(variable: str) -> Callable[[list[Any] | None], list[Any] | None]:
    """A callback that adds an option's values to ``$variable``, which every ``Workspace`` this
    process opens reads (one place for run, chat and the plan commands)."""

    def callback(values: list[Any] | None) -> list[Any] | None:
        if values:
            current = [v for v in os.environ.get(variable, "").split(os.pathsep) if v]
            os.environ[variable] = os.pathsep.join([*current, *(os.fspath(v) for v in values)])
        return values

    return callback


EnvAllow = Annotated[list[str] | None, typer.Option(
    "--env", metavar="NAME", callback=_append_setting("AGCORE_ENV_ALLOW"),
    help="Pass this environment variable to commands (repeatable; a glob like 'AWS_*' works). Commands "
         "get only PATH, locale, terminal and toolchain settings otherwise.",
)]
Readable = Annotated[list[Path] | None, typer.Option(
    "--readable", metavar="PATH", callback=_append_setting("AGCORE_READABLE"),
    help="Let commands and the file tools read this directory outside the workspace (repeatable). "
         "Commands see only the workspace and the system's programs and libraries otherwise.",
)]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Approve every write and command without asking.")]
Plugins = Annotated[bool, typer.Option(
    "--plugins/--no-plugins", help="Load the hook plugins installed in the 'agcore' entry-point group.",
)]
SessionDb = Annotated[Path | None, typer.Option(
    "--db", metavar="PATH", help="The session database (default: $AGCORE_HOME/sessions.db, "
                                 "AGCORE_HOME defaulting to ~/.agcore).")]
FailurePolicyOption = Annotated[str | None, typer.Option(
    "--on-failure", metavar="POLICY",
    help="stop (default): end at the first failed step; continue: run the steps that do not need it; "
         "retry: run a step again while its error is transient. `plan resume` keeps the run's.")]
Temporal = Annotated[str | None, typer.Option(
    "--temporal", metavar="HOST:PORT",
    help="Run durably on Temporal at this address, on the workers of --task-queue (their bundle decides "
         "model and tools; --model, --workspace and --plugins do not apply; --compact, with "
         "--context-window, compacts in the workflow). Prints the workflow id.",
)]
def _durable_compaction(compact: bool | None, context_window: int | None) -> Any:
    """--compact (with --context-window) for a durable run: the workflow compacts what the model sees."""
    if not compact:
        return None
    from agcore.integrations.temporal import CompactionOptions

    return CompactionOptions(max_context_tokens=context_window)


def _installed_backend(value: str | None) -> str | None:
    """--backend names a backend installed here: a usage error otherwise (an empty name too, which
    would otherwise fall back to the loop), saying which one was meant."""
    if value is None:
        return None
    from agcore.agent import ConfigError, check_backend

    try:
        check_backend(value)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from None
    return value


Backend = Annotated[str | None, typer.Option(
    "--backend", metavar="NAME", callback=_installed_backend,
    help=f"The runtime: {LOOP_BACKEND} (agcore's own, the default) or {LANGGRAPH_BACKEND} (LangGraph's "
         "graph; its conversations are kept in a SQLite checkpointer beside the session store), or "
         "another installed in the agcore.backends entry-point group. A saved session continues on the "
         "backend it was started on (left out: that one).")]


def _no_graph_on_temporal(backend: str | None, temporal: str | None) -> None:
    """--backend langgraph (or any but the loop) with --temporal: a usage error naming the choice."""
    if temporal is not None and backend not in (None, LOOP_BACKEND):
        raise typer.BadParameter(
            f"{backend!r} cannot run on Temporal (the workers run agcore's loop): leave out --temporal "
            f"to run on {backend} here, or leave out --backend to run durably", param_hint="--backend")


def worker_side(temporal: str | None, given: dict[str, object]) -> None:
    """With --temporal, options that shape the agent (``given``: flag -> value, None when left out) are
    the worker's bundle factory's to set: a usage error naming them, not options silently ignored."""
    named = [flag for flag, value in given.items() if value is not None]
    if temporal is not None and named:
        raise typer.BadParameter(
            f"{', '.join(named)} {'shapes' if len(named) == 1 else 'shape'} the agent, and with "
            "--temporal the worker's bundle factory builds it (`agcore worker MODULE:FACTORY`): set "
            "them there, or leave out --temporal to run here", param_hint=named[0])


TaskQueue = Annotated[str, typer.Option("--task-queue", metavar="NAME", help="The Temporal task queue.")]
Namespace = Annotated[str, typer.Option("--namespace", metavar="NAME", help="The Temporal namespace.")]
Tls = Annotated[bool, typer.Option("--tls/--no-tls", help="Connect with TLS (a cluster, Temporal Cloud).")]
ApiKey = Annotated[str | None, typer.Option(
    "--api-key", metavar="KEY", envvar="TEMPORAL_API_KEY", help="An API key (Temporal Cloud).")]
PayloadStore = Annotated[str | None, typer.Option(
    "--payload-store", metavar="DIR", envvar="AGCORE_PAYLOAD_STORE",
    help="Keep payloads over 256 kB out of the workflow history, as files in DIR (shared by every "
         "worker and client of the task queue: give them all the same DIR).")]



def _snapshot_budget(value: int | None) -> int | None:
    if value is not None and 0 < value < 1000:
        raise typer.BadParameter(f"{value} bytes would carry no turn: give at least 1000, or 0 to carry "
                                 "every message (with --payload-store)")
    return value


MaxSnapshotBytes = Annotated[int | None, typer.Option(
    "--max-snapshot-bytes", metavar="BYTES", min=0, callback=_snapshot_budget,
    help="With --temporal: the most bytes of messages the session carries when it continues as new "
         "(default 400000: the newest whole turns that fit; the rest stay in its earlier runs). 0 "
         "carries every message, which needs --payload-store (Temporal refuses a payload over 2 MB).")]


def _check_snapshot_budget(value: int | None, payload_store: str | None, temporal: str | None) -> None:
    """--max-snapshot-bytes: a usage error without --temporal, or 0 (all) without --payload-store."""
    if value is not None and temporal is None:
        raise typer.BadParameter("only with --temporal", param_hint="--max-snapshot-bytes")
    if value == 0 and payload_store is None:
        raise typer.BadParameter("0 carries every message, in one payload that Temporal refuses past 2 MB: "
                                 "add --payload-store DIR (shared by the workers), or give a budget",
                                 param_hint="--max-snapshot-bytes")


def _one_of(*choices: str) -> Callable[[str | None], str | None]:
    """A typer callback accepting only ``choices`` (or the option left out)."""
    said = f"{', '.join(choices[:-1])} or {choices[-1]}"

    def check(value: str | None) -> str | None:
        if value is not None and value not in choices:
            raise typer.BadParameter(f"{value!r}: choose {said}")
        return value

    return check


_ON_OFF_AUTO = _one_of("on", "off", "auto")


TextTools = Annotated[str | None, typer.Option(
    "--text-tools", metavar="on|off|auto", callback=_ON_OFF_AUTO,
    help="How tools reach the model. on: described in the prompt, calls read from the reply's text "
         "(small local models that write calls as JSON); off: the API's native tool calling; auto "
         "(default): native, and text mode from the first call a local or unknown model writes as "
         "text (text mode from the start for a model the registry says has no tool calling).",
)]
ConstrainedCalls = Annotated[str | None, typer.Option(
    "--constrained-calls", metavar="on|off|auto", callback=_ON_OFF_AUTO,
    help="Constrain text-mode replies, while the server decodes them, to calls to the offered tools or "
         "an answer (a JSON Schema). auto (default): on llama.cpp, vLLM and Ollama servers, recognised "
         "by asking them; on: on any server (dropped if it refuses); off: never.",
)]
MaxTurns = Annotated[int | None, typer.Option(
    "--max-turns", metavar="N", min=1,
    help="At most N model calls (and N tool rounds) per task or plan step (default: 50 calls, 25 rounds).",
)]
Temperature = Annotated[float | None, typer.Option(
    "--temperature", metavar="T", min=0.0, max=2.0,
    help="Sampling temperature for every model call (default: the server's).",
)]
ContextWindow = Annotated[int | None, typer.Option(
    "--context-window", metavar="TOKENS", min=256,
    help="The model's context window, as the server was started with it (llama-server -c N). Under "
         "32768 tokens the history is compacted before it overflows; `agcore models --base-url URL` "
         "shows what llama.cpp and vLLM report.",
)]
SkillsDir = Annotated[Path | None, typer.Option(
    "--skills", metavar="DIR", help="Skills to use: a folder per skill, each with a SKILL.md (always-on "
    "ones go into the prompt; the others are loaded on demand with the load_skill tool).")]
Images = Annotated[list[Path] | None, typer.Option(
    "--image", metavar="PATH", help="An image to send with the task (chat: with the first message); "
    "PNG, JPEG, GIF or WebP, at most 5 MB. Repeat for several.")]
MaxTokens = Annotated[int | None, typer.Option(
    "--max-tokens", metavar="N", min=1,
    help="At most N tokens per model reply. Default: a fifth of a context window under 32768 tokens "
         "(--context-window, or the registry's), at most 4096; none otherwise (the server's default).",
)]
Checks = Annotated[list[str] | None, typer.Option(
    "--check", metavar="CMD",
    help="A command that must pass (exit 0) before the task counts as done, e.g. 'pytest -q' "
         "(repeatable; run in order, in the workspace's command sandbox, when the model says it is "
         "done). A failing check's output goes back to the model, up to --check-rounds times; still "
         "failing, the task fails (exit 1).",
)]
Review = Annotated[bool, typer.Option(
    "--review/--no-review",
    help="Hold the answer to the workspace when it says it is done: a file it says it wrote, fixed or "
         "updated that is missing or unchanged gets the model asked to make the change, then the task "
         "fails instead of ending done. On by default; it is no --check (the summary still says "
         "unchecked).",
)]
ModelReview = Annotated[bool, typer.Option(
    "--answer-review/--no-answer-review",
    help="With --review: also have the model review the work in one more request when it says it is "
         "done (on by default). --no-answer-review keeps the review of what the answer claims against "
         "the files and drops the model's: a small local model reviewing itself made up requirements "
         "(the e2e suite's create-file, three runs in three), and passed wrong answers.",
)]
CheckRounds = Annotated[int | None, typer.Option(
    "--check-rounds", metavar="N", min=0,
    help="How many times the model is asked to fix a failing --check before the task fails (default 3).",
)]


def _positive_seconds(value: float | None) -> float | None:
    if value is not None and not value > 0:
        raise typer.BadParameter(f"{value:g} is not a number of seconds above 0 (e.g. 300)")
    return value


CheckTimeout = Annotated[float | None, typer.Option(
    "--check-timeout", metavar="SECONDS", callback=_positive_seconds,
    help="Kill each --check command still running after SECONDS; it counts as failed (default: the "
         "workspace's command timeout, 120 s).",
)]


def require_checks(checks: list[str] | None, **given: object) -> None:
    """A usage error for each option of ``given`` (its value None: not given) that only means something
    with ``--check``, when no ``--check`` was given: silently ignoring it would hide the mistake."""
    if checks:
        return
    for name, value in given.items():
        if value is not None:
            option = "--" + name.replace("_", "-")
            raise typer.BadParameter(f"only means something with --check: add --check CMD (e.g. --check "
                                     f"'pytest -q'), or drop {option}", param_hint=option)


Compact = Annotated[bool | None, typer.Option(
    "--compact/--no-compact",
    help="Summarise older history when it nears the context window. Default: on for windows under "
         "32768 tokens (the registry's, or --context-window), off otherwise.",
)]


MaxToolCalls = Annotated[int | None, typer.Option(
    "--max-tool-calls", metavar="N", min=1,
    help="At most N tool calls per task or plan step, however many a reply makes; the answer then "
         "ends with a notice saying it stopped there (default: no cap).",
)]


Intent = Annotated[str | None, typer.Option(
    "--intent", metavar="off|keywords|model", callback=_one_of("off", "keywords", "model"),
    help="Classify each request first: chat is answered without tools, \"what can you do?\" from the "
         "tool list, coding tasks as usual. keywords: by keywords, no model call; model: one small "
         "call to the model; off (default): no classification.",
)]


ApprovePlan = Annotated[bool, typer.Option(
    "--approve-plan",
    help="Show the plan and run it only once approved: y runs it, r redrafts it with your feedback, n "
         "stops (--yes approves at once). run: the task is planned first, the model reading the "
         "workspace with read-only tools while it drafts.",
)]
ReadOnly = Annotated[bool, typer.Option(
    "--read-only",
    help="Let the model look around the workspace with the read-only tools (read, list, search) "
         "before it answers with the plan; nothing can be changed while planning.",
)]


def _local(text_tools: str | None, max_turns: int | None, temperature: float | None,
           context_window: int | None, compact: bool | None, max_tokens: int | None,
           constrained_calls: str | None = None, *, max_tool_calls: int | None = None,
           intent: str | None = None) -> LocalOptions:
    from agcore.cli._local import LocalOptions

    return LocalOptions(text_tools=text_tools, max_turns=max_turns, temperature=temperature,
                        context_window=context_window, compact=compact, max_tokens=max_tokens,
                        constrained_calls=constrained_calls, max_tool_calls=max_tool_calls, intent=intent)


