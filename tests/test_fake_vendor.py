"""The fake vendor server speaks the real wire formats: the vendors' own SDKs, pointed at it, parse
every reply into the fields a user reads. Also: keep-alive, error shapes, the CLI, and the bench."""

from __future__ import annotations

import http.client
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from anthropic import AsyncAnthropic
from openai import AsyncOpenAI

from bench.fake_vendor import ANSWER_TEXT, TOOL_ARGUMENTS, TOOL_NAME, FakeVendor

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = "claude-haiku-4-5"
GPT = "gpt-4.1"
TOOL_ID = "toolu_01A09q90qw90lq917835lq9"
CALL_ID = "call_abc123"

CITY_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
ANTHROPIC_TOOLS: list[Any] = [{"name": TOOL_NAME, "description": "Weather for a city.",
                               "input_schema": CITY_SCHEMA}]
ANTHROPIC_FIRST: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
ANTHROPIC_SECOND: list[Any] = [
    *ANTHROPIC_FIRST,
    {"role": "assistant", "content": [{"type": "tool_use", "id": TOOL_ID, "name": TOOL_NAME,
                                       "input": TOOL_ARGUMENTS}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": TOOL_ID, "content": "18C"}]},
]
OPENAI_TOOLS: list[Any] = [{"type": "function", "function": {"name": TOOL_NAME, "parameters": CITY_SCHEMA}}]
OPENAI_FIRST: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
OPENAI_SECOND: list[Any] = [
    *OPENAI_FIRST,
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": CALL_ID, "type": "function", "function": {"name": TOOL_NAME, "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": CALL_ID, "content": "18C"},
]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeVendor]:
    with FakeVendor() as running:
        yield running


def claude(server: FakeVendor) -> AsyncAnthropic:
    return AsyncAnthropic(base_url=server.anthropic_base_url, api_key="x", max_retries=0)


def gpt(server: FakeVendor) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=server.openai_base_url, api_key="x", max_retries=0)


# ---------------------------------------------------------------- Anthropic through its SDK


@pytest.mark.anyio
async def test_anthropic_non_streaming_tool_call_then_text(server: FakeVendor) -> None:
    async with claude(server) as client:
        first = await client.messages.create(model=CLAUDE, max_tokens=256, messages=ANTHROPIC_FIRST,
                                             tools=ANTHROPIC_TOOLS)
        second = await client.messages.create(model=CLAUDE, max_tokens=256, messages=ANTHROPIC_SECOND,
                                              tools=ANTHROPIC_TOOLS)
    assert first.stop_reason == "tool_use"
    assert first.model == CLAUDE
    assert first.id.startswith("msg_")
    assert first._request_id is not None
    assert first._request_id.startswith("req_")
    [call] = first.content
    assert call.type == "tool_use"
    assert (call.name, call.input) == (TOOL_NAME, TOOL_ARGUMENTS)
    assert call.id.startswith("toolu_")
    assert first.usage.input_tokens > 0
    assert first.usage.output_tokens > 0
    assert first.usage.cache_read_input_tokens == 0

    assert second.stop_reason == "end_turn"
    [text] = second.content
    assert text.type == "text"
    assert text.text == ANSWER_TEXT
    # The second request is longer, so it reports more input tokens, as a real model would.
    assert second.usage.input_tokens > first.usage.input_tokens


@pytest.mark.anyio
async def test_anthropic_streamed_events_accumulate_to_the_same_message(server: FakeVendor) -> None:
    async with claude(server) as client:
        raw = await client.messages.create(model=CLAUDE, max_tokens=256, messages=ANTHROPIC_FIRST,
                                           tools=ANTHROPIC_TOOLS, stream=True)
        events = [event async for event in raw]
        async with client.messages.stream(model=CLAUDE, max_tokens=256, messages=ANTHROPIC_SECOND,
                                          tools=ANTHROPIC_TOOLS) as stream:
            deltas = [text async for text in stream.text_stream]
            answer = await stream.get_final_message()

    kinds = [e.type for e in events]  # the SDK drops the ping
    assert kinds[:2] == ["message_start", "content_block_start"]
    assert kinds[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    fragments = [e.delta.partial_json for e in events
                 if e.type == "content_block_delta" and e.delta.type == "input_json_delta"]
    assert len([f for f in fragments if f]) >= 3, "arguments should arrive in several fragments"
    assert json.loads("".join(fragments)) == TOOL_ARGUMENTS
    start = events[1]
    assert start.type == "content_block_start"
    assert start.content_block.type == "tool_use"
    assert start.content_block.name == TOOL_NAME
    final_delta = events[-2]
    assert final_delta.type == "message_delta"
    assert final_delta.delta.stop_reason == "tool_use"
    assert final_delta.usage.output_tokens > 1

    assert 15 <= len(deltas) <= 30
    assert "".join(deltas) == ANSWER_TEXT
    assert answer.stop_reason == "end_turn"
    assert answer.content[0].type == "text"
    assert answer.content[0].text == ANSWER_TEXT
    assert answer.usage.input_tokens > 0
    assert answer.usage.output_tokens > 1


@pytest.mark.anyio
async def test_anthropic_models_and_errors(server: FakeVendor) -> None:
    async with claude(server) as client:
        info = await client.models.retrieve(CLAUDE)
        listed = [m.id async for m in client.models.list()]
        with pytest.raises(anthropic.NotFoundError) as missing:
            await client.models.retrieve("claude-nonexistent")
        with pytest.raises(anthropic.BadRequestError) as empty:
            await client.messages.create(model=CLAUDE, max_tokens=10, messages=[])
    assert info.id == CLAUDE
    assert info.type == "model"
    assert CLAUDE in listed
    assert missing.value.body == {"type": "error", "error": {"type": "not_found_error",
                                                              "message": "model: claude-nonexistent"}}
    assert "at least one message" in str(empty.value)


# ---------------------------------------------------------------- OpenAI through its SDK


@pytest.mark.anyio
async def test_openai_non_streaming_tool_call_then_text(server: FakeVendor) -> None:
    async with gpt(server) as client:
        first = await client.chat.completions.create(model=GPT, messages=OPENAI_FIRST, tools=OPENAI_TOOLS)
        second = await client.chat.completions.create(model=GPT, messages=OPENAI_SECOND, tools=OPENAI_TOOLS)
    [choice] = first.choices
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    assert choice.message.tool_calls is not None
    [call] = choice.message.tool_calls
    assert call.type == "function"
    assert call.id.startswith("call_")
    assert call.function.name == TOOL_NAME
    assert json.loads(call.function.arguments) == TOOL_ARGUMENTS
    assert first.model == GPT
    assert first.object == "chat.completion"
    assert first._request_id is not None
    assert first._request_id.startswith("req_")
    assert first.usage is not None
    assert first.usage.prompt_tokens > 0
    assert first.usage.total_tokens == first.usage.prompt_tokens + first.usage.completion_tokens
    assert first.usage.prompt_tokens_details is not None
    assert first.usage.prompt_tokens_details.cached_tokens == 0

    assert second.choices[0].finish_reason == "stop"
    assert second.choices[0].message.content == ANSWER_TEXT
    assert second.choices[0].message.tool_calls is None


@pytest.mark.anyio
async def test_openai_streamed_tool_call_deltas_and_usage_chunk(server: FakeVendor) -> None:
    async with gpt(server) as client:
        stream = await client.chat.completions.create(
            model=GPT, messages=OPENAI_FIRST, tools=OPENAI_TOOLS, stream=True,
            stream_options={"include_usage": True})
        chunks = [chunk async for chunk in stream]

    calls = [c.choices[0].delta.tool_calls for c in chunks if c.choices and c.choices[0].delta.tool_calls]
    head = calls[0][0]
    assert head.index == 0
    assert head.id is not None
    assert head.id.startswith("call_")
    assert head.function is not None
    assert head.function.name == TOOL_NAME
    rest = [delta[0] for delta in calls[1:]]
    assert len(rest) >= 3
    assert all(d.id is None and d.index == 0 for d in rest)
    assert json.loads("".join(d.function.arguments or "" for d in rest if d.function)) == TOOL_ARGUMENTS
    assert chunks[0].choices[0].delta.role == "assistant"
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "tool_calls"
    assert set(finishes[:-1]) == {None}
    # With include_usage: every chunk but the last has usage null; the last has no choices.
    assert all(c.usage is None for c in chunks[:-1])
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens > 0


@pytest.mark.anyio
async def test_openai_streamed_text_accumulates_and_usage_is_opt_in(server: FakeVendor) -> None:
    async with gpt(server) as client, client.chat.completions.stream(
        model=GPT, messages=OPENAI_SECOND, tools=OPENAI_TOOLS
    ) as stream:
        deltas = [e.delta async for e in stream if e.type == "content.delta"]
        final = await stream.get_final_completion()
    assert 15 <= len(deltas) <= 30
    assert "".join(deltas) == ANSWER_TEXT
    assert final.choices[0].message.content == ANSWER_TEXT
    assert final.choices[0].finish_reason == "stop"
    assert final.usage is None  # no stream_options.include_usage, no usage chunk


@pytest.mark.anyio
async def test_openai_models_and_errors(server: FakeVendor) -> None:
    async with gpt(server) as client:
        info = await client.models.retrieve(GPT)
        listed = [m.id async for m in client.models.list()]
        with pytest.raises(openai.NotFoundError) as missing:
            await client.models.retrieve("gpt-nonexistent")
    assert info.id == GPT
    assert info.object == "model"
    assert GPT in listed
    assert missing.value.code == "model_not_found"
    assert missing.value.type == "invalid_request_error"


# ---------------------------------------------------------------- HTTP behaviour


@pytest.mark.anyio
async def test_each_sdk_client_reuses_one_connection() -> None:
    with FakeVendor() as fresh:
        async with claude(fresh) as a, gpt(fresh) as o:
            for _ in range(3):
                await a.messages.create(model=CLAUDE, max_tokens=8, messages=ANTHROPIC_FIRST)
                async for _event in await a.messages.create(model=CLAUDE, max_tokens=8,
                                                            messages=ANTHROPIC_SECOND, stream=True):
                    pass
                await o.chat.completions.create(model=GPT, messages=OPENAI_FIRST)
                async for _chunk in await o.chat.completions.create(model=GPT, messages=OPENAI_SECOND,
                                                                    stream=True):
                    pass
        assert fresh.connections_opened == 2
        assert len(fresh.requests) == 12
        method, path, headers, body = fresh.requests[0]
        assert (method, path) == ("POST", "/v1/messages")
        assert "anthropic-version" in headers
        assert json.loads(body)["messages"] == ANTHROPIC_FIRST


def test_raw_sse_wire_format_is_chunked_with_ping_and_done(server: FakeVendor) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        body = json.dumps({"model": CLAUDE, "max_tokens": 8, "messages": ANTHROPIC_FIRST, "stream": True})
        conn.request("POST", "/v1/messages", body, {"anthropic-version": "2023-06-01",
                                                    "content-type": "application/json"})
        response = conn.getresponse()
        assert response.getheader("transfer-encoding") == "chunked"
        assert response.getheader("content-type", "").startswith("text/event-stream")
        assert (response.getheader("request-id") or "").startswith("req_")
        names = [line.split(": ", 1)[1] for line in response.read().decode().splitlines()
                 if line.startswith("event: ")]
        assert names[:3] == ["message_start", "content_block_start", "ping"]
        assert names[-1] == "message_stop"

        # Same connection, next request: OpenAI stream ends in [DONE].
        body = json.dumps({"model": GPT, "messages": OPENAI_FIRST, "stream": True})
        conn.request("POST", "/v1/chat/completions", body, {"content-type": "application/json"})
        response = conn.getresponse()
        assert (response.getheader("x-request-id") or "").startswith("req_")
        lines = [line for line in response.read().decode().splitlines() if line]
        assert lines[-1] == "data: [DONE]"
        assert all(line.startswith("data: ") for line in lines)
    finally:
        conn.close()


def test_bad_requests_get_vendor_shaped_errors(server: FakeVendor) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("POST", "/v1/messages", b"{not json", {"anthropic-version": "2023-06-01"})
        response = conn.getresponse()
        error = json.loads(response.read())
        assert response.status == 400
        assert error["type"] == "error"
        assert error["error"]["type"] == "invalid_request_error"

        conn.request("POST", "/v1/embeddings", b"{}", {"content-type": "application/json"})
        response = conn.getresponse()
        assert response.status == 404
        assert json.loads(response.read())["error"]["type"] == "invalid_request_error"
    finally:
        conn.close()


def test_cli_prints_its_port_first_and_stops_on_sigterm() -> None:
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "fake_vendor.py")],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/v1/models")
        response = conn.getresponse()
        assert response.status == 200
        assert json.loads(response.read())["object"] == "list"
        conn.close()
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


# ---------------------------------------------------------------- the benchmark itself

_PROVIDERS = ("agcore.llm.providers.anthropic", "agcore.llm.providers.openai")


@pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None for name in _PROVIDERS),
    reason="bench/llm_overhead.py compares against agcore's Anthropic/OpenAI providers, not written yet",
)
def test_llm_overhead_quick_run_reports_every_ratio() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "llm_overhead.py"), "--quick"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()
            if line.startswith(("anthropic ", "openai "))]
    assert [row[:2] for row in rows] == [["anthropic", "complete"], ["anthropic", "stream"],
                                         ["openai", "complete"], ["openai", "stream"]]
    for row in rows:
        assert float(row[4]) > 0, f"no agcore/bare ratio in {row}"
    assert "NOTE" not in done.stdout
