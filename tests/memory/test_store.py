"""The ``MemoryStore`` contract, on ``InMemoryStore`` and on ``SqliteMemoryStore`` over a real file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agcore.memory import (
    DEFAULT_NAMESPACE,
    InMemoryStore,
    MemoryStore,
    Retriever,
    SqliteMemoryStore,
)

NOTES = [
    ("tea", "The user prefers green tea in the morning, never coffee."),
    ("deploy", "Production deploys run on Fridays after the weekly review."),
    ("db", "The database migration to PostgreSQL 16 finished in March."),
    ("cat", "The user's cat is called Miso and is afraid of the vacuum cleaner."),
    ("trip", "Flight to Lisbon on 12 May; the hotel is near the river."),
]


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield InMemoryStore()
        return
    sqlite = SqliteMemoryStore(tmp_path / "memory.db")
    yield sqlite
    await sqlite.aclose()


async def fill(store: Any) -> None:
    for id, text in NOTES:
        await store.add(text, id=id, metadata={"topic": id})


@pytest.mark.anyio
async def test_both_stores_satisfy_the_protocols(store: Any) -> None:
    assert isinstance(store, MemoryStore)
    assert isinstance(store, Retriever)


@pytest.mark.anyio
async def test_add_get_delete(store: Any) -> None:
    before = datetime.now(UTC)
    item = await store.add("remember the milk", metadata={"source": "user", "n": 3})
    assert item.id
    assert item.namespace == DEFAULT_NAMESPACE
    assert before <= item.created_at <= datetime.now(UTC)
    got = await store.get(item.id)
    assert got == item  # content, metadata and the timestamp (to the microsecond) round-trip
    assert await store.get("missing") is None
    assert await store.delete(item.id) is True
    assert await store.get(item.id) is None
    assert await store.delete(item.id) is False
    assert await store.search("milk") == []


@pytest.mark.anyio
async def test_add_with_an_existing_id_replaces_the_item_and_its_search_text(store: Any) -> None:
    await store.add("the wifi password is hunter2", id="wifi", namespace="home", metadata={"v": 1})
    await store.add("the wifi password is swordfish", id="wifi", namespace="office", metadata={"v": 2})
    items = await store.list()
    assert len(items) == 1
    assert items[0].content == "the wifi password is swordfish"
    assert (items[0].namespace, items[0].metadata) == ("office", {"v": 2})
    assert await store.search("hunter2") == []
    assert [h.id for h in await store.search("swordfish")] == ["wifi"]


@pytest.mark.anyio
async def test_namespaces_separate_items_and_none_means_all(store: Any) -> None:
    await store.add("alice likes jazz", namespace="alice", id="a1")
    await store.add("bob likes jazz too", namespace="bob", id="b1")
    assert [h.id for h in await store.search("jazz", namespace="alice")] == ["a1"]
    assert {h.id for h in await store.search("jazz")} == {"a1", "b1"}
    assert [i.id for i in await store.list(namespace="bob")] == ["b1"]
    assert await store.list(namespace="carol") == []
    assert [h.id for h in await store.retrieve("jazz", namespace="bob")] == ["b1"]


@pytest.mark.anyio
async def test_metadata_filters_need_every_key_with_an_equal_value(store: Any) -> None:
    await store.add("one", id="1", metadata={"kind": "fact", "level": 1, "ok": True, "tags": {"a": [1, 2]}})
    await store.add("two", id="2", metadata={"kind": "fact", "level": 2, "ok": False, "gone": None})
    await store.add("three", id="3", metadata={"kind": "note", "level": "1"})

    async def ids(**filters: Any) -> list[str]:
        return [i.id for i in await store.list(metadata=filters)]

    assert await ids(kind="fact") == ["1", "2"]
    assert await ids(kind="fact", level=2) == ["2"]
    assert await ids(level=1) == ["1"]  # the string "1" is not the number 1
    assert await ids(level="1") == ["3"]
    assert await ids(ok=True) == ["1"]
    assert await ids(ok=False) == ["2"]
    assert await ids(gone=None) == ["2"]  # the key must be there, holding null
    assert await ids(tags={"a": [1, 2]}) == ["1"]
    assert await ids(tags={"a": [2, 1]}) == []
    assert await ids(kind="fact", missing="x") == []
    hits = await store.search("one two three", metadata={"kind": "fact"})
    assert {h.id for h in hits} == {"1", "2"}


@pytest.mark.anyio
async def test_list_is_oldest_first_and_pages(store: Any) -> None:
    for n in range(7):
        await store.add(f"note {n}", id=f"n{n}")
    everything = await store.list()
    assert [i.id for i in everything] == [f"n{n}" for n in range(7)]
    assert [i.created_at for i in everything] == sorted(i.created_at for i in everything)
    pages = [await store.list(limit=3, offset=o) for o in (0, 3, 6, 9)]
    assert [[i.id for i in p] for p in pages] == [["n0", "n1", "n2"], ["n3", "n4", "n5"], ["n6"], []]
    assert [i.id for i in await store.list(offset=5)] == ["n5", "n6"]
    assert await store.list(limit=0) == []


@pytest.mark.anyio
async def test_the_relevant_item_ranks_first(store: Any) -> None:
    await fill(store)
    for query, expected in [
        ("what does the user drink in the morning? tea", "tea"),
        ("when are deploys to production", "deploy"),
        ("postgresql migration", "db"),
        ("Miso the cat", "cat"),
        ("LISBON hotel", "trip"),
    ]:
        hits = await store.search(query)
        assert hits, query
        assert hits[0].id == expected, (query, [h.id for h in hits])
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(await store.search("the user", limit=1)) == 1
    assert await store.search("tea", limit=0) == []
    assert await store.search("zebra quantum") == []


@pytest.mark.anyio
async def test_an_item_with_every_term_beats_one_with_some(store: Any) -> None:
    await store.add("green apples and red cherries", id="both")
    await store.add("green grass", id="green")
    await store.add("apples apples", id="apples")
    hits = await store.search("green apples")
    assert hits[0].id == "both"
    assert {h.id for h in hits} == {"both", "green", "apples"}


HOSTILE = [
    '"', '""', "'", 'foo"bar', "a AND", "OR", "NOT x", "AND OR NOT", "NEAR(a b)", "x NEAR/2 y",
    "-", "--verbose", "-tea", "col:tea", "content:tea", "tea:", ":", "*", "te*", "^tea", "tea^",
    "(tea", "tea)", "()", "{a b}", "[x]", "+", "tea + coffee", "a:b:c", "\\", "%", "_", ";", "' OR 1=1 --",
    "\x00", "\t\n", "", "   ", "🙂", "tea 🙂 coffee", "e\u0301", "∑∫", "a" * 5000, "tea " * 300,
]


@pytest.mark.anyio
async def test_hostile_query_text_never_raises(store: Any) -> None:
    await fill(store)
    for query in HOSTILE:
        hits = await store.search(query)
        assert isinstance(hits, list), query
        hits = await store.search(query, namespace="default", metadata={"topic": "tea"})
        assert all(h.id == "tea" for h in hits), query


@pytest.mark.anyio
async def test_operators_in_queries_are_plain_words(store: Any) -> None:
    await fill(store)
    # "-tea" is not "NOT tea", "col:" is not a column filter, "te*" is not a prefix query.
    assert [h.id for h in await store.search("-tea")][:1] == ["tea"]
    assert [h.id for h in await store.search('"coffee"')][:1] == ["tea"]
    assert [h.id for h in await store.search("review: deploys")][:1] == ["deploy"]


@pytest.mark.anyio
async def test_cjk_text_is_searchable(store: Any) -> None:
    await store.add("我住在北京\uff0c喜欢吃烤鸭\u3002", id="zh")
    await store.add("東京の天気は晴れです", id="ja")
    await store.add("서울은 한국의 수도입니다", id="ko")
    await store.add("The capital of China is Beijing.", id="en")
    assert [h.id for h in await store.search("北京")] == ["zh"]  # a two-character word
    assert [h.id for h in await store.search("烤鸭好吃吗")][:1] == ["zh"]  # inside a longer question
    assert {h.id for h in await store.search("京")} == {"zh", "ja"}  # one character: 北京, 東京
    assert [h.id for h in await store.search("天気")] == ["ja"]
    assert [h.id for h in await store.search("서울")] == ["ko"]
    assert {h.id for h in await store.search("Beijing 北京")} == {"zh", "en"}
    assert await store.search("上海") == []


@pytest.mark.anyio
async def test_sqlite_search_folds_case_and_accents(tmp_path: Path) -> None:
    async with SqliteMemoryStore(tmp_path / "m.db") as store:
        await store.add("un café au lait à Paris", id="fr")
        assert [h.id for h in await store.search("cafe a paris")] == ["fr"]
        assert [h.id for h in await store.search("CAFÉ")] == ["fr"]


@pytest.mark.anyio
async def test_keyword_scores_say_how_good_a_hit_is_even_in_a_tiny_store(store: Any) -> None:
    # FTS5 floors a term found in most items at a weight of 0.000001: a single stored item used to
    # score 0.0 in the retrieve tool's rounded output.
    await store.add("The deploy key lives in vault path secret/deploy")
    [hit] = await store.search("deploy key")
    assert round(hit.score, 4) > 0
    await store.add("Deploys run from the deploy branch; the key is rotated monthly")
    await store.add("Lunch is at noon")
    hits = await store.search("deploy key")
    assert len(hits) == 2
    assert all(round(h.score, 4) > 0 for h in hits)
    assert hits[0].score >= hits[1].score
