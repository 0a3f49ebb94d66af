# ruff: noqa: E501, RUF001
# (a corpus of model replies: the long lines and the full-width punctuation are the data)
"""Reading calls written as text: a corpus of replies shaped like small local models' (Qwen2.5-Coder,
Llama 3.x, Mistral, DeepSeek distills at 1-8B), each with the calls that must be found, in order,
and what must stay text. The rules under test: every call is found; two calls are never merged into
one; nothing that is not a call to an offered tool is run; what tried to be a call and could not be
read is reported; a result the model made up after its call is cut off."""

from __future__ import annotations

from typing import Any

import pytest

from agcore.agent.textcalls._text_calls import find_invented_result, parse_text_calls
from agcore.llm._arguments import CUT_AT_MAX_TOKENS

TOOLS = {"read_file", "write_file", "list_files", "run_command", "add", "search"}

Call = tuple[str, dict[str, Any]]

READ_A: Call = ("read_file", {"path": "src/app.py"})
READ_B: Call = ("read_file", {"path": "tests/test_app.py"})
LIST: Call = ("list_files", {"path": "."})
ADD: Call = ("add", {"a": 2, "b": 3})
RUN: Call = ("run_command", {"command": "pytest -q"})

# (id, reply, calls in order, problems reported, text that must remain in the prose)
CORPUS: list[tuple[str, str, list[Call], int, list[str]]] = [
    # --- one call, the usual shapes
    ("bare", '{"tool": "read_file", "arguments": {"path": "src/app.py"}}', [READ_A], 0, []),
    ("bare-name-key", '{"name": "read_file", "arguments": {"path": "src/app.py"}}', [READ_A], 0, []),
    ("llama-parameters", '{"name": "read_file", "parameters": {"path": "src/app.py"}}', [READ_A], 0, []),
    ("whitespace-around", '\n\n  {"tool": "add", "arguments": {"a": 2, "b": 3}}  \n', [ADD], 0, []),
    ("fenced-json", 'I will read it.\n```json\n{"tool": "read_file", "arguments": {"path": "src/app.py"}}\n```',
     [READ_A], 0, ["I will read it."]),
    ("fenced-no-lang", '```\n{"tool": "add", "arguments": {"a": 2, "b": 3}}\n```', [ADD], 0, []),
    ("fenced-python-lang", '```python\n{"tool": "add", "arguments": {"a": 2, "b": 3}}\n```', [ADD], 0, []),
    ("inline-fence", '```{"tool": "add", "arguments": {"a": 2, "b": 3}}```', [ADD], 0, []),
    ("prose-wrapped", 'Sure! To answer I need the file. {"tool": "read_file", "arguments": {"path": "src/app.py"}} '
     "Then I will explain it.", [READ_A], 0, ["Sure! To answer I need the file.", "Then I will explain it."]),
    ("args-key", '{"tool": "add", "args": {"a": 2, "b": 3}}', [ADD], 0, []),
    ("args-beside-name", '{"tool": "read_file", "path": "src/app.py"}', [READ_A], 0, []),
    ("double-encoded", '{"name": "add", "arguments": "{\\"a\\": 2, \\"b\\": 3}"}', [ADD], 0, []),
    ("openai-shape", '{"type": "function", "function": {"name": "add", "arguments": "{\\"a\\": 2, \\"b\\": 3}"}}',
     [ADD], 0, []),
    ("react-action", '{"action": "run_command", "action_input": {"command": "pytest -q"}}', [RUN], 0, []),
    ("no-arguments", '{"tool": "list_files", "arguments": {"path": "."}}', [LIST], 0, []),
    ("empty-args", '{"name": "list_files"}', [("list_files", {})], 0, []),
    ("hermes-tag", '<tool_call>\n{"name": "read_file", "arguments": {"path": "src/app.py"}}\n</tool_call>',
     [READ_A], 0, []),
    ("hermes-tag-unclosed", '<tool_call>\n{"name": "read_file", "arguments": {"path": "src/app.py"}}',
     [READ_A], 0, []),
    ("qwen3-coder-xml", "<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/app.py\n</parameter>\n"
     "</function>\n</tool_call>", [READ_A], 0, []),
    # Qwen3-Coder's values are text (the tool's validation reads "2" as a number); lists and objects are JSON.
    ("qwen3-coder-xml-values", "<tool_call>\n<function=add>\n<parameter=a>\n2\n</parameter>\n<parameter=b>\n3\n"
     "</parameter>\n</function>\n</tool_call>", [("add", {"a": "2", "b": "3"})], 0, []),
    ("qwen3-coder-xml-object", "<tool_call>\n<function=write_file>\n<parameter=path>\n007.json\n</parameter>\n"
     '<parameter=content>\n{"k": [1, 2]}\n</parameter>\n</function>\n</tool_call>',
     [("write_file", {"path": "007.json", "content": {"k": [1, 2]}})], 0, []),
    ("llama-python-tag", '<|python_tag|>{"name": "add", "parameters": {"a": 2, "b": 3}}<|eom_id|>', [ADD], 0, []),
    ("mistral-tool-calls", '[TOOL_CALLS][{"name": "add", "arguments": {"a": 2, "b": 3}}]', [ADD], 0, []),
    ("wrapper-tool-calls", '{"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}', [ADD], 0, []),
    ("tag-with-fence-inside", '<tool_call>\n```json\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n```\n</tool_call>',
     [ADD], 0, []),
    ("fence-with-tag-inside", '```xml\n<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>\n```',
     [ADD], 0, []),
    # --- several calls: all found, in order, never merged
    ("two-in-one-fence", '```json\n{"tool": "read_file", "arguments": {"path": "src/app.py"}}\n'
     '{"tool": "read_file", "arguments": {"path": "tests/test_app.py"}}\n```', [READ_A, READ_B], 0, []),
    ("two-in-one-fence-comma", '```json\n{"tool": "read_file", "arguments": {"path": "src/app.py"}},\n'
     '{"tool": "read_file", "arguments": {"path": "tests/test_app.py"}}\n```', [READ_A, READ_B], 0, []),
    ("two-fences", 'First:\n```json\n{"tool": "list_files", "arguments": {"path": "."}}\n```\nAnd:\n```json\n'
     '{"tool": "read_file", "arguments": {"path": "src/app.py"}}\n```', [LIST, READ_A], 0, ["First:", "And:"]),
    ("array", '[{"name": "read_file", "arguments": {"path": "src/app.py"}}, '
     '{"name": "read_file", "arguments": {"path": "tests/test_app.py"}}]', [READ_A, READ_B], 0, []),
    ("array-in-fence", '```json\n[\n  {"tool": "list_files", "arguments": {"path": "."}},\n'
     '  {"tool": "run_command", "arguments": {"command": "pytest -q"}}\n]\n```', [LIST, RUN], 0, []),
    ("objects-between-prose", 'Let me look at the tree {"tool": "list_files", "arguments": {"path": "."}} and '
     'then run the tests {"tool": "run_command", "arguments": {"command": "pytest -q"}} now.',
     [LIST, RUN], 0, ["Let me look at the tree", "and then run the tests", "now."]),
    ("back-to-back", '{"tool": "add", "arguments": {"a": 2, "b": 3}}{"tool": "add", "arguments": {"a": 2, "b": 3}}',
     [ADD, ADD], 0, []),
    ("two-broken-in-one-fence", '```json\n{"tool": "add", "arguments": {"a": 2, "b": 3,}}\n'
     "{'tool': 'read_file', 'arguments': {'path': 'src/app.py'}}\n```", [ADD, READ_A], 0, []),
    ("two-tags", '<tool_call>\n{"name": "list_files", "arguments": {"path": "."}}\n</tool_call>\n<tool_call>\n'
     '{"name": "read_file", "arguments": {"path": "src/app.py"}}\n</tool_call>', [LIST, READ_A], 0, []),
    ("tag-and-bare", '<tool_call>{"name": "list_files", "arguments": {"path": "."}}</tool_call> then '
     '{"tool": "add", "arguments": {"a": 2, "b": 3}}', [LIST, ADD], 0, ["then"]),
    ("three-numbered", '1. {"tool": "list_files", "arguments": {"path": "."}}\n2. {"tool": "read_file", "arguments": '
     '{"path": "src/app.py"}}\n3. {"tool": "run_command", "arguments": {"command": "pytest -q"}}',
     [LIST, READ_A, RUN], 0, []),
    # --- broken JSON: repaired per fragment
    ("trailing-comma", '{"tool": "add", "arguments": {"a": 2, "b": 3,},}', [ADD], 0, []),
    ("single-quotes", "{'tool': 'read_file', 'arguments': {'path': 'src/app.py'}}", [READ_A], 0, []),
    ("missing-last-brace", '{"tool": "read_file", "arguments": {"path": "src/app.py"}', [READ_A], 0, []),
    ("braces-in-strings", '{"tool": "write_file", "arguments": {"path": "a.py", "content": "d = {\\"k\\": 1}\\n}"}}',
     [("write_file", {"path": "a.py", "content": 'd = {"k": 1}\n}'})], 0, []),
    ("code-in-arguments", '{"tool": "write_file", "arguments": {"path": "m.py", "content": '
     '"def f(x):\\n    return {\'a\': x}\\n"}}',
     [("write_file", {"path": "m.py", "content": "def f(x):\n    return {'a': x}\n"})], 0, []),
    # --- Chinese text
    ("chinese-prose", '我先看看这个文件。\n```json\n{"tool": "read_file", "arguments": {"path": "src/app.py"}}\n```',
     [READ_A], 0, ["我先看看这个文件。"]),
    ("chinese-values", '好的，{"tool": "write_file", "arguments": {"path": "说明.md", "content": "你好，世界"}}',
     [("write_file", {"path": "说明.md", "content": "你好，世界"})], 0, ["好的，"]),
    ("chinese-two-calls", '首先列出文件：{"tool": "list_files", "arguments": {"path": "."}}\n然后运行测试：'
     '{"tool": "run_command", "arguments": {"command": "pytest -q"}}', [LIST, RUN], 0, ["首先列出文件：", "然后运行测试："]),
    # --- reasoning (DeepSeek-R1 distills, Qwen3 on llama.cpp without a reasoning parser): thought, not done
    ("think-then-call", '<think>\nThe user wants the file. I will call {"tool": "read_file", "arguments": {"path": "x.py"}}? '
     'No, src/app.py.\n</think>\n<tool_call>\n{"name": "read_file", "arguments": {"path": "src/app.py"}}\n</tool_call>',
     [READ_A], 0, ["<think>", "No, src/app.py."]),
    ("think-unclosed", '<think>\nMaybe <tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call> later',
     [], 0, ["Maybe"]),
    # --- realistic whole replies of small models
    ("qwen-explain-then-call", "To understand why the test fails, I need to look at the implementation first.\n\n"
     '```json\n{\n  "name": "read_file",\n  "arguments": {\n    "path": "src/app.py"\n  }\n}\n```\n\n'
     "Once I have the file, I will compare it with the test.", [READ_A], 0,
     ["To understand why the test fails", "Once I have the file"]),
    ("call-then-plan", '{"tool": "run_command", "arguments": {"command": "pytest -q"}}\n\nAfter the tests run I will '
     "fix whatever fails, probably in `app.py` where `handlers = {}` is built.", [RUN], 0, ["handlers = {}"]),
    ("write-file-with-code", 'I will add the function.\n{"tool": "write_file", "arguments": {"path": "src/util.py", '
     '"content": "def merge(a: dict, b: dict) -> dict:\\n    return {**a, **b}\\n"}}',
     [("write_file", {"path": "src/util.py", "content": "def merge(a: dict, b: dict) -> dict:\n    return {**a, **b}\n"})],
     0, ["I will add the function."]),
    ("answer-with-json-example", "Here is how the API answers:\n```json\n{\n  \"status\": \"ok\",\n  \"items\": "
     '[{"id": 1, "name": "first"}]\n}\n```\nThe `items` list holds the results.', [], 0, ['"status": "ok"']),
    ("answer-with-tool-schema-talk", "The `read_file` tool takes an object such as {path: string}; no call is needed.",
     [], 0, ["{path: string}"]),
    ("numbered-plan-no-calls", "1. Read the file.\n2. Find the bug in `parse({})`.\n3. Write the fix.", [], 0,
     ["parse({})"]),
    ("stray-brace-before-calls", 'In Python a set starts with { too. {"tool": "add", "arguments": {"a": 2, "b": 3}} and '
     '{"tool": "list_files", "arguments": {"path": "."}}', [ADD, LIST], 0, ["a set starts with { too."]),
    ("cut-call-with-nested-braces", '{"tool": "write_file", "arguments": {"path": "a.py", "content": "x = {1: {2}}"',
     [("write_file", {"path": "a.py", "content": "x = {1: {2}}"})], 0, []),
    ("truncated-second-call", '{"tool": "list_files", "arguments": {"path": "."}}\n{"tool": "read_file", "argum',
     [LIST], 1, []),
    ("chinese-explain-fenced-two", "好的，我需要先查看目录结构，然后阅读源文件。\n```json\n"
     '{"name": "list_files", "arguments": {"path": "."}}\n```\n```json\n'
     '{"name": "read_file", "arguments": {"path": "src/app.py"}}\n```', [LIST, READ_A], 0, ["好的，我需要先查看目录结构"]),
    ("chinese-answer-with-dict", "这个函数返回一个字典，例如 {\"键\": \"值\"}，不需要调用工具。", [], 0, ['{"键": "值"}']),
    ("search-tool", 'Searching: {"tool": "search", "arguments": {"query": "def parse_config"}}',
     [("search", {"query": "def parse_config"})], 0, ["Searching:"]),
    # --- JSON that is data, code with braces: text, no call, nothing reported
    ("plain-answer", "The function returns the sum of its arguments.", [], 0, ["returns the sum"]),
    ("data-json", 'The config is {"debug": true, "port": 8080}.', [], 0, ['{"debug": true, "port": 8080}']),
    ("data-with-name", 'Example user: {"name": "Alice", "age": 30}', [], 0, ['"Alice"']),
    ("data-array", 'Results: [{"id": 1, "ok": true}, {"id": 2, "ok": false}]', [], 0, ['"ok": false']),
    ("python-code", '```python\ndef load(p):\n    cfg = {"path": p, "mode": "r"}\n    return cfg\n```', [], 0,
     ['cfg = {"path": p']),
    ("js-code", "```js\nfunction f(x) { if (x) { return {a: 1}; } }\n```", [], 0, ["function f(x)"]),
    ("format-braces", "Use f'{name}' or '{}'.format(name) in Python.", [], 0, ["f'{name}'"]),
    ("latex", r"The set is \{x \mid x > 0\} and {a, b}.", [], 0, ["{a, b}"]),
    ("toml-array", 'Add `deps = ["httpx", "anyio"]` to pyproject.', [], 0, ['["httpx", "anyio"]']),
    ("markdown-link", "See [the docs](https://example.org/{page}) for more.", [], 0, ["[the docs]"]),
    ("data-mentions-tool-word", 'The hammer costs {"item": "tool", "price": 3}.', [], 0, ['"price": 3']),
    ("data-tool-unknown-no-args", 'Inventory: {"tool": "hammer"}', [], 1, ['"hammer"']),
    # --- attempts that cannot be read: stay text, reported
    ("unknown-tool", '{"tool": "serach", "arguments": {"query": "x"}}', [], 1, ['"serach"']),
    ("unknown-in-tag", '<tool_call>{"name": "browse", "arguments": {"url": "x"}}</tool_call>', [], 1, ["browse"]),
    ("tag-not-json", "<tool_call>read_file src/app.py</tool_call>", [], 1, ["read_file src/app.py"]),
    ("beyond-repair", '{"tool": "add", "arguments": {"a": 2, "b": }}}}}}', [("add", {"a": 2, "b": ""})], 0, []),
    ("known-and-unknown", '{"tool": "list_files", "arguments": {"path": "."}}\n'
     '{"tool": "delete_all", "arguments": {}}', [LIST], 1, ["delete_all"]),
    ("tag-args-not-object", '<tool_call>{"name": "add", "arguments": [2, 3]}</tool_call>', [("add", {})], 0, []),
]


@pytest.mark.parametrize(("reply", "calls", "problems", "kept"), [c[1:] for c in CORPUS], ids=[c[0] for c in CORPUS])
def test_corpus(reply: str, calls: list[Call], problems: int, kept: list[str]) -> None:
    parsed = parse_text_calls(reply, TOOLS)
    assert [(c.name, c.arguments) for c in parsed.calls] == calls
    assert len(parsed.problems) == problems, parsed.problems
    for text in kept:
        assert text in parsed.prose
    for call in parsed.calls:  # a call's own text never stays in the prose
        assert reply[call.start : call.end] not in parsed.prose
    assert parsed.invented is None


def test_corpus_is_large() -> None:
    assert len(CORPUS) >= 70


def test_calls_keep_their_order_with_the_prose_between() -> None:
    parsed = parse_text_calls(
        'One {"tool": "list_files", "arguments": {"path": "."}} two '
        '{"tool": "read_file", "arguments": {"path": "src/app.py"}} three', TOOLS
    )
    shapes = [p if isinstance(p, str) else p.name for p in parsed.parts]
    assert shapes == ["One", "list_files", "two", "read_file", "three"]


def test_two_objects_in_one_fence_are_never_merged_by_repair() -> None:
    # The old reader handed the whole fence to json-repair, which kept one object: the first call was lost.
    reply = '```json\n{"tool": "add", "arguments": {"a": 1, "b": 1,}}\n{"tool": "add", "arguments": {"a": 2, "b": 2}}\n```'
    assert [c.arguments for c in parse_text_calls(reply, TOOLS).calls] == [{"a": 1, "b": 1}, {"a": 2, "b": 2}]


@pytest.mark.parametrize(
    ("reply", "invented_start"),
    [
        ('{"tool": "add", "arguments": {"a": 2, "b": 3}}\nTool result: 5\nThe answer is 5.', "Tool result: 5"),
        ('<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>\n<tool_response>\n5\n'
         "</tool_response>\nSo it is 5.", "<tool_response>"),
        ('```json\n{"tool": "run_command", "arguments": {"command": "pytest -q"}}\n```\nOutput:\n3 passed',
         "Output:\n3 passed"),
        ('{"tool": "read_file", "arguments": {"path": "src/app.py"}}\nObservation: def main(): ...', "Observation:"),
        ('{"tool": "add", "arguments": {"a": 2, "b": 3}}\n**Tool Result (add):** 5', "**Tool Result"),
        ('{"tool": "list_files", "arguments": {"path": "."}}\n结果：\nResult: a.py b.py', "Result: a.py"),
    ],
)
def test_invented_result_is_cut_off(reply: str, invented_start: str) -> None:
    parsed = parse_text_calls(reply, TOOLS)
    assert len(parsed.calls) == 1
    assert parsed.invented is not None
    assert parsed.invented.startswith(invented_start)
    assert invented_start not in parsed.prose


def test_a_result_written_without_any_call_is_cut_off() -> None:
    # Issue 18: the model "answered" with a result in the protocol's own words and no tool ran.
    parsed = parse_text_calls('<tool_response name="read_file" status="ok">\nhello\n</tool_response>\nIt says hello.', TOOLS)
    assert parsed.calls == []
    assert parsed.invented is not None
    assert parsed.invented.startswith("<tool_response")
    assert parsed.prose == ""
    # Mentioning the tag in a sentence is not writing a result.
    mention = parse_text_calls("Results arrive in <tool_response> tags.", TOOLS)
    assert mention.invented is None
    assert mention.prose == "Results arrive in <tool_response> tags."


def test_calls_after_an_invented_result_are_not_run() -> None:
    # The second call was chosen on the strength of a result the model made up.
    reply = ('{"tool": "list_files", "arguments": {"path": "."}}\nTool result: app.py\n'
             '{"tool": "read_file", "arguments": {"path": "src/app.py"}}')
    parsed = parse_text_calls(reply, TOOLS)
    assert [c.name for c in parsed.calls] == ["list_files"]
    assert parsed.invented is not None
    assert "read_file" in parsed.invented


def test_result_words_inside_arguments_are_not_an_invented_result() -> None:
    reply = ('{"tool": "write_file", "arguments": {"path": "r.txt", "content": "Result: ok\\nOutput: 3\\n"}}\n'
             '{"tool": "read_file", "arguments": {"path": "r.txt"}}')
    parsed = parse_text_calls(reply, TOOLS)
    assert [c.name for c in parsed.calls] == ["write_file", "read_file"]
    assert parsed.invented is None


def test_result_words_before_any_call_are_prose() -> None:
    assert find_invented_result("Result: it works.", 0) == 0  # the finder itself is plain
    parsed = parse_text_calls("Result: it works, no tool needed.", TOOLS)
    assert parsed.invented is None
    assert parsed.prose == "Result: it works, no tool needed."


def test_call_cut_by_the_token_limit_is_not_run() -> None:
    reply = '{"tool": "write_file", "arguments": {"path": "a.py", "content": "def f():\\n    ret'
    cut = parse_text_calls(reply, TOOLS, cut_off=True).calls
    assert [(c.name, c.parse_error) for c in cut] == [("write_file", CUT_AT_MAX_TOKENS)]
    # The same text without the limit (a model that forgot its closing braces) is repaired and run.
    assert parse_text_calls(reply, TOOLS).calls[0].parse_error is None


def test_problems_name_the_fragment_and_the_tools() -> None:
    (problem,) = parse_text_calls('{"tool": "serach", "arguments": {"query": "x"}}', TOOLS).problems
    assert "'serach'" in problem
    assert "search" in problem
    assert "read_file" in problem


def test_any_name_counts_without_an_offered_list() -> None:
    assert [c.name for c in parse_text_calls('{"tool": "anything", "arguments": {}}').calls] == ["anything"]


def test_non_object_arguments_are_a_parse_error_not_a_guess() -> None:
    (call,) = parse_text_calls('{"tool": "add", "arguments": [1, 2]}', TOOLS).calls
    assert call.arguments == {}
    assert call.parse_error is not None
    assert "JSON object" in call.parse_error


def test_repaired_calls_are_marked() -> None:
    clean, broken = parse_text_calls(
        '{"tool": "add", "arguments": {"a": 1, "b": 1}} {"tool": "add", "arguments": {"a": 1, "b": 1,}}', TOOLS
    ).calls
    assert (clean.repaired, broken.repaired) == (False, True)
