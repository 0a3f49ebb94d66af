"""``ModelIntentClassifier``: one small typed model call decides the label.

The call asks for ``{"label", "confidence", "reason"}`` (a JSON Schema the vendor holds the answer
to where it can, and the same shape described in the prompt for servers that cannot), at
temperature 0 with a small ``max_tokens``. It goes to the given provider, or to the session's. An
answer that cannot be read, names no known label, or a call that fails, falls back to the
``fallback`` classifier (keywords by default), so the gate never ends a turn by itself.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field, ValidationError

from agcore.agent._bundle import bundle_resolve_provider
from agcore.agent.intent._intent import DEFAULT_INTENTS, UNCERTAIN, Intent, IntentClassifier
from agcore.agent.intent._keyword_intent import KeywordIntentClassifier
from agcore.agent.output import StructuredOutput
from agcore.llm.errors import LLMError
from agcore.llm.types import LLMRequest

if TYPE_CHECKING:
    from agcore.agent.session_like import SessionLike
    from agcore.llm.provider import LLMProvider

__all__ = ["INTENT_PROMPT", "ModelIntentClassifier"]

_log = logging.getLogger("agcore.agent")

#: ``{labels}`` is the list of labels with their meanings; ``{shape}`` the answer's JSON shape.
INTENT_PROMPT = """\
Classify the user's message into exactly one of these labels:
{labels}
- uncertain: none of the above fits

Answer with only a JSON object of this shape, no other text:
{shape}"""

_SHAPE = '{"label": "<one label>", "confidence": <0.0 to 1.0>, "reason": "<a few words>"}'


class _Choice(BaseModel):
    label: str
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    reason: str = ""


_CHOICE = StructuredOutput(_Choice, name="intent")
_KEYWORDS = KeywordIntentClassifier()


class ModelIntentClassifier:
    """Asks a model for the label (``labels``: label -> what it means; ``DEFAULT_INTENTS``).
    ``provider``: the model to ask (None: the session's, so it needs a session). ``fallback``
    decides when the model's answer is unusable (None: ``UNCERTAIN``). ``schema``: send the JSON
    Schema as the request's ``response_format`` (turn off for a server that refuses it)."""

    name = "model"

    def __init__(
        self,
        provider: LLMProvider | None = None,
        *,
        labels: Mapping[str, str] | None = None,
        fallback: IntentClassifier | None = _KEYWORDS,
        max_tokens: int = 200,
        schema: bool = True,
    ) -> None:
        self.provider = provider
        self.labels: dict[str, str] = dict(DEFAULT_INTENTS if labels is None else labels)
        if not self.labels:
            raise ValueError("labels must name at least one label with what it means")
        self.fallback = fallback
        self.max_tokens = max_tokens
        self.schema = schema

    def request(self, text: str) -> LLMRequest:
        """The classification request for ``text``."""
        listed = "\n".join(f"- {label}: {meaning}" for label, meaning in self.labels.items())
        system = INTENT_PROMPT.replace("{labels}", listed).replace("{shape}", _SHAPE)
        return LLMRequest.build(
            text, system=system, max_tokens=self.max_tokens, temperature=0.0,
            response_format=_CHOICE.response_format if self.schema else None,
        )

    async def classify(self, text: str, session: SessionLike | None = None) -> Intent:
        """The model's label for ``text``; the fallback's when the model gives none usable."""
        request = self.request(text)
        try:
            provider = self.provider
            if provider is None:
                if session is None:
                    raise ValueError(
                        "ModelIntentClassifier has no provider: pass provider=... or classify "
                        "within a session (the IntentGate capability passes its session)"
                    )
                provider = await bundle_resolve_provider(session.bundle, session, request)
            response = await provider.complete(request)
        except LLMError as exc:
            return await self._fall_back(text, session, f"the model call failed: {exc}")
        if session is not None:
            session.usage.add(response.message)
        try:
            choice: _Choice = _CHOICE.validate_text(response.message.text)
        except (ValueError, ValidationError, json.JSONDecodeError):
            return await self._fall_back(text, session, "the model's answer held no readable label")
        if choice.label not in self.labels and choice.label != UNCERTAIN:
            return await self._fall_back(text, session, f"the model named no known label ({choice.label!r})")
        return Intent(label=choice.label, confidence=choice.confidence, reason=choice.reason,
                      classifier=self.name)

    async def _fall_back(self, text: str, session: SessionLike | None, why: str) -> Intent:
        _log.info("intent: %s; falling back", why)
        if self.fallback is None:
            return Intent(label=UNCERTAIN, confidence=0.0, reason=why, classifier=self.name)
        intent = await self.fallback.classify(text, session)
        return intent.model_copy(update={"reason": f"{why}; {intent.reason}".rstrip("; ")})
