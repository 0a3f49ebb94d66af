"""Seed 002's ReAct coding agent, assembled from agcore's parts: everything but the command line."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio
import anyio.to_thread

from agcore.agent import (
    DEFAULT_SAFETY_RULES,
    DEFAULT_TOOL_RULES,
    Agent,
    AgentBuilder,
    AgentSession,
    ConfirmCallback,
    SystemPrompt,
)
from agcore.agent.intent import (
    Intent,
    IntentClassifier,
    IntentGate,
    KeywordIntentClassifier,
    ModelIntentClassifier,
)
from agcore.code import DEFAULT_EXCLUDED_DIRS, REPO_MAP_TITLE, CodeIndex, RepoMap, search_code_tool
from agcore.context import keep_last_messages
from agcore.llm import LLMProvider, ToolUseBlock
from agcore.plugins import AuditLogPlugin
from agcore.tools import Tool, ToolRegistry, Workspace

#: Where the agent keeps its own files (code index, audit and trace logs), inside the workspace.
STATE_DIR = ".coding-agent"

# Seed 002 §1.2: the core meta-rules (identity anchor, language lock, no deflection) and the
# output shape (reasoning, then a tool call).
IDENTITY = "You are a coding agent working in the user's repository through tools."
META_RULES = (
    "You are this coding agent and nothing else; never claim to be a person or another product.",
    "Answer in the language the user writes in.",
    "Never tell the user to do what your tools can do: read, search, edit and run it yourself.",
    "Think briefly about what to do next, then call one tool; answer without a call when done.",
    "Use search_code to find where something is before reading whole files.",
)


class CodingAgent(Agent):
    """The prompt is read before every model call, so it always shows the current repo map."""

    name = "coder"

    def __init__(self, workspace: Path, repo_map: RepoMap) -> None:
        self.workspace = workspace
        self.repo_map = repo_map

    @property
    def system_prompt(self) -> str:
        return (
            SystemPrompt(IDENTITY)
            .tool_rules(*META_RULES, *DEFAULT_TOOL_RULES)
            .safety_rules(*DEFAULT_SAFETY_RULES)
            .environment()
            .workspace(self.workspace)
            .extra(self.repo_map.text, title=REPO_MAP_TITLE)
            .render()
        )


@dataclass
class Settings:
    """What the command line sets (seed 002 §1.1 and §3.5: 20 iterations, 30 messages kept)."""

    workspace: Path
    yes: bool = False
    max_turns: int = 20
    history: int = 30
    tool_calls: Literal["auto", "on", "off"] = "on"  # text-mode calls: what llama.cpp models write
    intent: Literal["keywords", "model"] = "keywords"  # the model asked too: one more call a request


def intent_gate(settings: Settings) -> IntentGate:
    """Seed 002 §2.1: classify each request first. A chat or a question about the agent is answered
    without tools, a question about the code with the read-only ones, a coding task with all.
    ``model`` asks the model and falls back to the keywords when its answer cannot be read (the
    seed's "LLM-driven + heuristics")."""
    classifier: IntentClassifier = (
        ModelIntentClassifier() if settings.intent == "model" else KeywordIntentClassifier())

    def show(intent: Intent) -> None:  # the seed's intent_classified event
        print(f"  [intent: {intent.label}, {intent.confidence:.1f}: {intent.reason}]")

    return IntentGate(classifier, on_intent=show)


def confirmer(yes: bool) -> ConfirmCallback:
    """Seed 002 §3.4.2: writes and commands need a yes. ``--yes`` gives it; otherwise the user is
    asked on the terminal, and without one the answer is no (the model is told it was refused)."""

    async def confirm(call: ToolUseBlock, tool: Tool) -> bool:
        if yes:
            return True
        if not sys.stdin.isatty():
            return False
        try:
            answer = await anyio.to_thread.run_sync(input, f"Allow {call.name} {call.input}? [y/N] ")
        except EOFError:  # input ended (Ctrl-D) before an answer: that is a no, as in `agcore run`
            print()
            return False
        return answer.strip().lower() in ("y", "yes")

    return confirm


@asynccontextmanager
async def coding_session(model: LLMProvider, settings: Settings) -> AsyncIterator[AgentSession]:
    """A session of the coding agent on ``model``, with the repo map and code index kept fresh in
    the background until the block ends."""
    root = settings.workspace.resolve()
    state = root / STATE_DIR
    state.mkdir(exist_ok=True)  # not parents: a mistyped workspace is an error, not a new one
    skip = DEFAULT_EXCLUDED_DIRS | {STATE_DIR}
    repo_map = RepoMap(root, max_tokens=1024, excluded_dirs=skip, cache_path=state / "repomap.json")
    index = CodeIndex(root, db_path=state / "code.sqlite", excluded_dirs=skip)
    async with index, anyio.create_task_group() as background:
        await background.start(repo_map.watch)  # the first map is ready; re-rendered on changes
        await background.start(index.watch)     # indexed; changed files re-indexed every 2 s
        bundle = (
            AgentBuilder()
            .provider(model)
            # Seed 002 §3.4.5: long output is cut to windows around what the call asked about.
            .tool_registry(ToolRegistry(truncation="keywords"))
            .tools(Workspace(root).tools(), search_code_tool(index))  # guarded; writes need a yes
            .plugins(AuditLogPlugin(state / "logs"))  # audit.jsonl and trace.jsonl (seed 002 §8)
            .capabilities(intent_gate(settings))
            .config(max_turns=settings.max_turns, text_mode_tools=settings.tool_calls)
            .build()
        )
        session = AgentSession(CodingAgent(root, repo_map), "coding", bundle,
                               confirm=confirmer(settings.yes),
                               transform=keep_last_messages(settings.history))
        try:
            yield session
        finally:
            await session.close()
            background.cancel_scope.cancel()
