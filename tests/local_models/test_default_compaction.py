"""``default_compaction``: compaction is on by default for small context windows (small local models),
off for large ones and for models whose window nobody gave."""

from __future__ import annotations

import pytest

from agcore.context import SMALL_WINDOW, ContextCompactor, default_compaction, known_window
from agcore.llm import Message, TextBlock, ToolResultBlock, ToolUseBlock
from agcore.llm.types import AssistantMessage, UserMessage
from agcore.testing import ScriptedProvider

pytestmark = pytest.mark.anyio


def provider(model: str) -> ScriptedProvider:
    return ScriptedProvider(["summary of the earlier work"], model_id=model)


def test_large_known_window_is_left_alone() -> None:
    assert (known_window("claude-sonnet-4-6") or 0) >= SMALL_WINDOW
    assert default_compaction(provider("claude-sonnet-4-6")) is None


def test_unknown_local_model_needs_its_window() -> None:
    local = provider("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    assert known_window(local.model_id) is None
    assert default_compaction(local) is None
    compactor = default_compaction(local, context_window=4096)
    assert isinstance(compactor, ContextCompactor)
    assert compactor.max_context_tokens == 4096
    assert compactor.summary_max_tokens == 512  # a 2048-token summary would not leave room for the tail
    with pytest.raises(ValueError, match=r"context window of 'qwen2\.5-coder"):
        default_compaction(local, enabled=True)


def test_forcing_it_either_way() -> None:
    big = provider("claude-sonnet-4-6")
    assert isinstance(default_compaction(big, enabled=True), ContextCompactor)
    assert default_compaction(provider("m"), context_window=4096, enabled=False) is None
    assert default_compaction(provider("m"), context_window=64_000) is None
    with pytest.raises(ValueError, match="too small"):
        default_compaction(provider("m"), context_window=100)


async def test_a_small_window_history_is_compacted() -> None:
    # A small window means small summariser inputs: the transcript is summarised in chunks.
    summariser = ScriptedProvider(["summary of the earlier work"] * 8, model_id="local-model")
    compactor = default_compaction(summariser, context_window=2048)
    assert compactor is not None
    history: list[Message] = [UserMessage(content="fix the failing test")]
    for i in range(12):
        call = ToolUseBlock(id=f"c{i}", name="read_file", input={"path": f"f{i}.py"})
        history.append(AssistantMessage(content=[call]))
        history.append(UserMessage(content=[ToolResultBlock(tool_use_id=f"c{i}", content="x = 1\n" * 150)]))
    history.append(AssistantMessage(content=[TextBlock(text="Now I run the tests.")]))
    history.append(UserMessage(content="go on"))
    sent = await compactor(history)
    assert compactor.compactions == 1
    assert summariser.calls >= 1
    assert all((r.max_tokens or 0) <= 256 for r in summariser.requests)  # 2048 // 8
    assert any("summary of the earlier work" in str(m.content) for m in sent)
    assert len(sent) < len(history)
