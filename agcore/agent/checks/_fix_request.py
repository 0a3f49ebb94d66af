"""What the model reads when an acceptance check failed, and how the checks tell that nothing changed
since then.

Issue 26's runs: a 1.5B model handed a failing check's output (the end of a pytest run, separator
lines 190 characters wide) and "find the cause (read the files involved)" re-read the file it had
written and answered again, every round, until the rounds ran out. So the request puts the lines that
say what failed first (pytest's ``E``/``FAILED`` lines, a traceback's last line, ``file:line``), names
the workspace files the output points at, and asks for a change, not a reading. An answer given
while nothing in the workspace changed since the failure is not checked again (it would fail the
same way): the model is told so and asked for the change, a bounded number of times.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from agcore.agent.checks._local_imports import local_imports

__all__ = [
    "UNCHANGED_ASKS",
    "first_to_change",
    "fix_request",
    "named_files",
    "unchanged_request",
    "workspace_fingerprint",
]

#: Answers in a row, while the workspace is as the failing check left it, that are asked again
#: instead of running the checks (which would fail the same way) before the round counts anyway.
UNCHANGED_ASKS = 1
#: The most files looked at for a fingerprint (a huge tree is fingerprinted in part: still a change
#: of any file in that part is seen).
MAX_FILES = 20_000
#: The most key lines put first in the request.
MAX_KEY_LINES = 12

# Directories no fix lives in, which running a check writes to (caches) or which are huge.
_SKIPPED_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".venv",
                           "node_modules", ".tox", ".hypothesis"})
_RULE = re.compile(r"([=_\-*#~])\1{19,}")  # a separator line as wide as the terminal
_KEY_LINE = re.compile(
    r"^(E\s|FAILED\b|ERROR\b|\w*(Error|Exception)\b|assert\b|.*:\d+: \w*(Error|Exception)\b)"
)
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z]\w{0,5})(?::(\d+))?")


def fix_request(
    command: str, status: str, output: str, files: list[str], round_: int, rounds: int, *,
    task: str = "", changed: dict[str, str] | None = None, keep: list[str] | None = None,
    start_with: str | None = None, shown: dict[str, str] | None = None, read_answer: bool = False,
) -> str:
    """The note the model reads after ``command`` failed: what failed first, then the output's end,
    the files it points at; ``task`` (what the user asked) and ``changed`` (the files changed so far,
    as they are now), ``keep`` (files the task says not to change) and ``start_with`` (the file to
    read and change first) and ``shown`` (files not read in the turn, as read_file shows them) when
    given; ``read_answer``: the check read the answer, so a corrected answer may be the fix."""
    tidy = _RULE.sub(lambda m: m.group(1) * 3, output).strip()
    keys = _key_lines(tidy)
    parts = [f"The acceptance check `{command}` failed ({status}), so the task is not done yet."]
    if keys:
        parts.append("What failed:\n" + "\n".join(keys))
    parts.append("The end of its output:\n" + (tidy or "(it printed nothing)"))
    if files:
        parts.append("The output points at: " + ", ".join(files) + ".")
    if keep:
        parts.append(f"The task says not to change {', '.join(keep)}: the fix goes in another file.")
    if changed:
        listed = "\n".join(f"--- {path} ---\n{content}" for path, content in changed.items())
        parts.append("The files changed so far, as they are now (compare them with the task):\n" + listed)
    if task.strip():
        parts.append(f"The task, as the user gave it: {task.strip()}")
    for path, numbered in (shown or {}).items():
        parts.append(
            f"{path} as it is now (you have not read it in this task; numbered as read_file shows it, "
            f"the numbers are not part of the file):\n{numbered}"
        )
    if start_with and start_with in (shown or {}):
        parts.append(f"Start with {start_with}, shown above: change what makes the check fail.")
    elif start_with:
        parts.append(f"Start with {start_with}: read it, then change what makes the check fail.")
    again = f"The check runs again when you answer (round {round_} of {rounds})."
    parts.append(f"{_what_to_do(read_answer)} {again}")
    return "\n\n".join(parts)


def _what_to_do(read_answer: bool) -> str:
    if read_answer:
        return (
            "The check reads your answer: answer again, in full, giving what the task asks for, with the "
            "facts taken from the files (read them again if you need to). Change a file only if the "
            "task asks for a change; the same answer again fails the same way."
        )
    return (
        "Change the files so that the check passes (edit_file or write_file), then answer: the check "
        "runs on what is on disk, so reading files again or answering again without a change does not "
        "fix it."
    )


def unchanged_request(command: str, read_answer: bool = False) -> str:
    """The note for an answer given while the workspace (and the answer, for a check that reads it)
    is as the failing check left it."""
    if read_answer:
        return (
            f"Your answer is the same as when the check `{command}` failed, so it would fail the same "
            "way: the task is not done. Answer again, in full, giving what the task asks for."
        )
    return (
        f"Nothing in the workspace has changed since the check `{command}` failed, so it would fail "
        "the same way: the task is not done. Make the change that fixes it with edit_file or "
        "write_file first, then answer."
    )


def _key_lines(output: str) -> list[str]:
    lines = [ln.rstrip() for ln in output.splitlines() if _KEY_LINE.match(ln.strip())]
    unique = list(dict.fromkeys(lines))
    return unique[-MAX_KEY_LINES:]


def named_files(output: str, root: Path) -> list[str]:
    """The workspace files ``output`` names (``calc.py:7`` as ``calc.py line 7``), in order, once,
    each with the workspace modules it imports (``test_calc.py line 5 (it imports calc.py)``)."""
    found: dict[str, list[str]] = {}
    for match in _PATH.finditer(output):
        path, line = match.group(1), match.group(2)
        try:
            candidate = (root / path).resolve()
            inside = candidate.is_relative_to(root.resolve()) and candidate.is_file()
        except (OSError, ValueError):
            continue
        if not inside:
            continue
        lines = found.setdefault(path, [])
        if line and line not in lines:
            lines.append(line)
    named = []
    for path, lines in found.items():
        imports = local_imports(root / path, root)
        at = f" line {', '.join(lines)}" if lines else ""
        named.append(f"{path}{at}" + (f" (it imports {', '.join(imports)})" if imports else ""))
    return named


def first_to_change(output: str, root: Path, keep: list[str]) -> str | None:
    """The file a fix most likely goes in: the first workspace file ``output`` points at that the task
    does not keep unchanged, else the first local module one of them imports (a failing assert points
    at the test; with the test kept, the code it imports)."""
    kept = {k.removeprefix("./") for k in keep}
    pointed = list(dict.fromkeys(m.group(1) for m in _PATH.finditer(output)))
    inside = [p for p in pointed if _inside(root, p)]
    for path in inside:
        if path not in kept:
            return path
    for path in inside:
        for module in local_imports(root / path, root):
            if module not in kept:
                return module
    return None


def _inside(root: Path, path: str) -> bool:
    try:
        candidate = (root / path).resolve()
        return candidate.is_relative_to(root.resolve()) and candidate.is_file()
    except (OSError, ValueError):
        return False


def workspace_fingerprint(root: Path) -> str:
    """A digest of the workspace's files (path, size, modification time), for telling whether any
    changed; cache and VCS directories are left out."""
    digest = hashlib.blake2b(digest_size=16)
    count = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in sorted(files):
            path = os.path.join(folder, name)
            try:
                info = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            digest.update(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\0".encode("utf-8", "surrogatepass"))
            count += 1
            if count >= MAX_FILES:
                return digest.hexdigest()
    return digest.hexdigest()
