"""``OpenTelemetryPlugin``: a run as OpenTelemetry spans named and attributed after the GenAI
semantic conventions.

One span per turn (``invoke_agent {agent}``), with a child per model call (``chat {model}``) and per
tool call (``execute_tool {tool}``). The hooks of one session arrive as separate calls, so the open
spans are kept per session id (and per tool call id: parallel calls overlap) and children are parented
through explicit contexts, never through the ambient "current span", which other tasks share.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

from agcore import __version__
from agcore._clock import now
from agcore.hooks import HookContext, hookimpl
from agcore.integrations.otel._content import arguments_json, input_messages, output_messages
from agcore.llm import AssistantMessage, LLMRequest, ToolResultBlock, ToolUseBlock, Usage, UserMessage

__all__ = ["OpenTelemetryPlugin"]

# Attribute names of the GenAI semantic conventions (strings: the semconv package is not required).
OPERATION: Final = "gen_ai.operation.name"
PROVIDER: Final = "gen_ai.provider.name"
SYSTEM: Final = "gen_ai.system"  # the pre-1.37 name of gen_ai.provider.name, still read by backends
AGENT_NAME: Final = "gen_ai.agent.name"
CONVERSATION_ID: Final = "gen_ai.conversation.id"
REQUEST_MODEL: Final = "gen_ai.request.model"
REQUEST_MAX_TOKENS: Final = "gen_ai.request.max_tokens"
REQUEST_TEMPERATURE: Final = "gen_ai.request.temperature"
RESPONSE_MODEL: Final = "gen_ai.response.model"
FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
CACHE_WRITE_TOKENS: Final = "gen_ai.usage.cache_creation.input_tokens"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_TYPE: Final = "gen_ai.tool.type"
TOOL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_RESULT: Final = "gen_ai.tool.call.result"
INPUT_MESSAGES: Final = "gen_ai.input.messages"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
ERROR_TYPE: Final = "error.type"
#: The span event carrying prompts and replies when ``capture_content=True``.
CONTENT_EVENT: Final = "gen_ai.client.inference.operation.details"

# A tool call that ended in one of these is a success; every other status marks its span as an error.
_TOOL_OK: Final = frozenset({"ok", "client"})
_TURN_OK: Final = frozenset({"done", "client_tools", "stopped_by_hook"})


def _now_ns() -> int:
    return int(now() * 1_000_000_000)



@dataclasses.dataclass(slots=True)
class _Open:
    """The spans a session has open: its turn, its model call, its tool calls by call id."""

    turn: Span
    turn_context: Context
    llm: Span | None = None
    llm_input: tuple[str, str | None] | None = None
    tools: dict[str, Span] = dataclasses.field(default_factory=dict)
    #: call id -> when the call was cleared to run (vetted, and approved if asked), in ns: with the
    #: ``duration`` after_tool_call reports, it gives the span's end (the hook runs after the batch).
    ready_ns: dict[str, int] = dataclasses.field(default_factory=dict)


def _input_tokens(usage: Usage) -> int:
    # The conventions count cached input in input_tokens; agcore's Usage keeps it apart.
    return usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens


def _fail(span: Span, error_type: str, description: str | None = None) -> None:
    span.set_attribute(ERROR_TYPE, error_type)
    span.set_status(Status(StatusCode.ERROR, description))


class OpenTelemetryPlugin:
    """Emits spans for turns, model calls and tool calls through ``tracer_provider`` (the global one
    when None). Register it like any plugin: ``AgentBuilder().plugins(OpenTelemetryPlugin())``.

    Spans and their attributes (GenAI semantic conventions):

    * ``invoke_agent {agent}`` per turn (kind INTERNAL): ``gen_ai.operation.name=invoke_agent``,
      ``gen_ai.agent.name``, ``gen_ai.conversation.id`` (the session id), the turn's token usage, and
      ``agcore.turn.stop``; error status with ``error.type`` when the turn ends in ``error``, ``limit``
      or ``cancelled``. Its parent is whatever span is current when the turn starts; a sub-agent's
      turn (``agcore.agent.agent_tool``) nests under its parent's ``execute_tool`` span instead, with
      ``agcore.parent.conversation.id``, ``agcore.parent.tool.call.id`` and ``agcore.subagent.depth``.
    * ``chat {model}`` per model call (kind CLIENT), a child of the turn: ``gen_ai.operation.name=chat``,
      ``gen_ai.provider.name`` (and ``gen_ai.system``), ``gen_ai.request.model`` /
      ``.max_tokens`` / ``.temperature``, ``gen_ai.response.model``, ``.finish_reasons``,
      ``gen_ai.usage.input_tokens`` (cached input included) / ``.output_tokens`` (and the cache
      counts); error status with ``error.type`` (the LLM error class) when the call fails. The span is
      named after the model about to be called (``HookContext.model``) and renamed if the reply (or
      the error) names a more exact one (a dated id, say).
    * ``execute_tool {tool}`` per tool call (kind INTERNAL), a child of the turn:
      ``gen_ai.operation.name=execute_tool``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
      ``gen_ai.tool.type=function``, ``agcore.tool.status``; error status with ``error.type`` (the
      status: ``error``, ``timeout``, ``denied``, ``not_approved``...) unless it ended ``ok``. A
      confirmation question is an ``agcore.confirmation`` event on it. It starts when the call is
      vetted (or, if asked, approved) and lasts as long as the tool ran (``after_tool_call``'s
      ``duration``), so parallel calls overlap as they really did.

    Every span is ended, whatever ends the turn (cancellation included). ``capture_content=True``
    adds the prompts and replies (a ``gen_ai.client.inference.operation.details`` event on each
    ``chat`` span, with ``gen_ai.input.messages``, ``gen_ai.output.messages`` and
    ``gen_ai.system_instructions``) and the tools' arguments and results
    (``gen_ai.tool.call.arguments`` / ``.result``); off by default, as they may hold private data.
    """

    def __init__(
        self, tracer_provider: TracerProvider | None = None, *, capture_content: bool = False
    ) -> None:
        self.capture_content = capture_content
        self._tracer = trace.get_tracer("agcore", __version__, tracer_provider=tracer_provider)
        self._open: dict[str, _Open] = {}

    def __repr__(self) -> str:
        return f"OpenTelemetryPlugin(capture_content={self.capture_content})"

    # -------------------------------------------------------------------------------- spans

    def _parent_context(self, ctx: HookContext) -> Context | None:
        """A sub-agent's turn nests under the parent's ``execute_tool`` span that runs it (or, if that
        span is gone, the parent's turn); None for a top-level session (the current span is used)."""
        if ctx.parent_session_id is None:
            return None
        parent = self._open.get(ctx.parent_session_id)
        if parent is None:
            return None
        tool_span = parent.tools.get(ctx.parent_call_id) if ctx.parent_call_id is not None else None
        return trace.set_span_in_context(tool_span) if tool_span is not None else parent.turn_context

    def _start_turn(self, ctx: HookContext) -> _Open:
        attributes: dict[str, Any] = {
            OPERATION: "invoke_agent",
            AGENT_NAME: ctx.agent_name,
            CONVERSATION_ID: ctx.session_id,
            "agcore.turn.index": ctx.turn_index,
        }
        if ctx.parent_session_id is not None:
            attributes["agcore.parent.conversation.id"] = ctx.parent_session_id
            attributes["agcore.subagent.depth"] = ctx.depth
            if ctx.parent_call_id is not None:
                attributes["agcore.parent.tool.call.id"] = ctx.parent_call_id
        span = self._tracer.start_span(
            f"invoke_agent {ctx.agent_name}",
            context=self._parent_context(ctx),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        opened = _Open(span, trace.set_span_in_context(span))
        self._open[ctx.session_id] = opened
        return opened

    def _turn(self, ctx: HookContext) -> _Open:
        # A turn resumed after client tools (or a plugin registered mid-turn) continues in a new span.
        return self._open.get(ctx.session_id) or self._start_turn(ctx)

    def _close_children(self, opened: _Open, error_type: str) -> None:
        if opened.llm is not None:
            _fail(opened.llm, error_type, "the turn ended before the model answered")
            opened.llm.end()
            opened.llm = None
        paused = error_type == "client_tools"  # not failed: the results come with resume()
        for span in opened.tools.values():
            if paused:
                span.set_attribute("agcore.tool.status", "awaiting_client")
            else:
                _fail(span, error_type, "the turn ended before this tool call reported its result")
            span.end()
        opened.tools.clear()
        opened.ready_ns.clear()

    # -------------------------------------------------------------------------------- turns

    @hookimpl
    def on_turn_start(self, ctx: HookContext, user_input: UserMessage) -> None:
        """Open the turn's ``invoke_agent`` span (closing, as abandoned, a previous turn of the session
        that never reported its result)."""
        stale = self._open.pop(ctx.session_id, None)
        if stale is not None:  # a turn whose result never came: close it rather than leak it
            self._close_children(stale, "abandoned")
            _fail(stale.turn, "abandoned", "a new turn started before this one reported its result")
            stale.turn.end()
        self._start_turn(ctx)

    @hookimpl
    def on_turn_result(self, ctx: HookContext, result: Any) -> None:
        """Close the turn's span with its stop, usage, model calls and cost (an error status unless the
        turn ended well), and any child span still open."""
        opened = self._open.pop(ctx.session_id, None)
        if opened is None:
            return
        stop = str(getattr(result, "stop", "done"))
        error = getattr(result, "error", None)
        error_type = type(error).__name__ if error is not None else stop
        self._close_children(opened, error_type)
        span = opened.turn
        span.set_attribute("agcore.turn.stop", stop)
        usage = getattr(result, "usage", None)
        if isinstance(usage, Usage):
            span.set_attribute(INPUT_TOKENS, _input_tokens(usage))
            span.set_attribute(OUTPUT_TOKENS, usage.output_tokens)
        turns = getattr(result, "turns", None)
        if isinstance(turns, int):
            span.set_attribute("agcore.turn.model_calls", turns)
        cost = getattr(result, "cost_usd", None)
        if isinstance(cost, float | int):
            span.set_attribute("agcore.turn.cost_usd", float(cost))
        if stop not in _TURN_OK:
            _fail(span, error_type, str(error) if error is not None else f"the turn ended with {stop!r}")
        span.end()

    @hookimpl
    def on_session_end(self, ctx: HookContext) -> None:
        """Close whatever spans the session still has open."""
        opened = self._open.pop(ctx.session_id, None)
        if opened is not None:
            self._close_children(opened, "session_ended")
            opened.turn.end()

    @hookimpl
    def on_error(self, ctx: HookContext, error: BaseException) -> None:
        """Record the error: on the open model-call span (which it ends, failed) or else on the turn's
        span."""
        opened = self._open.get(ctx.session_id)
        if opened is None:
            return
        span = opened.llm
        if span is None:
            opened.turn.record_exception(error)
            return
        # Between the request and the reply, the failure is the model call's.
        cause = getattr(error, "cause", None)
        failure = cause if isinstance(cause, BaseException) else error
        model = getattr(failure, "model", None)
        provider = getattr(failure, "provider", None)
        if isinstance(model, str) and model:
            span.update_name(f"chat {model}")
            span.set_attribute(REQUEST_MODEL, model)
        if isinstance(provider, str) and provider:
            span.set_attribute(PROVIDER, provider)
            span.set_attribute(SYSTEM, provider)
        span.record_exception(failure)
        self._end_llm(opened, None)
        _fail(span, type(failure).__name__, str(failure))
        span.end()

    # ---------------------------------------------------------------------------- model calls

    @hookimpl(trylast=True)  # last: it describes the request as sent, after other plugins' rewrites
    def on_llm_request(self, ctx: HookContext, request: LLMRequest) -> None:
        """Open a ``chat {model}`` span for the request as sent (after other plugins' rewrites)."""
        opened = self._turn(ctx)
        if opened.llm is not None:  # pragma: no cover - a request without its reply: never left open
            opened.llm.end()
        attributes: dict[str, Any] = {OPERATION: "chat", CONVERSATION_ID: ctx.session_id}
        if ctx.model:  # the model about to be called; the reply may name a more exact one
            attributes[REQUEST_MODEL] = ctx.model
        if ctx.provider:
            attributes[PROVIDER] = ctx.provider
            attributes[SYSTEM] = ctx.provider
        if request.max_tokens is not None:
            attributes[REQUEST_MAX_TOKENS] = request.max_tokens
        if request.temperature is not None:
            attributes[REQUEST_TEMPERATURE] = request.temperature
        opened.llm = self._tracer.start_span(
            f"chat {ctx.model}" if ctx.model else "chat",
            context=opened.turn_context, kind=SpanKind.CLIENT, attributes=attributes,
        )
        opened.llm_input = input_messages(request) if self.capture_content else None

    @hookimpl
    def on_llm_response(self, ctx: HookContext, message: AssistantMessage) -> None:
        """Close the model-call span with the response model, finish reason and token usage (and the
        content, when captured)."""
        opened = self._open.get(ctx.session_id)
        if opened is None or opened.llm is None:
            return
        span = opened.llm
        if message.model:
            span.set_attribute(RESPONSE_MODEL, message.model)
            if message.model != ctx.model:  # a more exact name (a dated id), or none was known
                span.update_name(f"chat {message.model}")
                if not ctx.model:
                    span.set_attribute(REQUEST_MODEL, message.model)
        if message.provider:
            span.set_attribute(PROVIDER, message.provider)
            span.set_attribute(SYSTEM, message.provider)
        if message.stop_reason is not None:
            span.set_attribute(FINISH_REASONS, [message.stop_reason.value])
        usage = message.usage
        span.set_attribute(INPUT_TOKENS, _input_tokens(usage))
        span.set_attribute(OUTPUT_TOKENS, usage.output_tokens)
        if usage.cache_read_tokens:
            span.set_attribute(CACHE_READ_TOKENS, usage.cache_read_tokens)
        if usage.cache_write_tokens:
            span.set_attribute(CACHE_WRITE_TOKENS, usage.cache_write_tokens)
        self._end_llm(opened, message)
        span.end()

    def _end_llm(self, opened: _Open, message: AssistantMessage | None) -> None:
        """Detach the model-call span (the caller ends it), adding the content event if asked."""
        span, captured = opened.llm, opened.llm_input
        opened.llm = opened.llm_input = None
        if span is None or captured is None:
            return
        content, system = captured
        attributes: dict[str, str] = {INPUT_MESSAGES: content}
        if system is not None:
            attributes[SYSTEM_INSTRUCTIONS] = system
        if message is not None:
            attributes[OUTPUT_MESSAGES] = output_messages(message)
        span.add_event(CONTENT_EVENT, attributes)

    # ----------------------------------------------------------------------------- tool calls

    def _start_tool(self, ctx: HookContext, call: ToolUseBlock) -> Span:
        opened = self._turn(ctx)
        stale = opened.tools.pop(call.id, None)
        if stale is not None:  # pragma: no cover - the same call vetted twice
            stale.end()
        attributes: dict[str, Any] = {
            OPERATION: "execute_tool", TOOL_NAME: call.name, TOOL_CALL_ID: call.id, TOOL_TYPE: "function",
        }
        if self.capture_content:
            attributes[TOOL_ARGUMENTS] = arguments_json(call)
        span = self._tracer.start_span(
            f"execute_tool {call.name}", context=opened.turn_context, kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        opened.tools[call.id] = span
        opened.ready_ns[call.id] = _now_ns()
        return span

    @hookimpl(tryfirst=True)  # first: a denying plugin ends the hook call before later ones run
    def before_tool_call(self, ctx: HookContext, call: ToolUseBlock) -> None:
        """Open the call's ``execute_tool {tool}`` span; runs first, so a call another plugin denies has
        one too."""
        self._start_tool(ctx, call)

    @hookimpl
    def on_confirmation(self, ctx: HookContext, call: ToolUseBlock, answer: str) -> None:
        """Add the user's answer to the call's span as an event."""
        opened = self._open.get(ctx.session_id)
        span = opened.tools.get(call.id) if opened is not None else None
        if span is None:
            span = self._start_tool(ctx, call)
        span.add_event("agcore.confirmation", {"agcore.confirmation.answer": answer})
        self._open[ctx.session_id].ready_ns[call.id] = _now_ns()  # the tool runs after the answer

    @hookimpl
    def after_tool_call(
        self,
        ctx: HookContext,
        call: ToolUseBlock,
        result: ToolResultBlock,
        status: str,
        duration: float,
    ) -> None:
        """Close the call's span with its status (an error status when the call failed), timed to how
        long the tool ran."""
        opened = self._open.get(ctx.session_id)
        span = opened.tools.pop(call.id, None) if opened is not None else None
        if span is None:  # unknown tools, unreadable arguments and repeats skip before_tool_call
            span = self._start_tool(ctx, call)
            self._open[ctx.session_id].tools.pop(call.id, None)
        ready = self._open[ctx.session_id].ready_ns.pop(call.id, None)
        span.set_attribute("agcore.tool.status", status)
        if self.capture_content:
            span.set_attribute(TOOL_RESULT, result.text)
        if status not in _TOOL_OK:
            _fail(span, status, result.text[:200] or None)
        elif result.is_error:
            _fail(span, "tool_error", result.text[:200] or None)
        ran = int(duration * 1e9)
        span.end(end_time=ready + ran if ready is not None and ran > 0 else None)
