"""Why ``run_command`` would refuse a call's arguments: asked before anyone is asked to approve it
(``command_refusal``), and again, raising, when it runs (``checked_command``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agcore.tools._command_guard import CommandGuard
from agcore.tools._errors import ToolDenied, ToolError
from agcore.tools._path_guard import PathGuard

__all__ = ["checked_command", "command_refusal"]


def command_refusal(
    arguments: Mapping[str, Any], path_guard: PathGuard, command_guard: CommandGuard, *, read_files: bool
) -> str | None:
    """The ``CommandGuard``'s reason to refuse ``run_command(**arguments)``, or None: the agent loop
    asks this before asking the user, so a refused command is never shown for approval. Programs the
    guard cannot read are let through to the question (that is what approval is for)."""
    command = arguments.get("command")
    cwd = arguments.get("cwd", ".")
    if not isinstance(command, (str, list)) or not isinstance(cwd, str):
        return None  # running it reports what is wrong with the arguments
    try:
        directory = path_guard.resolve(cwd or ".")  # "" sent for the optional cwd: the root
        command_guard.check(command, cwd=directory, confirmed=True, read_files=read_files)
    except ToolDenied as exc:
        return exc.reason
    except (OSError, ValueError):
        return None
    return None


def checked_command(
    command: str | list[str], cwd: str, path_guard: PathGuard, command_guard: CommandGuard, *,
    read_files: bool, confirmed: bool,
) -> Path:
    """The directory ``command`` runs in, once the ``CommandGuard`` let it through; ``ToolError``
    (``ToolDenied`` from the guard) for a command that will not run, saying why."""
    directory = path_guard.resolve(cwd)
    if not directory.is_dir():
        raise ToolError(f"cwd '{cwd}' is not a directory of the workspace")
    if isinstance(command, list) and not command:
        raise ToolError("the command is empty; give the program to run and its arguments")
    try:
        command_guard.check(command, cwd=directory, read_files=read_files, confirmed=confirmed)
    except OSError as exc:  # a path the guard resolved changed under it (a racing command)
        raise ToolError(
            f"a path in the command changed while it was being checked ({exc.strerror}: "
            f"'{exc.filename}'); something else is changing it, try again"
        ) from exc
    return directory
