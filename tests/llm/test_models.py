"""The model registry: lookup by id, alias, dated id and provider prefix; cost from usage."""

from __future__ import annotations

import pytest

from agcore.llm.models import ModelInfo, ModelRegistry, cost_usd, default_registry, get_model_info
from agcore.llm.types import Usage


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("anthropic:claude-haiku-4-5", "claude-haiku-4-5"),
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),
        ("anthropic:claude-fable-5-2", "claude-fable-5-2"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("openai:gpt-4.1-mini", "gpt-4.1-mini"),
        ("gpt-5.4-mini-2026-03-17", "gpt-5.4-mini"),
        ("openai:gpt-6.2-sol", "gpt-6.2-sol"),
    ],
)
def test_lookup(name: str, expected: str) -> None:
    info = get_model_info(name)
    assert info is not None
    assert info.id == expected


def test_unknown_model_has_unknown_cost() -> None:
    assert get_model_info("my-local-finetune") is None
    assert cost_usd("my-local-finetune", Usage(input_tokens=100)) is None
    assert get_model_info("llama3:8b") is None  # an Ollama tag is not a provider prefix


@pytest.mark.parametrize(
    "retired", ["claude-opus-4-0", "claude-3-5-haiku-20241022", "o4-mini", "gpt-4.1-nano"]
)
def test_models_past_shutdown_are_not_listed(retired: str) -> None:
    assert get_model_info(retired) is None


def test_cost_counts_cache_tokens_at_their_own_price() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000,
                  cache_write_tokens=1_000_000)
    # sonnet: 3 in, 15 out, 0.30 cache read, 3.75 cache write
    assert cost_usd("claude-sonnet-4-5", usage) == pytest.approx(3 + 15 + 0.3 + 3.75)
    # gpt-4o: 2.5 in, 10 out, 1.25 cached read, writes free
    assert cost_usd("gpt-4o", usage) == pytest.approx(2.5 + 10 + 1.25)
    # Fable 5.2 reads its cache at 0.025x input: 8 in, 40 out, 0.20 read, 10 write
    assert cost_usd("claude-fable-5-2", usage) == pytest.approx(8 + 40 + 0.2 + 10)
    # GPT-6.1 Sol bills 30-minute cache writes at 1.25x input: 2 in, 10 out, 0.10 read, 2.50 write
    assert cost_usd("gpt-6.1-sol", usage) == pytest.approx(2 + 10 + 0.1 + 2.5)


def test_cost_of_a_typical_cached_turn() -> None:
    usage = Usage(input_tokens=2_000, output_tokens=1_000, cache_read_tokens=50_000,
                  cache_write_tokens=4_000)
    # claude-sonnet-5-5: 2 in, 10 out, 0.10 read (0.05x since 2026-10-07), 2.50 write
    expected = (2_000 * 2 + 1_000 * 10 + 50_000 * 0.1 + 4_000 * 2.5) / 1_000_000
    assert cost_usd("anthropic:claude-sonnet-5-5", usage) == pytest.approx(expected)


def test_anthropic_cache_writes_cost_a_quarter_more_than_input() -> None:
    for info in default_registry:
        if info.provider == "anthropic":
            assert info.cache_write_usd_per_mtok == pytest.approx(info.input_usd_per_mtok * 1.25)


def test_every_builtin_model_is_plausible() -> None:
    assert len(default_registry) >= 30
    for info in default_registry:
        assert info.provider in {"anthropic", "openai"}
        assert info.context_window >= 100_000
        assert 0 < info.max_output_tokens <= info.context_window
        assert 0 < info.input_usd_per_mtok <= info.output_usd_per_mtok
        assert info.cache_read_usd_per_mtok < info.input_usd_per_mtok


def test_users_register_and_replace_models() -> None:
    registry = ModelRegistry()
    first = ModelInfo(id="house-model", provider="openai-compatible", context_window=32_000,
                      max_output_tokens=4_000, input_usd_per_mtok=0.1, output_usd_per_mtok=0.2,
                      aliases=("house",))
    registry.register(first)
    assert registry.get("house") == first
    assert registry.get("openai-compatible:house-model") == first
    second = first.model_copy(update={"input_usd_per_mtok": 0.05, "aliases": ("hm",)})
    registry.register(second)
    assert registry.get("house") is None  # the replaced entry's alias is gone
    assert registry.get("hm") == second
    assert len(registry) == 1
