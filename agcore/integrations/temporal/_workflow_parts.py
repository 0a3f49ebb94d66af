"""The workflow side of the seams: a provider, a tool registry and a hook executor that the unchanged
agcore loop runs with inside a workflow.

* ``ActivityProvider``: ``complete(request)`` schedules ``agcore.llm_call`` and rebuilds the typed
  ``LLMError`` from a failed activity, so the loop ends the turn exactly as in-process;
* ``ActivityToolRegistry``: the worker's tools as definitions; ``execute_detailed`` schedules
  ``agcore.tool_call``. A non-idempotent tool runs at most once: an activity lost with its worker (or
  timed out) is answered with the loop's "interrupted" result, never run again;
* ``ReplaySafeHookExecutor``: observers (hooks that only watch: logging, audit, tracing) fire only when
  the workflow is not replaying, so a replay does not report twice; gatekeepers and result rewriters
  run on every replay, as the loop's decisions depend on them (they must be deterministic).
"""

from __future__ import annotations

# Temporal's workflow event loop is asyncio's; see ``run_activity`` for why this module uses it.
import asyncio  # noqa: TID251
from collections.abc import AsyncIterator, Sequence
from datetime import timedelta
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

from agcore._clock import new_id, use_clock
from agcore.agent import INTERRUPTED, RuntimeBundle
from agcore.hooks import HOOK_KINDS, HOOK_RULES, HookExecutor, Ignore, multicall
from agcore.integrations.temporal._clock import RecordingClock
from agcore.integrations.temporal._handover import hand_over
from agcore.integrations.temporal._types import (
    BUNDLE_ERROR,
    ActivityOptions,
    AgentSpec,
    LLMCallInput,
    ToolCallInput,
    ToolCallOutput,
)
from agcore.llm import LLMError, message_to_events
from agcore.llm.events import ErrorEvent, StreamEvent
from agcore.llm.types import LLMRequest, LLMResponse, ToolDefinition, ToolResultBlock, ToolUseBlock
from agcore.tools import Tool, ToolContext, ToolExecution, ToolRegistry

__all__ = [
    "ActivityProvider", "ActivityToolRegistry", "ReplaySafeHookExecutor", "SpecAgent", "is_bundle_failure",
    "workflow_bundle",
]

#: Observers whose result nobody reads: safe to skip on replay. ``after_tool_call`` is an observer
#: that may rewrite the result, so it runs on replay too.
_SKIPPED_ON_REPLAY = frozenset(name for name, kind in HOOK_KINDS.items() if kind == "observer") - {
    "after_tool_call"
}


ResultT = TypeVar("ResultT")


#: The change that made model calls local activities. A history recorded before it replays with its
#: model calls as they were (scheduled activities); a run started since records this marker once.
LOCAL_MODEL_CALLS_PATCH = "agcore.local-llm-call"
#: The same for the calls of tools declared idempotent.
LOCAL_TOOLS_PATCH = "agcore.local-idempotent-tool"


async def run_activity(
    activity: str, arg: Any, *, result_type: type[ResultT], local: bool = False, **options: Any
) -> ResultT:
    """``workflow.execute_activity`` (``execute_local_activity`` if ``local``), except that a
    cancelled caller is cancelled at once.

    Awaited directly, a cancelled activity resolves only in the next workflow activation; anyio's
    cancel scopes (a task group, ``CancelScope.cancel()``) re-deliver a cancellation with
    ``call_soon`` until the task is done, which inside one activation never ends (a deadlock).
    Shielded, the caller gets its ``CancelledError`` straight away and the activity is asked to
    cancel (it learns of it at its next heartbeat).
    """
    start = workflow.start_local_activity if local else workflow.start_activity
    handle = start(activity, arg, result_type=result_type, **options)
    try:
        return await asyncio.shield(handle)
    except asyncio.CancelledError:
        handle.cancel()
        raise


class ActivityProvider:
    """An ``LLMProvider`` whose calls are ``agcore.llm_call`` activities."""

    def __init__(self, spec: AgentSpec, options: ActivityOptions, *, stream_text: bool = False) -> None:
        self._provider_name = spec.provider_name
        self._model_id = spec.model_id
        self._options = options
        self._stream_text = stream_text

    @property
    def provider_name(self) -> str:
        """The worker's provider name, as the agent spec reported it."""
        return self._provider_name

    @property
    def model_id(self) -> str:
        """The worker's model id, as the agent spec reported it."""
        return self._model_id

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """The reply to ``request`` from the ``agcore.llm_call`` activity; a failed call raises the
        typed ``LLMError`` the worker's provider raised."""
        options = self._options
        # The key comes from the workflow's deterministic ids: the same on replay.
        key = new_id() if self._stream_text else None
        local = self._runs_locally()
        # A local activity has no heartbeat: a call lost with its worker shows as its workflow task
        # timing out, and the next worker runs the call again.
        heartbeat = {} if local else {"heartbeat_timeout": timedelta(seconds=options.llm_heartbeat_timeout)}
        # A local call's retries wait inside its workflow task (heartbeating it) rather than on a
        # timer, up to llm_timeout: the task in flight is how a status reader sees the turn running.
        threshold = {"local_retry_threshold": timedelta(seconds=options.llm_timeout)} if local else {}
        # A local call's request stays in this process (see _handover): only its key is encoded.
        call = (LLMCallInput(request_key=hand_over(request, workflow.info().run_id)) if local
                else LLMCallInput(request=request, stream_key=key))
        try:
            response = await run_activity(
                "agcore.llm_call",
                call,
                result_type=LLMResponse,
                local=local,
                start_to_close_timeout=timedelta(seconds=options.llm_timeout),
                retry_policy=RetryPolicy(
                    initial_interval=timedelta(seconds=options.llm_initial_retry_interval),
                    maximum_attempts=options.llm_max_attempts,
                ),
                **heartbeat,
                **threshold,
            )
        except (ActivityError, ApplicationError) as exc:  # a local activity's failure comes unwrapped
            raise _llm_error(exc, self._provider_name, self._model_id) from exc
        return response

    def _runs_locally(self) -> bool:
        # A model call may run twice (it is retried anyway), so it can be a local activity: run by
        # the worker inside the workflow task that asked for it, two fewer trips through the server
        # per call. A streamed call stays a scheduled activity: it publishes to the workflow.
        if not self._options.local_model_calls or self._stream_text:
            return False
        return workflow.patched(LOCAL_MODEL_CALLS_PATCH)

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        """The activity's reply replayed as stream events (deltas reach clients through the workflow
        stream while the activity runs)."""
        # A workflow cannot watch tokens arrive: the whole reply, then its events.
        try:
            response = await self.complete(request)
        except LLMError as error:
            yield ErrorEvent.from_exception(error)
            return
        for event in message_to_events(response.message, request_id=response.request_id):
            yield event

    async def health_check(self) -> bool:
        """Always True in the workflow: the worker's provider is checked where it runs."""
        return True

    def __repr__(self) -> str:
        return f"ActivityProvider({self._provider_name}:{self._model_id})"


def worker_error(exc: ActivityError | ApplicationError) -> BaseException | None:
    """The error behind a failed activity: a scheduled one's cause; a local activity's failure comes
    as an ``ApplicationError`` itself, with the worker's own error one level down."""
    cause = exc.cause if isinstance(exc, ActivityError) else exc
    nested = cause.cause if isinstance(cause, ApplicationError) and not cause.details else None
    return nested if isinstance(nested, ApplicationError) else cause


def _llm_error(exc: ActivityError | ApplicationError, provider: str, model: str) -> LLMError:
    cause = worker_error(exc)
    if isinstance(cause, ApplicationError) and cause.details:
        detail = cause.details[0]
        if isinstance(detail, dict) and "error_type" in detail:
            return ErrorEvent.model_validate(detail).to_exception()
        if is_bundle_failure(cause):
            return LLMError(f"Not called: {cause.message}; fix the worker.", provider=provider, model=model)
    reason = str(cause) if cause is not None else str(exc)
    return LLMError(
        f"The model call activity failed ({reason}); check that a worker serves this task queue.",
        provider=provider, model=model,
    )


def is_bundle_failure(error: BaseException | None) -> bool:
    """Whether ``error`` (an activity's cause) is a worker's bundle factory failing (``bundle_failure``)."""
    if not isinstance(error, ApplicationError) or not error.details:
        return False
    detail = error.details[0]
    return isinstance(detail, dict) and BUNDLE_ERROR in detail


class ActivityToolRegistry(ToolRegistry):
    """The worker's tools, known by their specs; server calls run as ``agcore.tool_call`` activities."""

    def __init__(self, spec: AgentSpec, options: ActivityOptions, session_id: str) -> None:
        super().__init__()
        self._options = options
        self._session_id = session_id
        self._specs = {t.definition.name: t for t in spec.tools}
        for tool_spec in spec.tools:
            d = tool_spec.definition
            if tool_spec.mode == "client":
                self.register_client_tool(d)
                self[d.name].requires_confirmation = tool_spec.requires_confirmation
            else:
                self.register(Tool(
                    d.name, d.description, dict(d.input_schema),
                    requires_confirmation=tool_spec.requires_confirmation, timeout=tool_spec.timeout,
                    call=_runs_on_the_worker,
                ))

    def definitions_as_offered(self) -> list[ToolDefinition]:
        """The definitions exactly as the worker's agent offered them."""
        return [t.definition for t in self._specs.values()]

    async def execute_detailed(
        self, call: ToolUseBlock, ctx: ToolContext, *, default_timeout: float | None = None
    ) -> ToolExecution:
        spec = self._specs.get(call.name)
        if spec is None or spec.mode == "client" or call.parse_error is not None:
            # Unknown, client, or unreadable: the registry words the error without running anything.
            return await super().execute_detailed(call, ctx, default_timeout=default_timeout)
        options = self._options
        timeout = spec.timeout if spec.timeout is not None else default_timeout
        close = (timeout if timeout is not None else 3600.0) + options.tool_timeout_margin
        attempts = options.idempotent_tool_attempts if spec.idempotent else 1
        # A tool declared idempotent may run twice, so, like a model call, it can be a local activity;
        # every other tool is a scheduled one, which Temporal runs at most once.
        local = spec.idempotent and options.local_idempotent_tools and workflow.patched(LOCAL_TOOLS_PATCH)
        heartbeat = {} if local else {"heartbeat_timeout": timedelta(seconds=options.tool_heartbeat_timeout)}
        try:
            output = await run_activity(
                "agcore.tool_call",
                ToolCallInput(call=call, session_id=self._session_id, default_timeout=default_timeout),
                result_type=ToolCallOutput,
                local=local,
                start_to_close_timeout=timedelta(seconds=close),
                retry_policy=RetryPolicy(maximum_attempts=attempts),
                **heartbeat,
            )
        except (ActivityError, ApplicationError) as exc:
            cause = worker_error(exc)
            if is_bundle_failure(cause):
                assert isinstance(cause, ApplicationError)
                text = f"Not run: {cause.message}; fix the worker."
            else:
                # Lost with its worker, or timed out: whether it took effect is unknown, so it is not
                # run again (unless declared idempotent, and then Temporal already retried it).
                text = INTERRUPTED
            result = ToolResultBlock(tool_use_id=call.id, content=text, is_error=True)
            return ToolExecution(result, "error", 1, 0.0, exc)
        call_context = ctx.for_call(call)
        for update in output.progress:  # recorded as in-process (ToolLog messages), from the history
            await call_context.report_progress(update.message, fraction=update.fraction)
        return ToolExecution(output.result, output.status, output.attempts, output.duration)


async def _runs_on_the_worker(values: dict[str, Any], ctx: ToolContext) -> Any:
    raise RuntimeError("a durable tool runs on the worker, through ActivityToolRegistry.execute_detailed")


class SpecAgent:
    """The worker's agent inside the workflow: its name, prompt and the tools it offered."""

    def __init__(self, spec: AgentSpec) -> None:
        self.name = spec.name
        self.system_prompt = spec.system_prompt

    def tool_definitions(self, bundle: RuntimeBundle) -> list[ToolDefinition]:
        registry = bundle.tool_registry()
        if isinstance(registry, ActivityToolRegistry):
            return registry.definitions_as_offered()
        return registry.definitions()  # pragma: no cover - a workflow bundle always has one

    def __repr__(self) -> str:
        return f"SpecAgent({self.name!r})"


class ReplaySafeHookExecutor(HookExecutor):
    """A ``HookExecutor`` that keeps side effects from firing again while the workflow replays.

    Pure observer hooks (``on_message``, ``on_turn_result``, ...) do not run at all during a replay.
    Plugins registered with ``observer=True`` (audit logs, tracing, logging: plugins whose hooks
    only record, whichever hooks they use, ``on_llm_request`` and ``after_tool_call`` included) do
    not run during a replay either; the other plugins' gatekeepers and rewrites do, as the loop's
    decisions depend on them.
    """

    def __init__(self) -> None:
        super().__init__()
        self._observers: set[int] = set()

    def register(self, plugin: object, name: str | None = None, *, observer: bool = False) -> str | None:
        """``HookExecutor.register``; ``observer=True``: its hooks never run during a replay."""
        registered = super().register(plugin, name)
        if observer:
            self._observers.add(id(plugin))
        return registered

    async def _dispatch(self, hook_name: str, kwargs: dict[str, object]) -> object:
        # What does not run on a replay runs under the RecordingClock, so it draws no ids from the
        # workflow's sequence (else a replay, skipping it, would hand out different ids after it).
        replaying = workflow.unsafe.is_replaying()
        rule = HOOK_RULES[hook_name]
        if hook_name in _SKIPPED_ON_REPLAY:
            if replaying:
                return None
            with use_clock(_RECORDING):
                return await super()._dispatch(hook_name, kwargs)
        impls = self._callers[hook_name].get_hookimpls()
        recording = [i for i in impls if id(i.plugin) in self._observers]
        if not recording:
            return await super()._dispatch(hook_name, kwargs)
        deciding = [i for i in impls if id(i.plugin) not in self._observers]
        fold = rule.fold()
        # A rewrite hook's fold leaves the rewritten value in kwargs: observers see what was decided.
        result = (await multicall(hook_name, deciding, kwargs, fold, rule.kind == "observer")
                  if deciding else fold.value(kwargs))
        if not replaying:
            with use_clock(_RECORDING):
                await multicall(hook_name, recording, kwargs, Ignore(), True)
        return result


_RECORDING = RecordingClock()


def workflow_bundle(
    spec: AgentSpec, options: ActivityOptions, session_id: str, plugins: list[object],
    *, stream_text: bool = False, observers: Sequence[object] = (),
) -> RuntimeBundle:
    """A bundle for the loop inside a workflow: the worker's config, activity-backed provider and
    tools, ``plugins`` (which run in the workflow: they must be deterministic) and ``observers``
    (plugins that only record: silent during replays)."""
    from dependency_injector import providers

    hooks = ReplaySafeHookExecutor()
    for plugin in plugins:
        hooks.register(plugin)
    for observer in observers:
        hooks.register(observer, observer=True)
    bundle = RuntimeBundle()
    bundle.config.override(providers.Object(spec.config))
    bundle.provider.override(providers.Object(ActivityProvider(spec, options, stream_text=stream_text)))
    bundle.tool_registry.override(providers.Object(ActivityToolRegistry(spec, options, session_id)))
    bundle.hook_executor.override(providers.Object(hooks))
    return bundle
