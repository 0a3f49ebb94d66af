"""An application's bootstrap: everything an agent needs, assembled with ``AgentBuilder``.

    python examples/bootstrap.py "What is in this project?" [--workspace DIR] [--session ID]

The model comes from ``AGCORE_MODEL`` (e.g. ``anthropic:claude-sonnet-5-5``) or from whichever API
key is set; without one it is a scripted model (``examples/scripts/bootstrap.yaml``) and says so.
Data (memory, sessions, audit log) lives in ``$BOOTSTRAP_HOME`` (default: a temporary directory).
Run it twice with the same ``--session`` and the second run continues the first conversation.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
from pathlib import Path

import anyio
import anyio.to_thread

from agcore.agent import (
    DEFAULT_SAFETY_RULES,
    DEFAULT_TOOL_RULES,
    AgentBuilder,
    AgentSession,
    BasicAgent,
    SystemPrompt,
)
from agcore.llm import LLMProvider, ToolUseBlock, create_provider
from agcore.memory import KeywordRetriever, SqliteMemoryStore, SqliteSessionStore
from agcore.plugins import AuditLogPlugin, LoggingPlugin
from agcore.testing import load_script
from agcore.tools import Tool, Workspace

HOME = Path(os.environ.get("BOOTSTRAP_HOME") or Path(tempfile.gettempdir()) / "agcore-bootstrap")
SCRIPT = Path(__file__).resolve().parent / "scripts" / "bootstrap.yaml"


def choose_model() -> LLMProvider:
    spec = os.environ.get("AGCORE_MODEL")
    if spec is None and os.environ.get("ANTHROPIC_API_KEY"):
        spec = "anthropic:claude-sonnet-5-5"
    if spec is None and os.environ.get("OPENAI_API_KEY"):
        spec = "openai:gpt-6-sol"
    if spec is None or spec.startswith("scripted:"):
        script = spec.removeprefix("scripted:") if spec else SCRIPT
        print(f"No AGCORE_MODEL or API key: the model is SCRIPTED ({script}).\n")
        return load_script(script)
    return create_provider(spec)


async def ask_user(call: ToolUseBlock, tool: Tool) -> bool:
    """Asked before writes and commands. Without a terminal to ask on, the answer is no."""
    if not sys.stdin.isatty():
        return False
    answer = await anyio.to_thread.run_sync(input, f"Allow {call.name}({call.input})? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


async def main(task: str, workspace_dir: Path, session_id: str) -> int:
    workspace = Workspace(workspace_dir)  # path and command guards; writes and commands need a yes
    memory = SqliteMemoryStore(HOME / "memory.db")
    sessions = SqliteSessionStore(HOME / "sessions.db")

    bundle = (
        AgentBuilder()
        .provider(choose_model())
        .tools(workspace.tools())
        .memory_store(memory, remember_tool=True)  # offers `remember`
        .retriever(KeywordRetriever(memory))  # offers `retrieve`
        .plugins(AuditLogPlugin(HOME / "logs"), LoggingPlugin(), entry_points=True)
        .config(max_turns=20, max_cost_usd=0.50)
        .build()
    )
    agent = BasicAgent(
        name="assistant",
        system_prompt=SystemPrompt("You are a helpful engineer who knows this project well.")
        .tool_rules(*DEFAULT_TOOL_RULES)
        .safety_rules(*DEFAULT_SAFETY_RULES)
        .workspace(workspace.root)
        .render(),
    )

    try:  # continue the conversation if this session exists, else start it
        session = await AgentSession.load(sessions, session_id, agent, bundle, confirm=ask_user)
    except LookupError:
        session = AgentSession(agent, session_id, bundle, confirm=ask_user, store=sessions)

    result = await session.submit_turn(task)
    print(f"\n{result.text}\n")
    print(f"[{result.stop}: {result.turns} model calls, {result.usage.input_tokens} tokens in, "
          f"{result.usage.output_tokens} out; session {session.session_id} has "
          f"{len(session.messages)} messages; audit log in {HOME / 'logs'}]")

    await session.close()
    await sessions.aclose()
    await memory.aclose()
    return 0 if result.ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Run one task with an agent built by AgentBuilder.")
    parser.add_argument("task", nargs="?", default="What is in this project? Answer in a few sentences.")
    parser.add_argument("--workspace", type=Path, default=Path("."), help="the directory the agent works in")
    parser.add_argument("--session", default="bootstrap", help="a session id; reuse it to continue")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="  %(message)s")  # LoggingPlugin's lines
    HOME.mkdir(parents=True, exist_ok=True)
    sys.exit(anyio.run(main, args.task, args.workspace, args.session))
