"""Wrap up when a call gives nothing new, as a capability: once the model repeats a call that
succeeded and gets the very same result again, its next reply must be the answer — in a turn whose
answer is judged before anything says "done" (acceptance checks, a plan with checks). Without a
judge the repetition guard's honest stop stands: a forced answer there would be a claim nobody
checks (measured: a 1.5B model that had grepped twice answered "I wrote the path into answer.txt",
which it had not).

Small local models often finish the work of a step and then go on making the call they just made
(read the file again, run the same command again), because the reminder after tool results asks for
a call. The repetition guard then stops the turn, and a step whose work was done fails: in issue 26's
runs every plan failed this way ("Read settings.py", read three times, stopped). Here the second
identical (call, result) pair gets a note saying so, and the next model call offers no call: on a
server that constrains the reply shape (``ConstrainedCalls``) only the answer form is left, with
native tools ``tool_choice`` is ``none``. The answer then goes through the same gates as any answer
(``AnswerRequired``, acceptance checks, a plan step's verifier); if a check fails, the model gets its
tools back with the check's output, and the calls it made before that answer no longer count as seen.

A result that changed (a file edited between two reads, a test that now passes) is new information:
that is no repeat; a duration in it ("1 failed in 0.01s") is not a change. A failed call is left to the
repetition guard, which tells the model to change it; a successful call the guard answers with its
nudge (a third time in a row) makes the next reply the answer too.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from agcore.agent._cycles import describe_call, with_note
from agcore.agent.capability import Capability, ModelCall, Next, Reply, TurnView
from agcore.agent.textcalls import answer_format, is_constrained
from agcore.llm import ToolChoice

if TYPE_CHECKING:
    from agcore.agent._batch import Batch
    from agcore.agent.session_like import SessionLike

__all__ = ["JUDGED_KEY", "WRAP_UP_KEY", "WrapUp", "judged_answers"]

#: Where the capability keeps the last result of each call of the turn (a digest) and whether the
#: next model call must be the answer (``TurnState.capabilities``).
WRAP_UP_KEY = "wrap_up"
#: Set (True) where a turn's answer will be judged before anything says "done": in the turn's state
#: by ``AcceptanceChecks`` when it has checks for the turn, in the session's ``app_state`` by
#: ``judged_answers`` (a plan with checks, around its steps' turns).
JUDGED_KEY = "answer_judged"

_FAILED = "failed"
# A duration in a result ("1 failed in 0.01s") changes from run to run and says nothing new.
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds)\b")
_canonical_json = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode


class WrapUp(Capability):
    """The next reply must be the answer once a successful call is repeated with the same result, in
    a turn whose answer will be judged (``JUDGED_KEY``)."""

    def batch_done(self, steps: TurnView, batch: Batch) -> None:
        if batch.paused or not _judged(steps):
            return
        state: dict[str, Any] = steps.turn.capabilities.setdefault(WRAP_UP_KEY, {"calls": {}})
        calls: dict[str, str] = state["calls"]
        for outcome in batch.outcomes():
            key = _digest(outcome.call.name, _arguments(outcome.call.input))
            if outcome.status == "repeated" and outcome.hookable:  # the guard's nudge, not its stop
                if calls.get(key, _FAILED) != _FAILED:
                    state["due"] = True
                    outcome.result = with_note(outcome.result, _note(describe_call(outcome.call)))
                continue
            if outcome.status != "ok" or outcome.result.is_error:
                calls[key] = _FAILED
                continue
            result = _digest(_DURATION.sub("#", outcome.result.text))
            if calls.get(key) != result:
                calls[key] = result
                continue
            state["due"] = True
            outcome.result = with_note(outcome.result, _note(describe_call(outcome.call)))

    async def before_finish(self, steps: TurnView, reply: Reply) -> Next | None:
        # The model answered: if the turn goes on (a check failed, the answer was no answer), what
        # it reads next is new, and reading a file again after that is no sign of a finished step.
        steps.turn.capabilities.pop(WRAP_UP_KEY, None)
        return None

    def encode_request(self, steps: TurnView, call: ModelCall) -> None:
        state = steps.turn.capabilities.get(WRAP_UP_KEY)
        if not state or not state.pop("due", False) or not call.offered:
            return
        output = steps.turn.output
        if output is not None and not output.is_text:  # a typed answer may itself be a tool call
            return
        if is_constrained(call.request):
            call.request = call.request.model_copy(update={"response_format": answer_format()})
        elif call.tool_mode != "text":  # native tools (or auto: native first, text calls read too)
            call.request = call.request.model_copy(update={"tool_choice": ToolChoice(mode="none")})


@contextmanager
def judged_answers(session: SessionLike) -> Iterator[None]:
    """Within the block, the session's turns' answers count as judged (a plan whose checks run
    before it says done): ``WrapUp`` may make a reply the answer."""
    state = session.state.app_state
    before = state.get(JUDGED_KEY)
    state[JUDGED_KEY] = True
    try:
        yield
    finally:
        if before is None:
            state.pop(JUDGED_KEY, None)
        else:
            state[JUDGED_KEY] = before


def _judged(steps: TurnView) -> bool:
    return bool(steps.turn.capabilities.get(JUDGED_KEY) or steps.session.state.app_state.get(JUDGED_KEY))


def _arguments(arguments: Any) -> str:
    try:
        return _canonical_json(arguments)
    except (TypeError, ValueError):
        return repr(arguments)


def _digest(*parts: str) -> str:
    digest = hashlib.blake2b(digest_size=12)
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()


def _note(call: str) -> str:
    return (
        f"[Note from the runtime: {call} gave exactly the same result as when you made it before, so "
        "it tells you nothing new. Your next reply is your answer: say what you did and what came of "
        "it, from the results you have.]"
    )
