"""A rename left half done: an ``edit_file`` of the turn replaced a name (``get_usr`` with
``get_user``) in a file that still has the old name elsewhere.

``edit_file`` says so in its result ("Note: 'get_usr' (line 1), which this edit replaced, still
appears"), and a 1.5B model answered "updated every use of it in app.py" right after reading that
(issue 26's runs, every time). At the answer, the files are looked at again: a name the turn's edits
replaced that the edited file still has is evidence the answer does not match the workspace.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agcore.agent.checks._review_brief import succeeded

if TYPE_CHECKING:
    from agcore.agent._messages import AgentMessage

__all__ = ["Leftover", "leftover_names"]

_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
#: An edit that replaces more names than this is a rewrite, not a rename.
_MOST_REPLACED = 2
_MIN_LENGTH = 3


@dataclass(frozen=True, slots=True)
class Leftover:
    """``name``, which an edit replaced, still in ``path`` at ``lines``."""

    path: str
    name: str
    lines: list[int]

    def describe(self) -> str:
        """The leftover, in words, with what to do about it."""
        at = ", ".join(str(n) for n in self.lines)
        return (f"{self.path} still has '{self.name}' (line {at}), which your edit replaced in another "
                "place of it (if you are renaming it, change it there too)")


def leftover_names(messages: list[AgentMessage], root: Path) -> list[Leftover]:
    """The names the successful ``edit_file`` calls in ``messages`` replaced (rename-like edits: a
    name or two swapped for new ones) that their files under ``root`` still have."""
    found: dict[tuple[str, str], Leftover] = {}
    for call, _ in succeeded(messages):
        path, old, new = (call.input.get(k) for k in ("path", "old", "new"))
        if call.name != "edit_file" or not (isinstance(path, str) and isinstance(old, str)
                                            and isinstance(new, str)):
            continue
        for name in _replaced(old, new):
            lines = _lines_with(root, path, name)
            if lines:
                found.setdefault((path, name), Leftover(path, name, lines))
    return list(found.values())


def _replaced(old: str, new: str) -> list[str]:
    was, now = _names(old), _names(new)
    gone, came = [n for n in was if n not in now], [n for n in now if n not in was]
    if not gone or not came or len(gone) > _MOST_REPLACED:
        return []
    return gone


def _names(text: str) -> list[str]:
    names = (n for n in _NAME.findall(text) if len(n) >= _MIN_LENGTH and not keyword.iskeyword(n))
    return list(dict.fromkeys(names))


def _lines_with(root: Path, path: str, name: str) -> list[int]:
    target = root / path
    try:
        if not target.resolve().is_relative_to(root.resolve()) or not target.is_file():
            return []
        text = target.read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return []
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    return [n for n, line in enumerate(text.splitlines(), 1) if pattern.search(line)][:3]
