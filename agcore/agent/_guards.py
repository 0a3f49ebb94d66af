"""The repetition guards as a capability (``_cycles`` says what they catch): the same call in a row
is answered with a nudge instead of being run, then stops the turn; a block of calls going round
with the same results gets a nudge in its last result, then stops the turn."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agcore.agent._batch import error_result
from agcore.agent._cycles import CycleTracker, Verdict, repeat_verdict, repetition_stopped
from agcore.agent._result import LimitExceeded
from agcore.agent.capability import Capability, Finish, Next, Reply, TurnView, Vetting

if TYPE_CHECKING:
    from agcore.agent._batch import Batch
    from agcore.agent._config import AgentConfig
    from agcore.agent._turn import RepetitionTracker
    from agcore.llm.types import ToolUseBlock

__all__ = ["NOT_RUN", "RepetitionGuard", "repeated_message", "repetition_check"]

_log = logging.getLogger("agcore.agent")

NOT_RUN = "Not run: the turn was stopped before this call ran."


class RepetitionGuard(Capability):
    """``AgentConfig.repetition_limit`` / ``repetition_action`` over calls and cycles of calls."""

    def vet_call(self, steps: TurnView, batch: Batch, call: ToolUseBlock) -> Vetting | None:
        turn = steps.turn
        verdict, message = repetition_check(call, turn.repetition, steps.config, turn.cycles)
        if verdict == "stop":
            batch.answer(call, error_result(call.id, message), "repeated", hookable=False)
            for later in batch.calls[batch.calls.index(call) + 1 :]:
                batch.answer(later, error_result(later.id, NOT_RUN), "not_run", hookable=False)
            return Vetting("stop", call)
        if verdict == "nudge":
            batch.answer(call, error_result(call.id, message), "repeated")
            return Vetting("answered", call)
        return None

    async def before_finish(self, steps: TurnView, reply: Reply) -> Next | None:
        """An answer breaks a run of calls: what follows it in the same turn (an acceptance check's
        failure, a re-ask) counts afresh. (A read after a failed check was refused as the third in a
        row, and the next one stopped the turn with fix rounds left.)"""
        turn = steps.turn
        turn.repetition.key, turn.repetition.count = None, 0
        turn.cycles = CycleTracker()
        return None

    def batch_done(self, steps: TurnView, batch: Batch) -> Finish | None:
        if batch.paused:  # looked at once the client's results are in
            return None
        config = steps.config
        cycle = steps.turn.cycles.observe(batch, config)  # on a first cycle: a nudge in the last result
        # The call vet_call stopped at: "repeated" and not shown to the hooks (a nudge is shown).
        stopped = next((o for o in batch.answered.values() if o.status == "repeated" and not o.hookable),
                       None)
        if stopped is not None:
            return Finish("limit", repetition_stopped(stopped.call, config))
        if cycle is not None and cycle.stop:
            session_id = steps.session.session_id
            _log.info("session %s: stopped a cycle of tool calls: %s", session_id, cycle.listing)
            return Finish("limit", LimitExceeded("repetition_limit", cycle.message(),
                                                 value=config.repetition_limit))
        return None


def repetition_check(
    call: ToolUseBlock, repetition: RepetitionTracker, config: AgentConfig, cycles: CycleTracker | None
) -> tuple[Verdict, str]:
    """The repetition guard's verdict on ``call`` (counted in ``repetition``) and the result the call
    gets when it is not run."""
    limit = config.repetition_limit
    verdict = repeat_verdict(repetition.see(call), limit, config.repetition_action)
    if verdict == "stop":
        return verdict, repeated_message(call.name, repetition.count, stop=True)
    if verdict == "nudge":
        failed = cycles is not None and cycles.last_failed  # nothing to use: say how to get on
        return verdict, repeated_message(call.name, limit, stop=False, failed=failed)
    return verdict, ""


def repeated_message(name: str, limit: int, *, stop: bool, failed: bool = False) -> str:
    if stop:
        return (
            f"Stopped: '{name}' was called with the same arguments {limit} times in a "
            "row, so the turn was stopped."
        )
    if failed:  # nothing to use: say how to get on, not to wrap up
        return (
            f"Not run: you have called '{name}' with these same arguments {limit} times in a "
            "row and it failed the same way each time. Read the error message, then change the "
            "arguments or try a different tool or approach. The same call again stops the turn."
        )
    return (
        f"Not run: you have called '{name}' with these same arguments {limit} times in a "
        "row, and the result will not change. Use the earlier result, or try a different "
        "approach. The same call again stops the turn."
    )
