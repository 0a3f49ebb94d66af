"""THE agent loop, written once: an async generator of ``AgentEvent``s over an ``AgentSession``.

Per iteration: limits -> resolve the provider (a change emits ``ProviderSwitched``) ->
``convert_to_llm`` -> the session's context transform -> the ``LLMRequest`` (text-mode rewrite where
the model has no native tools) -> ``on_llm_request`` -> the streamed model call (retries live in the
LLM layer) -> record the reply and its cost -> ``on_llm_response``, ``on_turn_end`` -> no tool calls:
take a queued follow-up or finish; tool calls: the tool phase (``_tool_phase``), record the results in
the calls' order -> repeat.

Nothing here awaits while the history is half-written: a reply is recorded whole or not at all, and
the tool phase keeps finished results aside until the batch is recorded, so cancellation at any await
leaves a history the ``finally`` below can complete (every call answered exactly once).
"""

from __future__ import annotations

import inspect
import logging
import weakref
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import TYPE_CHECKING

import anyio

from agcore._clock import now
from agcore.agent import _events as ev
from agcore.agent._batch import (
    CANCELLED,
    UNANSWERED_CLIENT,
    Batch,
    CallOutcome,
    answer_open_calls,
    error_result,
)
from agcore.agent._bundle import bundle_resolve_provider
from agcore.agent._call_ids import unique_call_ids
from agcore.agent._cycles import repetition_stopped
from agcore.agent._errors import AgentError, AgentLLMError, Cancelled, LimitExceeded, UnreadableToolCalls
from agcore.agent._messages import AssistantReply, ContextNote, ToolResults, UserInput, convert_to_llm
from agcore.agent._output import (
    StructuredOutput,
    settle_final_call,
    settle_text_answer,
    shape_request,
    unforce_with_thinking,
)
from agcore.agent._subagent_links import (
    collect_subagent_events,
    parent_budget_exceeded,
    take_subagent_events,
)
from agcore.agent._text_stream import CallTextFilter
from agcore.agent._text_tools import (
    MAX_REREADS,
    call_mode,
    read_text_calls,
    switch_to_text_mode,
    text_mode_request,
)
from agcore.agent._tool_phase import ToolPhase
from agcore.agent._turn import TurnResult, TurnState, turn_cost
from agcore.llm.errors import LLMError
from agcore.llm.events import DoneEvent, ErrorEvent, StreamEvent, TextDelta, ThinkingDelta
from agcore.llm.types import (
    AssistantMessage,
    LLMRequest,
    StopReason,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

if TYPE_CHECKING:
    from agcore.agent._config import AgentConfig
    from agcore.agent._session import AgentSession
    from agcore.hooks import HookExecutor
    from agcore.llm.provider import LLMProvider

__all__ = ["run_loop", "run_turn", "stream_turn"]

_log = logging.getLogger("agcore.agent")


class _Stop(Exception):
    """Ends the loop with ``stop`` (and an error for limits); raised from helpers, caught below."""

    def __init__(self, stop: ev.TurnStop, error: AgentError | None = None) -> None:
        super().__init__(stop)
        self.stop = stop
        self.error = error


class _Run:
    """The token of one running turn (``session._running``). A turn whose stream was dropped is
    ended by ``_abandon``, which leaves the result here for the generator's late cleanup."""

    __slots__ = ("reported", "result", "watch")

    def __init__(self) -> None:
        self.result: TurnResult | None = None
        #: Whether ``on_turn_result`` saw the cancelled result (a dropped turn's is reported by the
        #: next turn, before it starts, or by the generator's late cleanup, whichever comes first).
        self.reported = False
        #: For a stream: a weak reference to it whose callback ends the turn if it is dropped.
        self.watch: weakref.ref[AsyncIterator[ev.AgentEvent]] | None = None


async def run_turn(
    session: AgentSession,
    *,
    new_input: UserMessage | None = None,
    client_results: list[ToolResultBlock] | None = None,
    output: StructuredOutput | None = None,
) -> TurnResult:
    """Run the loop to the end without building events (``submit_turn``, ``resume``)."""
    loop = run_loop(session, new_input=new_input, client_results=client_results, reads_deltas=False,
                    output=output)
    async with aclosing(loop) as events:
        async for _ in events:
            pass
    assert session.last_result is not None
    return session.last_result


def stream_turn(
    session: AgentSession,
    *,
    new_input: UserMessage | None = None,
    client_results: list[ToolResultBlock] | None = None,
    output: StructuredOutput | None = None,
) -> AsyncIterator[ev.AgentEvent]:
    """The loop's events (``stream_turn``, ``stream_resume``). A stream dropped mid-turn (``break``
    out of ``async for`` without ``aclosing``) ends its turn the moment it is freed: the history is
    repaired and the session is idle again, before the event loop gets round to closing the
    generator (which then finds nothing left to do)."""
    run = _Run()
    stream = run_loop(session, new_input=new_input, client_results=client_results, run=run, output=output)

    def dropped(_: object) -> None:
        if session._running is run:  # started, and still running: nobody will ever resume it
            _abandon(session, run)

    # Held by the token, which the session holds while the turn runs: the callback fires exactly
    # when it matters (a stream never started, or finished, takes its token with it).
    run.watch = weakref.ref(stream, dropped)
    return stream


def _abandon(session: AgentSession, run: _Run) -> None:
    """End the running turn at once, without awaiting: its stream was dropped mid-turn."""
    turn = session._turn
    answer_open_calls(session.messages, CANCELLED, turn.batch if turn is not None else None)
    run.result = _finish(session, turn, "cancelled", Cancelled())
    session._running = None
    session._dropped = run


async def run_loop(
    session: AgentSession,
    *,
    new_input: UserMessage | None = None,
    client_results: list[ToolResultBlock] | None = None,
    reads_deltas: bool = True,
    run: _Run | None = None,
    output: StructuredOutput | None = None,
) -> AsyncGenerator[ev.AgentEvent, None]:
    """The loop, as its events. ``reads_deltas=False`` (``submit_turn``, whose caller never sees the
    text deltas) makes ``streaming="auto"`` use one ``complete()`` call per model turn instead of a
    stream. Events are always built: measured, skipping them saved 1-3% of a turn's CPU
    (``bench/agent_loop.py``, ``agcore-events``), not worth a second path through the loop."""
    session._check_idle()
    if run is None:
        run = _Run()
    session._running = run
    bundle = session.bundle
    config: AgentConfig = bundle.config()
    hooks: HookExecutor = bundle.hook_executor()
    turn = session._turn
    finished = False
    try:
        dropped, session._dropped = session._dropped, None
        if dropped is not None:  # observers hear how a dropped turn ended before the next one starts
            await _report_dropped(session, hooks, dropped)
        if new_input is not None:
            turn = await _start_turn(session, hooks, new_input)
            turn.output = output
        elif client_results is not None:
            assert turn is not None
            turn.output = output or turn.output
            for event in await _finish_client_batch(session, hooks, turn, client_results):
                yield event
        assert turn is not None
        while True:
            message: AssistantMessage | None = None
            async with aclosing(model_call(session, config, hooks, turn, reads_deltas)) as calling:
                async for item in calling:
                    if isinstance(item, AssistantMessage):
                        message = item
                    else:
                        yield item
            assert message is not None
            calls = message.tool_calls
            wants_end = hooks.has_impls("on_turn_end")
            if wants_end and not await hooks.on_turn_end(session.hook_context(), message):
                if calls:
                    await _record_unrun(session, turn, calls, _HOOK_STOPPED)
                raise _Stop("stopped_by_hook")
            accepted = False  # a typed answer given by the final-answer tool in this reply
            if turn.output is not None and calls:
                settled = await settle_final_call(turn, calls, session._record, config.output_retries)
                if settled is False:
                    continue
                if settled:
                    accepted, calls = True, []
            if not calls:
                if turn.reread:  # only unreadable calls: the model reads what was wrong and retries
                    continue
                if turn.unreadable is not None:
                    raise _Stop("error", turn.unreadable)
                if message.stop_reason is StopReason.PAUSE:
                    # Anthropic paused a long server-tool turn (pause_turn): sending the history back
                    # as it is lets the model go on; max_turns bounds how often.
                    continue
                steering = session._drain(session._steering)
                if steering:  # the user spoke during the model call: answer that first
                    steered = await _steer(session, steering, [])
                    yield steered
                    continue
                follow_ups = session._drain(session._follow_ups)
                if not follow_ups:
                    retries = config.output_retries
                    if (turn.output is not None and not accepted
                            and not await settle_text_answer(turn, message, session._record, retries)):
                        continue  # the model was asked again, with the errors
                    break
                for follow in follow_ups:
                    await session._record(UserInput(content=follow.content))
                continue
            if turn.tool_turns >= config.max_tool_turns:
                await _record_unrun(session, turn, calls, _TOOL_LIMIT)
                raise _Stop("limit", LimitExceeded("max_tool_turns", value=config.max_tool_turns))
            turn.tool_turns += 1
            registry = bundle.tool_registry()
            for call in calls:
                yield ev.ToolCallRequested(call=call, mode=registry.classify(call.name))
            batch = turn.batch = Batch(calls)
            collect_subagent_events(session)
            phase = _phase(session, config, hooks, turn)
            repetition_stop = await phase.run(batch)
            for nested in take_subagent_events(session):  # what sub-agents did, before the results
                yield nested
            if batch.paused:
                for call in calls:
                    done = batch.outcome(call.id)
                    if done is not None:
                        yield _result_event(done)
                yield ev.ClientToolsRequested(calls=list(batch.client_calls))
                if session._persistence is not None:  # the pause must outlive this process
                    await session._persistence.flush(session)
                raise _Stop("client_tools")
            cycle = turn.cycles.observe(batch, config)  # on a first cycle: a nudge in the last result
            for event in await _record_batch(session, turn):
                yield event
            # Input that arrived while the batch ran (after the last check) is read now, not later.
            steering = batch.steering + session._drain(session._steering)
            if steering:
                steered = await _steer(session, steering, batch.skipped)
                yield steered
            if repetition_stop:
                raise _Stop("limit", repetition_stopped(phase.repeated_call, config))
            if cycle is not None and cycle.stop:
                _log.info("session %s: stopped a cycle of tool calls: %s", session.session_id, cycle.listing)
                raise _Stop("limit", LimitExceeded("repetition_limit", cycle.message(),
                                                   value=config.repetition_limit))
        finished = True
        result = _finish(session, turn, "done")
        await _report_result(session, hooks, result)
        yield ev.Done(text=result.text, turns=result.turns, usage=result.usage, stop="done")
    except _Stop as stop:
        finished = True
        result = _finish(session, turn, stop.stop, stop.error)
        await _report_result(session, hooks, result)
        if stop.error is None:
            yield ev.Done(text=result.text, turns=result.turns, usage=result.usage, stop=stop.stop)
        else:
            yield _failed(result)
    except Exception as exc:
        finished = True
        error = AgentError.wrap(exc)
        failed_turn = session._turn
        answer_open_calls(
            session.messages, f"Not run: the turn failed before this call finished ({error}).",
            failed_turn.batch if failed_turn is not None else None,
        )
        _log.debug("turn failed in session %s", session.session_id, exc_info=exc)
        if hooks.has_impls("on_error"):
            await hooks.on_error(session.hook_context(), error)
        result = _finish(session, turn, "error", error)
        if session._persistence is not None:
            await _save_repair(session)
        await _report_result(session, hooks, result)
        yield _failed(result)
    finally:
        if not finished:
            # Cancelled, or the consumer closed the stream: repair and record first, so the history is
            # valid whatever the observers do; they then run shielded (spans and logs must close).
            # A dropped stream was ended already (``_abandon``): only the observers are left to run.
            if session._running is run:
                _abandon(session, run)
                session._dropped = None
            await _report_dropped(session, hooks, run)
        if session._running is run:
            session._running = None


_HOOK_STOPPED = "Not run: a hook stopped the turn before this call ran."
_TOOL_LIMIT = (
    "Not run: this turn reached its limit of tool rounds (max_tool_turns). Answer with what you have."
)


# ----------------------------------------------------------------------------------- steps



async def model_call(
    session: AgentSession, config: AgentConfig, hooks: HookExecutor, turn: TurnState, reads_deltas: bool
) -> AsyncGenerator[ev.AgentEvent | AssistantMessage, None]:
    """One model call of the turn, as the loop makes it (and the LangGraph backend's model node):
    limits, provider resolution, the request and its hooks, the call, the reply recorded with its
    cost and ``on_llm_response``. Yields the call's events, then, last, the recorded reply."""
    _check_limits(session, config, turn)
    turn.model_calls += 1
    yield ev.TurnStarted(turn_index=session.turn_index, iteration=turn.model_calls)
    provider, request = await _prepare_call(session, config, hooks)
    model_mode = call_mode(session, config, provider.model_id, provider.provider_name)
    if turn.output is not None:
        request = shape_request(turn.output, request, provider, model_mode == "text")
    last = session._last_model
    current = (provider.provider_name, provider.model_id)
    if last is not None and last != current:
        yield ev.ProviderSwitched(
            from_provider=last[0], from_model=last[1], to_provider=current[0], to_model=current[1]
        )
    session._last_model = current
    offered = {t.name for t in request.tools}
    mode = model_mode if offered else "native"
    if mode == "text":
        request = text_mode_request(request, provider.model_id)
    if hooks.has_impls("on_llm_request"):
        request = await hooks.on_llm_request(session.hook_context(), request)
        offered.update(t.name for t in request.tools)  # a hook may offer more
        if turn.output is not None:
            request = unforce_with_thinking(request, provider)
    turn.offered = frozenset(offered)
    message: AssistantMessage | None = None
    streamed = config.streaming == "always" or (reads_deltas and config.streaming == "auto")
    calling = _open_stream(provider, request) if streamed else _complete_as_events(provider, request)
    # Calls written as text are not shown as the answer while they stream (text mode, and auto).
    held = CallTextFilter(offered, lone_results=mode == "text") if mode != "native" else None
    async with aclosing(calling) as stream:
        async for chunk in stream:
            if isinstance(chunk, TextDelta):
                text = chunk.text if held is None else held.feed(chunk.text)
                if text:
                    yield ev.TextDelta(text=text)
            elif isinstance(chunk, ThinkingDelta):
                yield ev.ThinkingDelta(thinking=chunk.thinking)
            elif isinstance(chunk, DoneEvent):
                message = chunk.message
            elif isinstance(chunk, ErrorEvent):
                raise AgentLLMError(chunk.to_exception())
    if message is None:
        raise AgentLLMError(
            LLMError(f"{provider!r} ended its stream without a reply; this is a provider bug")
        )
    if held is not None and (rest := held.flush()):
        yield ev.TextDelta(text=rest)
    note: str | None = None
    read = read_text_calls(message, offered, auto=mode == "auto") if mode != "native" else None
    if read is not None:
        message, note = read.message, read.note
        if mode == "auto" and message.tool_calls:
            yield switch_to_text_mode(session, provider.provider_name, provider.model_id)
    elif held is not None and not message.tool_calls and (unseen := held.unseen(message.text)):
        yield ev.TextDelta(text=unseen)  # it looked like a call but is the answer: show it whole
    message = unique_call_ids(message, session.messages)
    session.usage.add(message)  # before recording: a saved reply is saved with its usage
    await session._record(AssistantReply(message=message))
    if note is not None:  # what could not be read as a call: the model reads it with the results
        await session._record(ContextNote(text=note))
    # A reply whose only calls could not be read is answered with the note, not taken as the answer
    # (at most twice in a row: a model that cannot write a call then answers in text).
    turn.reread = note is not None and not message.tool_calls and turn.rereads < MAX_REREADS
    # Past the re-asks, a reply with nothing usable in it (no call, no answer) is no answer either.
    unusable = read is not None and read.unusable and not turn.reread
    turn.unreadable = (
        UnreadableToolCalls(read.problems, text_mode=mode == "text", rereads=turn.rereads)
        if read is not None and unusable else None
    )
    turn.rereads = turn.rereads + 1 if turn.reread else 0
    turn.usage = turn.usage + message.usage
    turn.text = message.text
    if hooks.has_impls("on_llm_response"):
        await hooks.on_llm_response(session.hook_context(), message)
    yield ev.TurnEnded(
        turn_index=session.turn_index, iteration=turn.model_calls,
        stop_reason=message.stop_reason.value if message.stop_reason else None,
        model=message.model, provider=message.provider, usage=message.usage,
        tool_calls=len(message.tool_calls),
    )
    yield message


async def _start_turn(session: AgentSession, hooks: HookExecutor, message: UserMessage) -> TurnState:
    prior = session._turn
    if prior is not None and prior.paused:  # a new message instead of the client results
        assert prior.batch is not None
        answer_open_calls(session.messages, UNANSWERED_CLIENT, prior.batch)
        for steer in prior.batch.steering:
            await session._record(UserInput(content=steer.content))
    else:
        answer_open_calls(session.messages, CANCELLED)  # a history loaded from elsewhere may end mid-batch
    session.turn_index += 1
    turn = TurnState(start=len(session.messages))
    session._turn = turn
    if not session._started:
        session._started = True
        if hooks.has_impls("on_session_start"):
            await hooks.on_session_start(session.hook_context())
    if hooks.has_impls("on_turn_start"):
        await hooks.on_turn_start(session.hook_context(), message)
    await session._record(UserInput(content=message.content))
    for early in session._drain(session._steering):  # steered between turns: it is input too
        await session._record(UserInput(content=early.content))
    return turn


async def _finish_client_batch(
    session: AgentSession,
    hooks: HookExecutor,
    turn: TurnState,
    results: list[ToolResultBlock],
) -> list[ev.AgentEvent]:
    batch = turn.batch
    assert batch is not None
    by_id = {r.tool_use_id: r for r in results}
    wants_after = hooks.has_impls("after_tool_call")
    for call in batch.client_calls:
        result = by_id.get(call.id) or error_result(
            call.id, f"The client returned no result for this call to '{call.name}'."
        )
        if wants_after:
            result = await hooks.after_tool_call(session.hook_context(), call, result, "client")
        batch.answer(call, result, "error" if result.is_error else "ok")
    batch.client_calls = []  # answered: the turn is no longer paused
    events = await _record_batch(session, turn)
    if batch.steering:
        events.append(await _steer(session, batch.steering, []))
    return events


def _check_limits(session: AgentSession, config: AgentConfig, turn: TurnState) -> None:
    if turn.model_calls >= config.max_turns:
        raise _Stop("limit", LimitExceeded("max_turns", value=config.max_turns))
    tokens = config.max_total_tokens
    if tokens is not None and session.usage.usage.total_tokens >= tokens:
        raise _Stop("limit", LimitExceeded("max_total_tokens", value=tokens))
    dollars = config.max_cost_usd
    if dollars is not None and (session.usage.cost_usd or 0.0) >= dollars:
        raise _Stop("limit", LimitExceeded("max_cost_usd", value=dollars))
    ttl = config.session_ttl
    if ttl is not None and now() - session.created_at > ttl:
        raise _Stop("limit", LimitExceeded("session_ttl", value=ttl))
    if session.parent is not None:  # a sub-agent spends its ancestors' budgets too
        inherited = parent_budget_exceeded(session)
        if inherited is not None:
            raise _Stop("limit", inherited)


async def _prepare_call(
    session: AgentSession, config: AgentConfig, hooks: HookExecutor
) -> tuple[LLMProvider, LLMRequest]:
    messages = convert_to_llm(session.messages)
    if session.transform is not None:
        transformed = session.transform(messages)
        messages = await transformed if inspect.isawaitable(transformed) else transformed
    request = LLMRequest.build(
        messages,
        system=session.agent.system_prompt,
        tools=session.agent.tool_definitions(session.bundle),
        max_tokens=config.max_tokens,
        temperature=config.temperature,
    )
    provider = await bundle_resolve_provider(session.bundle, session, request)
    return provider, request


async def _complete_as_events(
    provider: LLMProvider, request: LLMRequest
) -> AsyncGenerator[StreamEvent, None]:
    """One non-streaming call, seen as the events the loop reads: the text in one delta, then the reply
    (or the error). ``submit_turn`` takes this path, as nobody reads per-token deltas there."""
    try:
        response = await provider.complete(request)
    except LLMError as error:
        yield ErrorEvent.from_exception(error)
        return
    if response.message.text:
        yield TextDelta(index=0, text=response.message.text)
    yield DoneEvent(message=response.message, request_id=response.request_id)


async def _open_stream(provider: LLMProvider, request: LLMRequest) -> AsyncGenerator[StreamEvent, None]:
    # A generator of our own, so the loop can close it whatever iterator the provider returns.
    stream = provider.stream(request)
    try:
        async for event in stream:
            yield event
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()


def _phase(session: AgentSession, config: AgentConfig, hooks: HookExecutor, turn: TurnState) -> ToolPhase:
    return ToolPhase(
        registry=session.bundle.tool_registry(),
        hooks=hooks,
        hook_context=session.hook_context,
        config=config,
        tool_context=session._tool_context,
        confirm=session.confirm,
        always_confirmed=session._always_confirmed,
        steering=lambda: session._drain(session._steering),
        repetition=turn.repetition,
        offered=turn.offered,
        cycles=turn.cycles,
    )


async def _record_batch(session: AgentSession, turn: TurnState) -> list[ev.AgentEvent]:
    """Record the turn's batch as one ToolResults message (calls in the model's order; any without a
    result: cancelled) and end it; the results' events."""
    batch = turn.batch
    assert batch is not None
    outcomes = batch.outcomes()
    turn.batch = None  # no await before the append below: the batch is in the history or in flight
    await session._record(ToolResults(results=[o.result for o in outcomes]))
    return [_result_event(o) for o in outcomes]


async def _record_unrun(
    session: AgentSession, turn: TurnState, calls: list[ToolUseBlock], reason: str
) -> None:
    """Answer every call of a reply that will not run (a hook stopped the turn, a limit was hit)."""
    batch = turn.batch = Batch(calls)
    batch.answer_rest(reason, "not_run")
    await _record_batch(session, turn)


async def _steer(session: AgentSession, steering: list[UserMessage], skipped: list[str]) -> ev.Steered:
    for message in steering:
        await session._record(UserInput(content=message.content))
    text = "\n".join(m.content if isinstance(m.content, str) else "" for m in steering)
    return ev.Steered(skipped=skipped, text=text)


def _result_event(outcome: CallOutcome) -> ev.ToolResultReady:
    return ev.ToolResultReady(
        call_id=outcome.call.id, name=outcome.call.name, result=outcome.result,
        status=outcome.status, duration=outcome.duration,
    )


async def _save_repair(session: AgentSession) -> None:
    # The turn already failed: a store that fails too is logged, not raised over the turn's error.
    # Whatever is not saved here is saved with the next message, or repaired again on load.
    assert session._persistence is not None
    try:
        await session._persistence.flush(session)
    except Exception as exc:
        _log.warning("session %s: could not save after a failed turn: %s", session.session_id, exc)


async def _report_result(session: AgentSession, hooks: HookExecutor, result: TurnResult) -> None:
    if hooks.has_impls("on_turn_result"):
        await hooks.on_turn_result(session.hook_context(), result)


async def _report_dropped(session: AgentSession, hooks: HookExecutor, run: _Run) -> None:
    if run.reported or run.result is None:
        return
    run.reported = True
    if hooks.has_impls("on_turn_result"):
        await _report_cancelled(session, hooks, run.result)


async def _report_cancelled(session: AgentSession, hooks: HookExecutor, result: TurnResult) -> None:
    try:
        with anyio.CancelScope(shield=True):
            await hooks.on_turn_result(session.hook_context(), result)
    except Exception:  # e.g. a stream closed by the garbage collector, outside any event loop
        _log.debug("on_turn_result could not run for a cancelled turn", exc_info=True)


def _finish(
    session: AgentSession, turn: TurnState | None, stop: ev.TurnStop, error: AgentError | None = None
) -> TurnResult:
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
        )
    if stop != "client_tools":
        session._turn = None
    if isinstance(error, LimitExceeded):
        error.partial = result
    session.last_result = result
    return result


def _failed(result: TurnResult) -> ev.Failed:
    error = result.error
    return ev.Failed(
        error=str(error) if error is not None else result.stop,
        error_type=type(error).__name__ if error is not None else "",
        recoverable=error.is_recoverable() if error is not None else False,
        stop=result.stop,
    )


