"""Git metadata a command could plant in the workspace for the user's own git to run later.

The user's git runs outside any sandbox, and it reads files of the workspace's ``.git`` that decide
what it executes or where it reads its configuration: ``config`` (``core.fsmonitor``, ``core.hooksPath``,
aliases, filters, ``include.path``...), ``hooks/*``, ``commondir`` (another directory's config and
hooks take over), ``info/attributes`` (filter and diff drivers), ``worktrees/*/config.worktree`` and a
``.git`` *file* (``gitdir:``: the repository is elsewhere). Two defences, for the two cases:

- What already exists before a command is mounted read-only in its sandbox (``protected_paths``), and
  ``.git`` itself is bind-mounted onto itself so it cannot be renamed away (``pinned_git_dir``).
- What does not exist yet cannot be mounted (a bind mount needs its mount point, and making one would
  leave files the user never asked for), so ``GitTrapCheck`` takes a snapshot of these files before
  the command and compares after it: a control file the command created or changed that would make
  git run something (a ``commondir``, a ``.git`` file or link, a hook, a config with any key outside
  what ``git init`` writes, attributes naming a filter) is removed, or put back as it was, and the
  model is told why. A ``git init``, ``git add`` or ``git commit`` plants nothing of the kind and is
  left alone.

Only the workspace root's ``.git`` is watched: a ``.git`` planted in a subdirectory is honoured by git
only when the user runs git inside that subdirectory (docs/tools.md lists this as a limit).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GitTrapCheck", "pinned_git_dir", "protected_paths"]

# Files and directories of .git that make git run code or read another configuration.
_CONTROL = ("config", "config.worktree", "commondir", "hooks", "info", "worktrees", "modules")
# What `git init`, `git config user.*`, `git remote add` and `git push -u` write into a new config:
# nothing here runs a command (remote.*.uploadpack/receivepack would, and are not listed).
_SAFE_KEY = re.compile(
    r"^(core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|"
    r"symlinks)|extensions\.(objectformat|refstorage|worktreeconfig)|user\.(name|email)|"
    r"init\.defaultbranch|remote\.[^.]+(\.[^.]+)*\.(url|pushurl|fetch)|branch\.[^.]+(\.[^.]+)*\.(remote|merge))$",
    re.IGNORECASE,
)
_SECTION = re.compile(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_KEY = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)\s*(=.*)?$")
_MAX_READ = 1 << 20
_BULK = frozenset({"objects", "refs", "logs", "lfs"})  # a submodule's data under modules/: not control


def pinned_git_dir(workspace: Path) -> Path | None:
    """The workspace's ``.git`` directory, to bind-mount onto itself (still writable): a mount point
    cannot be renamed or removed, so a command cannot move the repository aside and put a ``.git`` of
    its own (or a ``gitdir:`` file) in its place."""
    git = workspace / ".git"
    try:
        return git if stat.S_ISDIR(os.lstat(git).st_mode) else None
    except OSError:
        return None


def protected_paths(workspace: Path) -> list[Path]:
    """The existing git control files and directories of ``workspace`` to mount read-only."""
    git = workspace / ".git"
    try:
        mode = os.lstat(git).st_mode
    except OSError:
        return []
    if stat.S_ISREG(mode):
        return [git]  # a gitdir pointer: the repository lives elsewhere
    if not stat.S_ISDIR(mode):
        return []
    found = []
    for name in _CONTROL:
        path = git / name
        with contextlib.suppress(OSError):
            if not stat.S_ISLNK(os.lstat(path).st_mode):
                found.append(path)
    return found


@dataclass(frozen=True, slots=True)
class _Entry:
    kind: str  # "file", "oversized" (a file past what is read of it), "dir", "link", "other"
    content: bytes  # files: their bytes (capped); links: their target


def _entry(path: Path) -> _Entry | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return _Entry("link", os.fsencode(os.readlink(path)))
    if stat.S_ISDIR(info.st_mode):
        return _Entry("dir", b"")
    if stat.S_ISREG(info.st_mode):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return _Entry("other", b"")
        with os.fdopen(fd, "rb") as handle:
            content = handle.read(_MAX_READ + 1)
        # Git reads a file whole, the check only its first MiB: a larger one cannot be vouched for.
        return _Entry("file" if len(content) <= _MAX_READ else "oversized", content[:_MAX_READ])
    return _Entry("other", b"")


def _snapshot(workspace: Path) -> dict[Path, _Entry]:
    git = workspace / ".git"
    state: dict[Path, _Entry] = {}
    top = _entry(git)
    if top is None:
        return state
    state[git] = top
    if top.kind != "dir":
        return state
    for name in _CONTROL:
        path = git / name
        entry = _entry(path)
        if entry is None:
            continue
        state[path] = entry
        if entry.kind == "dir":
            for directory, dirnames, filenames in os.walk(path):  # os.walk does not follow links
                dirnames[:] = [d for d in dirnames if d not in _BULK]
                for child in [*dirnames, *filenames]:
                    full = Path(directory, child)
                    if (sub := _entry(full)) is not None:
                        state[full] = sub
    return state


def _config_problem(data: bytes) -> str | None:
    """Why a git config file could make git run something (None: only keys ``git init`` writes)."""
    section = ""
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            match = _SECTION.match(line)
            if match is None:
                return f"a section git may read differently: {line[:60]!r}"
            name, sub, rest = match.groups()
            section = name.lower() + (f".{sub}" if sub is not None else "")
            line = rest.strip()
            if not line or line.startswith(("#", ";")):
                continue
        match = _KEY.match(line)
        if match is None:
            return f"a line git may read differently: {line[:60]!r}"
        key = f"{section}.{match.group(1)}"
        if not section or not _SAFE_KEY.match(key):
            return f"it sets '{key}', which is not one of the settings git init writes"
    return None


def _problem(git: Path, path: Path, entry: _Entry) -> str | None:
    """Why this new or changed control entry is a trap (None: harmless)."""
    rel = path.relative_to(git).as_posix() if path != git else ".git"
    if path == git:
        return (
            None if entry.kind == "dir" else f".git is now a {entry.kind}: git would use another repository"
        )
    if entry.kind == "link":
        return f".git/{rel} is a symlink"
    if entry.kind == "oversized":
        return f".git/{rel} is over {_MAX_READ >> 20} MiB, too large to check for what git would run"
    name = path.name
    if rel == "commondir" or (name in ("commondir", "gitdir") and rel.startswith("modules/")):
        return f".git/{rel} makes git read another repository's config and hooks"
    if rel.startswith("hooks/") or "/hooks/" in rel:
        if entry.kind == "file" and not name.endswith(".sample"):
            return f".git/{rel} is a hook git would run"
        return None
    if name in ("config", "config.worktree") and entry.kind == "file":
        reason = _config_problem(entry.content)
        return f".git/{rel}: {reason}" if reason else None
    if (
        rel == "info/attributes"
        and entry.kind == "file"
        and re.search(rb"\b(filter|diff|merge)\s*=", entry.content)
    ):
        return f".git/{rel} names a filter, diff or merge driver git would run"
    return None


class GitTrapCheck:
    """A snapshot of the workspace's git control files, compared after a command (see module doc)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.before = _snapshot(workspace)

    def undo_traps(self) -> list[str]:
        """Remove or restore what the command planted; one sentence per trap, for the model."""
        git = self.workspace / ".git"
        after = _snapshot(self.workspace)
        found = [
            (path, reason)
            for path, entry in sorted(after.items())
            if self.before.get(path) != entry and (reason := _problem(git, path, entry)) is not None
        ]
        if not found:
            return []
        if git not in self.before:  # the whole .git is new: it goes, with everything the command put in
            _remove(git)
            return [f"{reason}; the .git this command created was removed" for _, reason in found]
        notes = []
        for path, reason in found:
            old = self.before.get(path)
            _remove(path)
            if old is not None and old.kind == "file":
                with contextlib.suppress(OSError):
                    path.write_bytes(old.content)
                notes.append(f"{reason}; its previous content was put back")
            else:
                notes.append(f"{reason}; it was removed")
        return notes


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
