"""Retrievers (keyword, embedding with ``HashingEmbedder``, hybrid) and the bundle's ``retrieve`` /
``remember`` tools over a real ``SqliteMemoryStore``."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agcore.agent import AgentBuilder
from agcore.llm.types import ToolUseBlock
from agcore.memory import (
    Embedder,
    EmbeddingRetriever,
    HashingEmbedder,
    HybridRetriever,
    InMemoryStore,
    KeywordRetriever,
    MemoryStoreError,
    RetrievedItem,
    Retriever,
    SqliteMemoryStore,
)
from agcore.testing import ScriptedProvider
from agcore.tools import ToolContext

NOTES = {
    "tea": "The user prefers green tea in the morning, never coffee.",
    "deploy": "Production deployments run on Fridays after the weekly review.",
    "db": "The database migration to PostgreSQL 16 finished in March.",
    "cat": "The user's cat is called Miso and is afraid of the vacuum cleaner.",
    "trip": "Flight to Lisbon on 12 May; the hotel is near the river.",
}


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[SqliteMemoryStore]:
    async with SqliteMemoryStore(tmp_path / "memory.db") as store:
        for id, text in NOTES.items():
            await store.add(text, id=id, namespace="work" if id in {"deploy", "db"} else "home")
        yield store


class CountingEmbedder:
    """HashingEmbedder that counts the texts it embeds."""

    name = "counting"

    def __init__(self) -> None:
        self.inner = HashingEmbedder(64)
        self.texts: list[str] = []

    async def embed(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return await self.inner.embed(texts)


# ---------------------------------------------------------------------------------- keyword


@pytest.mark.anyio
async def test_keyword_retriever_ranks_by_bm25_and_honours_namespaces(
    sqlite_store: SqliteMemoryStore,
) -> None:
    retriever = KeywordRetriever(sqlite_store)
    assert isinstance(retriever, Retriever)
    hits = await retriever.retrieve("when do deployments run", limit=3)
    assert hits[0].id == "deploy"
    assert hits[0].score > 0
    assert await retriever.retrieve("deployments", namespace="home") == []
    assert [h.id for h in await retriever.retrieve("the user", namespace="home", limit=10)] != []


@pytest.mark.anyio
async def test_keyword_retriever_applies_its_metadata_filter(tmp_path: Path) -> None:
    async with SqliteMemoryStore(tmp_path / "m.db") as store:
        await store.add("rotate the api keys", metadata={"team": "sec"}, id="s")
        await store.add("rotate the pizza oven", metadata={"team": "kitchen"}, id="k")
        retriever = KeywordRetriever(store, metadata={"team": "sec"})
        assert [h.id for h in await retriever.retrieve("rotate")] == ["s"]


# -------------------------------------------------------------------------------- embedding


@pytest.mark.anyio
async def test_hashing_embedder_is_deterministic_normalised_and_shares_subwords() -> None:
    embedder = HashingEmbedder(128)
    assert isinstance(embedder, Embedder)
    a, b, c, empty = await embedder.embed(["deployments on Friday", "deployment on fridays",
                                           "a cat named Miso", ""])
    assert a == (await HashingEmbedder(128).embed(["deployments on Friday"]))[0]
    assert len(a) == 128
    assert math.isclose(math.sqrt(sum(x * x for x in a)), 1.0, rel_tol=1e-9)
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    assert dot > 0.5 > sum(x * y for x, y in zip(a, c, strict=True))
    assert empty == [0.0] * 128
    with pytest.raises(ValueError, match="at least 8"):
        HashingEmbedder(4)


@pytest.mark.anyio
async def test_embedding_retriever_finds_near_spellings_over_sqlite(sqlite_store: SqliteMemoryStore) -> None:
    retriever = EmbeddingRetriever(sqlite_store, HashingEmbedder())
    assert isinstance(retriever, Retriever)
    # No shared word with the note: only the character n-grams connect them.
    hits = await retriever.retrieve("deploymnts on fridayz", limit=2)
    assert hits[0].id == "deploy"
    assert -1.0 <= hits[-1].score <= hits[0].score <= 1.0
    assert await KeywordRetriever(sqlite_store).retrieve("deploymnts fridayz") == []
    work = await retriever.retrieve("cat vacuum", namespace="work", limit=10)
    assert {h.id for h in work} == {"deploy", "db"}


@pytest.mark.anyio
async def test_vectors_persist_in_the_file_and_follow_item_changes(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    async with SqliteMemoryStore(path) as store:
        for id, text in NOTES.items():
            await store.add(text, id=id)
        embedder = CountingEmbedder()
        retriever = EmbeddingRetriever(store, embedder, batch_size=2)
        assert await retriever.index() == len(NOTES)
        assert await retriever.index() == 0
    async with SqliteMemoryStore(path) as store:
        embedder = CountingEmbedder()
        retriever = EmbeddingRetriever(store, embedder)
        await retriever.retrieve("green tea")
        assert embedder.texts == ["green tea"]  # the items' vectors came from the file
        await store.add("The user now drinks black coffee only.", id="tea")
        await store.delete("cat")
        hits = await retriever.retrieve("black coffee", limit=10)
        assert hits[0].id == "tea"
        assert "cat" not in {h.id for h in hits}
        assert embedder.texts[1:] == ["The user now drinks black coffee only.", "black coffee"]
        # Another embedder keeps its own vectors.
        other = CountingEmbedder()
        other.name = "other"
        await EmbeddingRetriever(store, other).index()
        assert len(other.texts) == len(NOTES) - 1


@pytest.mark.anyio
async def test_embedding_retriever_over_an_in_memory_store() -> None:
    store = InMemoryStore()
    for id, text in NOTES.items():
        await store.add(text, id=id)
    embedder = CountingEmbedder()
    retriever = EmbeddingRetriever(store, embedder, min_score=0.0)
    assert (await retriever.retrieve("Lisbon hotel river"))[0].id == "trip"
    await store.add("Flight to Porto instead; hotel by the sea.", id="trip")
    assert (await retriever.retrieve("Porto sea"))[0].id == "trip"
    assert embedder.texts.count("Flight to Porto instead; hotel by the sea.") == 1
    assert all(h.score > 0 for h in await retriever.retrieve("zzzz qqqq", limit=10))


@pytest.mark.anyio
async def test_an_embedder_returning_the_wrong_number_of_vectors_is_reported(
    sqlite_store: SqliteMemoryStore,
) -> None:
    class Broken:
        async def embed(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0]]

    with pytest.raises(ValueError, match="one vector per text"):
        await EmbeddingRetriever(sqlite_store, Broken(), batch_size=3).retrieve("tea")


# ----------------------------------------------------------------------------------- hybrid


class Fixed:
    """A retriever returning fixed hits, best first."""

    def __init__(self, store_items: dict[str, Any], ids: list[str], fail: bool = False) -> None:
        self.items, self.ids, self.fail = store_items, ids, fail

    async def retrieve(
        self, query: str, *, limit: int = 5, namespace: str | None = None
    ) -> list[RetrievedItem]:
        if self.fail:
            raise MemoryStoreError("index offline: try later")
        return [RetrievedItem(item=self.items[i], score=100.0 - n) for n, i in enumerate(self.ids[:limit])]


@pytest.mark.anyio
async def test_hybrid_fuses_ranks_so_agreement_wins() -> None:
    store = InMemoryStore()
    items = {i: await store.add(i, id=i) for i in "abcde"}
    hybrid = HybridRetriever(Fixed(items, ["a", "b", "c"]), Fixed(items, ["c", "d", "a"]), k=60)
    hits = await hybrid.retrieve("q", limit=3)
    assert [h.id for h in hits] == ["a", "c", "b"]
    assert math.isclose(hits[0].score, 1 / 61 + 1 / 63)
    weighted = HybridRetriever(Fixed(items, ["a", "b"]), Fixed(items, ["d"]), weights=(1.0, 3.0))
    assert [h.id for h in await weighted.retrieve("q")] == ["d", "a", "b"]
    with pytest.raises(ValueError, match="at least one"):
        HybridRetriever()
    with pytest.raises(ValueError, match="one weight per retriever"):
        HybridRetriever(Fixed(items, []), weights=(1.0, 2.0))


@pytest.mark.anyio
async def test_hybrid_failure_is_the_retrievers_own_error() -> None:
    items = {"a": await InMemoryStore().add("a", id="a")}
    hybrid = HybridRetriever(Fixed(items, ["a"]), Fixed(items, [], fail=True))
    with pytest.raises(MemoryStoreError, match="index offline"):
        await hybrid.retrieve("q")


@pytest.mark.anyio
async def test_hybrid_of_keyword_and_embedding_over_sqlite(sqlite_store: SqliteMemoryStore) -> None:
    embedding = EmbeddingRetriever(sqlite_store, HashingEmbedder())
    hybrid = HybridRetriever(KeywordRetriever(sqlite_store), embedding)
    assert (await hybrid.retrieve("green tea in the morning"))[0].id == "tea"
    assert (await hybrid.retrieve("deploymnts fridayz"))[0].id == "deploy"  # via the embedding side
    assert {h.id for h in await hybrid.retrieve("the user", namespace="work", limit=10)} <= {"deploy", "db"}
    assert await hybrid.retrieve("tea", limit=0) == []


# ------------------------------------------------------------------------------ bundle tools


def call(name: str, **arguments: Any) -> ToolUseBlock:
    return ToolUseBlock(id=f"call_{name}", name=name, input=arguments)


@pytest.mark.anyio
async def test_the_retrieve_tool_searches_a_sqlite_store_end_to_end(sqlite_store: SqliteMemoryStore) -> None:
    bundle = AgentBuilder().provider(ScriptedProvider()).retriever(KeywordRetriever(sqlite_store)).build()
    registry = bundle.tool_registry()
    result = await registry.execute(call("retrieve", query="what is the cat called?", limit=2), ToolContext())
    assert not result.is_error
    hits = json.loads(result.text)
    assert hits[0]["id"] == "cat"
    assert hits[0]["content"] == NOTES["cat"]
    assert hits[0]["score"] > 0
    assert set(hits[0]) == {"id", "score", "content", "metadata"}

    nothing = await registry.execute(call("retrieve", query="quantum zebra"), ToolContext())
    assert not nothing.is_error
    assert "Nothing found" in nothing.text
    hostile = await registry.execute(call("retrieve", query='"); DROP TABLE x; -- NEAR(*'), ToolContext())
    assert not hostile.is_error

    await sqlite_store.aclose()
    failed = await registry.execute(call("retrieve", query="cat"), ToolContext())
    assert failed.is_error
    assert "Memory search failed" in failed.text
    assert "closed" in failed.text


@pytest.mark.anyio
async def test_the_remember_tool_writes_what_retrieve_then_finds(tmp_path: Path) -> None:
    async with SqliteMemoryStore(tmp_path / "m.db") as store:
        bundle = (AgentBuilder().provider(ScriptedProvider()).memory_store(store, remember_tool=True)
                  .retriever(KeywordRetriever(store)).build())
        registry = bundle.tool_registry()
        stored = await registry.execute(call("remember", content="The staging server is called Tortoise."),
                                        ToolContext())
        assert not stored.is_error
        assert "Remembered" in stored.text
        result = await registry.execute(call("retrieve", query="staging server"), ToolContext())
        found = json.loads(result.text)
        assert found[0]["content"] == "The staging server is called Tortoise."
        assert found[0]["metadata"] == {"source": "agent"}
        assert (await store.get(found[0]["id"])) is not None
