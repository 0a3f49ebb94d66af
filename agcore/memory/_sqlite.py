"""``SqliteMemoryStore``: the embedded default ``MemoryStore``, one SQLite file with FTS5 search.

Design, and why:

* **Search** is FTS5 ranked by BM25 (``bm25()`` is lower-is-better); a hit's score is its BM25 as a
  share of the best hit's, so the best scores 1.0 (compare scores within one result list).
  The tokenizer is ``unicode61 remove_diacritics 2`` over a copy of the text in which every CJK
  character stands alone, and a CJK query becomes overlapping character-bigram phrases. The
  ``trigram`` tokenizer (SQLite >= 3.34) was rejected: it never matches a term shorter than three
  characters, and most Chinese words (``北京``) and many English ones (``AI``, ``Go``) are shorter.
  The bigram scheme needs nothing beyond FTS5 itself, so it works on every SQLite that has FTS5.
* **Queries are built, never passed through**: each whitespace-separated piece of the user's text is
  one quoted FTS5 phrase (quotes doubled), joined with ``OR``, so quotes, ``-``, ``:``, ``*``,
  ``NEAR`` or parentheses are plain text and can never raise an FTS5 syntax error. Common English
  function words are left out when other words remain (they match almost everything). The phrases
  are first ANDed (cheap, and items holding every term are the best answers); only when that does
  not fill the page does the OR query run. Both rank by the same ``bm25()`` sums.
* **Concurrency**: WAL (readers never block the writer), ``busy_timeout`` (writers wait for each
  other instead of failing) and ``BEGIN IMMEDIATE`` for every write (a writer takes the lock up front,
  so two writers can never deadlock upgrading read locks). Many stores, tasks, threads or processes may
  write one file at once.
* **Off the event loop**: every SQLite call runs in a worker thread (``anyio.to_thread.run_sync``),
  on a connection taken from a pool (one connection per concurrent call, reused; at most anyio's
  worker-thread limit), so parallel reads really run in parallel under WAL. A pool rather than
  ``threading.local``: worker threads come and go, and a pooled connection is closed by ``aclose``
  wherever it was opened. Measured (``bench/memory.py``; 100k items, a busy 2-core VM): for reads
  the two are even, ~210 queries/s with 8 parallel searchers and the same single-query latency
  either way, since the CPU is the limit there. The pool is the default because with one locked
  connection every read also queues behind any write of the store, including one waiting up to
  ``busy_timeout`` for another process's writer; with the pool, WAL lets reads go on.
* ``synchronous=NORMAL``: in WAL mode a commit survives a crash of the process; only a power loss
  or OS crash may lose the last transactions.

Embedding vectors for ``EmbeddingRetriever`` live in a side table of the same file, dropped whenever
their item changes.
"""

from __future__ import annotations

import builtins
import json
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread

from agcore.memory._in_memory import _CJK, CJK_CHAR, STOPWORDS
from agcore.memory._protocols import DEFAULT_NAMESPACE, MemoryItem, MemoryStoreError, RetrievedItem

__all__ = ["SqliteMemoryStore", "fts_phrases", "fts_query"]

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS agcore_memory_items (
    pk INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    namespace TEXT NOT NULL,
    content TEXT NOT NULL,
    metadata TEXT NOT NULL,
    created_us INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS agcore_memory_items_by_ns ON agcore_memory_items (namespace, created_us, id);
CREATE INDEX IF NOT EXISTS agcore_memory_items_by_time ON agcore_memory_items (created_us, id);
CREATE VIRTUAL TABLE IF NOT EXISTS agcore_memory_fts USING fts5 (
    text, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS agcore_memory_vectors (
    embedder TEXT NOT NULL,
    item_pk INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (embedder, item_pk)
) WITHOUT ROWID;
"""

_COLUMNS = "m.id, m.namespace, m.content, m.metadata, m.created_us"
_MAX_PHRASES = 64
_SPLIT = re.compile(f"\\s+|([{_CJK}]+)")


def fts_phrases(text: str) -> list[str]:
    """The quoted FTS5 phrases searched for ``text``: each whitespace-separated word (quotes doubled,
    so nothing in it is FTS5 syntax), and each bigram of a CJK run; function words dropped when other
    words remain; no repeats."""
    words: list[str] = []
    cjk: list[str] = []
    # A NUL would end the query string inside SQLite's parser: an unterminated phrase.
    for piece in _SPLIT.split(text.replace("\x00", " ")):
        if not piece:
            continue
        if CJK_CHAR.match(piece):
            cjk.extend(" ".join(piece[i : i + 2]) for i in range(max(1, len(piece) - 1)))
        elif any(ch.isalnum() for ch in piece):
            words.append(piece.lower())
    content = [w for w in words if w.strip(".,;:!?'\"()[]{}") not in STOPWORDS]
    phrases = list(dict.fromkeys((content or words) + cjk))[:_MAX_PHRASES]
    return ['"' + p.replace('"', '""') + '"' for p in phrases]


def fts_query(text: str, operator: str = "OR") -> str | None:
    """An FTS5 MATCH expression for free text, safe for any input; None when nothing is searchable."""
    phrases = fts_phrases(text)
    return f" {operator} ".join(phrases) if phrases else None


def _index_text(content: str) -> str:
    return CJK_CHAR.sub(lambda m: f" {m.group()} ", content)


def _dump_metadata(metadata: Any) -> str:
    try:
        # Sorted and compact, so that a nested value can be compared as text in a filter.
        return json.dumps(metadata, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"Memory metadata must be JSON-serialisable ({exc}): use str, int, float, bool, None, "
            "and lists/dicts of those."
        ) from exc


def _to_us(moment: datetime) -> int:
    delta = moment.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _from_us(us: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=us)


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any error): the write lock is taken up front,
    so concurrent writers queue on ``busy_timeout`` instead of deadlocking on a lock upgrade."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _row_item(row: Sequence[Any]) -> MemoryItem:
    return MemoryItem(id=row[0], namespace=row[1], content=row[2], metadata=json.loads(row[3]),
                      created_at=_from_us(row[4]))


def _filters(namespace: str | None, metadata: Mapping[str, Any] | None) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if namespace is not None:
        clauses.append("m.namespace = ?")
        params.append(namespace)
    for key, value in (metadata or {}).items():
        if '"' in key:
            raise ValueError(f"Metadata filter key {key!r} contains a double quote, which SQLite JSON "
                             "paths cannot express: rename the key.")
        path = f'$."{key}"'
        if value is None:
            clauses.append("json_type(m.metadata, ?) = 'null'")
            params.append(path)
        elif isinstance(value, dict | list):
            clauses.append("json_extract(m.metadata, ?) = ?")
            params += [path, _dump_metadata(value)]
        else:
            clauses.append("json_extract(m.metadata, ?) = ?")
            params += [path, int(value) if isinstance(value, bool) else value]
    return "".join(f" AND {c}" for c in clauses), params


class SqliteMemoryStore:
    """A ``MemoryStore`` in one SQLite file (``":memory:"`` for a private, throwaway database).

    ``add`` with an existing id replaces the item in place (it gets the new ``created_at``).
    ``busy_timeout`` is how long (seconds) a write waits for another writer before failing with
    ``MemoryStoreError``. ``shared_connection=True`` uses one connection behind a lock instead of the
    pool (always the case for ``":memory:"``, whose data lives in its one connection).
    Close with ``await store.aclose()`` (or ``async with``).
    """

    def __init__(
        self, path: str | Path, *, busy_timeout: float = 30.0, shared_connection: bool = False
    ) -> None:
        self.path = str(path)
        self.busy_timeout = busy_timeout
        self._memory = self.path == ":memory:"
        self._shared = shared_connection or self._memory
        self._lock = threading.Lock()
        self._free: list[sqlite3.Connection] = []
        self._closed = False
        self._ready = False
        self._shared_conn: sqlite3.Connection | None = None
        self._shared_lock = threading.Lock()

    async def __aenter__(self) -> SqliteMemoryStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"SqliteMemoryStore({self.path!r})"

    # ----------------------------------------------------------------------------- connections

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None,
                               check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            if not self._ready:
                with self._lock:
                    if not self._ready:
                        self._init_schema(conn)
                        self._ready = True
            conn.execute("PRAGMA synchronous = NORMAL")
        except BaseException:
            conn.close()
            raise
        return conn

    def _init_schema(self, conn: sqlite3.Connection) -> None:
        if not self._memory:
            # Switching to WAL needs a moment alone with the file and SQLite does not wait for it
            # (no busy handler), so stores opening a fresh file together retry here. Once WAL, it
            # stays WAL: later openers only read the mode.
            deadline = time.monotonic() + self.busy_timeout  # noqa: TID251 (a real-time wait)
            while True:
                try:
                    if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                        conn.execute("PRAGMA journal_mode = WAL")
                    break
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) or time.monotonic() > deadline:  # noqa: TID251
                        raise
                    time.sleep(0.005)
        with write_transaction(conn):
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)

    def _run_sync(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise MemoryStoreError(f"{self!r} is closed: open a new store to use the memory again.")
        try:
            if self._shared:
                with self._shared_lock:
                    if self._shared_conn is None:
                        self._shared_conn = self._connect()
                    return fn(self._shared_conn)
            with self._lock:
                conn = self._free.pop() if self._free else None
            if conn is None:
                conn = self._connect()
            try:
                return fn(conn)
            finally:
                with self._lock:
                    closed = self._closed
                    if not closed:
                        self._free.append(conn)
                if closed:
                    conn.close()
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if "locked" in text or "busy" in text:
                raise MemoryStoreError(
                    f"The memory database {self.path} stayed locked by another writer for more than "
                    f"{self.busy_timeout}s ({text}): retry later, or raise busy_timeout."
                ) from exc
            raise MemoryStoreError(f"The memory database {self.path} failed: {text}. Check that the "
                                   "file is a readable, writable SQLite database with FTS5.") from exc
        except sqlite3.Error as exc:
            raise MemoryStoreError(f"The memory database {self.path} failed: {exc}. Check that the "
                                   "file is a readable, writable SQLite database with FTS5.") from exc

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await anyio.to_thread.run_sync(self._run_sync, fn)

    async def aclose(self) -> None:
        """Close every connection. Idempotent; calls after it raise ``MemoryStoreError``."""
        with self._lock:
            self._closed = True
            free, self._free = self._free, []
        for conn in free:
            conn.close()
        with self._shared_lock:
            if self._shared_conn is not None:
                self._shared_conn.close()
                self._shared_conn = None

    # ------------------------------------------------------------------------------- writes

    @staticmethod
    def _write(conn: sqlite3.Connection, items: Sequence[tuple[MemoryItem, str]]) -> int:
        with write_transaction(conn):
            for item, meta in items:
                row = conn.execute("SELECT pk FROM agcore_memory_items WHERE id = ?", (item.id,)).fetchone()
                values = (item.namespace, item.content, meta, _to_us(item.created_at))
                if row is None:
                    pk = conn.execute(
                        "INSERT INTO agcore_memory_items (id, namespace, content, metadata, created_us) "
                        "VALUES (?, ?, ?, ?, ?)", (item.id, *values)).lastrowid
                else:
                    pk = row[0]
                    conn.execute("UPDATE agcore_memory_items SET namespace = ?, content = ?, metadata = ?, "
                                 "created_us = ? WHERE pk = ?", (*values, pk))
                    conn.execute("DELETE FROM agcore_memory_fts WHERE rowid = ?", (pk,))
                    conn.execute("DELETE FROM agcore_memory_vectors WHERE item_pk = ?", (pk,))
                conn.execute("INSERT INTO agcore_memory_fts (rowid, text) VALUES (?, ?)",
                             (pk, _index_text(item.content)))
        return len(items)

    async def add(
        self,
        content: str,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        metadata: Mapping[str, Any] | None = None,
        id: str | None = None,
    ) -> MemoryItem:
        """Store ``content`` (an upsert when ``id`` exists) in one transaction, indexed for full-text
        search; returns the stored item."""
        item = MemoryItem.new(content, namespace=namespace, metadata=metadata, id=id)
        batch = [(item, _dump_metadata(item.metadata))]
        await self._run(lambda conn: self._write(conn, batch))
        return item

    async def add_many(self, items: Iterable[MemoryItem]) -> int:
        """Store many items in one transaction (an upsert each, like ``add``); returns how many.
        Much faster than ``add`` in a loop for imports; all or nothing."""
        batch = [(item, _dump_metadata(item.metadata)) for item in items]
        return await self._run(lambda conn: self._write(conn, batch))

    async def delete(self, id: str) -> bool:
        """Remove item ``id`` with its search index entry and vectors; True if it existed."""
        def run(conn: sqlite3.Connection) -> bool:
            with write_transaction(conn):
                row = conn.execute("SELECT pk FROM agcore_memory_items WHERE id = ?", (id,)).fetchone()
                if row is not None:
                    conn.execute("DELETE FROM agcore_memory_items WHERE pk = ?", row)
                    conn.execute("DELETE FROM agcore_memory_fts WHERE rowid = ?", row)
                    conn.execute("DELETE FROM agcore_memory_vectors WHERE item_pk = ?", row)
            return row is not None

        return await self._run(run)

    # -------------------------------------------------------------------------------- reads

    async def get(self, id: str) -> MemoryItem | None:
        """The item ``id``, or None."""
        def run(conn: sqlite3.Connection) -> MemoryItem | None:
            sql = f"SELECT {_COLUMNS} FROM agcore_memory_items m WHERE m.id = ?"
            row = conn.execute(sql, (id,)).fetchone()
            return None if row is None else _row_item(row)

        return await self._run(run)

    async def list(
        self,
        *,
        namespace: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> builtins.list[MemoryItem]:
        """Items oldest first, filtered by ``namespace`` and ``metadata`` (JSON values compared exactly),
        a page of ``limit`` from ``offset``."""
        where, params = _filters(namespace, metadata)
        sql = (f"SELECT {_COLUMNS} FROM agcore_memory_items m WHERE 1{where} "
               "ORDER BY m.created_us, m.id LIMIT ? OFFSET ?")
        params += [-1 if limit is None else max(0, limit), max(0, offset)]
        return await self._run(lambda conn: [_row_item(r) for r in conn.execute(sql, params)])

    async def count(self, *, namespace: str | None = None) -> int:
        """How many items the store holds (in ``namespace``, or in all)."""
        where, params = _filters(namespace, None)
        sql = f"SELECT count(*) FROM agcore_memory_items m WHERE 1{where}"
        return await self._run(lambda conn: int(conn.execute(sql, params).fetchone()[0]))

    async def search(
        self,
        query: str,
        *,
        limit: int = 5,
        namespace: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> builtins.list[RetrievedItem]:
        """At most ``limit`` items matching ``query``, best first (FTS5, BM25): items holding every term
        come first. Scores are relative: the best hit is 1.0. Any text is a safe query."""
        phrases = fts_phrases(query)
        if not phrases or limit <= 0:
            return []
        where, params = _filters(namespace, metadata)
        if where:
            sql = (f"SELECT {_COLUMNS}, bm25(agcore_memory_fts) AS rank FROM agcore_memory_fts "
                   "JOIN agcore_memory_items m ON m.pk = agcore_memory_fts.rowid "
                   f"WHERE agcore_memory_fts MATCH ?{where} ORDER BY rank LIMIT ?")
        else:
            # Rank inside FTS5 first, then join only the winners: far cheaper for common terms.
            sql = (f"SELECT {_COLUMNS}, f.rank FROM (SELECT rowid, bm25(agcore_memory_fts) AS rank FROM "
                   "agcore_memory_fts WHERE agcore_memory_fts MATCH ? ORDER BY rank LIMIT ?) f "
                   "JOIN agcore_memory_items m ON m.pk = f.rowid ORDER BY f.rank")

        def run(conn: sqlite3.Connection) -> builtins.list[Any]:
            rows: builtins.list[Any] = []
            # Items holding every term first: an AND is cheap (FTS5 skips through the rarest term's
            # list), and when it fills the page it is the answer. bm25() sums per-phrase parts, so
            # these items score the same as in the OR query below, which fills the page otherwise.
            for operator in ("AND", "OR") if len(phrases) > 1 else ("OR",):
                match = f" {operator} ".join(phrases)
                args = [match, *params, limit] if where else [match, limit]
                rows = conn.execute(sql, args).fetchall()
                if len(rows) >= limit:
                    break
            return rows

        rows = await self._run(run)
        scores = _relative(rows)
        return [RetrievedItem(item=_row_item(r), score=score) for r, score in zip(rows, scores, strict=True)]

    async def retrieve(
        self, query: str, *, limit: int = 5, namespace: str | None = None
    ) -> builtins.list[RetrievedItem]:
        """The store as its own keyword ``Retriever`` (``KeywordRetriever`` wraps the same search)."""
        return await self.search(query, limit=limit, namespace=namespace)


def _relative(rows: builtins.list[Any]) -> builtins.list[float]:
    """Each hit's BM25 as a share of the best hit's (so the best scores 1.0). FTS5 floors the weight
    of a term found in more than half the items at a millionth, so in a small store every raw score
    is about 0.000001 (a single item's always is): useless to show, though the order is right."""
    ranks = [float(r[5]) for r in rows]  # bm25(): negative, lower is better
    best = min(ranks, default=0.0)
    if best >= 0.0:
        return [1.0 for _ in ranks]
    return [rank / best for rank in ranks]
