"""Streaming a constrained reply (``_reply_shape``) without showing its JSON: the text of an
``{"answer": "..."}`` reply is shown as it is decoded, escapes read; a ``{"tool_calls": ...}`` reply
shows nothing. A reply that does not open with ``{`` (the server dropped the constraint) goes to
the text-mode filter it wraps, unchanged."""

from __future__ import annotations

import json
import re

from agcore.agent.capability import TextFilter

__all__ = ["AnswerTextFilter"]

_ANSWER_OPENING = re.compile(r'\s*\{\s*"answer"\s*:\s*"')
# The first key as far as it has come (a key that can still become "answer" waits).
_KEY_OPENING = re.compile(r'\s*\{\s*"?([^"]*)')


def _decoded_prefix(body: str) -> str:
    """The JSON string body ``body`` (after its opening quote) decoded up to its closing quote, or,
    while it is still coming, up to the last complete character (an escape cut in two waits)."""
    end = 0
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == '"':
            end = i
            break
        if ch == "\\":
            width = 6 if body[i + 1 : i + 2] == "u" else 2
            if i + width > len(body):
                break
            i += width
        else:
            i += 1
        end = i
    try:
        decoded: str = json.loads(f'"{body[:end]}"')
    except ValueError:  # a surrogate pair cut in two: wait for its second half
        decoded = json.loads(f'"{body[:max(0, end - 6)]}"') if end >= 6 else ""
    return decoded


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
        opening = _ANSWER_OPENING.match(self._text)
        decoded = _decoded_prefix(self._text[opening.end() :]) if opening else ""
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
        if _ANSWER_OPENING.match(self._text):
            return "answer"
        key = _KEY_OPENING.match(self._text)
        name = key.group(1) if key is not None else ""
        if final or not "answer".startswith(name):
            return "calls"
        return None  # "answer" so far: wait for the rest of its opening
