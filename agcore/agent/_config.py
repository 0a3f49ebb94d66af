"""``AgentConfig``: the knobs of a session's loop. Every loop has a cap by default."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agcore.agent._backend_names import LOOP_BACKEND

__all__ = ["AgentConfig"]


class AgentConfig(BaseModel):
    """How a session runs. Frozen: derive a changed copy with ``config.replace(**changes)``.

    * ``max_turns``: model calls per ``submit_turn`` (the hard cap every loop has);
    * ``max_tool_turns``: model replies with tool calls per ``submit_turn``;
    * ``max_tool_calls``: tool calls per ``submit_turn``, however many a reply makes (None: no cap).
      The calls past it are not run; the model answers without tools, and the answer ends with a
      notice to the user ("[Stopped after N tool calls ...]", ``agcore.agent.tool_calls_notice``);
    * ``max_tokens``/``temperature``: passed to every model call (None: the provider's default);
    * ``parallel_tool_calls``: run a reply's independent server tool calls concurrently;
    * ``tool_timeout``: seconds per tool call for tools without their own ``timeout``;
    * ``max_total_tokens``/``max_cost_usd``: the session's token and USD budgets (None: unlimited);
    * ``session_ttl``: seconds a session may live (None: forever);
    * ``compact_config``: options for history compaction (None: off). The loop itself does not read
      it: compaction is a session's ``transform`` (``agcore.context.create_context_transform``, or
      ``default_compaction``, on by default in the CLI for windows under 32k tokens);
    * ``repetition_limit``/``repetition_action``: the same tool call with the same arguments this many
      times in a row either stops the turn (``"stop"``) or gets a nudge to change course instead of
      running (``"nudge"``, the default; with the default limit 3 the third identical call is
      answered with the nudge, and a fourth stops the turn). A block of 2-4 calls repeated with the
      same results (read/list/read/list) is a cycle: its second pass gets a nudge, a third stops
      the turn (``"stop"``: the second does); see the Sessions guide;
    * ``text_mode_tools``: tool calls written in the model's text, for models without native tool
      calling. ``"auto"`` (the default): native tools, but a model the registry does not know (or
      knows as local) that writes a well-formed call as text has it run, and the session switches
      to text mode; a model the registry lists without tool calling is in text mode from the start.
      ``"on"``: always text mode; ``"off"``: never. ``True``/``False`` are read as ``"on"``/``"off"``;
    * ``constrained_calls``: text-mode replies constrained while they are decoded to calls to the
      offered tools or an answer (``agcore.agent.ConstrainedCalls``). ``"auto"`` (the default): on
      a llama.cpp, vLLM or Ollama server recognised by asking it (never a cloud vendor); ``"on"``:
      on any server (dropped for good if it refuses); ``"off"``: never;
    * ``streaming``: how model calls are made. ``"auto"`` streams when someone reads the events
      (``stream_turn``) and makes one ``complete()`` call per model turn otherwise (``submit_turn``:
      the same reply for less CPU, since nobody reads the deltas); ``"always"`` streams every call
      (long generations behind proxies that cut idle connections); ``"never"`` never streams
      (``stream_turn`` then yields the text in one delta per reply);
    * ``output_retries``: how many times a turn with an ``output_type`` gives the model its
      validation errors and asks again before it ends with ``OutputValidationError``;
    * ``runaway_action``: what a reply cut at ``max_tokens`` that repeats the same text up to the
      cut (``[[[[…``, a paragraph again and again) does: ``"retry"`` (the default) removes the
      repetition and asks once more with a note, a second one ends the turn with ``RunawayOutput``;
      ``"stop"`` ends it at the first; ``"off"`` accepts it (``agcore.agent.find_runaway``);
    * ``backend``: the runtime ``open_session`` runs the session on: ``"loop"`` (agcore's own,
      ``AgentSession``) or an installed backend such as ``"langgraph"`` (see ``open_session``
      and the guide's Backends page).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    max_turns: int = Field(default=50, ge=1)
    max_tool_turns: int = Field(default=25, ge=1)
    max_tool_calls: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    parallel_tool_calls: bool = True
    tool_timeout: float = Field(default=120.0, gt=0.0)
    max_total_tokens: int | None = Field(default=None, ge=1)
    max_cost_usd: float | None = Field(default=None, ge=0.0)
    session_ttl: float | None = Field(default=None, gt=0.0)
    compact_config: dict[str, Any] | None = None
    repetition_limit: int = Field(default=3, ge=2)
    repetition_action: Literal["stop", "nudge"] = "nudge"
    text_mode_tools: Literal["auto", "on", "off"] = "auto"
    constrained_calls: Literal["auto", "on", "off"] = "auto"
    streaming: Literal["auto", "always", "never"] = "auto"
    backend: str = Field(default=LOOP_BACKEND, min_length=1)
    output_retries: int = Field(default=2, ge=0)
    runaway_action: Literal["retry", "stop", "off"] = "retry"

    @field_validator("text_mode_tools", mode="before")
    @classmethod
    def _text_mode_from_bool(cls, value: object) -> object:
        # True/False were this field's values before "auto" existed: they keep their meaning.
        return {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else value

    def replace(self, **changes: Any) -> AgentConfig:
        """A copy with ``changes`` applied and validated (``model_copy`` would skip validation)."""
        return type(self).model_validate({**self.model_dump(), **changes})
