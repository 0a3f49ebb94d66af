"""What a running turn reports: the ``AgentEvent`` union ``AgentSession.stream_turn()`` yields.

Every event is a frozen pydantic model with a ``type`` literal, so a stream can be serialised (to a
browser, a log) and read back with ``AgentEventAdapter``. A stream always ends with exactly one
``Done`` (the turn finished, paused for client tools, or was stopped by a hook) or one ``Failed``
(an error or a limit); both carry ``stop``, the same value as ``TurnResult.stop``.

The loop builds the frequent events (text and thinking deltas) with ``model_construct``: their fields
come from already-validated stream events, and validating them again would cost on every chunk.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agcore.llm.types import ToolResultBlock, ToolUseBlock, Usage

__all__ = [
    "AgentEvent",
    "AgentEventAdapter",
    "AskedAgain",
    "CheckFinished",
    "CheckStarted",
    "ClientToolsRequested",
    "Done",
    "Failed",
    "ProviderSwitched",
    "Steered",
    "SubagentEvent",
    "TextDelta",
    "TextModeSwitched",
    "ThinkingDelta",
    "ToolCallRequested",
    "ToolResultReady",
    "TurnEnded",
    "TurnStarted",
    "TurnStop",
]

#: Why a turn ended: finished, paused for client tools, a hook said stop, a limit, cancelled, failed.
TurnStop = Literal["done", "client_tools", "stopped_by_hook", "limit", "cancelled", "error"]


class _Event(BaseModel):
    # defer_build: built on first use, not at import (see agcore.llm.types._Frozen).
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class TurnStarted(_Event):
    """A model call is about to be made; ``iteration`` counts model calls within the turn (from 1)."""

    type: Literal["turn_started"] = "turn_started"
    turn_index: int
    iteration: int


class TextDelta(_Event):
    """A piece of the model's answer text, as it streams."""

    type: Literal["text_delta"] = "text_delta"
    text: str


class ThinkingDelta(_Event):
    """A piece of the model's reasoning, as it streams (models that stream their thinking only)."""

    type: Literal["thinking_delta"] = "thinking_delta"
    thinking: str


class TurnEnded(_Event):
    """The model answered (its reply is recorded); ``tool_calls`` is how many calls it made."""

    type: Literal["turn_ended"] = "turn_ended"
    turn_index: int
    iteration: int
    stop_reason: str | None = None
    model: str = ""
    provider: str = ""
    usage: Usage = Field(default_factory=Usage)
    tool_calls: int = 0


class ToolCallRequested(_Event):
    """The model asked for a tool; ``mode`` is where it runs (``unknown``: no such tool)."""

    type: Literal["tool_call_requested"] = "tool_call_requested"
    call: ToolUseBlock
    mode: Literal["server", "client", "unknown"] = "server"


class ToolResultReady(_Event):
    """A call's result, as recorded. ``status`` says how it went (``ok``, ``denied``, ``timeout``...)."""

    type: Literal["tool_result_ready"] = "tool_result_ready"
    call_id: str
    name: str
    result: ToolResultBlock
    status: str = "ok"
    duration: float = 0.0


class ClientToolsRequested(_Event):
    """The turn pauses: the caller runs these calls and passes the results to ``session.resume()``."""

    type: Literal["client_tools_requested"] = "client_tools_requested"
    calls: list[ToolUseBlock]


class Steered(_Event):
    """New user input arrived mid-batch: the ``skipped`` call ids were not run."""

    type: Literal["steered"] = "steered"
    skipped: list[str] = Field(default_factory=list)
    text: str = ""


class ProviderSwitched(_Event):
    """The provider resolver chose another model than for the previous call of this session."""

    type: Literal["provider_switched"] = "provider_switched"
    from_provider: str
    from_model: str
    to_provider: str
    to_model: str


class TextModeSwitched(_Event):
    """The model wrote its tool call as text, not as a native call: the call is run, and the session
    uses text-mode tool calls from now on (``AgentConfig.text_mode_tools="auto"``)."""

    type: Literal["text_mode_switched"] = "text_mode_switched"
    provider: str
    model: str


class CheckStarted(_Event):
    """An acceptance check (``agcore.agent.checks.AcceptanceChecks``) starts: the model said it is done,
    and ``command`` runs in the command sandbox; ``round`` counts the times the checks ran this turn."""

    type: Literal["check_started"] = "check_started"
    command: str
    round: int = 1


class CheckFinished(_Event):
    """An acceptance check ended: ``passed`` (exit 0), else ``status`` says how (``exit 1``, ``timed out
    after 30s``, ``not run: ...``); ``output`` is the end of what it printed (bounded)."""

    type: Literal["check_finished"] = "check_finished"
    command: str
    round: int = 1
    passed: bool
    status: str
    exit_code: int | None = None
    output: str = ""
    duration: float = 0.0


class AskedAgain(_Event):
    """The model is asked again instead of its reply ending the turn: the reply was no answer, a check
    failed, a typed answer did not validate, a capability wanted more. ``why`` says so in a few words
    for the user (blank when the capability gave no reason); ``by`` names the capability that asked
    (blank when the reply itself was marked to be asked again, ``Reply.ask_again``)."""

    type: Literal["asked_again"] = "asked_again"
    why: str = ""
    by: str = ""


class Done(_Event):
    """The turn ended without error: ``stop`` is ``done``, ``client_tools`` or ``stopped_by_hook``."""

    type: Literal["done"] = "done"
    text: str = ""
    turns: int = 0
    usage: Usage = Field(default_factory=Usage)
    stop: TurnStop = "done"


class Failed(_Event):
    """The turn ended with an error or a limit (``stop`` is ``error``, ``limit`` or ``cancelled``)."""

    type: Literal["failed"] = "failed"
    error: str
    error_type: str = ""
    recoverable: bool = False
    stop: TurnStop = "error"


#: The events a sub-agent's turn reports, as ``SubagentEvent.event`` carries them.
SubagentInnerEvent = Annotated[
    TurnStarted
    | TurnEnded
    | ToolCallRequested
    | ToolResultReady
    | ClientToolsRequested
    | Steered
    | ProviderSwitched
    | TextModeSwitched
    | CheckStarted
    | CheckFinished
    | AskedAgain
    | Done
    | Failed,
    Field(discriminator="type"),
]


class SubagentEvent(_Event):
    """An event of a sub-agent's turn (``agent_tool``), reported in its parent's stream: ``call_id`` is
    the parent's tool call that runs the sub-agent ``agent`` in session ``session_id`` at ``depth``
    (1: a sub-agent of the top-level session). A grandchild's events arrive with ``depth`` 2 and the
    child's ``call_id``. They are reported when the parent's tool batch ends, before its results, in
    the order they happened; text and thinking deltas are not forwarded (the answer is the result)."""

    type: Literal["subagent_event"] = "subagent_event"
    call_id: str
    agent: str
    session_id: str
    depth: int = 1
    event: SubagentInnerEvent


AgentEvent = Annotated[
    TurnStarted
    | TextDelta
    | ThinkingDelta
    | TurnEnded
    | ToolCallRequested
    | ToolResultReady
    | ClientToolsRequested
    | Steered
    | ProviderSwitched
    | TextModeSwitched
    | CheckStarted
    | CheckFinished
    | AskedAgain
    | Done
    | Failed
    | SubagentEvent,
    Field(discriminator="type"),
]

#: Validates a serialised event (``AgentEventAdapter.validate_json(line)``) back into its class.
AgentEventAdapter: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent, config=ConfigDict(defer_build=True))
