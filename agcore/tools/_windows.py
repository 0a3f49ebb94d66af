"""Keyword windows: a tool output over budget cut to the lines around what the model asked about.

Cutting a long output at its head keeps what comes first, which is rarely what the model wanted: a
search for ``parse_config`` in a 3,000-line log needs the lines around ``parse_config``. Seed 002's
coding agent feeds results back this way ("semantic window sampling by keyword"). The keywords come
from the call's own arguments (a ``pattern`` or ``regex`` as a regular expression; the words of a
``query``, a ``command``, a ``path``'s file name...), so no model call is needed.

What is kept: the head (the command's first lines, a file's header), the tail (a log's conclusion),
and windows of a few lines around the lines that match the most keywords; every gap is marked with
the line numbers it stands for, so the model can ask for exactly those lines. Long lines are taken
in pieces of 400 characters, so a one-line output (JSON) gets windows too, its gaps counted in
characters.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePath
from typing import Any, NamedTuple

__all__ = ["call_keywords", "keyword_windows"]

#: Argument names whose value is a regular expression.
_PATTERN_KEYS = frozenset({"pattern", "regex", "regexp"})
#: Argument names whose words are search terms.
_WORD_KEYS = frozenset({
    "query", "search", "keyword", "keywords", "term", "terms", "symbol", "name", "text", "topic",
    "command", "cmd",
})
#: Argument names holding paths or globs: their file names are terms.
_PATH_KEYS = frozenset({"path", "paths", "file", "files", "filename", "glob"})

#: Words too common to point anywhere (a query is often a question).
_STOP_WORDS = frozenset({
    "the", "and", "for", "with", "where", "what", "which", "how", "why", "who", "when", "this", "that",
    "from", "into", "are", "was", "does", "did", "can", "has", "have", "not", "all", "any",
})
_WORD = re.compile(r"[^\W_][\w.-]*[^\W_]|[^\W\d_]", re.UNICODE)
_MIN_TERM = 3
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_PIECE_CHARS = 400
_HEAD_SHARE = 0.2
_TAIL_SHARE = 0.1
_MIN_BUDGET = 200


def call_keywords(arguments: Mapping[str, Any]) -> list[re.Pattern[str]]:
    """The keywords of a tool call, as case-insensitive patterns: a ``pattern``/``regex`` argument
    as given (literal if it does not compile), the words of ``query``/``command``/``name``... of
    three characters or more (any CJK run), and the file names of ``path``/``glob``."""
    found: dict[str, re.Pattern[str]] = {}
    for key, value in arguments.items():
        for text in _strings(value):
            for source in _terms(key.lower(), text):
                if source not in found:
                    found[source] = _compile(source, regex=key.lower() in _PATTERN_KEYS)
    return list(found.values())


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        yield from (v for v in value if isinstance(v, str))


def _terms(key: str, text: str) -> list[str]:
    if key in _PATTERN_KEYS:
        return [text] if text.strip() else []
    if key in _PATH_KEYS:
        name = PurePath(text.replace("*", "").replace("?", "")).name
        stem = PurePath(name).stem
        return [t for t in dict.fromkeys((name, stem)) if len(t) >= _MIN_TERM]
    if key in _WORD_KEYS:
        words = _WORD.findall(text)
        return [w for w in words if (len(w) >= _MIN_TERM or _CJK.search(w)) and w.lower() not in _STOP_WORDS]
    return []


def _compile(source: str, *, regex: bool) -> re.Pattern[str]:
    if regex:
        try:
            return re.compile(source, re.IGNORECASE | re.MULTILINE)
        except re.error:
            pass  # the tool will say the pattern is bad; here it is a plain string
    return re.compile(re.escape(source), re.IGNORECASE)


def keyword_windows(
    text: str, keywords: Sequence[re.Pattern[str]], max_chars: int, *, context_lines: int = 3,
) -> str:
    """``text`` if it fits in ``max_chars``; else its head, its tail and ``context_lines`` lines
    around the lines matching the most ``keywords`` (head and tail alone without a match), the gaps
    marked with their line numbers, and a last line saying what was kept. At most ``max_chars``."""
    if len(text) <= max_chars:
        return text
    pieces = _pieces(text)
    texts = [p.text for p in pieces]
    n = len(pieces)
    budget = max_chars - len(_note(keywords, n, len(text), len(text)))  # the longest the note can be
    if budget < _MIN_BUDGET:
        marker = f"\n[… cut {len(text):,} characters to {max_chars:,}]"
        return text[: max(0, max_chars - len(marker))] + marker[: max_chars]
    keep, matched = _pick(texts, keywords, budget, context_lines)
    kept = sum(len(t) for t, k in zip(texts, keep, strict=True) if k)
    return _render(pieces, keep) + _note(keywords, matched, kept, len(text))


class _Piece(NamedTuple):
    """A line, or a part of a long line (a one-line JSON document is many pieces)."""

    line: int  # 1-based
    text: str
    starts_line: bool
    ends_line: bool


def _pieces(text: str) -> list[_Piece]:
    pieces: list[_Piece] = []
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        for at in range(0, len(line), _PIECE_CHARS):
            end = at + _PIECE_CHARS
            pieces.append(_Piece(number, line[at:end], at == 0, end >= len(line)))
    return pieces


_GAP_WIDTH = len(" [… lines 100000-100000 omitted …]\n")


class _Picker:
    """Chooses the lines to keep within a character budget."""

    def __init__(self, lines: list[str], budget: int) -> None:
        self.lines = lines
        self.budget = budget
        self.keep = [False] * len(lines)
        self.used = _GAP_WIDTH  # nothing kept yet: one gap

    def _kept(self, i: int) -> bool:
        return i < 0 or i >= len(self.lines) or self.keep[i]  # no gap beyond either end

    def take(self, i: int) -> bool:
        """Keep line ``i`` if it fits, counting the gap markers it adds (a run of omitted lines split
        in two) or removes (the last omitted line between kept ones); whether it is kept."""
        if self.keep[i]:
            return True
        before, after = self._kept(i - 1), self._kept(i + 1)
        gaps = -1 if before and after else 1 if not (before or after) else 0
        cost = len(self.lines[i]) + 1 + gaps * _GAP_WIDTH
        if self.used + cost > self.budget:
            return False
        self.keep[i] = True
        self.used += cost
        return True

    def fill(self, order: Iterable[int], limit: int) -> None:
        """Keep lines in ``order`` until ``limit`` characters are used or one does not fit."""
        for i in order:
            if self.used >= limit or not self.take(i):
                return

    def window(self, i: int, context: int) -> None:
        """Keep the lines around ``i``, nearest first."""
        n = len(self.lines)
        for j in sorted(range(max(0, i - context), min(n, i + context + 1)), key=lambda j: abs(j - i)):
            self.take(j)


def _pick(lines: list[str], keywords: Sequence[re.Pattern[str]], budget: int,
          context: int) -> tuple[list[bool], int]:
    """Which lines to keep, and how many keyword lines are among them."""
    n = len(lines)
    picker = _Picker(lines, budget)
    scores = _scores(lines, keywords)
    hits = sorted((i for i in range(n) if scores[i]), key=lambda i: (-scores[i], i))
    head_room = int(budget * (_HEAD_SHARE if hits else 0.6))
    tail_room = int(budget * (_TAIL_SHARE if hits else 0.3))
    picker.fill(range(n), head_room)
    picker.fill(range(n - 1, -1, -1), head_room + tail_room)
    matched = 0
    for i in hits:
        if picker.take(i):
            matched += 1
            picker.window(i, context)
    return picker.keep, matched


def _scores(texts: list[str], keywords: Sequence[re.Pattern[str]]) -> list[float]:
    """Each piece's score: the sum, over the keywords it matches, of one over the number of pieces
    that keyword matches, so a rare keyword (the function asked for) outranks a common one (the
    module's name, on every import line). Each keyword runs once over the whole text."""
    starts = list(itertools.accumulate((len(t) for t in texts), initial=0))
    whole = "".join(texts)
    scores = [0.0] * len(texts)
    for keyword in keywords:
        hit = {bisect.bisect_right(starts, m.start()) - 1 for m in keyword.finditer(whole)}
        hit.discard(len(texts))  # an empty match at the very end
        for i in hit:
            scores[i] += 1 / len(hit)
    return scores


def _render(pieces: list[_Piece], keep: list[bool]) -> str:
    parts: list[str] = []
    i, n = 0, len(pieces)
    while i < n:
        if keep[i]:
            parts.append(pieces[i].text)
            i += 1
            continue
        start = i
        while i < n and not keep[i]:
            i += 1
        if parts and not parts[-1].endswith("\n"):
            parts.append(" ")
        parts.append(_gap(pieces[start:i]))
    return "".join(parts)


def _gap(omitted: list[_Piece]) -> str:
    """The marker for omitted pieces: the lines, when whole lines went; else the characters."""
    first, last = omitted[0], omitted[-1]
    if first.starts_line and last.ends_line:
        span = f"line {first.line}" if first.line == last.line else f"lines {first.line}-{last.line}"
        return f"[… {span} omitted …]\n"
    chars = sum(len(p.text) for p in omitted)
    end = "\n" if last.text.endswith("\n") else " "
    return f"[… {chars:,} characters omitted …]{end}"


def _note(keywords: Sequence[re.Pattern[str]], matched: int, kept: int, chars: int) -> str:
    shown = ", ".join(repr(k.pattern.replace("\\", "")) for k in keywords[:5])
    if len(shown) > 80:
        shown = shown[:77] + "..."
    around = f" and {matched} matching line(s) of {shown} with their neighbours" if matched else ""
    missing = f" (no line matched {shown})" if keywords and not matched else ""
    return f"\n[… output of {chars:,} characters cut to {kept:,}: the head, the tail{around}{missing}]"
