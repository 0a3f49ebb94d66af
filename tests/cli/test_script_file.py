"""``load_script``: scripted models from JSON/YAML files (what ``--model scripted:PATH`` reads)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from agcore.llm import LLMRequest, OverloadedError, TextBlock, UserMessage
from agcore.testing import ScriptExpectationError, ScriptFileError, load_script
from tests.cli import write_script


async def _ask(provider: object, text: str = "hi") -> str:
    response = await provider.complete(LLMRequest.build([UserMessage(content=text)]))  # type: ignore[attr-defined]
    return str(response.message.text)


@pytest.mark.anyio
async def test_replies_play_in_order_text_then_tool_calls(tmp_path: Path) -> None:
    path = write_script(tmp_path, [
        "plain",
        {"text": "Writing.", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "a", "content": "x"}},
            {"name": "list_dir", "id": "call_fixed"},
        ]},
    ])
    model = load_script(path)
    assert await _ask(model) == "plain"
    message = (await model.complete(LLMRequest.build([UserMessage(content="go")]))).message
    assert message.text == "Writing."
    assert [(c.name, c.input) for c in message.tool_calls] == [
        ("write_file", {"path": "a", "content": "x"}), ("list_dir", {})]
    assert message.tool_calls[1].id == "call_fixed"
    assert model.remaining == 0


@pytest.mark.anyio
async def test_object_form_sets_the_model_id_so_prices_apply(tmp_path: Path) -> None:
    reply = {"text": "hi", "usage": {"input_tokens": 10, "output_tokens": 2}}
    path = write_script(tmp_path, {"model": "claude-haiku-4-5", "replies": [reply]})  # type: ignore[arg-type]
    message = (await load_script(path).complete(LLMRequest.build([UserMessage(content="x")]))).message
    assert message.model == "claude-haiku-4-5"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (10, 2)


@pytest.mark.anyio
async def test_yaml_scripts_are_read(tmp_path: Path) -> None:
    path = tmp_path / "model.yaml"
    path.write_text("- text: from yaml\n"
                    "- tool_calls:\n    - name: glob\n      arguments: {pattern: '*.py'}\n")
    model = load_script(path)
    assert await _ask(model) == "from yaml"
    message = (await model.complete(LLMRequest.build([UserMessage(content="x")]))).message
    assert message.tool_calls[0].input == {"pattern": "*.py"}


@pytest.mark.anyio
async def test_error_reply_fails_the_call_like_the_vendor_status(tmp_path: Path) -> None:
    model = load_script(write_script(tmp_path, [{"error": {"status": 529, "message": "busy"}}]))
    with pytest.raises(OverloadedError, match="busy") as info:
        await _ask(model)
    assert info.value.status_code == 529


@pytest.mark.anyio
async def test_delay_waits_and_is_cancellable(tmp_path: Path) -> None:
    replies = [{"text": "slow", "delay": 0.3}, {"text": "never", "delay": 30}]
    model = load_script(write_script(tmp_path, replies))
    start = time.monotonic()
    assert await _ask(model) == "slow"
    assert time.monotonic() - start >= 0.25
    start = time.monotonic()
    with anyio.move_on_after(0.2):
        await _ask(model)
    assert time.monotonic() - start < 5  # the 30 s wait stopped with the cancellation


@pytest.mark.anyio
async def test_expect_checks_what_the_model_was_sent(tmp_path: Path) -> None:
    model = load_script(write_script(tmp_path, [{"text": "I see it", "expect": "banana"},
                                                {"text": "unused", "expect": "banana"}]))
    response = await model.complete(LLMRequest.build([UserMessage(content="remember banana")]))
    assert response.message.content == [TextBlock(text="I see it")]
    with pytest.raises(ScriptExpectationError, match="expected the request to contain 'banana'"):
        await _ask(model, "no fruit here")


@pytest.mark.parametrize(("content", "problem"), [
    ("[{\"txt\": 1}]", "unknown key"),
    ("{\"replies\": 3}", "list of replies"),
    ("[{\"error\": {\"message\": \"x\"}}]", "needs a `status`"),
    ("[{\"text\": \"a\", \"delay\": -1}]", "`delay` must be"),
    ("[{\"tool_calls\": []}]", "non-empty list"),
    ("[{\"tool_calls\": [{\"arguments\": {}}]}]", "tool call 1: needs a `name`"),
    ("[7]", "reply 1: a reply is an object or a string"),
    ("[{}]", "needs `text`, `tool_calls` or `error`"),
    ("not json", "not valid JSON"),
])
def test_malformed_scripts_say_which_reply_is_wrong(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ScriptFileError, match=problem):
        load_script(path)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ScriptFileError, match=r"cannot read the script file .*nope\.json"):
        load_script(tmp_path / "nope.json")
