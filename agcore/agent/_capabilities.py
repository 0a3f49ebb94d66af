"""Which capabilities a turn runs with: agcore's own, in the order their steps must see each other
(the mode a call offers tools in before the typed answer is asked for in it), then the bundle's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agcore.agent._guards import RepetitionGuard
from agcore.agent._limits import TurnLimits
from agcore.agent._output_capability import TypedOutput
from agcore.agent._subagent_links import SubagentLinks
from agcore.agent._text_capability import TextModeCalls

if TYPE_CHECKING:
    from agcore.agent._bundle import RuntimeBundle
    from agcore.agent.capability import Capability

__all__ = ["BUILTIN_CAPABILITIES", "capabilities_of"]

#: agcore's own features on the steps (stateless: every session of every bundle shares them).
BUILTIN_CAPABILITIES: tuple[Capability, ...] = (
    TurnLimits(), TextModeCalls(), TypedOutput(), SubagentLinks(), RepetitionGuard(),
)


def capabilities_of(bundle: RuntimeBundle) -> tuple[Capability, ...]:
    """agcore's capabilities, then the bundle's (``AgentBuilder().capabilities(...)``)."""
    part = getattr(bundle, "capabilities", None)  # a container made by hand may not have the slot
    extra = part() if part is not None else ()
    return BUILTIN_CAPABILITIES + tuple(extra) if extra else BUILTIN_CAPABILITIES
