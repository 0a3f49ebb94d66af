"""``JsonlFile``: an append-only JSON Lines file that many writers share safely.

Each record is encoded to one line and handed to the OS in a single ``write`` on a descriptor opened
with ``O_APPEND``: nothing is buffered in the process (a crash loses no record already written), the
kernel places every line at the end of the file (other processes appending to the same file do not
overwrite it), and a lock keeps threads from interleaving the rare partial writes.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import weakref
from pathlib import Path
from typing import Any, Final

__all__ = ["JsonlFile"]

_log = logging.getLogger("agcore.plugins")

_encode: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
_FLAGS: Final = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)


class JsonlFile:
    """One JSONL file, opened at construction (an unwritable path raises there, not mid-run)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._failed = False
        try:
            self._fd: int | None = os.open(path, _FLAGS, 0o644)
        except OSError as exc:
            raise OSError(
                f"cannot open the log file {str(path)!r} for appending: {exc.strerror or exc}. "
                "Pass a directory this process can write to."
            ) from exc
        self._finalizer = weakref.finalize(self, os.close, self._fd)

    @staticmethod
    def encode(record: dict[str, Any]) -> bytes:
        return (_encode(record) + "\n").encode("utf-8")

    def write(self, line: bytes) -> None:
        """Append one encoded line. A failing disk is logged once and the record dropped: the run
        the log describes must not fail because of its log."""
        with self._lock:
            fd = self._fd
            if fd is None:
                return
            try:
                view = memoryview(line)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
            except OSError as exc:
                if not self._failed:
                    self._failed = True
                    _log.warning("could not write to %s: %s; records are being dropped", self.path, exc)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                self._fd = None
                self._finalizer()

    @property
    def closed(self) -> bool:
        return self._fd is None
