"""``MCPToolset``: the tools of several MCP servers as agcore ``Tool``s, for one ``async with`` block."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc
from mcp.shared.dispatcher import ProgressFnT

from agcore.integrations.mcp._config import MCPServerConfig
from agcore.integrations.mcp._connection import MCPConnection
from agcore.integrations.mcp._content import convert_result, namespaced_tool_name
from agcore.integrations.mcp._errors import MCPConnectionError
from agcore.llm.types import ImageBlock, TextBlock
from agcore.tools import Tool, ToolContext, ToolHandler, ToolRegistry

__all__ = ["MCPToolset"]

_log = logging.getLogger("agcore.integrations.mcp")


class MCPToolset:
    """Connects to MCP servers and exposes their tools, named ``<server>__<tool>``.

    ```python
    async with MCPToolset([MCPStdioServer(name="fs", command="mcp-fs", args=("/data",))]) as toolset:
        toolset.register_into(registry)
        ...  # run the agent
    ```

    Entering starts/connects every server at once, performs the MCP handshake and lists each
    server's tools (following pagination); if any server fails, the others are closed again and
    ``MCPConnectionError`` says which failed and why (for a subprocess: its command and the tail of
    its stderr). Exiting closes every connection (subprocesses are stopped: stdin closed, then
    terminated, then killed), also when a server already died.

    Enter and exit in the same task (``async with`` does that); tools may be called from any task
    in between. A server that dies later does not disturb the agent: its tools return error results
    naming the server, and nothing reconnects it (reopen the toolset for that). Tools called after
    the toolset closed return an error result too.
    """

    def __init__(self, servers: Iterable[MCPServerConfig], *, close_timeout: float = 10.0) -> None:
        self._servers = list(servers)
        names = [s.name for s in self._servers]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(
                f"MCP server names must be unique (they prefix tool names); repeated: {duplicates}"
            )
        self._close_timeout = close_timeout
        self._connections: dict[str, MCPConnection] = {}
        self._tools: list[Tool] = []
        self._task_group: anyio.abc.TaskGroup | None = None
        self._entered = False

    @property
    def tools(self) -> list[Tool]:
        """Every server's tools, in server order then the order each server listed them."""
        self._require_entered()
        return list(self._tools)

    @property
    def connections(self) -> Mapping[str, MCPConnection]:
        """The connection to each server, by server name (``alive``, ``mcp_tools``, ``server_info``)."""
        self._require_entered()
        return dict(self._connections)

    def register_into(self, registry: ToolRegistry, *, replace: bool = False) -> list[Tool]:
        """Register every tool in ``registry`` (a name already taken raises ``ToolNameCollisionError``)."""
        return [registry.register(tool, replace=replace) for tool in self.tools]

    def _require_entered(self) -> None:
        if not self._entered:
            raise RuntimeError(
                "MCPToolset is not connected: use it as `async with MCPToolset([...]) as toolset:`"
            )

    async def __aenter__(self) -> Self:
        if self._entered or self._task_group is not None:
            raise RuntimeError("an MCPToolset can be entered once; make a new one to reconnect")
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._task_group = task_group
        try:
            connections = [MCPConnection(server) for server in self._servers]
            self._connections = {c.name: c for c in connections}
            for connection in connections:
                task_group.start_soon(connection.run, name=f"MCP server {connection.name!r}")
            for connection in connections:
                await connection.wait_ready()
            errors = {c.name: c.connect_error for c in connections if c.connect_error is not None}
            if errors:
                raise MCPConnectionError(errors)
            self._tools = self._build_tools(connections)
        except BaseException:
            await self._shut_down()
            raise
        self._entered = True
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._shut_down()

    async def _shut_down(self) -> None:
        task_group = self._task_group
        if task_group is None:
            return
        self._task_group = None
        connections = list(self._connections.values())
        for connection in connections:
            if connection.ready:
                connection.request_close()
            else:
                connection.cancel()  # still starting: no handshake worth finishing
        try:
            # Graceful first (an HTTP session gets its DELETE), shielded so that a close forced by
            # cancellation (Ctrl-C, an outer timeout) still lets servers stop; bounded so it cannot
            # hang. Whatever outlasts the grace period is cancelled below; the SDK's subprocess
            # shutdown is itself shielded and bounded, so even that stops the process.
            with anyio.move_on_after(self._close_timeout, shield=True):
                for connection in connections:
                    await connection.wait_stopped()
        finally:
            task_group.cancel_scope.cancel()
            # The body's exception (if any) is not handed to the task group: it would come back
            # wrapped in an ExceptionGroup. Connection tasks never raise, so nothing is lost.
            await task_group.__aexit__(None, None, None)

    def _build_tools(self, connections: list[MCPConnection]) -> list[Tool]:
        tools: list[Tool] = []
        taken: set[str] = set()
        for connection in connections:
            for mcp_tool in connection.mcp_tools:
                name = namespaced_tool_name(connection.name, mcp_tool.name)
                if name in taken:
                    # A server listing a tool twice, or `a` + `b__c` meeting `a__b` + `c`.
                    _log.warning(
                        "MCP tool %r of server %r skipped: its name %r is taken by another MCP tool",
                        mcp_tool.name,
                        connection.name,
                        name,
                    )
                    continue
                taken.add(name)
                tools.append(
                    Tool.from_handler(
                        name=name,
                        description=mcp_tool.description
                        or mcp_tool.title
                        or f"Tool '{mcp_tool.name}' of MCP server '{connection.name}'.",
                        input_schema=dict(mcp_tool.input_schema),
                        handler=_handler(connection, mcp_tool.name),
                        # the server's own word (MCP's readOnlyHint): offered to read-only planning
                        read_only=bool(mcp_tool.annotations and mcp_tool.annotations.read_only_hint),
                    )
                )
        return tools


def _handler(connection: MCPConnection, tool: str) -> ToolHandler:
    async def call(arguments: dict[str, Any], ctx: ToolContext) -> str | list[TextBlock | ImageBlock]:
        async def forward(progress: float, total: float | None, message: str | None) -> None:
            fraction = progress / total if total else None
            default = f"{progress:g}/{total:g}" if total else f"{progress:g}"
            await ctx.report_progress(message or default, fraction=fraction)

        # Asking for progress only when someone listens spares the server the notifications.
        on_progress: ProgressFnT | None = forward if ctx.progress is not None else None
        result = await connection.call_tool(tool, arguments, progress=on_progress)
        return convert_result(result, server=connection.name, tool=tool)

    return call
