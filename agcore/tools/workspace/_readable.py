"""Directories outside the workspace the user lets the agent read: ``Workspace(readable=[...])``,
``agcore run --readable PATH``, ``$AGCORE_READABLE`` (``os.pathsep`` between paths).

Commands see them read-only inside the sandbox (``_sandbox_view``), and the file tools read them
too: an absolute path under one of them is resolved by a ``PathGuard`` rooted there, with the same
secrets denied, so ``read_file``, ``list_dir`` and ``grep`` follow the policy commands do. Nothing
outside the workspace is ever writable.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from agcore.tools._path_guard import PathGuard

__all__ = ["READABLE_VAR", "ReadableRoots"]

READABLE_VAR = "AGCORE_READABLE"


class ReadableRoots:
    """The extra readable directories, checked and resolved once; ``guard_for`` picks the guard that
    resolves a path the model gives."""

    def __init__(self, paths: Iterable[str | os.PathLike[str]], workspace: PathGuard) -> None:
        given = [*paths, *(p for p in os.environ.get(READABLE_VAR, "").split(os.pathsep) if p)]
        roots: list[Path] = []
        for raw in given:
            path = Path(os.path.realpath(os.path.expanduser(os.fspath(raw))))
            if not path.exists():
                raise ValueError(
                    f"readable path {os.fspath(raw)!r} does not exist; name an existing file or directory"
                )
            if path == Path("/"):
                raise ValueError("readable=['/'] would show the whole machine; name the directories needed")
            roots.append(path)
        self.roots = tuple(dict.fromkeys(roots))
        self._workspace = workspace
        self._guards: dict[Path, PathGuard] = {}

    def guard_for(self, path: str) -> PathGuard:
        """The workspace's guard, or for an absolute path inside a readable directory, one rooted there."""
        if not os.path.isabs(path):
            return self._workspace
        real = Path(os.path.realpath(path))
        if self._workspace.contains(real):
            return self._workspace
        for root in self.roots:
            directory = root if root.is_dir() else root.parent
            if real == root or (real.is_relative_to(directory) and (root.is_dir() or real == root)):
                if directory not in self._guards:
                    self._guards[directory] = PathGuard(
                        directory, deny=self._workspace.deny, deny_except=self._workspace.deny_except
                    )
                return self._guards[directory]
        return self._workspace
