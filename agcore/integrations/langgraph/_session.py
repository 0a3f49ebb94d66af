"""``GraphSession``: ``AgentSession``'s interface over the compiled graph.

The same calls (``submit_turn``, ``stream_turn``, ``resume``, ``steer``, ``follow_up``, ``close``) and
the same ``TurnResult``s, so switching an application to LangGraph is one line. The conversation is a
LangGraph thread (``session_id`` is its ``thread_id``) kept by the checkpointer; a confirm callback
answers the graph's confirmation interrupts as they come, and ``approve()``, ``recover()`` and
``pending()`` reach a thread another process left at an interrupt or in the middle of a run
(``pending()`` says which, so a killed run is not mistaken for a finished one).
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping
from contextlib import aclosing, asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, cast

import anyio
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.types import Command, Durability

from agcore.agent import (
    TURN_RUNNING,
    AgentEvent,
    AgentMessage,
    AgentSession,
    CostTracker,
    SessionState,
    TurnResult,
    check_client_results,
    resolve_output,
    wait_until_closed,
)
from agcore.agent.steps import failed_event
from agcore.integrations.langgraph._graph import build_graph, default_durability, recursion_limit
from agcore.integrations.langgraph._own_task import interrupts_of_run, stream_in_own_task
from agcore.integrations.langgraph._shell import EVENTS_KEY, ThreadSession
from agcore.integrations.langgraph._tool_nodes import CLIENT_TOOLS, CONFIRMATION
from agcore.integrations.langgraph._turn_endings import (
    confirmation_resume,
    end_at_step_cap,
    end_left_turn,
    run_progress,
)
from agcore.llm.types import ToolResultBlock, UserMessage

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from agcore.agent import Agent, ConfirmCallback, ContextTransform, RuntimeBundle
    from agcore.hooks import HookContext

__all__ = ["AgentGraph", "GraphSession"]

_Payload = dict[str, Any] | Command[Any] | None
#: ``pending()``'s ``type`` for a run that started and never finished (its process was killed).
UNFINISHED = "agcore.unfinished"

# The graphs compiled for a bundle (AgentGraph.shared), dropped with it.
_SHARED: weakref.WeakKeyDictionary[Any, list[AgentGraph]] = weakref.WeakKeyDictionary()


class AgentGraph:
    """``agent`` compiled once, for many sessions (threads): ``graph.session(id)`` makes each one
    without compiling again. ``compiled`` is the ``CompiledStateGraph``; ``checkpointer`` defaults to
    an ``InMemorySaver``. ``GraphSession`` (and so ``open_session``) finds the graph of its agent and
    bundle by itself (``AgentGraph.shared``): compiling is 60% of a short session's CPU."""

    def __init__(
        self, agent: Agent, bundle: RuntimeBundle, checkpointer: BaseCheckpointSaver[Any] | None = None
    ) -> None:
        self.agent = agent
        self.bundle = bundle
        self.checkpointer = checkpointer if checkpointer is not None else InMemorySaver()
        self.compiled, self.threads = build_graph(agent, bundle, self.checkpointer)
        self._default_saver = False

    def __repr__(self) -> str:
        return f"AgentGraph({self.agent.name!r})"

    @classmethod
    def shared(
        cls, agent: Agent, bundle: RuntimeBundle, checkpointer: BaseCheckpointSaver[Any] | None = None
    ) -> AgentGraph:
        """The graph compiled for ``agent``, ``bundle`` and ``checkpointer`` (None: one in-memory saver
        for all of them), compiled on first use and kept while the bundle lives."""
        graphs = _SHARED.setdefault(bundle, [])
        for graph in graphs:
            if graph.agent is agent and graph.owns(checkpointer):
                return graph
        graph = cls(agent, bundle, checkpointer)
        graph._default_saver = checkpointer is None
        graphs.append(graph)
        return graph

    def owns(self, checkpointer: BaseCheckpointSaver[Any] | None) -> bool:
        """Whether sessions with ``checkpointer`` (None: the default) run on this graph."""
        return self.checkpointer is checkpointer or (checkpointer is None and self._default_saver)

    def session(self, session_id: str | None = None, **kwargs: Any) -> GraphSession:
        """A ``GraphSession`` on this graph (``kwargs``: ``confirm``, ``transform``, ``dependencies``,
        ``durability``)."""
        return GraphSession(self.agent, session_id, self.bundle, graph=self, **kwargs)


class GraphSession:
    """A conversation with ``agent`` run on its LangGraph graph, with ``AgentSession``'s calls
    (``submit_turn``, ``stream_turn``, ``resume``, ``steer``, ``follow_up``, ``close``) and its
    ``TurnResult``s. The conversation is a LangGraph thread (``session_id`` is its ``thread_id``) kept
    by the checkpointer; ``approve()``, ``recover()`` and ``pending()`` reach a thread another process
    left at an interrupt or in the middle of a run.

    ``checkpointer`` defaults to an ``InMemorySaver``; pass an ``AsyncSqliteSaver`` (or any saver) to
    keep the thread across processes. ``durability`` is LangGraph's (``default_durability``: None
    picks ``"sync"`` for a saver that outlives the process, so a crash loses nothing that finished,
    and ``"exit"`` for an ``InMemorySaver``).
    ``confirm``, ``transform`` and ``dependencies`` mean what they mean for ``AgentSession``.
    ``graph`` runs the session on an ``AgentGraph`` compiled before (``AgentGraph.session()``), for
    applications opening many sessions of one agent; ``checkpointer`` is then the graph's.
    """

    def __init__(
        self,
        agent: Agent,
        session_id: str | None = None,
        bundle: RuntimeBundle | None = None,
        *,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        confirm: ConfirmCallback | None = None,
        transform: ContextTransform | None = None,
        dependencies: Mapping[str, Any] | None = None,
        durability: Durability | None = None,
        graph: AgentGraph | None = None,
    ) -> None:
        session = AgentSession(
            agent, session_id, bundle, confirm=confirm, transform=transform, dependencies=dependencies
        )
        assert bundle is not None  # AgentSession raised the helpful error otherwise
        self.session = session
        self.session_id = session.session_id
        self.agent = agent
        self.bundle = bundle
        self._busy = False
        #: The stream of the turn running, if it runs as one (a plain weak reference: a dropped
        #: stream is closed by the event loop, and the next turn waits for that).
        self._streaming: weakref.ref[AsyncGenerator[AgentEvent, None]] | None = None
        self._last_progress: tuple[Any, ...] | None = None
        if graph is None:
            graph = AgentGraph.shared(agent, bundle, checkpointer)
        elif graph.agent is not agent or graph.bundle is not bundle:
            raise ValueError("this AgentGraph was compiled for another agent or bundle: use graph.session()")
        self.checkpointer = graph.checkpointer
        self.graph = graph.compiled
        threads = graph.threads
        self._thread = threads.attach(ThreadSession(session, interrupt_confirmations=confirm is not None))
        self.durability: Durability = durability or default_durability(graph.checkpointer)
        limit = recursion_limit(bundle.config())
        self._config: dict[str, Any] = {
            "configurable": {"thread_id": self.session_id, EVENTS_KEY: False}, "recursion_limit": limit,
        }
        self._stream_config: dict[str, Any] = {
            "configurable": {"thread_id": self.session_id, EVENTS_KEY: True}, "recursion_limit": limit,
        }

    def __repr__(self) -> str:
        return f"GraphSession({self.session.agent.name!r}, {self.session_id!r})"

    # ------------------------------------------------------------------------------- turns

    async def submit_turn(self, input: str | UserMessage, *, output_type: Any = None) -> TurnResult:
        """Run a turn on the graph to its end (``TurnResult.stop`` and ``output_type`` as for
        ``AgentSession``)."""
        return await self._run({"input": _user_message(input)}, output_type)

    def stream_turn(self, input: str | UserMessage, *, output_type: Any = None) -> AsyncIterator[AgentEvent]:
        """The turn's ``AgentEvent``s (LangGraph's custom stream); the result is ``last_result``.
        Leaving it early ends the turn as on ``AgentSession`` (``turn()`` is the lexical form)."""
        self._check_idle()
        stream = self._stream({"input": _user_message(input)}, output_type)
        self._streaming = weakref.ref(stream)
        return stream

    @asynccontextmanager
    async def turn(
        self, input: str | UserMessage, *, output_type: Any = None
    ) -> AsyncIterator[AsyncIterator[AgentEvent]]:
        """The turn's events for as long as the ``async with`` lasts (``AgentSession.turn``): leaving
        the block early ends the turn there, in this task."""
        self._check_idle()
        async with aclosing(self._stream({"input": _user_message(input)}, output_type)) as stream:
            yield stream

    async def resume(self, tool_results: Iterable[ToolResultBlock], *, output_type: Any = None) -> TurnResult:
        """Continue a turn paused for client tools with their results (one per pending call)."""
        pending = await self.pending()
        paused = pending is not None and pending.get("type") == CLIENT_TOOLS
        waiting = {c["id"] for c in pending["calls"]} if pending is not None and paused else set()
        given = check_client_results(waiting, tool_results, how_to_check="await session.pending()")
        return await self._run(Command(resume=[r.model_dump(mode="json") for r in given]), output_type)

    async def approve(self, answer: bool | Literal["always"]) -> TurnResult:
        """Answer the confirmation the thread waits for (True, False or "always") and go on."""
        pending = await self.pending()
        if pending is None or pending.get("type") != CONFIRMATION:
            raise RuntimeError("approve() needs a turn waiting for a confirmation, and none is")
        return await self._run(Command(resume=answer))

    async def recover(self) -> TurnResult:
        """Finish a run a stopped process left unfinished, from its last checkpoint: the model
        calls and the tool calls that had finished are not made again."""
        return await self._run(None)

    async def pending(self) -> dict[str, Any] | None:
        """What the thread waits for: the value of its interrupt (``type`` is
        ``"agcore.confirmation"`` with ``call``/``tool``, or ``"agcore.client_tools"`` with
        ``calls``); ``"agcore.unfinished"`` (with ``next``, the graph nodes due, and ``advice``) for a
        run that started and did not finish, as after its process was killed: ``recover()`` finishes
        it; or None."""
        snapshot = await self.graph.aget_state(cast(Any, self._config))
        for waiting in snapshot.interrupts:
            value = waiting.value
            if isinstance(value, dict):
                return value
        if snapshot.next and not self.session.running:  # nodes due, and no run of ours is on them
            return {
                "type": UNFINISHED,
                "next": list(snapshot.next),
                "advice": "A run on this thread started and did not finish (was its process stopped?): "
                          "`await session.recover()` finishes it from its last checkpoint, without "
                          "repeating the model and tool calls that had finished.",
            }
        return None

    @property
    def messages(self) -> list[AgentMessage]:
        """The history as of the latest run in this process (``AgentSession.messages``); a thread
        another process ran: ``await history()``."""
        return self.session.messages

    async def history(self) -> list[AgentMessage]:
        """The history as the checkpoint holds it."""
        snapshot = await self.graph.aget_state(cast(Any, self._config))
        return list(snapshot.values.get("messages") or [])

    @property
    def in_process(self) -> AgentSession:
        """The ``AgentSession`` the graph's nodes drive for this thread in this process
        (``AgentSession.in_process``): a plan is drafted there, and sub-agents are its children."""
        return self.session

    @property
    def usage(self) -> CostTracker:
        """Tokens and cost of the conversation so far (``AgentSession.usage``), as of the latest run
        in this process."""
        return self.session.usage

    @property
    def state(self) -> SessionState:
        """The session's state as of the latest run in this process (``AgentSession.state``)."""
        return self.session.state

    @property
    def app_state(self) -> dict[str, Any]:
        """JSON-able data saved with the thread (plan progress: ``execute_plan`` runs here too)."""
        return self.session.app_state

    @property
    def plan_step_index(self) -> int | None:
        """The plan step the next turns belong to (set by plan execution; hooks see it)."""
        return self.session.plan_step_index

    @plan_step_index.setter
    def plan_step_index(self, value: int | None) -> None:
        self.session.plan_step_index = value

    @property
    def store(self) -> None:
        """None: the thread lives in the checkpointer, saved at every step (no ``save()`` needed)."""
        return None

    def hook_context(self) -> HookContext:
        """The ``HookContext`` hooks get now (``AgentSession.hook_context``)."""
        return self.session.hook_context()

    @property
    def running(self) -> bool:
        """Whether a turn is running now (a second one meanwhile is refused); one whose stream was
        dropped is not: it is being closed, and the next turn waits for that."""
        return self._busy and not self._dropped

    @property
    def last_result(self) -> TurnResult | None:
        """The result of the most recent turn this process ran."""
        return self.session.last_result

    def steer(self, message: str | UserMessage) -> None:
        """``AgentSession.steer``: read before each tool call, after each batch and each reply."""
        self.session.steer(message)

    def follow_up(self, message: str | UserMessage) -> None:
        """``AgentSession.follow_up``: taken when the turn would otherwise end."""
        self.session.follow_up(message)

    async def close(self) -> None:
        """End the session for the hooks (``on_session_end``), if it ever started; as with
        ``AgentSession``, a later turn starts it again (``on_session_start``)."""
        config = cast(Any, self._config)
        snapshot = await self.graph.aget_state(config)
        saved = snapshot.values.get("session_state")
        if not saved or not saved.get("started"):
            return
        self.session.state.started = True
        await self.session.close()
        if not snapshot.next:  # a thread waiting at an interrupt keeps its state as it is
            await self.graph.aupdate_state(config, {"session_state": {**saved, "started": False}})

    # ---------------------------------------------------------------------------- driving

    def _check_idle(self, *, closing: bool = True) -> None:
        """Refuse a second turn while one runs (``closing``: not one whose stream was dropped, which
        the event loop is closing; the next turn waits for that, as on ``AgentSession``)."""
        if self._busy and not (closing and self._dropped):
            raise RuntimeError(TURN_RUNNING)

    @property
    def _dropped(self) -> bool:
        stream = self._streaming
        return stream is not None and stream() is None

    async def settle(self) -> None:
        """Let a turn whose stream was dropped (a ``break`` without ``aclose()``) finish closing, as
        ``AgentSession.settle``; returns at once when there is none."""
        await wait_until_closed(lambda: self._busy and self._dropped)

    @asynccontextmanager
    async def _turn(self, output_type: Any) -> AsyncIterator[None]:
        """One run of the graph for a turn: refused while another runs; left early (cancelled, a
        stream closed), the turn is ended at once as the loop ends it: every call answered, in the
        history and in the checkpoint."""
        _check_asyncio()
        await self.settle()
        self._check_idle(closing=False)
        self._busy = True
        self._thread.output = resolve_output(output_type, self.agent)
        self._last_progress = None
        try:
            yield
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._end_left_turn()
            raise
        finally:
            self._thread.output = None
            self._busy = False
            self._streaming = None

    async def _run(self, payload: _Payload, output_type: Any = None) -> TurnResult:
        config = cast(Any, self._config)
        async with self._turn(output_type):
            while True:
                interrupts: Any = None
                try:  # in a task of its own: leaving cancels the graph once (see _own_task)
                    interrupts = await interrupts_of_run(self.graph, payload, config, self.durability)
                except GraphRecursionError as exc:
                    if not await self._went_on(exc):
                        break
                    payload = None  # on from the checkpoint, with a new step budget
                    continue
                answer = await self._answer(interrupts)
                if answer is None:
                    break
                payload = answer
        return self._result()

    async def _stream(self, payload: _Payload, output_type: Any) -> AsyncGenerator[AgentEvent, None]:
        config = cast(Any, self._stream_config)
        async with self._turn(output_type):
            while True:
                interrupts: Any = None
                # Closed with this generator: leaving the stream early cancels the run (once: _own_task).
                run = stream_in_own_task(self.graph.astream(
                    payload, config, stream_mode=["custom", "updates"], durability=self.durability
                ))
                try:
                    async with aclosing(run) as chunks:
                        async for mode, chunk in chunks:
                            if mode == "custom":
                                yield cast(AgentEvent, chunk)
                            elif isinstance(chunk, dict) and "__interrupt__" in chunk:
                                interrupts = chunk["__interrupt__"]
                except GraphRecursionError as exc:
                    if not await self._went_on(exc):
                        yield failed_event(self._result())  # a stream ends in Done or Failed, always
                        break
                    payload = None
                    continue
                answer = await self._answer(interrupts)
                if answer is None:
                    break
                payload = answer

    async def _went_on(self, exc: GraphRecursionError) -> bool:
        """LangGraph's step cap was hit: whether the run goes on from its checkpoint. It does while
        it makes progress between two hits (a batch of sequential calls takes two steps a call; the
        turn's own limits bound the work, as on the loop); a whole run without progress ends the turn.
        (Read only then: a turn that never hits the cap never reads its checkpoint back.)"""
        progress = await self._progress()
        if progress != self._last_progress:
            self._last_progress = progress
            return True
        await self._step_limit(exc)
        return False

    async def _progress(self) -> tuple[Any, ...]:
        """What the thread's checkpoint has done so far, to compare."""
        return await run_progress(self.graph, cast(Any, self._config))

    async def _end_left_turn(self) -> None:
        """The run was left early: end its turn at once, as the loop ends a cancelled one
        (``end_left_turn``)."""
        if self.session.state.turn is not None:
            await end_left_turn(self.graph, cast(Any, self._config), self._thread)

    async def _answer(self, interrupts: Any) -> Command[Any] | None:
        """The resume for a confirmation this session's callback can answer; None otherwise."""
        answer = await confirmation_resume(self.session, interrupts)
        return None if answer is None else Command(resume=answer)

    def _result(self) -> TurnResult:
        result = self.session.last_result
        if result is None:  # nothing ran here (e.g. recover() on a finished thread)
            result = TurnResult()
        return result

    async def _step_limit(self, exc: GraphRecursionError) -> TurnResult:
        return await end_at_step_cap(self.session, self._config["recursion_limit"], exc)


def _check_asyncio() -> None:
    if not anyio.get_cancelled_exc_class().__module__.startswith("asyncio"):  # the running backend
        raise RuntimeError(
            "the LangGraph backend runs on asyncio only (LangGraph does): run this with "
            "anyio.run(main, backend='asyncio'), or use AgentSession, which runs on trio too"
        )


def _user_message(value: str | UserMessage) -> UserMessage:
    return value if isinstance(value, UserMessage) else UserMessage(content=value)
