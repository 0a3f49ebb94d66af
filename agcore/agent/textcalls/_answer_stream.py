"""Streaming a constrained reply (``_reply_shape``) without showing its JSON: the text of an
``{"answer": "..."}`` reply is shown as it is decoded, escapes read; a ``{"tool_calls": ...}`` reply
shows nothing. A reply that does not open with ``{`` (the server dropped the constraint) goes to
the text-mode filter it wraps, unchanged."""

from __future__ import annotations

import re

from agcore.agent.capability import TextFilter
from agcore.agent.textcalls._reply_shape import ANSWER_OPENING, decoded_prefix

__all__ = ["AnswerTextFilter"]

# The first key as far as it has come (a key that can still become "answer" waits).
_KEY_OPENING = re.compile(r'\s*\{\s*"?([^"]*)')


class AnswerTextFilter:
    """A ``TextFilter`` for constrained replies; ``inner`` filters a reply that is not JSON."""

    def __init__(self, inner: TextFilter | None) -> None:
        self._inner = inner
        self._text = ""
        self._mode: str | None = None  # "answer", "calls", "plain", or None: not known yet
        self._shown = ""

    def feed(self, delta: str) -> str:
        if self._mode == "plain":
            return self._plain(delta)
        self._text += delta
        return self._advance(final=False)

    def flush(self) -> str:
        shown = self._advance(final=True) if self._mode != "plain" else ""
        if self._mode == "plain" and self._inner is not None:
            return shown + self._inner.flush()
        return shown

    def unseen(self, answer: str) -> str:
        if self._mode == "plain" and self._inner is not None:
            return self._inner.unseen(answer)
        if len(answer) > len(self._shown) and answer.startswith(self._shown):
            return answer[len(self._shown) :]
        return ""

    def _advance(self, *, final: bool) -> str:
        if self._mode is None:
            self._mode = self._classify(final)
            if self._mode == "plain":
                return self._plain(self._text)
        if self._mode != "answer":
            return ""
        opening = ANSWER_OPENING.match(self._text)
        decoded = decoded_prefix(self._text[opening.end() :]) if opening else ""
        new = decoded[len(self._shown) :]
        self._shown = decoded
        return new

    def _plain(self, text: str) -> str:
        if self._inner is None:
            self._shown += text
            return text
        return self._inner.feed(text)

    def _classify(self, final: bool) -> str | None:
        stripped = self._text.lstrip()
        if not stripped:
            return "plain" if final else None
        if not stripped.startswith("{"):
            return "plain"
        if ANSWER_OPENING.match(self._text):
            return "answer"
        key = _KEY_OPENING.match(self._text)
        name = key.group(1) if key is not None else ""
        if final or not "answer".startswith(name):
            return "calls"
        return None  # "answer" so far: wait for the rest of its opening
