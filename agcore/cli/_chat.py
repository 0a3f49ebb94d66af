"""``agcore chat``: an interactive session, saved as it goes, resumable by id, on the loop backend
(saved in the session store) or on LangGraph (``--backend langgraph``: kept in the checkpoints beside
it, ``_checkpoints``).

While a turn runs, a typed line steers it (``session.steer``); Ctrl-C cancels just that turn (the
history is repaired by the session, so the next prompt works); Ctrl-C or Ctrl-D at the prompt ends the
chat. Every line — prompts, confirmations, steering — comes from the one ``Terminal`` reader.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console

from agcore.agent import (
    LANGGRAPH_BACKEND,
    AgentSession,
    AssistantReply,
    BasicAgent,
    ContextTransform,
    ConversationSession,
    RuntimeBundle,
    UserInput,
    open_session,
)
from agcore.cli._checkpoints import choose_backend, open_checkpointer
from agcore.cli._errors import ExitCode
from agcore.cli._local import LocalOptions
from agcore.cli._models import close_provider, resolve_provider
from agcore.cli._render import Renderer, shorten
from agcore.cli._run import stream_turn
from agcore.cli._served import model_or_served
from agcore.cli._session_lock import SessionLocks
from agcore.cli._setup import (
    Confirm,
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
from agcore.cli._unfinished import UNFINISHED_NOTE, finish_unfinished, unfinished_run
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
    backend: str | None = None,
    local: LocalOptions | None = None,
    skills_dir: Path | None = None,
    images: list[Path] | None = None,
) -> ExitCode:
    local = local or LocalOptions()
    backend = await choose_backend(backend, db, session_id, must_exist=True, start_with="agcore chat")
    space = open_workspace(workspace)
    skills = load_skills(skills_dir)
    pictures = load_images(images)
    provider = resolve_provider(await model_or_served(console, model, base_url), base_url)
    try:
        local = await local.with_served_window(provider, base_url)
        bundle = build_bundle(provider, space, entry_point_plugins=plugins, backend=backend,
                              config=local.config_changes(provider), skills=skills,
                              capabilities=local.capabilities())
        transform = local.compaction(provider)
        agent = BasicAgent("agcore", coding_prompt(space, skills))
        renderer = Renderer(console, base_url=base_url)
        for note in local.notes(transform, provider):
            renderer.line(note, style="dim")
        opened = _graph_sessions if backend == LANGGRAPH_BACKEND else _store_sessions
        async with opened(db, agent, bundle, transform) as sessions, Terminal(console) as terminal:
            confirm = confirm_callback(terminal, renderer, yes=yes)
            session, save = await sessions(session_id, confirm)
            if session_id:
                _show_history(renderer, session)
            graph = ["--backend", backend] if backend == LANGGRAPH_BACKEND else []
            again = resume_command("chat", "--session", session.session_id, db=db, model=model,
                                   base_url=base_url, workspace=workspace,
                                   options=graph + local.arguments() + _skills_arguments(skills_dir))
            console.print(f"session {session.session_id} · resume with: {again}",
                          style="dim", markup=False, highlight=False)
            console.print("Type a message; Ctrl-C cancels a running turn; Ctrl-D or Ctrl-C at the prompt "
                          "quits.", style="dim", markup=False)
            try:
                talk = _Chat(session, save, terminal, renderer, pictures)
                await talk.loop(finish_first=session_id is not None and await unfinished_run(session))
            finally:
                await session.close()
        console.print("bye")
        return ExitCode.OK
    finally:
        await close_provider(provider)


#: Opens a chat's session (``session_id`` None: a new one, saved at once so its id can be resumed)
#: with the confirm callback; returns it and how to save it after a turn.
_Opener = Callable[[str | None, Confirm], Awaitable[tuple[ConversationSession, Callable[[], Awaitable[Any]]]]]


@asynccontextmanager
async def _store_sessions(
    db: Path | None, agent: BasicAgent, bundle: RuntimeBundle, transform: ContextTransform | None
) -> AsyncIterator[_Opener]:
    """The loop backend's sessions, in the session store, each locked to this process
    (``SessionLocks``)."""
    locks = SessionLocks(db)
    async with open_store(db, existing=False) as store:  # choose_backend found the session if one was named

        async def opened(session_id: str | None, confirm: Confirm) -> tuple[ConversationSession, Any]:
            try:
                if session_id:
                    session = await AgentSession.load(store, session_id, agent, bundle, confirm=confirm,
                                                      transform=transform)
                else:
                    session = AgentSession(agent, bundle=bundle, confirm=confirm, store=store,
                                           transform=transform)
                    await session.save()  # so the id printed can be resumed even before a turn
            except LookupError:
                raise unknown_session(session_id or "", db, "agcore chat") from None
            except (MemoryStoreError, OSError) as exc:
                raise store_error(db, exc) from None
            locks.take(session.session_id)
            return session, session.save

        with locks:
            yield opened


@asynccontextmanager
async def _graph_sessions(
    db: Path | None, agent: BasicAgent, bundle: RuntimeBundle, transform: ContextTransform | None
) -> AsyncIterator[_Opener]:
    """LangGraph's threads, in the SQLite checkpoints beside the session store (thread id = session
    id): every step is checkpointed as it ends, so nothing is left to save after a turn."""
    from agcore.integrations.langgraph import GraphSession, load_thread, save_thread

    locks = SessionLocks(db)
    async with open_checkpointer(db) as saver:

        async def opened(session_id: str | None, confirm: Confirm) -> tuple[ConversationSession, Any]:
            session = open_session(agent, session_id, bundle, checkpointer=saver, confirm=confirm,
                                   transform=transform)
            assert isinstance(session, GraphSession)  # the bundle's backend is langgraph
            locks.take(session.session_id)
            if session_id is None:
                await save_thread(session)  # its first checkpoint: the id printed can be resumed
            elif not await load_thread(session):
                raise unknown_session(session_id, db, "agcore chat --backend langgraph")
            return session, _nothing

        with locks:
            yield opened


async def _nothing() -> None:
    return None


class _Chat:
    def __init__(self, session: ConversationSession, save: Callable[[], Awaitable[Any]], terminal: Terminal,
                 renderer: Renderer, images: list[ImageBlock]) -> None:
        self.session = session
        self._save = save
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

    async def loop(self, *, finish_first: bool = False) -> None:
        """Read and run messages until the user quits; ``finish_first``: first finish the run a
        stopped process left unfinished (``finish_last_run``)."""
        with self._quit:
            async with interrupts(self._interrupt):
                if finish_first:
                    await self._finish_last_run()
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

    async def _finish_last_run(self) -> None:
        """The resumed thread's last run stopped midway (its process was killed): finish it as
        ``recover()`` does, so the calls that had finished keep their results (a new turn would
        answer them all "cancelled") and those that had not run again, confirmed as any call."""
        self.renderer.line(UNFINISHED_NOTE, style="yellow")
        await self._run_turn(None)

    async def _run_turn(self, text: str | None) -> None:
        """Run a turn on ``text`` (None: finish the unfinished run instead), Ctrl-C cancelling it."""
        with anyio.CancelScope() as scope:
            self._turn = scope
            self.terminal.on_line = self._steer
            try:
                if text is None:
                    await finish_unfinished(self.session, self.renderer)
                else:
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
        await self._save()


def _skills_arguments(skills_dir: Path | None) -> list[str]:
    return [] if skills_dir is None else ["--skills", str(skills_dir)]


def _show_history(renderer: Renderer, session: ConversationSession) -> None:
    shown = [m for m in session.messages if isinstance(m, UserInput | AssistantReply)]
    renderer.line(f"resumed session {session.session_id} ({len(session.messages)} messages)", style="dim")
    for message in shown[-_HISTORY_SHOWN:]:
        if isinstance(message, UserInput):
            content = message.content if isinstance(message.content, str) else "(non-text input)"
            renderer.line(f"you: {shorten(content, 120)}", style="dim")
        elif message.message.text:
            renderer.line(f"assistant: {shorten(message.message.text, 120)}", style="dim")
