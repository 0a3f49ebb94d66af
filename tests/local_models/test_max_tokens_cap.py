"""A small context window gets a reply cap: ``default_max_tokens`` (a fifth of the window, at most
4096) and the CLI's ``--max-tokens``; requests to a local server carry it (before, they carried no
``max_tokens``, and a small model repeating itself ran on until the window was full)."""

from __future__ import annotations

from agcore.context import MAX_TOKENS_CAP, SMALL_WINDOW, default_max_tokens
from agcore.llm import ModelInfo, register_model
from agcore.testing import ScriptedProvider

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


def provider(model: str) -> ScriptedProvider:
    return ScriptedProvider(["ok"], model_id=model)


def test_a_fifth_of_a_small_window_capped() -> None:
    local = provider(MODEL)
    assert default_max_tokens(local, context_window=4096) == 819
    assert default_max_tokens(local, context_window=2048) == 409
    assert default_max_tokens(local, context_window=SMALL_WINDOW - 1) == MAX_TOKENS_CAP


def test_no_cap_for_a_large_or_unknown_window() -> None:
    assert default_max_tokens(provider(MODEL)) is None  # the registry does not know it: nobody said
    assert default_max_tokens(provider(MODEL), context_window=SMALL_WINDOW) is None
    assert default_max_tokens(provider("claude-sonnet-4-6")) is None


def test_the_registrys_window_counts() -> None:
    register_model(
        ModelInfo(
            id="issue26-small-window-model",
            provider="openai-compatible",
            context_window=8192,
            max_output_tokens=8192,
            input_usd_per_mtok=0.0,
            output_usd_per_mtok=0.0,
        )
    )
    assert default_max_tokens(provider("issue26-small-window-model")) == 1638
    assert default_max_tokens(provider("issue26-small-window-model"), context_window=64_000) is None
