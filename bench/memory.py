"""How fast ``SqliteMemoryStore`` stores and finds things, at 100k items.

The corpus is synthetic but shaped like notes: 100k texts of 15-60 words drawn from a 30k-word
vocabulary with a Zipf distribution continued from rank 51 (ranks 1-50 being the function words,
which are mixed in as every fifth word), so a few words are in many texts and most are rare.
Queries are 2-4 words taken from stored texts, sometimes with a function word, so some terms are
frequent and some rare, as in real questions.

Measured, each into a fresh SQLite file in a temporary directory (WAL, ``synchronous=NORMAL``):

* insert throughput: the setup's bulk ``add_many`` (one transaction), and ``add`` one by one (each
  its own transaction: what an agent's ``remember`` costs);
* keyword search (``KeywordRetriever``, FTS5/BM25, limit 5) latency p50/p95, one query at a time,
  each timed end to end through ``await`` (so the worker-thread hop is included);
* parallel reads: 8 tasks searching at once, with the connection pool (the default) and with one
  shared, locked connection (``shared_connection=True``);
* embedding search (``EmbeddingRetriever`` + ``HashingEmbedder``, exhaustive cosine in pure Python)
  at a smaller N (10k by default): it is O(N) per query, so 100k would be ~10x slower.

It is a report, not a test: it exits 0 whatever the numbers. Target: keyword p50 < 5 ms at 100k.

    python bench/memory.py                   # 100k items, about a minute
    python bench/memory.py --items 20000 --queries 200 --vector-items 2000   # a quick run
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: `python bench/memory.py`
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from agcore.memory import (  # noqa: E402
    EmbeddingRetriever,
    HashingEmbedder,
    KeywordRetriever,
    MemoryItem,
    SqliteMemoryStore,
)

TARGET_P50_MS = 5.0
# In real text the most frequent ~50 words are function words, which the query builder drops; the
# content vocabulary continues the Zipf curve from there (a Zipf-Mandelbrot shape). Without this
# offset a few invented "content" words would sit in nearly every text, which no real corpus has.
HEAD = 50
FUNCTION_WORDS = ["the", "a", "of", "to", "and", "in", "is", "it", "that", "for", "on", "with", "as",
                  "was", "we", "you", "this", "be", "at", "by"]
SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def vocabulary(rng: random.Random, size: int) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def corpus(rng: random.Random, n: int) -> tuple[list[str], list[str]]:
    words = vocabulary(rng, 30_000)
    weights = [1.0 / (rank + 1 + HEAD) for rank in range(len(words))]
    cum = list(_accumulate(weights))
    texts: list[str] = []
    for _ in range(n):
        picked = rng.choices(words, cum_weights=cum, k=rng.randint(15, 60))
        for i in range(0, len(picked), 4):
            picked.insert(i, rng.choice(FUNCTION_WORDS))
        texts.append(" ".join(picked))
    return texts, words


def _accumulate(values: list[float]) -> list[float]:
    total, out = 0.0, []
    for v in values:
        total += v
        out.append(total)
    return out


def queries(rng: random.Random, texts: list[str], n: int) -> list[str]:
    out = []
    for _ in range(n):
        content = [w for w in rng.choice(texts).split() if w not in FUNCTION_WORDS]
        picked = rng.sample(content, min(len(content), rng.randint(2, 4)))
        if rng.random() < 0.3:
            picked.insert(0, rng.choice(FUNCTION_WORDS))
        out.append(" ".join(picked))
    return out


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


async def timed(calls: list[Callable[[], Awaitable[Any]]]) -> list[float]:
    samples = []
    for call in calls:
        start = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


async def parallel_qps(store: SqliteMemoryStore, qs: list[str], workers: int = 8) -> float:
    chunks = [qs[i::workers] for i in range(workers)]

    async def worker(chunk: list[str]) -> None:
        for q in chunk:
            await store.search(q, limit=5)

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for chunk in chunks:
            tg.start_soon(worker, chunk)
    return len(qs) / (time.perf_counter() - start)


async def main(args: argparse.Namespace) -> None:
    rng = random.Random(42)
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        texts, _ = corpus(rng, args.items)
        items = [MemoryItem(id=f"m{i}", content=t, namespace=f"ns{i % 10}", metadata={"n": i})
                 for i, t in enumerate(texts)]
        store = SqliteMemoryStore(Path(tmp) / "memory.db")
        start = time.perf_counter()
        await store.add_many(items)
        bulk = len(items) / (time.perf_counter() - start)
        rows.append(("insert, bulk add_many (1 txn)", f"{args.items:,}", f"{bulk:,.0f} items/s", ""))
        singles = [lambda i=i: store.add(f"single note {i} " + texts[i], namespace="singles")
                   for i in range(args.singles)]
        lat = await timed(singles)
        rate = 1000 / statistics.mean(lat)
        rows.append(("insert, add() one by one", f"{args.singles}", f"{rate:,.0f} items/s",
                     f"p50 {pct(lat, 0.5):.2f} ms  p95 {pct(lat, 0.95):.2f} ms"))

        qs = queries(rng, texts, args.queries)
        retriever = KeywordRetriever(store)
        for q in qs[:20]:  # warm the page cache
            await retriever.retrieve(q)
        lat = await timed([lambda q=q: retriever.retrieve(q, limit=5) for q in qs])
        hits = [len(await retriever.retrieve(q)) for q in qs[:50]]
        p50 = pct(lat, 0.5)
        verdict = "OK" if p50 < TARGET_P50_MS else f"ABOVE {TARGET_P50_MS} ms target"
        rows.append(("keyword search, limit 5", f"{args.items:,}",
                     f"p50 {p50:.2f} ms  p95 {pct(lat, 0.95):.2f} ms",
                     f"{verdict}; mean hits {statistics.mean(hits):.1f}"))
        lat = await timed([lambda q=q: store.search(q, limit=5, namespace="ns3") for q in qs])
        rows.append(("keyword search, 1 namespace", f"{args.items:,}",
                     f"p50 {pct(lat, 0.5):.2f} ms  p95 {pct(lat, 0.95):.2f} ms", ""))
        pooled = await parallel_qps(store, qs)
        await store.aclose()
        shared = SqliteMemoryStore(Path(tmp) / "memory.db", shared_connection=True)
        await shared.search(qs[0])
        locked = await parallel_qps(shared, qs)
        await shared.aclose()
        rows.append(("8 parallel searchers, pool", f"{args.items:,}", f"{pooled:,.0f} queries/s", "default"))
        rows.append(("8 parallel searchers, shared+lock", f"{args.items:,}", f"{locked:,.0f} queries/s", ""))

        vstore = SqliteMemoryStore(Path(tmp) / "vectors.db")
        await vstore.add_many(items[: args.vector_items])
        embedding = EmbeddingRetriever(vstore, HashingEmbedder(256), batch_size=512)
        start = time.perf_counter()
        await embedding.index()
        rate = args.vector_items / (time.perf_counter() - start)
        rows.append(("embed + store vectors (hashing-256)", f"{args.vector_items:,}",
                     f"{rate:,.0f} items/s", ""))
        lat = await timed([lambda q=q: embedding.retrieve(q, limit=5) for q in qs[: args.vector_queries]])
        rows.append(("embedding search, exhaustive cosine", f"{args.vector_items:,}",
                     f"p50 {pct(lat, 0.5):.1f} ms  p95 {pct(lat, 0.95):.1f} ms", "pure Python, O(N)"))
        await vstore.aclose()
        total = time.perf_counter() - began

    import sqlite3

    print(f"SqliteMemoryStore, SQLite {sqlite3.sqlite_version}, {args.queries} queries, run {total:.0f} s\n")
    widths = [max(len(r[i]) for r in [*rows, ("what", "N", "result", "note")]) for i in range(4)]
    for row in [("what", "N", "result", "note"), *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--singles", type=int, default=500)
    parser.add_argument("--vector-items", type=int, default=10_000)
    parser.add_argument("--vector-queries", type=int, default=30)
    anyio.run(main, parser.parse_args())
