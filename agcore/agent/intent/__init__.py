"""The intent gate (seed 002): classify a request before deciding whether to plan, which tools to
offer and what to tell the model. ``IntentClassifier`` is the protocol; ``KeywordIntentClassifier``
the cheap default (no model), ``ModelIntentClassifier`` one small typed model call; ``IntentGate``
the capability that routes each turn by its intent (``IntentRoute``).

Import them from ``agcore.agent.intent``; loaded on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agcore._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from agcore.agent.intent._intent import (
        CAPABILITY_QUERY,
        CHAT,
        CODING_TASK,
        DEFAULT_INTENTS,
        REPO_ANALYSIS,
        UNCERTAIN,
        Intent,
        IntentClassifier,
    )
    from agcore.agent.intent._intent_gate import (
        DEFAULT_ROUTES,
        INTENT_STATE_KEY,
        IntentGate,
        IntentRoute,
        latest_intent,
        preset_intent,
    )
    from agcore.agent.intent._keyword_intent import DEFAULT_KEYWORDS, KeywordIntentClassifier
    from agcore.agent.intent._model_intent import INTENT_PROMPT, ModelIntentClassifier

_INTENT = "agcore.agent.intent._intent"
_GATE = "agcore.agent.intent._intent_gate"
#: Each public name and the module defining it (``agcore.agent`` re-exports them from this map).
EXPORTS = {
    "CAPABILITY_QUERY": _INTENT,
    "CHAT": _INTENT,
    "CODING_TASK": _INTENT,
    "DEFAULT_INTENTS": _INTENT,
    "DEFAULT_KEYWORDS": "agcore.agent.intent._keyword_intent",
    "DEFAULT_ROUTES": _GATE,
    "INTENT_PROMPT": "agcore.agent.intent._model_intent",
    "INTENT_STATE_KEY": _GATE,
    "Intent": _INTENT,
    "IntentClassifier": _INTENT,
    "IntentGate": _GATE,
    "IntentRoute": _GATE,
    "KeywordIntentClassifier": "agcore.agent.intent._keyword_intent",
    "ModelIntentClassifier": "agcore.agent.intent._model_intent",
    "REPO_ANALYSIS": _INTENT,
    "UNCERTAIN": _INTENT,
    "latest_intent": _GATE,
    "preset_intent": _GATE,
}

__all__ = [
    "CAPABILITY_QUERY",
    "CHAT",
    "CODING_TASK",
    "DEFAULT_INTENTS",
    "DEFAULT_KEYWORDS",
    "DEFAULT_ROUTES",
    "INTENT_PROMPT",
    "INTENT_STATE_KEY",
    "Intent",
    "IntentClassifier",
    "IntentGate",
    "IntentRoute",
    "KeywordIntentClassifier",
    "ModelIntentClassifier",
    "REPO_ANALYSIS",
    "UNCERTAIN",
    "latest_intent",
    "preset_intent",
]


def __getattr__(name: str) -> Any:
    return lazy_getattr(__name__, EXPORTS, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, EXPORTS)
