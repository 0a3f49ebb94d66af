"""MCP -> agcore: tool names the model may use, and tool results as agcore content."""

from __future__ import annotations

import base64
import binascii
import json
import re

import mcp_types

from agcore.llm import fit_identifier
from agcore.llm.types import ImageBlock, TextBlock
from agcore.tools import ToolError

__all__ = ["convert_result", "namespaced_tool_name"]

# The strictest vendor rule (Anthropic's); OpenAI and Gemini accept every name that passes it.
_INVALID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")


def namespaced_tool_name(server: str, tool: str) -> str:
    """``<server>__<tool>``, made to fit ``^[a-zA-Z0-9_-]{1,64}$``.

    A name that already fits is used as is. Any other is cleaned (bad characters become ``_``, the
    result is cut to length) and suffixed with a short hash of the original, so it is deterministic
    and two names that clean to the same text (``a.b`` and ``a_b``) still differ.
    """
    return fit_identifier(f"{server}__{tool}", max_length=64, invalid=_INVALID_CHAR)


def _blob_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def _convert_block(block: mcp_types.ContentBlock) -> TextBlock | ImageBlock:
    if isinstance(block, mcp_types.TextContent):
        return TextBlock(text=block.text)
    if isinstance(block, mcp_types.ImageContent):
        return ImageBlock(data=block.data, media_type=block.mime_type)
    if isinstance(block, mcp_types.AudioContent):
        # agcore has no audio block; say what was there rather than drop it silently.
        return TextBlock(text=f"[audio omitted: {block.mime_type}, {_blob_size(block.data)} bytes]")
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return TextBlock(text=resource.text)
        mime = resource.mime_type or "application/octet-stream"
        if mime.startswith("image/"):
            return ImageBlock(data=resource.blob, media_type=mime)
        return TextBlock(
            text=f"[binary resource {resource.uri} omitted: {mime}, {_blob_size(resource.blob)} bytes]"
        )
    # ResourceLink: a pointer the model can only read about; agcore has no resource-reading tool here.
    label = block.title or block.name
    return TextBlock(text=f"[resource link: {label} <{block.uri}>]")


def convert_result(
    result: mcp_types.CallToolResult, *, server: str, tool: str
) -> str | list[TextBlock | ImageBlock]:
    """A ``tools/call`` result as a tool output: text alone -> one string, otherwise blocks.

    ``structuredContent`` is added as JSON text when the result has no text of its own (servers that
    send both put the same data in the text). An ``isError`` result raises ``ToolError`` with the
    server's text, so the registry turns it into an error result the model sees.
    """
    blocks = [_convert_block(block) for block in result.content]
    has_text = any(isinstance(b, TextBlock) and b.text for b in blocks)
    if result.structured_content is not None and not has_text:
        blocks.append(TextBlock(text=json.dumps(result.structured_content, ensure_ascii=False)))
    if result.is_error:
        message = "\n".join(b.text for b in blocks if isinstance(b, TextBlock)).strip()
        raise ToolError(
            message or f"MCP tool '{tool}' on server '{server}' reported an error without a message"
        )
    if all(isinstance(b, TextBlock) for b in blocks):
        return "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
    return blocks
