"""Read before write: which version of each file this workspace session has seen.

Small models overwrite files they never looked at (a log, a config, a test file replaced by one
line). So ``write_file`` and ``edit_file`` refuse to replace an existing file unless the session knows
its current content: it read that version with ``read_file`` (any line range counts: the model has
seen the file and where it stands, and a file past the read cap could otherwise never be written),
or wrote it itself (``write_file``, ``edit_file``, ``apply_patch``). Versions are compared by content
hash (SHA-256), so a file changed on disk since the read is refused even at the same size and mtime,
and a file merely touched is not. ``undo_patch`` forgets the files it restores: the session did not
write that content in this step, so it reads before writing again.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from agcore.tools._errors import ToolError

__all__ = ["ReadRecord", "digest"]


def digest(content: bytes) -> str:
    """The version key of a file's content."""
    return hashlib.sha256(content).hexdigest()


class ReadRecord:
    """Per-workspace map of real path → digest of the version the session last read or wrote.

    ``enabled=False`` keeps recording but never refuses (``Workspace(read_before_write=False)``).
    """

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self._seen: dict[Path, str] = {}
        self._lock = threading.Lock()  # reads run in worker threads, concurrently with writes

    def saw(self, path: Path, content_digest: str) -> None:
        """The session has seen (read or written) this version of ``path``."""
        with self._lock:
            self._seen[path] = content_digest

    def wrote(self, path: Path, content: bytes | None) -> None:
        """The session wrote ``content`` to ``path`` (None: it deleted the file)."""
        if content is None:
            self.forget(path)
        else:
            self.saw(path, digest(content))

    def forget(self, path: Path) -> None:
        with self._lock:
            self._seen.pop(path, None)

    def check(self, path: Path, rel: str, current: bytes | None, *, action: str) -> None:
        """Refuse (``ToolError``) to ``action`` the file at ``path`` whose content is ``current``
        unless the session has seen that content. None (no regular file there) is always allowed."""
        if not self.enabled or current is None:
            return
        with self._lock:
            known = self._seen.get(path)
        if known == digest(current):
            return
        why = (
            "has not been read in this session"
            if known is None
            else "has changed on disk since this session last read it"
        )
        raise ToolError(
            f"'{rel}' already exists and {why}, so it was not {action}: replacing a file you have not "
            f"seen loses what is in it. Call read_file('{rel}') first, then make the change (edit_file "
            "changes part of a file). Nothing was written."
        )
