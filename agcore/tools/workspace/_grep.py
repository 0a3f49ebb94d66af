"""The body of the ``grep`` tool: ripgrep when it is installed, Python's ``re`` otherwise.

Both backends print the same ``path:line:text`` lines, sorted by path then line, with the same caps,
skip the same directories (``SKIP_DIRS``) and denied files, do not follow symlinks and skip binary
files. Differences left: ripgrep honours ``.gitignore`` files and uses Rust's regex dialect (close to
Python's for everyday patterns, but without look-around or back-references).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio
import anyio.to_thread

from agcore.tools._errors import ToolError
from agcore.tools._path_guard import PathGuard, glob_match
from agcore.tools.workspace._files import SKIP_DIRS, is_binary

__all__ = ["GrepBackend", "grep"]

GrepBackend = Literal["auto", "ripgrep", "python"]
_MAX_LINE_CHARS = 300
_COLLECT = 10_000  # matches kept for sorting; beyond this they are only counted


@dataclass(frozen=True, slots=True)
class _Match:
    path: str
    line: int
    text: str


async def grep(
    guard: PathGuard,
    pattern: str,
    path: str,
    glob: str | None,
    ignore_case: bool,
    max_results: int,
    *,
    backend: GrepBackend = "auto",
) -> str:
    if not pattern:
        raise ToolError("the pattern is empty; give a regular expression such as 'def main' or 'TODO|FIXME'")
    if max_results < 1:
        raise ToolError(f"max_results must be at least 1, got {max_results}")
    if glob is not None and (glob.startswith(("/", "~")) or ".." in glob.split("/") or not glob.strip()):
        raise ToolError(
            f"glob '{glob}' must be a file-name pattern like '*.py' or a relative one like 'src/**/*.ts'"
        )
    real = guard.resolve(path)
    rel = guard.relative(real)
    if not real.exists():
        raise ToolError(f"'{rel}' does not exist; grep searches a file or directory inside the workspace")
    ripgrep = shutil.which("rg") if backend != "python" else None
    if backend == "ripgrep" and ripgrep is None:
        raise ToolError("ripgrep ('rg') is not installed on this machine; use the Python backend")
    if ripgrep is not None:
        matches, total = await _ripgrep(ripgrep, guard, pattern, rel, glob, ignore_case)
    else:
        regex = _compile(pattern, ignore_case)
        matches, total = await anyio.to_thread.run_sync(_python_grep, guard, regex, real, glob)
    return _format(matches, total, pattern, rel, max_results)


def _compile(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(
            f"invalid regular expression {pattern!r}: {exc}; escape special characters with '\\'"
        ) from exc


def _format(matches: list[_Match], total: int, pattern: str, rel: str, max_results: int) -> str:
    if total == 0:
        return f"No matches for {pattern!r} in '{rel}'."
    matches.sort(key=lambda m: (m.path.split("/"), m.line))
    lines = [f"{m.path}:{m.line}:{m.text}" for m in matches[:max_results]]
    if total > max_results:
        lines.append(
            f"[showing {max_results} of {total} matches (max_results={max_results}); narrow the pattern, "
            "the path or the glob, or raise max_results]"
        )
    return "\n".join(lines)


def _clip(text: str) -> str:
    text = text.rstrip("\r\n")
    return text if len(text) <= _MAX_LINE_CHARS else text[:_MAX_LINE_CHARS] + "…"


# ------------------------------------------------------------------------------------ ripgrep


async def _ripgrep(
    executable: str, guard: PathGuard, pattern: str, rel: str, glob: str | None, ignore_case: bool
) -> tuple[list[_Match], int]:
    argv = [
        executable, "--null", "--line-number", "--no-heading", "--with-filename", "--color=never",
        "--no-config", "--hidden", "--no-messages", "--ignore-case" if ignore_case else "--case-sensitive",
    ]  # fmt: skip
    for name in sorted(SKIP_DIRS):
        argv += ["--glob", f"!{name}"]
    for denied in guard.deny:
        argv += ["--glob", f"!{denied}"]
    if glob is not None:
        argv += ["--glob", glob]
    argv += ["-e", pattern, "--", rel]
    matches: list[_Match] = []
    total = 0
    buffer = b""
    process = await anyio.open_process(argv, cwd=guard.root, stdin=subprocess.DEVNULL)
    try:
        assert process.stdout is not None
        assert process.stderr is not None
        async for chunk in process.stdout:
            buffer += chunk
            *complete, buffer = buffer.split(b"\n")
            for record in complete:
                total += _ripgrep_record(record, guard, matches)
        if buffer:
            total += _ripgrep_record(buffer, guard, matches)
        errors = b"".join([chunk async for chunk in process.stderr]).decode("utf-8", "replace")
        code = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            with anyio.CancelScope(shield=True):
                await process.wait()
        await process.aclose()
    if code == 2 and total == 0:
        detail = errors.strip() or "ripgrep failed"
        raise ToolError(f"grep failed for pattern {pattern!r}: {detail}")
    return matches, total


def _ripgrep_record(record: bytes, guard: PathGuard, matches: list[_Match]) -> int:
    name, sep, rest = record.partition(b"\x00")
    number, colon, text = rest.partition(b":")
    if not sep or not colon or not number.isdigit():
        return 0
    path = name.decode("utf-8", "replace").removeprefix("./")
    if guard.is_denied(path):
        return 0
    if len(matches) < _COLLECT:
        matches.append(_Match(path, int(number), _clip(text.decode("utf-8", "replace"))))
    return 1


# ------------------------------------------------------------------------------------- python


def _python_grep(
    guard: PathGuard, regex: re.Pattern[str], start: Path, glob: str | None
) -> tuple[list[_Match], int]:
    matches: list[_Match] = []
    total = 0
    for file in _files(guard, start, glob):
        try:
            with open(file, "rb") as handle:
                if is_binary(handle.read(8192)):
                    continue
                handle.seek(0)
                rel = guard.relative(file)
                for number, raw in enumerate(handle, start=1):
                    text = raw.decode("utf-8", "replace")
                    if regex.search(text.rstrip("\r\n")):
                        total += 1
                        if len(matches) < _COLLECT:
                            matches.append(_Match(rel, number, _clip(text)))
        except OSError:
            continue  # unreadable (permissions, vanished): ripgrep skips these silently too
    return matches, total


def _files(guard: PathGuard, start: Path, glob: str | None) -> list[Path]:
    if start.is_file():
        return [start]
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(start):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            full = Path(dirpath, name)
            rel = guard.relative(full)
            try:
                regular = stat.S_ISREG(full.lstat().st_mode)  # not symlinks, FIFOs (would block), sockets
            except OSError:
                continue
            if not regular or guard.is_denied(rel):
                continue
            if glob is not None and not glob_match(glob, rel):
                continue
            found.append(full)
    return found
