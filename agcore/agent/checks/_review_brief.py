"""What a reviewer reads about a finished turn: the task, the tool calls that succeeded (each with the
first line of its result), the files changed since the session began (as they are now), and the
answer — short, so that a small model reads all of it in one request."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agcore.agent._messages import AssistantReply, ToolResults

if TYPE_CHECKING:
    from agcore.agent._messages import AgentMessage
    from agcore.llm.types import ToolResultBlock, ToolUseBlock

__all__ = ["ReviewBrief", "changed_files", "succeeded", "successful_calls"]

#: How much of each part the reviewer reads.
MAX_CALLS = 12
MAX_CALL_CHARS = 160
MAX_NOTE_CHARS = 240
MAX_FILES = 4
MAX_FILE_CHARS = 1_200
MAX_ANSWER_CHARS = 1_500
MAX_SCANNED = 5_000

_SKIPPED_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".venv",
                           "node_modules", ".tox", ".hypothesis"})


@dataclass(frozen=True, slots=True)
class ReviewBrief:
    """The evidence about one turn, as the reviewer reads it (``text``)."""

    task: str
    calls: list[str]
    files: dict[str, str]
    answer: str

    @property
    def text(self) -> str:
        """The brief as the reviewer reads it: the task, the calls, the files, the answer."""
        calls = "\n".join(f"- {c}" for c in self.calls) or "(none)"
        files = "\n\n".join(f"--- {path} ---\n{content}" for path, content in self.files.items())
        return (
            f"THE TASK:\n{self.task.strip()}\n\n"
            f"TOOL CALLS THAT SUCCEEDED:\n{calls}\n\n"
            f"FILES CHANGED, AS THEY ARE NOW:\n{files or '(none)'}\n\n"
            f"THE ASSISTANT'S FINAL ANSWER:\n{_cut(self.answer.strip(), MAX_ANSWER_CHARS) or '(empty)'}"
        )


def succeeded(messages: list[AgentMessage]) -> list[tuple[ToolUseBlock, ToolResultBlock]]:
    """Each call in ``messages`` that succeeded, with its result, in order."""
    calls = {}
    for message in messages:
        if isinstance(message, AssistantReply):
            calls.update({c.id: c for c in message.message.tool_calls})
    done: list[tuple[ToolUseBlock, ToolResultBlock]] = []
    for message in messages:
        if isinstance(message, ToolResults):
            for result in message.results:
                call = calls.get(result.tool_use_id)
                if call is not None and not result.is_error:
                    done.append((call, result))
    return done


def successful_calls(messages: list[AgentMessage]) -> list[str]:
    """``name(arguments) -> first line of the result`` for each call in ``messages`` that succeeded,
    with the result's ``Note:`` lines (a tool's own warning)."""
    shown: list[str] = []
    for call, result in succeeded(messages):
        arguments = _cut(json.dumps(call.input, ensure_ascii=False, default=str), MAX_CALL_CHARS)
        lines = [ln.strip() for ln in result.text.splitlines() if ln.strip()]
        first = _cut(lines[0], MAX_CALL_CHARS) if lines else ""
        # A tool's own warning ("Note: 'get_usr' ... still appears") is evidence too.
        notes = [_cut(ln, MAX_NOTE_CHARS) for ln in lines[1:] if ln.startswith("Note:")]
        shown.append(" ".join([f"{call.name}({arguments}) -> {first}", *notes]))
    return shown[-MAX_CALLS:]


def changed_files(
    root: Path, since: float, *, most: int = MAX_FILES, chars: int = MAX_FILE_CHARS
) -> dict[str, str]:
    """The text files under ``root`` modified at or after ``since`` (epoch seconds), newest last, each
    cut to its first ``chars`` characters; at most ``most`` (the newest). Binary files and hidden
    directories (``.git``, an application's ``.agcore``) are left out."""
    found: list[tuple[float, str, Path]] = []
    scanned = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(names):
            scanned += 1
            if scanned > MAX_SCANNED:
                break
            path = Path(folder, name)
            try:
                mtime = path.stat().st_mtime
            except OSError:
                continue
            if mtime >= since:
                found.append((mtime, path.relative_to(root).as_posix(), path))
    files: dict[str, str] = {}
    for _, rel, path in reversed(sorted(found)):
        try:
            data = path.read_bytes()[: chars * 4]
        except OSError:
            continue
        if b"\0" in data:  # a database, an image: nothing a model reads
            continue
        files[rel] = _cut(data.decode("utf-8", errors="replace"), chars) or "(empty file)"
        if len(files) >= most:
            break
    return dict(reversed(files.items()))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
