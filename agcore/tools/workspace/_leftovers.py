"""Guard-only mode's answer to processes that outlive their command (no PID namespace there).

Every process of a command starts in a process group of its own, killed when the command ends; a
process that leaves the group (``setsid``, a double fork into a new session) is still found, because
each command's environment carries a tag (``AGCORE_COMMAND_TAG``) its descendants inherit, and every
live process whose environment holds the tag is killed too. One that both leaves the group and
re-executes with a fresh environment (``setsid env -i ...``) is out of reach: the sandbox's PID
namespace is what stops that.
"""

from __future__ import annotations

import contextlib
import os
import signal

__all__ = ["TAG_VARIABLE", "kill_tagged", "tagged_processes"]

TAG_VARIABLE = "AGCORE_COMMAND_TAG"


def tagged_processes(tag: str) -> list[int]:
    """The live processes whose environment holds ``TAG_VARIABLE=tag`` (readable ones: our own)."""
    needle = f"{TAG_VARIABLE}={tag}".encode()
    found: list[int] = []
    me = os.getpid()
    try:
        entries = os.listdir("/proc")
    except OSError:  # pragma: no cover - no /proc (macOS): the process group is all there is
        return found
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry))
    return found


def kill_tagged(tag: str, rounds: int = 5) -> int:
    """SIGKILL every process carrying ``tag``, again while new ones appear (a fork mid-kill); how many."""
    killed = 0
    for _ in range(rounds):
        pids = tagged_processes(tag)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
    return killed
