"""``SessionState``: everything a running session holds besides its messages, as one object.

The turn counter and the session's start, whether ``on_session_start`` has fired, the last model
used, the tools approved "always", the queued steering and follow-up input, whether the session
switched to text-mode tool calls, the plan step running, the application's ``app_state``, and the
turn in progress (``TurnState``, with its tool batch in flight). Every runtime saves and loads this
one object, never a hand-picked copy of its fields: ``SessionStore`` records (``_persistence``),
LangGraph checkpoints (the ``session_state`` channel) and Temporal's continue-as-new (through the
store record), so a field added here is saved everywhere.

``to_json`` / ``from_json`` round-trip it through JSON. The turn in progress is written when asked
(``running_turn=True``: a checkpoint between two graph nodes) or when it waits for client tools; a
store writing after every message leaves a running turn out, since a process that dies mid-turn is
repaired on load, not resumed mid-batch.
"""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from agcore.agent._turn import TurnState
from agcore.llm.types import UserMessage

__all__ = ["STATE_VERSION", "SessionState"]

#: The version ``to_json`` writes; ``from_json`` refuses a newer one (``ValueError``).
STATE_VERSION = 1


@dataclass(slots=True)
class SessionState:
    """A session's state apart from its messages (``AgentSession.state``): what every runtime saves
    and loads as one object (a store's record, a LangGraph checkpoint, Temporal's continue-as-new),
    so a field added here is saved everywhere (docs/runtimes.md)."""

    #: When the conversation began (epoch seconds): ``AgentConfig.session_ttl`` counts from it.
    created_at: float
    #: Turns started so far (``HookContext.turn_index``).
    turn_index: int = 0
    #: Whether ``on_session_start`` has fired (``close()`` clears it).
    started: bool = False
    #: ``(provider, model)`` of the latest model call.
    last_model: tuple[str, str] | None = None
    #: Tools the user approved for the whole session (a confirmation answered "always").
    always_confirmed: set[str] = field(default_factory=set)
    #: Input for the running turn (``steer``) and for when it would end (``follow_up``).
    steering: deque[UserMessage] = field(default_factory=deque)
    follow_ups: deque[UserMessage] = field(default_factory=deque)
    #: The model wrote its calls as text, so the session uses text-mode tool calls for good.
    text_mode: bool = False
    #: The plan step a turn belongs to (set by plan execution; hooks see it).
    plan_step_index: int | None = None
    #: JSON-able application data saved with the session (plan progress, ...).
    app_state: dict[str, Any] = field(default_factory=dict)
    #: The turn in progress, or paused for client tools; None between turns.
    turn: TurnState | None = None

    def drain_steering(self) -> list[UserMessage]:
        """The queued steering input, taken out of the queue."""
        return _drain(self.steering)

    def drain_follow_ups(self) -> list[UserMessage]:
        """The queued follow-up input, taken out of the queue."""
        return _drain(self.follow_ups)

    def to_json(self, *, running_turn: bool = False) -> dict[str, Any]:
        """The state as JSON-able data, a snapshot that shares nothing with the live state (a runtime
        compares what it wrote last with what it reads back; ``app_state`` is edited in place between
        turns). The turn in progress is written when ``running_turn`` (a checkpoint between graph
        nodes) or when it waits for client tools; a store saving after each message leaves a running
        turn out (a process that dies mid-turn is repaired on load)."""
        turn = self.turn
        keep_turn = turn is not None and (running_turn or turn.paused)
        return {
            "version": STATE_VERSION,
            "created_at": self.created_at,
            "turn_index": self.turn_index,
            "started": self.started,
            "last_model": list(self.last_model) if self.last_model is not None else None,
            "always_confirmed": sorted(self.always_confirmed),
            "steering": [m.model_dump(mode="json") for m in self.steering],
            "follow_ups": [m.model_dump(mode="json") for m in self.follow_ups],
            "text_mode": self.text_mode,
            "plan_step_index": self.plan_step_index,
            "app_state": _snapshot(self.app_state),  # the application edits it in place
            "turn": turn.to_json() if keep_turn and turn is not None else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], history_length: int, *, created_at: float = 0.0) -> SessionState:
        """The state ``to_json`` wrote, over a history of ``history_length`` messages (``created_at``
        where the data has none: a record that keeps it apart). ``ValueError`` for a newer version."""
        version = data.get("version", STATE_VERSION)
        if version > STATE_VERSION:
            raise ValueError(f"state version {version}, newer than this agcore's {STATE_VERSION}")
        last = data.get("last_model")
        turn = data.get("turn", data.get("pending"))  # "pending": agcore 0.1's paused turn
        return cls(
            created_at=data.get("created_at", created_at),
            turn_index=data.get("turn_index", 0),
            started=bool(data.get("started", False)),
            last_model=(last[0], last[1]) if last else None,
            always_confirmed=set(data.get("always_confirmed", ())),
            steering=deque(UserMessage.model_validate(m) for m in data.get("steering", ())),
            follow_ups=deque(UserMessage.model_validate(m) for m in data.get("follow_ups", ())),
            text_mode=bool(data.get("text_mode", False)),
            plan_step_index=data.get("plan_step_index"),
            app_state=_snapshot(data.get("app_state") or {}),  # not the caller's data, edited in place
            turn=TurnState.from_json(turn, history_length) if turn else None,
        )


def _snapshot(data: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of ``data``; an empty dict without ``deepcopy``'s machinery (~2 µs, paid at every
    graph step's checkpoint, where ``app_state`` is nearly always empty)."""
    return copy.deepcopy(data) if data else {}


def _drain(queue: deque[UserMessage]) -> list[UserMessage]:
    drained: list[UserMessage] = []
    while queue:
        drained.append(queue.popleft())
    return drained
