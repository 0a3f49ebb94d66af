"""Tool-argument JSON as models really write it."""

from __future__ import annotations

import pytest

from agcore.llm._arguments import parse_tool_arguments


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('{"a": 1,}', {"a": 1}),
        ('{"path": "a.txt" "mode": "w"}', {"path": "a.txt", "mode": "w"}),
        ("{'a': 'single quotes'}", {"a": "single quotes"}),
        ('{"text": "unterminated', {"text": "unterminated"}),
        ('```json\n{"a": 2}\n```', {"a": 2}),
        ("", {}),
        ("   ", {}),
        (None, {}),
        ({"already": "an object"}, {"already": "an object"}),
    ],
)
def test_readable_or_repairable_arguments(raw: str | None, expected: dict[str, object]) -> None:
    assert parse_tool_arguments(raw) == (expected, None)


@pytest.mark.parametrize("raw", ["not json at all", "[1, 2]", '"a string"', "42"])
def test_unreadable_arguments_give_an_error_for_the_model(raw: str) -> None:
    arguments, error = parse_tool_arguments(raw)
    assert arguments == {}
    assert error is not None
    assert "JSON object" in error
    assert raw[:10] in error


def test_long_garbage_is_shortened_in_the_error() -> None:
    _, error = parse_tool_arguments("x" * 5000)
    assert error is not None
    assert len(error) < 400
