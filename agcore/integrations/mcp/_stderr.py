"""Capture a stdio server's stderr: keep its last lines for error messages, log every line.

The SDK hands ``errlog`` straight to the subprocess as its stderr, so it must be a real file. A pipe
(rather than a temp file) keeps memory bounded for chatty servers and lets lines reach the log as
they arrive. POSIX only: on Windows anyio cannot wait on a pipe, so stderr passes through instead.
"""

from __future__ import annotations

import logging
import os
import sys
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import TextIO

import anyio

__all__ = ["StderrTail", "capture_stderr"]

_log = logging.getLogger("agcore.integrations.mcp")

_READ_SIZE = 65536


class StderrTail:
    """The last ``max_lines`` lines a server wrote to stderr (``file`` is what the server writes to)."""

    def __init__(self, server_name: str, file: TextIO, read_fd: int | None, max_lines: int = 20) -> None:
        self.server_name = server_name
        self.file = file
        self._read_fd = read_fd
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._partial = b""

    def text(self, max_chars: int = 2000) -> str:
        """The tail, newest last, cut to ``max_chars`` from the end; ``""`` when nothing was written."""
        self.drain()
        lines = list(self._lines)
        if self._partial:
            lines.append(self._partial.decode("utf-8", "replace"))
        text = "\n".join(lines).strip()
        return text if len(text) <= max_chars else "..." + text[-max_chars:]

    def drain(self) -> bool:
        """Read whatever is buffered in the pipe without blocking; False once the pipe hit EOF."""
        if self._read_fd is None:
            return False
        while True:
            try:
                chunk = os.read(self._read_fd, _READ_SIZE)
            except (BlockingIOError, InterruptedError):
                return True
            except OSError:
                return False
            if not chunk:
                return False
            self._feed(chunk)

    def _feed(self, chunk: bytes) -> None:
        *complete, self._partial = (self._partial + chunk).split(b"\n")
        for raw in complete:
            line = raw.decode("utf-8", "replace").rstrip("\r")
            self._lines.append(line)
            _log.debug("MCP server %r stderr: %s", self.server_name, line)

    async def _pump(self) -> None:
        assert self._read_fd is not None
        while True:
            await anyio.wait_readable(self._read_fd)
            if not self.drain():
                return


@asynccontextmanager
async def capture_stderr(server_name: str) -> AsyncIterator[StderrTail]:
    """A ``StderrTail`` whose ``file`` is the write end of a pipe read in the background until exit.

    Exit after the server process has stopped, so the last words of a crashing server are kept.
    """
    if sys.platform == "win32":  # pragma: no cover
        yield StderrTail(server_name, sys.stderr, None)
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    file = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
    tail = StderrTail(server_name, file, read_fd)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(tail._pump)
            try:
                yield tail
            finally:
                tg.cancel_scope.cancel()
    finally:
        tail.drain()
        # Blocking on the pipe is over (the pump was cancelled above), so closing cannot race a wait.
        tail._read_fd = None
        with suppress(OSError):
            file.close()
        with suppress(OSError):
            os.close(read_fd)
