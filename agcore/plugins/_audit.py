"""``AuditLogPlugin``: what a run did, as two JSON Lines files tied together by a trace id per turn.

``audit.jsonl`` keeps the key operations (who asked what, which tools ran with which arguments, what
was confirmed or refused, how the turn ended); ``trace.jsonl`` keeps those and the detail needed to
replay a problem (every model request and reply, every tool result). Each line is one record::

    {"ts": "2026-11-22T15:04:05.123+00:00", "trace_id": "<32 hex>", "session_id": "...",
     "agent": "coder", "turn_index": 3, "event": "tool_call", "data": {...}}

A sub-agent's records (``agcore.agent.agent_tool``) carry its parent's trace id (the turn that
delegated to it), plus ``parent_session_id``, ``parent_call_id`` and ``depth``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from agcore._clock import new_id, now_datetime
from agcore.hooks import HookContext, hookimpl
from agcore.llm import AssistantMessage, LLMRequest, ToolResultBlock, ToolUseBlock, UserMessage
from agcore.plugins._jsonl import JsonlFile
from agcore.plugins._previews import (
    call_summary,
    message_text,
    preview,
    request_summary,
    response_summary,
    usage_dict,
)

__all__ = ["AUDIT_EVENTS", "TRACE_EVENTS", "AuditLogPlugin"]

#: Events written to both files.
AUDIT_EVENTS: Final = frozenset({
    "user_message", "tool_call", "confirmation", "denial", "final_text", "stop_reason", "error",
    "plan_step",
})
#: Events written to ``trace.jsonl`` only.
TRACE_EVENTS: Final = frozenset({"llm_request", "llm_response", "tool_result"})

# How a refused call is recorded as a ``denial``: by a before_tool_call plugin, or by the user.
_DENIED_BY: Final = {"denied": "policy", "not_approved": "user"}


#: Sessions whose trace id is kept (``trace_id()``); a session past it that turns again gets a new id.
MAX_TRACKED_SESSIONS = 4096


def _new_trace_id() -> str:
    return new_id()


class AuditLogPlugin:
    """Writes ``audit.jsonl`` and ``trace.jsonl`` in ``directory`` (created if missing); register it
    with ``AgentBuilder().plugins(AuditLogPlugin("logs"))``.

    Records are appended one line each and handed to the OS at once, so a crash loses nothing already
    written, and many sessions (in tasks, threads or processes) can share the files. Free texts (user
    messages, model text, arguments, results) are cut to ``preview_chars`` characters plus ``…``, their
    full length recorded beside them. Writing never raises into the run: a failing disk is logged
    (logger ``agcore.plugins``) and the record dropped. An unwritable ``directory`` raises ``OSError``
    here, at construction.

    ``trace_id(session_id)`` is the id of the session's current (or latest) turn, for correlating
    other logs or showing it in a UI.
    """

    def __init__(
        self,
        directory: str | Path,
        *,
        audit_name: str = "audit.jsonl",
        trace_name: str = "trace.jsonl",
        preview_chars: int = 200,
    ) -> None:
        if preview_chars < 1:
            raise ValueError(f"preview_chars must be at least 1, not {preview_chars}")
        if audit_name == trace_name:
            raise ValueError(f"audit_name and trace_name must differ (both are {audit_name!r})")
        root = Path(directory)
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OSError(
                f"AuditLogPlugin cannot create its log directory {str(root)!r}: {exc.strerror or exc}. "
                "Pass a directory this process can write to."
            ) from exc
        self.preview_chars = preview_chars
        self._audit = JsonlFile(root / audit_name)
        try:
            self._trace = JsonlFile(root / trace_name)
        except OSError:
            self._audit.close()
            raise
        # session id -> its current (or latest) turn's trace id; the least recently active go first
        # past MAX_TRACKED_SESSIONS, so sessions that never end do not grow it without bound.
        self._trace_ids: OrderedDict[str, str] = OrderedDict()

    def __repr__(self) -> str:
        return f"AuditLogPlugin({str(self.audit_path.parent)!r})"

    @property
    def audit_path(self) -> Path:
        """The ``audit.jsonl`` file: the key operations (inputs, tool calls, confirmations, denials,
        endings, errors, plan steps)."""
        return self._audit.path

    @property
    def trace_path(self) -> Path:
        """The ``trace.jsonl`` file: what ``audit.jsonl`` holds plus every model request and reply and
        every tool result."""
        return self._trace.path

    def trace_id(self, session_id: str) -> str | None:
        """The trace id of ``session_id``'s current turn (its latest once it ended); None if the
        session has not started a turn (or has ended)."""
        return self._trace_ids.get(session_id)

    def close(self) -> None:
        """Close both files; later records are dropped."""
        self._audit.close()
        self._trace.close()

    # ---------------------------------------------------------------------------------- writing

    def _trace_id(self, ctx: HookContext) -> str:
        trace_id = self._trace_ids.get(ctx.session_id)
        if trace_id is None:  # registered mid-turn, or resumed in a new process: a fresh id still ties
            trace_id = self._start_trace(ctx.session_id, ctx.parent_session_id)
        return trace_id

    def _start_trace(self, session_id: str, parent_session_id: str | None = None) -> str:
        # A sub-agent's turn belongs to its parent's: it carries the parent's current trace id.
        inherited = self._trace_ids.get(parent_session_id) if parent_session_id is not None else None
        trace_id = self._trace_ids[session_id] = inherited or _new_trace_id()
        self._trace_ids.move_to_end(session_id)
        while len(self._trace_ids) > MAX_TRACKED_SESSIONS:
            self._trace_ids.popitem(last=False)
        return trace_id

    def _write(self, ctx: HookContext, event: str, data: Mapping[str, Any]) -> None:
        record: dict[str, Any] = {
            "ts": now_datetime().isoformat(timespec="milliseconds"),
            "trace_id": self._trace_id(ctx),
            "session_id": ctx.session_id,
            "agent": ctx.agent_name,
            "turn_index": ctx.turn_index,
            "event": event,
            "data": data,
        }
        if ctx.parent_session_id is not None:  # a sub-agent's record says where it hangs
            record["parent_session_id"] = ctx.parent_session_id
            record["parent_call_id"] = ctx.parent_call_id
            record["depth"] = ctx.depth
        line = JsonlFile.encode(record)
        self._trace.write(line)
        if event in AUDIT_EVENTS:
            self._audit.write(line)

    # ------------------------------------------------------------------------------------ hooks

    @hookimpl
    def on_turn_start(self, ctx: HookContext, user_input: UserMessage) -> None:
        """Start the turn's trace id and record the user's input (``user_message``)."""
        self._start_trace(ctx.session_id, ctx.parent_session_id)
        text = message_text(user_input)
        self._write(ctx, "user_message", {"text": preview(text, self.preview_chars), "chars": len(text)})

    @hookimpl(trylast=True)  # last: it records the request as sent, after other plugins' rewrites
    def on_llm_request(self, ctx: HookContext, request: LLMRequest) -> None:
        """Record the request as sent, after other plugins' rewrites (``llm_request``, trace only)."""
        self._write(ctx, "llm_request", request_summary(request, self.preview_chars, ctx.model))

    @hookimpl
    def on_llm_response(self, ctx: HookContext, message: AssistantMessage) -> None:
        """Record the model's reply (``llm_response``, trace only)."""
        self._write(ctx, "llm_response", response_summary(message, self.preview_chars))

    @hookimpl
    def on_confirmation(self, ctx: HookContext, call: ToolUseBlock, answer: str) -> None:
        """Record the user's answer to a confirmation (``confirmation``)."""
        self._write(ctx, "confirmation", {**call_summary(call, self.preview_chars), "answer": answer})

    @hookimpl
    def after_tool_call(
        self, ctx: HookContext, call: ToolUseBlock, result: ToolResultBlock, status: str, duration: float
    ) -> None:
        """Record the call and how it ended (``tool_call``), a refusal by a policy or the user
        (``denial``), and the result (``tool_result``, trace only)."""
        limit = self.preview_chars
        summary = call_summary(call, limit)
        self._write(ctx, "tool_call", {**summary, "status": status, "elapsed_s": round(duration, 6)})
        text = result.text
        if status in _DENIED_BY:
            self._write(ctx, "denial", {
                "call_id": call.id, "name": call.name, "by": _DENIED_BY[status], "status": status,
                "reason": preview(text, limit),
            })
        self._write(ctx, "tool_result", {
            "call_id": call.id, "name": call.name, "status": status, "is_error": result.is_error,
            "chars": len(text), "preview": preview(text, limit),
        })

    @hookimpl
    def on_plan_step_complete(self, ctx: HookContext, step: Any) -> None:
        """Record a plan step's final status, attempts, and result, error or skip reason (``plan_step``)."""
        status = getattr(step, "status", None)
        error = getattr(step, "error", None)
        result = getattr(step, "result", None)
        data: dict[str, Any] = {
            "index": ctx.plan_step_index,
            "step_id": getattr(step, "id", None),
            "description": preview(str(getattr(step, "description", "")), self.preview_chars),
            "status": getattr(status, "value", status),
            "attempts": getattr(step, "attempts", None),
            "result_preview": preview(result, self.preview_chars) if isinstance(result, str) else None,
            "error": preview(str(getattr(error, "message", error)), self.preview_chars) if error else None,
        }
        skip = getattr(step, "skip_reason", None)
        if skip:
            data["skip_reason"] = preview(str(skip), self.preview_chars)
        self._write(ctx, "plan_step", data)

    @hookimpl
    def on_error(self, ctx: HookContext, error: BaseException) -> None:
        """Record the error, its cause's provider, model, status and request id, and whether it is
        recoverable (``error``)."""
        data: dict[str, Any] = {
            "type": type(error).__name__,
            "message": preview(str(error), self.preview_chars * 4),
        }
        cause = getattr(error, "cause", None)
        if isinstance(cause, BaseException):
            data["cause_type"] = type(cause).__name__
            for field in ("provider", "model", "status_code", "request_id"):
                value = getattr(cause, field, None)
                if value is not None:
                    data[field] = value
        recoverable = getattr(error, "is_recoverable", None)
        if callable(recoverable):
            data["recoverable"] = bool(recoverable())
        self._write(ctx, "error", data)

    @hookimpl
    def on_turn_result(self, ctx: HookContext, result: Any) -> None:
        """Record how the turn ended (``stop_reason``: stop, model calls, usage, cost, error) and its
        final text (``final_text``)."""
        stop = getattr(result, "stop", None)
        text = getattr(result, "text", "") or ""
        limit = self.preview_chars
        if stop == "done":
            self._write(ctx, "final_text", {"text": preview(text, limit), "chars": len(text)})
        error = getattr(result, "error", None)
        usage = getattr(result, "usage", None)
        self._write(ctx, "stop_reason", {
            "stop": stop,
            "model_calls": getattr(result, "turns", None),
            "usage": usage_dict(usage) if usage is not None else None,
            "cost_usd": getattr(result, "cost_usd", None),
            "error": preview(str(error), limit * 4) if error is not None else None,
            "error_type": type(error).__name__ if error is not None else None,
        })

    @hookimpl
    def on_session_end(self, ctx: HookContext) -> None:
        """Forget the session's trace id."""
        self._trace_ids.pop(ctx.session_id, None)
