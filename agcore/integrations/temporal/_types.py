"""The data that crosses between a workflow, its activities and its clients: pydantic models only, so
Temporal's pydantic data converter carries them (and agcore's own types inside them) as JSON."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from temporalio.contrib.workflow_streams import WorkflowStreamState

from agcore.agent import AgentConfig, AgentMessage, FailurePolicy, OutputMode, Plan, TurnStop
from agcore.llm.types import LLMRequest, ToolDefinition, ToolResultBlock, ToolUseBlock, Usage
from agcore.memory import SessionRecord
from agcore.tools import ToolProgress, ToolStatus

__all__ = [
    "BUNDLE_ERROR",
    "ActivityOptions",
    "AgentSpec",
    "CompactionOptions",
    "ConfirmationInput",
    "LLMCallInput",
    "MAX_PROGRESS_LINES",
    "MAX_SNAPSHOT_BYTES",
    "PlanInput",
    "SessionInput",
    "SessionSnapshot",
    "TextChunk",
    "ToolCallInput",
    "ToolCallOutput",
    "ToolSpec",
    "TurnInput",
    "TurnOutcome",
]


#: The key in a failed activity's details that marks a worker's bundle factory failing.
BUNDLE_ERROR = "agcore_bundle_error"


#: What a continue-as-new carries of a session's messages by default: with the record, the spec and
#: the JSON around them (messages travel as escaped JSON texts: about an eighth more), under the
#: 512 kB at which Temporal's SDK warns of a large payload, far under the 2 MB it refuses.
MAX_SNAPSHOT_BYTES = 400_000


class _Data(BaseModel):
    # Unknown fields are ignored, not refused: a client or worker one version ahead (a rolling
    # upgrade) must not fail a workflow task it cannot finish, which Temporal would retry forever.
    model_config = ConfigDict(extra="ignore", frozen=True)


class ActivityOptions(_Data):
    """How the workflow schedules its activities (seconds).

    * ``llm_timeout``: one model call, start to close; ``llm_heartbeat_timeout``: a model call whose
      worker stops heartbeating (it heartbeats every second while the model answers) for this long
      is lost with its worker and tried again; ``llm_max_attempts``: tries of a model call
      whose error is retryable (the provider's own retries are off on the worker: Temporal retries);
    * ``tool_timeout_margin``: added to a tool's own timeout for its activity's start-to-close
      timeout; ``tool_heartbeat_timeout``: a tool activity whose worker stops heartbeating for this
      long is declared lost (a non-idempotent tool is then answered "interrupted", never re-run);
    * ``idempotent_tool_attempts``: tries of a tool the worker declared idempotent;
    * ``local_model_calls``: model calls that do not stream run as local activities (the worker that
      runs the workflow task makes the call and the task goes on with its reply: two fewer trips
      through the server per call; a call lost with its worker is made again once its workflow
      task times out, 10 s). False: every model call is a scheduled activity, with heartbeats;
    * ``local_idempotent_tools``: the calls of tools the worker declared idempotent are local
      activities too (they may run again after a lost worker, so nothing changes for them but the
      two trips through the server they save); every other tool is a scheduled activity, run at
      most once;
    * ``describe_timeout``, ``describe_max_attempts``: reading the agent from a worker when the
      workflow starts (a bundle factory that raises is not retried: the workflow fails with its error).
    """

    llm_timeout: float = Field(default=300.0, gt=0)
    llm_heartbeat_timeout: float = Field(default=10.0, gt=0)
    llm_max_attempts: int = Field(default=5, ge=1)
    llm_initial_retry_interval: float = Field(default=1.0, gt=0)
    tool_timeout_margin: float = Field(default=30.0, ge=0)
    tool_heartbeat_timeout: float = Field(default=10.0, gt=0)
    idempotent_tool_attempts: int = Field(default=3, ge=1)
    local_model_calls: bool = True
    local_idempotent_tools: bool = True
    describe_timeout: float = Field(default=60.0, gt=0)
    describe_max_attempts: int = Field(default=3, ge=1)


class CompactionOptions(_Data):
    """Context compaction in a durable session (``agcore.context.create_context_transform``): old tool
    results cut, and past ``threshold_ratio`` of the window the middle of the history summarised by the
    worker's model (an ``llm_call`` activity like any other), so each request stays about the window's
    size however long the session grows. ``max_context_tokens``: None takes the model's window from
    the registry."""

    max_context_tokens: int | None = Field(default=None, ge=256)
    threshold_ratio: float = Field(default=0.8, gt=0, le=1)
    target_ratio: float = Field(default=0.5, gt=0, le=1)
    keep_tail: int = Field(default=6, ge=1)
    summary_max_tokens: int = Field(default=2048, ge=16)


class ToolSpec(_Data):
    """What the workflow knows of a tool that lives on the worker."""

    definition: ToolDefinition
    mode: Literal["server", "client"] = "server"
    requires_confirmation: bool = False
    #: Safe to run again after a lost worker (declared by the worker: ``idempotent_tools``).
    idempotent: bool = False
    timeout: float | None = None


class AgentSpec(_Data):
    """The agent as the worker's bundle defines it, read once per workflow by an activity."""

    name: str
    system_prompt: str | None = None
    tools: list[ToolSpec] = Field(default_factory=list)
    config: AgentConfig = Field(default_factory=AgentConfig)
    provider_name: str = "temporal"
    model_id: str = "unknown"
    #: The task queue of the worker that described the agent: its workflow plugins are the ones used.
    plugins_key: str = ""


class LLMCallInput(_Data):
    """One model call: its ``request``, or for a local activity the key under which its workflow
    handed the request over in-process (``request_key``; see ``_handover``)."""

    request: LLMRequest | None = None
    request_key: str | None = None
    #: Set when the workflow streams text: the activity streams the reply and publishes its text
    #: deltas under this key (the same on every attempt of this call).
    stream_key: str | None = None


#: The workflow-stream topic text deltas are published on.
TEXT_TOPIC = "agcore.text"


class TextChunk(_Data):
    """A piece of a model reply's text, published while the model call runs.

    ``key`` names the model call, ``attempt`` its activity attempt. A chunk with ``restart=True`` (and
    no text) starts attempt ``attempt`` of a retried call: the text of its earlier attempts is void,
    so a reader drops it and no text appears twice. A chunk with ``turn`` (no key, no text) marks
    where the turn sent as that Update id starts: the model calls first seen after it are its own.
    """

    key: str
    attempt: int = 1
    text: str = ""
    restart: bool = False
    turn: str | None = None


class ToolCallInput(_Data):
    call: ToolUseBlock
    session_id: str
    default_timeout: float | None = None


#: The progress lines a tool activity carries back to the session (the first ones, then the last).
MAX_PROGRESS_LINES = 200


class ToolCallOutput(_Data):
    result: ToolResultBlock
    status: ToolStatus
    attempts: int = 0
    duration: float = 0.0
    error: str | None = None
    #: What the tool reported while it ran: recorded in the session as ``ToolLog`` messages.
    progress: list[ToolProgress] = Field(default_factory=list)


class SessionSnapshot(_Data):
    """A session between turns: its record (state, usage, counters) and its messages as JSON texts;
    what a session workflow carries over a continue-as-new."""

    record: SessionRecord
    messages: list[str] = Field(default_factory=list)


class SessionInput(_Data):
    """Starts (or continues) a session workflow. ``max_history_events``: past this many events the
    workflow continues as new between turns (Temporal's own suggestion also triggers it)."""

    spec: AgentSpec | None = None
    snapshot: SessionSnapshot | None = None
    options: ActivityOptions = Field(default_factory=ActivityOptions)
    max_history_events: int = Field(default=10_000, ge=100)
    #: How many times this session continued as new so far (for operators and tests).
    generation: int = 0
    #: Stream model text to clients while each model call runs (``DurableSession.text_chunks``).
    stream_text: bool = False
    #: The text stream carried over a continue-as-new.
    stream_state: WorkflowStreamState | None = None
    #: Compact what the model sees (None: every call carries the whole conversation).
    compaction: CompactionOptions | None = None
    #: The most message bytes a continue-as-new (or the final snapshot) carries: past it, the newest
    #: whole turns that fit (see ``carried_messages``). None: all of them (with a payload store only:
    #: Temporal refuses a payload over 2 MB).
    max_snapshot_bytes: int | None = Field(default=MAX_SNAPSHOT_BYTES, ge=1_000)


class TurnInput(_Data):
    text: str
    #: A typed turn: the answer's type by import path (``module:QualName``, importable on the worker)
    #: and how to ask for it (``StructuredOutput.mode``).
    output_type: str | None = None
    output_mode: OutputMode = "auto"


class ConfirmationInput(_Data):
    """The user's answer for a tool call waiting for approval: True, False or ``"always"``."""

    call_id: str
    answer: bool | Literal["always"]


class TurnOutcome(_Data):
    """How a durable turn ended (``TurnResult`` as data: the error is its message and type)."""

    text: str = ""
    stop: TurnStop = "done"
    pending_tool_calls: list[ToolUseBlock] = Field(default_factory=list)
    turns: int = 0
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    messages: list[AgentMessage] = Field(default_factory=list)
    error: str | None = None
    error_type: str | None = None
    recoverable: bool = False
    #: A typed turn's answer: JSON data in the workflow, the ``output_type`` itself from ``turn``.
    output: Any = None


class PlanInput(_Data):
    """Starts a plan workflow: ``plan`` (steps may be completed already: they are not run again)."""

    plan: Plan
    failure_policy: FailurePolicy = "stop"
    max_retries: int = Field(default=2, ge=0)
    spec: AgentSpec | None = None
    options: ActivityOptions = Field(default_factory=ActivityOptions)
    #: The plan's session so far (after a continue-as-new: the earlier steps' turns).
    snapshot: SessionSnapshot | None = None
    #: Past this many events the workflow continues as new before its next step.
    max_history_events: int = Field(default=10_000, ge=100)
    generation: int = 0
    #: Stream the step turns' model text to clients (``text_chunks(client, workflow_id)``).
    stream_text: bool = False
    stream_state: WorkflowStreamState | None = None
    compaction: CompactionOptions | None = None
    #: As ``SessionInput.max_snapshot_bytes``, for the plan's session.
    max_snapshot_bytes: int | None = Field(default=MAX_SNAPSHOT_BYTES, ge=1_000)
