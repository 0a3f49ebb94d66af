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

from agcore.tools._command_guard import CommandDenied, CommandGuard
from agcore.tools._context import ToolContext, ToolProgress
from agcore.tools._errors import (
    MissingDependencyError,
    RetryableToolError,
    ToolDenied,
    ToolError,
    ToolNameCollisionError,
    UnknownToolError,
)
from agcore.tools._path_guard import PathDenied, PathGuard
from agcore.tools._registry import ToolExecution, ToolRegistry, ToolStatus
from agcore.tools._tool import Tool, ToolHandler, ToolOutput, tool
from agcore.tools.workspace import Workspace, workspace_tools

__all__ = [
    "CommandDenied",
    "CommandGuard",
    "MissingDependencyError",
    "PathDenied",
    "PathGuard",
    "RetryableToolError",
    "Tool",
    "ToolContext",
    "ToolDenied",
    "ToolError",
    "ToolExecution",
    "ToolHandler",
    "ToolNameCollisionError",
    "ToolOutput",
    "ToolProgress",
    "ToolRegistry",
    "ToolStatus",
    "UnknownToolError",
    "Workspace",
    "tool",
    "workspace_tools",
]
