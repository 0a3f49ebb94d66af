"""Where a bracketed span of model text (``{...}``, ``[...]``) ends, brackets inside JSON strings
ignored: the one scanner the text-mode call reader, its streaming filter and the plan parser share.
It only counts brackets; reading what is inside is json's (or json-repair's) job.
"""

from __future__ import annotations

__all__ = ["BracketScan", "span_end"]


class BracketScan:
    """An incremental scan for the end of the span opened at ``start``: call ``end`` with the text
    so far, again as more arrives (a stream). ``opens``/``closes`` are the brackets counted."""

    __slots__ = ("closes", "depth", "escaped", "in_string", "opens", "pos")

    def __init__(self, start: int, opens: str = "{[", closes: str = "}]") -> None:
        self.pos = start
        self.opens = opens
        self.closes = closes
        self.depth = 0
        self.in_string = False
        self.escaped = False

    def end(self, text: str) -> int | None:
        """Scan what arrived; the index after the closing bracket, or None while it is open."""
        opens, closes = self.opens, self.closes
        for i in range(self.pos, len(text)):
            ch = text[i]
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif ch == "\\":
                    self.escaped = True
                elif ch == '"':
                    self.in_string = False
            elif ch == '"':
                self.in_string = True
            elif ch in opens:
                self.depth += 1
            elif ch in closes:
                self.depth -= 1
                if self.depth == 0:
                    self.pos = i + 1
                    return i + 1
        self.pos = len(text)
        return None


def span_end(text: str, start: int, opens: str = "{[", closes: str = "}]") -> int | None:
    """The index after the bracket closing the one at ``start`` (None: never closed)."""
    return BracketScan(start, opens, closes).end(text)
