"""Tool names: Anthropic and OpenAI take only ``^[a-zA-Z0-9_-]{1,64}$``; any other name is a
``ToolDefinitionWarning`` at the line that made the tool (not an error: MCP servers and other
providers name tools more freely), so the mistake shows before a vendor refuses the request."""

from __future__ import annotations

import warnings

import pytest

from agcore.tools import Tool, ToolDefinitionWarning, tool


async def _handler(arguments: dict[str, object], ctx: object) -> str:
    return "ok"


@pytest.mark.parametrize("name", ["researcher.v2", "fs/read", "x" * 65, "naïve", "a:b"])
def test_a_name_vendors_refuse_warns_at_the_callers_line(name: str) -> None:
    with pytest.warns(ToolDefinitionWarning, match=r"\^\[a-zA-Z0-9_-\]\{1,64\}\$") as caught:
        made = Tool.from_handler(name, "Does a thing.", {"type": "object"}, _handler)
    assert made.name == name  # still made: the warning loses nothing
    assert caught[0].filename == __file__


@pytest.mark.parametrize("name", ["read_file", "get-weather", "A1", "x" * 64])
def test_a_name_vendors_take_does_not_warn(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ToolDefinitionWarning)
        Tool.from_handler(name, "Does a thing.", {"type": "object"}, _handler)


def test_the_decorator_warns_too() -> None:
    with pytest.warns(ToolDefinitionWarning, match="'my.tool'"):

        @tool(name="my.tool")
        def my_tool(x: int) -> int:
            """Double x."""
            return x * 2


def test_whitespace_is_still_an_error() -> None:
    with pytest.raises(ValueError, match="without whitespace"):
        Tool.from_handler("a b", "Does a thing.", {"type": "object"}, _handler)
