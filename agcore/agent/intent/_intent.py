"""What a request is: an ``Intent`` (a label, how sure, why) and the ``IntentClassifier`` protocol.

Seed 002's decision gate: before planning, decide whether the user asked for a coding task, asked
what the agent can do, wants the repository explained, or is chatting, then plan, offer tools and
prompt accordingly. The labels are strings, so an application adds its own (``"deploy"``) next to
the four agcore names here; ``UNCERTAIN`` is what a classifier says when nothing fits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from agcore.agent.session_like import SessionLike

__all__ = [
    "CAPABILITY_QUERY",
    "CHAT",
    "CODING_TASK",
    "DEFAULT_INTENTS",
    "REPO_ANALYSIS",
    "UNCERTAIN",
    "Intent",
    "IntentClassifier",
]

#: Change code: fix, implement, refactor, write a test.
CODING_TASK = "coding_task"
#: Ask what the agent is or can do ("what tools do you have?").
CAPABILITY_QUERY = "capability_query"
#: Understand the repository without changing it ("how does the parser work?").
REPO_ANALYSIS = "repo_analysis"
#: Small talk: greetings, thanks.
CHAT = "chat"
#: Nothing fitted well enough: treat it as the most capable route (plan, all tools).
UNCERTAIN = "uncertain"

#: The labels agcore's classifiers choose from by default, each with what it means to a model.
DEFAULT_INTENTS: dict[str, str] = {
    CODING_TASK: "the user wants code or files changed, written, fixed, refactored or tested",
    CAPABILITY_QUERY: "the user asks what you are, what you can do, or which tools you have",
    REPO_ANALYSIS: "the user wants the code base explained, searched or reviewed, without changes",
    CHAT: "greetings, thanks or small talk that needs no tools",
}


class Intent(BaseModel):
    """A request's intent: ``label`` (one of the classifier's labels, or ``UNCERTAIN``),
    ``confidence`` from 0 to 1, ``reason`` in a few words, and which ``classifier`` decided."""

    model_config = ConfigDict(frozen=True)

    label: str
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    reason: str = ""
    classifier: str = ""


@runtime_checkable
class IntentClassifier(Protocol):
    """Decides what a request is. ``session`` is the conversation it arrived in, when there is one
    (a model-backed classifier calls the session's model; a rule-based one ignores it)."""

    async def classify(self, text: str, session: SessionLike | None = None) -> Intent:
        """The intent of ``text``."""
        ...
