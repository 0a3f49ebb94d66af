"""Workspace tools: read, write, edit, list, glob, grep, patch and run commands inside one directory.

```python
from agcore.tools import ToolRegistry
from agcore.tools.workspace import Workspace, workspace_tools

registry = ToolRegistry(workspace_tools("/path/to/project"))          # all nine tools
workspace = Workspace("/path/to/project", allow_network=True, confirm_writes=False)
registry = ToolRegistry(workspace.tools(include=["read_file", "grep", "list_dir"]))
```
"""

from __future__ import annotations

from agcore.tools.workspace._command_result import CommandResult
from agcore.tools.workspace._environment import (
    DEFAULT_ENV_ALLOW,
    SECRET_ENV_PATTERNS,
    scrub_environment,
)
from agcore.tools.workspace._files import SKIP_DIRS
from agcore.tools.workspace._workspace import TOOL_NAMES, Workspace, workspace_tools

__all__ = [
    "CommandResult",
    "DEFAULT_ENV_ALLOW",
    "SECRET_ENV_PATTERNS",
    "SKIP_DIRS",
    "TOOL_NAMES",
    "Workspace",
    "scrub_environment",
    "workspace_tools",
]
