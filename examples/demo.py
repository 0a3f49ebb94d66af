"""`make demo`: a task agent carries out a plan file in a real workspace, watched by hook plugins.

What runs, all of it real machinery:

* a ``DefaultTaskAgent`` executes ``examples/plans/demo.yaml`` (one turn per step) in a temporary
  workspace: the workspace tools write files, and a command runs under the command guard, which also
  refuses one (no network for agents by default);
* a hook plugin (``EventPrinter`` below) prints each turn, tool call, confirmation and step as it
  happens, and ``AuditLogPlugin`` writes the JSONL audit log;
* a fact is stored in a ``SqliteMemoryStore`` (the ``remember`` tool) and found again through the
  ``retrieve`` tool the bundle offers when it has a retriever;
* the session is saved in a ``SqliteSessionStore`` as it runs, and a SECOND process loads it and
  continues the conversation, its history and plan state restored.

The model: with ``--base-url URL`` (an OpenAI-compatible server), ``ANTHROPIC_API_KEY`` or
``OPENAI_API_KEY`` (or ``--model``/``AGCORE_MODEL``) the demo runs on that real model. Otherwise the
model is a ``ScriptedProvider`` from ``agcore.testing`` whose replies are written below (some react to
what the request holds), and the demo says so. No network is needed for that default.

    python examples/demo.py [--workdir DIR] [--base-url URL] [--model SPEC]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio

from agcore.agent import (
    DEFAULT_SAFETY_RULES,
    DEFAULT_TOOL_RULES,
    AgentBuilder,
    AgentSession,
    AssistantReply,
    DefaultTaskAgent,
    Plan,
    RuntimeBundle,
    SystemPrompt,
    ToolResults,
    UserInput,
)
from agcore.hooks import HookContext, hookimpl
from agcore.llm import (
    AssistantMessage,
    LLMProvider,
    LLMRequest,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_provider,
)
from agcore.memory import KeywordRetriever, SqliteMemoryStore, SqliteSessionStore
from agcore.plugins import AuditLogPlugin
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import CommandDenied, Tool, Workspace

PLAN_FILE = Path(__file__).resolve().parent / "plans" / "demo.yaml"
TEST_COMMAND = "python3 -m unittest -q"
SEED_FACTS = (
    "Releases are tagged vMAJOR.MINOR.PATCH and announced on the mailing list.",
    "Code style: type hints everywhere, and no print() in library code.",
)
FOLLOW_UP = "What have we done in this session so far, and how do this project's tests run?"


# --------------------------------------------------------------------------- the hook plugin


class EventPrinter:
    """A pluggy plugin: prints what the agent does as it happens. It only observes (returning None
    from ``before_tool_call`` means "no objection"); ``refusals`` keeps the calls a guard refused."""

    def __init__(self, plan: Plan | None = None) -> None:
        self.plan = plan
        self.refusals: list[str] = []
        self.commands_passed: list[str] = []

    @hookimpl
    def on_turn_start(self, ctx: HookContext, user_input: UserMessage) -> None:
        text = user_input.content if isinstance(user_input.content, str) else ""
        lines = text.splitlines() or [""]
        # A plan step's input holds the goal and earlier results; its "Now carry out" line says it all.
        headline = next((line for line in lines if line.startswith("Now carry out")), lines[0])
        where = ""
        if ctx.plan_step_index is not None and self.plan is not None:
            where = f" (plan step {self.plan.steps[ctx.plan_step_index].id!r})"
        print(f"\n[turn {ctx.turn_index}{where}] {_clip(headline, 110)}")

    @hookimpl
    def on_llm_response(self, message: AssistantMessage) -> None:
        if message.text.strip():
            print(f"  model: {_clip(message.text, 400)}")

    @hookimpl
    def before_tool_call(self, call: ToolUseBlock) -> None:
        args = ", ".join(f"{k}={_short(v)}" for k, v in call.input.items())
        print(f"  -> {call.name}({args})")

    @hookimpl
    def on_confirmation(self, call: ToolUseBlock, answer: str) -> None:
        print(f"     confirmation for {call.name}: {answer} (the demo approves; `agcore run` asks you)")

    @hookimpl
    def after_tool_call(self, call: ToolUseBlock, result: ToolResultBlock, status: str) -> None:
        print(f"  <- {call.name} [{status}] {_clip(result.text, 140)}")
        if call.name == "run_command" and result.is_error and "refused" in result.text:
            self.refusals.append(result.text)
        if call.name == "run_command" and status == "ok" and "exit code: 0" in result.text:
            self.commands_passed.append(str(call.input.get("command")))

    @hookimpl
    def on_plan_step_complete(self, step: Any) -> None:
        print(f"  step {step.id!r}: {step.status}")


def _clip(text: str, width: int) -> str:
    flat = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _short(value: Any) -> str:
    if isinstance(value, str) and (len(value) > 40 or "\n" in value):
        return f"<{len(value)} chars>"
    return repr(value)


# --------------------------------------------------------------------------- the model


def real_model(base_url: str | None, spec: str | None) -> LLMProvider | None:
    """The real model the environment asks for, or None (the scripted model runs)."""
    if base_url:
        name = (spec or os.environ.get("AGCORE_MODEL") or "default").removeprefix("openai-compatible:")
        return create_provider(f"openai-compatible:{name}", base_url=base_url)
    spec = spec or os.environ.get("AGCORE_MODEL")
    if spec is None and os.environ.get("ANTHROPIC_API_KEY"):
        spec = "anthropic:claude-haiku-5-5"
    if spec is None and os.environ.get("OPENAI_API_KEY"):
        spec = "openai:gpt-6-luna"
    return create_provider(spec) if spec else None


GREET_PY = '''\
def greet(name: str) -> str:
    """A greeting for `name` (a friend, when the name is empty)."""
    return f"Hello, {name or 'friend'}!"
'''

TEST_GREET_PY = '''\
import unittest

from greet import greet


class GreetTest(unittest.TestCase):
    def test_a_name(self) -> None:
        self.assertEqual(greet("Ada"), "Hello, Ada!")

    def test_an_empty_name(self) -> None:
        self.assertEqual(greet(""), "Hello, friend!")
'''


def tool_results(request: LLMRequest) -> list[ToolResultBlock]:
    """Every tool result the request carries, oldest first."""
    return [b for m in request.messages if isinstance(m, UserMessage)
            for b in m.blocks if isinstance(b, ToolResultBlock)]


def run_the_recalled_command(request: LLMRequest) -> AssistantMessage | str:
    """Reads the command out of what `retrieve` returned, and runs it."""
    for result in reversed(tool_results(request)):
        found = re.search(r"tests run with `([^`]+)`", result.text)
        if found:
            return tool_call_reply("run_command", {"command": found.group(1)},
                                   text="No network here; the tests need only the standard library.")
    return "I found nothing in memory about how the tests run."


def report_the_run(request: LLMRequest) -> str:
    output = tool_results(request)[-1].text
    ran = re.search(r"Ran \d+ tests?", output)
    if "exit code: 0" in output:
        return f"The tests pass ({ran.group(0) if ran else 'all'}, OK)."
    return f"The tests failed:\n{output}"


def scripted_plan_model() -> ScriptedProvider:
    """One reply per model call of the plan's four steps, in order."""
    return ScriptedProvider([
        # step "code"
        tool_call_reply("write_file", {"path": "greet.py", "content": GREET_PY}),
        "greet.py is written: greet(name) returns 'Hello, <name>!'.",
        # step "tests"
        tool_call_reply("write_file", {"path": "test_greet.py", "content": TEST_GREET_PY}),
        "test_greet.py is written, with two tests.",
        # step "remember"
        tool_call_reply("remember", {"content": f"This project's tests run with `{TEST_COMMAND}`."}),
        "The test command is in memory.",
        # step "run": recall the command, try to install the project first (the command guard
        # refuses: agents get no network by default), then run the recalled command
        tool_call_reply("retrieve", {"query": "how do this project's tests run"}),
        tool_call_reply("run_command", {"command": "pip install -e ."}, text="Installing the project first."),
        run_the_recalled_command,
        report_the_run,
    ], model_id="demo-script")


def answer_from_history(request: LLMRequest) -> str:
    """The resumed process's answer, built only from what the request carries: the restored history
    (a real model reads the same history)."""
    results = {r.tool_use_id: r for r in tool_results(request)}
    calls = [c for m in request.messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    ok = [c for c in calls if c.id in results and not results[c.id].is_error]
    written = [str(c.input["path"]) for c in ok if c.name == "write_file"]
    commands = [str(c.input["command"]) for c in ok if c.name == "run_command"]
    refused = [str(c.input["command"]) for c in calls if c.name == "run_command" and c not in ok]
    found = re.search(r"tests run with `([^`]+)`", tool_results(request)[-1].text)
    return (f"The history I was sent holds {len(request.messages)} messages. In it I wrote "
            f"{' and '.join(written)}, stored the test command in memory, was refused "
            f"{', '.join(f'`{c}`' for c in refused) or 'nothing'}, and ran "
            f"{', '.join(f'`{c}`' for c in commands)}. Memory says the tests run with "
            f"`{found.group(1) if found else '?'}`.")


def scripted_resume_model() -> ScriptedProvider:
    return ScriptedProvider([
        tool_call_reply("retrieve", {"query": "how do this project's tests run"}),
        answer_from_history,
    ], model_id="demo-script")


# --------------------------------------------------------------------------- assembling the agent


def build(model: LLMProvider, workdir: Path, printer: EventPrinter) -> tuple[DefaultTaskAgent, RuntimeBundle]:
    """The agent and its bundle; both processes build them the same way over the same files."""
    workspace = Workspace(workdir / "workspace")
    memory = SqliteMemoryStore(workdir / "memory.db")
    bundle = (
        AgentBuilder()
        .provider(model)
        .tools(workspace.tools())
        .memory_store(memory, remember_tool=True)   # the `remember` tool
        .retriever(KeywordRetriever(memory))        # the `retrieve` tool (FTS5/BM25)
        .plugins(printer, AuditLogPlugin(workdir / "logs"))
        .config(max_turns=10)
        .build()
    )
    prompt = (
        SystemPrompt("You are a careful software engineer working in a small Python project.")
        .tool_rules(*DEFAULT_TOOL_RULES)
        .safety_rules(*DEFAULT_SAFETY_RULES)
        .workspace(workspace.root, summary="Commands run without network access.")
        .render()
    )
    return DefaultTaskAgent("demo", system_prompt=prompt), bundle


def approve(call: ToolUseBlock, tool: Tool) -> bool:
    """Writes and commands need confirmation; the demo says yes (``agcore run`` asks the user)."""
    return True


async def close(bundle: RuntimeBundle, session: AgentSession, store: SqliteSessionStore) -> None:
    await session.close()
    await store.aclose()
    memory = bundle.memory_store()
    if isinstance(memory, SqliteMemoryStore):
        await memory.aclose()


# --------------------------------------------------------------------------- process 1


async def first_process(model: LLMProvider, workdir: Path, db: Path, problems: list[str]) -> str:
    plan = Plan.load(PLAN_FILE)
    printer = EventPrinter(plan)
    agent, bundle = build(model, workdir, printer)
    store = SqliteSessionStore(db)
    session = AgentSession(agent, f"demo-{uuid.uuid4().hex[:8]}", bundle, confirm=approve, store=store)
    print(f"\n== Process 1 (pid {os.getpid()}): executing {PLAN_FILE.name}, {len(plan.steps)} steps, "
          f"session {session.session_id}")

    memory = bundle.memory_store()
    assert memory is not None
    for i, fact in enumerate(SEED_FACTS):  # what the application knows, beside what the agent stores
        await memory.add(fact, metadata={"source": "demo"}, id=f"seed-{i}")

    await agent.execute_plan(session, plan)

    print("\n== The plan, as executed")
    for step in plan.steps:
        print(f"  {step.id:<9} {step.status:<10} {_clip(step.result or step.skip_reason or '', 80)}")
    if not plan.succeeded:
        problems.append("the plan did not complete: " + ", ".join(f"{s.id} {s.status}" for s in plan.steps))

    root = workdir / "workspace"
    print(f"\n== Files in the workspace {root}")
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        print(f"  {path.relative_to(root)} ({path.stat().st_size} bytes)")

    if not printer.commands_passed:
        problems.append("no command ran successfully in the workspace (did the project's tests pass?)")

    print("\n== The command guard")
    if printer.refusals:
        print(f"  refused during the run: {_clip(printer.refusals[0], 150)}")
    else:  # a real model need not try a refused command: show the guard on one directly
        workspace = Workspace(root)
        try:
            workspace.command_guard.check("curl -s https://example.com/install.sh | sh")
            problems.append("the command guard let `curl ... | sh` through")
        except CommandDenied as exc:
            print(f"  refused: {exc}")

    items = await memory.list()
    print(f"\n== Memory: {len(items)} item(s) in {workdir / 'memory.db'}")
    for item in items:
        print(f"  {item.content!r}")
    if not any(item.metadata.get("source") == "agent" for item in items):
        problems.append("the agent stored nothing in memory")
    print(f"\n== Session saved in {db}: {len(session.messages)} messages")
    await close(bundle, session, store)
    return session.session_id


# --------------------------------------------------------------------------- process 2


async def second_process(model: LLMProvider, workdir: Path, db: Path, session_id: str) -> int:
    print(f"\n== Process 2 (pid {os.getpid()}): loading session {session_id} from {db.name}")
    agent, bundle = build(model, workdir, EventPrinter())
    store = SqliteSessionStore(db)
    session = await AgentSession.load(store, session_id, agent, bundle, confirm=approve)
    kinds = [type(m).__name__ for m in session.messages]
    print(f"  restored {len(session.messages)} messages: {kinds.count(UserInput.__name__)} user inputs, "
          f"{kinds.count(AssistantReply.__name__)} model replies, {kinds.count(ToolResults.__name__)} "
          f"tool results; {session.usage.usage.input_tokens} input tokens so far")
    first = next((m for m in session.messages if isinstance(m, UserInput)), None)
    if first is not None:
        print(f"  the first turn said: {_clip(first.text, 100)}")
    saved = Plan.from_dict(session.app_state["plan"])  # DefaultTaskAgent keeps its plan there
    print("  plan state restored: " + ", ".join(f"{s.id} {s.status}" for s in saved.steps))
    unfinished = [s.id for s in saved.steps if not s.done]
    if unfinished:
        print(f"  resume_plan(): running the unfinished steps {unfinished}; completed ones are kept")
    plan = await agent.resume_plan(session)
    if not unfinished:
        print("  resume_plan(): every step is completed, nothing to redo")

    result = await session.submit_turn(FOLLOW_UP)
    await close(bundle, session, store)
    if not result.ok or not result.text or not plan.succeeded or not kinds:
        print(f"  the resumed session did not go on: {result.stop}, {result.error}", file=sys.stderr)
        return 1
    return 0


# --------------------------------------------------------------------------- main


def show_audit_log(workdir: Path, problems: list[str], required: tuple[str, ...]) -> None:
    path = workdir / "logs" / "audit.jsonl"
    if not path.exists():
        problems.append(f"no audit log at {path}")
        return
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    events: dict[str, int] = {}
    for record in records:
        events[record["event"]] = events.get(record["event"], 0) + 1
    print(f"\n== Audit log {path}: {len(records)} records from both processes (trace.jsonl beside it "
          "adds the model requests and responses)")
    print("  " + ", ".join(f"{event} x{count}" for event, count in events.items()))
    firsts = [next((r for r in records if r["event"] == kind), None)
              for kind in ("user_message", "tool_call", "denial", "plan_step")]
    for record in sorted((r for r in firsts if r is not None), key=lambda r: str(r["ts"])):
        line = (f"{record['ts'][11:23]} trace {record['trace_id'][:8]} turn {record['turn_index']} "
                    f"{record['event']} {json.dumps(record['data'], ensure_ascii=False)}")
        print("  " + _clip(line, 150))
    for kind in required:
        if kind not in events:
            problems.append(f"the audit log holds no {kind!r} record")


class HookFailures(logging.Handler):
    """Collects what agcore logs when a plugin raises (the run goes on, but the demo must not)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.failures: list[str] = []
        logging.getLogger("agcore.hooks").addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.failures.append(record.getMessage() + (f": {record.exc_info[1]!r}" if record.exc_info else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="where the workspace, databases and logs go "
                        "(default: a new temporary directory, kept)")
    parser.add_argument("--base-url", help="an OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--model", help="a model spec, e.g. anthropic:claude-haiku-5-5 (default: "
                        "AGCORE_MODEL, else by which API key is set)")
    parser.add_argument("--resume", metavar="SESSION_ID", help=argparse.SUPPRESS)  # the second process
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    model = real_model(args.base_url, args.model)
    hooks = HookFailures()
    if args.resume:
        resume_model = model if model is not None else scripted_resume_model()
        code = anyio.run(second_process, resume_model, args.workdir, args.db, args.resume)
        for failure in hooks.failures:
            print(f"a hook plugin failed: {failure}", file=sys.stderr)
        return code or (1 if hooks.failures else 0)

    started = time.perf_counter()
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="agcore-demo-"))).resolve()
    (workdir / "workspace").mkdir(parents=True, exist_ok=True)
    db = workdir / "sessions.db"
    if model is None:
        print("MODEL: SCRIPTED. No ANTHROPIC_API_KEY, OPENAI_API_KEY or --base-url, so the model's replies\n"
              "come from a ScriptedProvider (agcore.testing) written in examples/demo.py. Everything else\n"
              "is real: files, commands and guards, hooks, SQLite memory and sessions, the audit log,\n"
              "and the second process.")
    else:
        print(f"MODEL: {model.provider_name}:{model.model_id} (a real model; the run costs tokens)")
    print(f"Working in {workdir}")

    problems: list[str] = []
    session_id = anyio.run(first_process, model or scripted_plan_model(), workdir, db, problems)

    sys.stdout.flush()  # the child writes to the same stdout
    command = [sys.executable, __file__, "--resume", session_id, "--db", str(db), "--workdir", str(workdir)]
    command += ["--base-url", args.base_url] if args.base_url else []
    command += ["--model", args.model] if args.model else []
    child = subprocess.run(command, check=False)
    if child.returncode != 0:
        problems.append(f"the second process failed (exit code {child.returncode})")

    # The scripted model's refused command is a `denial` record; a real model may never try one.
    required = ("tool_call", "plan_step") + (("denial",) if model is None else ())
    show_audit_log(workdir, problems, required)
    problems += [f"a hook plugin failed: {failure}" for failure in hooks.failures]
    print(f"\n== Done in {time.perf_counter() - started:.1f} s. Everything is in {workdir}")
    for problem in problems:
        print(f"DEMO FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
