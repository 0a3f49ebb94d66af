"""``SqliteMemoryStore`` specifics: real files, WAL, concurrent writers, durability, failures."""

from __future__ import annotations

import sqlite3
import threading
from functools import partial
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agcore.memory import MemoryItem, MemoryStoreError, SqliteMemoryStore
from agcore.memory._sqlite import fts_query

WRITERS = 20
PER_WRITER = 15


@pytest.mark.anyio
async def test_the_file_is_in_wal_mode_and_data_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SqliteMemoryStore(path)
    kept = await store.add("the office door code is 4711", namespace="facts", metadata={"by": "ops"})
    gone = await store.add("temporary", id="tmp")
    await store.delete(gone.id)
    await store.aclose()

    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    async with SqliteMemoryStore(path) as again:
        assert await again.get(kept.id) == kept
        assert await again.get("tmp") is None
        assert [h.id for h in await again.search("door code")] == [kept.id]
        assert await again.count() == 1


@pytest.mark.anyio
async def test_twenty_sessions_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"

    async def session(n: int) -> None:
        # Each writer is its own store (its own connections), as separate agent sessions would be.
        async with SqliteMemoryStore(path) as store:
            for k in range(PER_WRITER):
                await store.add(f"session {n} note {k} lighthouse", id=f"s{n}-{k}", namespace=f"s{n}")

    async with anyio.create_task_group() as tg:
        for n in range(WRITERS):
            tg.start_soon(session, n)

    async with SqliteMemoryStore(path) as store:
        assert await store.count() == WRITERS * PER_WRITER
        assert len(await store.list(namespace="s7")) == PER_WRITER
        assert len(await store.search("lighthouse", limit=1000)) == WRITERS * PER_WRITER


def test_twenty_threads_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "threads.db"
    errors: list[BaseException] = []

    def thread_main(n: int) -> None:
        async def write() -> None:
            async with SqliteMemoryStore(path) as store:
                for k in range(PER_WRITER):
                    await store.add(f"thread {n} note {k} harbour", id=f"t{n}-{k}")
                    await store.search("harbour")  # readers and writers interleave

        try:
            anyio.run(write)
        except BaseException as exc:  # reported below: a thread's exception is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=thread_main, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT count(*) FROM agcore_memory_items").fetchone()[0] == WRITERS * PER_WRITER
        sql = "SELECT count(*) FROM agcore_memory_fts WHERE agcore_memory_fts MATCH 'harbour'"
        assert raw.execute(sql).fetchone()[0] == WRITERS * PER_WRITER


@pytest.mark.anyio
async def test_one_store_shared_by_many_tasks(tmp_path: Path) -> None:
    async with SqliteMemoryStore(tmp_path / "m.db") as store:
        async with anyio.create_task_group() as tg:
            for n in range(WRITERS):
                tg.start_soon(partial(store.add, f"task {n} wrote this", namespace=f"ns{n % 3}"))
        assert await store.count() == WRITERS
        assert await store.count(namespace="ns0") == 7


@pytest.mark.anyio
async def test_sqlite_calls_run_off_the_event_loop(tmp_path: Path) -> None:
    loop_thread = threading.get_ident()
    async with SqliteMemoryStore(tmp_path / "m.db") as store:
        worker = await store._run(lambda conn: threading.get_ident())
    assert worker != loop_thread


@pytest.mark.anyio
async def test_bulk_add_many_is_one_transaction(tmp_path: Path) -> None:
    async with SqliteMemoryStore(tmp_path / "m.db") as store:
        items = [MemoryItem(id=f"i{n}", content=f"bulk item {n}") for n in range(500)]
        assert await store.add_many(items) == 500
        assert await store.count() == 500
        assert (await store.list(limit=1))[0] == items[0]
        with pytest.raises(ValueError, match="JSON-serialisable"):
            await store.add_many([MemoryItem(content="ok", id="new"),
                                  MemoryItem(content="bad", metadata={"x": object()})])
        assert await store.get("new") is None  # all or nothing


@pytest.mark.anyio
async def test_a_database_locked_past_busy_timeout_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    async with SqliteMemoryStore(path, busy_timeout=0.05) as store:
        await store.add("first")
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(MemoryStoreError, match=r"locked.*busy_timeout"):
                await store.add("second")
            assert len(await store.search("first")) == 1  # WAL: reads go on during the write lock
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        await store.add("second")  # and the store works again once the lock is gone
        assert await store.count() == 2


@pytest.mark.anyio
async def test_unusable_paths_and_closed_stores_raise_memory_store_error(tmp_path: Path) -> None:
    broken = SqliteMemoryStore(tmp_path / "no" / "such" / "dir" / "m.db")
    with pytest.raises(MemoryStoreError, match="failed"):
        await broken.add("x")
    not_sqlite = tmp_path / "text.db"
    not_sqlite.write_text("this is not a database " * 100)
    with pytest.raises(MemoryStoreError, match="SQLite"):
        await SqliteMemoryStore(not_sqlite).get("x")

    store = SqliteMemoryStore(tmp_path / "m.db")
    await store.add("x")
    await store.aclose()
    await store.aclose()  # idempotent
    with pytest.raises(MemoryStoreError, match="closed"):
        await store.search("x")


@pytest.mark.anyio
async def test_bad_metadata_is_a_value_error_naming_the_problem(tmp_path: Path) -> None:
    async with SqliteMemoryStore(tmp_path / "m.db") as store:
        with pytest.raises(ValueError, match="JSON-serialisable"):
            await store.add("x", metadata={"when": object()})
        with pytest.raises(ValueError, match="double quote"):
            await store.list(metadata={'we"ird': 1})
        assert await store.count() == 0


@pytest.mark.anyio
async def test_an_in_memory_database_works(tmp_path: Path) -> None:
    async with SqliteMemoryStore(":memory:") as store:
        async with anyio.create_task_group() as tg:
            for n in range(10):
                tg.start_soon(store.add, f"ephemeral note {n}")
        assert len(await store.search("ephemeral", limit=20)) == 10


@pytest.mark.anyio
async def test_the_shared_connection_mode_behaves_the_same(tmp_path: Path) -> None:
    async with SqliteMemoryStore(tmp_path / "m.db", shared_connection=True) as store:
        async with anyio.create_task_group() as tg:
            for n in range(10):
                tg.start_soon(store.add, f"shared note {n}")
        assert len(await store.search("shared", limit=20)) == 10


_FTS = sqlite3.connect(":memory:")
_FTS.execute("CREATE VIRTUAL TABLE t USING fts5 (text, tokenize = 'unicode61 remove_diacritics 2')")
_FTS.execute("INSERT INTO t VALUES ('anything at all')")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_makes_a_valid_fts_query(text: str) -> None:
    query = fts_query(text)
    if query is not None:
        _FTS.execute("SELECT rowid FROM t WHERE t MATCH ?", (query,)).fetchall()
        _FTS.execute("SELECT rowid FROM t WHERE t MATCH ?", (query.replace(" OR ", " AND "),)).fetchall()


@pytest.mark.anyio
async def test_reads_go_on_while_a_write_of_the_same_store_waits_for_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    async with SqliteMemoryStore(path, busy_timeout=10) as store:
        await store.add("already there", id="old")
        blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        blocker.execute("BEGIN IMMEDIATE")  # another process's writer, holding the lock
        written = anyio.Event()

        async def write() -> None:
            await store.add("waits for the lock", id="new")
            written.set()

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(write)
                await anyio.sleep(0.05)
                with anyio.fail_after(2):
                    assert [h.id for h in await store.search("already")] == ["old"]
                assert not written.is_set()  # the write is still waiting, not failed
                blocker.execute("ROLLBACK")
                with anyio.fail_after(5):
                    await written.wait()
        finally:
            blocker.close()
        assert (await store.get("new")) is not None
