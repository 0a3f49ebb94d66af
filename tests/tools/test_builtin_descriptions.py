"""Every built-in tool description (the tool's and each parameter's) uses neutral placeholders, never
a realistic example value: small local models copy such examples literally (asked to read a file,
a 1.5B model asked for the description's example path, again and again)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agcore.agent._bundle import remember_tool, retrieve_tool
from agcore.memory import InMemoryStore
from agcore.tools import Tool
from agcore.tools.workspace import TOOL_NAMES, Workspace

# A concrete file name (main.py, intro.md, config.yaml), a concrete program line, a concrete search.
_FILE_NAME = re.compile(
    r"(?<![<*\w])[A-Za-z_][\w-]*\.(?:py|ts|js|tsx|md|txt|json|toml|ya?ml|rs|go|c|h|java|sh|cfg|ini)\b"
)
_CONCRETE = re.compile(r"\b(?:pytest|python -m|npm|cargo|ls -la|TODO|FIXME|def main|src/)")
# "e.g." / "for example" followed by a quoted value with no <placeholder> in it.
_QUOTED_EXAMPLE = re.compile(r"(?:e\.g\.|for example|such as)\s*[\"']([^\"'<]*)[\"']")


def builtin_tools(root: Path) -> list[Tool]:
    store = InMemoryStore()
    return [*Workspace(root).tools(), retrieve_tool(store), remember_tool(store)]


def texts(tool: Tool) -> Iterator[tuple[str, str]]:
    definition = tool.definition()
    yield tool.name, definition.description

    def walk(schema: Any, where: str) -> Iterator[tuple[str, str]]:
        if isinstance(schema, dict):
            for key, value in schema.items():
                if key == "description" and isinstance(value, str):
                    yield where, value
                else:
                    yield from walk(value, f"{where}.{key}")
        elif isinstance(schema, list):
            for i, item in enumerate(schema):
                yield from walk(item, f"{where}[{i}]")

    yield from walk(definition.input_schema, tool.name)


def test_every_builtin_tool_is_scanned(tmp_path: Path) -> None:
    names = {t.name for t in builtin_tools(tmp_path)}
    assert names == {*TOOL_NAMES, "retrieve", "remember"}


@pytest.mark.parametrize("name", [*TOOL_NAMES, "retrieve", "remember"])
def test_descriptions_use_neutral_placeholders(tmp_path: Path, name: str) -> None:
    [tool] = [t for t in builtin_tools(tmp_path) if t.name == name]
    for where, text in texts(tool):
        assert not _FILE_NAME.search(text), f"{where}: a concrete file name in {text!r}"
        assert not _CONCRETE.search(text), f"{where}: a concrete example in {text!r}"
        quoted = _QUOTED_EXAMPLE.search(text)
        assert quoted is None, f"{where}: a realistic example {quoted.group(0)!r}"  # type: ignore[union-attr]


def test_the_scan_catches_what_it_is_for() -> None:
    assert _FILE_NAME.search('File path relative to the workspace root, e.g. "src/main.py".')
    assert _CONCRETE.search('The command line, e.g. "python -m pytest -q".')
    assert _QUOTED_EXAMPLE.search('Regular expression, e.g. "def main".')
    assert not _FILE_NAME.search('in the form "<dir>/<file>" or "**/*.<ext>"')
    assert not _QUOTED_EXAMPLE.search('in the form "<program> <arguments>"')
