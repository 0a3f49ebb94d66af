"""``create_context_transform``: micro-compaction always, compaction when needed, in the real loop."""

from __future__ import annotations

import pytest

from agcore.agent import (
    AgentBuilder,
    AgentMessage,
    AgentSession,
    AssistantReply,
    BasicAgent,
    ToolResults,
    UserInput,
)
from agcore.context import (
    MicroCompaction,
    create_context_transform,
    estimate_message_tokens,
    is_summary_block,
    summary_text,
)
from agcore.llm import AssistantMessage, LLMProvider, LLMRequest, TextBlock, UserMessage
from agcore.testing import ScriptedProvider

from ._history import AnyMessage, assert_valid, long_history, tool_round

pytestmark = pytest.mark.anyio

WINDOW = 20_000


def summaries(messages: list[AnyMessage]) -> list[str]:
    return [summary_text(b) for m in messages if isinstance(m, UserMessage) for b in m.blocks
            if is_summary_block(b) and isinstance(b, TextBlock)]


def prompts(requests: list[LLMRequest]) -> str:
    """Everything the summariser was asked."""
    return "".join(b.text for r in requests for m in r.messages if isinstance(m, UserMessage)
                   for b in m.blocks if isinstance(b, TextBlock))


async def test_old_tool_results_are_cut_on_every_call_without_a_model_call() -> None:
    model = ScriptedProvider([])
    transform = create_context_transform(model, WINDOW, micro=MicroCompaction(keep_last=2, max_chars=500))
    history = long_history(8, result_chars=3000)  # ~8k tokens: under the threshold
    out = await transform(list(history))
    results = [r for m in out if isinstance(m, UserMessage) for r in m.tool_results]
    assert [len(r.text) <= 500 for r in results] == [True] * 6 + [False] * 2
    assert model.calls == 0
    untouched = await create_context_transform(model, WINDOW, micro=None)(list(history))
    assert untouched == history


async def test_a_summary_is_reused_while_the_history_only_grows() -> None:
    label = ["SUMMARY ONE"]
    model = ScriptedProvider([lambda request: label[0]] * 20)
    transform = create_context_transform(model, WINDOW, keep_tail=4)
    history = long_history(60, result_chars=1200)
    first = await transform(list(history))
    calls = model.calls
    assert transform.compactions == 1
    assert summaries(first) == ["SUMMARY ONE"]
    assert estimate_message_tokens(first) <= 0.8 * WINDOW

    # A few more messages: the stored summary stands in for the same prefix, no model call.
    grown = [*history, AssistantMessage(content=[TextBlock(text="Here is what I found.")]),
             UserMessage(content="Thanks. Go on.")]
    second = await transform(list(grown))
    assert model.calls == calls
    assert summaries(second) == ["SUMMARY ONE"]
    assert second[-2:] == grown[-2:]
    assert_valid(second)

    # Growing past the threshold again: a second summary folds in the first and reads only
    # what came after it.
    more = list(grown)
    for n in range(100, 160):
        more.extend(tool_round(n, result_chars=1200))
    more.append(AssistantMessage(content=[TextBlock(text="ok")]))
    more.append(UserMessage(content="next"))
    assert_valid(more)
    label[0] = "SUMMARY TWO"
    third = await transform(list(more))
    assert transform.compactions == 2
    assert summaries(third) == ["SUMMARY TWO"]
    new_prompts = prompts(model.requests[calls:])
    assert "SUMMARY ONE" in new_prompts
    assert "call_0_0" not in new_prompts  # already summarised the first time
    assert "call_100_0" in new_prompts
    assert estimate_message_tokens(third) <= 0.8 * WINDOW
    assert_valid(third)


async def test_a_different_history_is_not_given_a_stale_summary() -> None:
    label = ["ABOUT HANDLERS"]
    model = ScriptedProvider([lambda request: label[0]] * 20)
    transform = create_context_transform(model, WINDOW)
    await transform(list(long_history(60, result_chars=1200)))
    label[0] = "ABOUT PARSERS"
    other = long_history(60, result_chars=1200, task="Fix the parsers.")
    out = await transform(list(other))
    assert summaries(out) == ["ABOUT PARSERS"]
    first = out[0]
    assert isinstance(first, UserMessage)
    assert first.blocks[0] == TextBlock(text="Fix the parsers.")


async def test_the_window_comes_from_the_model_registry() -> None:
    assert await create_context_transform(ScriptedProvider([]), model="gpt-4o").window() == 128_000
    haiku = ScriptedProvider([], model_id="claude-haiku-4-5-20251001")
    assert await create_context_transform(haiku).window() == 200_000
    assert await create_context_transform(haiku, 50_000).window() == 50_000
    with pytest.raises(ValueError, match="max_context_tokens"):
        create_context_transform(haiku, model="my-local-model")
    with pytest.raises(ValueError, match="max_context_tokens"):
        await create_context_transform(ScriptedProvider([], model_id="unknown-7b"))([])


async def test_the_summariser_can_be_chosen_per_call_sync_or_async() -> None:
    model = ScriptedProvider(["S"] * 20)

    async def pick_async() -> LLMProvider:
        return model

    history = long_history(60, result_chars=1200)
    for source in (lambda: model, pick_async):
        out = await create_context_transform(source, WINDOW)(list(history))
        assert summaries(out) == ["S"]
    with pytest.raises(TypeError, match="not an LLMProvider"):
        await create_context_transform(lambda: "nope", WINDOW)(list(history))  # type: ignore[arg-type, return-value]


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="target_ratio"):
        create_context_transform(ScriptedProvider([]), 1000, threshold_ratio=0.4)
    with pytest.raises(ValueError, match="MicroCompaction"):
        MicroCompaction(max_chars=10)
    with pytest.raises(ValueError, match="max_context_tokens"):
        create_context_transform(ScriptedProvider([]), 0)


# ------------------------------------------------------------------------- in the agent loop


def as_agent_messages(history: list[AnyMessage]) -> list[AgentMessage]:
    out: list[AgentMessage] = []
    for message in history:
        if isinstance(message, AssistantMessage):
            out.append(AssistantReply(message=message))
        elif message.tool_results:
            out.append(ToolResults(results=message.tool_results))
        else:
            out.append(UserInput(content=message.content))
    return out


async def test_a_long_session_is_compacted_before_the_model_call() -> None:
    main = ScriptedProvider(["Here is the summary you asked for.", "Sure."])
    cheap = ScriptedProvider(["- 60 handlers read, all delegate to process()"] * 10, model_id="cheap")
    stored: list[str] = []
    transform = create_context_transform(cheap, WINDOW, keep_tail=4, on_overflow=stored.append)
    history = long_history(60, result_chars=1200)
    session = AgentSession(
        BasicAgent(name="worker", system_prompt="You refactor code."), "s1",
        AgentBuilder().provider(main).build(), transform=transform, messages=as_agent_messages(history),
    )
    full = session.history_for_llm()
    result = await session.submit_turn("Go on.")
    assert result.ok, result.error

    sent = main.requests[0].messages
    assert estimate_message_tokens(sent) < 0.8 * WINDOW < estimate_message_tokens(full)
    assert_valid(sent)
    assert summaries(sent) == ["- 60 handlers read, all delegate to process()"]
    first = sent[0]
    assert isinstance(first, UserMessage)
    assert first.blocks[0] == TextBlock(text="Refactor the handlers.")
    last = sent[-1]
    assert isinstance(last, UserMessage)
    assert last.blocks[-1] == TextBlock(text="Go on.")
    assert stored
    assert "call_0_0" in stored[0]
    # The session keeps its full history: compaction only shapes what the model is sent.
    assert len(session.messages) == len(history) + 2

    # The next turn reuses the summary: no new summariser call.
    calls = cheap.calls
    await session.submit_turn("And then?")
    assert cheap.calls == calls
    assert summaries(main.requests[1].messages) == summaries(sent)
    assert_valid(main.requests[1].messages)
