"""``InMemoryStore``: a dict-backed ``MemoryStore`` (and keyword ``Retriever``) for tests and scripts.

Nothing is persisted. Search scores each item by the query terms it contains, weighted by how rare
each term is in the store (a plain tf-idf), so tests see the same "relevant first" behaviour as the
SQLite store without a database. Also home to the text segmentation both stores share.
"""

from __future__ import annotations

import builtins
import math
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from agcore.memory._protocols import DEFAULT_NAMESPACE, MemoryItem, RetrievedItem

__all__ = ["InMemoryStore"]

# Scripts written without spaces between words: Han, kana, Hangul (and their compatibility blocks).
_CJK = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff"
)
CJK_CHAR = re.compile(f"[{_CJK}]")
_CJK_RUN = re.compile(f"[{_CJK}]+")
# A term: a run of letters/digits outside CJK, or one CJK character.
_TERM = re.compile(f"[{_CJK}]|(?:(?![{_CJK}])[^\\W_])+")

# Function words that match nearly every English text: dropped from queries when other terms remain,
# because they cost the most to look up and say the least about relevance.
_STOP_TEXT = """a an and are as at be by do does did for from has have how i in is it its of on or so that the
their them they this to was we were what when where which who why will with you your"""
STOPWORDS = frozenset(_STOP_TEXT.split())


def terms(text: str) -> list[str]:
    """Lower-cased search terms: words, and CJK text one character at a time."""
    return [t.lower() for t in _TERM.findall(text)]


def query_terms(text: str) -> list[str]:
    """The terms of a query without stop words (all of them when only stop words are left), in
    order, without repeats. CJK runs become overlapping character bigrams: Chinese and Japanese words
    are mostly two characters, and there is no dictionary here to segment them."""
    found: list[str] = []
    for chunk in text.split():
        for piece in _TERM.findall(chunk):
            found.append(piece.lower())
    words = [t for t in found if not CJK_CHAR.match(t)]
    out: list[str] = []
    for run in _CJK_RUN.findall(text):
        out.extend(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    content_words = [w for w in words if w not in STOPWORDS]
    out = (content_words or words) + out
    return list(dict.fromkeys(out))


def metadata_matches(metadata: Mapping[str, Any], wanted: Mapping[str, Any] | None) -> bool:
    if not wanted:
        return True
    return all(key in metadata and metadata[key] == value for key, value in wanted.items())


class InMemoryStore:
    """A ``MemoryStore`` in a dict, and its own keyword ``Retriever``. For tests and throwaway use."""

    def __init__(self) -> None:
        self._items: dict[str, MemoryItem] = {}
        self._terms: dict[str, Counter[str]] = {}

    async def add(
        self,
        content: str,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        metadata: Mapping[str, Any] | None = None,
        id: str | None = None,
    ) -> MemoryItem:
        """Store ``content`` and return the stored item; an existing ``id`` is replaced."""
        item = MemoryItem.new(content, namespace=namespace, metadata=metadata, id=id)
        # Re-insert so that a replaced item is ordered by its new created_at like in SQLite.
        self._items.pop(item.id, None)
        self._items[item.id] = item
        self._terms[item.id] = Counter(terms(content))
        return item

    async def get(self, id: str) -> MemoryItem | None:
        """The item ``id``, or None."""
        return self._items.get(id)

    async def delete(self, id: str) -> bool:
        """Remove item ``id``; True if it existed."""
        self._terms.pop(id, None)
        return self._items.pop(id, None) is not None

    def _filtered(self, namespace: str | None, metadata: Mapping[str, Any] | None) -> list[MemoryItem]:
        return [
            item for item in self._items.values()
            if (namespace is None or item.namespace == namespace)
            and metadata_matches(item.metadata, metadata)
        ]

    async def list(
        self,
        *,
        namespace: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> builtins.list[MemoryItem]:
        """Items oldest first, filtered by ``namespace`` and ``metadata`` (every key equal), a page of
        ``limit`` from ``offset``."""
        items = sorted(self._filtered(namespace, metadata), key=lambda i: (i.created_at, i.id))
        end = None if limit is None else offset + max(0, limit)
        return items[max(0, offset):end]

    async def search(
        self,
        query: str,
        *,
        limit: int = 5,
        namespace: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> builtins.list[RetrievedItem]:
        """At most ``limit`` items matching ``query``'s terms, best first, scored by term frequency and
        rarity (a simple TF-IDF, not SQLite's BM25: scores differ from ``SqliteMemoryStore``'s)."""
        wanted = query_terms(query)
        if not wanted or limit <= 0:
            return []
        candidates = self._filtered(namespace, metadata)
        total = len(self._items)
        idf = {}
        for term in wanted:
            df = sum(1 for c in self._terms.values() if _count(c, term))
            idf[term] = math.log(1.0 + total / df) if df else 0.0
        hits: list[RetrievedItem] = []
        for item in candidates:
            counts = self._terms[item.id]
            score = 0.0
            for term in wanted:
                tf = _count(counts, term)
                if tf:
                    score += (1.0 + math.log(tf)) * idf[term]
            if score > 0:
                hits.append(RetrievedItem(item=item, score=score))
        hits.sort(key=lambda h: (-h.score, h.item.created_at, h.item.id))
        return hits[:limit]

    async def retrieve(
        self, query: str, *, limit: int = 5, namespace: str | None = None
    ) -> builtins.list[RetrievedItem]:
        """``search`` as a ``Retriever`` (no metadata filter)."""
        return await self.search(query, limit=limit, namespace=namespace)

    async def aclose(self) -> None:
        """Nothing to release; here so code can close any store the same way."""


def _count(counts: Counter[str], term: str) -> int:
    if len(term) == 2 and CJK_CHAR.match(term):
        # A CJK bigram: both characters are present (adjacency is not tracked here).
        return min(counts.get(term[0], 0), counts.get(term[1], 0))
    return counts.get(term, 0)
