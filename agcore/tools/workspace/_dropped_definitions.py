"""A whole-file write that drops functions or classes the file defines: refused, saying which and
how to add to a file instead.

Asked to add ``multiply`` to ``mathutils.py``, a 1.5B model read the file and then wrote it back
holding ``multiply`` alone: ``add``, which the tests import, was gone (issue 26's runs, in every
round). Read-before-write does not catch it (the file was read). So ``write_file`` never removes a
definition: to add to a file the model uses ``edit_file`` or writes the whole file with them kept,
and to remove one on purpose it uses ``edit_file`` (which this does not judge). Refusing once and
letting the same write through the second time was tried: the model wrote the same content again
in its next reply. Sent again unchanged, a write the refusal offered an append for (it defines only
names the file lacks) is carried out as that append, saying so: the same run's model resent the
refused ``multiply`` write four times and never sent the edit.
"""

from __future__ import annotations

import hashlib
import json
import re

from agcore.tools._errors import ToolError
from agcore.tools.workspace._patch import FileChange

__all__ = ["APPENDED_NOTE", "DroppedDefinitions", "top_level_names"]

APPENDED_NOTE = (
    "this write would have removed what the file defines, and you sent it again: its content was "
    "added at the end of the file instead (the edit the last error offered); read the file to make sure"
)

# A definition at the start of a line: Python's def/class, JavaScript's function/class.
_DEFINITION = re.compile(r"^(?:async\s+)?(?:def|class|function)\s+([A-Za-z_$][\w$]*)", re.MULTILINE)
_SHOWN = 6


def top_level_names(text: str) -> list[str]:
    """The names ``text`` defines at the start of a line (``def add``, ``class User``), in order."""
    return list(dict.fromkeys(_DEFINITION.findall(text)))


class DroppedDefinitions:
    """``write_file``'s guard for one workspace: remembers the writes it refused, so that one sent
    again unchanged, on the file unchanged, becomes the append its refusal offered."""

    def __init__(self) -> None:
        self._refused: set[str] = set()

    def vet(self, change: FileChange) -> None:
        """Let ``change`` (a whole-file write) through, turn it into the append (``after`` and a note
        changed in place) when it is a refused write sent again, or raise ``ToolError``."""
        if change.before is None or change.after is None:
            return
        lost = _lost_names(change.before, change.after)
        if not lost:
            return
        append = _append(change.before, change.after)
        key = hashlib.sha256(change.rel.encode() + b"\0" + change.before + b"\0" + change.after).hexdigest()
        if append is not None and key in self._refused:
            self._refused.discard(key)
            change.after = append[1].encode("utf-8")
            change.notes.append(APPENDED_NOTE)
            return
        self._refused.add(key)
        raise ToolError(_refusal(change.rel, lost, append))


def _lost_names(before: bytes, after: bytes) -> list[str]:
    """The names ``before`` defines that ``after`` does not."""
    kept = set(top_level_names(after.decode("utf-8", errors="replace")))
    return [n for n in top_level_names(before.decode("utf-8", errors="replace")) if n not in kept]


def _refusal(rel: str, lost: list[str], append: tuple[str, str] | None) -> str:
    """Why the write was refused, what to send instead, and the append edit when there is one."""
    names = ", ".join(lost[:_SHOWN]) + (f" and {len(lost) - _SHOWN} more" if len(lost) > _SHOWN else "")
    message = (
        f"Nothing was written to '{rel}': the new content would remove {names}, which '{rel}' defines "
        "now (write_file replaces the whole file). To add to the file, use edit_file (old: the file's "
        "last lines; new: those lines followed by what you add), or write the whole file with them "
        "kept. To remove them on purpose, use edit_file."
    )
    if append is None:
        return message
    last, text = append
    new = text[text.index(last) :].rstrip("\n")  # the original last line comes first
    return (
        f"{message} To add the new content at the end, send: edit_file(path={json.dumps(rel)}, "
        f"old={json.dumps(last)}, new={json.dumps(new)})"
    )


def _append(before: bytes, after: bytes) -> tuple[str, str] | None:
    """(the file's last line, the file with ``after`` added at its end) when ``after`` defines only
    names the file lacks (it was meant as an addition) and that last line occurs in it once; else
    None."""
    text, added = before.decode("utf-8", errors="replace"), after.decode("utf-8", errors="replace")
    if set(top_level_names(added)) & set(top_level_names(text)):
        return None
    last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
    if len(last.strip()) < 3 or text.count(last) != 1:
        return None
    at = text.index(last) + len(last)
    return last, f"{text[:at]}\n\n\n{added.strip(chr(10))}\n{text[at:].lstrip(chr(10))}"
