"""MCP client integration: the tools of Model Context Protocol servers as agcore ``Tool``s.

Needs the ``mcp`` extra (``pip install 'agcore[mcp]'``)::

    from agcore.integrations.mcp import MCPHttpServer, MCPStdioServer, MCPToolset

    servers = [
        MCPStdioServer(name="files", command="mcp-server-filesystem", args=("/data",)),
        MCPHttpServer(name="search", url="http://localhost:8000/mcp", headers={"Authorization": "Bearer …"}),
    ]
    async with MCPToolset(servers) as toolset:
        toolset.register_into(registry)   # tools named files__read_file, search__query, ...
        ...

Tool results map to agcore content (text, images; embedded text resources as text; structured
content as JSON text when there is no text). Failures reach the model as error results: the server's
own ``isError`` text, "timed out after Ns", "server died or disconnected" (with the server's stderr
tail for subprocesses). A dead server is not restarted; reopen the toolset to reconnect.
"""

from __future__ import annotations

try:
    import mcp as _mcp  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "agcore.integrations.mcp needs the MCP SDK: install it with `pip install 'agcore[mcp]'`"
    ) from exc

from agcore.integrations.mcp._config import MCPHttpServer, MCPServerConfig, MCPStdioServer
from agcore.integrations.mcp._connection import MCPConnection
from agcore.integrations.mcp._content import convert_result, namespaced_tool_name
from agcore.integrations.mcp._errors import MCPConnectionError
from agcore.integrations.mcp._toolset import MCPToolset

__all__ = [
    "MCPConnection",
    "MCPConnectionError",
    "MCPHttpServer",
    "MCPServerConfig",
    "MCPStdioServer",
    "MCPToolset",
    "convert_result",
    "namespaced_tool_name",
]
