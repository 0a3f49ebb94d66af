"""agcore's memory layer. For now the contract only: ``MemoryStore`` and ``Retriever`` protocols and
their ``MemoryItem`` / ``RetrievedItem`` models (see ``agcore.memory._protocols`` for the rules
implementations follow). Concrete stores (in-memory, SQLite) and embedders build on it.
"""

from __future__ import annotations

from agcore.memory._protocols import (
    DEFAULT_NAMESPACE,
    MemoryItem,
    MemoryStore,
    MemoryStoreError,
    RetrievedItem,
    Retriever,
)

__all__ = [
    "DEFAULT_NAMESPACE",
    "MemoryItem",
    "MemoryStore",
    "MemoryStoreError",
    "RetrievedItem",
    "Retriever",
]
