"""Which capabilities a turn runs with: agcore's own, in the order their steps must see each other
(the mode a call offers tools in before the typed answer is asked for in it), then the bundle's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agcore.agent._answers import AnswerRequired
from agcore.agent._change_first import ChangeFirst
from agcore.agent._guards import RepetitionGuard
from agcore.agent._hands_off import HandsOff
from agcore.agent._limits import TurnLimits
from agcore.agent._runaway import RunawayGuard
from agcore.agent._tool_call_cap import ToolCallCap
from agcore.agent._wrap_up import WrapUp
from agcore.agent.capability import Capability
from agcore.agent.output._output_capability import TypedOutput
from agcore.agent.subagents._subagent_links import SubagentLinks
from agcore.agent.textcalls._constrained import ConstrainedCalls
from agcore.agent.textcalls._text_capability import TextModeCalls

if TYPE_CHECKING:
    from agcore.agent._bundle import RuntimeBundle

__all__ = ["BUILTIN_CAPABILITIES", "CapabilityTable", "capabilities_of"]

#: agcore's own features on the steps (stateless: every session of every bundle shares them).
BUILTIN_CAPABILITIES: tuple[Capability, ...] = (
    TurnLimits(), TextModeCalls(), ConstrainedCalls(), TypedOutput(), SubagentLinks(), RepetitionGuard(),
    RunawayGuard(), AnswerRequired(), ToolCallCap(),  # the cap's notice goes on an answer the others accepted
    WrapUp(),  # after ConstrainedCalls: it narrows the reply shape that one set
    HandsOff(),
    ChangeFirst(),  # after ConstrainedCalls too: a failing check's next reply makes a change
)


class CapabilityTable:
    """The capabilities a turn runs with, and, for each point of the turn, the ones that act there
    (those whose class overrides the method): the steps call only those, as most capabilities act at
    one or two of the twelve points (a tool-call turn would otherwise make ~90 calls to methods that
    do nothing)."""

    def __init__(self, capabilities: tuple[Capability, ...]) -> None:
        def acting(point: str) -> tuple[Capability, ...]:
            base = getattr(Capability, point)
            return tuple(c for c in capabilities if getattr(type(c), point) is not base)

        self.all = capabilities
        self.start_turn = acting("start_turn")
        self.before_model_call = acting("before_model_call")
        self.shape_request = acting("shape_request")
        self.encode_request = acting("encode_request")
        self.review_request = acting("review_request")
        self.read_reply = acting("read_reply")
        self.after_reply = acting("after_reply")
        self.before_finish = acting("before_finish")
        self.before_tools = acting("before_tools")
        self.vet_call = acting("vet_call")
        self.batch_started = acting("batch_started")
        self.batch_done = acting("batch_done")


_TABLES: dict[tuple[Capability, ...], CapabilityTable] = {}


def capabilities_of(bundle: RuntimeBundle) -> CapabilityTable:
    """agcore's capabilities, then the bundle's (``AgentBuilder().capabilities(...)``), as a table
    built once per set of capabilities."""
    part = getattr(bundle, "capabilities", None)  # a container made by hand may not have the slot
    extra = part() if part is not None else ()
    chosen = BUILTIN_CAPABILITIES + tuple(extra) if extra else BUILTIN_CAPABILITIES
    table = _TABLES.get(chosen)
    if table is None:
        if len(_TABLES) > 256:  # bundles made per request: do not keep them all
            _TABLES.clear()
        table = _TABLES[chosen] = CapabilityTable(chosen)
    return table
