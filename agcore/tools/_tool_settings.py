"""What a ``Tool`` may be set to: its name (and the names the big vendors accept), timeout, retries,
output cap and truncation, checked when it is made so a mistake shows where the tool is defined."""

from __future__ import annotations

import re
import sys
import warnings

from agcore.tools._errors import ToolDefinitionWarning

__all__ = ["VENDOR_TOOL_NAME", "check_tool_settings"]

#: The tool names Anthropic and OpenAI accept; any other name is refused by them at request time.
VENDOR_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def check_tool_settings(
    name: str, timeout: float | None, max_retries: int, retry_delay: float, max_output_chars: int | None,
    truncation: str | None, *, has_handler: bool, mode: str,
) -> None:
    """``ValueError`` for a ``Tool``'s settings that cannot work, saying which and what is allowed."""
    if not name or any(c.isspace() for c in name):
        raise ValueError(f"invalid tool name {name!r}: use a non-empty name without whitespace")
    if VENDOR_TOOL_NAME.fullmatch(name) is None:
        _warn_vendor_name(name)
    if timeout is not None and timeout <= 0:
        raise ValueError(f"tool {name!r}: timeout must be positive seconds or None, not {timeout!r}")
    if max_retries < 0 or retry_delay < 0:
        raise ValueError(f"tool {name!r}: max_retries and retry_delay must not be negative")
    if max_output_chars is not None and max_output_chars <= 0:
        raise ValueError(f"tool {name!r}: max_output_chars must be positive or None")
    if has_handler == (mode == "client"):
        raise ValueError(f"tool {name!r}: a server tool needs a handler and a client tool has none")
    if truncation not in (None, "head", "keywords"):
        raise ValueError(f"tool {name!r}: truncation is 'head', 'keywords' or None, not {truncation!r}")


def _warn_vendor_name(name: str) -> None:
    """Warn at the user's line (the first frame outside ``agcore.tools``) of a name the big vendors
    refuse. Only a warning: MCP servers and other providers name tools more freely."""
    level, frame = 2, sys._getframe(1)
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith("agcore.tools"):
        frame, level = frame.f_back, level + 1
    warnings.warn(
        f"tool name {name!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$, which Anthropic and OpenAI "
        "require: they refuse the request at call time. Give the tool a name of letters, digits, "
        "'_' and '-' (at most 64 characters), e.g. with name=...",
        ToolDefinitionWarning, stacklevel=level,
    )
