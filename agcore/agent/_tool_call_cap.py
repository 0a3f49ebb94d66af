"""The tool-call cap as a capability (seed 004): ``AgentConfig.max_tool_calls`` counts the tool calls
of a turn, not its rounds (``max_tool_turns``), so one reply of twenty parallel calls counts twenty.

The call that would pass the cap, and every later one, is answered "not run" instead of running; the
model is then asked for its answer with no tools offered, and that answer ends with a notice to the
user (``TOOL_CALLS_NOTICE``: "[Stopped after N tool calls ...]"), in the turn's text and, streamed,
as a last text delta. The model's answer says what was done; the notice says why it stopped there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agcore.agent import _events as ev
from agcore.agent._batch import error_result
from agcore.agent.capability import Capability, ModelCall, Next, Reply, TurnView, Vetting

if TYPE_CHECKING:
    from agcore.agent._batch import Batch
    from agcore.llm.types import ToolUseBlock

__all__ = ["TOOL_CALLS_NOTICE", "TOOL_CALLS_REFUSED", "ToolCallCap", "tool_calls_notice"]

#: What the model reads for a call past the cap.
TOOL_CALLS_REFUSED = (
    "Not run: this request reached its limit of {limit} tool calls (max_tool_calls). Answer now with "
    "what you have found, and say what is left to do."
)
#: What the user reads at the end of the answer; ``{limit}`` is the cap.
TOOL_CALLS_NOTICE = (
    "[Stopped after {limit} tool calls, this request's limit; the answer may be incomplete. "
    "Ask to continue for more.]"
)

_COUNT, _CAPPED = "tool_calls", "tool_calls_capped"


def tool_calls_notice(limit: int) -> str:
    """The notice an answer ends with when the turn reached ``limit`` tool calls."""
    return TOOL_CALLS_NOTICE.format(limit=limit)


class ToolCallCap(Capability):
    """``AgentConfig.max_tool_calls`` (None: no cap); see the module docstring."""

    def vet_call(self, steps: TurnView, batch: Batch, call: ToolUseBlock) -> Vetting | None:
        limit = steps.config.max_tool_calls
        if limit is None:
            return None
        kept = steps.turn.capabilities
        count = kept.get(_COUNT, 0)
        if count < limit:
            kept[_COUNT] = count + 1
            return None
        kept[_CAPPED] = True
        batch.answer(call, error_result(call.id, TOOL_CALLS_REFUSED.format(limit=limit)), "not_run",
                     hookable=False)
        return Vetting("answered", call)

    def shape_request(self, steps: TurnView, call: ModelCall) -> None:
        if not steps.turn.capabilities.get(_CAPPED):
            return
        output = steps.turn.output  # a typed turn's answer tool stays offered
        kept = [t for t in call.request.tools if output is not None and t.name == output.name]
        call.request = call.request.model_copy(update={"tools": kept})

    async def before_finish(self, steps: TurnView, reply: Reply) -> Next | None:
        limit = steps.config.max_tool_calls
        if limit is None or not steps.turn.capabilities.get(_CAPPED):
            return None
        notice = tool_calls_notice(limit)
        turn = steps.turn
        turn.text = f"{turn.text}\n\n{notice}" if turn.text else notice
        steps.emit(ev.TextDelta(text=f"\n\n{notice}" if reply.message.text else notice))
        return None
