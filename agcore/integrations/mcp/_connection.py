"""One live MCP server connection, owned by its own task.

Why a task of its own: the SDK's transports are async context managers with task groups inside, and
a failure in one of those tasks (the HTTP transport lets a dropped connection escape as an exception)
cancels whatever task entered them. Entered in the agent's task, a dying server would cancel the
agent. Entered here, the failure ends this task only: it is recorded, in-flight calls get the SDK's
"connection closed", and later calls get a ``ToolError`` naming the server.

After a server dies its tools keep failing with that error; there is no reconnect (open a new
toolset to get the server back).
"""

from __future__ import annotations

import logging
import math
import shlex
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
import mcp_types
from mcp import Client
from mcp.client import Transport
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

import agcore
from agcore.integrations.mcp._config import MCPHttpServer, MCPServerConfig, MCPStdioServer
from agcore.integrations.mcp._stderr import StderrTail, capture_stderr
from agcore.tools import ToolError

__all__ = ["MCPConnection"]

_log = logging.getLogger("agcore.integrations.mcp")

_CLIENT_INFO = mcp_types.Implementation(name="agcore", version=agcore.__version__)
_MAX_LIST_PAGES = 100
# How long a call that saw the connection drop waits for the owning task to record why.
_DEATH_REPORT_WAIT = 0.25


def _unwrap(exc: BaseException) -> BaseException:
    """The one error inside nested single-member exception groups (task groups wrap what they pass)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    """``Type: message`` of the innermost real errors, looking through exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(dict.fromkeys(_describe(inner) for inner in exc.exceptions))
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class MCPConnection:
    """A connection to one MCP server: its tools as the server listed them, and calls to them.

    Made by ``MCPToolset``; ``run`` is the owning task. Read ``alive``, ``mcp_tools``,
    ``server_info`` and ``protocol_version`` (the negotiated MCP revision) from anywhere;
    ``call_tool`` raises ``ToolError`` for every failure a model should hear about.
    """

    def __init__(self, server: MCPServerConfig) -> None:
        self.server = server
        self.mcp_tools: list[mcp_types.Tool] = []
        self.server_info: mcp_types.Implementation | None = None
        self.protocol_version: str | None = None
        self.connect_error: str | None = None
        self._client: Client | None = None
        self._stderr: StderrTail | None = None
        self._failure: str | None = None
        self._ready = anyio.Event()
        self._close_requested = anyio.Event()
        self._stopped = anyio.Event()
        self._scope: anyio.CancelScope | None = None
        self._cancelled = False

    @property
    def name(self) -> str:
        """The server's name (from its ``MCPServerConfig``), used in tool names and errors."""
        return self.server.name

    @property
    def alive(self) -> bool:
        """Connected, not closed, and not known to have died."""
        return self._client is not None and self._failure is None

    # -- the owning task -------------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, list the tools, then hold the connection open until ``request_close``.

        Never raises (but for cancellation): failures land in ``connect_error`` or the death record.
        """
        connected = False
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.server.connect_timeout) as scope:
                self._scope = scope
                if self._cancelled:
                    scope.cancel()
                async with AsyncExitStack() as stack:
                    client = Client(
                        await self._open_transport(stack),
                        mode=self.server.protocol,
                        cache=None,
                        client_info=_CLIENT_INFO,
                    )
                    await stack.enter_async_context(client)
                    self.mcp_tools = await self._list_tools(client)
                    self.server_info = client.server_info
                    self.protocol_version = client.protocol_version
                    connected = True
                    scope.deadline = math.inf
                    self._client = client
                    self._ready.set()
                    await self._close_requested.wait()
            if not connected and scope.cancelled_caught and not self._close_requested.is_set():
                self.connect_error = self._startup_error(
                    f"did not finish starting (MCP handshake and tool listing) within "
                    f"{self.server.connect_timeout:g}s"
                )
        except Exception as exc:
            if not connected:
                self.connect_error = self._startup_error(self._explain_startup_failure(exc))
            elif not self._close_requested.is_set():
                self._failure = _describe(exc)
                _log.warning("MCP server %r disconnected: %s", self.name, self._failure)
            else:
                _log.debug("MCP server %r: error while closing: %s", self.name, _describe(exc))
        finally:
            self._client = None
            if not connected and self.connect_error is None and not self._close_requested.is_set():
                self.connect_error = self._startup_error("the connection ended during start-up")
            self._ready.set()
            self._stopped.set()

    async def _open_transport(self, stack: AsyncExitStack) -> Transport:
        server = self.server
        if isinstance(server, MCPStdioServer):
            self._stderr = await stack.enter_async_context(capture_stderr(server.name))
            params = StdioServerParameters(
                command=server.command, args=list(server.args), env=server.env, cwd=server.cwd
            )
            return stdio_client(params, errlog=self._stderr.file)
        assert isinstance(server, MCPHttpServer)
        # The SSE read timeout is long on purpose: a stream may idle while a tool works; calls are
        # bounded by call_timeout instead.
        http = httpx2.AsyncClient(headers=server.headers, timeout=httpx2.Timeout(30.0, read=300.0))
        await stack.enter_async_context(http)
        return streamable_http_client(server.url, http_client=http)

    async def _list_tools(self, client: Client) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_LIST_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None or cursor in seen:  # a repeated cursor would loop forever
                break
            seen.add(cursor)
        else:
            _log.warning(
                "MCP server %r: stopped listing tools after %d pages; the rest are not available",
                self.name,
                _MAX_LIST_PAGES,
            )
        return tools

    def _target(self) -> str:
        server = self.server
        if isinstance(server, MCPStdioServer):
            return f"command: {shlex.join([server.command, *server.args])}"
        assert isinstance(server, MCPHttpServer)
        return f"url: {server.url}"

    def _explain_startup_failure(self, error: Exception) -> str:
        exc = _unwrap(error)
        if isinstance(exc, FileNotFoundError | PermissionError) and isinstance(self.server, MCPStdioServer):
            return (
                f"could not start its command ({_describe(exc)}); check that `command` exists, is "
                f"executable and is on PATH, and that `cwd` exists"
            )
        if isinstance(exc, MCPError) and exc.code == mcp_types.CONNECTION_CLOSED:
            return "the server closed the connection during start-up (did the process exit?)"
        return f"failed during start-up: {_describe(exc)}"

    def _startup_error(self, what: str) -> str:
        message = f"MCP server '{self.name}' ({self._target()}) {what}."
        tail = self._stderr.text() if self._stderr is not None else ""
        if tail:
            message += f"\nIts stderr ended with:\n{tail}"
        return message

    # -- used by the toolset -------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Start-up is over, one way or the other (connected, or ``connect_error`` is set)."""
        return self._ready.is_set()

    async def wait_ready(self) -> None:
        """Wait until start-up is over: connected, or failed with ``connect_error`` set."""
        await self._ready.wait()

    def request_close(self) -> None:
        """Ask the owning task to close the connection gracefully (returns at once; see
        ``wait_stopped``)."""
        self._close_requested.set()

    async def wait_stopped(self) -> None:
        """Wait until the connection is closed and the server stopped."""
        await self._stopped.wait()

    def cancel(self) -> None:
        """Stop at once: abandon start-up, or cut the connection without waiting for it to close."""
        self._cancelled = True
        self._close_requested.set()
        if self._scope is not None:
            self._scope.cancel()

    # -- calls -------------------------------------------------------------------------------------

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], *, progress: ProgressFnT | None = None
    ) -> mcp_types.CallToolResult:
        """Call the server's tool ``tool`` with ``arguments`` (``progress`` receives its progress
        notifications). Raises ``ToolError`` saying what happened for every failure: a dead or closed
        server, a timeout (``call_timeout``), an MCP error, or an unusable result."""
        client = self._client
        if client is None or self._failure is not None:
            raise ToolError(self._unavailable(tool))
        timeout = self.server.call_timeout
        try:
            return await client.call_tool(
                tool, arguments, read_timeout_seconds=timeout, progress_callback=progress
            )
        except MCPError as exc:
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                raise ToolError(
                    f"MCP tool '{tool}' on server '{self.name}' timed out after {timeout:g}s"
                ) from None
            if exc.code == mcp_types.CONNECTION_CLOSED:
                raise ToolError(await self._died_during(tool)) from None
            raise ToolError(
                f"MCP server '{self.name}' rejected the call to '{tool}': {exc.message} "
                f"(MCP error {exc.code})"
            ) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise ToolError(await self._died_during(tool)) from None
        except (RuntimeError, ValidationError) as exc:
            if self._client is None:  # closed under the call (the SDK raises RuntimeError then)
                raise ToolError(self._unavailable(tool)) from None
            # The SDK's checks of the result: structured content against the tool's output schema,
            # a result shape agcore cannot act on (input requests).
            raise ToolError(
                f"MCP tool '{tool}' on server '{self.name}' returned an unusable result: {_describe(exc)}"
            ) from None

    async def _died_during(self, tool: str) -> str:
        # Closing the toolset also closes connections; that is not the server's fault.
        if self._close_requested.is_set():
            return self._unavailable(tool)
        with anyio.move_on_after(_DEATH_REPORT_WAIT):
            await self._stopped.wait()
        if self._failure is None:
            self._failure = "the connection closed unexpectedly"
        message = (
            f"MCP server '{self.name}' died or disconnected, so the call to '{tool}' failed "
            f"({self._failure})."
        )
        tail = self._stderr.text() if self._stderr is not None else ""
        if tail:
            message += f"\nIts stderr ended with:\n{tail}"
        return message + f"\nThe tools of '{self.name}' stay unavailable until the MCP toolset is reopened."

    def _unavailable(self, tool: str) -> str:
        if self._failure is not None:
            return (
                f"MCP server '{self.name}' is no longer connected ({self._failure}), so '{tool}' cannot "
                f"be called; its tools stay unavailable until the MCP toolset is reopened."
            )
        return f"MCP tool '{tool}' cannot be called: the MCP toolset holding server '{self.name}' is closed."
