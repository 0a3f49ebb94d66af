"""What hooks receive and return: the ``HookContext`` of every call and a tool call's ``ToolCallDecision``."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, Literal, Self

from pydantic import BaseModel, ConfigDict, model_validator

from agcore.llm import Usage

__all__ = ["HookContext", "ToolCallDecision"]

# model_construct: an all-zero constant; validating it would build the model (and run pydantic's plugin
# scan) at import, before anything needs it.
_NO_USAGE: Final = Usage.model_construct()
# One shared read-only mapping: a context is built per turn and per tool call, most carry no metadata.
_NO_METADATA: Final[Mapping[str, Any]] = MappingProxyType({})


def _no_metadata() -> Mapping[str, Any]:
    return _NO_METADATA


@dataclasses.dataclass(frozen=True, slots=True)
class HookContext:
    """Where a hook call happens: the session, the agent, the turn (and plan step), the spend so far,
    and the model of the session's current (or latest) model call — already the one about to be called
    in ``on_llm_request`` — as ``model`` and ``provider`` (None before the first call).

    ``metadata`` carries application data (tenant, user id, trace ids) through to plugins unchanged.

    A sub-agent's session (``agcore.agent.agent_tool``) says where it hangs: ``parent_session_id`` and
    ``parent_call_id`` (the parent's tool call that runs it), ``depth`` (0 for a top-level session, 1
    for its sub-agents...) and ``root_session_id`` (the top-level session of the whole tree; None for
    that session itself), so plugins nest a child's spans and records under its parent's.
    """

    session_id: str
    agent_name: str
    turn_index: int
    plan_step_index: int | None = None
    usage: Usage = _NO_USAGE
    cost_usd: float | None = None
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=_no_metadata)
    model: str | None = None
    provider: str | None = None
    parent_session_id: str | None = None
    parent_call_id: str | None = None
    depth: int = 0
    root_session_id: str | None = None

    def replace(self, **changes: Any) -> HookContext:
        """A copy with ``changes`` applied (the context itself is immutable)."""
        return dataclasses.replace(self, **changes)


class ToolCallDecision(BaseModel):
    """What ``before_tool_call`` says about a tool call: run it, refuse it (the model sees ``reason`` as
    an error result), or run it with other ``arguments``. Build one with ``allow()``, ``deny(reason)``
    or ``rewrite(arguments)``."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    action: Literal["allow", "deny", "rewrite"]
    reason: str | None = None
    arguments: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _fields_match_action(self) -> Self:
        if self.action == "rewrite" and self.arguments is None:
            raise ValueError(
                "a 'rewrite' decision needs the new `arguments`: use ToolCallDecision.rewrite(args)"
            )
        if self.action != "rewrite" and self.arguments is not None:
            raise ValueError(f"an {self.action!r} decision takes no `arguments`; use action='rewrite'")
        if self.action == "deny" and not self.reason:
            raise ValueError("a 'deny' decision needs a `reason`: the model is told why its call was refused")
        return self

    @classmethod
    def allow(cls) -> ToolCallDecision:
        """Let the call run as it is (the same as returning None)."""
        return _ALLOW

    @classmethod
    def deny(cls, reason: str) -> ToolCallDecision:
        """Refuse the call; the model gets an error result carrying ``reason`` (required: it says what to
        do instead)."""
        return cls(action="deny", reason=reason)

    @classmethod
    def rewrite(cls, arguments: Mapping[str, Any], reason: str | None = None) -> ToolCallDecision:
        """Run the call with ``arguments`` instead; later plugins see the new arguments."""
        return cls(action="rewrite", arguments=dict(arguments), reason=reason)

    @property
    def denied(self) -> bool:
        """Whether this decision refuses the call."""
        return self.action == "deny"


# model_construct: a constant that is valid by construction; validating it would build the model at import.
_ALLOW: Final = ToolCallDecision.model_construct(action="allow")
