"""Micro-compaction: old tool results shrink, the last N stay whole."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from agcore.context import cut_middle, estimate_message_tokens, truncate_old_tool_results
from agcore.llm import ImageBlock, TextBlock, ToolResultBlock, UserMessage

from ._history import long_history, tool_round


def results(messages: Sequence[object]) -> list[ToolResultBlock]:
    return [r for m in messages if isinstance(m, UserMessage) for r in m.tool_results]


def test_old_results_are_cut_and_the_last_n_kept_whole() -> None:
    history = long_history(10, result_chars=5000)
    out = truncate_old_tool_results(history, keep_last=3, max_chars=1000)
    before, after = results(history), results(out)
    assert len(after) == len(before) == 10
    for old, new in zip(before[:7], after[:7], strict=True):
        assert len(new.text) <= 1000
        assert new.text.startswith(old.text[:300])  # the head survives
        assert new.text.endswith(old.text[-200:])  # and the tail
        assert "characters of this tool result were cut" in new.text
        assert new.tool_use_id == old.tool_use_id
    assert after[7:] == before[7:]
    assert all(a is b for a, b in zip(after[7:], before[7:], strict=True))
    assert estimate_message_tokens(out) < estimate_message_tokens(history) / 2


def test_marker_says_how_much_was_cut() -> None:
    text = "z" * 10_000
    short = cut_middle(text, 1000)
    cut = 10_000 - short.count("z")
    assert f"[... {cut:,} characters" in short


def test_small_results_and_other_messages_are_untouched() -> None:
    history = long_history(5, result_chars=300)
    out = truncate_old_tool_results(history, keep_last=1, max_chars=1000)
    assert out == history
    assert all(a is b for a, b in zip(out, history, strict=True))


def test_input_is_not_modified_and_cutting_twice_changes_nothing() -> None:
    history = long_history(6, result_chars=8000)
    snapshot = [m.model_copy(deep=True) for m in history]
    once = truncate_old_tool_results(history, keep_last=2, max_chars=500)
    assert history == snapshot
    assert truncate_old_tool_results(once, keep_last=2, max_chars=500) == once


def test_keep_last_zero_cuts_every_large_result_and_errors_stay_errors() -> None:
    assistant, _ = tool_round(1, result_chars=4000)
    error = ToolResultBlock(tool_use_id="call_1_0", content="E" * 4000, is_error=True)
    out = truncate_old_tool_results([assistant, UserMessage(content=[error])], keep_last=0, max_chars=300)
    cut = results(out)[0]
    assert cut.is_error
    assert len(cut.text) <= 300


def test_results_with_images_keep_the_images() -> None:
    image = ImageBlock(media_type="image/png", data="aGVsbG8=")
    result = ToolResultBlock(tool_use_id="a", content=[TextBlock(text="y" * 5000), image])
    out = truncate_old_tool_results([UserMessage(content=[result, TextBlock(text="and?")])],
                                    keep_last=0, max_chars=400)
    first = out[0]
    assert isinstance(first, UserMessage)
    cut = first.tool_results[0]
    assert isinstance(cut.content, list)
    assert cut.content[1] == image
    assert len(cut.text) <= 400
    assert first.blocks[1] == TextBlock(text="and?")


def test_bad_settings_are_refused_with_what_to_do() -> None:
    with pytest.raises(ValueError, match="max_chars must be at least"):
        truncate_old_tool_results([], max_chars=50)
    with pytest.raises(ValueError, match="keep_last"):
        truncate_old_tool_results([], keep_last=-1)
    with pytest.raises(ValueError, match="max_chars must be at least"):
        cut_middle("text", 10)
