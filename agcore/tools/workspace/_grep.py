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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio
import anyio.to_thread

from agcore.tools._errors import ToolError
from agcore.tools._path_guard import PathDenied, PathGuard, glob_match
from agcore.tools.workspace._fd_paths import lstat_at, open_regular, read_bytes
from agcore.tools.workspace._files import SKIP_DIRS, is_binary, walk_tree

__all__ = ["GrepBackend", "grep"]

GrepBackend = Literal["auto", "ripgrep", "python"]
_MAX_LINE_CHARS = 300
_COLLECT = 10_000  # matches kept for sorting; beyond this they are only counted
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


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
    if lstat_at(guard, real) is None:
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
    kept = _verified(guard, matches)
    return kept, total - (len(matches) - len(kept))


def _verified(guard: PathGuard, matches: list[_Match]) -> list[_Match]:
    """The matches whose line reads the same when the file is opened race-free.

    ripgrep opens files by path name, so a directory swapped for a symlink while it walks would let
    it read outside the workspace. Only what agcore reads itself through directory descriptors is
    shown: each matched file is read again that way and a line that differs is dropped."""
    lines_of: dict[str, list[bytes] | None] = {}
    kept: list[_Match] = []
    for match in matches:
        if match.path not in lines_of:
            try:
                content = read_bytes(guard, guard.root / match.path)
            except (OSError, ToolError):
                content = None
            lines_of[match.path] = content.split(b"\n") if content is not None else None
        lines = lines_of[match.path]
        if lines is None or not 0 < match.line <= len(lines):
            continue
        if _clip(lines[match.line - 1].decode("utf-8", "replace")) == match.text:
            kept.append(match)
    return kept


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
    for rel, fd in _open_files(guard, start, glob):
        with os.fdopen(fd, "rb") as handle:
            try:
                if is_binary(handle.read(8192)):
                    continue
                handle.seek(0)
                for number, raw in enumerate(handle, start=1):
                    text = raw.decode("utf-8", "replace")
                    if regex.search(text.rstrip("\r\n")):
                        total += 1
                        if len(matches) < _COLLECT:
                            matches.append(_Match(rel, number, _clip(text)))
            except OSError:
                continue  # unreadable: ripgrep skips these silently too
    return matches, total


def _open_files(guard: PathGuard, start: Path, glob: str | None) -> Iterator[tuple[str, int]]:
    """``(relative path, read descriptor)`` of every regular file to search, opened through directory
    descriptors with ``O_NOFOLLOW``: symlinks, FIFOs (would block) and sockets are skipped, and so is
    anything swapped for a symlink while the search runs."""
    if lstat_at(guard, start) is None:
        return
    try:
        fd = open_regular(guard, start)
    except (IsADirectoryError, PathDenied, OSError):
        fd = None
    if fd is not None:
        yield guard.relative(start), fd
        return
    for directory, dirnames, filenames, dir_fd in walk_tree(guard, start):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            rel = guard.relative(directory / name)
            if guard.is_denied(rel) or (glob is not None and not glob_match(glob, rel)):
                continue
            try:
                file_fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
            except OSError:
                continue  # a symlink (ELOOP), vanished, or unreadable
            if not stat.S_ISREG(os.fstat(file_fd).st_mode):
                os.close(file_fd)
                continue
            os.set_blocking(file_fd, True)
            yield rel, file_fd
