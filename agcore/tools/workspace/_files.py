"""Reading, writing and listing files of a workspace: the bodies of ``read_file``, ``write_file``,
``list_dir`` and ``glob``. Every path goes through the workspace's ``PathGuard`` first, then is reached
through directory descriptors (``_fd_paths``), so a symlink swapped in meanwhile is never followed."""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from agcore.tools._errors import ToolError
from agcore.tools._path_guard import PathGuard, glob_to_regex
from agcore.tools.workspace._fd_paths import (
    changed_meanwhile,
    dir_fd,
    lstat_at,
    open_regular,
    read_bytes,
    write_atomic,
)
from agcore.tools.workspace._patch import FileChange, UndoRecord

__all__ = [
    "SKIP_DIRS",
    "describe_write",
    "glob_paths",
    "is_binary",
    "list_dir",
    "plan_write",
    "read_text_file",
    "walk_tree",
    "write_change",
]

# Listed by name but never descended into by list_dir, glob and grep: version-control internals,
# caches and installed dependencies are large and rarely what a model is looking for. Naming one
# explicitly (list_dir("node_modules/x"), glob("node_modules/**")) still works.
SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".bzr", "__pycache__", "node_modules", ".venv", "venv", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", ".eggs", ".idea", ".gradle",
})  # fmt: skip
_SNIFF_BYTES = 8192
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True, slots=True)
class ReadLimits:
    max_bytes: int
    max_lines: int


def is_binary(sample: bytes) -> bool:
    """NUL bytes, or mostly control characters: not text a model can use."""
    if b"\x00" in sample:
        return True
    if not sample:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
        return False
    except UnicodeDecodeError:
        control = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13, 27))
        return control / len(sample) > 0.05


def _size(n: int) -> str:
    return (
        f"{n:,} bytes"
        if n < 10_000
        else f"{n / 1024:,.1f} KB"
        if n < 10_000_000
        else f"{n / 1048576:,.1f} MB"
    )


# ------------------------------------------------------------------------------------- read_file


def read_text_file(
    guard: PathGuard,
    path: str,
    start_line: int | None,
    end_line: int | None,
    limits: ReadLimits,
    seen: Callable[[Path, str], None] | None = None,
) -> str:
    """The numbered lines; ``seen(real path, digest)`` is told which version was read (hashed from
    the same open file, so a write racing the read is never taken for what the model saw)."""
    real = guard.resolve(path)
    rel = guard.relative(real)
    try:
        with changed_meanwhile(rel, "it was not read"):
            fd = open_regular(guard, real)
    except IsADirectoryError:
        raise ToolError(f"'{rel}' is a directory; use list_dir('{rel}') to see what it holds") from None
    if fd is None:
        raise ToolError(f"'{rel}' does not exist; use list_dir or glob to find the file")
    with os.fdopen(fd, "rb") as handle:
        first = 1 if start_line is None else start_line
        if first < 1 or (end_line is not None and end_line < first):
            raise ToolError(
                f"invalid line range start_line={start_line}, end_line={end_line}: lines are numbered "
                "from 1 and end_line (inclusive) must not be before start_line"
            )
        size = os.fstat(handle.fileno()).st_size
        if is_binary(handle.read(_SNIFF_BYTES)):
            shown = f"'{rel}' is a binary file ({_size(size)}); read_file shows text files only."
        else:
            handle.seek(0)
            shown = _numbered_lines(handle, rel, first, end_line, size, limits)
        if seen is not None:
            handle.seek(0)
            seen(real, hashlib.file_digest(handle, "sha256").hexdigest())  # as digest()
        return shown


def _numbered_lines(
    handle: BinaryIO, rel: str, first: int, last: int | None, size: int, limits: ReadLimits
) -> str:
    if size == 0:
        return f"'{rel}' is empty (0 bytes)."
    shown: list[str] = []
    used = 0
    cut_line = replaced = False
    stopped = False  # the caps withheld lines
    consumed = 0
    for consumed, raw in enumerate(handle, start=1):
        if consumed < first:
            continue
        if last is not None and consumed > last:
            break
        if len(shown) >= limits.max_lines or used >= limits.max_bytes:
            stopped = True
            break
        if used + len(raw) > limits.max_bytes:
            if shown:
                stopped = True
                break
            raw = raw[: limits.max_bytes]  # a single line longer than the whole budget
            cut_line = True
        used += len(raw)
        text = raw.decode("utf-8", errors="replace").rstrip("\n").rstrip("\r")
        replaced = replaced or "\ufffd" in text
        shown.append(f"{consumed:>6}\t{text}")
    else:
        total = consumed
        return _render(rel, first, total, size, shown, stopped, cut_line, replaced, limits)
    total = consumed + _count_rest(handle)
    return _render(rel, first, total, size, shown, stopped, cut_line, replaced, limits)


def _render(
    rel: str,
    first: int,
    total: int,
    size: int,
    shown: list[str],
    stopped: bool,
    cut_line: bool,
    replaced: bool,
    limits: ReadLimits,
) -> str:
    if first > total:
        raise ToolError(f"start_line={first} is past the end of '{rel}', which has {total} lines")
    shown_last = first + len(shown) - 1
    # The continuation hint goes in the header too: it survives any later truncation of the output.
    more = f"; more: read_file('{rel}', start_line={shown_last + 1})" if stopped else ""
    header = f"{rel}: lines {first}-{shown_last} of {total} ({_size(size)}){more}"
    notes: list[str] = []
    if stopped:
        notes.append(
            f"[{total - shown_last} more lines not shown (output is capped at {limits.max_lines} lines / "
            f"{_size(limits.max_bytes)}); call read_file with start_line={shown_last + 1} to continue]"
        )
    if cut_line:
        notes.append(f"[line {first} is longer than {_size(limits.max_bytes)}; only its start is shown]")
    if replaced:
        notes.append("[the file is not valid UTF-8; undecodable bytes are shown as \ufffd]")
    return "\n".join([header, *shown, *notes])


def _count_rest(handle: BinaryIO) -> int:
    """Lines left after the current position (a last line without a newline counts)."""
    count = 0
    tail = b""
    for chunk in iter(lambda: handle.read(1 << 20), b""):
        count += chunk.count(b"\n")
        tail = chunk[-1:]
    return count + (1 if tail and tail != b"\n" else 0)


# ------------------------------------------------------------------------------------ write_file


def plan_write(guard: PathGuard, path: str, content: str) -> FileChange:
    """The change writing ``content`` to ``path`` makes, with the previous content (None: no regular
    file there) and permissions kept so the write can be undone like a patch. Writes nothing."""
    real = guard.resolve(path, for_write=True)
    rel = guard.relative(real)
    if real == guard.root:
        raise ToolError("'.' is the workspace root, a directory; give a file path such as 'name.txt'")
    with changed_meanwhile(rel, "nothing was written"):
        info = lstat_at(guard, real)
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise ToolError(f"'{rel}' is a directory; give a file path inside it")
    before: bytes | None = None
    if info is not None and stat.S_ISREG(info.st_mode):  # a link is replaced, never read through
        try:
            before = read_bytes(guard, real)
        except OSError:  # swapped for something else meanwhile: the write replaces that
            before = None
    mode = stat.S_IMODE(info.st_mode) if info is not None and before is not None else None
    return FileChange(real, rel, before, content.encode("utf-8"), mode)


def write_change(guard: PathGuard, change: FileChange) -> UndoRecord:
    """Make the write ``plan_write`` planned (the entry at the path is replaced at once, a symlink
    included, never written through); the record ``undo`` takes it back with."""
    assert change.after is not None
    created: list[Path] = []
    with changed_meanwhile(change.rel, "nothing was written"):
        write_atomic(guard, change.path, change.after, created=created)
    return UndoRecord([change], created)


def unchanged_write(change: FileChange) -> str:
    """What a write of the content a file already holds did: nothing, said so. A 1.5B model rewrote
    the same greet.py six times while its check failed on the test file; each "Overwrote" read as
    progress, and the new modification time as a change to check again."""
    assert change.after is not None
    return (
        f"'{change.rel}' already holds exactly this content ({_size(len(change.after))}): nothing was "
        "changed. If something still fails, the change it needs is elsewhere or different."
    )


def describe_write(change: FileChange) -> str:
    """What a write did, for the model."""
    assert change.after is not None
    notes = "".join(f"Note: {note}.\n" for note in change.notes)
    if change.before is None:
        return f"{notes}Created '{change.rel}' ({_size(len(change.after))})."
    size, had = _size(len(change.after)), _size(len(change.before))
    return f"{notes}Overwrote '{change.rel}' ({size}; it had {had})."


# ------------------------------------------------------------------------------------ list_dir


def list_dir(guard: PathGuard, path: str, depth: int, max_entries: int) -> str:
    if depth < 1:
        raise ToolError(f"depth must be 1 or more (1 lists only the directory's own entries), got {depth}")
    real = guard.resolve(path)
    rel = guard.relative(real)
    with changed_meanwhile(rel, "it was not listed"):
        kind = lstat_at(guard, real)
    if kind is None:
        raise ToolError(f"'{rel}' does not exist; list_dir('.') shows the workspace root")
    if not stat.S_ISDIR(kind.st_mode) and not stat.S_ISLNK(kind.st_mode):  # a link: dir_fd refuses it
        raise ToolError(f"'{rel}' is a file, not a directory; use read_file('{rel}') to read it")
    lines: list[str] = []
    hidden = 0
    with changed_meanwhile(rel, "it was not listed"), dir_fd(guard, real) as fd:
        for indent, entry in _walk(guard, fd, real, depth):
            if len(lines) >= max_entries:
                hidden += 1
                continue
            lines.append("  " * indent + entry)
    header = f"{rel}/" if rel != "." else "./ (workspace root)"
    if not lines:
        return f"{header}\n  (empty)"
    if hidden:
        lines.append(
            f"[... {hidden} more entries not shown (cap: {max_entries}); "
            "list a subdirectory or use a lower depth]"
        )
    return "\n".join([header, *("  " + line for line in lines)])


def _walk(
    guard: PathGuard, fd: int, directory: Path, depth: int, level: int = 0
) -> Iterator[tuple[int, str]]:
    # Listed through the directory's descriptor: a subdirectory swapped for a symlink meanwhile is
    # not descended into (the O_NOFOLLOW open below fails), so nothing outside gets listed.
    try:
        entries = sorted(os.scandir(fd), key=lambda e: (not _is_dir(e), e.name.lower()))
    except OSError as exc:
        yield level, f"[cannot list: {exc.strerror}]"
        return
    for entry in entries:
        full = directory / entry.name
        rel = guard.relative(full)
        if guard.is_denied(rel):
            continue
        if entry.is_symlink():
            try:
                target = os.readlink(entry.name, dir_fd=fd)
            except OSError:
                continue  # gone meanwhile
            inside = guard.contains(Path(os.path.realpath(full)))
            yield level, f"{entry.name} -> {target}" + ("" if inside else "  (outside the workspace)")
        elif _is_dir(entry):
            if entry.name in SKIP_DIRS:
                yield level, f"{entry.name}/  (not expanded: VCS, cache or dependency directory)"
                continue
            yield level, f"{entry.name}/"
            if level + 1 < depth:
                try:
                    child = os.open(entry.name, _DIRECTORY_FLAGS, dir_fd=fd)
                except OSError as exc:
                    yield level + 1, f"[cannot list: {exc.strerror}]"
                    continue
                try:
                    yield from _walk(guard, child, full, depth, level + 1)
                finally:
                    os.close(child)
        else:
            try:
                size = entry.stat(follow_symlinks=False).st_size
            except OSError:
                size = 0
            yield level, f"{entry.name}  ({_size(size)})"


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


# ---------------------------------------------------------------------------------------- glob


def glob_paths(guard: PathGuard, pattern: str, max_results: int) -> str:
    cleaned = pattern.strip()
    while cleaned.startswith("./"):
        cleaned = cleaned[2:]
    parts = cleaned.split("/")
    if not cleaned or "\x00" in cleaned:
        raise ToolError("the pattern is empty; try '**/*.py' (all Python files) or 'src/*'")
    if os.path.isabs(cleaned) or cleaned.startswith("~") or ".." in parts or "\\" in cleaned:
        raise ToolError(
            f"pattern '{pattern}' reaches outside the workspace; patterns are relative to the workspace "
            "root and may not contain '..', '~' or a leading '/'"
        )
    regex = re.compile(glob_to_regex(cleaned), re.DOTALL)
    literal = []
    for part in parts[:-1]:
        if any(c in part for c in "*?["):
            break
        literal.append(part)
    try:
        start = guard.resolve("/".join(literal) or ".")
    except ToolError:
        return f"No paths match '{pattern}'."
    mentioned = {p for p in parts if p in SKIP_DIRS}
    matches: list[str] = []
    for directory, dirnames, filenames, fd in walk_tree(guard, start):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS or d in mentioned)
        for name in [*dirnames, *filenames]:
            full = directory / name
            rel = guard.relative(full)
            if not regex.fullmatch(rel) or guard.is_denied(rel):
                continue
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISLNK(mode):
                if not guard.contains(Path(os.path.realpath(full))):
                    continue
                mode = os.stat(full).st_mode if os.path.exists(full) else mode
            matches.append(rel + ("/" if stat.S_ISDIR(mode) else ""))
    if not matches:
        return f"No paths match '{pattern}'."
    matches.sort()
    shown = matches[:max_results]
    out = "\n".join(shown)
    if len(matches) > max_results:
        hidden = len(matches) - max_results
        out += f"\n[... {hidden} more matches not shown (cap: {max_results}); narrow the pattern]"
    return out


def walk_tree(guard: PathGuard, start: Path) -> Iterator[tuple[Path, list[str], list[str], int]]:
    """``os.fwalk`` below the directory ``start`` (reached through descriptors): ``(real directory,
    dirnames, filenames, directory fd)``. Symlinks are never followed, and a directory swapped for a
    symlink during the walk is skipped (fwalk compares what it opened with what it listed)."""
    try:
        with dir_fd(guard, start) as top:
            for dirpath, dirnames, filenames, fd in os.fwalk(".", dir_fd=top):
                yield start / os.path.normpath(dirpath), dirnames, filenames, fd
    except (FileNotFoundError, NotADirectoryError, ToolError):
        return
