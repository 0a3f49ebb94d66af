"""``IntentGate``: the decision gate of seed 002 as a capability.

When a turn starts, the user's input is classified (``IntentClassifier``; keywords by default); the
intent's ``IntentRoute`` then shapes every model call of the turn: which tools are offered (none for
chat), what the system prompt adds. The intent is kept in ``session.state.app_state["intent"]`` (saved
with the session) and in the turn's ``capabilities``, and ``on_intent`` hears of it. Turns of a plan's
steps and of sub-agents (a plan drafted read-only too) are not classified: that was decided already.
``preset_intent`` hands the gate an intent decided already (``DefaultTaskAgent`` does, for a goal it
answers directly), so it is not asked twice.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agcore.agent.capability import Capability, ModelCall, TurnView
from agcore.agent.intent._intent import CAPABILITY_QUERY, CHAT, REPO_ANALYSIS, Intent, IntentClassifier
from agcore.agent.intent._keyword_intent import KeywordIntentClassifier

if TYPE_CHECKING:
    from agcore.agent.session_like import SessionLike
    from agcore.llm.types import ToolDefinition, UserMessage
    from agcore.tools import Tool

__all__ = [
    "DEFAULT_ROUTES",
    "INTENT_STATE_KEY",
    "IntentGate",
    "IntentRoute",
    "latest_intent",
    "preset_intent",
]

_log = logging.getLogger("agcore.agent")

#: Where the session keeps the latest turn's intent (``session.state.app_state[INTENT_STATE_KEY]``).
INTENT_STATE_KEY = "intent"
_PRESET_KEY = "intent_preset"
_TURN_KEY = "intent"

#: Told of every intent the gate decides; sync or async.
IntentObserver = Callable[[Intent], "Awaitable[None] | None"]


@dataclass(frozen=True, slots=True)
class IntentRoute:
    """What a turn of one intent runs with. ``tools``: the names of the tools offered (None: all the
    agent offers; ``()``: none). ``read_only``: of those, only the tools marked ``Tool.read_only``.
    ``instructions``: added to the system prompt. ``list_tools``: the instructions also name the
    agent's tools (for "what can you do?" answered without calling any). ``plan``: whether a task
    agent drafts a plan for it (``DefaultTaskAgent(intent=...)``)."""

    tools: tuple[str, ...] | None = None
    read_only: bool = False
    instructions: str | None = None
    list_tools: bool = False
    plan: bool = False


#: Chat runs without tools; a question about the agent is answered from the list of its tools; a
#: repository analysis reads (the read-only tools only); a coding task runs as configured, and only
#: a coding task (or an uncertain request) is planned.
DEFAULT_ROUTES: dict[str, IntentRoute] = {
    CHAT: IntentRoute(
        tools=(), instructions="The user is chatting: answer briefly and naturally, without tools."),
    CAPABILITY_QUERY: IntentRoute(
        tools=(), list_tools=True,
        instructions="The user asks about you: say what you can do for them and with which tools, "
                     "briefly, without calling any."),
    REPO_ANALYSIS: IntentRoute(
        read_only=True,
        instructions="The user wants to understand the code, not change it: read what you need and "
                     "explain; do not modify files."),
    "coding_task": IntentRoute(plan=True),
    "uncertain": IntentRoute(plan=True),
}


class IntentGate(Capability):
    """Classifies each turn's input with ``classifier`` (``KeywordIntentClassifier()`` by default)
    and runs the turn with its route from ``routes`` (``DEFAULT_ROUTES``; an intent without a route
    runs unchanged). ``on_intent(intent)`` is called with each decision."""

    def __init__(
        self,
        classifier: IntentClassifier | None = None,
        routes: Mapping[str, IntentRoute] | None = None,
        *,
        on_intent: IntentObserver | None = None,
    ) -> None:
        self.classifier: IntentClassifier = classifier or KeywordIntentClassifier()
        self.routes: dict[str, IntentRoute] = dict(DEFAULT_ROUTES if routes is None else routes)
        self.on_intent = on_intent

    def route(self, intent: Intent) -> IntentRoute | None:
        """The route a turn of ``intent`` runs with (None: unchanged)."""
        return self.routes.get(intent.label)

    async def decide(self, text: str, session: SessionLike) -> Intent:
        """Classify ``text`` for ``session``: the intent, kept as the session's latest and told to
        ``on_intent`` (a task agent deciding whether to plan calls this too)."""
        return await self._record(await self.classifier.classify(text, session), session)

    async def start_turn(self, steps: TurnView, message: UserMessage) -> None:
        session = steps.session
        preset = session.state.app_state.pop(_PRESET_KEY, None)
        if preset is not None:  # decided (and told) already
            intent = Intent.model_validate(preset)
        elif session.state.plan_step_index is not None or session.parent is not None:
            return  # a plan's step, a sub-agent's task (or a plan being drafted): decided already
        else:
            intent = await self.decide(message.text, session)
        steps.turn.capabilities[_TURN_KEY] = intent.model_dump(mode="json")

    async def _record(self, intent: Intent, session: SessionLike) -> Intent:
        session.state.app_state[INTENT_STATE_KEY] = intent.model_dump(mode="json")
        _log.info("session %s: intent %s (%.2f, %s)", session.session_id, intent.label,
                  intent.confidence, intent.reason or intent.classifier)
        if self.on_intent is not None:
            outcome = self.on_intent(intent)
            if inspect.isawaitable(outcome):
                await outcome
        return intent

    def shape_request(self, steps: TurnView, call: ModelCall) -> None:
        decided = steps.turn.capabilities.get(_TURN_KEY)
        route = self.routes.get(decided["label"]) if decided else None
        if route is None:
            return
        request = call.request
        update: dict[str, Any] = {}
        output = _output_name(steps)  # a typed turn's answer tool stays offered
        if route.tools is not None or route.read_only:
            registry = steps.session.bundle.tool_registry()
            update["tools"] = [t for t in request.tools
                               if t.name == output or _kept(route, t.name, registry.get(t.name))]
        lines = [route.instructions] if route.instructions else []
        if route.list_tools:
            lines.append(_tool_list(request.tools, output_name=output))
        if lines:
            update["system"] = "\n\n".join([request.system, *lines] if request.system else lines)
        if update:
            call.request = request.model_copy(update=update)


def preset_intent(session: SessionLike, intent: Intent) -> None:
    """Have the session's next turn run as ``intent`` without classifying its input again."""
    session.state.app_state[_PRESET_KEY] = intent.model_dump(mode="json")


def latest_intent(session: SessionLike) -> Intent | None:
    """The intent the gate decided for the session's latest classified turn (None: none yet)."""
    saved = session.state.app_state.get(INTENT_STATE_KEY)
    return Intent.model_validate(saved) if saved is not None else None


def _kept(route: IntentRoute, name: str, tool: Tool | None) -> bool:
    """Whether the route offers the tool ``name`` (``tool``: the registry's; None for one a hook or
    the vendor adds, whose reading or writing is unknown: not offered where only reading is)."""
    named = route.tools is None or name in route.tools
    return named and (not route.read_only or (tool is not None and tool.read_only))


def _output_name(steps: TurnView) -> str | None:
    output = steps.turn.output
    return output.name if output is not None else None


def _tool_list(tools: list[ToolDefinition], *, output_name: str | None) -> str:
    listed = [f"- {t.name}: {t.description.splitlines()[0] if t.description else ''}".rstrip(": ")
              for t in tools if t.name != output_name]
    if not listed:
        return "You have no tools in this session."
    return "Your tools:\n" + "\n".join(listed)
