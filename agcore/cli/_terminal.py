"""The terminal: ONE reader of stdin feeding prompts, confirmations and steering; Ctrl-C as events.

Two readers on one stdin would race for each line, so every line goes through ``Terminal``: a line
typed while something waits for one (``read_line``, ``ask``) answers it; a line typed while a turn runs
and nothing waits goes to ``on_line`` (the chat's steering); any other line is kept for the next
prompt (typed ahead).

The reader starts with the first prompt or steering handler, not before: a command that never asks
(``run --yes``) never touches stdin, so it can run in the background of a shell without being stopped
for reading the terminal. It is a daemon thread doing blocking reads, handing each line to the event
loop. Not an
anyio worker thread: those are not daemons, so one stuck in a read would keep the process alive after
the command finished until the user pressed Enter. On a real terminal it reads the file descriptor
with ``os.read`` rather than ``sys.stdin``: a daemon thread blocked inside the buffered ``sys.stdin``
holds its lock, which makes the interpreter's shutdown abort.
"""

from __future__ import annotations

import codecs
import io
import os
import signal
import sys
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TextIO, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
from rich.console import Console

__all__ = ["Terminal", "interrupts"]

_T = TypeVar("_T")


class Terminal:
    """Reads lines from ``stream`` (default: ``sys.stdin``) for the command's prompts; use as
    ``async with Terminal(console) as terminal``."""

    def __init__(self, console: Console, stream: TextIO | None = None) -> None:
        self.console = console
        self._stream = stream if stream is not None else sys.stdin
        self._lines: deque[str] = deque()
        self._eof = False
        self._waiter: anyio.Event | None = None
        self._reading = 0
        self._on_line: Callable[[str], None] | None = None
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self._started = False
        # Piped input is not echoed by a terminal: show the answers so the output reads right.
        self._echo = not _isatty(self._stream)

    async def __aenter__(self) -> Terminal:
        self._token = anyio.lowlevel.current_token()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._on_line = None

    @property
    def on_line(self) -> Callable[[str], None] | None:
        """Where a line goes when nothing is reading (the chat's steering while a turn runs)."""
        return self._on_line

    @on_line.setter
    def on_line(self, handler: Callable[[str], None] | None) -> None:
        self._on_line = handler
        if handler is not None:
            self._start()

    def _start(self) -> None:
        if self._started:
            return
        if self._token is None:
            raise RuntimeError("use the Terminal as `async with Terminal(console) as terminal`")
        self._started = True
        reader = threading.Thread(target=self._read_all, args=(self._token, self._own_descriptor()),
                                  name="agcore-stdin", daemon=True)
        reader.start()

    @property
    def at_eof(self) -> bool:
        """stdin has ended (Ctrl-D) and every line was taken."""
        return self._eof and not self._lines

    # ------------------------------------------------------------------------------- reading

    async def read_line(self, prompt: str = "") -> str | None:
        """The next line (without its newline) after showing ``prompt``; None at end of input."""
        if prompt:
            self.console.print(prompt, end="", markup=False, highlight=False)
        self._start()
        self._reading += 1
        try:
            while not self._lines:
                if self._eof:
                    return None
                self._waiter = anyio.Event()
                await self._waiter.wait()
            line = self._lines.popleft()
        finally:
            self._reading -= 1
        if self._echo and prompt:
            self.console.print(line, markup=False, highlight=False)
        return line

    async def ask(self, question: str, answers: Mapping[str, _T], default: _T, *, hint: str = "") -> _T:
        """Ask until the reply is one of ``answers`` (case-insensitive; empty or end of input is
        ``default``); ``hint`` shows the choices (default: every answer)."""
        choices = hint or "/".join(answers)
        while True:
            reply = await self.read_line(f"{question} [{choices}] ")
            if reply is None:
                self.console.print("(no input)", markup=False)
                return default
            key = reply.strip().lower()
            if not key:
                return default
            if key in answers:
                return answers[key]
            self.console.print(f"Please answer one of: {choices}.", markup=False)

    # -------------------------------------------------------------------- the reader thread

    def _deliver(self, line: str | None) -> None:
        """Runs on the event loop: route one line (None: end of input)."""
        if line is None:
            self._eof = True
        elif self._reading == 0 and self._on_line is not None:
            self._on_line(line)
            return
        else:
            self._lines.append(line)
        if self._waiter is not None:
            self._waiter.set()

    def _read_all(self, token: anyio.lowlevel.EventLoopToken, fd: int | None) -> None:
        # The thread reads its own duplicate of the descriptor (taken before it starts) and closes it
        # when it ends: once the stream's owner closes the original, its number may be reused by
        # another file, which a read through the original number would then steal lines from.
        lines = _LineIter(_FdLines(fd).readline if fd is not None else self._stream.readline)
        try:
            for line in lines:
                anyio.from_thread.run_sync(self._deliver, line, token=token)
            anyio.from_thread.run_sync(self._deliver, None, token=token)
        except Exception:  # the command finished: nobody is listening any more
            return
        finally:
            if fd is not None:
                os.close(fd)

    def _own_descriptor(self) -> int | None:
        try:
            return os.dup(self._stream.fileno())
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            return None


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


class _LineIter:
    """Iterates ``readline()`` until it returns "" (end of input), without the newlines."""

    def __init__(self, readline: Callable[[], str]) -> None:
        self._readline = readline

    def __iter__(self) -> _LineIter:
        return self

    def __next__(self) -> str:
        line = self._readline()
        if not line:
            raise StopIteration
        return line.rstrip("\r\n")


class _FdLines:
    """``readline()`` over a raw file descriptor (see the module docstring for why not sys.stdin)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""

    def readline(self) -> str:
        while "\n" not in self._buffer:
            try:
                chunk = os.read(self._fd, 4096)
            except InterruptedError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                rest, self._buffer = self._buffer + self._decoder.decode(b"", final=True), ""
                return rest  # a last line without its newline, or "" at the end
            self._buffer += self._decoder.decode(chunk)
        line, _, self._buffer = self._buffer.partition("\n")
        return line + "\n"


@asynccontextmanager
async def interrupts(
    on_interrupt: Callable[[], None], also: tuple[signal.Signals, ...] = ()
) -> AsyncIterator[None]:
    """Call ``on_interrupt()`` on each Ctrl-C (SIGINT), or signal in ``also`` (SIGTERM, say), while
    the block runs, instead of raising ``KeyboardInterrupt`` wherever the program happens to be."""
    if threading.current_thread() is not threading.main_thread() or sys.platform == "win32":
        # Signals reach only the main thread (a test may drive the CLI from another), and Windows has
        # no signal receivers: there Ctrl-C stays a KeyboardInterrupt, which exits with 130.
        yield
        return
    with anyio.open_signal_receiver(signal.SIGINT, *also) as signals:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                async for _ in signals:
                    on_interrupt()

            tg.start_soon(watch)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
