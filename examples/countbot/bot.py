"""Seed 004's CountBot, assembled from agcore's parts: everything but the command line."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from agcore.agent import (
    DEFAULT_SAFETY_RULES,
    DEFAULT_TOOL_RULES,
    AgentBuilder,
    AgentSession,
    BasicAgent,
    Skills,
    SystemPrompt,
    agent_tool,
)
from agcore.context import create_context_transform
from agcore.llm import LLMProvider
from agcore.memory import KeywordRetriever, OverflowToMemory, SqliteMemoryStore, SqliteSessionStore
from agcore.plugins import AuditLogPlugin
from agcore.tools import Tool, Workspace, tool

#: The skills shipped with the example: one always on, one loaded when the model asks for it.
SKILLS_DIR = Path(__file__).resolve().parent / "skills"

# Seed 004, ContextBuilder's prompt part 2 (tool principles): act quietly, say only what matters,
# hand complex research to a sub-agent.
TOOL_PRINCIPLES = (
    "Use tools without announcing routine steps; explain only what the user needs to know.",
    "Give a self-contained research question about the workspace files to the researcher tool.",
)

RESEARCHER = BasicAgent(
    "researcher",
    "You answer one research question from the workspace files, in a few sentences naming the files.",
    tools=["list_dir", "glob", "grep", "read_file", "retrieve"],
)


@dataclass
class Settings:
    """What the command line sets (seed 004's configuration table: 25 iterations, 3 tool retries
    one second apart)."""

    home: Path  # workspace/, memory.db, sessions.db, logs/
    persona: str = "friendly"
    name: str = "CountBot"
    user_name: str | None = None
    max_iterations: int = 25
    context_window: int = 8192
    tool_retries: int = 3
    retry_delay: float = 1.0


def fetch_url_tool(settings: Settings) -> Tool:
    """A tool whose failures (a refused connection, a 5xx) are retried after a pause, as seed 004
    retries every tool; the last failure goes to the model as an error it can act on."""

    @tool(max_retries=settings.tool_retries, retry_delay=settings.retry_delay, retry_on=Exception)
    async def fetch_url(url: str) -> str:
        """Fetch a web page or an API's answer as text (at most 20,000 characters).

        Args:
            url: The http:// or https:// address.
        """
        async with httpx.AsyncClient(timeout=20, follow_redirects=True) as client:
            response = await client.get(url)
            response.raise_for_status()
            return response.text[:20_000]

    return fetch_url


def system_prompt(settings: Settings, workspace: Path, skills: Skills) -> str:
    """Identity from a persona preset, tool principles, safety rules, the skills (seed 004's
    ContextBuilder, parts 1, 2, 4, 5 and 6; the memory part is added by the builder)."""
    prompt = (
        SystemPrompt()
        .persona(settings.persona, agent_name=settings.name, user_name=settings.user_name)
        .tool_rules(*TOOL_PRINCIPLES, *DEFAULT_TOOL_RULES)
        .safety_rules(*DEFAULT_SAFETY_RULES)
        .environment()
        .workspace(workspace)
    )
    return skills.apply(prompt).render()


@asynccontextmanager
async def countbot(
    model: LLMProvider, settings: Settings, session_id: str = "main"
) -> AsyncIterator[AgentSession]:
    """The conversation ``session_id``, continued when ``settings.home`` holds it already."""
    root = settings.home / "workspace"
    root.mkdir(parents=True, exist_ok=True)
    workspace = Workspace(root, confirm_writes=False, confirm_commands=False)  # guarded, not asked
    skills = Skills.from_dir(SKILLS_DIR)
    async with SqliteMemoryStore(settings.home / "memory.db") as memory, \
            SqliteSessionStore(settings.home / "sessions.db") as sessions:
        bundle = (
            AgentBuilder()
            .provider(model)
            .tools(workspace.tools(), skills.tool(), fetch_url_tool(settings),
                   agent_tool(RESEARCHER, max_turns=8))  # a sub-agent, as seed 004's subagent_manager
            .memory_store(memory, remember_tool=True)  # `remember`; the prompt says when to use memory
            .retriever(KeywordRetriever(memory))       # `retrieve`
            .plugins(AuditLogPlugin(settings.home / "logs"))
            # Seed 004's cap on tool calls, which ends the answer with a notice. The caps on model
            # calls and tool rounds sit above it, so a model making one call per reply reaches the
            # tool cap first: the call past it is refused (one more round), then the model answers
            # without tools (one more model call).
            .config(max_tool_calls=settings.max_iterations, max_tool_turns=settings.max_iterations + 1,
                    max_turns=settings.max_iterations + 2)
            .build()
        )
        agent = BasicAgent(settings.name.lower(), system_prompt(settings, root, skills))
        # What compaction cuts from a long conversation is summarised into memory, not lost.
        overflow = OverflowToMemory(memory, model, metadata={"session": session_id})
        transform = create_context_transform(model, settings.context_window, on_overflow=overflow)
        try:
            session = await AgentSession.load(sessions, session_id, agent, bundle, transform=transform)
        except LookupError:
            session = AgentSession(agent, session_id, bundle, transform=transform, store=sessions)
        try:
            yield session
        finally:
            await session.close()
