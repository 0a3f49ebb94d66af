"""``AnswerReview``: without acceptance checks, "done" is not taken on faith.

When the model answers a turn in which a tool call succeeded, and the user gave no check for it, a
separate short request shows a model (the session's, or the one given) the task, the calls that
succeeded with the first line of each result, the files changed since the session began as they are
now, and the answer (``ReviewBrief``), and asks whether every part of the task is done:
``{"missing": "...", "done": true|false}``. "done": the answer stands (``review_verdict`` says it was
reviewed). "not done": the model is told what is missing and goes on, up to ``rounds`` times; still
not done, the turn ends failed with ``ReviewFailed`` — never "done". A review that cannot be made
(the call failed, the verdict is unreadable) leaves the answer as it is, marked unreviewed.

A turn with acceptance checks is judged by them instead (they run the work; a review only reads it).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, ClassVar

import anyio
from pydantic import BaseModel, ValidationError

from agcore.agent._bundle import bundle_resolve_provider
from agcore.agent._errors import AgentError
from agcore.agent._messages import ContextNote
from agcore.agent._turn_input import turn_input
from agcore.agent._wrap_up import JUDGED_KEY
from agcore.agent.capability import CallModel, Capability, Finish, Next, Reply, TurnView
from agcore.agent.checks._review_brief import ReviewBrief, changed_files, successful_calls
from agcore.agent.output import StructuredOutput
from agcore.llm.errors import LLMError
from agcore.llm.types import LLMRequest

if TYPE_CHECKING:
    from agcore.agent._result import TurnResult
    from agcore.llm.provider import LLMProvider
    from agcore.tools.workspace import Workspace

__all__ = [
    "REVIEW_KEY",
    "REVIEW_PROMPT",
    "AnswerReview",
    "ReviewFailed",
    "judged",
    "review_requests",
    "review_verdict",
]

_log = logging.getLogger("agcore.agent")

#: Where the review keeps its rounds and its last verdict (``TurnState.capabilities``, and so
#: ``TurnResult.capabilities``): ``{"rounds": n, "requests": n, "verdict": "done" | "not done" |
#: "unreviewed"}``.
REVIEW_KEY = "answer_review"

REVIEW_PROMPT = """\
You review another assistant's work. Compare THE TASK with the evidence: the tool calls that \
succeeded, the files as they are now, and the final answer. Believe only the evidence, not what the \
answer claims. The task is done only if every part of it shows in the evidence: each file the task \
asks to create or change holds what the task asks for, nothing the task forbids was changed, no \
"Note:" from a tool says that something is still left, and a question is answered in the final \
answer itself.
Reply with only a JSON object: {"missing": "<the part of the task that is not done, or an empty \
string>", "done": true or false}"""


class _Verdict(BaseModel):
    missing: str = ""
    done: bool


_VERDICT = StructuredOutput(_Verdict, name="review")


class ReviewFailed(AgentError):
    """A review of the work found the task not done (``missing`` says what), still so after the model
    was told and went on. Recoverable: another turn may finish it; the history stays valid."""

    recoverable: ClassVar[bool] = True

    def __init__(self, missing: str, *, rounds: int) -> None:
        told = f"after the model was told {rounds} time{'s' if rounds != 1 else ''}" if rounds else ""
        super().__init__(
            f"A review of the work found the task not done ({missing}) {told}, so it did not end done. "
            "Check the workspace yourself, run the task again, or give a check that verifies it (agcore "
            "run --check CMD)."
        )
        self.missing = missing


class AnswerReview(Capability):
    """Review an unchecked turn's answer before it ends "done": when a tool call of the turn succeeded
    and no acceptance check judges it, a short separate request (``ReviewBrief``: the task, the calls
    that succeeded, the changed files, the answer) asks the model what is missing. Done: the answer
    stands. Not done: the model is told and goes on; still not done after ``rounds``, the turn fails
    with ``ReviewFailed``. docs/checks.md has more.

    ``provider``: the model that reviews (None: the session's). ``rounds``: how many times the model
    is told what is missing before the turn fails. ``max_tokens``: the verdict's cap."""

    def __init__(
        self, workspace: Workspace, *, provider: LLMProvider | None = None, rounds: int = 1,
        max_tokens: int = 200,
    ) -> None:
        if rounds < 0:
            raise ValueError(f"rounds must be 0 or more, got {rounds}")
        self.workspace = workspace
        self.provider = provider
        self.rounds = rounds
        self.max_tokens = max_tokens

    def __repr__(self) -> str:
        return f"AnswerReview(rounds={self.rounds})"

    async def before_finish(self, steps: TurnView, reply: Reply) -> Next | None:
        session, turn = steps.session, steps.turn
        if session.parent is not None or turn.output is not None or judged(steps):
            return None
        calls = successful_calls(session.messages[turn.start:])
        if not calls:
            return None  # nothing was done that a review could look at: a chat answer
        files = await anyio.to_thread.run_sync(changed_files, self.workspace.root, session.created_at)
        brief = ReviewBrief(turn_input(steps), calls, files, reply.message.text)
        state: dict[str, Any] = turn.capabilities.setdefault(REVIEW_KEY, {"rounds": 0})
        state["requests"] = int(state.get("requests", 0)) + 1
        missing = await self._missing(steps, brief)
        if missing is None:
            state["verdict"] = "unreviewed"
            return None
        if not missing:
            state["verdict"] = "done"
            return None
        state["verdict"] = "not done"
        state["missing"] = missing
        told = int(state.get("rounds", 0))
        if told >= self.rounds:
            return Finish("error", ReviewFailed(missing, rounds=told))
        state["rounds"] = told + 1
        await steps.record(ContextNote(text=(
            f"A review of your work says the task is not done yet: {missing}. Do what is missing now "
            "with tool calls, then answer with what you did."
        )))
        return CallModel()

    def request(self, brief: ReviewBrief) -> LLMRequest:
        """The review request for ``brief``."""
        return LLMRequest.build(
            f"{brief.text}\n\nIs every part of THE TASK done?", system=REVIEW_PROMPT,
            max_tokens=self.max_tokens, temperature=0.0, response_format=_VERDICT.response_format,
        )

    async def _missing(self, steps: TurnView, brief: ReviewBrief) -> str | None:
        """What the review says is missing ("" when done), or None when no review could be made."""
        request = self.request(brief)
        session = steps.session
        try:
            provider = self.provider or await bundle_resolve_provider(session.bundle, session, request)
            response = await provider.complete(request)
        except LLMError as exc:
            _log.info("answer review: the model call failed (%s); the answer stands unreviewed", exc)
            return None
        session.usage.add(response.message)
        try:
            verdict: _Verdict = _VERDICT.validate_text(response.message.text)
        except (ValueError, ValidationError, json.JSONDecodeError):
            _log.info("answer review: no readable verdict in %r", response.message.text[:200])
            return None
        if verdict.done:
            return ""
        return verdict.missing.strip().rstrip(".") or "the review named no part, but said it is not done"


def judged(steps: TurnView) -> bool:
    """Whether acceptance checks judge this turn (a plan with checks, or ``AcceptanceChecks``)."""
    return bool(steps.turn.capabilities.get(JUDGED_KEY) or steps.session.state.app_state.get(JUDGED_KEY))


def review_verdict(result: TurnResult) -> str | None:
    """How the review judged a finished turn: ``done``, ``not done``, ``unreviewed`` (it could not be
    made), or None (no review ran: checks judged it, nothing was done, or no ``AnswerReview``)."""
    state = result.capabilities.get(REVIEW_KEY)
    return str(state["verdict"]) if isinstance(state, dict) and "verdict" in state else None


def review_requests(result: TurnResult) -> int:
    """How many review requests a finished turn made (model calls besides the turn's own)."""
    state = result.capabilities.get(REVIEW_KEY)
    return int(state.get("requests", 0)) if isinstance(state, dict) else 0
