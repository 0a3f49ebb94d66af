"""The body of ``edit_file``: replace one exact piece of text in a file.

Small models manage an exact-string replacement far better than a unified diff (line counts, context)
or a whole-file write (everything else retyped, or lost). The text to replace must occur exactly
once: zero or several matches change nothing and say how many there were, where, and what to send
instead (``_edit_miss``). An ``old`` that is not there is still applied where that is sure, saying so
(``_rescued``: ``_loose_edit``'s match of its changed lines; when sent again, a rename carried on or
the change the first miss offered). The change is a ``FileChange`` like a patch's, so it goes on the
same undo stack.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Callable
from pathlib import Path

from agcore.tools._errors import ToolError
from agcore.tools._path_guard import PathGuard
from agcore.tools.workspace._edit_miss import EditMisses, closest_text, finished_rename, suggested_edit
from agcore.tools.workspace._fd_paths import changed_meanwhile, lstat_at, read_bytes
from agcore.tools.workspace._loose_edit import loose_edit
from agcore.tools.workspace._patch import FileChange
from agcore.tools.workspace._read_record import digest

__all__ = ["describe_edit", "plan_edit"]

_SHOWN_LINES = 10
RENAMED_NOTE = (
    "this edit was made before, and you sent it again: the name it replaced, still in the file, was "
    "replaced in the rest of the file the same way; read the result below to make sure"
)
INSISTED_NOTE = (
    "old was not in the file, again; the same change was made where the file has the text it changes "
    "(the edit the last error offered); read the result below to make sure"
)
LOOSE_NOTE = (
    "old was not in the file exactly as sent (its other lines or its spacing differ), but the lines it "
    "changes are there once, so they were changed there; read the result below to make sure"
)
_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{2,}\b")
_NAMED = 3  # names, and lines of each, a left-behind note lists at most
_NAMED_LINES = 5
# read_file's output format ("    12<TAB>text"): a model that copies it into ``old`` never matches.
_NUMBERED = re.compile(r"^ *\d+\t", re.MULTILINE)


def plan_edit(
    guard: PathGuard, path: str, old: str, new: str, *, misses: EditMisses | None = None,
    seen: Callable[[Path, str], None] | None = None,
) -> tuple[FileChange, int]:
    """The change replacing the one occurrence of ``old`` in ``path`` by ``new``, and the line where
    the replacement starts; writes nothing. ``misses`` remembers the edits that missed, so one sent
    again unchanged on the same file says so; ``seen(path, digest)`` is told when a miss shows lines
    of the file (the model has seen that version, as after a read_file of a line range)."""
    real = guard.resolve(path, for_write=True)
    rel = guard.relative(real)
    if not old:
        raise ToolError(
            "old is empty: give the exact text to replace, copied from read_file's output without the "
            "line numbers. To create a file, use write_file."
        )
    if old == new:
        raise ToolError("old and new are the same text, so nothing would change; nothing was written")
    before = _current(guard, real, rel)
    try:
        text = before.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"'{rel}' is not UTF-8 text; edit_file changes text files only") from None
    if old not in text and "\r\n" in text and "\r\n" not in old:  # the file has Windows line endings
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    count = text.count(old)
    again = count == 0 and misses is not None and misses.again(rel, old, before)
    rescued = _rescued(text, old, new, again=again) if count == 0 else None
    if rescued is not None:
        after, first, counts, note = rescued
        change = _change(guard, real, rel, before, after, counts)
        change.notes.append(note)
        return change, first
    if count != 1:
        message = _not_once(rel, text, old, new, count)
        if again:
            message = (
                f"You sent this same old text before and it was not found then either; '{rel}' has not "
                f"changed since, so sending it again cannot work. {message}"
            )
        if seen is not None and "\n" in message:  # it shows the file's lines, numbered
            seen(real, digest(before))
        raise ToolError(message)
    at = text.find(old)
    after = text[:at] + new + text[at + len(old) :]
    counts = (len(new.splitlines()), len(old.splitlines()))
    return _change(guard, real, rel, before, after, counts), text.count("\n", 0, at) + 1


def _rescued(
    text: str, old: str, new: str, *, again: bool
) -> tuple[str, int, tuple[int, int], str] | None:
    """What an ``old`` that is not in ``text`` most surely meant, as (the new text, its first changed
    line, lines put in and taken out, the note saying so), or None: its one run of changed lines
    found once (a loose match); sent ``again``, a rename made already carried to the rest of the
    file, or the change the first miss offered."""
    loose = loose_edit(text, old, new)
    if loose is not None:  # the lines old changes are there once, its context not as sent
        after, first, added, removed = loose
        return after, first, (added, removed), LOOSE_NOTE
    if not again:
        return None
    renamed = finished_rename(text, old, new)
    if renamed is not None:  # a rename made in one place, replayed: carried to the rest of the file
        pairs = zip(text.splitlines(), renamed.splitlines(), strict=True)
        rows = [n for n, (was, now) in enumerate(pairs, 1) if was != now]
        return renamed, rows[0], (len(rows), len(rows)), RENAMED_NOTE
    suggested = suggested_edit(text, old, new)
    if suggested is not None:  # sent again after the miss offered it: the same change, where it is
        there, put = suggested
        at = text.find(there)
        after = text[:at] + put + text[at + len(there) :]
        counts = (len(put.splitlines()), len(there.splitlines()))
        return after, text.count("\n", 0, at) + 1, counts, INSISTED_NOTE
    return None


def _change(
    guard: PathGuard, real: Path, rel: str, before: bytes, after: str, counts: tuple[int, int]
) -> FileChange:
    info = lstat_at(guard, real)
    mode = stat.S_IMODE(info.st_mode) if info is not None else None
    return FileChange(real, rel, before, after.encode("utf-8"), mode, *counts, hunks=1)


def describe_edit(change: FileChange, first: int) -> str:
    """What an edit did, with the new lines (from line ``first``) numbered as read_file shows them."""
    assert change.after is not None
    if not change.added:
        return (
            f"Edited '{change.rel}': removed {change.removed} line(s) of text at line {first}.\n"
            "undo_patch() takes it back."
        )
    text = change.after.decode("utf-8")
    loose = "".join(f"Note: {note}.\n" for note in change.notes)
    lines = text.splitlines()[first - 1 : first - 1 + min(change.added, _SHOWN_LINES)]
    shown = "\n".join(f"{first + i:>6}\t{line}" for i, line in enumerate(lines))
    more = f"\n[... {change.added - _SHOWN_LINES} more changed lines]" if change.added > _SHOWN_LINES else ""
    return (
        f"{loose}Edited '{change.rel}': the text now reads, from line {first}:\n{shown}{more}\n"
        f"{_left_behind(change.rel, change.before or b'', text)}undo_patch() takes it back."
    )


def _left_behind(rel: str, before: bytes, after: str) -> str:
    """A note naming the names the edit replaced that the file still has (a rename done in one place
    of several: a 1.5B model renamed a call and left the import), or ""."""
    was = _name_counts(before.decode("utf-8", "replace"))
    now = _name_counts(after)
    left = [name for name, count in now.items() if 0 < count < was.get(name, 0)][:_NAMED]
    if not left:
        return ""
    lines = after.splitlines()
    parts, rows = [], {}
    for name in left:
        pattern = re.compile(rf"\b{re.escape(name)}\b")
        at = [n for n, line in enumerate(lines, 1) if pattern.search(line)][:_NAMED_LINES]
        parts.append(f"'{name}' (line {', '.join(map(str, at))})")
        rows.update({n: lines[n - 1] for n in at})
    shown = "\n".join(f"{n:>6}\t{rows[n]}" for n in sorted(rows))
    return (
        f"Note: {', '.join(parts)}, which this edit replaced, still appears in '{rel}'; if you are "
        f"renaming it, change it there too:\n{shown}\n"
    )


def _name_counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name in _NAME.findall(text):
        counts[name] = counts.get(name, 0) + 1
    return counts


def _current(guard: PathGuard, real: Path, rel: str) -> bytes:
    try:
        with changed_meanwhile(rel, "nothing was written"):
            content = read_bytes(guard, real)
    except IsADirectoryError:
        raise ToolError(f"'{rel}' is a directory; edit_file changes a file") from None
    except (FileNotFoundError, NotADirectoryError):
        content = None
    if content is None:
        raise ToolError(
            f"'{rel}' does not exist, so there is nothing to edit; use write_file to create it, or find "
            "the right path with list_dir or glob"
        )
    return content


def _not_once(rel: str, text: str, old: str, new: str, count: int) -> str:
    lines = text.splitlines()
    if count > 1:
        at = _match_lines(text, old)
        where = ", ".join(str(n) for n in at[:10]) + (", ..." if len(at) > 10 else "")
        return (
            f"old occurs {count} times in '{rel}' (starting at lines {where}), not once, so nothing was "
            "changed. Put more of the surrounding lines into old (and into new) so it matches one place."
        )
    head = f"old was not found in '{rel}', so nothing was changed."
    if _NUMBERED.search(old):
        return (
            f"{head} It holds read_file's line numbers ('<number><TAB>' at the start of a line): those "
            "are not part of the file. Send the text alone, exactly as it follows the tab."
        )
    loose = _loose_match(lines, old)
    if loose is not None:
        shown = "\n".join(
            f"{loose + 1 + i:>6}\t{row}" for i, row in enumerate(lines[loose : loose + len(old.splitlines())])
        )
        return (
            f"{head} The same lines are there with different indentation or spacing, from line "
            f"{loose + 1}:\n{shown}\nCopy old exactly as the file has it (spaces and tabs included)."
        )
    closest = closest_text(rel, text, old, new)
    if closest is not None:
        return f"{head} {closest}"
    return (
        f"{head} It must match the file's current text exactly, whitespace and line breaks included. "
        f"Call read_file('{rel}') to see the text as it is now ({len(lines)} lines), then copy the part "
        "to change into old."
    )


def _match_lines(text: str, old: str) -> list[int]:
    found: list[int] = []
    start = text.find(old)
    while start >= 0:
        found.append(text.count("\n", 0, start) + 1)
        start = text.find(old, start + 1)
    return found


def _loose_match(lines: list[str], old: str) -> int | None:
    """The first line where ``old``'s lines occur with all whitespace ignored."""

    def squash(line: str) -> str:
        return "".join(line.split())

    want = [squash(line) for line in old.strip("\r\n").splitlines()]
    if not any(want):
        return None
    have = [squash(line) for line in lines]
    for start in range(len(have) - len(want) + 1):
        if have[start : start + len(want)] == want:
            return start
    return None
