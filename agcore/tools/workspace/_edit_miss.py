"""What ``edit_file`` says when ``old`` is not in the file: the text to copy instead.

Issue 26's runs: a 1.5B model asked edit_file for ``server port = 8080`` in a file whose line reads
``port = 8080``, was told "call read_file", read the file, and sent the same edit again, four times;
after a check failed it replayed a batch of edits it had already made (``old`` gone, ``new`` there).
A weak model copies text it is shown far better than it finds it. So a miss shows the file's lines
closest to ``old`` (difflib over windows of as many lines as ``old`` has, numbered like read_file),
says when ``new`` is already there (the edit was made before), says when the file is empty, and an
edit sent again after it missed on the same version of the file says so first.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import threading

__all__ = ["EditMisses", "closest_text", "finished_rename", "suggested_edit"]

#: How alike a window of the file must be to ``old`` (difflib's ratio) to be shown as "closest".
CUTOFF = 0.5
#: Windows shown at most, and the most lines of the file compared (a huge file: no suggestion).
SHOWN = 2
MAX_LINES = 2_000
#: A ``new`` shorter than this (``1``, ``)``) found in the file says nothing about the edit.
MIN_NEW_CHARS = 8
#: The longest changed span of ``old`` a suggestion carries over to the closest text.
MAX_SPAN = 80
#: Lines that still hold a replaced name shown at most, after an edit that was made already.
SHOWN_LEFT = 5
_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{2,}\b")
#: Lines around a closest window shown for context (a one-line ``old`` gets its neighbours).
CONTEXT = 1


def closest_text(rel: str, text: str, old: str, new: str) -> str | None:
    """The part of edit_file's miss message that points at what to copy, or None when nothing in
    ``text`` is close to ``old``."""
    if not text.strip():
        return f"'{rel}' is empty, so there is nothing to replace: use write_file to give it its content."
    done = _already_there(text, new)
    if done is not None:
        made = f"new is already in '{rel}' at line {done}: this edit was made before."
        left = _still_there(rel, text, old, new)
        return f"{made}{left}" if left else f"{made} Nothing is left to do for it: go on with the task."
    closest = _closest(text, old, new)
    if closest is None:
        return None
    lines, starts, size, suggested = closest
    shown = "\n...\n".join(_numbered(lines, start, size) for start in starts)
    at = " and ".join(_span(start, size) for start in starts)
    around = " with the lines around it" if size == 1 else ""
    offer = (
        f" The same change made there would be: old={json.dumps(suggested[0])}, "
        f"new={json.dumps(suggested[1])}." if suggested else ""
    )
    return (
        f"The text in '{rel}' closest to old is at {at}; here it is{around}, numbered as read_file "
        f"shows it:\n{shown}\nCopy old exactly from the file's text, without the line numbers and the "
        f"tab after them.{offer}"
    )


def suggested_edit(text: str, old: str, new: str) -> tuple[str, str] | None:
    """The edit ``old`` -> ``new`` made on the text of the file closest to ``old``, as (old, new)
    where that old matches the file exactly once, when the change is sure: what ``old`` and ``new``
    change occurs once in that text and once in the whole file. None otherwise."""
    closest = _closest(text, old, new)
    suggested = closest[3] if closest is not None else None
    if suggested is None or text.count(suggested[0]) != 1 or text.count(_changed(old, new)[0]) != 1:
        return None
    return suggested


def _closest(
    text: str, old: str, new: str
) -> tuple[list[str], list[int], int, tuple[str, str] | None] | None:
    """``text``'s lines, the starts of its windows closest to ``old`` (as many lines as ``old``:
    ``size``), and the same change made on the closest one (``_same_change``); None when the file is
    too long to compare or nothing in it is close."""
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        return None
    starts = _closest_windows(lines, old)
    if not starts:
        return None
    size = max(1, len(old.strip("\r\n").splitlines()))
    return lines, starts, size, _same_change("\n".join(lines[starts[0] : starts[0] + size]), old, new)


def finished_rename(text: str, old: str, new: str) -> str | None:
    """``text`` with the rename an edit made already carried to the rest of it: when ``new`` is in
    ``text`` once, ``old`` swapped one name for another (``get_usr`` -> ``get_user``) and ``text``
    still has the old name; else None."""
    if _already_there(text, new) is None:
        return None
    gone = set(_NAME.findall(old)) - set(_NAME.findall(new))
    came = set(_NAME.findall(new)) - set(_NAME.findall(old))
    if len(gone) != 1 or len(came) != 1:
        return None
    (was,), (now,) = gone, came
    pattern = re.compile(rf"\b{re.escape(was)}\b")
    return pattern.sub(now, text) if pattern.search(text) else None


def _changed(old: str, new: str) -> tuple[str, str]:
    """What ``new`` changes of ``old``: the characters from the first difference to the last, in
    each (``8080`` -> ``9090`` is two one-digit changes, one span)."""
    spans = [op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
             if op[0] != "equal"]
    if not spans:
        return "", ""
    return old[spans[0][1] : spans[-1][2]], new[spans[0][3] : spans[-1][4]]


def _same_change(window: str, old: str, new: str) -> tuple[str, str] | None:
    """``window``, and ``window`` with the change ``old`` -> ``new`` made on it, when the changed
    span occurs in it once (``server port = 8080`` -> ``9090`` on the line ``port = 8080``)."""
    taken, put = _changed(old, new)
    if len(taken.strip()) < 2 or len(taken) > MAX_SPAN or window.count(taken) != 1:
        return None
    return window, window.replace(taken, put)


def _already_there(text: str, new: str) -> int | None:
    """The line where ``new`` occurs once in ``text`` (an edit made already), or None."""
    if len(new.strip()) < MIN_NEW_CHARS or text.count(new) != 1:
        return None
    return text.count("\n", 0, text.find(new)) + 1


def _still_there(rel: str, text: str, old: str, new: str) -> str:
    """The lines of ``text`` that still hold a name the edit replaced (``old`` has it, ``new`` not):
    a rename made in one place of several, replayed."""
    gone = set(_NAME.findall(old)) - set(_NAME.findall(new))
    if not gone:
        return ""
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(gone)) + r")\b")
    rows = [(n, line) for n, line in enumerate(text.splitlines(), 1) if pattern.search(line)][:SHOWN_LEFT]
    if not rows:
        return ""
    names = ", ".join(f"'{n}'" for n in sorted(gone))
    shown = "\n".join(f"{n:>6}\t{line}" for n, line in rows)
    return (
        f" But {names}, which it replaced, is still in '{rel}' here:\n{shown}\nChange that too: copy "
        "the line into old, without its number and the tab."
    )


def _closest_windows(lines: list[str], old: str) -> list[int]:
    """The starts of the windows of ``lines`` most like ``old``, best first, not overlapping."""
    want = old.strip("\r\n")
    size = max(1, len(want.splitlines()))
    scored: list[tuple[float, int]] = []
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(want)
    for start in range(max(1, len(lines) - size + 1)):
        window = "\n".join(lines[start : start + size])
        if not window.strip():
            continue
        matcher.set_seq1(window)
        if matcher.real_quick_ratio() < CUTOFF or matcher.quick_ratio() < CUTOFF:
            continue
        ratio = matcher.ratio()
        if ratio >= CUTOFF:
            scored.append((ratio, start))
    picked: list[int] = []
    for _, start in sorted(scored, key=lambda s: (-s[0], s[1])):
        if all(abs(start - other) >= size for other in picked):
            picked.append(start)
        if len(picked) == SHOWN:
            break
    return picked


def _span(start: int, size: int) -> str:
    return f"line {start + 1}" if size == 1 else f"lines {start + 1}-{start + size}"


def _numbered(lines: list[str], start: int, size: int) -> str:
    first = max(0, start - CONTEXT) if size == 1 else start
    last = min(len(lines), start + size + (CONTEXT if size == 1 else 0))
    return "\n".join(f"{n + 1:>6}\t{lines[n]}" for n in range(first, last))


class EditMisses:
    """The edits that missed, by file, ``old`` and the file's version: one sent again unchanged would
    miss the same way, and the model is told so first."""

    def __init__(self) -> None:
        self._seen: set[tuple[str, str]] = set()
        self._lock = threading.Lock()  # edits run in worker threads

    def again(self, rel: str, old: str, content: bytes) -> bool:
        """Record this miss; whether the same ``old`` already missed on this version of ``rel``."""
        key = (rel, hashlib.sha256(content + b"\0" + old.encode("utf-8", "surrogatepass")).hexdigest())
        with self._lock:
            if key in self._seen:
                return True
            self._seen.add(key)
            return False
