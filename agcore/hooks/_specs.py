"""The agcore hook specifications. Every hook takes the call's ``HookContext`` first.

An implementation may declare any subset of a hook's arguments (by name, as in pluggy) and may be a
plain function or ``async def``. See the package docstring for how results combine and what happens
when an implementation raises.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Final, Literal, NamedTuple

from agcore.hooks._context import HookContext, ToolCallDecision
from agcore.hooks._folds import AllTrue, Chain, Decide, Fold, Ignore
from agcore.hooks._markers import hookspec
from agcore.llm import AssistantMessage, LLMRequest, ToolResultBlock, ToolUseBlock, UserMessage

__all__ = [
    "HOOK_KINDS",
    "HOOK_RULES",
    "AgcoreHookSpecs",
    "ConfirmationAnswer",
    "HookKind",
    "HookRule",
    "ToolCallStatus",
]

HookKind = Literal["observer", "gatekeeper"]


class HookRule(NamedTuple):
    """How the executor calls one hook. ``kind``: an observer's exception is logged and the run goes
    on; a gatekeeper's becomes ``HookFailure`` and stops the turn. ``fold`` makes the ``Fold`` that
    combines one call's results (a fold fed nothing gives the result of a hook nobody implements)."""

    kind: HookKind
    fold: Callable[[], Fold]


#: The one table the executor is driven by: every agcore hook, its failure semantics, and how its
#: results combine (see the package docstring for the rules in words).
HOOK_RULES: Final[dict[str, HookRule]] = {
    "on_session_start": HookRule("observer", Ignore),
    "on_session_end": HookRule("observer", Ignore),
    "on_turn_start": HookRule("observer", Ignore),
    "on_turn_end": HookRule("gatekeeper", AllTrue),  # any False stops the loop
    "on_llm_request": HookRule("gatekeeper", partial(Chain, "on_llm_request", "request", LLMRequest)),
    "on_llm_response": HookRule("observer", Ignore),
    "before_tool_call": HookRule("gatekeeper", Decide),  # the first deny wins; rewrites chain
    "after_tool_call": HookRule("observer", partial(Chain, "after_tool_call", "result", ToolResultBlock)),
    "on_confirmation": HookRule("observer", Ignore),
    "on_message": HookRule("observer", Ignore),
    "on_plan_step_complete": HookRule("observer", Ignore),
    "on_error": HookRule("observer", Ignore),
    "on_turn_result": HookRule("observer", Ignore),
}

#: Failure semantics per hook (``HOOK_RULES`` in short).
HOOK_KINDS: Final[dict[str, HookKind]] = {name: rule.kind for name, rule in HOOK_RULES.items()}

#: How a tool call ended, as ``after_tool_call`` receives it. The registry's statuses (``ok``,
#: ``error``, ``timeout``, ``unknown_tool``, ``invalid_arguments``, ``parse_error``, and ``denied`` when a
#: guard such as ``CommandGuard`` refused it), then the loop's: ``denied`` (a ``before_tool_call`` veto),
#: ``not_approved`` (the confirmation said no), ``repeated`` (repetition detection answered instead of
#: running it) and ``client`` (the client returned it).
ToolCallStatus = str

#: The answers ``on_confirmation`` reports: ``unavailable`` means the session had no way to ask.
ConfirmationAnswer = Literal["yes", "no", "always", "unavailable"]


class AgcoreHookSpecs:
    """The hooks a plugin may implement, marked ``@agcore.hooks.hookimpl``."""

    @hookspec
    def on_session_start(self, ctx: HookContext) -> None:
        """A session begins (observer)."""

    @hookspec
    def on_session_end(self, ctx: HookContext) -> None:
        """A session ends (observer)."""

    @hookspec
    def on_turn_start(self, ctx: HookContext, user_input: UserMessage) -> None:
        """A turn begins with ``user_input`` (observer)."""

    @hookspec
    def on_turn_end(self, ctx: HookContext, message: AssistantMessage) -> bool | None:
        """The model answered with ``message``; return False to stop the loop (gatekeeper).

        Every implementation runs (billing and persistence plugins see each turn); any False wins."""

    @hookspec
    def on_llm_request(self, ctx: HookContext, request: LLMRequest) -> LLMRequest | None:
        """About to call the model: return a rewritten request, or None to keep it (gatekeeper).

        Rewrites chain: each implementation receives the previous one's request."""

    @hookspec
    def on_llm_response(self, ctx: HookContext, message: AssistantMessage) -> None:
        """The model's complete answer arrived (observer)."""

    @hookspec
    def before_tool_call(self, ctx: HookContext, call: ToolUseBlock) -> ToolCallDecision | None:
        """About to run ``call``: allow, deny (the model sees the reason) or rewrite its arguments
        (gatekeeper). The first deny wins and stops asking; a rewrite is what later implementations see."""

    @hookspec
    def after_tool_call(
        self,
        ctx: HookContext,
        call: ToolUseBlock,
        result: ToolResultBlock,
        status: ToolCallStatus,
        duration: float,
    ) -> ToolResultBlock | None:
        """``call`` ended with ``result``: return a rewritten result, or None (observer with rewrite).

        ``status`` says how it ended (``ToolCallStatus``: ``ok``, ``error``, ``timeout``, ``denied``,
        ``not_approved``...); ``duration`` is how long the tool itself ran, in seconds (0 when it did not
        run). The hook runs once the whole batch of calls has finished, in the model's order. Rewrites
        chain; an implementation that raises is logged and leaves the result as it was."""

    @hookspec
    def on_confirmation(self, ctx: HookContext, call: ToolUseBlock, answer: ConfirmationAnswer) -> None:
        """The user was asked to approve ``call`` and gave ``answer`` (observer): ``yes``, ``no``,
        ``always`` (this tool is approved for the rest of the session) or ``unavailable`` (the session
        has no confirm callback, so the call was not run)."""

    @hookspec
    def on_message(self, ctx: HookContext, message: Any) -> None:
        """An agent-layer message joined the history (observer): persist it here."""

    @hookspec
    def on_plan_step_complete(self, ctx: HookContext, step: Any) -> None:
        """A plan step reached a final status (observer)."""

    @hookspec
    def on_error(self, ctx: HookContext, error: BaseException) -> None:
        """The run hit ``error`` (observer). A failing implementation never masks the original error."""

    @hookspec
    def on_turn_result(self, ctx: HookContext, result: Any) -> None:
        """A turn finished with ``result``, its ``TurnResult`` (observer): ``result.stop`` says how
        (done, client_tools, stopped_by_hook, limit, cancelled, error). It runs after every turn, a
        cancelled one included (shielded from the cancellation), so spans and trace records can close."""
