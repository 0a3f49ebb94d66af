"""The refusals of ``CommandGuard``, shared by the guard and its checks of code it cannot read."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import NoReturn

from agcore.tools._errors import ToolDenied

__all__ = ["CommandDenied", "CommandNeedsConfirmation", "deny", "needs_confirmation", "program_name"]


class CommandDenied(ToolDenied):
    """A command was refused by a ``CommandGuard``; ``command`` is the (sub-)command refused."""

    def __init__(self, reason: str, *, command: str) -> None:
        super().__init__(reason)
        self.command = command


class CommandNeedsConfirmation(CommandDenied):
    """The command runs a program the guard cannot read (an interpreter one-liner); it may run once a
    person confirmed it (``check(..., confirmed=True)``)."""


def deny(command: str, reason: str) -> NoReturn:
    raise CommandDenied(f"`{command}` is refused: {reason}.", command=command)


def needs_confirmation(command: str, program: str) -> NoReturn:
    raise CommandNeedsConfirmation(
        f"`{command}` needs confirmation: '{program}' is given an inline program the guard cannot read. "
        "Ask the user to confirm it, or write the program to a file in the workspace and run that file.",
        command=command,
    )


def program_name(argv: Sequence[str]) -> str:
    return (PurePosixPath(argv[0]).name or argv[0]) if argv else ""  # "." (source) has no name
