"""Sub-agents end to end with scripted models: an agent hands tasks to other agents through
``agent_tool`` and reads their answers; limits, cancellation, persistence and events reach across."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agcore.agent import (
    AgentBuilder,
    AgentSession,
    BasicAgent,
    CostTracker,
    DefaultTaskAgent,
    Plan,
    StepStatus,
    SubagentEvent,
    ToolCallRequested,
    ToolResultReady,
    agent_tool,
    list_subagent_sessions,
    run_subagent,
    subagent_of,
    subagent_session_id,
)
from agcore.llm import OverloadedError, Usage
from agcore.llm.models import ModelInfo, ModelRegistry
from agcore.memory import InMemorySessionStore, SqliteSessionStore
from agcore.testing import ScriptedProvider, text_reply, tool_call_reply, tool_calls_reply
from agcore.tools import ToolContext, tool
from tests.agent._subagent_support import Scripts, assert_every_call_answered

pytestmark = pytest.mark.anyio

LEAD = BasicAgent("lead", "You lead.", tools=["researcher", "writer"])
RESEARCHER = BasicAgent("researcher", "You research.", tools=["lookup"])
WRITER = BasicAgent("writer", "You write.", tools=[])


def bundle_for(scripts: Scripts, *tools: object, **config: object) -> object:
    builder = AgentBuilder().provider(scripts.model).tools(*tools)
    if config:
        builder = builder.config(**config)
    return builder.build()


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"facts about {topic}"


async def test_two_sub_agents_run_in_parallel_one_fails_one_calls_a_tool() -> None:
    both_started = (anyio.Event(), anyio.Event())

    @tool
    async def lookup(topic: str) -> str:  # this test's own, which waits for the writer
        """Look a topic up."""
        both_started[0].set()
        with anyio.fail_after(5):  # the writer runs meanwhile: the calls are concurrent
            await both_started[1].wait()
        return f"facts about {topic}"

    async def writer_fails(_request: object) -> object:
        both_started[1].set()
        with anyio.fail_after(5):
            await both_started[0].wait()
        raise OverloadedError("the writer's model is overloaded", provider="scripted", model="m")

    scripts = Scripts({
        "You lead.": [
            tool_calls_reply([("researcher", {"task": "find facts on otters"}),
                              ("writer", {"task": "write a poem"})]),
            "Otters are facts; the poem failed.",
        ],
        "You research.": [tool_call_reply("lookup", {"topic": "otters"}), "Otters hold hands."],
        "You write.": [writer_fails],
    })
    bundle = bundle_for(scripts, lookup, agent_tool(RESEARCHER), agent_tool(WRITER))
    session = AgentSession(LEAD, "parent", bundle)

    events = [event async for event in session.stream_turn("Research otters and write a poem.")]

    result = session.last_result
    assert result is not None
    assert result.stop == "done"
    assert result.text == "Otters are facts; the poem failed."
    results = {e.name: e for e in events if isinstance(e, ToolResultReady)}
    assert results["researcher"].status == "ok"
    assert results["researcher"].result.text == "Otters hold hands."
    assert results["writer"].result.is_error
    assert "sub-agent 'writer' did not finish" in results["writer"].result.text
    assert "overloaded" in results["writer"].result.text
    assert_every_call_answered(session.messages)
    # The parent's model read both results in its second call.
    second = scripts.requests[-1]
    assert "Otters hold hands." in str(second.messages[-1].model_dump())
    # The researcher's tool call reached the parent's stream, nested, before the parent's results.
    nested = [e for e in events if isinstance(e, SubagentEvent)]
    calls = [e for e in nested if isinstance(e.event, ToolCallRequested)]
    assert [c.event.call.name for c in calls] == ["lookup"]
    researcher_call = next(
        e for e in events if isinstance(e, ToolCallRequested) and e.call.name == "researcher"
    )
    assert calls[0].call_id == researcher_call.call.id
    assert calls[0].depth == 1
    assert calls[0].agent == "researcher"
    assert calls[0].session_id == subagent_session_id("parent", researcher_call.call.id)
    assert events.index(calls[0]) < events.index(results["researcher"])
    failed = [e for e in nested if e.agent == "writer" and e.event.type == "failed"]
    assert len(failed) == 1


async def test_as_tool_and_a_child_with_its_own_bundle() -> None:
    child_model = ScriptedProvider(["child answer"], model_id="child-model")
    child_bundle = AgentBuilder().provider(child_model).tools(lookup).build()
    research_tool = RESEARCHER.as_tool(child_bundle, name="ask_researcher", description="Ask it.")
    assert research_tool.name == "ask_researcher"
    assert research_tool.description == "Ask it."
    assert subagent_of(research_tool) == (RESEARCHER, child_bundle)
    assert subagent_of(lookup) is None
    parent_model = ScriptedProvider([tool_call_reply("ask_researcher", {"task": "t"}), "ok"])
    bundle = AgentBuilder().provider(parent_model).tools(research_tool).build()
    session = AgentSession(BasicAgent("lead"), "p", bundle)

    result = await session.submit_turn("go")

    assert result.text == "ok"
    assert child_model.calls == 1
    assert child_model.last_request.system == "You research."
    assert session.messages[-2].results[0].text == "child answer"
    # The child's spend is the parent's too, under the child's model.
    assert "child-model" in session.usage.by_model
    assert session.usage.calls == 3


async def test_an_empty_task_is_an_error_the_model_reads() -> None:
    scripts = Scripts({"You lead.": [tool_call_reply("researcher", {"task": "  "}), "sorry"]})
    bundle = bundle_for(scripts, lookup, agent_tool(RESEARCHER), agent_tool(WRITER))
    session = AgentSession(LEAD, "p", bundle)
    result = await session.submit_turn("go")
    assert result.stop == "done"
    [answer] = session.messages[-2].results
    assert answer.is_error
    assert "needs the task" in answer.text


# ------------------------------------------------------------------------------- cost and limits


async def test_child_cost_rolls_up_into_the_parent() -> None:
    prices = ModelRegistry([ModelInfo(
        id="subagent-priced", provider="scripted", context_window=100_000, max_output_tokens=1000,
        input_usd_per_mtok=1.0, output_usd_per_mtok=2.0,
    )])
    scripts = Scripts({
        "You lead.": [
            tool_calls_reply([("researcher", {"task": "t"})]).model_copy(
                update={"usage": Usage(input_tokens=100, output_tokens=10)}),
            text_reply("done", usage=Usage(input_tokens=200, output_tokens=20)),
        ],
        "You research.": [text_reply("found", usage=Usage(input_tokens=1000, output_tokens=500))],
    }, model_id="subagent-priced")
    bundle = bundle_for(scripts, lookup, agent_tool(RESEARCHER), agent_tool(WRITER))
    session = AgentSession(LEAD, "p", bundle)
    session.usage = CostTracker(registry=prices)  # priced by a registry of its own, not the global one

    result = await session.submit_turn("go")

    assert result.stop == "done"
    assert session.usage.usage.input_tokens == 1300
    assert session.usage.usage.output_tokens == 530
    assert session.usage.calls == 3
    assert session.usage.cost_usd == pytest.approx((1300 * 1.0 + 530 * 2.0) / 1e6)
    # The turn's own figures are the parent's model calls only.
    assert result.usage.input_tokens == 300


async def test_a_parent_token_budget_stops_the_child_with_a_clear_error() -> None:
    scripts = Scripts({
        "You lead.": [
            tool_calls_reply([("researcher", {"task": "t"})]).model_copy(
                update={"usage": Usage(input_tokens=100, output_tokens=0)}),
        ],
        "You research.": [
            tool_call_reply("lookup", {"topic": "x"}).model_copy(
                update={"usage": Usage(input_tokens=950, output_tokens=0)}),
            "never reached",
        ],
    })
    bundle = bundle_for(scripts, lookup, agent_tool(RESEARCHER), agent_tool(WRITER), max_total_tokens=1000)
    session = AgentSession(LEAD, "p", bundle)

    result = await session.submit_turn("go")

    [answer] = session.messages[-1].results
    assert answer.is_error
    assert "The parent session 'p' has spent its token budget (max_total_tokens=1000" in answer.text
    assert scripts.left("You research.") == 1  # the child's second call was never made
    # The parent is over budget too: its next model call is refused.
    assert result.stop == "limit"
    assert "max_total_tokens" in str(result.error)
    assert_every_call_answered(session.messages)


async def test_the_child_has_its_own_max_turns() -> None:
    scripts = Scripts({
        "You lead.": [tool_call_reply("researcher", {"task": "t"}), "gave up"],
        "You research.": [
            tool_call_reply("lookup", {"topic": "a"}), tool_call_reply("lookup", {"topic": "b"}),
        ],
    })
    bundle = bundle_for(scripts, lookup, agent_tool(RESEARCHER, max_turns=1), agent_tool(WRITER))
    session = AgentSession(LEAD, "p", bundle)
    result = await session.submit_turn("go")
    assert result.text == "gave up"
    [answer] = session.messages[-2].results
    assert answer.is_error
    assert "max_turns" in answer.text
    assert bundle.config().max_turns == 50


async def test_the_depth_limit_refuses_recursive_delegation() -> None:
    recursive = BasicAgent("recursive", "You recurse.", tools=["recursive"])
    scripts = Scripts({
        "You recurse.": [
            tool_call_reply("recursive", {"task": "deeper"}),  # depth 0 -> 1
            tool_call_reply("recursive", {"task": "deeper still"}),  # depth 1 -> 2
            tool_call_reply("recursive", {"task": "too deep"}),  # depth 2 -> 3: refused
            "bottom",  # depth 2 answers after the refusal
            "middle",
            "top",
        ],
    })
    bundle = bundle_for(scripts, agent_tool(recursive, max_depth=2))
    session = AgentSession(recursive, "root", bundle)

    result = await session.submit_turn("go")

    assert result.stop == "done"
    assert result.text == "top"
    refusals = [r for s in scripts.requests for r in s.messages[-1].content if getattr(r, "is_error", False)]
    assert len(refusals) == 1
    assert "would run 3 levels deep, past the limit of 2 nested sub-agents" in refusals[0].text


async def test_a_sub_agent_without_a_parent_session_needs_a_bundle() -> None:
    tool_ = agent_tool(RESEARCHER)
    from agcore.llm import ToolUseBlock
    from agcore.tools import ToolRegistry

    registry = ToolRegistry([tool_])
    call = ToolUseBlock(id="c1", name="researcher", input={"task": "t"})
    result = await registry.execute(call, ToolContext())
    assert result.is_error
    assert "has no runtime" in result.text


# ---------------------------------------------------------------------------------- cancellation


async def test_cancelling_the_parent_mid_child_leaves_both_histories_valid() -> None:
    started = anyio.Event()
    children: list[AgentSession] = []

    @tool
    async def lookup(topic: str, ctx: ToolContext) -> str:  # hangs until cancelled
        """Look a topic up."""
        children.append(ctx.require("session"))
        started.set()
        await anyio.sleep_forever()
        return "never"

    scripts = Scripts({
        "You lead.": [tool_call_reply("researcher", {"task": "t"}), "after"],
        "You research.": [tool_call_reply("lookup", {"topic": "x"}), "child after"],
    })
    bundle = bundle_for(scripts, lookup, agent_tool(RESEARCHER), agent_tool(WRITER))
    session = AgentSession(LEAD, "p", bundle)

    async with anyio.create_task_group() as group:
        group.start_soon(session.submit_turn, "go")
        with anyio.fail_after(5):
            await started.wait()
        group.cancel_scope.cancel()

    assert session.last_result is not None
    assert session.last_result.stop == "cancelled"
    [child] = children
    assert child.parent is session
    assert child.depth == 1
    assert child.last_result is not None
    assert child.last_result.stop == "cancelled"
    for history in (session.messages, child.messages):
        assert_every_call_answered(history)
        assert "Cancelled" in history[-1].results[0].text
    assert not session.running
    assert not child.running
    # Both take their next turn.
    assert (await child.submit_turn("again")).text == "child after"
    assert (await session.submit_turn("again")).text == "after"


# ----------------------------------------------------------------------------------- persistence


async def test_a_parent_cancelled_mid_child_resumes_in_a_new_process_with_its_child(tmp_path: Path) -> None:
    started = anyio.Event()

    @tool
    async def lookup(topic: str) -> str:  # the process "dies" while this runs
        """Look a topic up."""
        started.set()
        await anyio.sleep_forever()
        return "never"

    path = tmp_path / "sessions.db"
    scripts = Scripts({
        "You lead.": [tool_call_reply("researcher", {"task": "find otters"})],
        "You research.": [tool_call_reply("lookup", {"topic": "otters"})],
    })
    bundle = bundle_for(scripts, lookup, agent_tool(RESEARCHER), agent_tool(WRITER))
    async with SqliteSessionStore(path) as store:
        session = AgentSession(LEAD, "parent", bundle, store=store)
        async with anyio.create_task_group() as group:
            group.start_soon(session.submit_turn, "go")
            with anyio.fail_after(5):
                await started.wait()
            # The child saves its repaired history as it is cancelled; the parent's repair is in
            # memory only (test_subagent_kill.py kills a real process, where neither is saved).
            group.cancel_scope.cancel()
        call_id = session.messages[1].message.tool_calls[0].id

    # "Another process": a new store on the same file, new sessions.
    later = Scripts({"You lead.": ["I will ask again."], "You research.": ["Otters hold hands."]})
    bundle2 = bundle_for(later, lookup, agent_tool(RESEARCHER), agent_tool(WRITER))
    async with SqliteSessionStore(path) as store:
        children = await list_subagent_sessions(store, "parent")
        assert [c.session_id for c in children] == [subagent_session_id("parent", call_id)]
        assert children[0].agent_name == "researcher"
        assert children[0].state["app_state"]["subagent"]["call_id"] == call_id
        parent = await AgentSession.load(store, "parent", LEAD, bundle2)
        child = await AgentSession.load(store, children[0].session_id, RESEARCHER, bundle2)
        for history in (parent.messages, child.messages):
            assert_every_call_answered(history)
        assert parent.messages[-1].results[0].text.startswith("Interrupted")
        assert child.messages[-1].results[0].text.startswith("Cancelled")
        assert child.messages[0].content == "find otters"
        assert (await child.submit_turn("go on")).text == "Otters hold hands."
        assert (await parent.submit_turn("and now?")).text == "I will ask again."


async def test_a_finished_child_is_saved_beside_its_parent() -> None:
    store = InMemorySessionStore()
    scripts = Scripts({
        "You lead.": [tool_call_reply("researcher", {"task": "t"}, id="call_1"), "ok"],
        "You research.": [tool_call_reply("lookup", {"topic": "x"}), "found"],
    })
    bundle = bundle_for(scripts, lookup, agent_tool(RESEARCHER), agent_tool(WRITER))
    session = AgentSession(LEAD, "p", bundle, store=store)
    await session.submit_turn("go")
    [record] = await list_subagent_sessions(store, "p")
    assert record.session_id == "p/sub/call_1"
    child = await AgentSession.load(store, record.session_id, RESEARCHER, bundle)
    assert [m.kind for m in child.messages] == ["user", "assistant", "tool_results", "assistant"]
    assert await list_subagent_sessions(store, "p/sub/call_1") == []


# ---------------------------------------------------------------------------------- plan steps


async def test_a_plan_step_delegated_to_a_sub_agent() -> None:
    store = InMemorySessionStore()
    scripts = Scripts({
        "You plan.": ["step one done"],
        "You research.": [tool_call_reply("lookup", {"topic": "x"}), "researched"],
    })
    bundle = bundle_for(scripts, lookup)
    planner = DefaultTaskAgent("planner", "You plan.", subagents={"researcher": RESEARCHER})
    session = AgentSession(planner, "plan", bundle, store=store)
    plan = Plan.from_dict({"goal": "g", "steps": [
        {"id": "1", "description": "do it yourself"},
        {"id": "2", "description": "research it", "agent": "researcher", "depends_on": ["1"]},
        {"id": "3", "description": "ask a stranger", "agent": "nobody"},
    ]})

    await planner.execute_plan(session, plan, failure_policy="continue")

    assert [s.status for s in plan.steps] == [StepStatus.COMPLETED, StepStatus.COMPLETED, StepStatus.FAILED]
    assert plan.steps[1].result == "researched"
    assert "sub-agent 'nobody', which this task agent does not have" in plan.steps[2].error.message
    # The step's turn ran in a child session, saved beside the plan's; the plan's history has step 1 only.
    [record] = await list_subagent_sessions(store, "plan")
    assert record.session_id == "plan/sub/step-2-1"
    assert "research it" in scripts.requests[1].messages[0].content
    assert sum(1 for m in session.messages if m.kind == "user") == 1
    assert Plan.from_json(plan.to_json()).steps[1].agent == "researcher"


async def test_a_plan_step_delegated_to_an_agent_tool_uses_its_bundle() -> None:
    child_model = ScriptedProvider(["from the tool's bundle"])
    research_tool = agent_tool(RESEARCHER, AgentBuilder().provider(child_model).tools(lookup).build())
    planner = DefaultTaskAgent("planner", "You plan.", subagents={"r": research_tool})
    bundle = AgentBuilder().provider(ScriptedProvider([])).build()
    session = AgentSession(planner, "plan", bundle)
    plan = Plan.from_dict({"steps": [{"description": "x", "agent": "r"}]})
    await planner.execute_plan(session, plan)
    assert plan.steps[0].result == "from the tool's bundle"


async def test_run_subagent_refuses_past_max_depth() -> None:
    bundle = AgentBuilder().provider(ScriptedProvider([])).build()
    parent = AgentSession(LEAD, "p", bundle)
    parent.depth = 2
    from agcore.agent import LimitExceeded

    with pytest.raises(LimitExceeded, match="past the limit of 2"):
        await run_subagent(parent, RESEARCHER, "t", max_depth=2)


async def test_a_model_drafted_plan_delegates_a_step_to_a_sub_agent() -> None:
    drafted = (
        '{"goal": "otters", "steps": [{"id": "1", "description": "research otters", '
        '"agent": "researcher"}, {"id": "2", "description": "sum up", "depends_on": ["1"]}]}'
    )
    scripts = Scripts({
        "You plan.": [drafted, "Otters: they hold hands."],
        "You research.": ["they hold hands"],
    })
    planner = DefaultTaskAgent("planner", "You plan.", subagents={"researcher": RESEARCHER})
    session = AgentSession(planner, "plan", bundle_for(scripts, lookup))

    plan = await planner.run(session, "Tell me about otters.")

    prompt = scripts.requests[0].messages[0].content
    assert 'adding "agent": "<name>"' in prompt
    assert "- researcher: You research." in prompt
    assert plan.steps[0].agent == "researcher"
    assert [s.result for s in plan.steps] == ["they hold hands", "Otters: they hold hands."]
    assert scripts.requests[1].system == "You research."


async def test_a_child_that_times_out_is_an_error_result_and_is_saved_repaired() -> None:
    @tool
    async def lookup(topic: str) -> str:  # hangs past the sub-agent's timeout
        """Look a topic up."""
        await anyio.sleep_forever()
        return "never"

    store = InMemorySessionStore()
    scripts = Scripts({
        "You lead.": [tool_call_reply("researcher", {"task": "t"}, id="p1"), "it took too long"],
        "You research.": [tool_call_reply("lookup", {"topic": "x"})],
    })
    bundle = bundle_for(scripts, lookup, agent_tool(RESEARCHER, timeout=0.3), agent_tool(WRITER))
    session = AgentSession(LEAD, "p", bundle, store=store)
    result = await session.submit_turn("go")
    assert result.text == "it took too long"
    [answer] = session.messages[-2].results
    assert answer.is_error
    assert "timed out after 0.3s" in answer.text
    # The child's saved history is already repaired: its open call is answered in the store.
    texts = await store.load_messages("p/sub/p1")
    assert len(texts) == 3
    assert "Cancelled" in texts[-1]


def test_cost_trackers_roll_up_along_a_chain_never_in_a_cycle() -> None:
    root, child, grandchild = CostTracker(), CostTracker(), CostTracker()
    child.roll_up_into(root)
    grandchild.roll_up_into(child)
    grandchild.add_usage("m", Usage(input_tokens=5, output_tokens=1))
    assert root.usage.total_tokens == child.usage.total_tokens == 6
    assert root.calls == 1
    with pytest.raises(ValueError, match="cannot roll up into itself"):
        root.roll_up_into(grandchild)
    grandchild.roll_up_into(None)
    grandchild.add_usage("m", Usage(input_tokens=5))
    assert root.usage.total_tokens == 6
    # The link is not data: a saved tracker loads without it.
    assert "_parent" not in child.model_dump_json()


async def test_answer_picks_what_the_parent_reads_from_a_finished_child() -> None:
    scripts = Scripts({
        "You lead.": [tool_call_reply("researcher", {"task": "t"}), "ok"],
        "You research.": [tool_call_reply("lookup", {"topic": "x"}), "found"],
    })
    research = agent_tool(RESEARCHER, answer=lambda r: {"answer": r.text, "model_calls": r.turns})
    bundle = bundle_for(scripts, lookup, research, agent_tool(WRITER))
    session = AgentSession(LEAD, "p", bundle)
    await session.submit_turn("go")
    [result] = session.messages[-2].results
    assert not result.is_error
    assert result.text == '{"answer": "found", "model_calls": 2}'


async def test_a_child_calling_a_client_tool_is_an_error_and_its_history_stays_valid() -> None:
    from agcore.tools import Tool

    asker = BasicAgent("asker", "You ask.", tools=["ask_user"])
    scripts = Scripts({
        "You lead.": [tool_call_reply("asker", {"task": "t"}), "ok"],
        "You ask.": [tool_call_reply("ask_user", {"question": "?"})],
    })
    bundle = bundle_for(scripts, Tool.client("ask_user", "Ask the user."), agent_tool(asker))

    store = InMemorySessionStore()
    session = AgentSession(BasicAgent("lead", "You lead.", tools=["asker"]), "p", bundle, store=store)
    result = await session.submit_turn("go")

    assert result.text == "ok"
    [answer] = session.messages[-2].results
    assert answer.is_error
    assert "it called client tools, which a sub-agent cannot run" in answer.text
    [record] = await list_subagent_sessions(store, "p")
    child = await AgentSession.load(store, record.session_id, asker, bundle)
    assert child.pending_client_calls == []
    assert_every_call_answered(child.messages)
    assert "a sub-agent cannot run client tools (ask_user)" in child.messages[-1].results[0].text
