"""A text-mode call that names the protocol example's placeholder (a model copied ``TOOL_NAME``) is
not run, and the model is told it copied the placeholder and which names are real."""

from __future__ import annotations

import pytest

from agcore.agent.textcalls._text_calls import parse_text_calls

TOOLS = ["read_file", "write_file"]


@pytest.mark.parametrize("name", ["TOOL_NAME", "tool_name", "<tool name>", "<one of the tools listed below>"])
def test_a_copied_placeholder_is_named_as_one(name: str) -> None:
    found = parse_text_calls(
        f'<tool_call>{{"name": "{name}", "arguments": {{"ARGUMENT_NAME": "x"}}}}</tool_call>', TOOLS
    )
    assert found.calls == []
    [problem] = found.problems
    assert f"'{name}' is the example's placeholder, not a tool" in problem
    assert "(read_file, write_file)" in problem


def test_a_misspelt_tool_is_still_reported_as_no_such_tool() -> None:
    [problem] = parse_text_calls(
        '<tool_call>{"name": "read_fil", "arguments": {}}</tool_call>', TOOLS
    ).problems
    assert "there is no tool named 'read_fil' (the tools are: read_file, write_file)" in problem


def test_a_real_tool_with_a_placeholder_like_name_runs() -> None:
    [call] = parse_text_calls(
        '<tool_call>{"name": "tool_name", "arguments": {}}</tool_call>', ["tool_name"]
    ).calls
    assert call.name == "tool_name"
