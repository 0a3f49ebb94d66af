"""Compaction: the middle becomes a summary, head and tail stay, tool pairs never part."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agcore.agent import Summary
from agcore.context import (
    CompactionError,
    cap_tool_results,
    compact,
    estimate_message_tokens,
    is_summary_block,
    safe_cut_points,
    summary_block,
    summary_text,
)
from agcore.llm import (
    AssistantMessage,
    InvalidRequestError,
    LLMRequest,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from agcore.testing import ScriptedProvider

from ._history import AnyMessage, assert_valid, long_history, tool_round

pytestmark = pytest.mark.anyio

WINDOW = 20_000


def summariser(text: str, calls: int = 10) -> ScriptedProvider:
    """A summarising model answering ``text`` (a long middle is summarised in several calls)."""
    return ScriptedProvider([text] * calls)


def summary_blocks(messages: list[AnyMessage]) -> list[TextBlock]:
    return [b for m in messages if isinstance(m, UserMessage) for b in m.blocks
            if is_summary_block(b) and isinstance(b, TextBlock)]


def prompt_of(request: LLMRequest) -> str:
    message = request.messages[0]
    assert isinstance(message, UserMessage)
    return "".join(b.text for b in message.blocks if isinstance(b, TextBlock))


async def test_a_history_under_the_threshold_is_returned_as_is_without_a_model_call() -> None:
    history = long_history(5)
    summariser = ScriptedProvider([])  # any call would fail: the script is empty
    out = await compact(history, provider=summariser, max_context_tokens=WINDOW)
    assert out == history
    assert summariser.calls == 0


async def test_the_middle_is_summarised_and_head_and_tail_kept() -> None:
    history = long_history(60, result_chars=1200)  # ~24k tokens, past 0.8 x 20k
    assert estimate_message_tokens(history) > 0.8 * WINDOW
    model = summariser("- read 60 handler files\n- all call process(request)")
    out = await compact(history, provider=model, max_context_tokens=WINDOW, keep_head=1, keep_tail=4)

    assert estimate_message_tokens(out) <= 0.5 * WINDOW  # aims at target_ratio
    assert_valid(out)
    first = out[0]
    assert isinstance(first, UserMessage)
    assert first.blocks[0] == TextBlock(text="Refactor the handlers.")  # the head's task
    [block] = summary_blocks(out)
    assert summary_text(block) == "- read 60 handler files\n- all call process(request)"
    assert out[-4:] == history[-4:]  # the tail, as it was
    assert out[1:] == history[len(history) - len(out) + 1 :]
    # The summariser read the middle and nothing of the head, within its window.
    prompts = "".join(prompt_of(r) for r in model.requests)
    assert "call_0_0" in prompts
    assert "Refactor the handlers." not in prompts
    assert all(r.max_tokens == 2048 for r in model.requests)
    assert all(estimate_message_tokens(r.messages) <= 0.8 * WINDOW for r in model.requests)


async def test_the_last_keep_tail_messages_are_never_summarised_even_past_the_target() -> None:
    history = long_history(30, result_chars=9000)  # each result close to the per-result cap
    model = summariser("summary")
    out = await compact(history, provider=model, max_context_tokens=WINDOW, keep_tail=9)
    assert model.calls >= 1
    assert_valid(out)
    # The 9 last messages (4 tool rounds and the closing exchange, ~9k tokens) stay word for word,
    # though the tail budget (about 7.9k tokens) alone would keep fewer.
    assert out[-8:] == history[-8:]
    first_kept = history[-9]
    assert isinstance(first_kept, UserMessage)  # merged with the summary, its blocks intact
    assert out[-9].blocks[-len(first_kept.blocks):] == first_kept.blocks
    shorter = await compact(history, provider=summariser("summary"), max_context_tokens=WINDOW, keep_tail=1)
    assert len(shorter) < len(out)


async def test_keep_tail_that_leaves_no_middle_summarises_nothing() -> None:
    history = long_history(8, result_chars=9000)
    model = summariser("summary")
    out = await compact(history, provider=model, max_context_tokens=WINDOW, keep_head=1,
                        keep_tail=len(history) - 1)
    assert model.calls == 0
    assert len(out) == len(history)


async def test_the_summary_reads_exactly_like_the_agent_layers_summary_message() -> None:
    assert summary_block("notes").text == Summary(text="notes").to_llm_text()
    assert is_summary_block(TextBlock(text=Summary(text="x").to_llm_text()))
    assert not is_summary_block(TextBlock(text="a plain message"))


async def test_the_summary_never_makes_two_user_messages_in_a_row() -> None:
    # Head ends with a user message and the tail starts with one: the summary joins them.
    history: list[AnyMessage] = [UserMessage(content="task")]
    for n in range(40):
        history.extend(tool_round(n, result_chars=1500))
    out = await compact(history, provider=summariser("summary"), max_context_tokens=WINDOW, keep_tail=2)
    assert_valid(out)
    seam = out[0]
    assert isinstance(seam, UserMessage)
    assert seam.blocks[0] == TextBlock(text="task")
    assert is_summary_block(seam.blocks[1])


async def test_on_overflow_receives_what_was_summarised_away_sync_and_async() -> None:
    history = long_history(60, result_chars=1200)
    received: list[str] = []

    async def store(text: str) -> None:
        received.append(text)

    out = await compact(history, provider=summariser("s"), max_context_tokens=WINDOW,
                        on_overflow=store)
    out_sync = await compact(history, provider=summariser("s"), max_context_tokens=WINDOW,
                             on_overflow=received.append)
    assert out == out_sync
    assert len(received) == 2
    assert received[0] == received[1]
    kept_ids = {r.tool_use_id for m in out if isinstance(m, UserMessage) for r in m.tool_results}
    removed_ids = {f"call_{n}_0" for n in range(60)} - kept_ids
    assert removed_ids
    assert all(i in received[0] for i in removed_ids)
    assert not any(i in received[0] for i in kept_ids)
    assert "def handler_0(request)" in received[0]


async def test_one_huge_tool_result_in_the_tail_does_not_defeat_compaction() -> None:
    # The latest tool result, which the model is about to read, is alone ~3x the whole window.
    call, _ = tool_round(99)
    huge = ToolResultBlock(tool_use_id="call_99_0", content="data row 123, value 456\n" * 10_000)
    history = [*long_history(30, result_chars=800)[:-2], call, UserMessage(content=[huge])]
    assert_valid(history)
    assert estimate_message_tokens([history[-1]]) > 3 * WINDOW
    out = await compact(history, provider=summariser("summary"), max_context_tokens=WINDOW)
    assert estimate_message_tokens(out) <= 0.8 * WINDOW
    assert_valid(out)
    last_result = [r for m in out if isinstance(m, UserMessage) for r in m.tool_results][-1]
    assert last_result.tool_use_id == "call_99_0"
    assert "characters of this tool result were cut" in last_result.text
    assert last_result.text.startswith("data row 123")


async def test_a_huge_result_alone_is_cut_without_summarising_when_that_suffices() -> None:
    assistant, _ = tool_round(1)
    huge = UserMessage(content=[ToolResultBlock(tool_use_id="call_1_0", content="log line\n" * 50_000)])
    history: list[AnyMessage] = [UserMessage(content="check the log"), assistant, huge]
    model = ScriptedProvider([])
    out = await compact(history, provider=model, max_context_tokens=WINDOW)
    assert model.calls == 0
    assert estimate_message_tokens(out) <= 0.8 * WINDOW
    assert out[:2] == history[:2]


async def test_an_earlier_summary_in_the_head_is_folded_into_the_new_one() -> None:
    history = long_history(60, result_chars=1200)
    first = await compact(history, provider=summariser("FIRST SUMMARY"),
                          max_context_tokens=WINDOW, keep_tail=4)
    # The session went on: 60 more rounds (new call ids), then the same closing exchange.
    more = [m for n in range(100, 160) for m in tool_round(n, result_chars=1200)]
    grown = [*first[:-1], UserMessage(content="Read the rest too."), *more,
             AssistantMessage(content=[TextBlock(text="Done again.")]), first[-1]]
    assert_valid(grown)
    model = summariser("SECOND SUMMARY")
    second = await compact(grown, provider=model, max_context_tokens=WINDOW, keep_tail=4)
    assert "FIRST SUMMARY" in prompt_of(model.requests[0])
    assert [summary_text(b) for b in summary_blocks(second)] == ["SECOND SUMMARY"]
    assert_valid(second)


async def test_a_middle_larger_than_the_summariser_input_is_summarised_in_chunks() -> None:
    history = long_history(100, result_chars=1500)  # ~50k tokens
    model = ScriptedProvider([f"part {n}" for n in range(1, 20)])
    out = await compact(history, provider=model, max_context_tokens=WINDOW, summary_input_tokens=8_000)
    assert model.calls >= 5
    for n, request in enumerate(model.requests):
        assert estimate_message_tokens(request.messages) <= 8_000 + 1_000  # transcript + prompt
        if n:  # each call folds in the summary so far
            assert f"<conversation_summary>\npart {n}\n</conversation_summary>" in prompt_of(request)
    assert summary_text(summary_blocks(out)[0]) == f"part {model.calls}"


async def test_a_failing_summariser_raises_compaction_error_saying_what_to_do() -> None:
    history = long_history(60, result_chars=1200)
    failing = ScriptedProvider([InvalidRequestError("model not found")])
    with pytest.raises(CompactionError, match="failed") as caught:
        await compact(history, provider=failing, max_context_tokens=WINDOW)
    assert isinstance(caught.value.__cause__, InvalidRequestError)
    with pytest.raises(CompactionError, match="returned no text"):
        await compact(history, provider=ScriptedProvider([""]), max_context_tokens=WINDOW)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"max_context_tokens": 0}, "max_context_tokens"),
    ({"max_context_tokens": 1000, "threshold_ratio": 1.5}, "threshold_ratio"),
    ({"max_context_tokens": 1000, "target_ratio": 0.9}, "target_ratio"),
    ({"max_context_tokens": 1000, "keep_tail": -1}, "keep_tail"),
])
async def test_bad_settings_are_refused(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        await compact([], provider=ScriptedProvider([]), **kwargs)


# ---------------------------------------------------------------------------- properties


@st.composite
def histories(draw: st.DrawFn) -> list[AnyMessage]:
    """A valid history: user text, rounds of 0-3 parallel calls with results of random sizes,
    sometimes a text reply and a new user message (steering text rides along with results)."""
    history: list[AnyMessage] = [UserMessage(content="task " * draw(st.integers(1, 50)))]
    for n in range(draw(st.integers(0, 40))):
        calls = draw(st.integers(0, 3))
        if calls == 0:
            history.append(AssistantMessage(content=[TextBlock(text="thinking aloud " * 20)]))
            history.append(UserMessage(content="go on " * draw(st.integers(1, 30))))
            continue
        uses = [ToolUseBlock(id=f"c{n}_{i}", name="t", input={"i": i}) for i in range(calls)]
        history.append(AssistantMessage(content=list(uses)))
        sizes = draw(st.lists(st.integers(0, 20_000), min_size=calls, max_size=calls))
        blocks: list[Any] = [ToolResultBlock(tool_use_id=u.id, content="r" * s)
                             for u, s in zip(uses, sizes, strict=True)]
        if draw(st.booleans()):
            blocks.append(TextBlock(text="steer: also check tests"))
        history.append(UserMessage(content=blocks))
    return history


def pairs(messages: list[AnyMessage]) -> list[tuple[int, int]]:
    used = {c.id: i for i, m in enumerate(messages) if isinstance(m, AssistantMessage) for c in m.tool_calls}
    return [(used[r.tool_use_id], j) for j, m in enumerate(messages) if isinstance(m, UserMessage)
            for r in m.tool_results if r.tool_use_id in used]


@settings(max_examples=50, deadline=None)
@given(histories(), st.data())
def test_safe_cut_points_never_part_a_call_from_its_result(
    history: list[AnyMessage], data: st.DataObject
) -> None:
    safe = safe_cut_points(history)
    assert len(safe) == len(history) + 1
    cut = data.draw(st.integers(0, len(history)))
    crossing = any(use < cut <= result for use, result in pairs(history))
    assert safe[cut] is not crossing


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=histories(), keep_head=st.integers(0, 4), keep_tail=st.integers(0, 8),
       window=st.sampled_from([4_000, 10_000, 30_000]))
async def test_compaction_keeps_every_tool_pair_together(
    history: list[AnyMessage], keep_head: int, keep_tail: int, window: int
) -> None:
    model = summariser("summary of the middle", calls=50)
    out = await compact(history, provider=model, max_context_tokens=window,
                        keep_head=keep_head, keep_tail=keep_tail)
    assert_valid(out)
    assert isinstance(out[0], UserMessage)
    # Every call and result that survived is still a complete pair, and the last message is kept.
    assert out[-1].role == history[-1].role
    # The last keep_tail messages end the output block for block (their huge results cut first,
    # when the history was over the threshold).
    def last_blocks(messages: list[AnyMessage], count: int) -> list[Any]:
        tail = messages[len(messages) - count:] if count else []
        return [b for m in tail for b in (m.blocks if isinstance(m, UserMessage) else m.content)]

    found = [b for m in out for b in (m.blocks if isinstance(m, UserMessage) else m.content)]
    capped = cap_tool_results(history, max(1, int(window * 0.5) // 4))
    expected = [last_blocks(history, keep_tail), last_blocks(capped, keep_tail)]
    assert any(found[len(found) - len(kept):] == kept for kept in expected)
    if model.calls:
        assert len(summary_blocks(out)) == 1
        assert estimate_message_tokens(out) < estimate_message_tokens(history)
