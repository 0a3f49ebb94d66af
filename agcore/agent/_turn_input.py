"""What the user asked in the running turn, as text: what a capability compares an answer with."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agcore.agent._messages import UserInput

if TYPE_CHECKING:
    from agcore.agent.capability import TurnView

__all__ = ["turn_input"]


def turn_input(steps: TurnView) -> str:
    """The text of the user's input that started the running turn (and any steered in with it),
    images left out."""
    messages = steps.session.messages[steps.turn.start:]
    return "\n".join(m.text for m in messages if isinstance(m, UserInput))
