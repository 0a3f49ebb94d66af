"""Why ``run_command`` would refuse a call's arguments, asked before anyone is asked to approve it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agcore.tools._command_guard import CommandGuard
from agcore.tools._errors import ToolDenied
from agcore.tools._path_guard import PathGuard

__all__ = ["command_refusal"]


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
