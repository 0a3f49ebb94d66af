"""Sub-agents seen by the observers: the child's ``invoke_agent`` span nests under the parent's
``execute_tool`` span, in the same trace; the child's audit records carry the parent's trace id and
say where the child hangs; its log lines are indented and name the call; every span is ended, a
cancelled run's included."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, agent_tool
from agcore.plugins import AuditLogPlugin, LoggingPlugin
from agcore.testing import tool_call_reply, tool_calls_reply
from agcore.tools import tool
from tests.agent._subagent_support import Scripts
from tests.integrations.test_otel import Traced, attrs, parent_id, span_id, trace_id
from tests.plugins._support import read_jsonl

pytestmark = pytest.mark.anyio

LEAD = BasicAgent("lead", "You lead.", tools=["researcher"])
RESEARCHER = BasicAgent("researcher", "You research.", tools=["lookup", "deep"])
DEEP = BasicAgent("deep", "You dig.", tools=["lookup"])


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"facts about {topic}"


def scripts() -> Scripts:
    return Scripts({
        "You lead.": [tool_call_reply("researcher", {"task": "otters"}, id="p1"), "Otters hold hands."],
        "You research.": [
            tool_calls_reply([("lookup", {"topic": "otters"}), ("deep", {"task": "dig"})]),
            "they hold hands",
        ],
        "You dig.": ["dug"],
    })


async def test_the_child_turn_nests_under_the_parent_tool_span_and_audit_shares_the_trace(
    tmp_path: Path,
) -> None:
    traced = Traced()
    audit = AuditLogPlugin(tmp_path / "logs")
    script = scripts()
    bundle = (
        AgentBuilder().provider(script.model)
        .tools(lookup, agent_tool(RESEARCHER), agent_tool(DEEP, name="deep"))
        .plugins(traced.plugin, audit).build()
    )
    session = AgentSession(LEAD, "parent", bundle)
    result = await session.submit_turn("tell me about otters")
    assert result.text == "Otters hold hands."
    traced.assert_all_ended()

    parent_turn = traced.one("invoke_agent lead")
    parent_tool = traced.tool("p1")
    child_turn = traced.one("invoke_agent researcher")
    grandchild_turn = traced.one("invoke_agent deep")
    assert parent_id(parent_tool) == span_id(parent_turn)
    assert parent_id(child_turn) == span_id(parent_tool)
    assert trace_id(child_turn) == trace_id(parent_turn)
    assert attrs(child_turn)["agcore.parent.conversation.id"] == "parent"
    assert attrs(child_turn)["agcore.parent.tool.call.id"] == "p1"
    assert attrs(child_turn)["agcore.subagent.depth"] == 1
    assert attrs(child_turn)["gen_ai.conversation.id"] == "parent/sub/p1"
    # The child's own calls hang under the child's turn; the grandchild under the child's tool span.
    child_lookup = next(s for s in traced.named("execute_tool lookup"))
    assert parent_id(child_lookup) == span_id(child_turn)
    deep_tool = traced.named("execute_tool deep")[0]
    assert parent_id(deep_tool) == span_id(child_turn)
    assert parent_id(grandchild_turn) == span_id(deep_tool)
    assert attrs(grandchild_turn)["agcore.subagent.depth"] == 2
    assert trace_id(grandchild_turn) == trace_id(parent_turn)
    assert parent_id(traced.named("chat scripted-model")[1]) == span_id(child_turn)

    records = read_jsonl(audit.trace_path)
    parent_trace = {r["trace_id"] for r in records if r["session_id"] == "parent"}
    assert len(parent_trace) == 1
    child_records = [r for r in records if r["session_id"] == "parent/sub/p1"]
    assert child_records
    assert {r["trace_id"] for r in child_records} == parent_trace
    assert {(r["parent_session_id"], r["parent_call_id"], r["depth"]) for r in child_records} == {
        ("parent", "p1", 1)
    }
    grandchild = [r for r in records if r.get("depth") == 2]
    assert grandchild
    assert {r["trace_id"] for r in grandchild} == parent_trace
    assert all(r["parent_session_id"] == "parent/sub/p1" for r in grandchild)
    assert "parent_session_id" not in next(r for r in records if r["session_id"] == "parent")
    # In the audit file, the child's tool call sits inside the parent's researcher call.
    audit_events = [
        (r["session_id"], r["event"], r["data"].get("name")) for r in read_jsonl(audit.audit_path)
    ]
    assert audit_events.index(("parent/sub/p1", "tool_call", "lookup")) < audit_events.index(
        ("parent", "tool_call", "researcher")
    )


async def test_a_cancelled_parent_ends_every_span_of_its_children() -> None:
    started = anyio.Event()

    @tool
    async def hang() -> str:
        """Hangs."""
        started.set()
        await anyio.sleep_forever()
        return "never"

    traced = Traced()
    script = Scripts({
        "You lead.": [tool_call_reply("researcher", {"task": "t"}, id="p1")],
        "You research.": [tool_call_reply("hang", {})],
    })
    hanging = BasicAgent("researcher", "You research.", tools=["hang"])
    bundle = (
        AgentBuilder().provider(script.model).tools(hang, agent_tool(hanging)).plugins(traced.plugin).build()
    )
    session = AgentSession(LEAD, "parent", bundle)
    async with anyio.create_task_group() as group:
        group.start_soon(session.submit_turn, "go")
        with anyio.fail_after(5):
            await started.wait()
        group.cancel_scope.cancel()
    traced.assert_all_ended()
    child_turn = traced.one("invoke_agent researcher")
    assert attrs(child_turn)["agcore.turn.stop"] == "cancelled"
    assert parent_id(child_turn) == span_id(traced.tool("p1"))


async def test_log_lines_of_a_child_are_indented_and_name_root_and_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="agcore.run")
    script = scripts()
    bundle = (
        AgentBuilder().provider(script.model)
        .tools(lookup, agent_tool(RESEARCHER), agent_tool(DEEP, name="deep"))
        .plugins(LoggingPlugin()).build()
    )
    session = AgentSession(LEAD, "parent-session", bundle)
    await session.submit_turn("tell me about otters")
    records = [r for r in caplog.records if r.name == "agcore.run"]
    messages = [r.getMessage() for r in records]
    assert messages[0] == "[lead parent-s:1] turn started: 'tell me about otters'"
    assert "  [researcher parent-s>p1:1] turn started: 'otters'" in messages
    deep_start = next(m for m in messages if "turn started: 'dig'" in m)
    assert deep_start.startswith("    [deep parent-s>")
    child = next(r for r in records if r.getMessage().startswith("  [researcher"))
    assert child.agcore_parent_session == "parent-session"  # type: ignore[attr-defined]
    assert child.agcore_depth == 1  # type: ignore[attr-defined]
