"""Text-mode tool calls as a capability: how a model call offers tools (``call_mode``), the request
rewritten for a model that writes its calls as text, the stream filtered so those calls are not shown
as the answer, and the reply's text read back into ``ToolUseBlock``s (``_text_tools``).

A reply whose only calls could not be read is answered with a note and asked again, at most
``MAX_REREADS`` times in a row; past that, a reply with nothing usable in it (no call, no answer)
ends the turn with ``UnreadableToolCalls``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agcore.agent import _events as ev
from agcore.agent._errors import UnreadableToolCalls
from agcore.agent.capability import Capability, ModelCall, Reply, TurnView
from agcore.agent.textcalls._text_stream import CallTextFilter
from agcore.agent.textcalls._text_tools import (
    MAX_REREADS,
    TextRead,
    call_mode,
    read_text_calls,
    switch_to_text_mode,
    text_mode_request,
)

if TYPE_CHECKING:
    from agcore.agent._turn import TurnState

__all__ = ["TextModeCalls"]


class TextModeCalls(Capability):
    """Tool calls written as text, for models without (reliable) native tool calling."""

    def shape_request(self, steps: TurnView, call: ModelCall) -> None:
        provider = call.provider
        call.tool_mode = call_mode(steps.session, steps.config, provider.model_id, provider.provider_name)

    def encode_request(self, steps: TurnView, call: ModelCall) -> None:
        if not call.offered:
            call.tool_mode = "native"  # nothing to call: nothing to write as text
        elif call.tool_mode == "text":
            call.request = text_mode_request(call.request, call.provider.model_id)

    def review_request(self, steps: TurnView, call: ModelCall) -> None:
        if call.tool_mode != "native":  # the offered tools are final once the hooks have run
            call.text_filter = CallTextFilter(call.offered, lone_results=call.tool_mode == "text")

    async def read_reply(self, steps: TurnView, call: ModelCall, reply: Reply) -> None:
        if call.tool_mode == "native":
            steps.turn.rereads = 0
            return
        read = read_text_calls(reply.message, call.offered, auto=call.tool_mode == "auto")
        if read is not None:
            reply.message = read.message
            if call.tool_mode == "auto" and reply.message.tool_calls:
                provider = call.provider
                steps.emit(switch_to_text_mode(steps.session, provider.provider_name, provider.model_id))
        elif call.text_filter is not None and not reply.message.tool_calls:
            unseen = call.text_filter.unseen(reply.message.text)
            if unseen:  # it looked like a call but is the answer: show it whole
                steps.emit(ev.TextDelta(text=unseen))
        if read is not None:
            _judge(steps.turn, call, reply, read)
        else:
            steps.turn.rereads = 0


def _judge(turn: TurnState, call: ModelCall, reply: Reply, read: TextRead) -> None:
    """What the model is told of what could not be read, and whether it is asked again (at most
    ``MAX_REREADS`` times in a row) or, past that, the reply ends the turn as unusable."""
    if read.note is not None:  # the model reads it with the results
        reply.notes.append(read.note)
    reread = read.note is not None and not reply.message.tool_calls and turn.rereads < MAX_REREADS
    reply.ask_again = reply.ask_again or reread
    if reread and not reply.why:
        reply.why = "a tool call written as text could not be read"
    if read.unusable and not reread:  # no call, no answer: no answer either
        reply.error = UnreadableToolCalls(read.problems, text_mode=call.tool_mode == "text",
                                          rereads=turn.rereads)
    turn.rereads = turn.rereads + 1 if reread else 0
