"""The memory contract: what the kernel needs from a store and a retriever.

This module is the interface the memory issue implements (in-memory and SQLite stores, embedders);
the kernel codes against it only. A ``MemoryStore`` keeps ``MemoryItem`` s (text with metadata, in
namespaces); a ``Retriever`` answers a query with scored ``RetrievedItem`` s. A store that can search
is often its own retriever, but the two are separate so that a retriever may also read documents, a
vector index or a web search.

Rules every implementation follows:

* ids are unique across the whole store (not per namespace); ``add`` with an existing ``id`` replaces
  that item (an upsert), so callers can write idempotently;
* ``namespace=None`` in ``search``/``list``/``retrieve`` means every namespace; ``add`` always writes
  to one (``DEFAULT_NAMESPACE`` unless given);
* ``metadata`` filters match items whose metadata contains every given key with an equal value;
* a higher ``score`` is more relevant; its scale is the implementation's own (BM25, cosine, ...), so
  compare scores from one retriever only;
* failures of the backend (a locked database, an unreachable index) raise ``MemoryStoreError`` with a
  message that says what to do; the kernel wraps it in ``AgentMemoryError``.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from agcore._clock import new_id, now_datetime

__all__ = [
    "DEFAULT_NAMESPACE",
    "MemoryItem",
    "MemoryStore",
    "MemoryStoreError",
    "RetrievedItem",
    "Retriever",
]

DEFAULT_NAMESPACE = "default"


class MemoryItem(BaseModel):
    """One remembered piece of text. ``metadata`` must be JSON-able: stores persist it."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str = Field(default_factory=new_id)
    content: str
    namespace: str = DEFAULT_NAMESPACE
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=now_datetime)

    @classmethod
    def new(
        cls,
        content: str,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        metadata: Mapping[str, Any] | None = None,
        id: str | None = None,
    ) -> MemoryItem:
        """The item ``MemoryStore.add`` stores: a fresh id unless one is given, created now."""
        return cls(id=new_id() if id is None else id, content=content, namespace=namespace,
                   metadata=dict(metadata or {}))


class RetrievedItem(BaseModel):
    """A search hit: the item and how well it matched (higher is better; the scale is the retriever's)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    item: MemoryItem
    score: float

    @property
    def id(self) -> str:
        """The item's id."""
        return self.item.id

    @property
    def content(self) -> str:
        """The item's text."""
        return self.item.content

    @property
    def namespace(self) -> str:
        """The item's namespace."""
        return self.item.namespace

    @property
    def metadata(self) -> dict[str, Any]:
        """The item's metadata."""
        return self.item.metadata


class MemoryStoreError(Exception):
    """A memory backend failed. ``message`` says what went wrong and what to do about it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@runtime_checkable
class Retriever(Protocol):
    """Finds what is relevant to a query. The bundle exposes a present retriever to the model as the
    ``retrieve`` tool."""

    async def retrieve(
        self, query: str, *, limit: int = 5, namespace: str | None = None
    ) -> list[RetrievedItem]:
        """At most ``limit`` items, best first; ``namespace=None`` searches every namespace."""
        ...


@runtime_checkable
class MemoryStore(Protocol):
    """Durable, namespaced storage of ``MemoryItem`` s."""

    async def add(
        self,
        content: str,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        metadata: Mapping[str, Any] | None = None,
        id: str | None = None,
    ) -> MemoryItem:
        """Store ``content`` and return the stored item (with its id). An existing ``id`` is replaced."""
        ...

    async def get(self, id: str) -> MemoryItem | None:
        """The item with this id, or None."""
        ...

    async def search(
        self,
        query: str,
        *,
        limit: int = 5,
        namespace: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> builtins.list[RetrievedItem]:
        """At most ``limit`` items matching ``query`` (and the ``metadata`` filter), best first."""
        ...

    async def delete(self, id: str) -> bool:
        """Remove the item; True if it existed."""
        ...

    async def list(
        self,
        *,
        namespace: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> builtins.list[MemoryItem]:
        """Items oldest first (by ``created_at``, then id), filtered, paged by ``offset``/``limit``."""
        ...
