"""Which files a failing check's note shows as they are now, so that a weak model need not open them.

Issue 26's runs: told "Start with calc.py: read it, then change what makes the check fail", a 1.5B
model re-read the failing test (the file it had read already) and answered, in every round; it never
opened calc.py. Aider keeps the files of the task "in the chat" for this reason. So the note shows the
small local files a fix most likely goes in that the turn has not read: the file to start with, the
workspace modules the files the output points at import, then those files themselves — not a file the
task keeps unchanged, not one already shown among the files changed, at most ``MAX_SHOWN`` of them,
each at most ``MAX_LINES`` lines and ``MAX_BYTES`` bytes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from agcore.agent._messages import AssistantReply, ToolResults
from agcore.agent.checks._local_imports import local_imports

if TYPE_CHECKING:
    from agcore.agent._messages import AgentMessage

__all__ = ["MAX_BYTES", "MAX_LINES", "MAX_SHOWN", "files_to_show", "files_read"]

MAX_SHOWN = 2
MAX_LINES = 60
MAX_BYTES = 3_000

_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z]\w{0,5})(?::\d+)?")


def files_read(messages: list[AgentMessage]) -> set[str]:
    """The paths that ``read_file`` calls in ``messages`` read successfully (as the model wrote them,
    without a leading ``./``)."""
    calls: dict[str, str] = {}
    for message in messages:
        if isinstance(message, AssistantReply):
            for call in message.tool_calls:
                path = call.input.get("path") if call.name == "read_file" else None
                if isinstance(path, str):
                    calls[call.id] = path.removeprefix("./")
    read: set[str] = set()
    for message in messages:
        if isinstance(message, ToolResults):
            ok = [r.tool_use_id for r in message.results if not r.is_error]
            read.update(calls[i] for i in ok if i in calls)
    return read


def files_to_show(
    output: str, root: Path, *, start_with: str | None, keep: list[str], skip: set[str]
) -> list[str]:
    """The workspace files (relative paths) the note shows: ``start_with``, then the local modules
    that the files ``output`` points at import, then those files; none in ``keep`` or ``skip`` (read
    in the turn, shown already), only small text files, at most ``MAX_SHOWN``."""
    pointed = [p for p in dict.fromkeys(m.group(1) for m in _PATH.finditer(output)) if _small_text(root, p)]
    imported = [m for p in pointed for m in local_imports(root / p, root)]
    left_out = {p.removeprefix("./") for p in (*keep, *skip)}
    chosen: list[str] = []
    for path in (*([start_with] if start_with else []), *imported, *pointed):
        path = path.removeprefix("./")
        if path in left_out or path in chosen or not _small_text(root, path):
            continue
        chosen.append(path)
        if len(chosen) == MAX_SHOWN:
            break
    return chosen


def _small_text(root: Path, path: str) -> bool:
    try:
        candidate = (root / path).resolve()
        if not candidate.is_relative_to(root.resolve()) or not candidate.is_file():
            return False
        if candidate.stat().st_size > MAX_BYTES:
            return False
        data = candidate.read_bytes()
    except (OSError, ValueError):
        return False
    return b"\0" not in data and data.count(b"\n") <= MAX_LINES
