"""Where an MCP server lives and how to talk to it: pydantic models, so a config file can list them.

A list of servers in a JSON/YAML/TOML file parses with ``TypeAdapter(list[MCPServerConfig])``: the
``transport`` field (``"stdio"`` or ``"http"``) says which model an entry is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MCPHttpServer", "MCPServerConfig", "MCPStdioServer"]


class _MCPServerBase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    """Prefix of this server's tools (``<name>__<tool>``) and the name error messages use."""

    call_timeout: float | None = Field(default=60.0, gt=0)
    """Seconds one tool call may take; ``None`` waits as long as the server does."""

    connect_timeout: float = Field(default=30.0, gt=0)
    """Seconds for start-up, the MCP handshake and the tool listing together."""

    protocol: Literal["auto", "legacy"] = "auto"
    """``auto`` probes for the current MCP revision and falls back to the ``initialize`` handshake;
    ``legacy`` goes straight to ``initialize``, for old servers that mishandle the probe."""


class MCPStdioServer(_MCPServerBase):
    """A server started as a subprocess, speaking MCP over its stdin/stdout.

    ``env`` is merged over a minimal inherited environment (``HOME``, ``PATH``, ``USER`` and a few more,
    the MCP SDK's safe default), not over the whole parent environment: pass what the server needs.
    The server's stderr is captured; its last lines appear in connect and crash errors, and every
    line is logged at DEBUG on the ``agcore.integrations.mcp`` logger.
    """

    transport: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    cwd: Path | None = None


class MCPHttpServer(_MCPServerBase):
    """A server reached over MCP's streamable HTTP transport at ``url`` (e.g. ``http://host:8000/mcp``).

    ``headers`` go on every request (an ``Authorization`` header, an API key).
    """

    transport: Literal["http"] = "http"
    url: str = Field(min_length=1)
    headers: dict[str, str] | None = None


MCPServerConfig = Annotated[MCPStdioServer | MCPHttpServer, Field(discriminator="transport")]
"""Either kind of server; the ``transport`` field tells them apart when parsing a config file."""
