"""Typed final answers as a capability: the request asks for the answer in the form the provider
takes (``_output.shape_request``), a final-answer tool call is read and validated as soon as the reply
is recorded, and an answer given in text is validated before the turn may finish; an answer that does
not fit goes back to the model with the errors (bounded by ``AgentConfig.output_retries``)."""

from __future__ import annotations

from agcore.agent._output import settle_final_call, settle_text_answer, shape_request, unforce_with_thinking
from agcore.agent.capability import CallModel, Capability, ModelCall, Next, Reply, TurnView

__all__ = ["TypedOutput"]


class TypedOutput(Capability):
    """Ends a turn with an output type (``TurnState.output``) only on an answer of that type."""

    def shape_request(self, steps: TurnView, call: ModelCall) -> None:
        spec = steps.turn.output
        if spec is not None:
            call.request = shape_request(spec, call.request, call.provider, call.tool_mode == "text")

    def review_request(self, steps: TurnView, call: ModelCall) -> None:
        if steps.turn.output is not None:  # a hook may have turned thinking on after the shaping
            call.request = unforce_with_thinking(call.request, call.provider)

    async def after_reply(self, steps: TurnView, reply: Reply) -> Next | None:
        turn = steps.turn
        if turn.output is None:
            return None
        turn.output_ready = False  # an answer counts for the reply that gave it
        if not reply.calls:
            return None
        settled = await settle_final_call(turn, reply.calls, steps.record, steps.config.output_retries)
        if settled is False:
            return CallModel()  # the model reads why in the final tool's result
        if settled:
            reply.calls = []  # answered: the final tool's result says so, the others were not run
        return None

    async def before_finish(self, steps: TurnView, reply: Reply) -> Next | None:
        turn = steps.turn
        if turn.output is None or turn.output_ready:
            return None
        accepted = await settle_text_answer(turn, reply.message, steps.record, steps.config.output_retries)
        return None if accepted else CallModel()  # asked again, with the errors
