"""One node's view of a thread: an ``AgentSession`` in step with the graph's state, and its update.

The nodes drive the kernel's public turn steps (``agcore.agent.steps.TurnSteps``), which work on an
``AgentSession``: the session holds what the hooks see (``hook_context()``), the tools' context,
the steering and follow-up queues, the confirm callback and the last ``TurnResult``. Each thread has
one such session in the process (``ThreadSession``); before a node runs, ``Step`` brings it in step
with the state (cheaply when this process wrote the state: the history is only copied when another
process or an older checkpoint wrote it), and after the node ``Step.update`` turns what the steps
changed into the node's state update (the messages it appended and the turn's counters).

A turn ends inside a node (``Step.end``/``Step.fail``) through the same steps as the loop ends it
(``TurnSteps.finish``/``fail``: the ``TurnResult``, ``on_turn_result``, the ``Done``/``Failed`` event).
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langgraph.config import get_stream_writer
from langgraph.graph import END
from langgraph.types import Command

from agcore._clock import new_id
from agcore.agent import AgentError, AgentEvent, AgentSession, AssistantReply, Batch, CostTracker
from agcore.agent.session_state import SessionState
from agcore.agent.steps import TurnSteps

if TYPE_CHECKING:
    from agcore.agent import Agent, AgentConfig, RuntimeBundle, StructuredOutput, TurnStop
    from agcore.hooks import HookExecutor
    from agcore.integrations.langgraph._state import AgentState, ToolOutcome

__all__ = [
    "EVENTS_KEY", "Step", "ThreadSession", "ThreadSessions", "session_key", "sync_session", "take_outcomes",
]

#: ``config["configurable"]`` key: whether the nodes build ``AgentEvent``s for the custom stream
#: (default True). ``GraphSession.submit_turn`` sets it False, as ``AgentSession.submit_turn`` builds
#: none; set it False too when invoking the graph without reading ``stream_mode="custom"``: with
#: ``AgentConfig.streaming="auto"`` the model calls are then ``complete()`` calls, not streams.
EVENTS_KEY = "agcore_events"

@dataclass(slots=True, weakref_slot=True)
class ThreadSession:
    """The in-process side of one thread: its session, and how its runs are driven."""

    session: AgentSession
    #: Confirmations become ``interrupt()``s (False: the session has no way to ask, as with
    #: ``AgentSession(confirm=None)``: the tool is not run and the model is told why).
    interrupt_confirmations: bool = True
    #: The output type of the turn this process runs (``GraphSession.submit_turn(output_type=)``);
    #: None: the agent's. Code, not state: a thread recovered elsewhere takes the agent's.
    output: StructuredOutput | None = None
    #: The ``session_state`` this process last wrote to the thread's state: while the checkpoint
    #: still holds it, the in-process session is the newer copy (input queued, ``app_state`` and the
    #: plan step set between runs) and is not reloaded.
    written: dict[str, Any] | None = None


class ThreadSessions:
    """The sessions of the threads this process runs, by thread id: attached by ``GraphSession``
    (kept while it lives), or made on first use for a graph run directly (the most recent
    ``capacity`` are kept; a dropped one is rebuilt from the checkpoint, losing only input queued on
    it)."""

    def __init__(self, agent: Agent, bundle: RuntimeBundle, capacity: int = 256) -> None:
        self.agent = agent
        self.bundle = bundle
        self._capacity = capacity
        self._attached: weakref.WeakValueDictionary[str, ThreadSession] = weakref.WeakValueDictionary()
        self._threads: OrderedDict[str, ThreadSession] = OrderedDict()

    def attach(self, thread: ThreadSession) -> ThreadSession:
        self._attached[thread.session.session_id] = thread
        self._threads.pop(thread.session.session_id, None)
        return thread

    def get(self, thread_id: str) -> ThreadSession:
        attached = self._attached.get(thread_id)
        if attached is not None:
            return attached
        thread = self._threads.get(thread_id)
        if thread is None:
            thread = ThreadSession(AgentSession(self.agent, thread_id, self.bundle))
            self._threads[thread_id] = thread
            while len(self._threads) > self._capacity:
                self._threads.popitem(last=False)
        else:
            self._threads.move_to_end(thread_id)
        return thread


class Step:
    """A node's run: the thread's session in step with ``state``; see the module docstring."""

    __slots__ = ("base", "config", "emit", "hooks", "session", "state", "steps", "thread", "writer")

    def __init__(self, threads: ThreadSessions, state: AgentState, config: Any) -> None:
        self.state = state
        thread = self.thread = threads.get(session_key(state, config))
        session = self.session = thread.session
        self.base = sync_session(session, state, thread.written)
        self.emit = bool((config.get("configurable") or {}).get(EVENTS_KEY, True))
        self.steps = TurnSteps(session, events=self.emit)
        self.config: AgentConfig = self.steps.config
        self.hooks: HookExecutor = self.steps.hooks
        self.writer = get_stream_writer() if self.emit else None

    def send(self, event: AgentEvent) -> None:
        """Put an event on LangGraph's custom stream (dropped when events are off, ``emit``)."""
        if self.writer is not None:
            self.writer(event)

    def send_events(self) -> None:
        """Hand on the events the steps made since the last call."""
        for event in self.steps.take_events():
            self.send(event)

    def update(self, **fields: Any) -> dict[str, Any]:
        """The node's state update: the messages it recorded, the session's state, ``fields``; only
        what changed (each channel written is one more value to checkpoint)."""
        session = self.session
        written = self.thread.written = session.state.to_json(running_turn=True)
        values: dict[str, Any] = {"session_id": session.session_id, "session_state": written, **fields}
        state = self.state
        update = {key: value for key, value in values.items() if state.get(key) != value}
        added = session.messages[self.base :]
        if added:
            update["messages"] = added
        return update

    async def end(
        self, stop: TurnStop, error: AgentError | None = None, *, goto: str = END,
        also: dict[str, Any] | None = None,
    ) -> Command[str]:
        """End the turn as the loop does (``TurnSteps.finish``); ``also`` goes into the update too."""
        await self.steps.finish(stop, error)
        self.send_events()
        paused = stop == "client_tools"
        return Command(
            update=self.update(**{
                **(also or {}), "stop": stop, "error": str(error) if error is not None else None,
                **({} if paused else {"phase": None, "outcomes": {}}),
            }),
            goto=goto,
        )

    async def fail(self, exc: Exception) -> Command[str]:
        """End the turn on an error, as the loop does (``TurnSteps.fail``)."""
        result = await self.steps.fail(exc)
        self.send_events()
        return Command(
            update=self.update(input=None, stop="error", error=str(result.error), phase=None, outcomes={}),
            goto=END
        )


def session_key(state: AgentState, config: Any) -> str:
    """Whose session a node runs in: the state's (set by the run's first step), else the thread's
    (``thread_id``); a run without either (no checkpointer, no thread) is a conversation of its own,
    so concurrent runs of one graph never share a session."""
    key = state.get("session_id")
    if key:
        return key
    thread_id = ((config or {}).get("configurable") or {}).get("thread_id")
    return str(thread_id) if thread_id is not None else new_id()


def take_outcomes(batch: Batch, outcomes: Mapping[str, ToolOutcome]) -> None:
    """Put the results the tool tasks reported into ``batch`` (calls it has no result for yet)."""
    for call in batch.calls:
        done = outcomes.get(call.id)
        if done is not None and batch.outcome(call.id) is None:
            batch.answer(call, done["result"], done["status"], duration=done["duration"])


def sync_session(session: AgentSession, state: AgentState, written: dict[str, Any] | None = None) -> int:
    """Bring ``session`` in step with ``state``; the history's length (what a node appends after).
    ``written``: the ``session_state`` this process wrote last; while ``state`` holds it and the
    history, the session is current. Otherwise the state is loaded, keeping the input queued on the
    session in this process (``steer()`` and ``follow_up()`` may have added to it)."""
    history = state.get("messages") or []
    mine = session.messages
    in_step = len(mine) == len(history) and (not history or mine[-1].id == history[-1].id)
    if not in_step:
        session.messages = list(history)
        usage = CostTracker(registry=session.usage.registry)
        for message in history:
            if isinstance(message, AssistantReply):
                usage.add(message.message)
        session.usage = usage
    saved = state.get("session_state")
    if in_step and written is not None and saved == written:
        return len(mine)
    live = session.state
    if saved is None:  # a new thread: what was set before its first turn (app_state, the plan step) stays
        return len(session.messages)
    session.state = SessionState.from_json(saved, len(history))
    session.state.steering, session.state.follow_ups = live.steering, live.follow_ups
    return len(session.messages)
