"""Constrained text-mode calls (``ConstrainedCalls``) on the wire: ``OpenAIProvider`` against loopback
servers that answer as llama.cpp's ``llama-server``, vLLM and Ollama's ``/v1`` do (model list,
``/props``, ``/api/version``, their error bodies), and ``OllamaProvider`` against Ollama's
``/api/chat`` (respx). The reply shape is asked for in ``response_format`` (``format`` on Ollama's
own API), read back into calls or the answer, and dropped when the server refuses it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from agcore.agent import AgentBuilder, AgentConfig, AgentSession, BasicAgent, TextDelta
from agcore.agent.textcalls._answer_stream import AnswerTextFilter
from agcore.agent.textcalls._reply_shape import answer_of
from agcore.agent.textcalls._text_stream import CallTextFilter
from agcore.llm import detect_local_server, forget_local_servers
from agcore.llm.providers.ollama import OllamaProvider
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import NO_RETRY
from agcore.tools import ToolContext, tool
from tests.agent.test_text_mode_wire import LlamaLikeServer
from tests.fake_llama import FakeLocalServer, Flavour

pytestmark = pytest.mark.anyio

CALL = '{"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]}'
ANSWER = '{"answer": "The notes say \\"hello\\"."}'
LLAMA_CPP_BAD_SCHEMA = {  # llama-server when a schema cannot become a grammar
    "error": {"code": 400, "message": "JSON schema conversion failed:\nUnrecognized schema: {\"not\":{}}",
              "type": "invalid_request_error"}
}
VLLM_BAD_SCHEMA = {
    "object": "error", "message": "The provided JSON schema contains features not supported by xgrammar.",
    "type": "BadRequestError", "param": None, "code": 400,
}
OLLAMA_BAD_FORMAT = {"error": {"message": "invalid JSON schema in format", "type": "invalid_request_error",
                               "param": None, "code": None}}


@tool
def read_file(ctx: ToolContext, path: str) -> str:
    """Read a text file of the workspace."""
    root: Path = ctx.require("root")
    return (root / path).read_text()


@pytest.fixture(autouse=True)
def fresh_detection() -> Iterator[None]:
    forget_local_servers()
    yield
    forget_local_servers()


def session_for(provider: Any, tmp_path: Path, **config: Any) -> AgentSession:
    (tmp_path / "notes.txt").write_text("hello")
    bundle = AgentBuilder().provider(provider).tools(read_file).config(AgentConfig(**config)).build()
    return AgentSession(BasicAgent(name="coder"), "s", bundle, dependencies={"root": tmp_path})


def is_reply_shape(body: dict[str, Any]) -> bool:
    fmt = body.get("response_format")
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return False
    return "anyOf" in fmt["json_schema"]["schema"]


@pytest.mark.parametrize(("flavour", "kind"), [("llama.cpp", "llama.cpp"), ("vllm", "vllm"),
                                               ("ollama", "ollama"), ("lmstudio", None)])
async def test_the_server_is_recognised_once(flavour: Flavour, kind: str | None) -> None:
    with FakeLocalServer(flavour) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, retry_policy=NO_RETRY)
        assert await detect_local_server(provider) == kind
        asked = list(server.paths)
        assert await detect_local_server(provider) == kind
        await provider.aclose()
    assert server.paths == asked  # cached: not asked again
    assert asked[0] == "/v1/models"


async def test_cloud_vendors_and_ollama_are_never_probed() -> None:
    with respx.mock(assert_all_mocked=True) as mock:  # any request would fail the test
        openai = OpenAIProvider("gpt-4o", api_key="sk-test", retry_policy=NO_RETRY)
        deepseek = OpenAIProvider("deepseek-chat", api_key="k", base_url="https://api.deepseek.com/v1")
        assert await detect_local_server(openai) is None
        assert await detect_local_server(deepseek) is None
        ollama = OllamaProvider("llama3.2", host="http://ollama.test:11434")
        assert await detect_local_server(ollama) == "ollama"
        assert not mock.calls


@pytest.mark.parametrize("flavour", ["llama.cpp", "vllm"])
async def test_calls_and_answer_on_a_recognised_server(flavour: Flavour, tmp_path: Path) -> None:
    with FakeLocalServer(flavour) as server:
        server.answer(200, CALL)
        server.answer(200, ANSWER)
        provider = OpenAIProvider("qwen-small", base_url=server.base_url, retry_policy=NO_RETRY)
        result = await session_for(provider, tmp_path).submit_turn("What do the notes say?")
        await provider.aclose()
    assert result.stop == "done"
    assert result.text == 'The notes say "hello".'
    first, second = server.requests
    # Text mode from the first call (no native tools), the reply shape asked for on every call.
    assert "tools" not in first
    assert is_reply_shape(first)
    assert is_reply_shape(second)
    schema = first["response_format"]["json_schema"]["schema"]
    calls, answer = schema["anyOf"]
    item = calls["properties"]["tool_calls"]["items"]["anyOf"][0]
    assert item["properties"]["name"] == {"type": "string", "enum": ["read_file"]}
    assert item["properties"]["arguments"]["required"] == ["path"]
    assert answer["required"] == ["answer"]
    assert '{"tool_calls": [{"name": "<tool name>"' in first["messages"][0]["content"]
    assert "<tool_call>" not in first["messages"][0]["content"]
    # The model sees its earlier reply in the shape it must write, and the real result.
    assistant = next(m for m in second["messages"] if m["role"] == "assistant")
    assert json.loads(assistant["content"]) == json.loads(CALL)
    assert "hello" in json.dumps(second["messages"])
    # After the results, the reminder asks for the answer in the shape once the task is done.
    reminder = json.dumps(second["messages"][-1])
    assert 'If the task is now done, reply {\\"answer\\"' in reminder
    assert "Continue with the task: What do the notes say?" in reminder
    assert "answer in plain text" not in reminder


@pytest.mark.parametrize(("flavour", "refusal"), [("llama.cpp", LLAMA_CPP_BAD_SCHEMA),
                                                  ("vllm", VLLM_BAD_SCHEMA),
                                                  ("ollama", OLLAMA_BAD_FORMAT)])
async def test_a_server_that_refuses_the_shape_is_asked_again_without_it(
    flavour: Flavour, refusal: dict[str, Any], tmp_path: Path
) -> None:
    with FakeLocalServer(flavour) as server:
        server.answer(400, refusal)
        server.answer(200, '<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n'
                           "</tool_call>")
        server.answer(200, "The notes say hello.")
        provider = OpenAIProvider("qwen-small", base_url=server.base_url, retry_policy=NO_RETRY)
        result = await session_for(provider, tmp_path, text_mode_tools="on").submit_turn("Notes?")
        await provider.aclose()
    assert result.stop == "done"
    assert result.text == "The notes say hello."
    refused, again, after = server.requests
    assert is_reply_shape(refused)
    assert "response_format" not in again
    assert again["messages"] == refused["messages"]
    assert "response_format" not in after  # remembered: not asked again


async def test_off_sends_no_shape_and_keeps_native_tools_first(tmp_path: Path) -> None:
    with FakeLocalServer("llama.cpp") as server:
        server.answer(200, "Hello.")
        provider = OpenAIProvider("qwen-small", base_url=server.base_url, retry_policy=NO_RETRY)
        result = await session_for(provider, tmp_path, constrained_calls="off").submit_turn("Hi")
        await provider.aclose()
    assert result.text == "Hello."
    (body,) = server.requests
    assert "response_format" not in body
    assert body["tools"][0]["function"]["name"] == "read_file"
    assert "/v1/models" not in server.paths


async def test_ollama_native_api_gets_the_shape_as_format_in_text_mode(tmp_path: Path) -> None:
    host = "http://ollama.test:11434"
    bodies: list[dict[str, Any]] = []
    replies = iter([CALL, ANSWER])

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json={
            "model": "llama3.2", "created_at": "2025-05-27T22:54:57.641643Z",
            "message": {"role": "assistant", "content": next(replies)}, "done_reason": "stop", "done": True,
            "prompt_eval_count": 26, "eval_count": 9,
        })

    with respx.mock(assert_all_called=False) as mock:
        mock.post(f"{host}/api/chat").mock(side_effect=answer)
        provider = OllamaProvider("llama3.2", host=host, retry_policy=NO_RETRY)
        result = await session_for(provider, tmp_path, text_mode_tools="on").submit_turn("Notes?")
    assert result.text == 'The notes say "hello".'
    assert "anyOf" in bodies[0]["format"]
    assert "tools" not in bodies[0]


async def test_streaming_shows_the_answer_text_never_the_json(tmp_path: Path) -> None:
    with LlamaLikeServer([CALL, ANSWER]) as server:  # answers no probe: "on" constrains anyway
        provider = OpenAIProvider("qwen-small", base_url=server.base_url, retry_policy=NO_RETRY)
        session = session_for(provider, tmp_path, constrained_calls="on")
        events = [e async for e in session.stream_turn("What do the notes say?")]
        await provider.aclose()
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown == 'The notes say "hello".'
    assert session.last_result is not None
    assert session.last_result.text == shown
    assert all(is_reply_shape(body) for body in server.bodies)


def _filtered(chunks: list[str]) -> list[str]:
    shown = AnswerTextFilter(CallTextFilter({"read_file"}, lone_results=True))
    return [*(shown.feed(c) for c in chunks), shown.flush()]


def test_the_answer_streams_as_text_with_escapes_cut_anywhere() -> None:
    chunks = ["{", '"ans', 'wer": "Caf', "\\u00", 'e9 \\"ok\\"\\', "nnext", '"}']
    assert "".join(_filtered(chunks)) == 'Café "ok"\nnext'
    assert _filtered(chunks)[:3] == ["", "", "Caf"]  # shown as it comes, not at the end


def test_calls_stream_nothing_and_plain_text_goes_to_the_text_mode_filter() -> None:
    assert "".join(_filtered(['{"tool_', 'calls": [{"name": "read_file", "arguments": {}}]}'])) == ""
    plain = 'Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a"}}\n</tool_call>'
    assert "".join(_filtered([plain[:9], plain[9:]])).strip() == "Let me look."


def test_an_answer_cut_off_by_the_token_cap_is_read_as_far_as_it_came() -> None:
    assert answer_of('{"answer": "The codename is helio') == "The codename is helio"
    assert answer_of('{"answer": "x\\u00') == "x"
    assert answer_of('{"tool_calls": [') is None
    assert answer_of("plain text") is None
