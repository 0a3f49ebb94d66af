"""agcore's tool system: ``@tool`` functions, hand-written and client tools, and ``ToolRegistry``.

```python
from agcore.tools import ToolContext, ToolRegistry, tool

@tool(timeout=10)
async def read_file(path: str, ctx: ToolContext, start_line: int = 1) -> str:
    \"\"\"Read a text file of the workspace.

    Args:
        path: Path relative to the workspace root.
        start_line: First line to return (1-based).
    \"\"\"
    ...

registry = ToolRegistry([read_file])
result = await registry.execute(call, ToolContext(session_id="s1"))   # a ToolResultBlock, never raises
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agcore._lazy import lazy_dir, lazy_getattr
from agcore.tools._context import ToolContext, ToolProgress
from agcore.tools._errors import (
    MissingDependencyError,
    RetryableToolError,
    ToolDefinitionWarning,
    ToolDenied,
    ToolError,
    ToolNameCollisionError,
    UnknownToolError,
)
from agcore.tools._registry import ToolExecution, ToolRegistry, ToolStatus
from agcore.tools._tool import (
    VENDOR_TOOL_NAME,
    Precheck,
    RetryOn,
    Tool,
    ToolHandler,
    ToolOutput,
    Truncation,
    tool,
)
from agcore.tools._windows import call_keywords, keyword_windows

if TYPE_CHECKING:
    from agcore.tools._command_guard import CommandDenied, CommandGuard, CommandNeedsConfirmation
    from agcore.tools._path_guard import PathDenied, PathGuard
    from agcore.tools._sandbox import SandboxUnavailable
    from agcore.tools.workspace import Workspace, workspace_tools

# The guards and the workspace (shell parser, unidiff, subprocess plumbing) load on first use.
_LAZY = {
    "CommandDenied": "agcore.tools._command_guard",
    "CommandGuard": "agcore.tools._command_guard",
    "CommandNeedsConfirmation": "agcore.tools._command_guard",
    "SandboxUnavailable": "agcore.tools._sandbox",
    "PathDenied": "agcore.tools._path_guard",
    "PathGuard": "agcore.tools._path_guard",
    "Workspace": "agcore.tools.workspace",
    "workspace_tools": "agcore.tools.workspace",
}

__all__ = [
    "CommandDenied",
    "CommandGuard",
    "CommandNeedsConfirmation",
    "MissingDependencyError",
    "PathDenied",
    "PathGuard",
    "Precheck",
    "RetryOn",
    "RetryableToolError",
    "SandboxUnavailable",
    "Tool",
    "ToolContext",
    "ToolDefinitionWarning",
    "ToolDenied",
    "ToolError",
    "ToolExecution",
    "ToolHandler",
    "ToolNameCollisionError",
    "ToolOutput",
    "ToolProgress",
    "ToolRegistry",
    "ToolStatus",
    "Truncation",
    "UnknownToolError",
    "VENDOR_TOOL_NAME",
    "Workspace",
    "call_keywords",
    "keyword_windows",
    "tool",
    "workspace_tools",
]


def __getattr__(name: str) -> Any:
    return lazy_getattr(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, _LAZY)
