"""What every agent command builds: the workspace, the coding-assistant prompt, the bundle, and the
confirmation callback that asks the user on the terminal."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
from rich.console import Console

from agcore.agent import (
    DEFAULT_SAFETY_RULES,
    DEFAULT_TOOL_RULES,
    LOOP_BACKEND,
    AgentBuilder,
    Capability,
    ConfigError,
    ConversationSession,
    RuntimeBundle,
    SkillError,
    Skills,
    SystemPrompt,
)
from agcore.cli._errors import CliError, ExitCode
from agcore.cli._render import Renderer, format_call
from agcore.cli._terminal import Terminal, interrupts
from agcore.llm import ImageFileError
from agcore.llm.provider import LLMProvider
from agcore.llm.types import ImageBlock, ToolUseBlock, UserMessage
from agcore.tools import SandboxUnavailable, Tool
from agcore.tools.workspace import Workspace

__all__ = [
    "IDENTITY", "Confirm", "build_bundle", "coding_prompt", "confirm_callback", "load_images",
    "load_skills", "open_workspace", "run_interruptible", "with_images",
]

IDENTITY = (
    "You are agcore, a careful coding assistant. You work in the user's workspace with the tools "
    "given: read before you change, make the smallest change that does the job, run the relevant "
    "command to check it when you can, and finish with a short summary of what you did."
)

Confirm = Callable[[ToolUseBlock, Tool], Awaitable[bool | Literal["always"]]]

_ANSWERS: dict[str, bool | Literal["always"]] = {
    "y": True, "yes": True, "n": False, "no": False, "a": "always", "always": "always",
}


def open_workspace(directory: Path | None) -> Workspace:
    """The workspace at ``directory`` (default: the current directory); exit 2 if it is not one."""
    root = (directory or Path.cwd()).expanduser()
    if not root.is_dir():
        raise CliError(f"--workspace {root}: no such directory; create it or point at an existing one.",
                       ExitCode.USAGE)
    try:
        return Workspace(root)
    except SandboxUnavailable as exc:  # AGCORE_SANDBOX=required where there is none
        raise CliError(exc.message, ExitCode.CONFIG) from exc
    except ValueError as exc:  # a bad AGCORE_SANDBOX value
        raise CliError(str(exc), ExitCode.USAGE) from exc


def load_skills(directory: Path | None) -> Skills | None:
    """The skills of ``--skills DIR`` (None when not given); exit 2 naming the bad file if one is."""
    if directory is None:
        return None
    try:
        return Skills.from_dir(directory)
    except SkillError as exc:
        raise CliError(f"--skills: {exc}", ExitCode.USAGE) from None


def load_images(paths: list[Path] | None) -> list[ImageBlock]:
    """The images of ``--image PATH`` options, read now so a bad one stops the command before any
    model call (exit 2, saying what is wrong with it)."""
    try:
        return [ImageBlock.from_path(path) for path in paths or ()]
    except ImageFileError as exc:
        raise CliError(f"--image: {exc}", ExitCode.USAGE) from None


def with_images(text: str, images: list[ImageBlock]) -> str | UserMessage:
    """The turn's input: ``text`` alone, or a message with the images before it."""
    return UserMessage.with_images(text, images) if images else text


def coding_prompt(workspace: Workspace, skills: Skills | None = None) -> str:
    prompt = (
        SystemPrompt(IDENTITY)
        .tool_rules(*DEFAULT_TOOL_RULES)
        .safety_rules(*DEFAULT_SAFETY_RULES)
        .workspace(workspace.root)
        .environment()
    )
    if skills is not None:
        skills.apply(prompt)
    return prompt.render()


def build_bundle(
    provider: LLMProvider,
    workspace: Workspace,
    *,
    entry_point_plugins: bool,
    plugins: tuple[object, ...] = (),
    backend: str = LOOP_BACKEND,
    config: dict[str, Any] | None = None,
    skills: Skills | None = None,
    capabilities: tuple[Capability, ...] = (),
) -> RuntimeBundle:
    """The runtime bundle: ``provider``, the workspace tools (and ``load_skill`` when there are
    ``skills`` to load on demand), ``plugins``, (if asked) the plugins of the ``agcore`` entry-point
    group, ``capabilities`` (the intent gate, acceptance checks) and ``config`` changes to
    ``AgentConfig``; long tool outputs are cut to keyword windows. An invalid plugin is a configuration
    error (exit 3)."""
    builder = AgentBuilder().provider(provider).tools(workspace.tools())
    if skills is not None and skills.on_demand:
        builder.tools(skills.tool())
    builder.plugins(*plugins, entry_points=entry_point_plugins).backend(backend)
    if capabilities:
        builder.capabilities(*capabilities)
    if config:
        builder.config(**config)
    try:
        bundle = builder.build()
    except ConfigError as exc:
        raise CliError(str(exc), ExitCode.CONFIG) from None
    # A long output keeps the lines around what the call asked for, not only its head.
    bundle.tool_registry().truncation = "keywords"
    return bundle


def confirm_callback(terminal: Terminal, renderer: Renderer, *, yes: bool) -> Confirm:
    """Asks on the terminal before writes and commands: yes, no, or always (this tool, this session).
    With ``yes`` every call is approved without asking."""

    async def confirm(call: ToolUseBlock, tool: Tool) -> bool | Literal["always"]:
        if yes:
            return True
        renderer.end_text()
        answer = await terminal.ask(
            f"Allow {format_call(call)}?", _ANSWERS, False, hint="y = yes / n = no / a = always"
        )
        if answer is False:
            renderer.line("  not approved: the model is told so", style="yellow")
        return answer

    return confirm


Session = TypeVar("Session", bound=ConversationSession)


async def run_interruptible(
    console: Console,
    renderer: Renderer,
    *,
    yes: bool,
    open_session: Callable[[Confirm], Awaitable[Session]],
    work: Callable[[Session], Awaitable[object]],
    on_terminal: Callable[[Terminal], None] | None = None,
) -> tuple[Session, bool]:
    """Run ``work`` on the session ``open_session(confirm)`` gives (new, or loaded from a store), whose
    confirmations ask the terminal; Ctrl-C cancels the work (not the program). ``on_terminal`` gets
    the terminal first (for other questions, e.g. a plan's approval). Returns the session and whether
    it was interrupted."""
    async with Terminal(console) as terminal:
        if on_terminal is not None:
            on_terminal(terminal)
        session = await open_session(confirm_callback(terminal, renderer, yes=yes))
        with anyio.CancelScope() as scope:
            async with interrupts(scope.cancel):
                await work(session)
        await session.close()
    if scope.cancelled_caught:
        renderer.interrupted()
    return session, scope.cancelled_caught
