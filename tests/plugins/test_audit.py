"""``AuditLogPlugin`` on real runs: the records of a turn, in order, in the right file, tied by one trace
id per turn; bounded previews; every ending (error, limit, cancellation, client pause) recorded; many
writers at once; a log that cannot be written never breaks the run."""

from __future__ import annotations

import logging
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from agcore.agent import AgentConfig, DefaultTaskAgent, Plan
from agcore.llm import RateLimitError, ToolResultBlock, ToolUseBlock
from agcore.plugins import AUDIT_EVENTS, AuditLogPlugin
from agcore.testing import ScriptedProvider, tool_call_reply, tool_calls_reply
from agcore.tools import Tool, tool

from ._support import BIG, DenyD, mixed_batch, read_jsonl, session_with

pytestmark = pytest.mark.anyio

FINAL = "All done. " + "y" * 500


def events(records: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(r["event"], r["data"].get("call_id")) for r in records]


async def test_a_turn_is_recorded_in_order_with_one_trace_id(tmp_path: Path) -> None:
    audit = AuditLogPlugin(tmp_path / "logs")
    model = ScriptedProvider([mixed_batch(), FINAL])
    session = session_with(model, audit, DenyD())
    result = await session.submit_turn("please do things")
    assert result.stop == "done"

    trace = read_jsonl(audit.trace_path)
    assert events(trace) == [
        ("user_message", None), ("llm_request", None), ("llm_response", None),
        # asked while the batch runs; the calls are reported after it, in the model's order
        ("confirmation", "yes"), ("confirmation", "no"),
        ("tool_call", "ok"), ("tool_result", "ok"),
        ("tool_call", "err"), ("tool_result", "err"),
        ("tool_call", "d"), ("denial", "d"), ("tool_result", "d"),
        ("tool_call", "yes"), ("tool_result", "yes"),
        ("tool_call", "no"), ("denial", "no"), ("tool_result", "no"),
        ("tool_call", "big"), ("tool_result", "big"),
        ("llm_request", None), ("llm_response", None),
        ("final_text", None), ("stop_reason", None),
    ]
    trace_ids = {r["trace_id"] for r in trace}
    assert trace_ids == {audit.trace_id("s-1")}
    assert len(trace_ids.pop()) == 32
    for record in trace:
        assert set(record) == {"ts", "trace_id", "session_id", "agent", "turn_index", "event", "data"}
        assert (record["session_id"], record["agent"], record["turn_index"]) == ("s-1", "auditor", 1)
        assert datetime.fromisoformat(record["ts"]).utcoffset() is not None

    # audit.jsonl: the key operations only, each the very same line as in the trace
    audit_records = read_jsonl(audit.audit_path)
    assert audit_records == [r for r in trace if r["event"] in AUDIT_EVENTS]
    assert [e for e, _ in events(audit_records)] == [
        "user_message", "confirmation", "confirmation", "tool_call", "tool_call", "tool_call", "denial",
        "tool_call", "tool_call", "denial", "tool_call", "final_text", "stop_reason",
    ]

    by_event: dict[str, list[dict[str, Any]]] = {}
    for record in trace:
        by_event.setdefault(record["event"], []).append(record["data"])
    assert by_event["user_message"] == [{"text": "please do things", "chars": 16}]
    assert [(c["call_id"], c["answer"]) for c in by_event["confirmation"]] == [("yes", "yes"), ("no", "no")]
    calls = {c["call_id"]: c for c in by_event["tool_call"]}
    assert {k: c["status"] for k, c in calls.items()} == {
        "ok": "ok", "err": "error", "d": "denied", "yes": "ok", "no": "not_approved", "big": "ok",
    }
    assert calls["ok"]["name"] == "add"
    assert calls["ok"]["arguments"] == '{"a":1,"b":2}'
    assert isinstance(calls["ok"]["elapsed_s"], float)
    assert 0 <= calls["ok"]["elapsed_s"] < 5
    denials = {d["call_id"]: d for d in by_event["denial"]}
    assert denials["d"]["by"] == "policy"
    assert "not on Sundays" in denials["d"]["reason"]
    assert denials["no"]["by"] == "user"
    assert "did not approve" in denials["no"]["reason"]
    results = {r["call_id"]: r for r in by_event["tool_result"]}
    assert results["ok"] == {"call_id": "ok", "name": "add", "status": "ok", "is_error": False,
                             "chars": 1, "preview": "3"}
    assert results["err"]["is_error"]
    assert "disk on fire" in results["err"]["preview"]
    # the huge output is cut to preview_chars (+ the ellipsis), its size kept
    assert results["big"]["chars"] == BIG
    assert results["big"]["preview"] == "x" * 200 + "…"

    first_request, second_request = by_event["llm_request"]
    assert first_request["messages_count"] == 1
    assert first_request["model"] == "scripted-model"  # the model about to be called (HookContext.model)
    assert first_request["messages"] == [{"role": "user", "preview": "please do things"}]
    assert first_request["tools"] == ["add", "boom", "delete", "dump", "nap"]
    assert second_request["model"] == "scripted-model"
    assert second_request["messages_count"] == 3
    assert all(len(m["preview"]) <= 201 for m in second_request["messages"])
    reply = by_event["llm_response"][0]
    assert reply["model"] == "scripted-model"
    assert reply["provider"] == "scripted"
    assert reply["stop_reason"] == "tool_use"
    assert reply["has_tool_call"]
    assert reply["text_preview"] == "Let me do all of that."
    assert not reply["truncated"]
    assert [c["call_id"] for c in reply["tool_calls"]] == ["ok", "err", "d", "yes", "no", "big"]
    assert reply["usage"]["input_tokens"] > 0
    final = by_event["llm_response"][1]
    assert final["text_length"] == len(FINAL)
    assert final["truncated"]
    assert by_event["final_text"] == [{"text": FINAL[:200] + "…", "chars": len(FINAL)}]
    stop = by_event["stop_reason"][0]
    assert stop["stop"] == "done"
    assert stop["model_calls"] == 2
    assert stop["error"] is None
    assert stop["usage"]["output_tokens"] == result.usage.output_tokens


async def test_each_turn_gets_a_new_trace_id(tmp_path: Path) -> None:
    audit = AuditLogPlugin(tmp_path, preview_chars=5)
    session = session_with(ScriptedProvider(["one", "two"]), audit)
    assert audit.trace_id("s-1") is None
    await session.submit_turn("first question")
    first = audit.trace_id("s-1")
    await session.submit_turn("second")
    second = audit.trace_id("s-1")
    assert first is not None
    assert second is not None
    assert first != second
    trace = read_jsonl(audit.trace_path)
    assert {r["trace_id"] for r in trace if r["turn_index"] == 1} == {first}
    assert {r["trace_id"] for r in trace if r["turn_index"] == 2} == {second}
    assert trace[0]["data"] == {"text": "first…", "chars": 14}  # preview_chars=5
    await session.close()
    assert audit.trace_id("s-1") is None


async def test_sessions_that_never_end_do_not_grow_the_trace_ids_without_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agcore.plugins import _audit

    monkeypatch.setattr(_audit, "MAX_TRACKED_SESSIONS", 8)
    audit = AuditLogPlugin(tmp_path)
    for i in range(20):  # twenty sessions take a turn and are never closed
        await session_with(ScriptedProvider(["ok"]), audit, session_id=f"s-{i}").submit_turn("hi")
    assert len(audit._trace_ids) == 8
    assert audit.trace_id("s-0") is None  # the least recently active were forgotten
    assert audit.trace_id("s-19") is not None
    trace = read_jsonl(audit.trace_path)
    assert len({r["trace_id"] for r in trace}) == 20  # every turn still got its own id


async def test_a_failed_model_call_records_the_error_and_the_stop(tmp_path: Path) -> None:
    audit = AuditLogPlugin(tmp_path)
    model = ScriptedProvider([RateLimitError("slow down", status_code=429, request_id="req-9")])
    result = await session_with(model, audit).submit_turn("hi")
    assert result.stop == "error"
    trace = read_jsonl(audit.trace_path)
    assert [r["event"] for r in trace] == ["user_message", "llm_request", "error", "stop_reason"]
    error = trace[2]["data"]
    assert error["type"] == "AgentLLMError"
    assert error["cause_type"] == "RateLimitError"
    assert (error["provider"], error["model"], error["status_code"], error["request_id"]) == (
        "scripted", "scripted-model", 429, "req-9")
    assert error["recoverable"] is True
    assert "slow down" in error["message"]
    assert trace[3]["data"]["stop"] == "error"
    assert trace[3]["data"]["error_type"] == "AgentLLMError"
    assert len({r["trace_id"] for r in trace}) == 1


async def test_a_limit_is_recorded_as_the_stop_reason(tmp_path: Path) -> None:
    audit = AuditLogPlugin(tmp_path)
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 1}), "2"])
    session = session_with(model, audit, config=AgentConfig(max_turns=1))
    assert (await session.submit_turn("1+1")).stop == "limit"
    records = read_jsonl(audit.audit_path)
    assert [r["event"] for r in records] == ["user_message", "tool_call", "stop_reason"]
    stop = records[-1]["data"]
    assert stop["stop"] == "limit"
    assert stop["error_type"] == "LimitExceeded"
    assert "max_turns" in stop["error"]


async def test_a_cancelled_turn_still_gets_its_stop_reason(tmp_path: Path) -> None:
    audit = AuditLogPlugin(tmp_path)
    started = anyio.Event()

    @tool
    async def hang() -> str:
        """Never returns."""
        started.set()
        await anyio.sleep_forever()
        return "unreachable"

    model = ScriptedProvider([tool_call_reply("hang", {}, id="h")])
    session = session_with(model, audit, tools=(hang,))
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.submit_turn, "go")
        await started.wait()
        tg.cancel_scope.cancel()
    trace = read_jsonl(audit.trace_path)
    assert [r["event"] for r in trace] == ["user_message", "llm_request", "llm_response", "stop_reason"]
    assert trace[-1]["data"]["stop"] == "cancelled"
    assert trace[-1]["data"]["error_type"] == "Cancelled"
    assert len({r["trace_id"] for r in trace}) == 1
    # the session goes on, in a new trace
    model.add("back")
    await session.submit_turn("again")
    assert read_jsonl(audit.trace_path)[-1]["trace_id"] not in {r["trace_id"] for r in trace}


async def test_a_turn_paused_for_client_tools_keeps_its_trace_id_through_resume(tmp_path: Path) -> None:
    audit = AuditLogPlugin(tmp_path)
    pick = Tool.client("pick", "Ask the user to pick.", {"type": "object", "properties": {}})
    model = ScriptedProvider([tool_call_reply("pick", {}, id="p1"), "blue it is"])
    session = session_with(model, audit, tools=(pick,))
    assert (await session.submit_turn("choose")).stop == "client_tools"
    await session.resume([ToolResultBlock(tool_use_id="p1", content="blue")])
    records = read_jsonl(audit.audit_path)
    assert [(r["event"], r["data"].get("stop") or r["data"].get("status")) for r in records] == [
        ("user_message", None), ("stop_reason", "client_tools"), ("tool_call", "client"),
        ("final_text", None), ("stop_reason", "done"),
    ]
    assert len({r["trace_id"] for r in records}) == 1


async def test_plan_steps_are_recorded(tmp_path: Path) -> None:
    audit = AuditLogPlugin(tmp_path)
    session = session_with(ScriptedProvider(["found 3", "deleted 3"]), audit)
    plan = Plan.from_dict([{"id": "a", "description": "Find stale branches"},
                           {"id": "b", "description": "Delete them", "depends_on": ["a"]}])
    await DefaultTaskAgent().execute_plan(session, plan)
    steps = [r for r in read_jsonl(audit.audit_path) if r["event"] == "plan_step"]
    assert [(s["data"]["index"], s["data"]["step_id"], s["data"]["status"], s["data"]["result_preview"])
            for s in steps] == [(0, "a", "completed", "found 3"), (1, "b", "completed", "deleted 3")]
    # each step is a turn of its own, with its own trace id
    assert steps[0]["trace_id"] != steps[1]["trace_id"]


async def test_concurrent_sessions_share_one_log(tmp_path: Path) -> None:
    audit = AuditLogPlugin(tmp_path)
    sessions = 8

    async def run(n: int) -> None:
        model = ScriptedProvider([
            tool_call_reply("nap", {"seconds": 0.01 * (n % 3)}), f"first {n}",
            tool_call_reply("nap", {"seconds": 0.01 * ((n + 1) % 3)}), f"second {n}",
        ])
        session = session_with(model, audit, session_id=f"s{n}")
        await session.submit_turn(f"hello {n}")
        await session.submit_turn(f"again {n}")

    async with anyio.create_task_group() as tg:
        for n in range(sessions):
            tg.start_soon(run, n)
    assert_turns_intact(read_jsonl(audit.trace_path), {f"s{n}" for n in range(sessions)})


def test_threads_and_separate_instances_share_one_file(tmp_path: Path) -> None:
    """Sessions on other threads (each with its event loop), and a second plugin instance on the
    same directory, as another process would have: every line stays whole."""
    shared = AuditLogPlugin(tmp_path)
    other = AuditLogPlugin(tmp_path)
    ids: list[str] = []

    def worker(n: int, plugin: AuditLogPlugin) -> None:
        async def main() -> None:
            model = ScriptedProvider([tool_call_reply("dump", {}), "ok", tool_call_reply("dump", {}), "ok"])
            session = session_with(model, plugin, session_id=f"t{n}")
            await session.submit_turn("one " + "z" * 300)
            await session.submit_turn("two")

        anyio.run(main)

    threads = []
    for n in range(6):
        ids.append(f"t{n}")
        threads.append(threading.Thread(target=worker, args=(n, shared if n % 2 else other)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert_turns_intact(read_jsonl(shared.trace_path), set(ids))


def assert_turns_intact(trace: list[dict[str, Any]], session_ids: set[str]) -> None:
    """Two turns per session, each with its nine records under one trace id of its own."""
    turns: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for record in trace:
        turns.setdefault((record["session_id"], record["turn_index"]), []).append(record)
    assert set(turns) == {(s, t) for s in session_ids for t in (1, 2)}
    trace_ids = set()
    for records in turns.values():
        assert [r["event"] for r in records] == [
            "user_message", "llm_request", "llm_response", "tool_call", "tool_result",
            "llm_request", "llm_response", "final_text", "stop_reason",
        ]
        ids = {r["trace_id"] for r in records}
        assert len(ids) == 1
        trace_ids |= ids
    assert len(trace_ids) == len(turns)  # no two turns share an id


def test_an_unwritable_directory_fails_at_construction(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(OSError, match=r"cannot create its log directory .*file/logs.*can write to"):
        AuditLogPlugin(blocker / "logs")
    (tmp_path / "logs" / "audit.jsonl").mkdir(parents=True)  # a directory where the file should be
    with pytest.raises(OSError, match=r"cannot open the log file .*audit.jsonl.*can write to"):
        AuditLogPlugin(tmp_path / "logs")
    with pytest.raises(ValueError, match="preview_chars"):
        AuditLogPlugin(tmp_path, preview_chars=0)


async def test_a_failing_disk_never_breaks_the_run(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # /dev/full accepts the open and fails every write with ENOSPC: a disk that filled up mid-run.
    audit = AuditLogPlugin(tmp_path, trace_name="/dev/full")
    assert audit.trace_path == Path("/dev/full")
    model = ScriptedProvider([tool_call_reply("add", {"a": 2, "b": 2}), "4", "again"])
    session = session_with(model, audit)
    with caplog.at_level(logging.WARNING, logger="agcore.plugins"):
        assert (await session.submit_turn("2+2")).text == "4"
        assert (await session.submit_turn("more")).text == "again"
    warnings = [r for r in caplog.records if "could not write to /dev/full" in r.getMessage()]
    assert len(warnings) == 1  # said once, not per record
    assert [r["event"] for r in read_jsonl(audit.audit_path)] == [
        "user_message", "tool_call", "final_text", "stop_reason",
        "user_message", "final_text", "stop_reason",
    ]


async def test_closed_plugin_drops_records_quietly(tmp_path: Path) -> None:
    audit = AuditLogPlugin(tmp_path)
    audit.close()
    result = await session_with(ScriptedProvider(["fine"]), audit).submit_turn("hi")
    assert result.text == "fine"
    assert audit.audit_path.read_text() == ""


async def test_a_denial_is_recorded_whatever_the_plugin_order(tmp_path: Path) -> None:
    """Registered after the guard, the audit plugin still records the denial (from the call's status)."""
    audit = AuditLogPlugin(tmp_path)
    model = ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 1}, id="d"), "ok"])
    await session_with(model, DenyD(), audit).submit_turn("go")
    denial = [r["data"] for r in read_jsonl(audit.audit_path) if r["event"] == "denial"]
    assert denial
    assert denial[0]["by"] == "policy"


async def test_no_way_to_confirm_is_recorded_as_unavailable(tmp_path: Path) -> None:
    audit = AuditLogPlugin(tmp_path)
    model = ScriptedProvider([tool_call_reply("delete", {"path": "a"}, id="c"), "cannot"])
    await session_with(model, audit, confirm=None).submit_turn("delete a")
    records = read_jsonl(audit.audit_path)
    assert [r["data"]["answer"] for r in records if r["event"] == "confirmation"] == ["unavailable"]
    assert [r["data"]["status"] for r in records if r["event"] == "tool_call"] == ["not_approved"]
    assert [r["data"]["by"] for r in records if r["event"] == "denial"] == ["user"]


async def test_elapsed_time_leaves_out_the_users_thinking_time(tmp_path: Path) -> None:
    audit = AuditLogPlugin(tmp_path)

    async def slow_yes(call: Any, t: Any) -> bool:
        await anyio.sleep(0.3)
        return True

    model = ScriptedProvider([tool_call_reply("delete", {"path": "a"}, id="c"), "gone"])
    await session_with(model, audit, confirm=slow_yes).submit_turn("delete a")
    (call,) = [r["data"] for r in read_jsonl(audit.audit_path) if r["event"] == "tool_call"]
    assert call["status"] == "ok"
    assert call["elapsed_s"] < 0.25


async def test_elapsed_time_is_the_tools_own_running_time(tmp_path: Path) -> None:
    audit = AuditLogPlugin(tmp_path)
    calls = [ToolUseBlock(id="long", name="nap", input={"seconds": 0.2}),
             ToolUseBlock(id="short", name="add", input={"a": 1, "b": 1})]
    model = ScriptedProvider([tool_calls_reply(calls), "rested"])
    await session_with(model, audit, config=AgentConfig(parallel_tool_calls=False)).submit_turn("go")
    elapsed = {r["data"]["call_id"]: r["data"]["elapsed_s"]
               for r in read_jsonl(audit.audit_path) if r["event"] == "tool_call"}
    assert elapsed["long"] >= 0.2
    assert elapsed["short"] < 0.2  # run after the nap, yet not charged for it
