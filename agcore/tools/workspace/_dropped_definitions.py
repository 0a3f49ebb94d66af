"""A whole-file write that drops functions or classes the file defines: refused once, saying which
and how to add to a file instead.

Asked to add ``multiply`` to ``mathutils.py``, a 1.5B model read the file and then wrote it back
holding ``multiply`` alone: ``add``, which the tests import, was gone (issue 26's runs, in every
round). Read-before-write does not catch it (the file was read). The first such write is refused,
naming what it would remove and pointing at ``edit_file``; the same write again (same path, same
content) goes through, as a model that means to remove them says so by insisting.
"""

from __future__ import annotations

import hashlib
import re
import threading

from agcore.tools._errors import ToolError

__all__ = ["DroppedDefinitions", "top_level_names"]

# A definition at the start of a line: Python's def/class, JavaScript's function/class.
_DEFINITION = re.compile(r"^(?:async\s+)?(?:def|class|function)\s+([A-Za-z_$][\w$]*)", re.MULTILINE)
_SHOWN = 6


def top_level_names(text: str) -> list[str]:
    """The names ``text`` defines at the start of a line (``def add``, ``class User``), in order."""
    return list(dict.fromkeys(_DEFINITION.findall(text)))


class DroppedDefinitions:
    """The writes of one workspace that were refused for dropping definitions (so that the same
    write again goes through)."""

    def __init__(self) -> None:
        self._refused: set[str] = set()
        self._lock = threading.Lock()

    def check(self, rel: str, before: bytes | None, after: bytes) -> None:
        """Raise ``ToolError`` the first time ``after`` replaces ``before`` at ``rel`` without names
        ``before`` defined."""
        if before is None:
            return
        kept = set(top_level_names(after.decode("utf-8", errors="replace")))
        lost = [n for n in top_level_names(before.decode("utf-8", errors="replace")) if n not in kept]
        if not lost:
            return
        key = hashlib.sha256(rel.encode("utf-8", "surrogatepass") + b"\0" + after).hexdigest()
        with self._lock:
            if key in self._refused:
                return
            self._refused.add(key)
        names = ", ".join(lost[:_SHOWN]) + (f" and {len(lost) - _SHOWN} more" if len(lost) > _SHOWN else "")
        raise ToolError(
            f"Nothing was written to '{rel}': the new content would remove {names}, which '{rel}' defines "
            "now (write_file replaces the whole file). To add to the file or change part of it, use "
            "edit_file, or write the whole file with them kept. If you do mean to remove them, call "
            "write_file again with the same content."
        )
