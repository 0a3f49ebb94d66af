"""The worker side: the activities that do what a workflow may not (model calls, tools, reading the
bundle). Real providers, tools, MCP servers and their dependencies live here only.

* ``agcore.describe_agent``: the agent as the worker's bundle defines it (``AgentSpec``);
* ``agcore.llm_call``: one ``LLMRequest`` in, one ``LLMResponse`` out (streamed, its text published
  on the workflow's text stream as it comes, when the workflow streams). The provider's own retries are
  off (Temporal's retry policy retries); an ``LLMError`` becomes an ``ApplicationError`` that is
  non-retryable unless ``is_retryable``, with ``retry_after`` as the next retry's delay and the error
  as data (``ErrorEvent``) so the workflow rebuilds the same typed error;
* ``agcore.tool_call``: one tool call in, one result out (``ToolRegistry.execute_detailed``: every
  tool-side failure is already a result the model reads), heartbeating while the tool runs and with
  each progress line it reports; the lines travel back with the result, and the session records them.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Collection
from datetime import timedelta
from typing import Any, TypeVar

import anyio
from temporalio import activity
from temporalio.contrib.workflow_streams import WorkflowStreamClient
from temporalio.exceptions import ApplicationError

from agcore.agent import Agent, BasicAgent, ConfigError, RuntimeBundle, bundle_resolve_provider
from agcore.integrations.temporal._handover import handed_over
from agcore.integrations.temporal._types import (
    BUNDLE_ERROR,
    MAX_PROGRESS_LINES,
    TEXT_TOPIC,
    AgentSpec,
    LLMCallInput,
    TextChunk,
    ToolCallInput,
    ToolCallOutput,
    ToolSpec,
)
from agcore.llm import BaseProvider, LLMError, LLMProvider
from agcore.llm.events import DoneEvent, ErrorEvent, TextDelta
from agcore.llm.retry import NO_RETRY
from agcore.llm.types import LLMRequest, LLMResponse
from agcore.tools import ToolContext, ToolProgress

__all__ = ["AgentActivities", "BundleFactory", "bundle_failure"]

#: Builds the worker's bundle (sync or async); called once per worker, on the first activity.
BundleFactory = Callable[[], "RuntimeBundle | Awaitable[RuntimeBundle]"]

ResultT = TypeVar("ResultT")

#: Seconds between heartbeats while a tool runs (the workflow's heartbeat timeout is several times this).
HEARTBEAT_INTERVAL = 1.0
#: How long streamed text is gathered before it is sent to the workflow (one signal per batch).
STREAM_BATCH_INTERVAL = timedelta(milliseconds=100)


class AgentActivities:
    """The activities of one worker, over the bundle ``bundle_factory`` builds.

    ``agent`` names the agent and picks the tools it offers (default: ``BasicAgent("agent")``
    offering every tool of the bundle); ``idempotent_tools`` names the tools that are safe to run
    again when a worker is lost mid-call (every other tool runs at most once).
    Calls are counted per activity name in ``calls`` (what ran on this worker).
    """

    def __init__(
        self,
        bundle_factory: BundleFactory,
        *,
        agent: Agent | None = None,
        idempotent_tools: Collection[str] = (),
    ) -> None:
        self._factory = bundle_factory
        self._agent: Agent = agent if agent is not None else BasicAgent("agent")
        self._idempotent = frozenset(idempotent_tools)
        self._bundle: RuntimeBundle | None = None
        self._lock = anyio.Lock()
        self.calls: dict[str, int] = {}

    @property
    def activities(self) -> list[Callable[..., Any]]:
        """The activity functions to register with a ``temporalio.worker.Worker``."""
        return [self.describe_agent, self.llm_call, self.tool_call]

    async def bundle(self) -> RuntimeBundle:
        """The worker's bundle, built on first use (with the provider's own retries turned off)."""
        async with self._lock:
            if self._bundle is None:
                made: Any = self._factory()
                if inspect.isawaitable(made):
                    made = await made
                if not callable(getattr(made, "tool_registry", None)):
                    raise ConfigError(
                        f"The worker's bundle factory returned {made!r}, not a RuntimeBundle: make it "
                        "return AgentBuilder()...build().",
                        piece="bundle_factory",
                    )
                _without_retries(made.provider())
                self._bundle = made
            return self._bundle

    async def _bundle_or_fail(self) -> RuntimeBundle:
        try:
            return await self.bundle()
        except Exception as exc:
            raise bundle_failure(exc) from exc

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    # ------------------------------------------------------------------------------ activities

    @activity.defn(name="agcore.describe_agent")
    async def describe_agent(self) -> AgentSpec:
        """The agent, its tools and config as this worker defines them."""
        self._count("describe_agent")
        bundle = await self._bundle_or_fail()
        try:
            registry = bundle.tool_registry()
            specs: list[ToolSpec] = []
            for definition in self._agent.tool_definitions(bundle):
                tool = registry.get(definition.name)
                specs.append(ToolSpec(
                    definition=definition,
                    mode=tool.mode if tool is not None else "server",
                    requires_confirmation=tool.requires_confirmation if tool is not None else False,
                    idempotent=definition.name in self._idempotent,
                    timeout=tool.timeout if tool is not None else None,
                ))
            provider = bundle.provider()
            return AgentSpec(
                name=self._agent.name,
                system_prompt=self._agent.system_prompt,
                tools=specs,
                config=bundle.config(),
                provider_name=provider.provider_name if provider is not None else "resolver",
                model_id=provider.model_id if provider is not None else "resolved per call",
                plugins_key=activity.info().task_queue,
            )
        except Exception as exc:  # a broken bundle does not mend itself: fail with its message
            raise bundle_failure(exc) from exc

    @activity.defn(name="agcore.llm_call")
    async def llm_call(self, call: LLMCallInput) -> LLMResponse:
        """One model call through the worker's provider."""
        self._count("llm_call")
        request = _request_of(call)
        bundle = await self._bundle_or_fail()
        try:
            provider = await bundle_resolve_provider(bundle, None, request)
            _without_retries(provider)
            # Heartbeats while the model answers: a call lost with its worker is retried after the
            # heartbeat timeout (seconds), not after the whole call's timeout.
            if call.stream_key is None:
                return await _heartbeating(provider.complete(request))
            return await _heartbeating(_streamed(provider, request, call.stream_key))
        except LLMError as exc:
            event = ErrorEvent.from_exception(exc)
            delay = timedelta(seconds=exc.retry_after) if exc.retry_after else None
            raise ApplicationError(
                str(exc), event.model_dump(mode="json"), type=type(exc).__name__,
                non_retryable=not exc.is_retryable, next_retry_delay=delay,
            ) from exc
        except ConfigError as exc:
            raise ApplicationError(str(exc), type="ConfigError", non_retryable=True) from exc

    @activity.defn(name="agcore.tool_call")
    async def tool_call(self, call: ToolCallInput) -> ToolCallOutput:
        """One server tool call; heartbeats every ``HEARTBEAT_INTERVAL`` seconds and per progress line."""
        self._count("tool_call")
        self._count(f"tool:{call.call.name}")
        bundle = await self._bundle_or_fail()  # not "interrupted": the worker cannot build its tools
        dependencies: dict[str, Any] = {}
        for name in ("memory_store", "retriever"):
            part = getattr(bundle, name)()
            if part is not None:
                dependencies[name] = part

        reported: list[ToolProgress] = []

        local = activity.info().is_local  # a local activity has no heartbeat

        async def progress(update: ToolProgress) -> None:
            if not local:
                activity.heartbeat(update.message)
            if len(reported) >= MAX_PROGRESS_LINES:  # a chatty tool: keep the first lines and the last
                del reported[MAX_PROGRESS_LINES // 2]
            reported.append(update)

        context = ToolContext(session_id=call.session_id, dependencies=dependencies, progress=progress)
        async with anyio.create_task_group() as group:
            group.start_soon(_heartbeat_forever)
            execution = await bundle.tool_registry().execute_detailed(
                call.call, context, default_timeout=call.default_timeout
            )
            group.cancel_scope.cancel()
        error = execution.error
        return ToolCallOutput(
            result=execution.result, status=execution.status, attempts=execution.attempts,
            duration=execution.duration, error=f"{type(error).__name__}: {error}" if error else None,
            progress=reported,
        )


def _request_of(call: LLMCallInput) -> LLMRequest:
    """The call's request: carried, or handed over in-process by the workflow (a local activity)."""
    if call.request is not None:
        return call.request
    request = handed_over(call.request_key) if call.request_key is not None else None
    if request is None:  # a local activity runs where its workflow task runs: this is a bug
        raise ApplicationError(
            f"the model request {call.request_key!r} was not handed over in this worker process (a "
            "local activity runs in the worker of its workflow task): report this agcore bug, and "
            "use ActivityOptions(local_model_calls=False) meanwhile",
            type="RequestNotHandedOver", non_retryable=True,
        )
    return request


async def _streamed(provider: LLMProvider, request: LLMRequest, key: str) -> LLMResponse:
    """The reply, streamed: its text deltas published on the workflow's text stream as they come."""
    attempt = activity.info().attempt
    publisher = WorkflowStreamClient.from_within_activity(batch_interval=STREAM_BATCH_INTERVAL)
    topic = publisher.topic(TEXT_TOPIC, type=TextChunk)
    async with publisher:
        if attempt > 1:
            topic.publish(TextChunk(key=key, attempt=attempt, restart=True))
        async for event in provider.stream(request):
            if isinstance(event, TextDelta):
                topic.publish(TextChunk(key=key, attempt=attempt, text=event.text))
                activity.heartbeat()
            elif isinstance(event, DoneEvent):
                return LLMResponse(message=event.message, request_id=event.request_id)
            elif isinstance(event, ErrorEvent):
                raise event.to_exception()
    raise LLMError(f"{provider!r} ended its stream without a reply; this is a provider bug")


async def _heartbeating(call: Awaitable[ResultT]) -> ResultT:
    """``call``'s result (or its error, unwrapped), heartbeating every ``HEARTBEAT_INTERVAL`` meanwhile."""
    if activity.info().is_local:
        return await call  # no heartbeat to send: no task group to run it in
    outcome: list[ResultT] = []
    failure: list[Exception] = []
    async with anyio.create_task_group() as group:
        group.start_soon(_heartbeat_forever)
        try:
            outcome.append(await call)
        except Exception as exc:  # raised below, not wrapped in the task group's ExceptionGroup
            failure.append(exc)
        group.cancel_scope.cancel()
    if failure:
        raise failure[0]
    return outcome[0]


async def _heartbeat_forever() -> None:
    if activity.info().is_local:
        return  # a local activity has no heartbeat: its workflow task's timeout watches it
    while True:
        # First after an interval: a call shorter than that sends no heartbeat (one RPC fewer).
        await anyio.sleep(HEARTBEAT_INTERVAL)
        activity.heartbeat()


def bundle_failure(exc: Exception) -> ApplicationError:
    """A bundle the worker cannot build or describe, as a non-retryable activity failure that names the
    error's type and says its message (a missing key or a broken import does not mend itself);
    ``details`` mark it, so the workflow tells it from a lost worker."""
    name = type(exc).__name__
    return ApplicationError(
        f"the worker's bundle factory failed: {name}: {exc}", {BUNDLE_ERROR: name}, type=name,
        non_retryable=True,
    )


def _without_retries(provider: LLMProvider | None) -> None:
    # Temporal's retry policy is the one retry layer: a provider retrying inside the activity would
    # multiply the attempts and hide the failures from the history.
    if isinstance(provider, BaseProvider):
        provider.retry_policy = NO_RETRY
