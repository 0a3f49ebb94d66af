"""Runs one YAML plan with ``DefaultTaskAgent.execute_plan`` against an OpenAI-compatible server, in a
process of its own (so a hung step can be killed), and prints one JSON line with what happened.

    python -m tests.e2e_local.plan_main PLAN.yaml --workspace DIR --base-url URL --model NAME --timeout S

The bundle is the one ``agcore plan run`` builds: the workspace tools (writes and commands approved, as
with ``--yes``), the coding-assistant system prompt, and the default ``AgentConfig`` except a cap of
``--max-tool-turns`` tool rounds per step (the CLI's own default is 25) and, with ``--text-tools``,
``text_mode_tools`` (on: True, off: False, auto: "auto", for a kernel that has the auto mode), with
``--constrained-calls``, ``constrained_calls``, and with ``--check CMD``, the plan's ``check:`` (on a
kernel whose plans take one; the report says whether it did).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio

from agcore.agent import (
    DEFAULT_SAFETY_RULES,
    DEFAULT_TOOL_RULES,
    AgentBuilder,
    AgentSession,
    DefaultTaskAgent,
    Plan,
    SystemPrompt,
)
from agcore.hooks import HookContext, hookimpl
from agcore.llm.factory import create_provider
from agcore.llm.types import ToolResultBlock, ToolUseBlock
from agcore.tools.workspace import Workspace

_IDENTITY = (
    "You are agcore, a careful coding assistant. You work in the user's workspace with the tools "
    "given: read before you change, make the smallest change that does the job, run the relevant "
    "command to check it when you can, and finish with a short summary of what you did."
)


class _ToolCount:
    """Counts the tool calls the steps really ran (``execute_plan`` emits no events to count) and
    prints each, for the task's log."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def after_tool_call(self, ctx: HookContext, call: ToolUseBlock, result: ToolResultBlock,
                        status: str) -> None:
        self.calls += 1
        first = (result.text.strip().splitlines() or ["(no output)"])[0]
        shown = None if os.environ.get("AGCORE_E2E_FULL_CALLS") else 160  # the whole call, to debug it
        print(f"▸ {call.name} {json.dumps(call.input)[:shown]} → {status}: {first[:120]}", flush=True)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    space = Workspace(args.workspace, confirm_writes=False, confirm_commands=False)
    provider = create_provider(f"openai-compatible:{args.model}", cache=False, base_url=args.base_url)
    prompt = (SystemPrompt(_IDENTITY).tool_rules(*DEFAULT_TOOL_RULES).safety_rules(*DEFAULT_SAFETY_RULES)
              .workspace(space.root).environment().render())
    tools = _ToolCount()
    config: dict[str, Any] = {"max_tool_turns": args.max_tool_turns}
    if args.text_tools:
        config["text_mode_tools"] = {"on": True, "off": False}.get(args.text_tools, args.text_tools)
    if args.constrained_calls:
        config["constrained_calls"] = args.constrained_calls
    builder = AgentBuilder().provider(provider).tools(space.tools()).plugins(tools).config(**config)
    plan = Plan.load(args.plan)
    report: dict[str, Any] = {"timed_out": False, "error": None, "checked": False}
    if args.check and "checks" in type(plan).model_fields:  # a kernel with plan checks (issue 26.1)
        from agcore.agent.checks import AcceptanceChecks

        plan = Plan.model_validate({**plan.model_dump(), "checks": list(args.check)})
        builder = builder.capabilities(AcceptanceChecks(space))
        report["checked"] = True
    agent = DefaultTaskAgent("agcore-e2e", prompt)
    session = AgentSession(agent, bundle=builder.build())
    try:
        with anyio.move_on_after(args.timeout) as scope:
            plan = await agent.execute_plan(session, plan)
        report["timed_out"] = scope.cancelled_caught
    except Exception as exc:  # reported, not raised: the suite judges the workspace either way
        report["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        aclose = getattr(provider, "aclose", None)
        if aclose is not None:
            await aclose()
    report["succeeded"] = plan.succeeded and not report["timed_out"]
    report["model_calls"] = session.usage.calls
    report["tool_calls"] = tools.calls
    report["steps"] = [
        {"id": s.id, "status": str(s.status.value if hasattr(s.status, "value") else s.status),
         "result": (s.result or "")[:300], "error": s.error.message[:300] if s.error else None}
        for s in plan.steps
    ]
    return report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="plan_main")
    parser.add_argument("plan", type=Path)
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--timeout", type=float, default=240.0)
    parser.add_argument("--max-tool-turns", type=int, default=12)
    parser.add_argument("--text-tools", choices=("on", "off", "auto"))
    parser.add_argument("--constrained-calls", choices=("on", "off", "auto"))
    parser.add_argument("--check", action="append", help="the plan's acceptance check, where plans take one")
    report = anyio.run(run, parser.parse_args(argv))
    print("E2E-PLAN-REPORT " + json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
