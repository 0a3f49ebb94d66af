"""How a command runs: with its consoles, under ``anyio.run``, its outcome turned into an exit code;
an expected failure (``CliError``) is one line on stderr, never a traceback."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import typer
from rich.console import Console

from agcore.cli._errors import CliError, ExitCode

__all__ = ["execute", "execute_durable"]


class _OneLine(logging.Formatter):
    """agcore's warnings as one line each: a tool's traceback is for debugging (AGCORE_DEBUG=1), not
    for the terminal of someone running an agent (the tool's error is shown as its result already)."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a record comes (test runners swap it)."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _: Any) -> None:
        pass


def _log_to_stderr() -> None:
    logger = logging.getLogger("agcore")
    if logger.handlers or logging.getLogger().handlers:
        return  # someone configured logging (or we did already): theirs wins
    handler = _Stderr()
    if not os.environ.get("AGCORE_DEBUG"):
        handler.setFormatter(_OneLine())
    logger.addHandler(handler)


def execute(command: Callable[[Console], Awaitable[ExitCode]] | Callable[[Console], ExitCode]) -> None:
    """Run ``command`` with a console; exit with its code, or with a ``CliError``'s after its message."""
    _log_to_stderr()
    console = Console(highlight=False, soft_wrap=True)
    errors = Console(stderr=True, highlight=False)
    try:
        code = anyio.run(_as_async, command, console)
    except KeyboardInterrupt:
        errors.print("interrupted", style="yellow")
        code = ExitCode.INTERRUPTED
    except BaseException as exc:
        error = _cli_error(exc)
        if error is None:
            raise
        errors.print(f"error: {error.message}", style="red", markup=False, soft_wrap=True)
        code = error.code
    raise typer.Exit(int(code))


def execute_durable(command: Callable[[Console], Awaitable[ExitCode]]) -> None:
    """``execute`` for the commands that talk to Temporal: the process ends with ``os._exit`` once
    their output is flushed, because the Temporal client's native threads can crash an interpreter
    that finalizes normally after using it (temporalio/sdk-python#300)."""
    import os
    import sys

    try:
        execute(command)
    except typer.Exit as done:
        code = done.exit_code
    else:  # pragma: no cover - _execute always exits
        code = 0
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


async def _as_async(
    command: Callable[[Console], Awaitable[ExitCode]] | Callable[[Console], ExitCode], console: Console
) -> ExitCode:
    outcome = command(console)
    return await outcome if isinstance(outcome, Awaitable) else outcome


def _cli_error(exc: BaseException) -> CliError | None:
    """The ``CliError`` ``exc`` is, or the one a task group wrapped in an exception group."""
    if isinstance(exc, CliError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _cli_error(inner)
            if found is not None:
                return found
    return None
