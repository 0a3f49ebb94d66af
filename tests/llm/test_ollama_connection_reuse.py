"""An Ollama stream is read to its end (the ``done`` line, then the end of the chunked body), so its
connection goes back to the pool and the next call reuses it. Proven on real loopback HTTP: a
small Ollama-shaped server counts the TCP connections it accepts."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import pytest

from agcore.llm.events import DoneEvent
from agcore.llm.providers import ollama
from agcore.llm.providers.ollama import OllamaProvider
from agcore.llm.retry import NO_RETRY
from agcore.llm.types import LLMRequest

pytestmark = pytest.mark.anyio

MODEL = "qwen3:1.7b"


def _lines(text: str) -> list[dict[str, Any]]:
    """An /api/chat stream as Ollama sends it: thinking, content pieces, then the done line."""
    stamp = "2025-06-02T10:00:00.000000Z"
    pieces = [{"thinking": "Say hi."}, *({"content": word} for word in text.split("|"))]
    lines: list[dict[str, Any]] = [
        {"model": MODEL, "created_at": stamp, "message": {"role": "assistant", "content": "", **piece},
         "done": False} for piece in pieces
    ]
    lines.append({"model": MODEL, "created_at": stamp, "message": {"role": "assistant", "content": ""},
                  "done_reason": "stop", "done": True, "total_duration": 412000000,
                  "load_duration": 21000000, "prompt_eval_count": 12, "prompt_eval_duration": 80000000,
                  "eval_count": 9, "eval_duration": 300000000})
    return lines


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked bodies: as Ollama's Go server answers
    server: _CountingServer

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def setup(self) -> None:
        super().setup()
        with self.server.lock:
            self.server.connections += 1

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for line in _lines("Hi| there!") if body.get("stream", True) else []:
            data = json.dumps(line).encode() + b"\n"
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        # The end of the body comes a moment after the done line, as it does from a busy server:
        # a client that stops reading at the done line closes the connection before it arrives.
        time.sleep(self.server.hold_open)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class _CountingServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.connections = 0
        self.hold_open = 0.05


@pytest.fixture
def server() -> Iterator[_CountingServer]:
    running = _CountingServer()
    thread = threading.Thread(target=running.serve_forever, daemon=True)
    thread.start()
    try:
        yield running
    finally:
        running.shutdown()
        running.server_close()


async def test_streams_reuse_one_connection(server: _CountingServer, anyio_backend: str) -> None:
    host = f"http://127.0.0.1:{server.server_address[1]}"
    async with OllamaProvider(MODEL, host=host, retry_policy=NO_RETRY) as model:
        for _ in range(4):
            events = [event async for event in model.stream(LLMRequest.build("hi"))]
            done = events[-1]
            assert isinstance(done, DoneEvent)
            assert done.message.text == "Hi there!"
            assert done.message.thinking[0].thinking == "Say hi."
            assert done.message.usage.output_tokens == 9
    assert server.connections == 1


async def test_a_body_held_open_after_done_does_not_hold_the_reply(
    server: _CountingServer, anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.hold_open = 3.0  # a server (or proxy) that never ends the body after the done line
    monkeypatch.setattr(ollama, "_DRAIN_SECONDS", 0.2)
    host = f"http://127.0.0.1:{server.server_address[1]}"
    async with OllamaProvider(MODEL, host=host, retry_policy=NO_RETRY) as model:
        with anyio.fail_after(2.0):
            events = [event async for event in model.stream(LLMRequest.build("hi"))]
    assert isinstance(events[-1], DoneEvent)
    assert events[-1].message.text == "Hi there!"
