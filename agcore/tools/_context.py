"""What a running tool may know about its call: ids, the runtime's dependencies, a progress channel.

A tool asks for it by declaring a parameter annotated ``ToolContext`` (any name, any position); the
parameter is injected by the registry and never shown to the model.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from agcore.llm.types import ToolUseBlock
from agcore.tools._errors import MissingDependencyError

__all__ = ["ToolContext", "ToolProgress"]

_log = logging.getLogger("agcore.tools")


class ToolProgress(BaseModel):
    """One progress report from a running tool; ``fraction`` is in [0, 1] when the tool knows it."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    tool_call_id: str = ""
    tool_name: str = ""
    message: str = ""
    fraction: float | None = None


ProgressCallback = Callable[[ToolProgress], Awaitable[None] | None]


@dataclass(slots=True)
class ToolContext:
    """Per-call context handed to tools that ask for it.

    ``dependencies`` holds the runtime's parts by name (a memory store, a workspace, an HTTP client);
    ``metadata`` is free-form and shared with the context this one was derived from (``for_call``
    copies the reference, not the dict), so treat it as read-mostly inside tools.

    Sync tools run in a worker thread; to report progress from there, use
    ``anyio.from_thread.run(ctx.report_progress, "message")``.
    """

    session_id: str = ""
    tool_call_id: str = ""
    tool_name: str = ""
    dependencies: Mapping[str, Any] = field(default_factory=dict)
    progress: ProgressCallback | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def get(self, name: str, default: Any = None) -> Any:
        """The dependency called ``name``, or ``default`` when the runtime has none."""
        return self.dependencies.get(name, default)

    def require(self, name: str) -> Any:
        """The dependency called ``name``; raises ``MissingDependencyError`` (a ToolError) if absent."""
        try:
            return self.dependencies[name]
        except KeyError:
            available = ", ".join(sorted(self.dependencies)) or "none"
            tool = f"Tool '{self.tool_name}'" if self.tool_name else "This tool"
            raise MissingDependencyError(
                f"{tool} needs the dependency {name!r}, which this runtime does not provide "
                f"(available: {available}). Add it to the runtime's dependencies.",
                tool_name=self.tool_name or None,
            ) from None

    async def report_progress(self, message: str, *, fraction: float | None = None) -> None:
        """Tell whoever runs the tool how far it got. Never fails the tool: a broken progress
        callback is logged and ignored, since progress is an observation, not part of the result."""
        if self.progress is None:
            return
        if fraction is not None:
            fraction = min(1.0, max(0.0, float(fraction)))
        update = ToolProgress(
            tool_call_id=self.tool_call_id, tool_name=self.tool_name, message=message, fraction=fraction
        )
        try:
            outcome = self.progress(update)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:
            _log.warning("progress callback failed for tool %r; ignored", self.tool_name, exc_info=True)

    def for_call(self, call: ToolUseBlock) -> ToolContext:
        """A copy of this context for one tool call (``tool_call_id`` and ``tool_name`` set)."""
        # Positional construction: this runs once per tool call, and dataclasses.replace is slow.
        return ToolContext(
            self.session_id, call.id, call.name, self.dependencies, self.progress, self.metadata
        )
