"""A loopback stand-in for a local model server (llama.cpp's ``llama-server``, vLLM, LM Studio, Ollama's
OpenAI-compatible API): real HTTP on 127.0.0.1, answering with the bodies those servers send.

``FakeLocalServer(flavour=...)`` serves ``GET /v1/models`` (llama.cpp's entries carry ``meta``, vLLM's
``max_model_len``), ``GET /props`` and ``GET /health`` for llama.cpp, ``GET /api/version`` for Ollama,
and ``POST /v1/chat/completions`` from a queue of canned answers (``answer(status, body)``; a reply
text becomes a chat completion).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Flavour = Literal["llama.cpp", "vllm", "lmstudio", "ollama"]

#: llama.cpp (b5000+) when the prompt does not fit the slot's context.
LLAMA_CPP_OVERFLOW = {
    "error": {
        "code": 400,
        "message": "request (4133 tokens) exceeds the available context size (4096 tokens), try "
        "increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 4133,
        "n_ctx": 4096,
    }
}
#: Older llama.cpp builds.
LLAMA_CPP_OVERFLOW_OLD = {
    "error": {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing the context size or "
        "enable context shift",
        "type": "invalid_request_error",
    }
}
VLLM_OVERFLOW = {
    "object": "error",
    "message": "This model's maximum context length is 4096 tokens. However, you requested 4608 tokens "
    "(4096 in the messages, 512 in the completion). Please reduce the length of the messages or "
    "completion.",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}
VLLM_DECODER_OVERFLOW = {
    "object": "error",
    "message": "The decoder prompt (length 5951) is longer than the maximum model length of 4096. Make "
    "sure that `max_model_len` is no smaller than the number of text tokens.",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}
LMSTUDIO_OVERFLOW = {
    "error": "Trying to keep the first 10136 tokens when context the overflows. However, the model is "
    "loaded with context length of only 7866 tokens, which is not enough. Try to load the model with a "
    "larger context length, or provide a shorter input"
}
LMSTUDIO_N_KEEP = {"error": "Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)"}
OLLAMA_OVERFLOW = {
    "error": {
        "message": "prompt too long; exceeded max context length by 371 tokens",
        "type": "api_error",
        "param": None,
        "code": None,
    }
}


class FakeLocalServer:
    """A threaded HTTP server on a free loopback port; use as a context manager."""

    def __init__(self, flavour: Flavour = "llama.cpp", *, models: list[str] | None = None,
                 n_ctx: int | None = 4096) -> None:
        self.flavour = flavour
        self.models = models or ["qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"]
        self.n_ctx = n_ctx
        self.answers: deque[tuple[int, Any]] = deque()
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def root(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def answer(self, status: int, body: Any) -> None:
        """Queue the answer to the next chat completion request (a str: a reply with that text)."""
        self.answers.append((status, body))

    def __enter__(self) -> FakeLocalServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # ------------------------------------------------------------------------------ bodies

    def model_list(self) -> dict[str, Any]:
        entries: list[dict[str, Any]] = []
        for name in self.models:
            entry: dict[str, Any] = {"id": name, "object": "model", "created": 1732406400}
            if self.flavour == "llama.cpp":
                entry["owned_by"] = "llamacpp"
                entry["meta"] = {"vocab_type": 2, "n_vocab": 151936, "n_ctx_train": 32768, "n_embd": 1536,
                                 "n_params": 1543714304, "size": 1065220096}
            elif self.flavour == "vllm":
                entry.update(owned_by="vllm", root=name, parent=None, max_model_len=self.n_ctx)
            elif self.flavour == "ollama":
                entry["owned_by"] = "library"
            else:
                entry["owned_by"] = "organization_owner"
            entries.append(entry)
        return {"object": "list", "data": entries}

    def props(self) -> dict[str, Any]:
        return {
            "default_generation_settings": {"n_ctx": self.n_ctx, "params": {"temperature": 0.8}},
            "total_slots": 1,
            "model_path": f"/models/{self.models[0]}",
            "build_info": "b6000-abcdef0",
        }

    def completion(self, text: str) -> dict[str, Any]:
        return {
            "id": "chatcmpl-local", "object": "chat.completion", "created": 1732406400,
            "model": self.models[0],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                fake.paths.append(self.path)
                if self.path == "/v1/models":
                    self._send(200, fake.model_list())
                elif fake.flavour == "llama.cpp" and self.path == "/props":
                    self._send(200, fake.props())
                elif fake.flavour == "llama.cpp" and self.path == "/health":
                    self._send(200, {"status": "ok"})
                elif fake.flavour == "ollama" and self.path == "/api/version":
                    self._send(200, {"version": "0.12.3"})
                else:
                    self._send(404, {"error": {"code": 404, "message": "File Not Found",
                                               "type": "not_found_error"}})

            def do_POST(self) -> None:
                fake.paths.append(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                fake.requests.append(json.loads(self.rfile.read(length) or b"{}"))
                if self.path != "/v1/chat/completions":  # e.g. a --base-url without /v1
                    self._send(404, {"error": {"code": 404, "message": "File Not Found",
                                               "type": "not_found_error"}})
                    return
                if not fake.answers:
                    self._send(500, {"error": {"code": 500, "message": "no answer queued",
                                               "type": "server_error"}})
                    return
                status, body = fake.answers.popleft()
                self._send(status, fake.completion(body) if isinstance(body, str) else body)

        return Handler
