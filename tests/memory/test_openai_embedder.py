"""``OpenAIEmbedder`` against a loopback HTTP server answering exactly as OpenAI's ``POST
/v1/embeddings`` does (and as llama-server does, including its refusal without ``--embeddings``)."""

from __future__ import annotations

import base64
import json
import threading
from array import array
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest

from agcore.code import CodeIndex
from agcore.memory import EmbeddingError, MemoryStoreError, OpenAIEmbedder

pytestmark = pytest.mark.anyio

#: llama-server (b4000+) started without --embeddings.
LLAMA_NO_EMBEDDINGS = {"error": {"code": 501, "message": "This server does not support embeddings. Start it "
                                 "with `--embeddings`", "type": "not_supported_error"}}


def vector_for(text: str) -> list[float]:
    """A deterministic 4-dimensional vector: which of four topics the text mentions."""
    return [float(word in text) for word in ("invoice", "card", "revenue", "retry")]


class EmbeddingsServer:
    """Real HTTP on 127.0.0.1. Answers like OpenAI: ``data`` entries listed in reverse order (the API
    does not promise input order; ``index`` says where each belongs), ``usage`` and ``model``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.status = 200
        self.body: Any = None
        self.base64 = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the real servers: the client pools connections

            def log_message(self, *_: Any) -> None:
                pass

            def do_POST(self) -> None:
                payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(payload)
                server.headers.append(dict(self.headers))
                status, body = server.answer(self.path, payload)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def answer(self, path: str, payload: dict[str, Any]) -> tuple[int, Any]:
        if path != "/v1/embeddings":
            return 404, {"error": {"message": "not found"}}
        if self.body is not None:
            return self.status, self.body
        entries = []
        for index, text in enumerate(payload["input"]):
            vector: Any = vector_for(text)
            if self.base64:
                vector = base64.b64encode(array("f", vector).tobytes()).decode()
            entries.append({"object": "embedding", "index": index, "embedding": vector})
        return 200, {"object": "list", "data": entries[::-1], "model": payload["model"],
                     "usage": {"prompt_tokens": 8, "total_tokens": 8}}


@pytest.fixture
def server() -> Iterator[EmbeddingsServer]:
    running = EmbeddingsServer()
    running.thread.start()
    yield running
    running.httpd.shutdown()
    running.httpd.server_close()


async def test_vectors_come_back_in_input_order_in_batches(server: EmbeddingsServer) -> None:
    texts = ["invoice total", "card token", "revenue", "retry later", "invoice card"]
    async with OpenAIEmbedder(server.base_url, "nomic-embed-code", api_key="sk-local", batch_size=2,
                              dimensions=4) as embedder:
        vectors = await embedder.embed(texts)
    assert vectors == [vector_for(t) for t in texts]
    assert [r["input"] for r in server.requests] == [texts[:2], texts[2:4], texts[4:]]
    assert server.requests[0] == {"model": "nomic-embed-code", "input": texts[:2],
                                  "encoding_format": "float", "dimensions": 4}
    assert server.headers[0]["Authorization"] == "Bearer sk-local"
    assert embedder.name == "openai-compatible:nomic-embed-code"


async def test_base64_vectors_are_read_too(server: EmbeddingsServer) -> None:
    server.base64 = True
    async with OpenAIEmbedder(server.base_url) as embedder:
        assert await embedder.embed(["card revenue"]) == [[0.0, 1.0, 1.0, 0.0]]
    assert "Authorization" not in server.headers[0]


async def test_a_server_without_embeddings_says_how_to_start_it(server: EmbeddingsServer) -> None:
    server.status, server.body = 501, LLAMA_NO_EMBEDDINGS
    async with OpenAIEmbedder(server.base_url) as embedder:
        with pytest.raises(EmbeddingError,
                           match="HTTP 501: This server does not support embeddings") as caught:
            await embedder.embed(["x"])
    assert isinstance(caught.value, MemoryStoreError)
    assert "--embeddings" in caught.value.message


async def test_a_wrong_count_or_shape_is_an_error(server: EmbeddingsServer) -> None:
    server.body = {"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [1.0]}]}
    async with OpenAIEmbedder(server.base_url) as embedder:
        with pytest.raises(EmbeddingError, match="returned 1 vectors for 2 texts"):
            await embedder.embed(["a", "b"])
        server.body = {"detail": "not an embeddings list"}
        with pytest.raises(EmbeddingError, match="not an OpenAI embeddings list"):
            await embedder.embed(["a"])


async def test_an_unreachable_server_names_the_url_and_the_fix() -> None:
    async with OpenAIEmbedder("http://127.0.0.1:9/v1", timeout=2) as embedder:
        with pytest.raises(EmbeddingError, match=r"Could not reach the embeddings server at "
                           r"http://127.0.0.1:9/v1/embeddings .*llama-server"):
            await embedder.embed(["x"])


def test_one_embedder_works_in_each_new_event_loop(server: EmbeddingsServer) -> None:
    """Kept across ``anyio.run`` calls (an index built in one script step, searched in the next), the
    embedder's pooled connection of the first loop is not reused by the second ("Event loop is
    closed" before)."""
    embedder = OpenAIEmbedder(server.base_url, model="m")
    first = anyio.run(embedder.embed, ["invoice"])
    again = anyio.run(embedder.embed, ["card"], backend="trio")
    last = anyio.run(embedder.embed, ["revenue"])
    anyio.run(embedder.aclose)
    assert (first, again, last) == ([vector_for("invoice")], [vector_for("card")], [vector_for("revenue")])


def test_batch_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        OpenAIEmbedder(batch_size=0)


async def test_the_code_index_searches_with_a_served_model(server: EmbeddingsServer, tmp_path: Path) -> None:
    (tmp_path / "billing.py").write_text("def charge(card: str) -> bool:\n    return bool(card)\n")
    (tmp_path / "report.py").write_text("def total(revenue: list[int]) -> int:\n    return sum(revenue)\n")
    async with OpenAIEmbedder(server.base_url, "code-model") as embedder, \
            CodeIndex(tmp_path, embedder=embedder) as index:
        await index.refresh()
        hits = await index.search("card", mode="semantic", limit=1)
    assert hits[0].path == "billing.py"
    assert server.requests[-1]["input"] == ["card"]
