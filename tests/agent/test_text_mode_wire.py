"""Auto text mode on the wire: ``OpenAIProvider`` against a loopback server that answers the way
llama.cpp's ``llama-server`` does with a small model whose chat template has no tool support: the
call comes back as text in ``content`` (no ``tool_calls``), and the server honours ``stop`` (it ends
the reply before the stop string, which is not sent). Real HTTP on 127.0.0.1, streamed and not."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agcore.agent import AgentBuilder, AgentConfig, AgentSession, BasicAgent, TextDelta, TextModeSwitched
from agcore.agent.textcalls._text_calls import RESULT_LABEL
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import NO_RETRY
from agcore.tools import ToolContext, tool

pytestmark = pytest.mark.anyio

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"  # a name no registry knows, as llama-server reports it


class LlamaLikeServer:
    """Replies with the next scripted ``content``; records each request body."""

    def __init__(self, contents: list[str]) -> None:
        self.contents = list(contents)
        self.bodies: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                server.bodies.append(body)
                content = server.contents.pop(0)
                for stop in body.get("stop") or []:  # llama.cpp: the reply ends before the stop string
                    content = content.split(stop, 1)[0]
                if body.get("stream"):
                    self._stream(content)
                else:
                    self._json(content)

            def _json(self, content: str) -> None:
                data = json.dumps({
                    "id": "chatcmpl-llama", "object": "chat.completion", "created": 1764000000,
                    "model": MODEL,
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70},
                }).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, content: str) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                pieces = [content[i : i + 7] for i in range(0, len(content), 7)]
                deltas = [{"role": "assistant", "content": None}] + [{"content": p} for p in pieces]
                for n, delta in enumerate([*deltas, {}]):
                    finish = "stop" if n == len(deltas) else None
                    choice = {"index": 0, "delta": delta, "finish_reason": finish}
                    chunk = {"id": "chatcmpl-llama", "object": "chat.completion.chunk", "created": 1764000000,
                             "model": MODEL, "choices": [choice]}
                    self._chunk(f"data: {json.dumps(chunk)}\n\n".encode())
                self._chunk(b"data: [DONE]\n\n")
                self._chunk(b"")

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> LlamaLikeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@tool
def read_file(ctx: ToolContext, path: str) -> str:
    """Read a text file of the workspace."""
    root: Path = ctx.require("root")
    return (root / path).read_text()


SCRIPT = [
    # Native tools were offered; the model wrote the call as text and went on to invent its result.
    '<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call>\n'
    "<tool_response>\nINVENTED: the file says goodbye\n</tool_response>\nThe file says goodbye.",
    # Text mode now, with the stop sequence: the server ends the reply where the invention begins.
    'One more.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "more.txt"}}\n</tool_call>\n'
    "<tool_response>\nINVENTED again\n</tool_response>",
    "notes.txt says hello and more.txt says world.",
]


@pytest.fixture
def server() -> Iterator[LlamaLikeServer]:
    with LlamaLikeServer(SCRIPT) as running:
        yield running


@pytest.mark.parametrize("streamed", [False, True])
async def test_auto_text_mode_against_a_llama_like_server(
    server: LlamaLikeServer, tmp_path: Path, streamed: bool
) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "more.txt").write_text("world")
    provider = OpenAIProvider(MODEL, base_url=server.base_url, retry_policy=NO_RETRY)
    bundle = AgentBuilder().provider(provider).tools(read_file).config(AgentConfig()).build()
    session = AgentSession(BasicAgent(name="coder"), "s", bundle, dependencies={"root": tmp_path})
    try:
        if streamed:
            events = [e async for e in session.stream_turn("What do the notes say?")]
            assert session.last_result is not None
            result = session.last_result
            shown = "".join(e.text for e in events if isinstance(e, TextDelta))
            assert "read_file" not in shown
            assert "INVENTED" not in shown
            assert shown.endswith("notes.txt says hello and more.txt says world.")
        else:
            events = []
            result = await session.submit_turn("What do the notes say?")
    finally:
        await provider.aclose()
    assert result.stop == "done"
    assert result.text == "notes.txt says hello and more.txt says world."
    assert session.switched_to_text_mode
    if streamed:
        assert sum(isinstance(e, TextModeSwitched) for e in events) == 1
    first, second, third = server.bodies
    assert [t["function"]["name"] for t in first["tools"]] == ["read_file"]
    assert "stop" not in first
    assert "tools" not in second
    assert second["stop"] == [RESULT_LABEL]
    wire = json.dumps(third["messages"])
    # The real results went back under the result label; what the model made up never did.
    assert '<tool_response name=\\"read_file\\" status=\\"ok\\">\\nhello' in wire
    assert '<tool_response name=\\"read_file\\" status=\\"ok\\">\\nworld' in wire
    assert "INVENTED" not in wire
    assert "goodbye" not in wire
    assert "result you wrote yourself" in wire  # the model is told why its text was dropped
