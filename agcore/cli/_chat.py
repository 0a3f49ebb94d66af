"""``agcore chat``: an interactive session, saved as it goes, resumable by id.

While a turn runs, a typed line steers it (``session.steer``); Ctrl-C cancels just that turn (the
history is repaired by the session, so the next prompt works); Ctrl-C or Ctrl-D at the prompt ends the
chat. Every line — prompts, confirmations, steering — comes from the one ``Terminal`` reader.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from rich.console import Console

from agcore.agent import AgentSession, AssistantReply, BasicAgent, UserInput
from agcore.cli._errors import ExitCode
from agcore.cli._local import LocalOptions
from agcore.cli._models import close_provider, resolve_provider
from agcore.cli._render import Renderer, shorten
from agcore.cli._run import stream_turn
from agcore.cli._served import model_or_served
from agcore.cli._setup import (
    build_bundle,
    coding_prompt,
    confirm_callback,
    load_images,
    load_skills,
    open_workspace,
    with_images,
)
from agcore.cli._store import open_store, resume_command, store_error, unknown_session
from agcore.cli._terminal import Terminal, interrupts
from agcore.llm.types import ImageBlock
from agcore.memory import MemoryStoreError

__all__ = ["chat"]

_PROMPT = "you> "
_HISTORY_SHOWN = 6


async def chat(
    console: Console,
    *,
    session_id: str | None,
    db: Path | None,
    model: str | None,
    base_url: str | None,
    workspace: Path | None,
    yes: bool,
    plugins: bool,
    local: LocalOptions | None = None,
    skills_dir: Path | None = None,
    images: list[Path] | None = None,
) -> ExitCode:
    local = local or LocalOptions()
    space = open_workspace(workspace)
    skills = load_skills(skills_dir)
    pictures = load_images(images)
    provider = resolve_provider(await model_or_served(console, model, base_url), base_url)
    try:
        local = await local.with_served_window(provider, base_url)
        bundle = build_bundle(provider, space, entry_point_plugins=plugins,
                              config=local.config_changes(provider), skills=skills,
                              capabilities=local.capabilities())
        transform = local.compaction(provider)
        agent = BasicAgent("agcore", coding_prompt(space, skills))
        renderer = Renderer(console, base_url=base_url)
        for note in local.notes(transform, provider):
            renderer.line(note, style="dim")
        async with open_store(db, existing=session_id is not None) as store, Terminal(console) as terminal:
            confirm = confirm_callback(terminal, renderer, yes=yes)
            try:
                if session_id:
                    session = await AgentSession.load(store, session_id, agent, bundle, confirm=confirm,
                                                      transform=transform)
                    _show_history(renderer, session)
                else:
                    session = AgentSession(agent, bundle=bundle, confirm=confirm, store=store,
                                           transform=transform)
                    await session.save()  # so the id printed below can be resumed even before a turn
            except LookupError:
                raise unknown_session(session_id or "", db, "agcore chat") from None
            except (MemoryStoreError, OSError) as exc:
                raise store_error(db, exc) from None
            again = resume_command("chat", "--session", session.session_id, db=db, model=model,
                                   base_url=base_url, workspace=workspace,
                                   options=local.arguments() + _skills_arguments(skills_dir))
            console.print(f"session {session.session_id} · resume with: {again}",
                          style="dim", markup=False, highlight=False)
            console.print("Type a message; Ctrl-C cancels a running turn; Ctrl-D or Ctrl-C at the prompt "
                          "quits.", style="dim", markup=False)
            try:
                await _Chat(session, terminal, renderer, pictures).loop()
            finally:
                await session.close()
        console.print("bye")
        return ExitCode.OK
    finally:
        await close_provider(provider)


class _Chat:
    def __init__(self, session: AgentSession, terminal: Terminal, renderer: Renderer,
                 images: list[ImageBlock]) -> None:
        self.session = session
        self._images = images  # go with the first message typed
        self.terminal = terminal
        self.renderer = renderer
        self._turn: anyio.CancelScope | None = None
        self._quit = anyio.CancelScope()

    def _interrupt(self) -> None:
        if self._turn is not None:
            self._turn.cancel()
        else:
            self._quit.cancel()

    def _steer(self, line: str) -> None:
        text = line.strip()
        if text:
            self.session.steer(text)
            self.renderer.line(f"↪ steering taken: {shorten(text, 120)}", style="magenta")

    async def loop(self) -> None:
        with self._quit:
            async with interrupts(self._interrupt):
                while True:
                    line = await self.terminal.read_line(_PROMPT)
                    if line is None:
                        self.renderer.line("")
                        return
                    text = line.strip()
                    if text in ("/exit", "/quit"):
                        return
                    if text:
                        await self._run_turn(text)
        self.renderer.line("")  # Ctrl-C at the prompt: end the prompt's line before leaving

    async def _run_turn(self, text: str) -> None:
        with anyio.CancelScope() as scope:
            self._turn = scope
            self.terminal.on_line = self._steer
            try:
                images, self._images = self._images, []
                await stream_turn(self.session, with_images(text, images), self.renderer)
            finally:
                self.terminal.on_line = None
                self._turn = None
        result = self.session.last_result
        if scope.cancelled_caught:
            self.renderer.interrupted()
        if result is not None:
            self.renderer.summary(result)
        # A cancelled turn's history is repaired in memory; write the repair now, not with the next turn.
        await self.session.save()


def _skills_arguments(skills_dir: Path | None) -> list[str]:
    return [] if skills_dir is None else ["--skills", str(skills_dir)]


def _show_history(renderer: Renderer, session: AgentSession) -> None:
    shown = [m for m in session.messages if isinstance(m, UserInput | AssistantReply)]
    renderer.line(f"resumed session {session.session_id} ({len(session.messages)} messages)", style="dim")
    for message in shown[-_HISTORY_SHOWN:]:
        if isinstance(message, UserInput):
            content = message.content if isinstance(message.content, str) else "(non-text input)"
            renderer.line(f"you: {shorten(content, 120)}", style="dim")
        elif message.message.text:
            renderer.line(f"assistant: {shorten(message.message.text, 120)}", style="dim")
