"""The code index's SQLite file: files with their stamps, chunks with their vectors, and an FTS5
table over each chunk's path, symbol and text.

Vectors are float32 blobs beside their chunk, searched exhaustively with numpy: one matrix product
over every chunk of a workspace (tens of thousands of rows) takes milliseconds, and is exact.
``sqlite-vec`` was the other candidate: its ``vec0`` tables also search exhaustively, and it needs
``sqlite3`` built with extension loading, which many Python builds (this project's CI among them)
lack. The matrix is read once and kept until the index changes.

One connection, used from worker threads under a lock: the index is written by one refresher and
read by searches of one process.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

try:
    import numpy as np
    import numpy.typing as npt
except ImportError as exc:  # pragma: no cover - the code extra installs it
    raise ImportError("agcore.code's CodeIndex searches vectors with numpy, which is not installed: "
                      "pip install 'agcore[code]'.") from exc

from agcore.code._chunks import CodeChunk
from agcore.code._files import FileStamp
from agcore.memory import fts_query

__all__ = ["IndexStore"]

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS code_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS code_files (
    path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS code_chunks (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    symbol TEXT,
    text TEXT NOT NULL,
    vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS code_chunks_by_path ON code_chunks (path);
CREATE VIRTUAL TABLE IF NOT EXISTS code_fts USING fts5 (
    path, symbol, body, tokenize = 'unicode61 remove_diacritics 2'
);
"""
# Symbol names weigh most, then paths (``sqlite`` in a question finds ``_sqlite.py``), then the text.
_BM25 = "bm25(code_fts, 2.0, 4.0, 1.0)"
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[a-z][A-Z][A-Za-z0-9_]*")

Row = tuple[int, str, int, int, str | None, str]
_Matrix = tuple[npt.NDArray[np.int64], list[str], npt.NDArray[np.float32]]  # ids, paths, vectors


def searchable(text: str) -> str:
    """``text`` plus the words of its camelCase names (``HybridRetriever`` also as ``hybrid
    retriever``): the FTS tokenizer splits snake_case by itself, never camelCase."""
    parts = {" ".join(_CAMEL.findall(name)) for name in _IDENT.findall(text)}
    return text + ("\n" + "\n".join(sorted(parts)) if parts else "")


class IndexStore:
    """The index file (``":memory:"`` for none). Every method blocks: call them from a worker thread."""

    def __init__(self, path: str | Path) -> None:
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        self._matrix: _Matrix | None = None
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)

    def _locked(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            return work(self._conn)

    def meta(self, key: str) -> str | None:
        """A stored setting (the embedder's name, say), or None."""
        sql = "SELECT value FROM code_meta WHERE key = ?"
        row = self._locked(lambda c: c.execute(sql, (key,)).fetchone())
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Store a setting."""
        self._locked(lambda c: c.execute("INSERT OR REPLACE INTO code_meta VALUES (?, ?)", (key, value)))

    def stamps(self) -> dict[str, FileStamp]:
        """The stamp of every indexed file when it was indexed."""
        rows = self._locked(lambda c: c.execute("SELECT path, mtime_ns, size FROM code_files").fetchall())
        return {path: FileStamp(mtime, size) for path, mtime, size in rows}

    def clear(self) -> None:
        """Forget everything indexed (the settings stay)."""
        def run(conn: sqlite3.Connection) -> None:
            with _transaction(conn):
                conn.execute("DELETE FROM code_files")
                conn.execute("DELETE FROM code_chunks")
                conn.execute("DELETE FROM code_fts")
        self._locked(run)
        self._matrix = None

    def replace_file(
        self, path: str, stamp: FileStamp, chunks: Sequence[CodeChunk], vectors: Sequence[bytes]
    ) -> None:
        """Put ``path``'s chunks (with their vectors) in place of what it had, in one transaction."""
        def run(conn: sqlite3.Connection) -> None:
            with _transaction(conn):
                _delete_paths(conn, [path])
                for chunk, vector in zip(chunks, vectors, strict=True):
                    cursor = conn.execute(
                        "INSERT INTO code_chunks (path, start_line, end_line, symbol, text, vector) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (path, chunk.start_line, chunk.end_line, chunk.symbol, chunk.text, vector))
                    conn.execute("INSERT INTO code_fts (rowid, path, symbol, body) VALUES (?, ?, ?, ?)",
                                 (cursor.lastrowid, searchable(path), searchable(chunk.symbol or ""),
                                  searchable(chunk.text)))
                conn.execute("INSERT OR REPLACE INTO code_files VALUES (?, ?, ?)",
                             (path, stamp.mtime_ns, stamp.size))
        self._locked(run)
        self._matrix = None

    def remove_files(self, paths: Iterable[str]) -> None:
        """Drop these files and their chunks."""
        listed = list(paths)

        def run(conn: sqlite3.Connection) -> None:
            with _transaction(conn):
                _delete_paths(conn, listed)
                conn.executemany("DELETE FROM code_files WHERE path = ?", [(p,) for p in listed])
        if listed:
            self._locked(run)
            self._matrix = None

    def chunk_count(self) -> int:
        """How many chunks the index holds."""
        return int(self._locked(lambda c: c.execute("SELECT count(*) FROM code_chunks").fetchone()[0]))

    def lexical(self, query: str, limit: int, under: str | None = None) -> list[tuple[int, float]]:
        """(chunk id, score) by BM25, best first: chunks holding every word, then any word; only
        files whose path starts with ``under`` when it is given."""
        found: dict[int, float] = {}
        sql = (f"SELECT f.rowid, -{_BM25} FROM code_fts f JOIN code_chunks c ON c.id = f.rowid "
               f"WHERE code_fts MATCH ? AND substr(c.path, 1, ?) = ? ORDER BY {_BM25} LIMIT ?")
        prefix = under or ""
        for operator in ("AND", "OR"):
            expression = fts_query(query, operator)
            if expression is None or len(found) >= limit:
                break
            rows: list[tuple[int, float]] = self._locked(functools.partial(
                _fetch_all, sql=sql, params=(expression, len(prefix), prefix, limit)))
            for rowid, score in rows:
                found.setdefault(int(rowid), float(score))
        return list(found.items())[:limit]

    def nearest(
        self, query_vector: npt.NDArray[np.float32], limit: int, under: str | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the ``limit`` chunks nearest ``query_vector`` (unit length); only
        files whose path starts with ``under`` when it is given."""
        ids, paths, matrix = self._vectors()
        if under:
            keep = np.fromiter((p.startswith(under) for p in paths), dtype=bool, count=len(paths))
            ids, matrix = ids[keep], matrix[keep]
        if not len(ids) or matrix.shape[1] != query_vector.shape[0]:
            return []
        # einsum's own loop, not BLAS: a BLAS matrix-vector product starts its worker threads, which
        # on a busy machine made a query 30x slower (35 ms against 1 ms for 2,000 chunks).
        scores = np.einsum("ij,j->i", matrix, query_vector)
        top = np.argpartition(-scores, min(limit, len(ids) - 1))[:limit]
        best = top[np.argsort(-scores[top])]
        # A cosine of zero or less means nothing in common, whatever the model.
        return [(int(ids[i]), float(scores[i])) for i in best if scores[i] > 0]

    def rows(self, ids: Sequence[int]) -> dict[int, Row]:
        """The chunks with these ids, by id."""
        marks = ",".join("?" * len(ids))
        sql = f"SELECT id, path, start_line, end_line, symbol, text FROM code_chunks WHERE id IN ({marks})"
        found: list[Any] = self._locked(lambda c: c.execute(sql, list(ids)).fetchall()) if ids else []
        return {int(row[0]): tuple(row) for row in found}

    def _vectors(self) -> _Matrix:
        matrix = self._matrix
        if matrix is None:
            sql = "SELECT id, path, vector FROM code_chunks"
            rows = self._locked(lambda c: c.execute(sql).fetchall())
            ids = np.array([r[0] for r in rows], dtype=np.int64)
            width = len(rows[0][2]) // 4 if rows else 0
            vectors = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), width)
            matrix = self._matrix = (ids, [str(r[1]) for r in rows], vectors)
        return matrix

    def close(self) -> None:
        """Close the connection."""
        self._locked(lambda c: c.close())


def _fetch_all(conn: sqlite3.Connection, *, sql: str, params: Sequence[Any]) -> list[Any]:
    return conn.execute(sql, params).fetchall()


def _delete_paths(conn: sqlite3.Connection, paths: list[str]) -> None:
    for path in paths:
        ids = [(r[0],) for r in conn.execute("SELECT id FROM code_chunks WHERE path = ?", (path,))]
        conn.executemany("DELETE FROM code_fts WHERE rowid = ?", ids)
        conn.execute("DELETE FROM code_chunks WHERE path = ?", (path,))


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on an exception."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *_: object) -> None:
        self.conn.execute("ROLLBACK" if kind is not None else "COMMIT")
