"""Errors raised by the MCP integration itself (tool-call failures are ``ToolError``s instead)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["MCPConnectionError"]


class MCPConnectionError(RuntimeError):
    """One or more MCP servers could not be connected when the toolset was entered.

    ``errors`` maps each failing server's name to what went wrong; the servers that did connect have
    already been closed again when this is raised.
    """

    def __init__(self, errors: Mapping[str, str]) -> None:
        self.errors = dict(errors)
        if len(self.errors) == 1:
            message = next(iter(self.errors.values()))
        else:
            message = f"{len(self.errors)} MCP servers failed to connect:\n" + "\n".join(
                f"- {text}" for text in self.errors.values()
            )
        super().__init__(message)
