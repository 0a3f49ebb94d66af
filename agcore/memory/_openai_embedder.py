"""``OpenAIEmbedder``: an ``Embedder`` for any server that speaks OpenAI's ``POST /v1/embeddings``:
OpenAI itself, llama.cpp's ``llama-server --embeddings``, vLLM, LM Studio, Ollama's OpenAI API.

Spoken over httpx directly (the SDK adds nothing for one JSON call). Texts go in batches of
``batch_size`` (servers cap a request's inputs; llama-server by its batch size); the answer's
``data`` entries are put back in input order by their ``index``, as the API allows them in any
order. Vectors come as JSON floats (``encoding_format: "float"``); a server that answers base64 anyway
is read too.
"""

from __future__ import annotations

import base64
from array import array
from typing import Any

import httpx

from agcore.llm import LoopBound
from agcore.memory._protocols import MemoryStoreError

__all__ = ["EmbeddingError", "OpenAIEmbedder"]


class EmbeddingError(MemoryStoreError):
    """The embeddings server failed or answered something that is not one vector per text. The
    message names the server and says what to do."""


class OpenAIEmbedder:
    """Embeds texts through an OpenAI-compatible ``/v1/embeddings`` endpoint.

    ``base_url`` is the API root, as for the OpenAI provider (``http://127.0.0.1:8080/v1`` for a
    local llama-server started with ``--embeddings``). ``dimensions`` is sent only when given (models
    that can shorten their vectors honour it). Use it as an async context manager, or call
    ``aclose()``, to close its HTTP client (one you pass in stays yours to close).
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8080/v1",
        model: str = "default",
        *,
        api_key: str | None = None,
        batch_size: int = 64,
        dimensions: int | None = None,
        timeout: float = 60.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}.")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.batch_size = batch_size
        self.dimensions = dimensions
        self.name = f"openai-compatible:{model}"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        def make_client() -> httpx.AsyncClient:
            return httpx.AsyncClient(timeout=timeout)

        # A client made here is made again for a new event loop (``LoopBound``); a passed-in one is
        # the caller's.
        self._http = LoopBound(client) if client is not None \
            else LoopBound.made_by(make_client, httpx.AsyncClient.aclose)
        self._headers = headers

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order; raises ``EmbeddingError`` when the server fails."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors += await self._embed_batch(texts[start : start + self.batch_size])
        return vectors

    async def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        try:
            client = await self._http.for_this_loop()
            response = await client.post(self.url, json=body, headers=self._headers)
        except httpx.HTTPError as exc:
            raise EmbeddingError(
                f"Could not reach the embeddings server at {self.url} ({type(exc).__name__}: {exc}). "
                "Start it (for llama.cpp: llama-server -m MODEL.gguf --embeddings) or fix base_url."
            ) from exc
        if response.status_code != 200:
            raise EmbeddingError(
                f"The embeddings server at {self.url} answered HTTP {response.status_code}: "
                f"{_error_text(response)}. Check the model name and that the server serves embeddings "
                "(llama-server needs --embeddings)."
            )
        return _read_vectors(self.url, response, len(texts))

    async def aclose(self) -> None:
        """Close the HTTP client this embedder made (not one that was passed in)."""
        await self._http.aclose()

    async def __aenter__(self) -> OpenAIEmbedder:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()


def _error_text(response: httpx.Response) -> str:
    try:
        payload = response.json()
    except ValueError:
        return response.text[:300] or "(empty body)"
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and "message" in error:
        return str(error["message"])
    return str(error or payload)[:300]


def _read_vectors(url: str, response: httpx.Response, expected: int) -> list[list[float]]:
    try:
        data = response.json()["data"]
        ordered = sorted(data, key=lambda entry: entry["index"])
        vectors = [_vector(entry["embedding"]) for entry in ordered]
    except (ValueError, KeyError, TypeError) as exc:
        raise EmbeddingError(f"The embeddings server at {url} answered a body that is not an OpenAI "
                             f"embeddings list ({type(exc).__name__}: {exc}).") from exc
    if len(vectors) != expected:
        raise EmbeddingError(f"The embeddings server at {url} returned {len(vectors)} vectors for "
                             f"{expected} texts; it must return one per input.")
    return vectors


def _vector(value: Any) -> list[float]:
    if isinstance(value, str):  # encoding_format "base64": little-endian float32
        floats = array("f")
        floats.frombytes(base64.b64decode(value))
        return list(floats)
    return [float(x) for x in value]
