# ruff: noqa: E501, RUF001
# (model replies as data: the long lines and the full-width punctuation are the point)
"""``CallTextFilter``: what a user sees while a text-mode reply streams. Calls written as text (and
fragments that tried to be calls) are never shown; prose, code and data JSON are shown whole; a
result the model makes up after its call is not shown; and however the reply is cut into deltas,
the user sees the same text."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agcore.agent.textcalls._text_stream import CallTextFilter

TOOLS = {"read_file", "add"}


def shown(text: str, cuts: list[int] | None = None) -> str:
    """What the filter shows for ``text`` streamed in pieces cut at ``cuts`` (default: one piece)."""
    bounds = [0, *sorted({c for c in (cuts or []) if 0 < c < len(text)}), len(text)]
    held = CallTextFilter(TOOLS)
    out = "".join(held.feed(text[a:b]) for a, b in itertools.pairwise(bounds))
    return out + held.flush()


CASES: list[tuple[str, str]] = [
    ("Plain prose with [brackets], {braces} and <b>tags</b>.",
     "Plain prose with [brackets], {braces} and <b>tags</b>."),
    ('Reading it.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>',
     "Reading it.\n"),
    ('Sure.\n```json\n{"tool": "add", "arguments": {"a": 1, "b": 2}}\n```\n', "Sure.\n\n"),
    ('[{"name": "add", "arguments": {"a": 1, "b": 2}}, {"name": "add", "arguments": {"a": 3, "b": 4}}]', ""),
    ('{"tool": "add", "arguments": {"a": 1, "b": 2}}\nTool result: 3\nSo it is 3.', "\n"),
    ('<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call><tool_response>3</tool_response>', ""),
    ("Code:\n```python\ncfg = {'debug': True}\nprint(cfg['debug'])\n```\nDone.",
     "Code:\n```python\ncfg = {'debug': True}\nprint(cfg['debug'])\n```\nDone."),
    ('The answer is {"total": 42}.', 'The answer is {"total": 42}.'),
    ('{"tool": "nonexistent", "arguments": {}}', ""),  # an attempt that cannot be read: not the answer
    ("Result: before any call, this is prose.", "Result: before any call, this is prose."),
    ('我来读文件：<tool_call>{"name": "read_file", "arguments": {"path": "说明.md"}}</tool_call>', "我来读文件："),
    ('{"tool": "add", "arguments": {"a": 1', ""),  # cut off mid-call: still a call, never shown
    ("An unclosed { brace in prose", "An unclosed { brace in prose"),
    ("A `backtick` and a lone < sign", "A `backtick` and a lone < sign"),
    ('Reading.\n<tool_response name="read_file" status="ok">\nmade up\n</tool_response>', "Reading.\n"),
    ("The tag <tool_response> is what results come in.", "The tag <tool_response> is what results come in."),
    ('<think>\nMaybe {"tool": "add"} or <tool_call> here.\n</think>\n<tool_call>{"name": "add", "arguments": '
     '{"a": 1, "b": 2}}</tool_call>', '<think>\nMaybe {"tool": "add"} or <tool_call> here.\n</think>\n'),
]


@pytest.mark.parametrize(("reply", "expected"), CASES)
def test_what_is_shown(reply: str, expected: str) -> None:
    assert shown(reply) == expected
    assert shown(reply, list(range(len(reply)))) == expected  # one character per delta


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(CASES), cuts=st.lists(st.integers(min_value=1, max_value=200), max_size=12))
def test_the_pieces_do_not_change_what_is_shown(case: tuple[str, str], cuts: list[int]) -> None:
    reply, expected = case
    assert shown(reply, cuts) == expected


def test_prose_streams_without_waiting() -> None:
    held = CallTextFilter(TOOLS)
    assert held.feed("Hello ") == "Hello "
    assert held.feed("there, how") == "there, how"
    assert held.feed(" are you {") == " are you "  # a brace: held until it is known
    assert held.feed("x}") == "{x}"


def test_a_held_call_is_dropped_once_closed_and_prose_goes_on() -> None:
    held = CallTextFilter(TOOLS)
    assert held.feed('Now {"tool": "add", "arguments": ') == "Now "
    assert held.feed('{"a": 1, "b": 2}}') == ""
    assert held.feed(" and done.") == " and done."
