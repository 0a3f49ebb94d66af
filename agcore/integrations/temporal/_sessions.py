"""An ``AgentSession`` inside a workflow: opened from the worker's ``AgentSpec`` (and a snapshot, after
a continue-as-new), kept in an in-memory ``SessionStore`` so that a snapshot is the store's own record
and messages, and its turns' results turned into data for the client."""

from __future__ import annotations

import importlib
from typing import Any

from agcore.agent import AgentSession, ConfigError, ConfirmCallback, OutputMode, StructuredOutput, TurnResult
from agcore.context import create_context_transform
from agcore.integrations.temporal._plugins import plugins_for
from agcore.integrations.temporal._snapshot_budget import carried_messages
from agcore.integrations.temporal._types import (
    ActivityOptions,
    AgentSpec,
    CompactionOptions,
    SessionSnapshot,
    TurnOutcome,
)
from agcore.integrations.temporal._workflow_parts import SpecAgent, workflow_bundle
from agcore.memory import InMemorySessionStore

__all__ = ["open_session", "outcome", "output_type_named", "snapshot"]


async def open_session(
    spec: AgentSpec,
    options: ActivityOptions,
    session_id: str,
    previous: SessionSnapshot | None,
    confirm: ConfirmCallback | None,
    *,
    stream_text: bool = False,
    compaction: CompactionOptions | None = None,
    run_id: str | None = None,
) -> AgentSession:
    """The session ``session_id``: new, or continued from ``previous`` (calls a lost run left open
    get the loop's "interrupted" results, as after any crash); with ``compaction``, what the model
    sees is compacted (its summaries are model calls: activities); ``run_id``: the workflow run, whose
    observers outlive its eviction from the worker's cache (see ``plugins_for``)."""
    plugins = plugins_for(spec.plugins_key, run_id)
    bundle = workflow_bundle(
        spec, options, session_id, plugins.plugins, stream_text=stream_text, observers=plugins.observers
    )
    agent = SpecAgent(spec)
    store = InMemorySessionStore()
    transform = None
    if compaction is not None:
        summariser = bundle.provider()
        assert summariser is not None  # workflow_bundle always sets the activity-backed provider
        transform = create_context_transform(
            summariser, compaction.max_context_tokens, compaction.threshold_ratio,
            target_ratio=compaction.target_ratio, keep_tail=compaction.keep_tail,
            summary_max_tokens=compaction.summary_max_tokens, model=spec.model_id,
        )
    # The store is written only when a snapshot is taken (snapshot(): a continue-as-new, the close),
    # not at each message of a turn: nothing reads it in between, and a workflow's CPU is its latency.
    if previous is None:
        return AgentSession(agent, session_id, bundle, confirm=confirm, store=store, transform=transform,
                            save_each_message=False)
    await store.create(previous.record)
    if previous.messages:
        await store.append_messages(session_id, previous.messages, record=previous.record)
    return await AgentSession.load(store, session_id, agent, bundle, confirm=confirm, transform=transform,
                                   save_each_message=False)


async def snapshot(session: AgentSession, max_bytes: int | None = None) -> SessionSnapshot:
    """The session as its store holds it, after writing what is not written yet; over ``max_bytes``
    of messages, the newest whole turns that fit (``carried_messages``)."""
    await session.save()
    store = session.store
    assert store is not None
    record = await store.load(session.session_id)
    assert record is not None
    messages = await store.load_messages(session.session_id)
    carried = carried_messages(messages, max_bytes, workflow_id=session.session_id)
    return SessionSnapshot(record=record.model_copy(update={"message_count": 0}), messages=carried)


def output_type_named(path: str, mode: OutputMode) -> StructuredOutput:
    """The ``StructuredOutput`` for the type ``path`` names (``module:QualName``). ``ConfigError`` if
    it cannot be imported here (where the workflow runs)."""
    module_name, _, qualname = path.partition(":")
    try:
        found: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"the output type {path!r} cannot be imported by the worker ({exc}): define it in a module "
            "the worker can import", piece="output_type",
        ) from exc
    return StructuredOutput(found, mode=mode)


def outcome(result: TurnResult, output: StructuredOutput | None = None) -> TurnOutcome:
    """``result`` as data (a typed answer as JSON data)."""
    error = result.error
    answer = None
    if output is not None and result.output is not None:
        answer = output.adapter.dump_python(result.output, mode="json")
    return TurnOutcome(
        output=answer,
        text=result.text, stop=result.stop, pending_tool_calls=list(result.pending_tool_calls),
        turns=result.turns, usage=result.usage, cost_usd=result.cost_usd, messages=list(result.messages),
        error=str(error) if error is not None else None,
        error_type=type(error).__name__ if error is not None else None,
        recoverable=error.is_recoverable() if error is not None else False,
    )
