"""Tool-call arguments whose strings a model wrote the Python way (triple quotes, a docstring's bare
quotes inside a JSON string) are read as the model meant them, not split by json-repair into bogus
keys; arguments that still cannot be read tell the model what was wrong. The shapes are the ones
small local models wrote in the issue-26 runs (Qwen2.5-Coder-1.5B through llama.cpp)."""

from __future__ import annotations

from typing import Any

import pytest

from agcore.agent.textcalls._text_calls import parse_text_calls
from agcore.llm import parse_tool_arguments, read_lenient_object

DOCSTRING_FILE = 'def get_user(user_id):\n    """The user record for user_id."""\n    return USERS[user_id]\n'

CORPUS: list[tuple[str, str, dict[str, Any]]] = [
    (
        "bare docstring quotes inside a JSON string (the issue's shape)",
        '{"path": "users.py", "content": "def get_user(user_id):\\n    """The user record for user_id.'
        '"""\\n    return USERS[user_id]\\n"}',
        {"path": "users.py", "content": DOCSTRING_FILE},
    ),
    (
        "triple-quoted value with escaped inner quotes",
        '{"path": "a.py", "content": """def f():\n    \\"\\"\\"Doc.\\"\\"\\"\n"""}',
        {"path": "a.py", "content": 'def f():\n    """Doc."""\n'},
    ),
    (
        "triple-quoted value holding a docstring in triple quotes",
        '{"path": "users.py", "content": """def get_user(user_id):\n    """The user record for user_id."""\n'
        '    return USERS[user_id]\n"""}',
        {"path": "users.py", "content": DOCSTRING_FILE},
    ),
    (
        "single-quote triple quotes, the value first",
        "{\"content\": '''import os\n\nprint(os.getcwd())\n''', \"path\": \"main.py\"}",
        {"content": "import os\n\nprint(os.getcwd())\n", "path": "main.py"},
    ),
    (
        "escapes written inside triple quotes are Python's",
        '{"path": "r.py", "content": """PATTERN = r"\\d+"\\nprint(\'it\\\'s\')\\n"""}',
        {"path": "r.py", "content": "PATTERN = r\"\\d+\"\nprint('it's')\n"},
    ),
    (
        "a dict literal with bare quotes inside a JSON string",
        '{"path": "settings.py", "content": "CONFIG = {"debug": True, "port": 8080}\\n"}',
        {"path": "settings.py", "content": 'CONFIG = {"debug": True, "port": 8080}\n'},
    ),
    (
        "a call with bare quotes, raw line breaks and a trailing comma",
        '{"path": "log.txt", "content": "started\nsaid "hello", twice\n",}',
        {"path": "log.txt", "content": 'started\nsaid "hello", twice\n'},
    ),
    (
        "Python literals beside a triple-quoted string",
        '{"path": "t.py", "content": """x = 1\n""", "overwrite": True, "mode": None}',
        {"path": "t.py", "content": "x = 1\n", "overwrite": True, "mode": None},
    ),
]


@pytest.mark.parametrize(
    ("raw", "expected"), [(raw, want) for _, raw, want in CORPUS], ids=[c[0] for c in CORPUS]
)
def test_python_style_strings_are_read_as_meant(raw: str, expected: dict[str, Any]) -> None:
    assert parse_tool_arguments(raw) == (expected, None)


@pytest.mark.parametrize(
    ("raw", "expected"), [(raw, want) for _, raw, want in CORPUS], ids=[c[0] for c in CORPUS]
)
def test_the_same_calls_written_in_text_mode(raw: str, expected: dict[str, Any]) -> None:
    text = f'I will write the file.\n```json\n{{"tool": "write_file", "arguments": {raw}}}\n```'
    [call] = parse_text_calls(text, ["write_file"]).calls
    assert (call.name, call.arguments, call.parse_error) == ("write_file", expected, None)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"path": "a.txt" "mode": "w"}', {"path": "a.txt", "mode": "w"}),  # a missing comma stays repair's
        ('{"a": 1,}', {"a": 1}),
        ('{"text": "unterminated', {"text": "unterminated"}),
        ('{"command": "python -c \\"print(1)\\""}', {"command": 'python -c "print(1)"'}),
    ],
)
def test_what_json_repair_reads_well_is_unchanged(raw: str, expected: dict[str, Any]) -> None:
    assert parse_tool_arguments(raw) == (expected, None)


def test_only_a_complete_object_is_read_leniently() -> None:
    assert read_lenient_object('{"a": """x"""') is None
    assert read_lenient_object('["a"]') is None
    assert read_lenient_object("{a: 1}") is None
    assert read_lenient_object('{"a": """x"""} trailing words') is None
    assert read_lenient_object('{"a": """x"""}') == {"a": "x"}


def test_a_pathological_text_gives_up_instead_of_hanging() -> None:
    raw = '{"a": "' + '"' * 3000 + ', "b": 1'  # thousands of candidate string ends, never complete
    assert read_lenient_object(raw) is None


def test_a_repair_that_splits_a_string_into_keys_is_refused_with_why() -> None:
    cut_off = (  # the same docstring call, its closing brace missing: only json-repair can read it
        '{"path": "users.py", "content": "def get_user(user_id):\\n    """The user record for user_id."""'
        '\\n    return USERS[user_id]\\n"'
    )
    arguments, error = parse_tool_arguments(cut_off)
    assert arguments == {}
    assert error is not None
    assert "the text 'The user record for user_id.' came out as an argument name" in error
    assert 'write a double quote as \\"' in error
    assert "Call the tool again with one JSON object." in error


def test_unreadable_arguments_say_where_the_json_broke() -> None:
    arguments, error = parse_tool_arguments('path="a.py"')
    assert arguments == {}
    assert error is not None
    assert "not valid JSON (Expecting value at character 0, near 'path=\"a.py\"')" in error


def test_a_long_file_in_triple_quotes_is_read_whole() -> None:
    body = 'def f():\n    """Doc."""\n    return {"k": 1}\n' * 1000  # 43 KB, a thousand inner docstrings
    raw = '{"path": "big.py", "content": """' + body + '"""}'
    assert parse_tool_arguments(raw) == ({"path": "big.py", "content": body}, None)
