"""The bodies of ``apply_patch`` and ``undo_patch``: unified diffs, applied all or nothing.

A patch is first *planned* in memory: every hunk of every file is matched against the file's current
content (at the line the hunk names, else at the nearest offset where its context and removed lines
match exactly, else ignoring trailing whitespace). Only when every hunk fits is anything written;
the first misfit raises an error that shows the hunk and the lines actually found, and no file is
touched. Each applied patch leaves an ``UndoRecord`` holding the exact bytes (and permissions) of
every file before and after, so ``undo_patch`` restores them, deletes files the patch created and
recreates files it deleted.
"""

from __future__ import annotations

import contextlib
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from unidiff.errors import UnidiffParseError
from unidiff.patch import Hunk, PatchSet

from agcore.tools._errors import ToolError
from agcore.tools._path_guard import PathGuard
from agcore.tools.workspace._fd_paths import (
    changed_meanwhile,
    lstat_at,
    read_bytes,
    remove_dir,
    remove_file,
    write_atomic,
)
from agcore.tools.workspace._hunk_counts import recount_hunks

__all__ = ["FileChange", "UndoRecord", "apply_changes", "plan_patch", "undo"]

_SHOWN_LINES = 12


@dataclass(slots=True)
class FileChange:
    path: Path  # real, absolute
    rel: str
    before: bytes | None  # None: the file did not exist
    after: bytes | None  # None: the patch deletes it
    mode: int | None = None  # permissions before, to restore
    added: int = 0
    removed: int = 0
    hunks: int = 0
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        verb = "create" if self.before is None else "delete" if self.after is None else "modify"
        counts = f"+{self.added} -{self.removed}"
        extra = f", {self.hunks} hunk{'s' if self.hunks != 1 else ''}" if verb == "modify" else ""
        notes = f"; {'; '.join(self.notes)}" if self.notes else ""
        return f"{verb} {self.rel} ({counts}{extra}{notes})"


@dataclass(slots=True)
class UndoRecord:
    changes: list[FileChange]
    created_dirs: list[Path]


# ------------------------------------------------------------------------------------- planning


def plan_patch(guard: PathGuard, text: str) -> list[FileChange]:
    """Every file's new content, or ``ToolError`` naming the first problem. Writes nothing."""
    if not text.strip():
        raise ToolError("the patch is empty; send a unified diff (--- a/file, +++ b/file, @@ hunks)")
    patch = _parsed(text)
    if isinstance(patch, Exception):
        patch_or_none = _recounted(text)  # the counts are often wrong where the body is right
        if patch_or_none is not None and not any(f.added or f.removed for f in patch_or_none):
            raise ToolError(
                "the patch changes nothing: no line of its hunks starts with '-' (a line taken out) or "
                "'+' (a line put in), each at the very start of the line. To replace a piece of a file, "
                "edit_file(path, old, new) is simpler"
            ) from patch
        if patch_or_none is None:
            raise ToolError(
                f"could not parse the patch: {patch}. Send a unified diff: '--- a/path' and '+++ b/path' "
                "headers, then '@@ -start,count +start,count @@' hunks whose line counts match their bodies"
            ) from patch
        patch = patch_or_none
    if not len(patch):
        raise ToolError("no file changes found in the patch; it needs '--- a/path' / '+++ b/path' headers")
    working: dict[Path, FileChange] = {}  # by path: a file may appear twice in one patch
    order: list[Path] = []
    for patched in patch:
        if patched.is_binary_file:
            raise ToolError(f"'{patched.path}' is a binary patch; apply_patch handles text diffs only")
        source, target = _paths(patched.source_file, patched.target_file)
        if source is None and target is None:
            raise ToolError("a file in the patch has /dev/null as both source and target")
        src = guard.resolve(source, for_write=True) if source is not None else None
        dst = guard.resolve(target, for_write=True) if target is not None else None
        current = _current(guard, working, src) if src is not None else None
        if src is None:
            assert dst is not None
            existing = _current(guard, working, dst, must_exist=False)
            if existing is not None:
                raise ToolError(
                    f"the patch creates '{guard.relative(dst)}', which already exists; send a diff that "
                    "modifies it (--- a/path) or use write_file to replace it"
                )
            lines: list[bytes] = []
        else:
            assert current is not None
            lines = current.splitlines(keepends=True)
        final = dst if dst is not None else src
        assert final is not None
        rel = guard.relative(final)
        new_lines, notes, added, removed = _apply_hunks(lines, list(patched), rel)
        after = b"".join(new_lines)
        hunks = len(patched)
        if dst is None:
            assert src is not None
            if after.strip():
                raise ToolError(
                    f"the patch deletes '{rel}' but its hunks leave {len(new_lines)} lines in it; "
                    "a deletion diff must remove every line"
                )
            _record(working, order, src, guard, before=current, after=None, counts=(0, removed), hunks=0)
        elif src is not None and src != dst:  # a rename, maybe with edits
            if _current(guard, working, dst, must_exist=False) is not None:
                raise ToolError(f"the patch renames a file to '{rel}', which already exists")
            _record(working, order, src, guard, before=current, after=None, counts=(0, 0), hunks=0)
            _record(
                working, order, dst, guard, before=None, after=after, counts=(added, removed), hunks=hunks
            )
        else:
            change = _record(
                working, order, dst, guard, before=current, after=after, counts=(added, removed), hunks=hunks
            )
            change.notes.extend(notes)
    return [working[p] for p in order]


def _parsed(text: str) -> PatchSet | Exception:
    try:
        return PatchSet(text if text.endswith("\n") else text + "\n")
    except (UnidiffParseError, ValueError, IndexError) as exc:
        return exc


def _recounted(text: str) -> PatchSet | None:
    """``text`` parsed with its hunks' counts taken from their bodies, or None if it still fails."""
    patch = _parsed(recount_hunks(text))
    return None if isinstance(patch, Exception) else patch


def _paths(source: str, target: str) -> tuple[str | None, str | None]:
    def clean(name: str) -> str | None:
        name = name.split("\t", 1)[0].strip()
        return None if name == "/dev/null" else name

    src, dst = clean(source), clean(target)
    # git's a/ b/ prefixes: strip them only when both sides use them, so a real "a/" directory survives
    if (src is None or src.startswith("a/")) and (dst is None or dst.startswith("b/")):
        src = src[2:] if src is not None else None
        dst = dst[2:] if dst is not None else None
    return src, dst


def _current(
    guard: PathGuard, working: dict[Path, FileChange], path: Path, *, must_exist: bool = True
) -> bytes | None:
    if path in working:
        content = working[path].after
    else:
        try:
            content = read_bytes(guard, path)
        except IsADirectoryError:
            raise ToolError(
                f"'{guard.relative(path)}' is a directory, not a file; a patch changes files"
            ) from None
        except (FileNotFoundError, NotADirectoryError):
            content = None
    if content is None and must_exist:
        raise ToolError(
            f"the patch changes '{guard.relative(path)}', which does not exist; use '--- /dev/null' to "
            "create a file, or check the path with list_dir/glob"
        )
    return content


def _record(
    working: dict[Path, FileChange],
    order: list[Path],
    path: Path,
    guard: PathGuard,
    *,
    before: bytes | None,
    after: bytes | None,
    counts: tuple[int, int],
    hunks: int,
) -> FileChange:
    if path in working:  # second appearance: keep the original "before"
        change = working[path]
        change.after = after
        change.added += counts[0]
        change.removed += counts[1]
        change.hunks += hunks
        return change
    info = lstat_at(guard, path) if before is not None else None
    mode = stat.S_IMODE(info.st_mode) if info is not None else None
    change = FileChange(path, guard.relative(path), before, after, mode, counts[0], counts[1], hunks)
    working[path] = change
    order.append(path)
    return change


# -------------------------------------------------------------------------------------- hunks


def _apply_hunks(
    lines: list[bytes], hunks: Sequence[Hunk], rel: str
) -> tuple[list[bytes], list[str], int, int]:
    eol = b"\r\n" if lines and lines[0].endswith(b"\r\n") else b"\n"
    out: list[bytes] = []
    notes: list[str] = []
    added = removed = 0
    position = 0  # next unconsumed line of the original
    for number, hunk in enumerate(hunks, start=1):
        ops = _operations(hunk, eol)
        old = [content for kind, content in ops if kind != "+"]
        expected = max(hunk.source_start - 1, 0) if old else min(hunk.source_start, len(lines))
        found, loose = _locate(lines, old, expected, position)
        if found is None:
            raise ToolError(_mismatch(rel, number, len(hunks), hunk, lines, old, expected))
        if found != expected:
            notes.append(f"hunk {number} applied at offset {found - expected:+d} lines")
        if loose:
            notes.append(f"hunk {number} matched ignoring trailing whitespace")
        out.extend(lines[position:found])
        cursor = found
        for kind, content in ops:
            if kind == " ":  # context keeps the file's own bytes (its line ending, its whitespace)
                out.append(lines[cursor])
                cursor += 1
            elif kind == "-":
                cursor += 1
                removed += 1
            else:
                out.append(content)
                added += 1
        position = cursor
    out.extend(lines[position:])
    # a line that is no longer the last one needs its line ending back
    for i in range(len(out) - 1):
        if not out[i].endswith(b"\n"):
            out[i] += eol
    return out, notes, added, removed


def _operations(hunk: Hunk, eol: bytes) -> list[tuple[str, bytes]]:
    """The hunk's lines in order as (" " | "-" | "+", bytes with the file's line ending)."""
    ops: list[tuple[str, bytes]] = []
    for line in hunk:
        if line.line_type == "\\":  # "\ No newline at end of file": the previous line has none
            if ops:
                ops[-1] = (ops[-1][0], ops[-1][1].rstrip(b"\r\n"))
            continue
        if line.line_type in (" ", "-", "+"):
            ops.append((line.line_type, line.value.rstrip("\r\n").encode("utf-8") + eol))
    return ops


def _locate(lines: list[bytes], old: list[bytes], expected: int, floor: int) -> tuple[int | None, bool]:
    """Where ``old`` occurs at or after ``floor``, nearest to ``expected``; and whether it matched only
    when trailing whitespace is ignored."""
    if not old:
        return (expected if floor <= expected <= len(lines) else None), False
    for loose in (False, True):
        want = [_norm(content, loose) for content in old]
        best: int | None = None
        for start in range(floor, len(lines) - len(want) + 1):
            if all(_norm(lines[start + k], loose) == want[k] for k in range(len(want))) and (
                best is None or abs(start - expected) < abs(best - expected)
            ):
                best = start
        if best is not None:
            return best, loose
    return None, False


def _norm(line: bytes, loose: bool) -> bytes:
    return line.rstrip() if loose else line.rstrip(b"\r\n")


def _mismatch(
    rel: str, number: int, count: int, hunk: Hunk, lines: list[bytes], old: list[bytes], at: int
) -> str:
    header = f"@@ -{hunk.source_start},{hunk.source_length} +{hunk.target_start},{hunk.target_length} @@"

    def show(rows: Sequence[bytes], first: int) -> str:
        text = [
            f"{first + i:>6} | {row.decode('utf-8', 'replace').rstrip(chr(13) + chr(10))}"
            for i, row in enumerate(rows[:_SHOWN_LINES])
        ]
        if len(rows) > _SHOWN_LINES:
            text.append(f"       ... ({len(rows) - _SHOWN_LINES} more lines)")
        return "\n".join(text) if text else "       (nothing: the file ends before this line)"

    expected = show(old, at + 1)
    actual = show(lines[at : at + max(len(old), 1)], at + 1)
    return (
        f"hunk {number} of {count} for '{rel}' ({header}) does not match the file, here or anywhere after "
        f"the previous hunk. The hunk expects these lines at line {at + 1}:\n{expected}\n"
        f"The file has there ({len(lines)} lines in all):\n{actual}\n"
        f"No file was changed. Read '{rel}' again (read_file) and send a patch made against its "
        "current content."
    )


# --------------------------------------------------------------------------------------- writing


def apply_changes(guard: PathGuard, changes: list[FileChange]) -> UndoRecord:
    """Write every change; if one write fails, put back the ones already written and re-raise."""
    done: list[FileChange] = []
    created: list[Path] = []
    try:
        for change in changes:
            _check_unchanged(guard, change.path, change.before, "since the patch was checked")
            with changed_meanwhile(change.rel, "no file of the patch was changed"):
                if change.after is None:
                    remove_file(guard, change.path)
                else:
                    write_atomic(guard, change.path, change.after, mode=change.mode, created=created)
            done.append(change)
    except BaseException:
        _restore(guard, done, created)
        raise
    return UndoRecord(changes, created)


def undo(guard: PathGuard, record: UndoRecord) -> list[str]:
    """Put every file back as it was before the patch; refuses (changing nothing) if a file has been
    changed since, so later edits are not silently lost."""
    for change in record.changes:
        _check_unchanged(
            guard, change.path, change.after, "since the patch was applied, and undo would lose that edit"
        )
    names = ", ".join(change.rel for change in record.changes)
    with changed_meanwhile(names, "the undo may have stopped part-way; check those files with read_file"):
        _restore(guard, record.changes, record.created_dirs)
    return [
        f"{'deleted' if c.before is None else 'recreated' if c.after is None else 'restored'} {c.rel}"
        for c in record.changes
    ]


def _check_unchanged(guard: PathGuard, path: Path, expected: bytes | None, why: str) -> None:
    try:
        actual = read_bytes(guard, path)
    except (IsADirectoryError, NotADirectoryError, FileNotFoundError):
        actual = None
    if actual != expected:
        raise ToolError(f"'{guard.relative(path)}' has changed {why}; nothing was written")


def _restore(guard: PathGuard, changes: list[FileChange], created_dirs: list[Path]) -> None:
    for change in reversed(changes):
        if change.before is None:
            with contextlib.suppress(FileNotFoundError):
                remove_file(guard, change.path)
        else:
            write_atomic(guard, change.path, change.before, mode=change.mode, created=[])
    for directory in sorted(created_dirs, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            remove_dir(guard, directory)  # only if empty: something else may have been put there
