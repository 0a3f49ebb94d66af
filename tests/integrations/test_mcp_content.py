"""The pure parts of the MCP integration: tool names, result conversion, server configs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from agcore.integrations.mcp import (
    MCPConnectionError,
    MCPHttpServer,
    MCPServerConfig,
    MCPStdioServer,
    MCPToolset,
    convert_result,
    namespaced_tool_name,
)
from agcore.llm.types import ImageBlock, TextBlock
from agcore.tools import ToolError

VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def result(*content: Any, structured: Any = None, is_error: bool = False) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=list(content), structured_content=structured, is_error=is_error)


# -- names ---------------------------------------------------------------------------------------


def test_a_name_that_fits_is_kept() -> None:
    assert namespaced_tool_name("github", "create_issue") == "github__create_issue"
    assert namespaced_tool_name("a-b", "c-d") == "a-b__c-d"


def test_names_that_do_not_fit_are_cleaned_with_a_hash_so_they_stay_distinct() -> None:
    dotted = namespaced_tool_name("fs", "read.file")
    underscored = namespaced_tool_name("fs", "read_file")
    assert underscored == "fs__read_file"
    assert dotted.startswith("fs__read_file_")
    assert dotted != underscored
    assert VALID.match(dotted)
    long = namespaced_tool_name("server", "x" * 100)
    assert len(long) == 64
    assert VALID.match(long)
    assert long != namespaced_tool_name("server", "x" * 101)


@settings(max_examples=50, deadline=None)
@given(server=st.text(min_size=1, max_size=80), tool=st.text(min_size=1, max_size=120))
def test_every_name_fits_the_strictest_vendor_rule_deterministically(server: str, tool: str) -> None:
    name = namespaced_tool_name(server, tool)
    assert VALID.match(name)
    assert name == namespaced_tool_name(server, tool)


@settings(max_examples=50, deadline=None)
@given(a=st.text(min_size=1, max_size=70), b=st.text(min_size=1, max_size=70))
def test_different_tools_get_different_names(a: str, b: str) -> None:
    if a != b:
        assert namespaced_tool_name("srv", a) != namespaced_tool_name("srv", b)


# -- results -------------------------------------------------------------------------------------


def test_text_only_results_become_one_string() -> None:
    out = convert_result(
        result(mcp_types.TextContent(text="a"), mcp_types.TextContent(text="b")), server="s", tool="t"
    )
    assert out == "a\nb"


def test_images_keep_their_data_and_mime_type() -> None:
    out = convert_result(
        result(
            mcp_types.TextContent(text="see"), mcp_types.ImageContent(data="AAAA", mime_type="image/jpeg")
        ),
        server="s",
        tool="t",
    )
    assert out == [TextBlock(text="see"), ImageBlock(data="AAAA", media_type="image/jpeg")]


def test_structured_content_is_used_only_when_there_is_no_text() -> None:
    alone = convert_result(result(structured={"n": 1, "name": "é"}), server="s", tool="t")
    assert alone == '{"n": 1, "name": "é"}'
    with_text = convert_result(
        result(mcp_types.TextContent(text="n=1"), structured={"n": 1}), server="s", tool="t"
    )
    assert with_text == "n=1"
    assert convert_result(result(), server="s", tool="t") == ""


def test_resources_audio_and_links_are_described_in_text() -> None:
    blob_image = mcp_types.EmbeddedResource(
        resource=mcp_types.BlobResourceContents(uri="file:///a.png", mime_type="image/png", blob="AAAA")
    )
    blob_other = mcp_types.EmbeddedResource(
        resource=mcp_types.BlobResourceContents(uri="file:///a.bin", blob="AAAAAAAA")
    )
    audio = mcp_types.AudioContent(data="AAAAAAAA", mime_type="audio/wav")
    link = mcp_types.ResourceLink(name="report", uri="https://example.com/r.pdf")
    out = convert_result(result(blob_image, blob_other, audio, link), server="s", tool="t")
    assert out == [
        ImageBlock(data="AAAA", media_type="image/png"),
        TextBlock(text="[binary resource file:///a.bin omitted: application/octet-stream, 6 bytes]"),
        TextBlock(text="[audio omitted: audio/wav, 6 bytes]"),
        TextBlock(text="[resource link: report <https://example.com/r.pdf>]"),
    ]


def test_is_error_raises_tool_error_with_the_server_text() -> None:
    with pytest.raises(ToolError, match=r"^disk full$"):
        convert_result(result(mcp_types.TextContent(text="disk full"), is_error=True), server="s", tool="t")
    with pytest.raises(ToolError, match="MCP tool 't' on server 's' reported an error without a message"):
        convert_result(result(is_error=True), server="s", tool="t")


# -- configs -------------------------------------------------------------------------------------


def test_server_configs_parse_from_a_config_file_shape() -> None:
    raw = [
        {"transport": "stdio", "name": "fs", "command": "mcp-fs", "args": ["/data"], "env": {"TOKEN": "x"}},
        {"transport": "http", "name": "web", "url": "http://localhost:8000/mcp", "headers": {"A": "b"}},
    ]
    fs, web = TypeAdapter(list[MCPServerConfig]).validate_python(raw)
    assert fs == MCPStdioServer(name="fs", command="mcp-fs", args=("/data",), env={"TOKEN": "x"})
    assert web == MCPHttpServer(name="web", url="http://localhost:8000/mcp", headers={"A": "b"})
    assert fs.call_timeout == 60.0
    assert fs.protocol == "auto"
    assert MCPStdioServer(name="x", command="y", cwd="/srv/x").cwd == Path("/srv/x")


def test_bad_configs_are_rejected() -> None:
    with pytest.raises(ValidationError):
        MCPStdioServer(name="", command="x")
    with pytest.raises(ValidationError):
        MCPStdioServer(name="x", command="y", call_timeout=0)
    with pytest.raises(ValidationError):
        MCPHttpServer(name="x", url="http://h/mcp", comand="typo")  # type: ignore[call-arg]


def test_server_names_must_be_unique_and_the_toolset_must_be_entered() -> None:
    with pytest.raises(ValueError, match=r"unique .* \['a'\]"):
        MCPToolset([MCPStdioServer(name="a", command="x"), MCPHttpServer(name="a", url="http://h/mcp")])
    toolset = MCPToolset([])
    with pytest.raises(RuntimeError, match="async with"):
        _ = toolset.tools


def test_connection_error_lists_every_failing_server() -> None:
    one = MCPConnectionError({"a": "MCP server 'a' broke."})
    assert str(one) == "MCP server 'a' broke."
    two = MCPConnectionError({"a": "MCP server 'a' broke.", "b": "MCP server 'b' broke."})
    assert str(two) == "2 MCP servers failed to connect:\n- MCP server 'a' broke.\n- MCP server 'b' broke."
