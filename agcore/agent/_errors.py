"""The errors a turn, a plan or the bundle's assembly can end in.

AgentError                  base; ``is_recoverable()`` says whether a retry or the next step may proceed
├── AgentLLMError           wraps an ``LLMError`` (``.cause``): recoverable iff the cause is retryable
├── AgentToolError          wraps a ``ToolError``: recoverable (the model can try another way)
├── AgentMemoryError        wraps a ``MemoryStoreError``: recoverable (memory is an aid, not the task)
├── PlanParseError          a plan could not be read: recoverable (asking the model again may work)
├── HookBlocked             a hook stopped the turn (``.hook_name``, ``.plugin_name``): not recoverable
├── LimitExceeded           a configured cap was hit (``.limit``, ``.partial``): not recoverable
├── ConfigError             the bundle or the agent is set up wrong (``.piece``): not recoverable
├── NoAnswer                the model ended with no answer (empty, the reminder, a bare call): recoverable
└── Cancelled               the turn was cancelled: not recoverable

``AgentError.wrap(exc)`` turns any exception into the fitting one (an ``AgentError`` is returned as
is). Every message says what was wrong and what to do. Errors pickle (durable execution ships them
between processes), keeping their attributes.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agcore.hooks import HookFailure
from agcore.llm.errors import (
    AuthenticationError,
    ContextWindowExceededError,
    InvalidRequestError,
    LLMError,
    ModelNotFoundError,
)
from agcore.memory import MemoryStoreError
from agcore.tools import ToolError

__all__ = [
    "AgentError",
    "AgentLLMError",
    "AgentMemoryError",
    "AgentToolError",
    "Cancelled",
    "ConfigError",
    "HookBlocked",
    "NoAnswer",
    "PlanParseError",
    "UnreadableToolCalls",
]

# Cancellation classes by (module, name): library code may not import asyncio, and trio is optional.
_CANCELLATION = {("asyncio.exceptions", "CancelledError"), ("trio", "Cancelled")}


def _rebuild(cls: type[AgentError], args: tuple[Any, ...], state: dict[str, Any]) -> AgentError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class AgentError(Exception):
    """Base of the agent layer's errors. ``message`` is what ``str()`` shows; ``cause`` the wrapped
    exception, if any (also set as ``__cause__``)."""

    recoverable: ClassVar[bool] = False

    def __init__(self, message: str, *, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause
        if cause is not None:
            self.__cause__ = cause

    def is_recoverable(self) -> bool:
        """Whether retrying the turn, or going on with the next plan step, may succeed."""
        return self.recoverable

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        # The default reduce calls cls(*args), which keyword-only constructors cannot take.
        return _rebuild, (type(self), self.args, dict(self.__dict__))

    @staticmethod
    def wrap(exc: BaseException) -> AgentError:
        """The agent-layer error for ``exc``: itself if already one, else the fitting wrapper."""
        if isinstance(exc, AgentError):
            return exc
        if isinstance(exc, LLMError):
            return AgentLLMError(exc)
        if isinstance(exc, ToolError):
            return AgentToolError(exc)
        if isinstance(exc, MemoryStoreError):
            return AgentMemoryError(exc)
        if isinstance(exc, HookFailure):
            return HookBlocked.from_failure(exc)
        if _is_cancellation(exc):
            return Cancelled(cause=exc)
        if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            return AgentError.wrap(exc.exceptions[0])
        detail = str(exc)
        return AgentError(
            f"The turn failed with an unexpected {type(exc).__name__}"
            + (f": {detail}" if detail else "")
            + ". This is likely a bug in a tool, hook or provider; see the traceback in `.cause`.",
            cause=exc,
        )


def _is_cancellation(exc: BaseException) -> bool:
    return any((c.__module__, c.__qualname__) in _CANCELLATION for c in type(exc).__mro__)


class AgentLLMError(AgentError):
    """A model call failed (after the LLM layer's own retries)."""

    def __init__(self, cause: LLMError, message: str | None = None) -> None:
        super().__init__(message or _llm_message(cause), cause=cause)
        self.cause: LLMError = cause

    def is_recoverable(self) -> bool:
        return self.cause.is_retryable


def _llm_message(cause: LLMError) -> str:
    if cause.advice is not None:
        advice = cause.advice
    elif isinstance(cause, ContextWindowExceededError):
        # The cause already says to shorten the history; say how agcore does it for you.
        advice = ("To compact the history automatically, give the session a context transform "
                  "(agcore.context.create_context_transform, or default_compaction with the window "
                  "size; the CLI: --compact, --context-window N).")
    elif isinstance(cause, AuthenticationError):
        advice = "Fix the provider's credentials, then run the turn again."
    elif isinstance(cause, ModelNotFoundError):
        advice = ""  # its message names the fix already (the model id, the URL, `ollama pull`)
    elif isinstance(cause, InvalidRequestError):
        advice = ("Check the request options (max_tokens, temperature, tools' input schemas, "
                  "request.extra) and what on_llm_request hooks changed.")
    elif cause.is_retryable:
        advice = "It is transient: run the turn again later (the session history is intact)."
    else:
        advice = "Check the provider's configuration, then run the turn again."
    # The cause's own message usually ends in a sentence of advice: no second full stop after it.
    text = str(cause).rstrip(".")
    text += "" if text.endswith(("?", "!")) else "."
    return f"The model call failed: {text}" + (f" {advice}" if advice else "")


class AgentToolError(AgentError):
    """A tool-system failure outside a tool result (a name collision, a missing dependency...)."""

    recoverable = True

    def __init__(self, cause: ToolError, message: str | None = None) -> None:
        name = f"Tool '{cause.tool_name}'" if cause.tool_name else "A tool"
        text = cause.message or type(cause).__name__
        super().__init__(message or f"{name} failed: {text}", cause=cause)
        self.cause: ToolError = cause


class AgentMemoryError(AgentError):
    """The memory store or retriever failed; the turn may go on without it."""

    recoverable = True

    def __init__(self, cause: MemoryStoreError, message: str | None = None) -> None:
        super().__init__(
            # The store's own message says what to do (MemoryStoreError's contract): no second advice.
            message or f"The memory store failed: {str(cause).rstrip('.')}. The turn itself can go on "
            "without memory.",
            cause=cause,
        )
        self.cause: MemoryStoreError = cause


class PlanParseError(AgentError):
    """A plan (the model's, or a hand-written one) could not be read. ``raw`` is the text given;
    ``problem`` the bare reason (``message`` may wrap it in advice meant for the model)."""

    recoverable = True

    def __init__(
        self, message: str, *, raw: str | None = None, cause: BaseException | None = None,
        problem: str | None = None,
    ) -> None:
        super().__init__(message, cause=cause)
        self.raw = raw
        self.problem = problem


class HookBlocked(AgentError):
    """A hook stopped the turn: a gatekeeper hook raised, or a hook refused to let the turn go on."""

    def __init__(
        self,
        hook_name: str,
        plugin_name: str | None = None,
        reason: str | None = None,
        *,
        cause: BaseException | None = None,
    ) -> None:
        who = f"plugin '{plugin_name}'" if plugin_name else "a plugin"
        if reason:  # a policy said no on purpose: nothing is broken, the reason is the message
            text = f"Hook '{hook_name}' of {who} stopped the turn: {reason.rstrip('.')}."
        else:
            why = f"it raised {type(cause).__name__}: {cause}" if cause is not None else "no reason given"
            fix = (
                f"Fix the plugin or unregister it (HookExecutor.unregister({plugin_name!r}))"
                if plugin_name
                else "Fix or unregister the plugin"
            )
            text = f"Hook '{hook_name}' of {who} stopped the turn: {why}. {fix}, then run the turn again."
        super().__init__(text, cause=cause)
        self.hook_name = hook_name
        self.plugin_name = plugin_name
        self.reason = reason

    @classmethod
    def from_failure(cls, failure: HookFailure) -> HookBlocked:
        """The error for a gatekeeper impl that raised (``agcore.hooks.HookFailure``)."""
        return cls(failure.hook_name, failure.plugin_name, cause=failure.error)


class ConfigError(AgentError):
    """The runtime is assembled wrong; ``piece`` names the part to fix (``"provider"``, ``"tools"``...)."""

    def __init__(self, message: str, *, piece: str | None = None, cause: BaseException | None = None) -> None:
        super().__init__(message, cause=cause)
        self.piece = piece


class Cancelled(AgentError):
    """The turn was cancelled (by its caller's cancel scope, or the session). The history stays valid:
    call ``submit_turn`` again to continue."""

    def __init__(self, message: str | None = None, *, cause: BaseException | None = None) -> None:
        super().__init__(
            message or "The turn was cancelled before it finished; the history is kept valid, so the "
            "session can take another turn.",
            cause=cause,
        )


class UnreadableToolCalls(AgentError):
    """The model wrote its tool calls as text and, after being told what was wrong and asked again,
    still replied with nothing but calls that could not be read (or tool results it made up itself):
    no call to run and no answer. ``problems`` says what could not be read; ``text_mode`` whether the
    tools were described in the prompt (text mode) or offered natively (auto mode, before a switch).
    The history stays valid: the session can take another turn."""

    recoverable: ClassVar[bool] = True

    def __init__(self, problems: list[str], *, text_mode: bool, rereads: int) -> None:
        listing = "; ".join(p.rstrip(".") for p in problems) or "no tool call could be read"
        if text_mode:
            advice = (
                "This model does not follow the text tool-call protocol well enough: use a larger or "
                "tool-trained model, or, if its server supports native tool calling (llama.cpp with "
                "--jinja, vLLM with a tool-call parser, Ollama), set AgentConfig.text_mode_tools='off'"
            )
        else:
            advice = (
                "The model writes its calls as text but not in a form that could be run: set "
                "AgentConfig.text_mode_tools='on' so the prompt teaches it the call form and lists the "
                "tools, or use a model with native tool calling"
            )
        super().__init__(
            f"The model's reply held only tool calls that could not be read, after asking it again "
            f"{rereads} times ({listing}). {advice}. The history is kept valid: the session can take "
            "another turn."
        )
        self.problems = list(problems)
        self.text_mode = text_mode


class NoAnswer(AgentError):
    """The model said nothing that answers the task: its final reply was empty, the runtime's own
    reminder echoed back, only a tool call written as text, or the task restated (``why`` says which),
    still so after it was asked for an answer. Nothing shows the task was done. Recoverable: the
    history stays valid, and another turn may answer."""

    recoverable: ClassVar[bool] = True

    def __init__(self, why: str) -> None:
        super().__init__(
            f"The model ended without an answer: its reply {why}, again after it was asked for one, so "
            "nothing shows the task was done. Run it again (a larger model answers more reliably), or "
            "give acceptance checks that verify the work (agcore run --check CMD)."
        )
        self.why = why
