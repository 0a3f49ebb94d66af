"""An ``edit_file`` whose ``old`` is not in the file word for word, applied to the one place its
changed lines are.

Issue 26's runs: a 1.5B model shown ``calc.py`` (a function, its docstring, its return line) sent
``old`` as the ``def`` line and the return line with one-space indentation, leaving the docstring out
and the ``new`` differing in the return line alone, three times, each refused, while the line it
meant to change was there once. Aider's edit blocks are matched leniently for this reason. Here the
lenient reading is narrow: ``old`` and ``new`` must differ in one run of lines; those lines of ``old``
(whitespace ignored) must occur in the file exactly once, and be at least a few characters long;
every other line of ``old`` (its context) must be in the file somewhere. Then that run is replaced,
indented as the file has it, and the result says the match was loose. Anything else is refused as
before.
"""

from __future__ import annotations

from difflib import SequenceMatcher

__all__ = ["loose_edit"]

#: The changed lines of ``old`` must hold at least this many non-space characters (a lone ``)`` or
#: ``pass`` is no evidence of where the model meant).
MIN_CHARS = 8


def loose_edit(text: str, old: str, new: str) -> tuple[str, int, int, int] | None:
    """``text`` with ``old``'s changed lines replaced by ``new``'s where they occur once (whitespace
    ignored), the line where the replacement starts, and the lines put in and taken out; or None
    when that reading is not sure."""
    old_lines, new_lines = old.strip("\r\n").splitlines(), new.strip("\r\n").splitlines()
    blocks = [op for op in SequenceMatcher(None, _squashed(old_lines), _squashed(new_lines),
                                           autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(blocks) != 1 or blocks[0][0] == "insert":
        return None
    _, i1, i2, j1, j2 = blocks[0]
    changed = _squashed(old_lines[i1:i2])
    if sum(len(line) for line in changed) < MIN_CHARS:
        return None
    rows = text.splitlines(keepends=True)
    have = _squashed(rows)
    context = [line for line in _squashed(old_lines[:i1] + old_lines[i2:]) if line]
    if not set(context) <= set(have):
        return None
    starts = [p for p in range(len(have) - len(changed) + 1) if have[p : p + len(changed)] == changed]
    if len(starts) != 1:
        return None
    at = starts[0]
    eol = rows[at][len(rows[at].rstrip("\r\n")):] or "\n"
    replacement = [line + eol for line in _reindented(new_lines[j1:j2], old_lines[i1], rows[at])]
    after = "".join(rows[:at] + replacement + rows[at + len(changed) :])
    return after, at + 1, len(replacement), len(changed)


def _squashed(lines: list[str]) -> list[str]:
    return ["".join(line.split()) for line in lines]


def _reindented(lines: list[str], model_first: str, file_first: str) -> list[str]:
    """``lines`` with the model's indentation of its first changed line swapped for the file's."""
    theirs = model_first[: len(model_first) - len(model_first.lstrip())]
    ours = file_first[: len(file_first) - len(file_first.lstrip())]
    return [ours + line[len(theirs):] if line.startswith(theirs) else ours + line.lstrip() for line in lines]
