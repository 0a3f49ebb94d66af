"""agcore's memory layer: the ``MemoryStore`` and ``Retriever`` protocols (see
``agcore.memory._protocols`` for the rules implementations follow), the stores (``InMemoryStore`` for
tests, ``SqliteMemoryStore`` as the embedded default: FTS5/BM25, WAL, safe for concurrent writers) and
the retrievers (keyword, embedding over an ``Embedder``, and their hybrid by reciprocal rank fusion),
the embedders (``HashingEmbedder`` offline, ``OpenAIEmbedder`` for any ``/v1/embeddings`` server),
the session stores that let an agent session survive its process (``SqliteSessionStore``), and
``OverflowToMemory``, a compaction callback writing a summary of what was cut into a store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agcore._lazy import lazy_dir, lazy_getattr
from agcore.memory._protocols import (
    DEFAULT_NAMESPACE,
    MemoryItem,
    MemoryStore,
    MemoryStoreError,
    RetrievedItem,
    Retriever,
)

if TYPE_CHECKING:
    from agcore.memory._embedding import Embedder, HashingEmbedder
    from agcore.memory._in_memory import InMemoryStore
    from agcore.memory._openai_embedder import EmbeddingError, OpenAIEmbedder
    from agcore.memory._overflow import DEFAULT_OVERFLOW_PROMPT, OverflowToMemory
    from agcore.memory._retrievers import EmbeddingRetriever, HybridRetriever, KeywordRetriever
    from agcore.memory._session_store import (
        InMemorySessionStore,
        SessionRecord,
        SessionStore,
        SqliteSessionStore,
    )
    from agcore.memory._sqlite import SqliteMemoryStore, fts_query

# The protocols are what the kernel needs; the stores, retrievers (sqlite3, tokenizer tables) and
# session stores load on first use.
_LAZY = {
    "Embedder": "agcore.memory._embedding",
    "HashingEmbedder": "agcore.memory._embedding",
    "InMemoryStore": "agcore.memory._in_memory",
    "DEFAULT_OVERFLOW_PROMPT": "agcore.memory._overflow",
    "OverflowToMemory": "agcore.memory._overflow",
    "EmbeddingRetriever": "agcore.memory._retrievers",
    "HybridRetriever": "agcore.memory._retrievers",
    "KeywordRetriever": "agcore.memory._retrievers",
    "InMemorySessionStore": "agcore.memory._session_store",
    "SessionRecord": "agcore.memory._session_store",
    "SessionStore": "agcore.memory._session_store",
    "SqliteSessionStore": "agcore.memory._session_store",
    "SqliteMemoryStore": "agcore.memory._sqlite",
    "fts_query": "agcore.memory._sqlite",
    "EmbeddingError": "agcore.memory._openai_embedder",
    "OpenAIEmbedder": "agcore.memory._openai_embedder",
}

__all__ = [
    "DEFAULT_NAMESPACE",
    "DEFAULT_OVERFLOW_PROMPT",
    "Embedder",
    "EmbeddingError",
    "EmbeddingRetriever",
    "HashingEmbedder",
    "HybridRetriever",
    "InMemorySessionStore",
    "InMemoryStore",
    "KeywordRetriever",
    "MemoryItem",
    "MemoryStore",
    "MemoryStoreError",
    "OpenAIEmbedder",
    "OverflowToMemory",
    "RetrievedItem",
    "Retriever",
    "SessionRecord",
    "SessionStore",
    "SqliteMemoryStore",
    "SqliteSessionStore",
    "fts_query",
]


def __getattr__(name: str) -> Any:
    return lazy_getattr(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, _LAZY)
