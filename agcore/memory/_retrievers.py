"""Retrievers over a ``MemoryStore``: keyword (the store's FTS/BM25 search), embedding (cosine over
an ``Embedder``'s vectors) and hybrid (reciprocal rank fusion of several retrievers)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from operator import mul
from typing import Any

import anyio

from agcore.memory._embedding import Embedder, pack_vector, unpack_vector
from agcore.memory._protocols import MemoryItem, MemoryStore, RetrievedItem, Retriever
from agcore.memory._sqlite import _COLUMNS, SqliteMemoryStore, _filters, _row_item, write_transaction

__all__ = ["EmbeddingRetriever", "HybridRetriever", "KeywordRetriever"]


class KeywordRetriever:
    """Keyword search through ``store.search`` (FTS5 with BM25 in ``SqliteMemoryStore``).
    ``metadata``, when given, filters every search."""

    def __init__(self, store: MemoryStore, *, metadata: Mapping[str, Any] | None = None) -> None:
        self.store = store
        self.metadata = dict(metadata) if metadata else None

    async def retrieve(
        self, query: str, *, limit: int = 5, namespace: str | None = None
    ) -> list[RetrievedItem]:
        """The store's keyword search (``store.search``) with this retriever's ``metadata`` filter. With
        a ``SqliteMemoryStore`` the best hit scores 1.0 and the others their share of its BM25 score."""
        return await self.store.search(query, limit=limit, namespace=namespace, metadata=self.metadata)


class EmbeddingRetriever:
    """Nearest items by cosine similarity of ``embedder`` vectors (score in [-1, 1]).

    Items are embedded lazily: each ``retrieve`` first embeds what the store holds without a vector
    (``await index()`` does it ahead of time), in batches of ``batch_size``. With a
    ``SqliteMemoryStore`` the vectors are float32 blobs in the store's file (kept across processes,
    dropped when their item changes); with another store they are cached in this object.

    Search is exhaustive, in pure Python: exact, and fine for some ten thousand items per namespace;
    beyond that use a vector index behind your own ``Retriever``. ``min_score`` drops hits below it
    (e.g. ``0.0`` with ``HashingEmbedder``, whose unrelated texts score about zero).
    """

    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder,
        *,
        batch_size: int = 64,
        name: str | None = None,
        min_score: float | None = None,
    ) -> None:
        self.store = store
        self.min_score = min_score
        self.embedder = embedder
        self.batch_size = batch_size
        self.name = name or str(getattr(embedder, "name", type(embedder).__name__))
        self._cache: dict[str, tuple[str, bytes]] = {}

    async def _embed(self, texts: list[str]) -> list[bytes]:
        vectors = await self.embedder.embed(texts)
        if len(vectors) != len(texts):
            raise ValueError(f"Embedder {self.name!r} returned {len(vectors)} vectors for {len(texts)} "
                             "texts: it must return exactly one vector per text, in order.")
        return [pack_vector(v) for v in vectors]

    async def index(self) -> int:
        """Embed every item that has no vector yet; returns how many were embedded."""
        done = 0
        if isinstance(self.store, SqliteMemoryStore):
            while batch := await _missing_vectors(self.store, self.name, self.batch_size):
                blobs = await self._embed([text for _, text in batch])
                rows = [(pk, text, blob) for (pk, text), blob in zip(batch, blobs, strict=True)]
                await _put_vectors(self.store, self.name, rows)
                done += len(batch)
            return done
        items = await self.store.list()
        stale = [i for i in items if i.id not in self._cache or self._cache[i.id][0] != i.content]
        live = {i.id for i in items}
        for gone in set(self._cache) - live:
            del self._cache[gone]
        for start in range(0, len(stale), self.batch_size):
            chunk = stale[start : start + self.batch_size]
            for item, blob in zip(chunk, await self._embed([i.content for i in chunk]), strict=True):
                self._cache[item.id] = (item.content, blob)
            done += len(chunk)
        return done

    async def retrieve(
        self, query: str, *, limit: int = 5, namespace: str | None = None
    ) -> list[RetrievedItem]:
        """At most ``limit`` items nearest to ``query`` by cosine similarity, best first, after embedding
        the items that have no vector yet. Raises ``ValueError`` when the embedder returns the wrong
        number of vectors."""
        if limit <= 0 or not query.strip():
            return []
        await self.index()
        query_vector = unpack_vector((await self._embed([query]))[0])

        def score(blob: bytes) -> float:
            vector = unpack_vector(blob)
            # Both sides are unit vectors: the dot product is the cosine.
            return sum(map(mul, query_vector, vector)) if len(vector) == len(query_vector) else 0.0

        floor = self.min_score
        if isinstance(self.store, SqliteMemoryStore):
            hits = await _scan_vectors(self.store, self.name, score, limit, namespace, floor)
        else:
            items = await self.store.list(namespace=namespace)
            hits = [RetrievedItem(item=i, score=score(self._cache[i.id][1]))
                    for i in items if i.id in self._cache]
            hits = [h for h in hits if floor is None or h.score > floor]
            hits.sort(key=lambda h: -h.score)
        return hits[:limit]


# The vectors live in the store's file, in agcore_memory_vectors (the store drops a row when its
# item changes).


async def _missing_vectors(store: SqliteMemoryStore, embedder: str, limit: int) -> list[tuple[int, str]]:
    sql = ("SELECT m.pk, m.content FROM agcore_memory_items m WHERE NOT EXISTS (SELECT 1 FROM "
           "agcore_memory_vectors v WHERE v.embedder = ? AND v.item_pk = m.pk) LIMIT ?")
    return await store._run(lambda conn: [(r[0], r[1]) for r in conn.execute(sql, (embedder, limit))])


async def _put_vectors(
    store: SqliteMemoryStore, embedder: str, rows: Sequence[tuple[int, str, bytes]]
) -> None:
    # Stored only while the item still holds the embedded text: a concurrent update must not get
    # the old text's vector.
    sql = ("INSERT OR REPLACE INTO agcore_memory_vectors (embedder, item_pk, vector) SELECT ?, ?, ? "
           "WHERE EXISTS (SELECT 1 FROM agcore_memory_items WHERE pk = ? AND content = ?)")
    params = [(embedder, pk, blob, pk, text) for pk, text, blob in rows]

    def run(conn: sqlite3.Connection) -> None:
        with write_transaction(conn):
            conn.executemany(sql, params)

    await store._run(run)


async def _scan_vectors(
    store: SqliteMemoryStore,
    embedder: str,
    score: Callable[[bytes], float],
    limit: int,
    namespace: str | None,
    floor: float | None,
) -> list[RetrievedItem]:
    where, params = _filters(namespace, None)
    sql = ("SELECT v.item_pk, v.vector FROM agcore_memory_vectors v "
           "JOIN agcore_memory_items m ON m.pk = v.item_pk "
           f"WHERE v.embedder = ?{where}")

    def run(conn: sqlite3.Connection) -> list[RetrievedItem]:
        scored = [(score(blob), pk) for pk, blob in conn.execute(sql, [embedder, *params])]
        if floor is not None:
            scored = [s for s in scored if s[0] > floor]
        scored.sort(key=lambda s: -s[0])
        hits: list[RetrievedItem] = []
        for value, pk in scored[:limit]:
            row = conn.execute(f"SELECT {_COLUMNS} FROM agcore_memory_items m WHERE m.pk = ?",
                               (pk,)).fetchone()
            if row is not None:
                hits.append(RetrievedItem(item=_row_item(row), score=value))
        return hits

    return await store._run(run)


class HybridRetriever:
    """Reciprocal rank fusion: each retriever's top ``limit * candidates`` hits are merged, an item
    scoring ``sum(weight / (k + rank))`` over the lists it is in (rank from 1). Rank-based, so the
    retrievers' incomparable score scales (BM25, cosine) need no calibration. The retrievers run
    concurrently; a failure in one fails the search."""

    def __init__(
        self,
        *retrievers: Retriever,
        k: int = 60,
        candidates: int = 4,
        weights: tuple[float, ...] | None = None,
    ) -> None:
        if not retrievers:
            raise ValueError("HybridRetriever needs at least one retriever, e.g. "
                             "HybridRetriever(KeywordRetriever(store), EmbeddingRetriever(store, embedder)).")
        if weights is not None and len(weights) != len(retrievers):
            raise ValueError(f"HybridRetriever got {len(weights)} weights for {len(retrievers)} retrievers: "
                             "give one weight per retriever, or none.")
        self.retrievers = retrievers
        self.k = k
        self.candidates = max(1, candidates)
        self.weights = weights or tuple(1.0 for _ in retrievers)

    async def retrieve(
        self, query: str, *, limit: int = 5, namespace: str | None = None
    ) -> list[RetrievedItem]:
        """Ask every retriever at once (``limit * candidates`` hits each) and fuses their rankings by
        weighted reciprocal rank; the score is the fused one. A retriever's exception is raised as
        itself."""
        if limit <= 0:
            return []
        results: list[list[RetrievedItem]] = [[] for _ in self.retrievers]
        errors: list[Exception] = []

        async def run(index: int, retriever: Retriever) -> None:
            try:
                results[index] = await retriever.retrieve(
                    query, limit=limit * self.candidates, namespace=namespace)
            except Exception as exc:  # re-raised below as itself, not in an ExceptionGroup
                errors.append(exc)

        async with anyio.create_task_group() as tg:
            for index, retriever in enumerate(self.retrievers):
                tg.start_soon(run, index, retriever)
        if errors:
            raise errors[0]
        fused: dict[str, float] = {}
        items: dict[str, MemoryItem] = {}
        for weight, hits in zip(self.weights, results, strict=True):
            for rank, hit in enumerate(hits, start=1):
                fused[hit.item.id] = fused.get(hit.item.id, 0.0) + weight / (self.k + rank)
                items.setdefault(hit.item.id, hit.item)
        best = sorted(fused, key=lambda i: -fused[i])[:limit]
        return [RetrievedItem(item=items[i], score=fused[i]) for i in best]
