"""``SessionStore``: the in-memory and SQLite stores behave alike; SQLite on real files, shared safely."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from agcore.memory import (
    InMemorySessionStore,
    MemoryStoreError,
    SessionRecord,
    SessionStore,
    SqliteSessionStore,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    if request.param == "memory":
        yield InMemorySessionStore()
    else:
        async with SqliteSessionStore(tmp_path / "sessions.db") as sqlite_store:
            yield sqlite_store


def record(session_id: str = "s1", **fields: object) -> SessionRecord:
    return SessionRecord.model_validate({"session_id": session_id, "agent_name": "helper", **fields})


def msg(i: int) -> str:
    return json.dumps({"kind": "user", "content": f"message {i}"})


# ------------------------------------------------------------------------------ the contract


async def test_store_satisfies_the_protocol(store: SessionStore) -> None:
    assert isinstance(store, SessionStore)


async def test_create_load_and_messages_round_trip(store: SessionStore) -> None:
    created = await store.create(
        record(usage={"calls": 1}, state={"pending": None, "queue": ["a"]}, created_at=100.0,
               turn_index=2)
    )
    assert created.message_count == 0
    assert await store.append_messages("s1", [msg(1), msg(2)]) == 2
    assert await store.append_messages("s1", [msg(3)]) == 3
    assert await store.append_messages("s1", []) == 3
    loaded = await store.load("s1")
    assert loaded is not None
    assert (loaded.agent_name, loaded.created_at, loaded.turn_index) == ("helper", 100.0, 2)
    assert loaded.usage == {"calls": 1}
    assert loaded.state == {"pending": None, "queue": ["a"]}
    assert loaded.message_count == 3
    assert await store.load_messages("s1") == [msg(1), msg(2), msg(3)]


async def test_unknown_session_loads_as_none_and_writes_fail(store: SessionStore) -> None:
    assert await store.load("nope") is None
    assert await store.load_messages("nope") == []
    with pytest.raises(MemoryStoreError, match=r"no session 'nope'.*create it first"):
        await store.append_messages("nope", [msg(1)])
    with pytest.raises(MemoryStoreError, match="no session 'nope'"):
        await store.save_state(record("nope"))
    with pytest.raises(MemoryStoreError, match="no session 'nope'"):
        await store.replace_messages("nope", [msg(1)])
    assert await store.delete("nope") is False


async def test_creating_an_existing_session_fails_and_keeps_it(store: SessionStore) -> None:
    await store.create(record(turn_index=1))
    await store.append_messages("s1", [msg(1)])
    with pytest.raises(MemoryStoreError, match=r"already exists.*AgentSession\.load"):
        await store.create(record(turn_index=9))
    loaded = await store.load("s1")
    assert loaded is not None
    assert loaded.turn_index == 1
    assert loaded.message_count == 1


async def test_save_state_and_append_with_record_update_the_state(store: SessionStore) -> None:
    await store.create(record(created_at=50.0))
    before = await store.load("s1")
    assert before is not None
    await store.save_state(record(turn_index=3, usage={"calls": 2}, state={"x": 1}, expires_at=999.0))
    after = await store.load("s1")
    assert after is not None
    saved = (after.turn_index, after.usage, after.state, after.expires_at)
    assert saved == (3, {"calls": 2}, {"x": 1}, 999.0)
    assert after.created_at == 50.0  # fixed at creation
    assert after.updated_at >= before.updated_at
    await store.append_messages("s1", [msg(1)], record=record(turn_index=4, state={"x": 2}))
    again = await store.load("s1")
    assert again is not None
    assert (again.turn_index, again.state, again.message_count) == (4, {"x": 2}, 1)


async def test_replace_messages_renumbers_the_history(store: SessionStore) -> None:
    await store.create(record())
    await store.append_messages("s1", [msg(i) for i in range(5)])
    assert await store.replace_messages("s1", [msg(100), msg(101)], record=record(turn_index=7)) == 2
    assert await store.load_messages("s1") == [msg(100), msg(101)]
    assert await store.append_messages("s1", [msg(102)]) == 3
    assert await store.load_messages("s1") == [msg(100), msg(101), msg(102)]
    loaded = await store.load("s1")
    assert loaded is not None
    assert loaded.turn_index == 7


async def test_list_sessions_filters_orders_and_pages(store: SessionStore) -> None:
    now = time.time()
    await store.create(record("a", agent_name="x"))
    await store.create(record("b", agent_name="y", expires_at=now - 1))
    await store.create(record("c", agent_name="x", expires_at=now + 3600))
    await anyio.sleep(0.01)
    await store.append_messages("a", [msg(1)])  # a is now the most recently updated
    ids = [r.session_id for r in await store.list_sessions()]
    assert ids[0] == "a"
    assert sorted(ids) == ["a", "b", "c"]
    assert {r.session_id for r in await store.list_sessions(agent_name="x")} == {"a", "c"}
    assert {r.session_id for r in await store.list_sessions(include_expired=False)} == {"a", "c"}
    listed = await store.list_sessions()
    assert [r.message_count for r in listed if r.session_id == "a"] == [1]
    assert [r.expired() for r in listed if r.session_id == "b"] == [True]
    page = await store.list_sessions(limit=1, offset=1)
    assert [r.session_id for r in page] == [ids[1]]


async def test_delete_removes_the_session_and_its_messages(store: SessionStore) -> None:
    await store.create(record())
    await store.append_messages("s1", [msg(1)])
    assert await store.delete("s1") is True
    assert await store.load("s1") is None
    assert await store.load_messages("s1") == []
    await store.create(record())  # the id is free again, with no old messages
    assert await store.load_messages("s1") == []


async def test_non_text_messages_are_refused(store: SessionStore) -> None:
    await store.create(record())
    with pytest.raises(TypeError, match="JSON text"):
        await store.append_messages("s1", [{"kind": "user"}])  # type: ignore[list-item]
    assert await store.load_messages("s1") == []


async def test_in_memory_store_hands_out_copies() -> None:
    store = InMemorySessionStore()
    await store.create(record(state={"a": [1]}))
    loaded = await store.load("s1")
    assert loaded is not None
    loaded.state["a"].append(2)
    again = await store.load("s1")
    assert again is not None
    assert again.state == {"a": [1]}


# ------------------------------------------------------------------------------------ SQLite


async def test_sqlite_survives_reopening_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SqliteSessionStore(path) as first:
        await first.create(record(state={"k": "v"}))
        await first.append_messages("s1", [msg(1), msg(2)])
    async with SqliteSessionStore(path) as second:
        loaded = await second.load("s1")
        assert loaded is not None
        assert loaded.state == {"k": "v"}
        assert await second.load_messages("s1") == [msg(1), msg(2)]
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)


async def test_sqlite_two_stores_on_one_file_interleave(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SqliteSessionStore(path) as a, SqliteSessionStore(path) as b:
        await a.create(record("x"))
        await b.create(record("y"))

        async def write(store: SqliteSessionStore, sid: str) -> None:
            for i in range(30):
                await store.append_messages(sid, [msg(i)])

        async with anyio.create_task_group() as group:
            for store, sid in ((a, "x"), (b, "y"), (a, "y"), (b, "x")):
                group.start_soon(write, store, sid)
        for sid in ("x", "y"):
            stored = await a.load_messages(sid)
            assert len(stored) == 60
            assert sorted(stored) == sorted([msg(i) for i in range(30)] * 2)


async def test_sqlite_waits_for_a_lock_without_blocking_the_event_loop(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SqliteSessionStore(path) as store:
        await store.create(record())
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process holding the write lock
        ticks = 0
        done = anyio.Event()

        async def tick() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await anyio.sleep(0.005)

        async def release() -> None:
            await anyio.sleep(0.2)
            holder.execute("COMMIT")

        async with anyio.create_task_group() as group:
            group.start_soon(tick)
            group.start_soon(release)
            assert await store.append_messages("s1", [msg(1)]) == 1
            done.set()
        holder.close()
        assert ticks >= 10  # the loop kept running while the write waited for the lock


async def test_sqlite_lock_held_past_busy_timeout_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SqliteSessionStore(path, busy_timeout=0.05) as store:
        await store.create(record())
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(MemoryStoreError, match="busy_timeout"):
                await store.append_messages("s1", [msg(1)])
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert await store.append_messages("s1", [msg(2)]) == 1  # nothing half-written before


async def test_sqlite_bad_file_and_closed_store_are_clear_errors(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(MemoryStoreError, match="SQLite"):
        await SqliteSessionStore(bad).load("s1")
    store = SqliteSessionStore(tmp_path / "ok.db")
    await store.create(record())
    await store.aclose()
    with pytest.raises(MemoryStoreError, match="closed"):
        await store.load("s1")
    with pytest.raises(ValueError, match="synchronous"):
        SqliteSessionStore(tmp_path / "x.db", synchronous="SOMETIMES")  # type: ignore[arg-type]
