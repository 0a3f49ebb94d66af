"""Whether a reply only echoes the reminder text mode sends after tool results.

Small models echo the runtime's own words back as their "answer": whole ("Continue with the task:
Write the next tool call now ..."), without its parenthesis, or as a fragment ("Write the file the
task asks for."), often after repeating the task. Matching the reminder's sentences exactly missed
the last two (seen with Qwen2.5-Coder 1.5B). So a reply is an echo when it holds a run of
``_RUN`` words of a reminder, or when nearly all of its words (``_SHARE``, at least ``_FEWEST``) are
the reminders' words: an answer says what was done with words of its own (file names, results).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from agcore.agent.textcalls._reply_shape import CONSTRAINED_REMINDER
from agcore.agent.textcalls._text_tools import REMINDER_TEXTS

__all__ = ["ReminderEcho", "is_reminder_echo"]

#: A word: letters, digits and ``_.'/-``, not starting or ending with ``.`` or ``'`` (one pass; no
#: strip per word: every final answer is read).
_WORD = re.compile(r"[a-z0-9_/-](?:[a-z0-9_.'/-]*[a-z0-9_/-])?")
#: Consecutive reminder words that no answer of its own would repeat.
_RUN = 7
#: The share of a short reply's words that must be the reminders' for it to be an echo.
_SHARE = 0.85
_FEWEST = 4


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class ReminderEcho:
    """Recognises echoes of ``reminders`` (the texts text mode sends after tool results)."""

    def __init__(self, reminders: Iterable[str]) -> None:
        texts = [_words(r) for r in reminders]
        self._vocabulary = frozenset(w for words in texts for w in words)
        self._runs = frozenset(
            tuple(words[i : i + _RUN]) for words in texts for i in range(len(words) - _RUN + 1)
        )

    def __call__(self, text: str) -> bool:
        words = _words(text)
        known = [w in self._vocabulary for w in words]
        if any(tuple(words[i : i + _RUN]) in self._runs for i in _run_starts(known)):
            return True
        if len(words) < _FEWEST:
            return False
        return sum(known) / len(words) >= _SHARE


def _run_starts(known: list[bool]) -> Iterable[int]:
    """Where a run of ``_RUN`` reminder words may start: only inside a streak of that many words that
    are all the reminders' (a real answer has few such streaks, so few runs are looked up)."""
    streak = 0
    for i, is_known in enumerate(known):
        streak = streak + 1 if is_known else 0
        if streak >= _RUN:
            yield i - _RUN + 1


@cache
def _echo() -> ReminderEcho:
    return ReminderEcho((*REMINDER_TEXTS, CONSTRAINED_REMINDER))


def is_reminder_echo(text: str) -> bool:
    """Whether ``text`` repeats the reminder text mode adds after tool results (in the tagged or the
    constrained shape), whole or in part: a small model that echoes it back has not answered."""
    return _echo()(text)
