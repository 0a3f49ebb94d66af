"""The turn as public steps: what every runtime drives, and the only way any of them moves a turn.

A turn is a short sequence of steps with values in and out, each a method of ``TurnSteps``:

1. ``start(input)`` (or ``resume(client_results)``) -> ``CallModel``;
2. ``prepare()`` -> a ``ModelCall`` (the provider and the request), or ``Finish`` when a limit ends
   the turn first;
3. the model call itself, the runtime's own: ``call_model(call)`` streams it in-process; a durable
   runtime makes it an activity. It ends in one ``AssistantMessage``;
4. ``read_reply(call, message)`` -> a ``Reply`` (recorded, with its notes for the model);
5. ``decide(reply)`` -> ``CallModel`` (ask again), ``RunTools(batch)`` or ``Finish``;
6. per call of the batch, ``vet(batch, call)`` -> a ``Vetting``: run it (``run_call``), ask the user
   (``confirmed`` takes the answer), hand it to the client, already answered, or stop vetting;
7. ``end_batch(batch)`` -> ``CallModel``, or ``Finish`` (paused for client tools, a guard);
8. ``finish(stop, error)`` -> the ``TurnResult`` (``fail(exc)`` for an exception from any step).

Each step leaves its events in a buffer the runtime hands on (``take_events``); text deltas come from
``call_model`` as they arrive. Features beyond the bare loop are capabilities that these steps call
(``agcore.agent.capability``), so a runtime drives features it does not know. The in-process loop
(``agcore.agent._loop``) is the worked example; docs/runtimes.md walks through it.

Invariant: no step awaits while the history is half-written. A reply is recorded whole or not at
all, and a batch's results wait in the ``Batch`` until it is recorded, so a runtime that stops between
any two awaits leaves a history ``abandon()`` (or the next ``start``) completes: every tool call
answered exactly once.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

from agcore.agent import _events as ev
from agcore.agent._batch import CANCELLED, UNANSWERED_CLIENT, Batch, answer_open_calls, error_result
from agcore.agent._bundle import bundle_resolve_provider
from agcore.agent._call_ids import unique_call_ids
from agcore.agent._errors import AgentError, AgentLLMError, Cancelled
from agcore.agent._messages import AssistantReply, ContextNote, UserInput, convert_to_llm
from agcore.agent._result import LimitExceeded
from agcore.agent._tool_phase import run_together, run_tools
from agcore.agent._tool_steps import ToolSteps
from agcore.agent._turn import TurnResult, TurnState, turn_cost
from agcore.agent.capability import CallModel, Finish, ModelCall, Next, Reply, RunTools, TextFilter
from agcore.llm.errors import LLMError
from agcore.llm.events import DoneEvent, ErrorEvent, StreamEvent, TextDelta, ThinkingDelta
from agcore.llm.types import (
    AssistantMessage,
    LLMRequest,
    StopReason,
    ToolResultBlock,
    UserMessage,
)

if TYPE_CHECKING:
    from agcore.agent.output._output import StructuredOutput
    from agcore.agent.session_like import SessionLike
    from agcore.llm.provider import LLMProvider

__all__ = [
    "CallModel",
    "Finish",
    "ModelCall",
    "Next",
    "Reply",
    "RunTools",
    "TurnSteps",
    "failed_event",
    "finish_turn",
    "run_tools",
    "run_together",
]

_log = logging.getLogger("agcore.agent")

HOOK_STOPPED = "Not run: a hook stopped the turn before this call ran."


class TurnSteps(ToolSteps):
    """The steps of the turns of one ``session``; see the module docstring for their order."""

    # ------------------------------------------------------------------------------ start

    async def start(self, message: UserMessage | str, output: StructuredOutput | None = None) -> Next:
        """A new turn: calls a stopped turn left open answered, the hooks told, the input recorded."""
        if isinstance(message, str):
            message = UserMessage(content=message)
        session = self.session
        prior = session.state.turn
        if prior is not None and prior.paused:  # a new message instead of the client results
            assert prior.batch is not None
            answer_open_calls(session.messages, UNANSWERED_CLIENT, prior.batch)
            for steer in prior.batch.steering:
                await self.record(UserInput(content=steer.content))
        else:  # a history loaded from elsewhere may end mid-batch
            answer_open_calls(session.messages, CANCELLED, prior.batch if prior is not None else None)
        session.turn_index += 1
        turn = session.state.turn = TurnState(start=len(session.messages))
        turn.output = output
        if not session.state.started:
            session.state.started = True
            if self.hooks.has_impls("on_session_start"):
                await self.hooks.on_session_start(session.hook_context())
        if self.hooks.has_impls("on_turn_start"):
            await self.hooks.on_turn_start(session.hook_context(), message)
        await self.record(UserInput(content=message.content))
        for early in session.state.drain_steering():  # steered between turns: it is input too
            await self.record(UserInput(content=early.content))
        for capability in self.capabilities.start_turn:
            await capability.start_turn(self, message)
        return CallModel()

    async def resume(self, results: list[ToolResultBlock], output: StructuredOutput | None = None) -> Next:
        """Continue a turn paused for client tools with their results (one per pending call)."""
        turn = self.turn
        batch = turn.batch
        assert batch is not None, "resume() continues a turn paused for client tools"
        turn.output = output or turn.output
        by_id = {r.tool_use_id: r for r in results}  # checked by the caller (session.resume)
        wants_after = self.hooks.has_impls("after_tool_call")
        for call in batch.client_calls:
            result = by_id.get(call.id) or error_result(
                call.id, f"The client returned no result for this call to '{call.name}'."
            )
            if wants_after:
                result = await self.hooks.after_tool_call(self.session.hook_context(), call, result, "client")
            batch.answer(call, result, "error" if result.is_error else "ok")
        batch.client_calls = []  # answered: the turn is no longer paused
        await self.record_batch(batch)
        if batch.steering:
            await self.steer(batch.steering, [])
        return CallModel()

    # ------------------------------------------------------------------------ model call

    async def prepare(self) -> ModelCall | Finish:
        """The next model call: limits, the provider, the request with its capabilities and hooks."""
        for capability in self.capabilities.before_model_call:
            finish = capability.before_model_call(self)
            if finish is not None:
                return finish
        session, turn = self.session, self.turn
        turn.model_calls += 1
        if self.wants_events:
            self.emit(ev.TurnStarted(turn_index=session.turn_index, iteration=turn.model_calls))
        provider, request = await self._request()
        call = ModelCall(provider, request)
        for capability in self.capabilities.shape_request:
            pending = capability.shape_request(self, call)
            if pending is not None:  # an async shape_request (one that asks the server something)
                await pending
        self._note_model(provider)
        call.offered = frozenset(t.name for t in call.request.tools)
        for capability in self.capabilities.encode_request:
            capability.encode_request(self, call)
        if self.hooks.has_impls("on_llm_request"):
            call.request = await self.hooks.on_llm_request(session.hook_context(), call.request)
            call.offered |= {t.name for t in call.request.tools}  # a hook may offer more
        for capability in self.capabilities.review_request:
            capability.review_request(self, call)
        turn.offered = call.offered
        return call

    async def _request(self) -> tuple[LLMProvider, LLMRequest]:
        session = self.session
        messages = convert_to_llm(session.messages)
        if session.transform is not None:
            transformed = session.transform(messages)
            messages = await transformed if inspect.isawaitable(transformed) else transformed
        request = LLMRequest.build(
            messages,
            system=session.agent.system_prompt,
            tools=session.agent.tool_definitions(session.bundle),
            max_tokens=self.config.max_tokens,
            temperature=self.config.temperature,
        )
        return await bundle_resolve_provider(session.bundle, session, request), request

    def _note_model(self, provider: LLMProvider) -> None:
        last = self.session.state.last_model
        current = (provider.provider_name, provider.model_id)
        if last is not None and last != current:
            self.emit(ev.ProviderSwitched(
                from_provider=last[0], from_model=last[1], to_provider=current[0], to_model=current[1]
            ))
        self.session.state.last_model = current

    async def call_model(
        self, call: ModelCall, *, reads_deltas: bool = True
    ) -> AsyncGenerator[ev.AgentEvent | AssistantMessage, None]:
        """Make ``call`` in-process: its text deltas as events, then, last, the reply. Streamed when
        someone reads the deltas (or ``streaming="always"``), else one ``complete()`` call."""
        streaming = self.config.streaming
        streamed = streaming == "always" or (reads_deltas and streaming == "auto")
        source = call.provider.stream(call.request) if streamed else _complete_as_events(call)
        # Nobody sees a delta (``submit_turn``: no deltas read, no events): none is made or handed up
        # through the runtime's generators, ~2 µs a streamed chunk (36 in the bench's turn).
        quiet = not (reads_deltas or self.wants_events)
        shown = call.text_filter
        message: AssistantMessage | None = None
        async with _closing(source) as stream:
            async for chunk in stream:
                if isinstance(chunk, DoneEvent):
                    message = chunk.message
                elif isinstance(chunk, ErrorEvent):
                    raise AgentLLMError(chunk.to_exception())
                elif not quiet and (event := _delta_event(chunk, shown)) is not None:
                    yield event
        if message is None:
            broken = f"{call.provider!r} ended its stream without a reply; this is a provider bug"
            raise AgentLLMError(LLMError(broken))
        if not quiet and shown is not None and (rest := shown.flush()):
            yield ev.TextDelta(text=rest)
        yield message

    async def read_reply(self, call: ModelCall, message: AssistantMessage) -> Reply:
        """Record the model's reply (as the capabilities read it) with its cost and notes."""
        session, turn = self.session, self.turn
        reply = Reply(message)
        for capability in self.capabilities.read_reply:
            await capability.read_reply(self, call, reply)
        message = reply.message = unique_call_ids(reply.message, session.messages)
        reply.calls = list(message.tool_calls)
        session.usage.add(message)  # before recording: a saved reply is saved with its usage
        await self.record(AssistantReply(message=message))
        for note in reply.notes:  # the model reads them with the results
            await self.record(ContextNote(text=note))
        turn.usage = turn.usage + message.usage
        turn.text = message.text
        if self.hooks.has_impls("on_llm_response"):
            await self.hooks.on_llm_response(session.hook_context(), message)
        if self.wants_events:
            self.emit(ev.TurnEnded(
                turn_index=session.turn_index, iteration=turn.model_calls,
                stop_reason=message.stop_reason.value if message.stop_reason else None,
                model=message.model, provider=message.provider, usage=message.usage,
                tool_calls=len(message.tool_calls),
            ))
        return reply

    async def decide(self, reply: Reply) -> Next:
        """What follows a recorded reply: its calls run, the model is asked again, or the turn ends."""
        session = self.session
        if self.hooks.has_impls("on_turn_end") and not await self.hooks.on_turn_end(
            session.hook_context(), reply.message
        ):
            if reply.calls:
                await self.decline(reply.calls, HOOK_STOPPED)
            return Finish("stopped_by_hook")
        for capability in self.capabilities.after_reply:
            after = await capability.after_reply(self, reply)
            if after is not None:
                return self._asked_again(after, capability)
        if not reply.calls:
            return await self._answered(reply)
        for capability in self.capabilities.before_tools:
            finish = await capability.before_tools(self, reply.calls)
            if finish is not None:
                return finish
        turn = self.turn
        turn.tool_turns += 1
        if self.wants_events:
            registry = session.bundle.tool_registry()
            for call in reply.calls:
                self.emit(ev.ToolCallRequested(call=call, mode=registry.classify(call.name)))
        batch = turn.batch = Batch(reply.calls)
        for capability in self.capabilities.batch_started:
            capability.batch_started(self, batch)
        return RunTools(batch)

    async def _answered(self, reply: Reply) -> Next:
        """A reply without calls to run: asked again, the user's new input read, or the answer."""
        session = self.session
        if reply.ask_again:
            self.emit(ev.AskedAgain(why=reply.why))
            return CallModel()
        if reply.error is not None:
            return Finish("error", reply.error)
        if reply.message.stop_reason is StopReason.PAUSE:
            # Anthropic paused a long server-tool turn (pause_turn): sending the history back as it
            # is lets the model go on; max_turns bounds how often.
            return CallModel()
        steering = session.state.drain_steering()
        if steering:  # the user spoke during the model call: answer that first
            await self.steer(steering, [])
            return CallModel()
        follow_ups = session.state.drain_follow_ups()
        if follow_ups:
            for follow in follow_ups:
                await self.record(UserInput(content=follow.content))
            return CallModel()
        for capability in self.capabilities.before_finish:
            verdict = await capability.before_finish(self, reply)
            if verdict is not None:
                return self._asked_again(verdict, capability)
        return Finish("done")

    def _asked_again(self, after: Next, capability: object) -> Next:
        """``after`` (a capability's verdict on a reply); when it asks the model again, an
        ``AskedAgain`` event says so, so that a re-ask is never invisible."""
        if isinstance(after, CallModel):
            self.emit(ev.AskedAgain(why=after.why, by=type(capability).__name__))
        return after

    # ----------------------------------------------------------------------------- ending

    async def finish(self, stop: ev.TurnStop, error: AgentError | None = None) -> TurnResult:
        """End the turn: its ``TurnResult``, ``on_turn_result``, and the ``Done``/``Failed`` event."""
        result = finish_turn(self.session, stop, error)
        await self.report(result)
        if self.wants_events:
            done = error is None
            self.emit(ev.Done(text=result.text, turns=result.turns, usage=result.usage, stop=stop) if done
                      else failed_event(result))
        return result

    async def fail(self, exc: Exception) -> TurnResult:
        """End the turn on an exception from any step: open calls answered, ``on_error``, saved."""
        session = self.session
        error = AgentError.wrap(exc)
        turn = session.state.turn
        answer_open_calls(
            session.messages, f"Not run: the turn failed before this call finished ({error}).",
            turn.batch if turn is not None else None,
        )
        _log.debug("turn failed in session %s", session.session_id, exc_info=exc)
        if self.hooks.has_impls("on_error"):
            await self.hooks.on_error(session.hook_context(), error)
        result = finish_turn(session, "error", error)
        if session.store is not None:
            await _save_repair(session)
        await self.report(result)
        self.emit(failed_event(result))
        return result

    def abandon(self) -> TurnResult:
        """End the turn at once, without awaiting (cancelled, or its runtime left it): calls in
        flight answered "cancelled", the session idle. ``report`` it afterwards, shielded."""
        turn = self.session.state.turn
        answer_open_calls(self.session.messages, CANCELLED, turn.batch if turn is not None else None)
        return finish_turn(self.session, "cancelled", Cancelled())

    async def report(self, result: TurnResult, *, shielded: bool = False) -> None:
        """``on_turn_result`` (``shielded``: for a cancelled turn, whose observers must still run)."""
        if not self.hooks.has_impls("on_turn_result"):
            return
        if not shielded:
            await self.hooks.on_turn_result(self.session.hook_context(), result)
            return
        try:
            with anyio.CancelScope(shield=True):
                await self.hooks.on_turn_result(self.session.hook_context(), result)
        except Exception:  # e.g. a stream closed by the garbage collector, outside any event loop
            _log.debug("on_turn_result could not run for a cancelled turn", exc_info=True)


def finish_turn(session: SessionLike, stop: ev.TurnStop, error: AgentError | None = None) -> TurnResult:
    """The ``TurnResult`` of the session's turn ending with ``stop``; the session keeps the turn only
    while it waits for client tools."""
    turn = session.state.turn
    if turn is None:
        result = TurnResult(stop=stop, error=error)
    else:
        result = TurnResult(
            text=turn.text,
            stop=stop,
            pending_tool_calls=session.pending_client_calls,
            turns=turn.model_calls,
            usage=turn.usage,
            cost_usd=turn_cost(session.messages[turn.start :], session.usage.registry),
            messages=session.messages[turn.start :],
            error=error,
            output=turn.output_value if turn.output_ready and error is None else None,
            capabilities=dict(turn.capabilities),
        )
    if stop != "client_tools":
        session.state.turn = None
    if isinstance(error, LimitExceeded):
        error.partial = result
    session.last_result = result
    return result


def failed_event(result: TurnResult) -> ev.Failed:
    """The ``Failed`` event of a turn that ended with an error."""
    error = result.error
    return ev.Failed(
        error=str(error) if error is not None else result.stop,
        error_type=type(error).__name__ if error is not None else "",
        recoverable=error.is_recoverable() if error is not None else False,
        stop=result.stop,
    )


async def _save_repair(session: SessionLike) -> None:
    # The turn already failed: a store that fails too is logged, not raised over the turn's error.
    # Whatever is not saved here is saved with the next message, or repaired again on load.
    try:
        await session.save()
    except Exception as exc:
        _log.warning("session %s: could not save after a failed turn: %s", session.session_id, exc)


async def _complete_as_events(call: ModelCall) -> AsyncGenerator[StreamEvent, None]:
    """One non-streaming call, seen as the events the steps read: the text in one delta, then the
    reply (or the error). ``submit_turn`` takes this path, as nobody reads per-token deltas there."""
    try:
        response = await call.provider.complete(call.request)
    except LLMError as error:
        yield ErrorEvent.from_exception(error)
        return
    if response.message.text:
        yield TextDelta(index=0, text=response.message.text)
    yield DoneEvent(message=response.message, request_id=response.request_id)


def _delta_event(chunk: StreamEvent, shown: TextFilter | None) -> ev.AgentEvent | None:
    """The event a text or thinking delta shows (text through ``shown``, which may hold it back);
    None for any other chunk, or text held back."""
    if isinstance(chunk, TextDelta):
        text = chunk.text if shown is None else shown.feed(chunk.text)
        return ev.TextDelta(text=text) if text else None
    if isinstance(chunk, ThinkingDelta):
        return ev.ThinkingDelta(thinking=chunk.thinking)
    return None


@asynccontextmanager
async def _closing(stream: AsyncIterator[StreamEvent]) -> AsyncIterator[AsyncIterator[StreamEvent]]:
    """``stream`` closed on the way out, whatever iterator the provider returned (one with an
    ``aclose``): a context, not a generator around it, so no chunk pays for one more hop."""
    try:
        yield stream
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
