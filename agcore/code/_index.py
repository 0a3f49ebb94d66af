"""``CodeIndex``: the workspace's code, chunked by syntax, searchable by meaning and by words.

``refresh()`` brings the index up to date with the files (only changed files are read, chunked and
embedded again; deleted ones are dropped); ``watch()`` does it every few seconds in a task group;
``search()`` fuses the vector search and the BM25 search by reciprocal rank (agcore.memory's
``HybridRetriever``: two rankings with incomparable scores need no calibration that way).
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, ParamSpec, TypeVar

import anyio
import anyio.to_thread
import numpy as np
from anyio.abc import TaskStatus

from agcore._clock import monotonic
from agcore.code._chunks import DEFAULT_MAX_LINES, CodeChunk, chunk_source
from agcore.code._embedder import CodeHashingEmbedder
from agcore.code._files import DEFAULT_EXCLUDED_DIRS, FileStamp, scan_sources
from agcore.code._index_store import IndexStore, Row
from agcore.code._languages import LANGUAGES
from agcore.memory import Embedder, HashingEmbedder, HybridRetriever, MemoryItem, RetrievedItem, Retriever

__all__ = ["CodeHit", "CodeIndex", "IndexStats", "SearchMode"]

_log = logging.getLogger("agcore.code")
P = ParamSpec("P")
T = TypeVar("T")
SearchMode = Literal["hybrid", "semantic", "lexical"]
#: Files read by line windows when no grammar reads them (docs, configs, other languages).
TEXT_SUFFIXES = (".md", ".rst", ".txt", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".sh", ".sql", ".c",
                 ".h", ".cc", ".cpp", ".hpp", ".java", ".kt", ".rb", ".php", ".cs", ".swift", ".html",
                 ".css", ".scss", ".vue", ".svelte", ".lua")
_FILES_PER_BATCH = 32
_ChunkedFile = tuple[str, FileStamp, list[CodeChunk]]


@dataclass(frozen=True, slots=True)
class CodeHit:
    """A search result: lines ``start_line``..``end_line`` of ``path`` (relative to the workspace),
    the definition they hold (``symbol``; None for code between definitions), the text and the score
    (higher is better; its scale depends on the search mode)."""

    path: str
    start_line: int
    end_line: int
    symbol: str | None
    text: str
    score: float


@dataclass(frozen=True, slots=True)
class IndexStats:
    """What a ``refresh()`` did: files (re)indexed and removed, chunks in the index, seconds taken."""

    indexed: int
    removed: int
    chunks: int
    seconds: float


class CodeIndex:
    """A searchable index of the source files under ``root``.

    ``db_path`` is the SQLite file (None: in memory, rebuilt each process); ``embedder`` defaults to
    ``CodeHashingEmbedder()``, which needs no model: pass an ``OpenAIEmbedder`` for a real embedding
    model. Changing the embedder re-embeds everything on the next refresh. ``fusion_weights`` are
    the (semantic, lexical) weights of the fused ranking (default: equal, or (0.5, 1.0) with a
    ``HashingEmbedder``). Close with ``aclose()`` or ``async with``.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        db_path: str | os.PathLike[str] | None = None,
        embedder: Embedder | None = None,
        extensions: Iterable[str] | None = None,
        excluded_dirs: frozenset[str] = DEFAULT_EXCLUDED_DIRS,
        max_chunk_lines: int = DEFAULT_MAX_LINES,
        fusion_weights: tuple[float, float] | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise NotADirectoryError(f"CodeIndex needs a directory to index; {self.root} is not one.")
        self.embedder = embedder or CodeHashingEmbedder()
        self.embedder_name = str(getattr(self.embedder, "name", type(self.embedder).__name__))
        self.extensions = tuple(extensions or
                                (*(s for lang in LANGUAGES for s in lang.suffixes), *TEXT_SUFFIXES))
        self.excluded_dirs = excluded_dirs
        self.max_chunk_lines = max_chunk_lines
        self._store = IndexStore(":memory:" if db_path is None else Path(db_path))
        self._refresh_lock = anyio.Lock()
        self.lexical = _LexicalRetriever(self)
        self.semantic = _SemanticRetriever(self)
        if fusion_weights is None:
            # Hashing vectors only see shared words, which BM25 already ranks (bench/code_search.py):
            # they get half the say of the lexical ranking.
            fusion_weights = (0.5, 1.0) if isinstance(self.embedder, HashingEmbedder) else (1.0, 1.0)
        self.hybrid = HybridRetriever(self.semantic, self.lexical, weights=fusion_weights)

    async def refresh(self) -> IndexStats:
        """Index what changed since the last refresh; returns what it did. One refresh at a time."""
        async with self._refresh_lock:
            started = monotonic()
            if await self._run(self._store.meta, "embedder") != self.embedder_name:
                await self._run(self._store.clear)
                await self._run(self._store.set_meta, "embedder", self.embedder_name)
            stamps = await self._run(scan_sources, self.root, self.extensions,
                                     excluded_dirs=self.excluded_dirs)
            known = await self._run(self._store.stamps)
            removed = [path for path in known if path not in stamps]
            await self._run(self._store.remove_files, removed)
            stale = [(path, stamp) for path, stamp in stamps.items() if known.get(path) != stamp]
            for start in range(0, len(stale), _FILES_PER_BATCH):
                await self._index_files(stale[start : start + _FILES_PER_BATCH])
            chunks = await self._run(self._store.chunk_count)
            return IndexStats(len(stale), len(removed), chunks, monotonic() - started)

    async def watch(
        self, *, interval: float = 2.0, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Refresh now, then every ``interval`` seconds, until cancelled: ``await
        tg.start(index.watch)`` returns once the first refresh is done, and the watch stops with its
        task group. A failed refresh (the embeddings server down, say) is retried on the next tick."""
        await self.refresh()
        task_status.started()
        while True:
            await anyio.sleep(interval)
            try:
                await self.refresh()
            except Exception as exc:  # the next tick tries again; the last good index keeps serving
                _log.warning("code index: refresh failed (%s: %s); retrying in %s s",
                             type(exc).__name__, exc, interval)

    async def search(
        self, query: str, *, limit: int = 5, mode: SearchMode = "hybrid", under: str | None = None
    ) -> list[CodeHit]:
        """At most ``limit`` chunks for ``query``, best first: ``"hybrid"`` fuses ``"semantic"``
        (vectors) and ``"lexical"`` (BM25 over paths, names and text). ``under`` keeps only files
        whose relative path starts with it (``"tests/"``, ``"src/app/models"``). When the embedder fails, a
        hybrid search logs a warning and answers from the lexical ranking alone; a semantic one
        raises."""
        retrievers: dict[str, Retriever] = {
            "hybrid": self.hybrid, "semantic": self.semantic, "lexical": self.lexical}
        retriever = retrievers.get(mode)
        if retriever is None:
            raise ValueError(f"Unknown search mode {mode!r}: use 'hybrid', 'semantic' or 'lexical'.")
        try:
            hits = await retriever.retrieve(query, limit=limit, namespace=under)
        except Exception as exc:
            if retriever is not self.hybrid:
                raise
            # The words still find code when the embedder (often a server) fails: answer with them.
            _log.warning("code search: the embedder failed (%s: %s); answering with lexical search only",
                         type(exc).__name__, exc)
            hits = await self.lexical.retrieve(query, limit=limit, namespace=under)
        return [_hit(h) for h in hits]

    async def aclose(self) -> None:
        """Close the index file."""
        await self._run(self._store.close)

    async def __aenter__(self) -> CodeIndex:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def _index_files(self, files: list[tuple[str, FileStamp]]) -> None:
        chunked = await self._run(self._chunk_files, files)
        texts = [f"{c.path} {c.symbol or ''}\n{c.text}" for _, _, chunks in chunked for c in chunks]
        vectors = await self._embed(texts) if texts else []
        if len(vectors) != len(texts):
            raise ValueError(f"Embedder {self.embedder_name!r} returned {len(vectors)} vectors for "
                             f"{len(texts)} texts: it must return one per text, in order.")
        blobs = iter([_unit_blob(v) for v in vectors])
        for path, stamp, chunks in chunked:
            await self._run(self._store.replace_file, path, stamp, chunks, [next(blobs) for _ in chunks])

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        embedder = self.embedder
        if isinstance(embedder, HashingEmbedder) and type(embedder).embed is HashingEmbedder.embed:
            # Hashing is pure-Python CPU work (about 1 ms a chunk): seconds for a whole tree, which
            # must not stall the event loop the agent runs on while the index refreshes.
            return await anyio.to_thread.run_sync(lambda: [embedder.embed_one(t) for t in texts])
        return await embedder.embed(texts)

    def _chunk_files(self, files: list[tuple[str, FileStamp]]) -> list[_ChunkedFile]:
        out: list[_ChunkedFile] = []
        for path, stamp in files:
            try:
                source = (self.root / path).read_bytes()
            except OSError:
                continue  # gone since the scan: the next refresh drops it
            out.append((path, stamp, chunk_source(path, source, max_lines=self.max_chunk_lines)))
        return out

    async def _run(self, func: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await anyio.to_thread.run_sync(functools.partial(func, *args, **kwargs))

    async def _lexical(self, query: str, limit: int, under: str | None) -> list[RetrievedItem]:
        scored = await self._run(self._store.lexical, query, limit, under)
        return await self._items(scored)

    async def _semantic(self, query: str, limit: int, under: str | None) -> list[RetrievedItem]:
        vector = np.frombuffer(_unit_blob((await self.embedder.embed([query]))[0]), dtype=np.float32)
        scored = await self._run(self._store.nearest, vector, limit, under)
        return await self._items(scored)

    async def _items(self, scored: list[tuple[int, float]]) -> list[RetrievedItem]:
        rows = await self._run(self._store.rows, [i for i, _ in scored])
        return [RetrievedItem(item=_item(rows[i]), score=s) for i, s in scored if i in rows]


class _LexicalRetriever:
    """BM25 over the index (a ``Retriever``; its ``namespace`` is a path prefix)."""

    def __init__(self, index: CodeIndex) -> None:
        self._index = index

    async def retrieve(
        self, query: str, *, limit: int = 5, namespace: str | None = None
    ) -> list[RetrievedItem]:
        return await self._index._lexical(query, limit, namespace) if query.strip() and limit > 0 else []


class _SemanticRetriever:
    """Nearest chunks by the embedder's vectors (a ``Retriever``; its ``namespace`` is a path prefix)."""

    def __init__(self, index: CodeIndex) -> None:
        self._index = index

    async def retrieve(
        self, query: str, *, limit: int = 5, namespace: str | None = None
    ) -> list[RetrievedItem]:
        return await self._index._semantic(query, limit, namespace) if query.strip() and limit > 0 else []


def _unit_blob(vector: list[float]) -> bytes:
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return (array / norm if norm else array).tobytes()


def _item(row: Row) -> MemoryItem:
    chunk_id, path, start, end, symbol, text = row
    return MemoryItem(id=str(chunk_id), content=text, namespace="code",
                      metadata={"path": path, "start_line": start, "end_line": end, "symbol": symbol})


def _hit(hit: RetrievedItem) -> CodeHit:
    meta = hit.metadata
    return CodeHit(meta["path"], meta["start_line"], meta["end_line"], meta["symbol"], hit.content, hit.score)
