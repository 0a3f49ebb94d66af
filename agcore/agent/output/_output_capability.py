"""Typed final answers as a capability: the request asks for the answer in the form the provider
takes (``_output.shape_request``), a final-answer tool call is read and validated as soon as the reply
is recorded, and an answer given in text is validated before the turn may finish; an answer that does
not fit goes back to the model with the errors (bounded by ``AgentConfig.output_retries``)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agcore.agent._messages import AgentMessage, ToolResults, UserInput
from agcore.agent.capability import CallModel, Capability, ModelCall, Next, Reply, TurnView
from agcore.agent.output._output import (
    OutputValidationError,
    StructuredOutput,
    shape_request,
    unforce_with_thinking,
)
from agcore.agent.output._output import describe_validation_error as _describe
from agcore.llm.types import AssistantMessage, StopReason, ToolResultBlock, ToolUseBlock

if TYPE_CHECKING:
    from agcore.agent._turn import TurnState

__all__ = ["TypedOutput", "settle_final_call", "settle_text_answer"]


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
            # the model reads why in the final tool's result
            return CallModel(why=f"the final answer does not fit {turn.output.type_name}")
        if settled:
            reply.calls = []  # answered: the final tool's result says so, the others were not run
        return None

    async def before_finish(self, steps: TurnView, reply: Reply) -> Next | None:
        turn = steps.turn
        if turn.output is None or turn.output_ready:
            return None
        accepted = await settle_text_answer(turn, reply.message, steps.record, steps.config.output_retries)
        # asked again, with the errors
        return None if accepted else CallModel(why=f"the answer does not fit {turn.output.type_name}")


# -------------------------------------------------------------------------------------- answers


#: How a settled answer enters the history (``SessionLike.record``).
Record = Callable[[AgentMessage], Awaitable[None]]


async def settle_final_call(
    turn: TurnState, calls: list[ToolUseBlock], record: Record, retries: int
) -> bool | None:
    """Read the final-answer tool call among ``calls`` (None: there is none; run the calls as usual).
    True: the answer is valid and kept in ``turn``; the calls are answered and recorded. False: it was
    not, and the model is told why in the call's result (try again). Raises ``OutputValidationError``
    once ``retries`` (unless the output says its own) are spent."""
    spec = turn.output
    assert spec is not None
    final = next((c for c in calls if c.name == spec.name), None)
    if final is None:
        return None
    problem: str | None = final.parse_error
    value: Any = None
    if problem is None:
        try:
            value = spec.validate_data(final.input)
        except ValidationError as exc:
            problem = _describe(exc)
    results: list[ToolResultBlock] = []
    for call in calls:
        if call is final:
            text = "Final answer received." if problem is None else (
                f"The final answer does not fit {spec.type_name}:\n{problem}\n"
                f"Call `{spec.name}` again with the corrected answer."
            )
            results.append(ToolResultBlock(tool_use_id=call.id, content=text, is_error=problem is not None))
        else:
            results.append(ToolResultBlock(
                tool_use_id=call.id, is_error=True,
                content=f"Not run: the final answer (`{spec.name}`) came in the same reply."
                if problem is None else
                f"Not run: the final answer in the same reply did not fit {spec.type_name}; "
                "call this tool again if you still need it.",
            ))
    await record(ToolResults(results=results))
    if problem is None:
        _accept(turn, spec, value)
        return True
    raw = json.dumps(final.input, ensure_ascii=False)
    _retry_or_fail(turn, spec, problem, raw, retries)
    return False


async def settle_text_answer(
    turn: TurnState, message: AssistantMessage, record: Record, retries: int
) -> bool:
    """Read the typed answer in a reply without tool calls. True: valid, kept in ``turn``. False: the
    model is asked again (a user message with the errors). Raises ``OutputValidationError`` once the
    retries are spent, or at once when the model refused (``StopReason.REFUSAL``)."""
    spec = turn.output
    assert spec is not None
    if message.stop_reason is StopReason.REFUSAL and not spec.is_text:
        # Asking again after a refusal costs tokens and rarely changes the answer: stop here.
        said = message.text.strip() or "(no reason given)"
        raise OutputValidationError(
            f"The model refused to give a {spec.type_name}: {said} The session is intact: rephrase "
            "the request, or ask without an output type.",
            type_name=spec.type_name, errors="the model refused", raw=message.text,
            retries=turn.output_retries,
        )
    try:
        value = spec.validate_text(message.text)
    except ValidationError as exc:
        problem = _describe(exc)
    except ValueError as exc:
        problem = str(exc)
    else:
        _accept(turn, spec, value)
        return True
    if message.stop_reason is StopReason.MAX_TOKENS:
        problem += "\n(The answer was cut off at the output token limit: give it more briefly.)"
    _retry_or_fail(turn, spec, problem, message.text, retries)
    how = (f"call the `{spec.name}` tool with it" if spec.name in turn.offered
           else "answer with only the JSON object, no other text")
    await record(UserInput(content=(
        f"Your answer could not be read as {spec.type_name}:\n{problem}\nGive the final answer again: {how}."
    )))
    return False


def _accept(turn: TurnState, spec: StructuredOutput, value: Any) -> None:
    turn.output_value = value
    turn.output_ready = True
    if not turn.text.strip():  # a tool-given answer: its JSON is the turn's text
        turn.text = json.dumps(spec.dump(value), ensure_ascii=False)


def _retry_or_fail(turn: TurnState, spec: StructuredOutput, problem: str, raw: str, retries: int) -> None:
    allowed = spec.max_retries if spec.max_retries is not None else retries
    turn.output_retries += 1
    if turn.output_retries > allowed:
        raise OutputValidationError(
            f"The model's final answer did not fit {spec.type_name} after {allowed} "
            f"retr{'y' if allowed == 1 else 'ies'}: {problem}. The session is intact: ask again, "
            "simplify the type, raise AgentConfig.output_retries, or use a stronger model.",
            type_name=spec.type_name, errors=problem, raw=raw, retries=allowed,
        )


