"""A loopback fake of the Anthropic Messages and OpenAI Chat Completions APIs, for benchmarks and tests
(and of OpenAI's Responses API, ``POST /v1/responses``).

Standard library only, so it runs in a bare subprocess (``python bench/fake_vendor.py`` prints its
port on the first stdout line) or in-process (``with FakeVendor() as server: server.base_url``).

It speaks HTTP/1.1 with keep-alive, like the real endpoints: JSON replies carry Content-Length and
streamed (SSE) replies use chunked transfer encoding, one chunk per event, so the SDKs' connection
pools reuse one socket and parse a stream that arrives in pieces.

The script is fixed: a request whose last message carries a tool result gets a few sentences of
text; any other request gets one ``get_weather`` call for Paris. Payloads copy the vendors' shapes
field for field (ids, usage, stop reasons, SSE event order, argument JSON split into fragments).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import itertools
import json
import random
import signal
import socket
import string
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = ["ANSWER_TEXT", "TOOL_ARGUMENTS", "TOOL_NAME", "FakeVendor", "main"]

TOOL_NAME = "get_weather"
TOOL_ARGUMENTS: dict[str, Any] = {"city": "Paris", "unit": "celsius"}
ANSWER_TEXT = (
    "It is currently 18°C and partly cloudy in Paris, with a light breeze from the west. "
    "Humidity is around 60 percent, so it should feel pleasant outdoors this afternoon. "
    "A few clouds may roll in later this evening, but no rain is expected before tomorrow."
)
MODELS = ("claude-haiku-4-5", "claude-opus-4-5", "gpt-4.1", "gpt-4o-mini")

#: One request as received: (method, path, headers with lower-case names, raw body).
Recorded = tuple[str, str, dict[str, str], bytes]

_ALNUM = string.ascii_letters + string.digits
# The argument JSON as the models stream it: in uneven fragments that split keys and values.
_ARG_JSON = json.dumps(TOOL_ARGUMENTS)
_CUTS = (0, 9, 13, 21, 27, len(_ARG_JSON))
_ARG_FRAGMENTS = [_ARG_JSON[i:j] for i, j in itertools.pairwise(_CUTS)]


def _text_fragments(text: str, count: int = 20) -> list[str]:
    """``text`` cut at word boundaries into about ``count`` deltas, as a model streams tokens."""
    words = text.split(" ")
    per = max(1, round(len(words) / count))
    groups = [" ".join(words[i : i + per]) for i in range(0, len(words), per)]
    return [g if k == 0 else " " + g for k, g in enumerate(groups)]


_ANSWER_FRAGMENTS = _text_fragments(ANSWER_TEXT)


def _rand(n: int) -> str:
    return "".join(random.choices(_ALNUM, k=n))


def _input_tokens(body: bytes) -> int:
    return max(8, len(body) // 4)


def _dumps(payload: Any) -> bytes:
    # Real endpoints send UTF-8 as is (the answer holds a "°"), with compact separators.
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


# ---------------------------------------------------------------- Anthropic Messages


def _anthropic_wants_text(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    if not messages or messages[-1].get("role") != "user":
        return False
    content = messages[-1].get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _anthropic_message(body: dict[str, Any], raw: bytes) -> dict[str, Any]:
    if _anthropic_wants_text(body):
        content: list[dict[str, Any]] = [{"type": "text", "text": ANSWER_TEXT}]
        stop_reason, output_tokens = "end_turn", 52
    else:
        content = [{"type": "tool_use", "id": "toolu_01" + _rand(22), "name": TOOL_NAME,
                    "input": dict(TOOL_ARGUMENTS)}]
        stop_reason, output_tokens = "tool_use", 41
    return {
        "id": "msg_01" + _rand(22),
        "type": "message",
        "role": "assistant",
        "model": body.get("model", MODELS[0]),
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": _input_tokens(raw),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
            "output_tokens": output_tokens,
            "service_tier": "standard",
        },
    }


def _anthropic_events(body: dict[str, Any], raw: bytes) -> Iterator[tuple[str, dict[str, Any]]]:
    final = _anthropic_message(body, raw)
    start = dict(final, content=[], stop_reason=None, stop_sequence=None)
    start["usage"] = dict(final["usage"], output_tokens=1)
    yield "message_start", {"type": "message_start", "message": start}
    block = final["content"][0]
    if block["type"] == "text":
        yield "content_block_start", {"type": "content_block_start", "index": 0,
                                      "content_block": {"type": "text", "text": ""}}
        yield "ping", {"type": "ping"}
        for piece in _ANSWER_FRAGMENTS:
            yield "content_block_delta", {"type": "content_block_delta", "index": 0,
                                          "delta": {"type": "text_delta", "text": piece}}
    else:
        yield "content_block_start", {"type": "content_block_start", "index": 0,
                                      "content_block": dict(block, input={})}
        yield "ping", {"type": "ping"}
        for piece in ["", *_ARG_FRAGMENTS]:
            yield "content_block_delta", {"type": "content_block_delta", "index": 0,
                                          "delta": {"type": "input_json_delta", "partial_json": piece}}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield "message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": final["stop_reason"], "stop_sequence": None},
        "usage": {"input_tokens": final["usage"]["input_tokens"], "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": final["usage"]["output_tokens"]},
    }
    yield "message_stop", {"type": "message_stop"}


# ---------------------------------------------------------------- OpenAI Chat Completions


def _openai_usage(raw: bytes, completion_tokens: int) -> dict[str, Any]:
    prompt = _input_tokens(raw)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
    }


def _openai_wants_text(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    return bool(messages) and messages[-1].get("role") == "tool"


def _openai_completion(body: dict[str, Any], raw: bytes) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "refusal": None, "annotations": []}
    if _openai_wants_text(body):
        message["content"] = ANSWER_TEXT
        finish, tokens = "stop", 52
    else:
        message["content"] = None
        message["tool_calls"] = [{"id": "call_" + _rand(24), "type": "function",
                                  "function": {"name": TOOL_NAME, "arguments": _ARG_JSON}}]
        finish, tokens = "tool_calls", 18
    return {
        "id": "chatcmpl-" + _rand(29),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", MODELS[2]),
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": _openai_usage(raw, tokens),
        "service_tier": "default",
        "system_fingerprint": "fp_" + _rand(10).lower(),
    }


def _openai_chunks(body: dict[str, Any], raw: bytes) -> Iterator[dict[str, Any]]:
    final = _openai_completion(body, raw)
    with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    head = {k: final[k] for k in ("id", "created", "model", "service_tier", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        out = dict(head, choices=[{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}])
        if with_usage:
            out["usage"] = None  # the real API sends an explicit null until the usage chunk
        return out

    message = final["choices"][0]["message"]
    if message.get("tool_calls"):
        call = message["tool_calls"][0]
        yield chunk({"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": call["id"], "type": "function",
             "function": {"name": TOOL_NAME, "arguments": ""}}], "refusal": None})
        for piece in _ARG_FRAGMENTS:
            yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
    else:
        yield chunk({"role": "assistant", "content": "", "refusal": None})
        for piece in _ANSWER_FRAGMENTS:
            yield chunk({"content": piece})
    yield chunk({}, final["choices"][0]["finish_reason"])
    if with_usage:
        yield dict(head, choices=[], usage=final["usage"])


# ---------------------------------------------------------------- OpenAI Responses


def _responses_wants_text(body: dict[str, Any]) -> bool:
    items = body.get("input")
    return isinstance(items, list) and bool(items) and isinstance(items[-1], dict) and (
        items[-1].get("type") == "function_call_output")


def _responses_object(body: dict[str, Any], raw: bytes) -> dict[str, Any]:
    item: dict[str, Any]
    if _responses_wants_text(body):
        item = {"id": "msg_" + _rand(48).lower(), "type": "message", "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": ANSWER_TEXT, "annotations": [], "logprobs": []}]}
        tokens = 52
    else:
        item = {"id": "fc_" + _rand(48).lower(), "type": "function_call", "status": "completed",
                "arguments": _ARG_JSON, "call_id": "call_" + _rand(24), "name": TOOL_NAME}
        tokens = 18
    prompt = _input_tokens(raw)
    return {
        "id": "resp_" + _rand(48).lower(), "object": "response", "created_at": int(time.time()),
        "status": "completed", "background": False, "error": None, "incomplete_details": None,
        "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
        "model": body.get("model", MODELS[2]), "output": [item], "parallel_tool_calls": True,
        "previous_response_id": None, "reasoning": {"effort": None, "summary": None},
        "service_tier": "default", "store": bool(body.get("store", True)), "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"}, "tool_choice": "auto",
        "tools": body.get("tools", []), "top_p": 1.0, "truncation": "disabled",
        "usage": {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": tokens, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": prompt + tokens},
        "user": None, "metadata": {},
    }


def _responses_events(body: dict[str, Any], raw: bytes) -> Iterator[dict[str, Any]]:
    final = _responses_object(body, raw)
    opening = dict(final, status="in_progress", output=[], usage=None)
    item = final["output"][0]
    where = {"item_id": item["id"], "output_index": 0}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": opening},
                                    {"type": "response.in_progress", "response": opening}]
    if item["type"] == "function_call":
        events.append({"type": "response.output_item.added", "output_index": 0,
                       "item": dict(item, arguments="", status="in_progress")})
        events += [{"type": "response.function_call_arguments.delta", **where, "delta": piece}
                   for piece in _ARG_FRAGMENTS]
        events.append({"type": "response.function_call_arguments.done", **where, "arguments": _ARG_JSON})
    else:
        part = item["content"][0]
        events.append({"type": "response.output_item.added", "output_index": 0,
                       "item": dict(item, content=[], status="in_progress")})
        events.append({"type": "response.content_part.added", **where, "content_index": 0,
                       "part": dict(part, text="")})
        events += [{"type": "response.output_text.delta", **where, "content_index": 0, "delta": piece,
                    "logprobs": []} for piece in _ANSWER_FRAGMENTS]
        events.append({"type": "response.output_text.done", **where, "content_index": 0, "text": ANSWER_TEXT,
                       "logprobs": []})
        events.append({"type": "response.content_part.done", **where, "content_index": 0, "part": part})
    events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    events.append({"type": "response.completed", "response": final})
    for number, event in enumerate(events):
        yield dict(event, sequence_number=number)


# ---------------------------------------------------------------- HTTP


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-vendor/1.0"
    sys_version = ""
    # Many small SSE writes: without TCP_NODELAY, Nagle plus delayed ACKs stall each stream ~40 ms.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, add=False)

    # -------------------------------------------------- routing

    def _is_anthropic(self) -> bool:
        return "anthropic-version" in self.headers or "x-api-key" in self.headers

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = urlsplit(self.path).path.rstrip("/")
        self.server.record(self.command, path, {k.lower(): v for k, v in self.headers.items()}, raw)
        anthropic = path == "/v1/messages"
        responses = path in ("/v1/responses", "/responses")
        if not anthropic and not responses and path not in ("/v1/chat/completions", "/chat/completions"):
            self._error(404, "not_found_error", f"no route for POST {path}", self._is_anthropic())
            return
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("the request body must be a JSON object")
        except ValueError as exc:
            self._error(400, "invalid_request_error", f"invalid JSON body: {exc}", anthropic)
            return
        if responses:
            if not body.get("input"):
                self._error(400, "invalid_request_error", "input: at least one item is required", False)
            elif body.get("stream"):
                self._sse((f"event: {event['type']}\ndata: {_dumps(event).decode()}\n\n".encode()
                           for event in _responses_events(body, raw)), anthropic=False)
            else:
                self._json(200, _responses_object(body, raw), anthropic=False)
            return
        if not body.get("messages"):
            self._error(400, "invalid_request_error", "messages: at least one message is required", anthropic)
            return
        if anthropic:
            if body.get("stream"):
                self._sse((f"event: {name}\ndata: {_dumps(data).decode()}\n\n".encode()
                           for name, data in _anthropic_events(body, raw)), anthropic=True)
            else:
                self._json(200, _anthropic_message(body, raw), anthropic=True)
        elif body.get("stream"):
            events = (b"data: " + _dumps(c) + b"\n\n" for c in _openai_chunks(body, raw))
            self._sse(_chain(events, [b"data: [DONE]\n\n"]), anthropic=False)
        else:
            self._json(200, _openai_completion(body, raw), anthropic=False)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        self.server.record(self.command, path, {k.lower(): v for k, v in self.headers.items()}, b"")
        anthropic = self._is_anthropic()
        prefix = "/v1/models" if path.startswith("/v1/models") else "/models"
        if path == prefix:
            models = [_model(m, anthropic) for m in MODELS]
            if anthropic:
                self._json(200, {"data": models, "has_more": False, "first_id": MODELS[0],
                                 "last_id": MODELS[-1]}, anthropic=True)
            else:
                self._json(200, {"object": "list", "data": models}, anthropic=False)
        elif path.startswith(prefix + "/") and path[len(prefix) + 1 :] in MODELS:
            self._json(200, _model(path[len(prefix) + 1 :], anthropic), anthropic)
        elif path.startswith(prefix + "/") and anthropic:
            self._error(404, "not_found_error", f"model: {path[len(prefix) + 1 :]}", anthropic)
        elif path.startswith(prefix + "/"):
            message = f"The model `{path[len(prefix) + 1 :]}` does not exist or you do not have access to it."
            self._error(404, "not_found_error", message, anthropic, code="model_not_found")
        else:
            self._error(404, "not_found_error", f"no route for GET {path}", anthropic)

    # -------------------------------------------------- responses

    def _common_headers(self, anthropic: bool) -> None:
        if anthropic:
            self.send_header("request-id", "req_011C" + _rand(20))
            self.send_header("anthropic-organization-id", "00000000-0000-4000-8000-000000000000")
            self.send_header("anthropic-ratelimit-requests-remaining", "3999")
        else:
            self.send_header("x-request-id", "req_" + _rand(32).lower())
            self.send_header("openai-organization", "fake-org")
            self.send_header("openai-processing-ms", "1")
            self.send_header("openai-version", "2020-10-01")
            self.send_header("x-ratelimit-remaining-requests", "9999")

    def _json(self, status: int, payload: Any, anthropic: bool) -> None:
        data = _dumps(payload)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self._common_headers(anthropic)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, kind: str, message: str, anthropic: bool, code: str | None = None) -> None:
        if anthropic:
            payload: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
        else:  # OpenAI files every 4xx, unknown routes included, under invalid_request_error
            payload = {"error": {"message": message, "type": "invalid_request_error", "param": None,
                                 "code": code}}
        self._json(status, payload, anthropic)

    def _sse(self, events: Iterator[bytes], anthropic: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self._common_headers(anthropic)
        self.end_headers()
        try:
            for event in events:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client hung up mid-stream, as SDKs may on break


def _chain(first: Iterator[bytes], rest: list[bytes]) -> Iterator[bytes]:
    yield from first
    yield from rest


def _model(model_id: str, anthropic: bool) -> dict[str, Any]:
    if anthropic:
        return {"type": "model", "id": model_id, "display_name": model_id.replace("-", " ").title(),
                "created_at": "2025-09-29T00:00:00Z"}
    return {"id": model_id, "object": "model", "created": 1721172741, "owned_by": "system"}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver listens with a backlog of 5: a thousand clients connecting at once would overflow
    # it (the kernel drops their SYNs), and the benchmark would measure that, not the clients.
    request_queue_size = 4096

    def __init__(self, address: tuple[str, int]) -> None:
        super().__init__(address, _Handler)
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self.connections_opened = 0
        #: The last requests received, newest last.
        self.requests: collections.deque[Recorded] = collections.deque(maxlen=64)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client that hangs up (or a stop() that cuts it off) is routine, not news
        super().handle_error(request, client_address)

    def record(self, method: str, path: str, headers: dict[str, str], body: bytes) -> None:
        with self._lock:
            self.requests.append((method, path, headers, body))

    def track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
                self.connections_opened += 1
            else:
                self._connections.discard(conn)

    def close_connections(self) -> None:
        with self._lock:
            conns, self._connections = list(self._connections), set()
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class FakeVendor:
    """The fake server, in a background thread: ``with FakeVendor() as server: ...``.

    ``anthropic_base_url`` and ``openai_base_url`` are what the SDKs take as ``base_url``.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._address = (host, port)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        if self._server is None:
            self._server = _Server(self._address)
            self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                            name="fake-vendor", daemon=True)
            self._thread.start()
        return self.base_url

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.close_connections()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeVendor:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the fake vendor is not running: call start() first")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"

    @property
    def connections_opened(self) -> int:
        """TCP connections accepted so far: with keep-alive, one per pooled client connection."""
        return 0 if self._server is None else self._server.connections_opened

    @property
    def requests(self) -> list[Recorded]:
        """The last requests received (method, path, headers, raw body), oldest first."""
        if self._server is None:
            return []
        with self._server._lock:
            return list(self._server.requests)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 (default) picks a free port")
    args = parser.parse_args(argv)
    server = _Server((args.host, args.port))
    # Callers read the port from the first line, so it goes out alone and at once.
    print(server.server_address[1], flush=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.close_connections()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
