"""``LoggingPlugin``: one readable line per run event on the standard ``logging`` module."""

from __future__ import annotations

import logging
from typing import Any, Final

from agcore.hooks import HookContext, hookimpl
from agcore.llm import AssistantMessage, LLMRequest, ToolResultBlock, ToolUseBlock, UserMessage
from agcore.plugins._previews import arguments_text, message_text, preview

__all__ = ["LoggingPlugin"]

_PREVIEW: Final = 80
# Tool endings that are a tool failing (WARNING); refusals and skips are the run working as intended.
_FAILED: Final = frozenset({"error", "timeout", "unknown_tool", "invalid_arguments", "parse_error"})
_STOP_LEVEL: Final = {"error": logging.ERROR, "limit": logging.WARNING, "cancelled": logging.WARNING}


def _one_line(text: str, limit: int = _PREVIEW) -> str:
    return preview(" ".join(text.split()), limit)


class LoggingPlugin:
    """Logs a run on ``logger`` (a name or a ``logging.Logger``): turn start and end, each model
    request and reply (model, tokens), each tool call (status, elapsed time), confirmations and
    errors. Routine lines use ``level`` (INFO by default); failed tool calls and turns ending in a
    limit or cancellation use WARNING, errors ERROR. Every line starts with
    ``[agent session:turn]`` and carries the fields as record attributes too (``agcore_session``,
    ``agcore_turn``, ``agcore_event``, ``agcore_parent_session``, ``agcore_depth``) for structured
    handlers. A sub-agent's lines (``agcore.agent.agent_tool``) are indented two spaces per level and
    name the top-level session and the parent's call that runs it: ``[researcher 3f2a9c1e>a81b22c0:1]``.

    ```python
    logging.basicConfig(level=logging.INFO)
    bundle = AgentBuilder().model("anthropic:claude-sonnet-4-6").plugins(LoggingPlugin()).build()
    ```
    """

    def __init__(self, logger: str | logging.Logger = "agcore.run", level: int = logging.INFO) -> None:
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger
        self.level = level

    def __repr__(self) -> str:
        return f"LoggingPlugin({self.logger.name!r})"

    def _log(self, level: int, ctx: HookContext, event: str, message: str, *args: object) -> None:
        logger = self.logger
        if not logger.isEnabledFor(level):
            return
        step = f" step {ctx.plan_step_index}" if ctx.plan_step_index is not None else ""
        session = ctx.session_id[:8]
        if ctx.parent_session_id is not None:  # a sub-agent: its root session and the call running it
            root = ctx.root_session_id or ctx.parent_session_id
            session = f"{root[:8]}>{(ctx.parent_call_id or '')[-8:]}"
        logger.log(
            level, "%s[%s %s:%d%s] " + message, "  " * ctx.depth, ctx.agent_name, session, ctx.turn_index,
            step, *args,
            extra={"agcore_session": ctx.session_id, "agcore_turn": ctx.turn_index, "agcore_event": event,
                   "agcore_parent_session": ctx.parent_session_id, "agcore_depth": ctx.depth},
        )

    @hookimpl
    def on_turn_start(self, ctx: HookContext, user_input: UserMessage) -> None:
        """Log the turn's input."""
        self._log(self.level, ctx, "turn_start", "turn started: %r", _one_line(message_text(user_input)))

    @hookimpl(trylast=True)
    def on_llm_request(self, ctx: HookContext, request: LLMRequest) -> None:
        """Log the model call about to be made (messages, tools, ``max_tokens``), after other plugins'
        rewrites."""
        self._log(
            self.level, ctx, "llm_request", "model call: %d messages, %d tools, max_tokens=%s",
            len(request.messages), len(request.tools), request.max_tokens,
        )

    @hookimpl
    def on_llm_response(self, ctx: HookContext, message: AssistantMessage) -> None:
        """Log the model's reply: who answered, the stop reason, tokens, tool calls and text length."""
        usage = message.usage
        calls = message.tool_calls
        stop = message.stop_reason.value if message.stop_reason is not None else "?"
        self._log(
            self.level, ctx, "llm_response",
            "model reply from %s: stop=%s, tokens in=%d out=%d, %d tool call(s), %d chars of text",
            message.model or "?", stop,
            usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens, usage.output_tokens,
            len(calls), len(message.text),
        )

    @hookimpl
    def on_confirmation(self, ctx: HookContext, call: ToolUseBlock, answer: str) -> None:
        """Log the user's answer to a confirmation."""
        self._log(self.level, ctx, "confirmation", "confirmation for %s (%s): %s", call.name, call.id, answer)

    @hookimpl
    def after_tool_call(
        self, ctx: HookContext, call: ToolUseBlock, result: ToolResultBlock, status: str, duration: float
    ) -> None:
        """Log the call and how it ended; a failed call at WARNING, with the error text."""
        elapsed = f" in {duration:.3f}s" if duration else ""
        level = logging.WARNING if status in _FAILED else self.level
        detail = f": {_one_line(result.text)}" if result.is_error else ""
        self._log(
            level, ctx, "tool_call", "tool %s(%s) -> %s%s%s",
            call.name, _one_line(arguments_text(call), 60), status, elapsed, detail,
        )

    @hookimpl
    def on_plan_step_complete(self, ctx: HookContext, step: Any) -> None:
        """Log a plan step's final status; a failed step at WARNING."""
        status = getattr(step, "status", None)
        status = getattr(status, "value", status)
        level = logging.WARNING if status == "failed" else self.level
        self._log(level, ctx, "plan_step", "plan step %s %s", getattr(step, "id", "?"), status)

    @hookimpl
    def on_error(self, ctx: HookContext, error: BaseException) -> None:
        """Log the error at ERROR."""
        self._log(logging.ERROR, ctx, "error", "error: %s: %s", type(error).__name__, error)

    @hookimpl
    def on_turn_result(self, ctx: HookContext, result: Any) -> None:
        """Log how the turn ended, its tokens and cost."""
        stop = getattr(result, "stop", "?")
        usage = getattr(result, "usage", None)
        tokens = usage.total_tokens if usage is not None else 0
        cost = getattr(result, "cost_usd", None)
        spent = f", ${cost:.4f}" if cost is not None else ""
        error = getattr(result, "error", None)
        why = f": {type(error).__name__}: {error}" if error is not None and stop != "error" else ""
        self._log(
            _STOP_LEVEL.get(stop, self.level), ctx, "turn_end", "turn ended (%s) after %s model call(s), "
            "%d tokens%s%s", stop, getattr(result, "turns", "?"), tokens, spent, why,
        )
