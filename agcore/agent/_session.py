"""``AgentSession``: one conversation with an agent, and the entry points to the loop.

``submit_turn()`` and ``stream_turn()`` drive the same loop (``_loop.run_loop``, an async generator of
``AgentEvent``s): the first runs it to the end (without building events nobody reads) and returns the
``TurnResult``; the second hands the events to the caller, and the result is then
``session.last_result``. Leaving that stream early (``aclose()``, ``contextlib.aclosing``, or a plain
``break`` that drops it) cancels the turn. The session holds the conversation and its ``state``; the
loop drives a turn through the public steps (``agcore.agent.steps``).

How a turn ends (``TurnResult.stop``), with its ``error`` and the stream's last event:

* ``done``: the model answered without tool calls and no follow-up was queued (no error; ``Done``);
* ``client_tools``: client tools were called; run them, then ``resume(results)`` (``Done``);
* ``stopped_by_hook``: ``on_turn_end`` returned False (``Done``);
* ``limit``: ``max_turns``, ``max_tool_turns``, the token or USD budget, ``session_ttl``, or the
  repetition limit (``LimitExceeded``, whose ``partial`` is this result; ``Failed``);
* ``error``: the model call failed, a gatekeeper hook failed (``HookBlocked``), or a callback raised
  (an ``AgentError``; ``Failed``);
* ``cancelled``: the caller cancelled the turn; the cancellation itself propagates, as anyio requires,
  and ``session.last_result`` says ``cancelled`` (``Cancelled``; no last event).

Limits and errors are returned, never raised, so one ``TurnResult`` describes every ending; raise
``result.error`` yourself where an exception suits better. Whatever the ending, the history stays valid:
every tool call in it has exactly one result (made-up "cancelled"/"skipped" error results where needed),
and the session can take the next turn.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import aclosing, asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from agcore._clock import new_id, now
from agcore.agent._batch import check_client_results
from agcore.agent._cost import CostTracker
from agcore.agent._events import AgentEvent
from agcore.agent._messages import AgentMessage, ToolLog, convert_to_llm
from agcore.agent._session_context import session_tool_context
from agcore.agent._turn import TurnResult
from agcore.agent.output._output import StructuredOutput, resolve_output
from agcore.agent.session_like import ConfirmCallback, ContextTransform, checked_confirm
from agcore.agent.session_state import SessionState
from agcore.llm.types import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from agcore.tools import ToolProgress

if TYPE_CHECKING:
    from agcore.agent._agent_protocol import Agent
    from agcore.agent._bundle import RuntimeBundle
    from agcore.agent._loop import TurnRun
    from agcore.agent._persistence import SessionPersistence
    from agcore.hooks import HookContext
    from agcore.memory import SessionStore

__all__ = ["AgentSession", "ConfirmCallback", "ContextTransform", "TurnResult"]

#: How many scheduling steps the next turn waits for a dropped stream's turn to close (the first 100
#: at once, then 10 ms apart: about 4 s in all, far beyond the few steps it takes).
_CLOSING_STEPS = 500

#: What a second turn meanwhile is refused with, on every session class.
TURN_RUNNING = (
    "a turn is already running in this session: wait for it, add input to it with "
    "session.steer() or session.follow_up(), or, if you left its stream_turn() early and "
    "still hold the stream, close it with `await stream.aclose()`"
)


async def wait_until_closed(closing: Callable[[], bool]) -> None:
    """Wait while ``closing()`` says a turn whose stream was dropped is still being closed (the event
    loop's async-generator finalizer does it within a few scheduling steps); bounded."""
    for step in range(_CLOSING_STEPS):
        if not closing():
            return
        await anyio.sleep(0 if step < 100 else 0.01)


def _user_message(value: str | UserMessage) -> UserMessage:
    return value if isinstance(value, UserMessage) else UserMessage(content=value)


class AgentSession:
    """A conversation between a user and ``agent``, run with the parts in ``bundle``.

    ``confirm`` is asked before tools that need confirmation; ``confirm=None`` (the default) means
    such tools are NOT run: the model gets an error result saying the user could not approve it.
    ``transform`` rewrites the model-bound history before each call. ``dependencies`` are handed to
    tools through ``ToolContext`` (the session adds ``session``, ``memory_store`` and ``retriever``).
    ``messages`` seeds the history (a resumed conversation). Progress a tool reports
    (``ctx.report_progress``) is recorded as ``ToolLog`` messages, which the model never sees.

    ``created_at`` (epoch seconds, set at construction; restore it for a resumed conversation) is what
    ``AgentConfig.session_ttl`` is measured from: past it, turns end with ``LimitExceeded``.

    With a ``store`` (a ``SessionStore``) the session is saved as it runs: each message as it is
    recorded, with the session's state; ``AgentSession.load`` continues it in another process (the
    guide's Memory and sessions page says what is saved when). ``app_state`` is JSON-able data saved
    with it (plan progress, application data): saved with the next message, or at once by
    ``await session.save()``. ``save_each_message=False`` writes only on ``save()`` (for a runtime
    that saves at points of its own: a Temporal session workflow writes its in-memory copy only
    when it continues as new, not at each of a turn's messages).
    """

    def __init__(
        self,
        agent: Agent,
        session_id: str | None = None,
        bundle: RuntimeBundle | None = None,
        *,
        confirm: ConfirmCallback | None = None,
        transform: ContextTransform | None = None,
        messages: Iterable[AgentMessage] = (),
        dependencies: Mapping[str, Any] | None = None,
        store: SessionStore | None = None,
        save_each_message: bool = True,
    ) -> None:
        if bundle is None:
            raise TypeError(
                "AgentSession needs a RuntimeBundle: build one with AgentBuilder().provider(...).build()"
            )
        self.agent = agent
        self.session_id = session_id or new_id()
        self.bundle = bundle
        self.confirm = checked_confirm(confirm)
        self.transform = transform
        self.messages: list[AgentMessage] = list(messages)
        #: Everything the session holds besides its messages (``SessionState``): saved and loaded
        #: as one object by every runtime.
        self.state = SessionState(created_at=now())
        self.usage = CostTracker()
        #: A sub-agent's session (``agent_tool``) knows the session that delegated to it, the parent's
        #: tool call that runs it, and its depth (0: a top-level session); hooks see them.
        self.parent: AgentSession | None = None
        self.parent_call_id: str | None = None
        self.depth = 0
        #: The result of the most recent turn (what ``stream_turn`` callers read after the stream).
        self.last_result: TurnResult | None = None
        deps: dict[str, Any] = {}
        for name in ("memory_store", "retriever"):
            part = getattr(bundle, name)()
            if part is not None:
                deps[name] = part
        deps.update(dependencies or {})
        #: What the session's tools get (``ToolContext``: its id, dependencies with the session under
        #: ``"session"``, progress reporting), holding the session weakly (see ``_session_context``).
        self.tool_context = session_tool_context(self, deps, self._record_progress)
        #: The running turn's token (None: idle); the loop sets and clears it (see ``_loop``).
        self._running: TurnRun | None = None
        self._persistence: SessionPersistence | None = None
        #: False: messages are written to the store only by ``save()`` (see the class docstring).
        self.save_each_message = save_each_message
        if store is not None:
            from agcore.agent._persistence import SessionPersistence

            self._persistence = SessionPersistence(store)

    # ------------------------------------------------------- the state, by its old names

    @property
    def turn_index(self) -> int:
        """Turns started so far (``state.turn_index``)."""
        return self.state.turn_index

    @turn_index.setter
    def turn_index(self, value: int) -> None:
        self.state.turn_index = value

    @property
    def created_at(self) -> float:
        """When the conversation began, epoch seconds (``state.created_at``); restore it for a
        resumed conversation: ``AgentConfig.session_ttl`` counts from it."""
        return self.state.created_at

    @created_at.setter
    def created_at(self, value: float) -> None:
        self.state.created_at = value

    @property
    def plan_step_index(self) -> int | None:
        """The plan step the running turn belongs to (``state.plan_step_index``)."""
        return self.state.plan_step_index

    @plan_step_index.setter
    def plan_step_index(self, value: int | None) -> None:
        self.state.plan_step_index = value

    @property
    def app_state(self) -> dict[str, Any]:
        """JSON-able data saved with the session (``state.app_state``)."""
        return self.state.app_state

    @app_state.setter
    def app_state(self, value: dict[str, Any]) -> None:
        self.state.app_state = value

    @property
    def switched_to_text_mode(self) -> bool:
        """Whether the model wrote its calls as text, so the session uses text-mode tool calls
        (``AgentConfig.text_mode_tools="auto"``; ``state.text_mode``)."""
        return self.state.text_mode

    @switched_to_text_mode.setter
    def switched_to_text_mode(self, value: bool) -> None:
        self.state.text_mode = value

    def __repr__(self) -> str:
        return f"AgentSession({self.agent.name!r}, {self.session_id!r}, {len(self.messages)} messages)"

    # ------------------------------------------------------------------------- persistence

    @classmethod
    async def load(
        cls, store: SessionStore, session_id: str, agent: Agent, bundle: RuntimeBundle, **kwargs: Any
    ) -> AgentSession:
        """The session ``session_id`` from ``store``, ready for its next turn (or, if it was paused
        for client tools, for ``resume``); it keeps saving to ``store``. ``kwargs`` are the
        constructor's (``confirm``, ``transform``, ``dependencies``). Calls a stopped process left
        without results get "interrupted" error results, saved at once. ``LookupError`` if the store
        has no such session; ``MemoryStoreError`` if it cannot be read."""
        from agcore.agent._persistence import load_session

        return await load_session(cls, store, session_id, agent, bundle, **kwargs)

    @property
    def in_process(self) -> AgentSession:
        """The ``AgentSession`` this conversation's turns run on in this process: this one (a
        ``GraphSession``'s is the one its nodes drive). Work that is not a turn of the conversation,
        such as drafting a plan, runs there, on any backend."""
        return self

    @property
    def store(self) -> SessionStore | None:
        """Where this session is saved (None: nowhere)."""
        return self._persistence.store if self._persistence is not None else None

    async def save(self, *, replace: bool = False) -> None:
        """Write what changed since the last save (messages, queued input, ``app_state``, usage).
        ``replace=True`` writes the whole history anew (after editing ``messages`` in place; a
        shorter or rewritten history is noticed without it)."""
        if self._persistence is None:
            raise RuntimeError(
                "this session has no store to save to: create it with AgentSession(..., store=store) "
                "or load it with AgentSession.load(store, ...)"
            )
        await self._persistence.flush(self, replace=replace)

    # ------------------------------------------------------------------------------- turns

    async def submit_turn(self, input: str | UserMessage, *, output_type: Any = None) -> TurnResult:
        """Run a turn to its end and return how it ended. ``result.stop`` is ``done`` (answered),
        ``client_tools`` (run them, then ``resume``), ``stopped_by_hook`` (``on_turn_end`` said False),
        ``limit`` (a turn, token, USD, TTL or repetition limit: ``LimitExceeded``), ``error`` (the model
        call, a gatekeeper hook or a callback failed) or ``cancelled``. Limits and errors are returned
        in ``result.error``, never raised; the history stays valid for the next turn.

        ``output_type`` (default: the agent's ``output_type``, if it has one) makes the turn end on an
        answer validated into that type, in ``result.output``: a pydantic model, a dataclass,
        ``list[...]``, any type a pydantic ``TypeAdapter`` takes, or a ``StructuredOutput`` saying how
        to ask for it. An answer that does not validate goes back to the model with the errors, at
        most ``AgentConfig.output_retries`` times; then the turn ends with ``OutputValidationError``."""
        from agcore.agent._loop import run_turn

        self._check_idle()
        output = resolve_output(output_type, self.agent)
        return await run_turn(self, new_input=_user_message(input), output=output)

    def stream_turn(self, input: str | UserMessage, *, output_type: Any = None) -> AsyncIterator[AgentEvent]:
        """Run a turn, yielding its events; ``session.last_result`` holds the result afterwards (its
        ``output`` the typed answer, with an ``output_type`` as for ``submit_turn``).

        Leaving early cancels the turn and repairs the history: ``aclose()`` the stream (or iterate it
        inside ``contextlib.aclosing``): the turn has ended when ``aclose()`` returns. A plain ``break``
        out of ``async for event in session.stream_turn(...)`` drops the stream: the event loop closes
        it a few scheduling steps later, the same way, and the session's next turn waits for that, so
        it can be started straight away.
        """
        from agcore.agent._loop import stream_turn

        self._check_idle()
        output = resolve_output(output_type, self.agent)
        return stream_turn(self, new_input=_user_message(input), output=output)

    @asynccontextmanager
    async def turn(
        self, input: str | UserMessage, *, output_type: Any = None
    ) -> AsyncIterator[AsyncIterator[AgentEvent]]:
        """The turn's events for as long as the ``async with`` lasts: the lexical form of
        ``stream_turn``. Leaving the block before the turn ended (``break``, an exception,
        cancellation) ends the turn right there, in this task: every call answered, ``last_result``
        says ``cancelled``, observers told, before the next line runs::

            async with session.turn("Fix the tests") as events:
                async for event in events:
                    if user_pressed_stop():
                        break
        """
        from agcore.agent._loop import stream_turn

        self._check_idle()
        output = resolve_output(output_type, self.agent)
        async with aclosing(stream_turn(self, new_input=_user_message(input), output=output)) as stream:
            yield stream

    async def resume(self, tool_results: Iterable[ToolResultBlock], *, output_type: Any = None) -> TurnResult:
        """Continue a turn paused for client tools with their results (one per pending call). The
        turn keeps the output type it started with; a turn loaded from a store (whose Python type is
        not saved) takes ``output_type``, else the agent's."""
        from agcore.agent._loop import run_turn

        results = self._check_resume(tool_results)
        return await run_turn(self, client_results=results, output=self._resumed_output(output_type))

    def stream_resume(
        self, tool_results: Iterable[ToolResultBlock], *, output_type: Any = None
    ) -> AsyncIterator[AgentEvent]:
        """``resume()``, yielding the events. A pending call without a result gets an error result;
        a result for no pending call raises ``ValueError``."""
        from agcore.agent._loop import stream_turn

        results = self._check_resume(tool_results)
        return stream_turn(self, client_results=results, output=self._resumed_output(output_type))

    def _resumed_output(self, output_type: Any) -> StructuredOutput | None:
        turn = self.state.turn
        if output_type is None and turn is not None and turn.output is not None:
            return turn.output
        return resolve_output(output_type, self.agent)

    def _check_resume(self, tool_results: Iterable[ToolResultBlock]) -> list[ToolResultBlock]:
        self._check_idle()
        waiting = {c.id for c in self.pending_client_calls}
        return check_client_results(waiting, tool_results, how_to_check="session.pending_client_calls")

    def _check_idle(self, *, closing: bool = True) -> None:
        """Refuse a second turn while one runs. ``closing``: a turn whose stream was dropped does not
        count, as the event loop is closing it and the next turn waits for that (``_lifetime``)."""
        run = self._running
        if run is not None and not (closing and run.dropped):
            raise RuntimeError(TURN_RUNNING)

    async def settle(self) -> None:
        """Let a turn whose stream was dropped mid-turn (a ``break`` without ``aclose()``) finish
        closing: the event loop's async-generator finalizer closes it within a few scheduling steps,
        and then ``last_result`` says how it ended. Returns at once when there is none; the next turn
        waits for it by itself."""
        await wait_until_closed(lambda: self._running is not None and self._running.dropped)

    # ------------------------------------------------------------------------------ queues

    def steer(self, message: str | UserMessage) -> None:
        """New user input for the running turn. It is checked before each tool call (that call and
        the later ones of the batch are skipped, their results say so), after each tool batch, and
        when the model answers without tools; the model reads it in its next call. Safe to call from
        another task. Input steered while no turn runs is added after the next turn's input."""
        self.state.steering.append(_user_message(message))

    def follow_up(self, message: str | UserMessage) -> None:
        """User input taken when the loop would otherwise end: the turn continues with it. Safe to
        call from another task; queued while no turn runs, it waits for the end of the next turn."""
        self.state.follow_ups.append(_user_message(message))

    # ------------------------------------------------------------------------------- views

    @property
    def pending_client_calls(self) -> list[ToolUseBlock]:
        """The client calls a paused turn waits for (empty when none is paused)."""
        turn = self.state.turn
        if turn is None or turn.batch is None:
            return []
        return list(turn.batch.client_calls)

    @property
    def running(self) -> bool:
        """Whether a turn is running now (a second ``submit_turn`` meanwhile is refused); a turn whose
        stream was dropped is not: it is being closed, and the next turn waits for that."""
        run = self._running
        return run is not None and not run.dropped

    def history_for_llm(self) -> list[UserMessage | AssistantMessage]:
        """The history as the model sees it (before any context transform)."""
        return convert_to_llm(self.messages)

    async def close(self) -> None:
        """End the session for the hooks (``on_session_end``), if it ever started."""
        if self.state.started:
            hooks = self.bundle.hook_executor()
            if hooks.has_impls("on_session_end"):
                await hooks.on_session_end(self.hook_context())
            self.state.started = False

    async def record(self, message: AgentMessage, *, save: bool = True) -> None:
        """The one way a message enters the history: appended, saved (with a store; ``save=False``
        leaves it for the next save), then shown to the ``on_message`` hooks."""
        self.messages.append(message)
        if save and self.save_each_message and self._persistence is not None:
            await self._persistence.flush(self)
        hooks = self.bundle.hook_executor()
        if hooks.has_impls("on_message"):
            await hooks.on_message(self.hook_context(), message)

    async def _record_progress(self, update: ToolProgress) -> None:
        # Progress lines are for people watching, not for resuming (the model never sees them): they
        # are saved with the batch's results, or every PROGRESS_SAVE_INTERVAL seconds while a tool
        # talks, not one store transaction per line.
        persistence = self._persistence
        await self.record(
            ToolLog(
                text=update.message, tool_use_id=update.tool_call_id or None,
                tool_name=update.tool_name or None, fraction=update.fraction,
            ),
            save=persistence is not None and persistence.progress_due(),
        )

    def hook_context(self) -> HookContext:
        """The ``HookContext`` hooks get now: ids, turn and plan step, usage and cost so far, the latest
        model."""
        from agcore.hooks import HookContext

        usage = self.usage
        last = self.state.last_model
        return HookContext(
            session_id=self.session_id,
            agent_name=self.agent.name,
            turn_index=self.turn_index,
            plan_step_index=self.plan_step_index,
            usage=usage.usage,
            cost_usd=usage.cost_usd,
            model=last[1] if last is not None else None,
            provider=last[0] if last is not None else None,
            **self._lineage(),
        )

    def _lineage(self) -> dict[str, Any]:
        parent = self.parent
        if parent is None:
            return {}
        root = parent
        while root.parent is not None:
            root = root.parent
        return {
            "parent_session_id": parent.session_id, "parent_call_id": self.parent_call_id,
            "depth": self.depth, "root_session_id": root.session_id,
        }
