"""What acceptance checks found: one ``CheckOutcome`` per command run, the turn's ``CheckReport``, and
``ChecksFailed``, the error a turn ends with when its checks still fail.

The report is kept in the turn's state under ``CHECKS_KEY`` as JSON data (so it is saved wherever the
turn is, and a LangGraph or Temporal run carries it as well), and handed on in
``TurnResult.capabilities``; ``check_report(result)`` reads it back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from agcore.agent._errors import AgentError

if TYPE_CHECKING:
    from agcore.agent._result import TurnResult

__all__ = ["CHECKS_KEY", "CheckOutcome", "CheckReport", "ChecksFailed", "check_report"]

#: The name the checks keep their state under (``TurnState.capabilities``, ``TurnResult.capabilities``).
CHECKS_KEY = "acceptance_checks"


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """One run of one check: ``status`` is ``exit 0``, ``exit 1``, ``timed out after 30s`` or
    ``not run: <why>`` (the guard refused it, the program is missing...); ``output`` the end of what it
    printed, bounded."""

    command: str
    passed: bool
    status: str
    exit_code: int | None = None
    output: str = ""
    round: int = 1
    #: The check could not run at all: no round of the model's can fix that.
    not_run: bool = False
    #: The check read the answer (its standard input): what the model answers is part of what it checks.
    read_answer: bool = False

    def to_json(self) -> dict[str, Any]:
        """The outcome as JSON-able data (kept in the turn's state)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckOutcome:
        """The outcome ``to_json`` wrote."""
        return cls(**data)


@dataclass(frozen=True, slots=True)
class CheckReport:
    """The checks of one turn: how many times they ran (``rounds``) and what the last run found
    (``outcomes``: every check passed, or the checks up to the first that failed)."""

    rounds: int = 0
    outcomes: list[CheckOutcome] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether the last run passed every check."""
        return bool(self.outcomes) and all(o.passed for o in self.outcomes)

    @property
    def failure(self) -> CheckOutcome | None:
        """The check that failed in the last run (None if all passed)."""
        return next((o for o in self.outcomes if not o.passed), None)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-able data (kept in the turn's state)."""
        return {"rounds": self.rounds, "outcomes": [o.to_json() for o in self.outcomes]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckReport:
        """The report ``to_json`` wrote."""
        return cls(int(data.get("rounds", 0)), [CheckOutcome.from_json(o) for o in data.get("outcomes", ())])


def check_report(result: TurnResult) -> CheckReport | None:
    """The acceptance checks' report of a finished turn (None: no check ran in it, e.g. none was
    given, or the turn ended before the model said it was done)."""
    data = result.capabilities.get(CHECKS_KEY)
    if not data or not data.get("outcomes"):
        return None
    return CheckReport.from_json(data)


class ChecksFailed(AgentError):
    """The model said it was done, but an acceptance check still failed after ``rounds`` rounds of
    asking it to fix the cause (or the check could not run at all). ``outcome`` is the failing check,
    with its exit status and the end of its output. Recoverable: another turn (or a plan step's retry)
    may fix it; the history stays valid."""

    recoverable: ClassVar[bool] = True

    def __init__(self, outcome: CheckOutcome, *, rounds: int) -> None:
        if outcome.not_run:
            text = (f"The acceptance check {outcome.command!r} could not run ({outcome.status}). Fix the "
                    "check's command (it runs in the workspace, through the same guard and sandbox as "
                    "run_command), then run the task again.")
        else:
            asked = f"after asking the model to fix it {rounds} time{'s' if rounds != 1 else ''}"
            tail = f" Its output ends:\n{outcome.output}" if outcome.output else ""
            text = (f"The acceptance check {outcome.command!r} failed ({outcome.status}) {asked}, so the "
                    f"work is not done. Fix it yourself, or run the task again (a larger model, or more "
                    f"rounds).{tail}")
        super().__init__(text)
        self.outcome = outcome
        self.rounds = rounds
