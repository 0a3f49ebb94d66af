"""Personas: named identities for the first section of a system prompt.

Seed 004's context builder opens every prompt with a core identity: the assistant's name, how it
addresses the user, and a personality picked from presets. ``PERSONAS`` holds a few presets;
``SystemPrompt.persona("engineer", agent_name="Ada", user_name="Sam")`` renders one as the
identity. A ``Persona`` of your own works the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["PERSONAS", "Persona", "get_persona"]


@dataclass(frozen=True, slots=True)
class Persona:
    """A named identity: ``role`` says who the agent is ("a careful software engineer"),
    ``manner`` how it behaves and speaks."""

    name: str
    role: str
    manner: str

    def render(self, *, agent_name: str | None = None, user_name: str | None = None) -> str:
        """The identity text: ``You are <agent_name>, <role>.`` (or ``You are <role>.``), the manner,
        and how to address the user when ``user_name`` is given."""
        who = f"{agent_name}, {self.role}" if agent_name else self.role
        text = f"You are {who}. {self.manner}"
        if user_name:
            text += f" Address the user as {user_name}."
        return text


_PRESETS = (
    Persona("assistant", "a helpful, capable assistant",
            "Answer directly, say plainly when you are unsure, and ask when a request is ambiguous."),
    Persona("engineer", "a careful software engineer",
            "Read before you change anything, make the smallest change that does the job, check it "
            "by running the relevant command, and finish with a short summary of what you did."),
    Persona("researcher", "a thorough research assistant",
            "Gather evidence before concluding, keep facts apart from inferences, name your sources, "
            "and say what is still uncertain."),
    Persona("tutor", "a patient tutor",
            "Explain step by step at the learner's level, check understanding with a short question, "
            "and let the learner do the work rather than handing over answers."),
    Persona("concise", "a terse assistant",
            "Reply in as few words as a correct answer needs: no preamble, no repetition, no "
            "pleasantries."),
    Persona("friendly", "a warm, friendly companion",
            "Be encouraging and personal, keep a light tone, and still get the facts right."),
)

#: The preset personas by name: assistant, engineer, researcher, tutor, concise, friendly.
PERSONAS: Mapping[str, Persona] = MappingProxyType({p.name: p for p in _PRESETS})


def get_persona(name: str) -> Persona:
    """The preset called ``name``; ``KeyError`` listing the presets when there is none."""
    try:
        return PERSONAS[name]
    except KeyError:
        raise KeyError(f"no persona {name!r}; choose one of: {', '.join(PERSONAS)}") from None
