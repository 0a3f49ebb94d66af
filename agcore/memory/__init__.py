"""agcore's memory layer: the ``MemoryStore`` and ``Retriever`` protocols (see
``agcore.memory._protocols`` for the rules implementations follow), the stores (``InMemoryStore`` for
tests, ``SqliteMemoryStore`` as the embedded default: FTS5/BM25, WAL, safe for concurrent writers) and
the retrievers (keyword, embedding over an ``Embedder``, and their hybrid by reciprocal rank fusion),
and the session stores that let an agent session survive its process (``SqliteSessionStore``).
"""

from __future__ import annotations

from agcore.memory._embedding import Embedder, HashingEmbedder
from agcore.memory._in_memory import InMemoryStore
from agcore.memory._protocols import (
    DEFAULT_NAMESPACE,
    MemoryItem,
    MemoryStore,
    MemoryStoreError,
    RetrievedItem,
    Retriever,
)
from agcore.memory._retrievers import EmbeddingRetriever, HybridRetriever, KeywordRetriever
from agcore.memory._session_store import (
    InMemorySessionStore,
    SessionRecord,
    SessionStore,
    SqliteSessionStore,
)
from agcore.memory._sqlite import SqliteMemoryStore

__all__ = [
    "DEFAULT_NAMESPACE",
    "Embedder",
    "EmbeddingRetriever",
    "HashingEmbedder",
    "HybridRetriever",
    "InMemorySessionStore",
    "InMemoryStore",
    "KeywordRetriever",
    "MemoryItem",
    "MemoryStore",
    "MemoryStoreError",
    "RetrievedItem",
    "Retriever",
    "SessionRecord",
    "SessionStore",
    "SqliteMemoryStore",
    "SqliteSessionStore",
]
