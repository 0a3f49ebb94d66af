"""Acceptance checks: commands (``pytest -q``) that must pass before a turn's "done" counts.

```python
from agcore.agent import AgentBuilder
from agcore.agent.checks import AcceptanceChecks, check_report

bundle = AgentBuilder().model(...).tools(workspace.tools()).capabilities(
    AcceptanceChecks(workspace, ["pytest -q"], rounds=3)
).build()
```

All of it is also importable from ``agcore.agent``; loaded on first use. docs/checks.md says more."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agcore._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from agcore.agent.checks._acceptance import AcceptanceChecks, checks_for_turn, turn_checks
    from agcore.agent.checks._check_report import (
        CHECKS_KEY,
        CheckOutcome,
        CheckReport,
        ChecksFailed,
        check_report,
    )
    from agcore.agent.checks._claims import (
        CLAIMS_KEY,
        ClaimedChanges,
        ClaimNotBorneOut,
        UnbornClaim,
        claimed_files,
        unborn_claims,
    )
    from agcore.agent.checks._review import (
        REVIEW_KEY,
        REVIEW_PROMPT,
        AnswerReview,
        ReviewFailed,
        review_requests,
        review_verdict,
    )
    from agcore.agent.checks._review_brief import ReviewBrief

#: Each public name and the module defining it (``agcore.agent`` re-exports them from this map).
EXPORTS = {
    "AcceptanceChecks": "agcore.agent.checks._acceptance",
    "checks_for_turn": "agcore.agent.checks._acceptance",
    "turn_checks": "agcore.agent.checks._acceptance",
    "REVIEW_KEY": "agcore.agent.checks._review",
    "REVIEW_PROMPT": "agcore.agent.checks._review",
    "AnswerReview": "agcore.agent.checks._review",
    "ReviewFailed": "agcore.agent.checks._review",
    "review_verdict": "agcore.agent.checks._review",
    "review_requests": "agcore.agent.checks._review",
    "ReviewBrief": "agcore.agent.checks._review_brief",
    "CLAIMS_KEY": "agcore.agent.checks._claims",
    "ClaimedChanges": "agcore.agent.checks._claims",
    "ClaimNotBorneOut": "agcore.agent.checks._claims",
    "UnbornClaim": "agcore.agent.checks._claims",
    "claimed_files": "agcore.agent.checks._claims",
    "unborn_claims": "agcore.agent.checks._claims",
    "CHECKS_KEY": "agcore.agent.checks._check_report",
    "CheckOutcome": "agcore.agent.checks._check_report",
    "CheckReport": "agcore.agent.checks._check_report",
    "ChecksFailed": "agcore.agent.checks._check_report",
    "check_report": "agcore.agent.checks._check_report",
}

__all__ = [
    "CHECKS_KEY",
    "CLAIMS_KEY",
    "REVIEW_KEY",
    "REVIEW_PROMPT",
    "AcceptanceChecks",
    "AnswerReview",
    "CheckOutcome",
    "CheckReport",
    "ChecksFailed",
    "ClaimNotBorneOut",
    "ClaimedChanges",
    "ReviewBrief",
    "ReviewFailed",
    "UnbornClaim",
    "check_report",
    "claimed_files",
    "review_requests",
    "review_verdict",
    "checks_for_turn",
    "turn_checks",
    "unborn_claims",
]


def __getattr__(name: str) -> Any:
    return lazy_getattr(__name__, EXPORTS, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, EXPORTS)
