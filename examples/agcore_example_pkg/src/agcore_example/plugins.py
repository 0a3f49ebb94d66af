"""Two hook plugins: a policy (``ProtectedPaths``) and an observer (``ToolTally``).

A plugin is any object whose methods carry ``@hookimpl`` and are named after agcore hooks; it may
declare only the hook arguments it needs. ``protected_paths`` below is published in this package's
``agcore`` entry point, so applications that load entry points get it without registering it.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from agcore.hooks import HookContext, ToolCallDecision, hookimpl
from agcore.llm import ToolUseBlock

__all__ = ["DEFAULT_PROTECTED", "ProtectedPaths", "ToolTally", "patch_paths", "protected_paths"]

log = logging.getLogger("agcore_example")

#: Files an agent should never change on its own: licences, lock files, CI workflows.
DEFAULT_PROTECTED: tuple[str, ...] = ("LICENSE*", "*.lock", "package-lock.json", ".github/workflows/*")


def patch_paths(patch: str) -> list[str]:
    """The files a unified diff touches (from its ``---``/``+++`` headers)."""
    paths: list[str] = []
    for line in patch.splitlines():
        if line.startswith(("--- ", "+++ ")):
            path = line[4:].split("\t")[0].strip()
            if path != "/dev/null":
                path = path[2:] if path.startswith(("a/", "b/")) else path
                if path not in paths:
                    paths.append(path)
    return paths


class ProtectedPaths:
    """Denies ``write_file`` and ``apply_patch`` calls that would change a protected file.

    ``patterns`` are shell globs matched against the workspace-relative path; a pattern without "/"
    also matches the file name at any depth. The model gets the denial's reason as the tool's error
    result, and ``denials`` keeps what was refused.
    """

    def __init__(self, patterns: Iterable[str] = DEFAULT_PROTECTED) -> None:
        self.patterns = tuple(patterns)
        self.denials: list[tuple[str, str]] = []

    def protects(self, path: str) -> str | None:
        """The pattern protecting ``path``, or None."""
        clean = PurePosixPath(path.replace("\\", "/").lstrip("/"))
        text = str(clean).removeprefix("./")
        for pattern in self.patterns:
            if fnmatchcase(text, pattern) or ("/" not in pattern and fnmatchcase(clean.name, pattern)):
                return pattern
        return None

    @hookimpl
    def before_tool_call(self, ctx: HookContext, call: ToolUseBlock) -> ToolCallDecision | None:
        if call.name == "write_file":
            paths = [str(call.input.get("path", ""))]
        elif call.name == "apply_patch":
            paths = patch_paths(str(call.input.get("patch", "")))
        else:
            return None  # None: no opinion, other plugins (and the tool's own guards) decide
        for path in paths:
            pattern = self.protects(path)
            if pattern is not None:
                self.denials.append((call.name, path))
                return ToolCallDecision.deny(
                    f"{path} is protected (matches {pattern!r}): agents may not change it. "
                    "Leave it as it is and tell the user what change it needs."
                )
        return None


class ToolTally:
    """Counts tool calls by tool and by how they ended; logs the tally when the session ends.

    An observer: it never changes what happens, and agcore logs (and otherwise ignores) any
    exception it might raise. ``status`` is how the call ended: ``ok``, ``error``, ``timeout``,
    ``denied`` (a ``before_tool_call`` veto, e.g. ``ProtectedPaths``), ``not_approved``...
    """

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.outcomes: Counter[tuple[str, str]] = Counter()

    @hookimpl
    def after_tool_call(self, call: ToolUseBlock, status: str) -> None:
        self.calls[call.name] += 1
        self.outcomes[call.name, status] += 1

    @hookimpl
    def on_session_end(self, ctx: HookContext) -> None:
        log.info("session %s: %s", ctx.session_id, self.summary())

    def summary(self) -> str:
        """E.g. ``write_file x3 (1 denied), read_file x2``."""
        if not self.calls:
            return "no tool calls"
        parts = []
        for name, count in self.calls.most_common():
            other = [f"{n} {status}" for (tool, status), n in sorted(self.outcomes.items())
                     if tool == name and status != "ok"]
            parts.append(f"{name} x{count}" + (f" ({', '.join(other)})" if other else ""))
        return ", ".join(parts)


#: The instance the ``agcore`` entry point publishes (``agcore_example.plugins:protected_paths``).
protected_paths = ProtectedPaths()
