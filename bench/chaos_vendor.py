"""A misbehaving loopback server speaking Anthropic Messages, OpenAI Chat Completions and Ollama
``/api/chat`` (JSON, SSE and NDJSON), for fault campaigns (``bench/faults.py``) and tests.

Standard library only. Each client gets its own script under a key: its base URL is
``/s/<key>/...`` on the one server, so many sessions run against it at once. A script is a queue of
faults, one taken per request (an empty queue means a normal reply), and the tools the scripted
model calls on the next reply (once such a reply was delivered, the model answers in text). Every
request is logged (``ChaosVendor.log(key)``): the fault applied, the reply planned, whether a client
reading the response receives that reply, and what a real endpoint would have rejected in the
history it was sent (tool calls and results that do not pair up).

Faults (``PROVIDER_FAULTS``; ``STREAM_ONLY`` ones apply to streamed requests only, others to both):

* HTTP statuses: ``429_seconds``/``429_ms``/``429_date`` (``retry-after`` in seconds, in
  milliseconds, as an HTTP date), ``429_too_long`` (an hour), ``529``, ``500``/``502``/``503``,
  ``400``, ``401``, ``404``, with the vendor's error body;
* transport: ``reset`` (connection reset before any header), ``cut_body`` (the body stops mid-JSON
  or mid-event and the connection closes), ``slow`` (no answer until past the client's timeout);
* bodies: ``malformed`` (200 with JSON that does not parse), ``empty_200``, ``huge`` (a reply of
  several megabytes), ``bad_args`` (tool-call arguments that are no JSON object: see ``BAD_ARGUMENTS``),
  ``cut_at_max_tokens`` (the reply hit the output token limit in the middle of its last tool call's
  arguments; Anthropic and OpenAI only: Ollama drops a call it could not parse),
  ``duplicate_call_ids`` (every call gets the id ``call_0``, in this reply and in earlier ones, as
  some OpenAI-compatible servers number calls);
* streams: ``stream_cut_after_delta`` (the connection drops right after the first tool-call delta,
  or text delta when there is no call), ``stream_error_before_output``, ``stream_error_after_start``
  (after ``message_start`` or the role chunk, before any content), ``stream_error_after_output`` (an
  in-stream error event after the first delta; overloaded or rate limited), ``stream_stall_after_delta``
  (nothing more after the first delta, past the client's timeout), ``duplicate_events`` (every
  structural event twice), ``json_for_stream`` (the whole reply as one JSON body, as servers that
  ignore ``"stream": true`` send it).
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import socket
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bench._chaos_wire import (
    BAD_ARGUMENTS,
    Call,
    Frame,
    Reply,
    error_body,
    error_frame,
    history_problem,
    json_body,
    retry_after_headers,
    stream_frames,
)

__all__ = ["BAD_ARGUMENTS", "PROVIDER_FAULTS", "STREAM_ONLY", "ChaosVendor", "Served"]

STATUS_FAULTS = (
    "429_seconds",
    "429_ms",
    "429_date",
    "429_too_long",
    "529",
    "500",
    "502",
    "503",
    "400",
    "401",
    "404",
)
STREAM_ONLY = (
    "stream_cut_after_delta",
    "stream_error_before_output",
    "stream_error_after_start",
    "stream_error_after_output",
    "stream_stall_after_delta",
    "duplicate_events",
    "json_for_stream",
)
PROVIDER_FAULTS = (
    *STATUS_FAULTS,
    "reset",
    "cut_body",
    "slow",
    "malformed",
    "empty_200",
    "huge",
    "bad_args",
    "cut_at_max_tokens",
    "duplicate_call_ids",
    *STREAM_ONLY,
)
#: Faults after which the client still holds the whole reply.
DELIVERING = frozenset(
    {
        "ok",
        "huge",
        "bad_args",
        "cut_at_max_tokens",
        "duplicate_call_ids",
        "duplicate_events",
        "json_for_stream",
    }
)
_FILLER = (
    "The forecast holds steady with light wind from the west and a dry afternoon ahead "
    "while clouds gather slowly over the hills near the river. "
)
_CONTENT_TYPES = {
    "anthropic": "text/event-stream",
    "openai": "text/event-stream",
    "ollama": "application/x-ndjson",
}


@dataclass
class Served:
    """One request as the server saw and answered it."""

    index: int
    vendor: str
    stream: bool
    fault: str
    digest: str  # of the request's messages: a retry sends the same ones
    text: str = ""
    tools: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    #: Whether a client reading the response gets the whole reply (and should count its usage).
    delivered: bool = False
    #: The least wait a client honouring the 429's retry headers must take before trying again.
    retry_after: float | None = None
    #: What a real endpoint would have rejected in the request (then answered 400), or None.
    history_error: str | None = None


@dataclass
class _Script:
    faults: collections.deque[str] = field(default_factory=collections.deque)
    tools: list[str] = field(default_factory=list)
    bad_args: str = "broken"
    log: list[Served] = field(default_factory=list)
    replies: int = 0


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "chaos-vendor/1.0"
    sys_version = ""
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        parts = self.path.split("/", 3)  # "", "s", key, route
        route = "/" + parts[3] if len(parts) == 4 and parts[1] == "s" else ""
        vendor = {"v1/messages": "anthropic", "v1/chat/completions": "openai", "api/chat": "ollama"}.get(
            route.strip("/").split("?")[0]
        )
        if vendor is None:
            self._send(404, b'{"error": "no such route"}', "application/json")
            return
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        stream = bool(body.get("stream", vendor == "ollama")) if isinstance(body, dict) else False
        script = self.server.script(parts[2])
        with self.server.lock:
            fault = script.faults.popleft() if script.faults else "ok"
            served = Served(
                index=len(script.log),
                vendor=vendor,
                stream=stream,
                fault=fault,
                digest=hashlib.sha1(
                    json.dumps(
                        body.get("messages") if isinstance(body, dict) else body, sort_keys=True
                    ).encode()
                ).hexdigest()[:12],
            )
            script.log.append(served)
            problem = history_problem(vendor, body) if isinstance(body, dict) else "the body is not JSON"
            if problem is not None:
                served.fault, served.history_error = "rejected_history", problem
            else:
                reply = self._reply(script, served, body, raw)
        if problem is not None:
            self._send(400, error_body(vendor, 400, "", problem), "application/json")
            return
        self._answer(served, reply)

    # ------------------------------------------------------------------------------- planning

    def _reply(self, script: _Script, served: Served, body: dict[str, Any], raw: bytes) -> Reply:
        """The scripted reply (under the server lock); ``served`` is filled in to match."""
        fault = served.fault
        if (
            (fault in STREAM_ONLY and not served.stream)
            or (fault in ("bad_args", "cut_at_max_tokens", "duplicate_call_ids") and not script.tools)
            # Ollama parses calls out of the model's text itself: a call cut short never shows up; and
            # its calls carry no ids to repeat.
            or (fault in ("cut_at_max_tokens", "duplicate_call_ids") and served.vendor == "ollama")
        ):
            served.fault = fault = "ok"  # does not apply to this request: it is answered normally
        script.replies += 1
        number = script.replies
        text = f"Reply {number}. " + _FILLER * (1 + number % 3)
        if fault == "huge":
            text = f"Reply {number}. " + _FILLER * (self.server.huge_chars // len(_FILLER))
        calls: list[Call] = []
        if script.tools:
            text = "" if number % 2 else f"Let me check ({number})."
            for position, name in enumerate(script.tools):
                arguments = {"city": "Paris", "n": 10 * number + position}  # tells the calls apart
                as_text, value = json.dumps(arguments), arguments
                if fault == "bad_args" and position == 0:
                    as_text, value = BAD_ARGUMENTS[script.bad_args]
                if fault == "cut_at_max_tokens" and position == len(script.tools) - 1:
                    # Cut mid-value: as the model wrote it, and as a vendor's lenient parse reads it.
                    as_text, value = as_text[: as_text.index("Paris") + 3], {"city": "Par"}
                call_id = f"call_{served.vendor[:2]}{number}x{position}"
                if fault == "duplicate_call_ids":  # one id for every call, the same in every reply
                    call_id = "call_0"
                calls.append(Call(id=call_id, name=name, arguments=as_text, value=value))
        reply = Reply(
            model=str(body.get("model") or ""),
            text=text,
            calls=calls,
            input_tokens=max(8, len(raw) // 40),
            output_tokens=1 + len(text) // 40 + 9 * len(calls),
            cut=fault == "cut_at_max_tokens",
        )
        served.text, served.tools = text, [c.name for c in calls]
        served.input_tokens, served.output_tokens = reply.input_tokens, reply.output_tokens
        served.delivered = fault in DELIVERING
        if served.delivered and calls:
            script.tools = []  # the model called its tools; it answers in text from now on
        served.retry_after = retry_after_headers(fault)[1]
        return reply

    # ------------------------------------------------------------------------------- answering

    def _answer(self, served: Served, reply: Reply) -> None:
        fault, vendor = served.fault, served.vendor
        if fault in STATUS_FAULTS:
            status = int(fault[:3])
            headers = retry_after_headers(fault)[0]
            self._send(status, error_body(vendor, status, reply.model), "application/json", headers)
        elif fault == "reset":
            self._reset()
        elif not served.stream:
            self._answer_json(fault, vendor, reply)
        else:
            self._answer_stream(served, reply)

    def _answer_json(self, fault: str, vendor: str, reply: Reply) -> None:
        data = json_body(vendor, reply)
        if fault == "slow":
            time.sleep(self.server.slow_seconds)
        if fault == "malformed":
            data = data[: len(data) // 2]  # sent whole, with a matching length: it is the JSON that is cut
        elif fault == "empty_200":
            data = b""
        if fault == "cut_body":
            self._start(200, "application/json", {"Content-Length": str(len(data)), "Connection": "close"})
            self._write(data[: len(data) // 2])
            self._hang_up()
            return
        self._send(200, data, "application/json")

    def _answer_stream(self, served: Served, reply: Reply) -> None:
        fault, vendor = served.fault, served.vendor
        if fault == "json_for_stream":  # a server that ignores "stream": true answers in one body
            self._send(200, json_body(vendor, reply), "application/json")
            return
        frames = stream_frames(vendor, reply)
        if fault == "slow":
            time.sleep(self.server.slow_seconds)
        cut = False
        if fault == "malformed":
            frames = [
                Frame(
                    "start",
                    b"event: message_start\ndata: {not json\n\n"
                    if vendor == "anthropic"
                    else b"data: {not json\n\n"
                    if vendor == "openai"
                    else b"{not json\n",
                )
            ]
        elif fault == "empty_200":
            frames = []
        elif fault == "cut_body":
            frames, cut = [Frame("start", frames[0].data[: len(frames[0].data) // 2])], True
        elif fault == "stream_cut_after_delta":
            frames, cut = _through_first(frames, ("tool",) if reply.calls else ("text",)), True
        elif fault == "stream_stall_after_delta":
            frames, cut = _through_first(frames, ("text", "tool")), True
        elif fault.startswith("stream_error"):
            # Overloaded, or on every other request rate limited: both are sent inside a stream.
            error = Frame("error", error_frame(vendor, rate_limited=served.index % 2 == 1))
            if fault == "stream_error_before_output":
                frames = [error]
            elif fault == "stream_error_after_start":
                frames = [*(f for f in frames[:1] if f.kind == "start"), error]
            else:
                frames = [*_through_first(frames, ("text", "tool")), error]
        elif fault == "duplicate_events":
            frames = [
                f
                for frame in frames
                for f in ((frame, frame) if frame.kind not in ("text", "tool") else (frame,))
            ]
        headers = {"Transfer-Encoding": "chunked", "Cache-Control": "no-cache"}
        if cut:
            headers["Connection"] = "close"
        self._start(200, _CONTENT_TYPES[vendor], headers)
        for frame in frames:
            if not self._write(b"%x\r\n%s\r\n" % (len(frame.data), frame.data)):
                return
        if fault == "stream_stall_after_delta":
            time.sleep(self.server.slow_seconds)  # output began, then nothing: past the read timeout
        if cut:
            self._hang_up()
        else:
            self._write(b"0\r\n\r\n")

    # ------------------------------------------------------------------------------- the socket

    def _start(self, status: int, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("request-id", "req_chaos")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _send(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self._start(status, content_type, {**(headers or {}), "Content-Length": str(len(data))})
        self._write(data)

    def _write(self, data: bytes) -> bool:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:  # the client gave up (a timeout) or hung up: routine here
            self.close_connection = True
            return False
        return True

    def _hang_up(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _reset(self) -> None:
        # SO_LINGER 0: close() sends RST, not FIN: the client sees a reset before any header.
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()


def _through_first(frames: list[Frame], kinds: tuple[str, ...]) -> list[Frame]:
    for position, frame in enumerate(frames):
        if frame.kind in kinds:
            return frames[: position + 1]
    return frames


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, slow_seconds: float, huge_chars: int) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.scripts: dict[str, _Script] = {}
        self.slow_seconds = slow_seconds
        self.huge_chars = huge_chars

    def script(self, key: str) -> _Script:
        with self.lock:
            return self.scripts.setdefault(key, _Script())

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # resets and hang-ups are the point of this server
        super().handle_error(request, client_address)


class ChaosVendor:
    """The chaos server in a background thread: ``with ChaosVendor() as server: ...``.

    ``slow_seconds`` is how long a ``slow`` fault keeps the client waiting (set it past the client's
    timeout); ``huge_chars`` the length of a ``huge`` reply's text.
    """

    def __init__(self, *, slow_seconds: float = 1.5, huge_chars: int = 3_000_000) -> None:
        self._slow = slow_seconds
        self._huge = huge_chars
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ChaosVendor:
        self._server = _Server(self._slow, self._huge)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="chaos-vendor",
            daemon=True,
        )
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def _running(self) -> _Server:
        if self._server is None:
            raise RuntimeError("the chaos vendor is not running: use it as a context manager")
        return self._server

    def base_url(self, key: str, vendor: str) -> str:
        """What ``vendor``'s client takes as its base URL (or Ollama host) for script ``key``."""
        root = f"http://127.0.0.1:{self._running.server_address[1]}/s/{key}"
        return root + "/v1" if vendor == "openai" else root

    def plan(self, key: str, *, faults: list[str], tools: list[str], bad_args: str = "broken") -> None:
        """Script ``key``'s next requests: ``faults`` one per request (then normal replies), and the
        ``tools`` the model calls in its next delivered reply (``bad_args``: which bad arguments)."""
        script = self._running.script(key)
        with self._running.lock:
            script.faults = collections.deque(faults)
            script.tools = list(tools)
            script.bad_args = bad_args

    def log(self, key: str) -> list[Served]:
        """Every request made under ``key``, oldest first."""
        script = self._running.script(key)
        with self._running.lock:
            return list(script.log)
