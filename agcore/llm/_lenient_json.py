"""Reading a JSON object whose strings a model wrote the Python way, as the model meant them.

Small models write file content in tool calls the way they write Python: in triple quotes
(``"content": \"\"\"def f(): ...\"\"\"``), or as a JSON string with a docstring's bare triple
quotes inside.
json-repair reads either by splitting the text at the inner quotes, and the pieces become bogus keys
(``{'content': 'def get_user(user_id):\\n    ', 'The user record for user_id.': '…'}``). Here the
object's structure decides where a string ends instead: a quote closes a string only where what
follows it continues the object (``,`` and the next key, or the closing bracket), and the reading
backtracks to a later quote when the rest does not parse. Triple-quoted strings (``\"\"\"`` and
``'''``) take Python's escapes; inside an ordinary string, quotes that do not end it are kept as text.

Only a complete object is read: anything else (a missing bracket or comma, an unquoted key) is left
to json-repair, so this never changes what repair makes of the shapes it handles well.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["read_lenient_object"]

_WS = re.compile(r"\s*")
_SCALAR = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|True|False|None")
# What follows a string's end when the comma before the next key is missing.
_NEXT_KEY = re.compile(r"""\s*,?\s*["'][\w-]{1,64}["']\s*:""")
# What may follow a value string's end: a comma, or closing brackets then a comma or the end.
_CAN_FOLLOW = re.compile(r"\s*(?:,|(?:[}\]]\s*)+(?:,|\Z)|\Z)")
_PYTHON_SCALARS = {"True": "true", "False": "false", "None": "null"}
_JSON_ESCAPES = frozenset('"\\/bfnrtu')
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
# Backtracking is bounded, in steps per character of the text: a pathological text gives up (and goes
# to json-repair) instead of hanging, while a long file's content is read whole.
_STEPS_PER_CHAR = 8
_MIN_STEPS = 20_000


class _GaveUp(Exception):
    pass


def read_lenient_object(text: str) -> dict[str, Any] | None:
    """The object ``text`` holds, its strings read as a model writing Python meant them; None when
    it is not one complete object even so (json-repair's turn then).

    Triple-quoted values (``\"\"\"`` or ``'''``, with Python's escapes) are strings, and quotes inside
    an ordinary string that do not end it (a docstring's bare triple quotes) are kept as text: a quote
    ends a string only where the object goes on after it (``,`` and the next key, or the closing
    bracket), else the reading backtracks to a later quote. Python's ``True``/``False``/``None`` and a
    trailing comma are accepted. A missing comma, bracket or key quote is not read here."""
    reader = _Reader(text)
    start = _WS.match(text, 0)
    assert start is not None
    if not text.startswith("{", start.end()):
        return None
    try:
        for encoded, end in reader.value(start.end()):
            if _skip(text, end) == len(text):
                value = json.loads(encoded)
                return value if isinstance(value, dict) else None
    except (_GaveUp, ValueError, RecursionError):
        return None
    return None


def _skip(text: str, i: int) -> int:
    match = _WS.match(text, i)
    assert match is not None
    return match.end()


class _Reader:
    """A recursive-descent reader that yields every way a value can be read from a position, as
    (valid JSON text, end position), the likeliest first."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.steps = 0
        self.max_steps = max(_MIN_STEPS, _STEPS_PER_CHAR * len(text))

    def _step(self) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise _GaveUp

    def value(self, i: int) -> Iterator[tuple[str, int]]:
        self._step()
        i = _skip(self.text, i)
        if i >= len(self.text):
            return
        char = self.text[i]
        if char == "{":
            yield from self._members(i + 1, "{", first=True)
        elif char == "[":
            yield from self._items(i + 1, "[", first=True)
        elif self.text.startswith(('"""', "'''"), i):
            yield from self._string(i + 3, self.text[i : i + 3], python=True)
        elif char in "\"'":
            yield from self._string(i + 1, char, python=False)
        else:
            scalar = _SCALAR.match(self.text, i)
            if scalar is not None:
                yield _PYTHON_SCALARS.get(scalar.group(), scalar.group()), scalar.end()

    def _members(self, i: int, done: str, *, first: bool) -> Iterator[tuple[str, int]]:
        i = _skip(self.text, i)
        if self.text.startswith("}", i):  # the end, or a trailing comma before it
            yield done + "}", i + 1
            return
        if not self.text.startswith(('"', "'"), i):
            return
        for key, after_key in self._string(i + 1, self.text[i], python=False, keep_going=False):
            colon = _skip(self.text, after_key)
            if not self.text.startswith(":", colon):
                continue
            for value, after_value in self.value(colon + 1):
                member = f"{done}{'' if first else ','}{key}:{value}"
                j = _skip(self.text, after_value)
                if self.text.startswith(",", j):
                    yield from self._members(j + 1, member, first=False)
                elif self.text.startswith("}", j):
                    yield member + "}", j + 1

    def _items(self, i: int, done: str, *, first: bool) -> Iterator[tuple[str, int]]:
        i = _skip(self.text, i)
        if self.text.startswith("]", i):
            yield done + "]", i + 1
            return
        for value, after_value in self.value(i):
            item = f"{done}{'' if first else ','}{value}"
            j = _skip(self.text, after_value)
            if self.text.startswith(",", j):
                yield from self._items(j + 1, item, first=False)
            elif self.text.startswith("]", j):
                yield item + "]", j + 1

    def _string(
        self, i: int, quote: str, *, python: bool, keep_going: bool = True
    ) -> Iterator[tuple[str, int]]:
        """Every candidate end of the string opened just before ``i``, the nearest first (only the
        first unless ``keep_going``)."""
        text = self.text
        out: list[str] = ['"']
        j = i
        while j < len(text):
            self._step()
            if text.startswith(quote, j):
                end = j + len(quote)
                if _CAN_FOLLOW.match(text, end) or not keep_going:  # else it cannot be the end: skip
                    yield "".join(out) + '"', end
                if _NEXT_KEY.match(text, end) or not keep_going:
                    return  # what follows is the next key: the string did end here, the break is later
                out.append('\\"' * len(quote) if quote[0] == '"' else quote)  # not the end: text
                j += len(quote)
                continue
            char = text[j]
            if char == "\\" and j + 1 < len(text):
                out.append(_escape(text[j + 1], python=python))
                j += 2
                continue
            out.append('\\"' if char == '"' else _control(char))
            j += 1


def _escape(char: str, *, python: bool) -> str:
    """A backslash escape as JSON: JSON's own kept, a quote of either kind unescaped, anything else
    (Python keeps ``\\d`` as two characters) a literal backslash."""
    if char in _JSON_ESCAPES:
        return "\\" + char
    if char == "'":
        return "'"
    if char == "\n" and python:  # a line continuation inside triple quotes
        return ""
    return "\\\\" + _control(char)


def _control(char: str) -> str:
    """``char`` as it may stand inside a JSON string."""
    if char in _CONTROL:
        return _CONTROL[char]
    return f"\\u{ord(char):04x}" if ord(char) < 0x20 else char
