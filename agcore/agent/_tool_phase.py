"""The tool phase of one loop iteration: every call of an assistant reply gets exactly one result.

Per call, in the model's order: new steering input skips this and every later call; the repetition
check; ``before_tool_call`` (deny -> an error result the model reads, rewrite -> new arguments); the
confirmation callback for tools that need it; then client calls are set aside for the caller and
server calls run — one after another, or, with ``config.parallel_tool_calls``, together in an anyio
task group once every call has been vetted. ``after_tool_call`` may then rewrite each result.

Results land in the turn's ``Batch`` the moment they exist, so a cancelled phase still leaves the
finished results for the loop to record next to "cancelled" ones for the rest.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from agcore.agent._batch import Batch, error_result
from agcore.agent._cycles import CycleTracker, Verdict, repeat_verdict
from agcore.agent._turn import RepetitionTracker
from agcore.llm.types import ToolUseBlock, UserMessage
from agcore.tools import Tool, ToolContext, ToolRegistry

if TYPE_CHECKING:
    from agcore.agent._config import AgentConfig
    from agcore.hooks import ConfirmationAnswer, HookContext, HookExecutor

__all__ = [
    "NOT_RUN",
    "SKIPPED",
    "ToolPhase",
    "denied_message",
    "not_approved_message",
    "not_offered_message",
    "repeated_message",
    "run_after_hooks",
    "unavailable_message",
]

Confirm = Callable[[ToolUseBlock, Tool], Any]

NOT_RUN = "Not run: the turn was stopped before this call ran."
SKIPPED = (
    "Skipped: the user sent a new message before this call ran. Read the new message and decide "
    "what to do next."
)


# The texts the model reads for calls the phase does not run. Functions, so another runtime running
# the same phase as separate steps (agcore.integrations.langgraph) words them identically.


def repetition_check(
    call: ToolUseBlock, repetition: RepetitionTracker, config: AgentConfig, cycles: CycleTracker | None
) -> tuple[Verdict, str]:
    """The repetition guard's verdict on ``call`` (counted in ``repetition``) and the result the call
    gets when it is not run: the one check both backends make before a call runs."""
    limit = config.repetition_limit
    verdict = repeat_verdict(repetition.see(call), limit, config.repetition_action)
    if verdict == "stop":
        return verdict, repeated_message(call.name, repetition.count, stop=True)
    if verdict == "nudge":
        failed = cycles is not None and cycles.last_failed  # nothing to use: say how to get on
        return verdict, repeated_message(call.name, limit, stop=False, failed=failed)
    return verdict, ""


def repeated_message(name: str, limit: int, *, stop: bool, failed: bool = False) -> str:
    if stop:
        return (
            f"Stopped: '{name}' was called with the same arguments {limit} times in a "
            "row, so the turn was stopped."
        )
    if failed:  # nothing to use: say how to get on, not to wrap up
        return (
            f"Not run: you have called '{name}' with these same arguments {limit} times in a "
            "row and it failed the same way each time. Read the error message, then change the "
            "arguments or try a different tool or approach. The same call again stops the turn."
        )
    return (
        f"Not run: you have called '{name}' with these same arguments {limit} times in a "
        "row, and the result will not change. Use the earlier result, or try a different "
        "approach. The same call again stops the turn."
    )


def denied_message(name: str, reason: str | None) -> str:
    return f"The call to '{name}' was denied: {reason or 'a policy does not allow it'}"


def unavailable_message(name: str) -> str:
    return (
        f"Not run: '{name}' needs the user's approval and this session has no way to ask, "
        "so it was not run. Tell the user what you wanted to do, or reach the goal another way."
    )


def not_approved_message(name: str) -> str:
    return (
        f"Not run: the user did not approve this call to '{name}'. Ask the user how to proceed, "
        "or try something else."
    )


def not_offered_message(name: str, offered: frozenset[str] | None) -> str:
    available = ", ".join(sorted(offered or ())) or "none"
    return f"Not run: '{name}' is not one of the tools available to you here. Use one of: {available}."


async def run_after_hooks(hooks: HookExecutor, hook_context: Callable[[], HookContext], batch: Batch) -> None:
    """``after_tool_call`` over the batch's answered calls, in the model's order (results the phase
    made up itself are not shown to it); a rewritten result keeps answering its call."""
    for call in batch.calls:
        done = batch.outcome(call.id)
        if done is None or not done.hookable:
            continue
        rewritten = await hooks.after_tool_call(hook_context(), call, done.result, done.status, done.duration)
        if rewritten is not done.result:
            if rewritten.tool_use_id != call.id:
                rewritten = rewritten.model_copy(update={"tool_use_id": call.id})
            done.result = rewritten


class ToolPhase:
    """Runs the calls of one assistant reply; see the module docstring for the order of checks."""

    def __init__(
        self,
        *,
        registry: ToolRegistry,
        hooks: HookExecutor,
        hook_context: Callable[[], HookContext],
        config: AgentConfig,
        tool_context: ToolContext,
        confirm: Confirm | None,
        always_confirmed: set[str],
        steering: Callable[[], list[UserMessage]],
        repetition: RepetitionTracker,
        offered: frozenset[str] | None = None,
        cycles: CycleTracker | None = None,
    ) -> None:
        self._registry = registry
        self._hooks = hooks
        self._hook_context = hook_context
        self._config = config
        self._tool_context = tool_context
        self._confirm = confirm
        self._always = always_confirmed
        self._drain_steering = steering
        self._repetition = repetition
        self._offered = offered
        self._cycles = cycles
        #: The call the repetition guard stopped the turn at (None: it did not).
        self.repeated_call: ToolUseBlock | None = None

    # ------------------------------------------------------------------------------------ driver

    async def run(self, batch: Batch) -> bool:
        """Give every call of ``batch`` its result (client calls: set aside in ``batch.client_calls``).
        True when the repetition limit stopped the turn."""
        calls = batch.calls
        answer = batch.answer
        parallel = self._config.parallel_tool_calls
        runnable: list[tuple[ToolUseBlock, ToolUseBlock]] = []  # (original, to run)
        wants_before = self._hooks.has_impls("before_tool_call")
        stopped = False
        for i, call in enumerate(calls):
            steering = self._drain_steering()
            if steering:
                batch.steering = steering
                for later in calls[i:]:
                    answer(later, error_result(later.id, SKIPPED), "skipped", hookable=False)
                    batch.skipped.append(later.id)
                break
            verdict, message = repetition_check(call, self._repetition, self._config, self._cycles)
            if verdict == "stop":
                answer(call, error_result(call.id, message), "repeated", hookable=False)
                for later in calls[i + 1 :]:
                    answer(later, error_result(later.id, NOT_RUN), "not_run", hookable=False)
                self.repeated_call = call
                stopped = True
                break
            if verdict == "nudge":
                answer(call, error_result(call.id, message), "repeated")
                continue
            tool = self._registry.get(call.name)
            if tool is not None and self._offered is not None and tool.name not in self._offered:
                # The agent did not offer it (Agent.tool_definitions filtered it out): hiding a tool
                # must also keep it from running, whatever the model guesses.
                hidden = not_offered_message(call.name, self._offered)
                answer(call, error_result(call.id, hidden), "unknown_tool")
                continue
            if tool is None or call.parse_error is not None:
                # Unknown tool or unreadable arguments: the registry words the error for the model.
                await self._execute(batch, call, call)
                continue
            to_run = call
            if wants_before:
                decision = await self._hooks.before_tool_call(self._hook_context(), call)
                if decision.action == "deny":
                    answer(call, error_result(call.id, denied_message(call.name, decision.reason)), "denied")
                    continue
                if decision.action == "rewrite" and decision.arguments is not None:
                    to_run = call.model_copy(update={"input": dict(decision.arguments)})
            if tool.requires_confirmation and tool.name not in self._always:
                refused = self._registry.precheck(to_run)  # a call the tool refuses is never asked about
                if refused is not None:
                    answer(call, error_result(call.id, refused), "denied")
                    continue
                refusal = await self._ask(to_run, tool)
                if refusal is not None:
                    answer(call, error_result(call.id, refusal), "not_approved")
                    continue
            if tool.mode == "client":
                batch.client_calls.append(to_run)
            elif parallel:
                runnable.append((call, to_run))
            else:
                await self._execute(batch, call, to_run)
        if len(runnable) == 1:
            await self._execute(batch, *runnable[0])
        elif runnable:
            async with anyio.create_task_group() as group:
                for original, to_run in runnable:
                    group.start_soon(self._execute, batch, original, to_run)
        if self._hooks.has_impls("after_tool_call"):
            await run_after_hooks(self._hooks, self._hook_context, batch)
        return stopped

    # ------------------------------------------------------------------------------------- steps

    async def _ask(self, call: ToolUseBlock, tool: Tool) -> str | None:
        """None when approved; otherwise the result text telling the model it was not approved."""
        if self._confirm is None:
            await self._report_confirmation(call, "unavailable")
            return unavailable_message(tool.name)
        answer = self._confirm(call, tool)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer == "always":
            self._always.add(tool.name)
            await self._report_confirmation(call, "always")
            return None
        if answer is True:
            await self._report_confirmation(call, "yes")
            return None
        await self._report_confirmation(call, "no")
        return not_approved_message(tool.name)

    async def _report_confirmation(self, call: ToolUseBlock, answer: ConfirmationAnswer) -> None:
        if self._hooks.has_impls("on_confirmation"):
            await self._hooks.on_confirmation(self._hook_context(), call, answer)

    async def _execute(self, batch: Batch, original: ToolUseBlock, call: ToolUseBlock) -> None:
        # The registry applies the timeout: the tool's own, else its default, else the config's.
        execution = await self._registry.execute_detailed(
            call, self._tool_context, default_timeout=self._config.tool_timeout
        )
        # A before_tool_call rewrite changes only the arguments, so the result answers ``original``.
        batch.answer(original, execution.result, execution.status, duration=execution.duration)
