"""An answer cut off inside its JSON (the model hit ``max_tokens``): where it ends, and its text without
the step the cut went through.

json-repair closes a cut-off answer, but what it makes of the last, partial item is a guess (a string
holding ``}`` may come back as two items). So the parser does not trust it there: ``find_cut`` scans the
text as JSON, remembering where each open list or object's last item began, and ``Cut.trim`` cuts the
text back to before the partial step and closes the brackets still open. Only whole steps are read.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Cut", "find_cut"]

_CLOSE = {"{": "}", "[": "]"}


@dataclass(frozen=True, slots=True)
class Cut:
    """Where a cut-off text ends: ``opened``, its open brackets (outermost first); for each the offset
    the text can be cut back to so that the bracket's last item is left out; and whether the innermost
    bracket's last item is whole (a string or a bracket that closed, not cut inside)."""

    opened: str
    bounds: tuple[int, ...]
    whole: bool

    @property
    def depth(self) -> int:
        """How many brackets are open at the end."""
        return len(self.opened)

    def close(self, text: str) -> str:
        """``text`` with its open brackets closed (right when the last item is ``whole``)."""
        return text + "".join(_CLOSE[bracket] for bracket in reversed(self.opened))

    def trim(self, text: str, depth: int) -> tuple[str, str]:
        """``text`` without the last item of the bracket open at ``depth`` (1 is the outermost), that
        bracket and those around it closed; and the text left out (blank when the cut fell between
        items)."""
        end = self.bounds[depth - 1]
        closers = "".join(_CLOSE[bracket] for bracket in reversed(self.opened[:depth]))
        return text[:end] + closers, text[end:].lstrip(" \t\r\n,")


def find_cut(text: str) -> Cut | None:
    """The ``Cut`` of ``text`` (JSON from its first character) if it ends with brackets open; None when
    they all close. Strings in double or single quotes are skipped, escapes included."""
    opened: list[str] = []
    bounds: list[int] = []
    keyed: list[bool] = []  # per open object: whether the next string is a key
    whole = False  # the innermost bracket's last item is a string or bracket that closed
    quote: str | None = None
    escaped = False
    for i, ch in enumerate(text):
        if quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
                whole = not (opened[-1] == "{" and keyed[-1]) if opened else False
            continue
        if ch in "\"'":  # models write Python-style single-quoted strings too
            quote, whole = ch, False
        elif ch in "{[":
            opened.append(ch)
            bounds.append(i + 1)
            keyed.append(ch == "{")
            whole = False
        elif ch in "}]" and opened:
            opened.pop()
            bounds.pop()
            keyed.pop()
            if not opened:
                return None
            whole = True
        elif ch == "," and opened:
            bounds[-1] = i
            keyed[-1] = opened[-1] == "{"
            whole = False
        elif ch == ":" and opened:
            keyed[-1] = False
        elif not ch.isspace():
            whole = False  # a number or a literal: it may be cut
    if not opened:
        return None
    return Cut("".join(opened), tuple(bounds), whole and quote is None)
