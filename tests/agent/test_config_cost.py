"""``AgentConfig`` (defaults, validation, frozen) and ``CostTracker`` (tokens and USD by model)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agcore.agent import AgentConfig, CostTracker
from agcore.llm.models import ModelInfo, ModelRegistry
from agcore.llm.types import AssistantMessage, TextBlock, Usage


def test_config_defaults_cap_every_loop() -> None:
    config = AgentConfig()
    assert config.max_turns == 50
    assert config.max_tool_turns == 25
    assert config.max_tokens is None
    assert config.temperature is None
    assert config.parallel_tool_calls is True
    assert config.tool_timeout == 120.0
    assert config.max_total_tokens is None
    assert config.max_cost_usd is None
    assert config.session_ttl is None
    assert config.compact_config is None
    assert config.repetition_limit == 3
    assert config.repetition_action == "nudge"
    assert config.text_mode_tools == "auto"


@pytest.mark.parametrize(
    "fields",
    [
        {"max_turns": 0},
        {"max_tool_turns": 0},
        {"max_tokens": 0},
        {"temperature": -0.1},
        {"temperature": 2.5},
        {"tool_timeout": 0},
        {"max_total_tokens": 0},
        {"max_cost_usd": -1},
        {"session_ttl": 0},
        {"repetition_limit": 1},
        {"repetition_action": "explode"},
        {"max_turn": 5},  # a typo is an error, not silently ignored
    ],
)
def test_config_rejects_bad_values(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError) as info:
        AgentConfig(**fields)
    assert next(iter(fields)) in str(info.value)


def test_config_is_frozen_and_replace_validates() -> None:
    config = AgentConfig(max_turns=10)
    with pytest.raises(ValidationError):
        config.max_turns = 11  # type: ignore[misc]
    changed = config.replace(max_tool_turns=4, compact_config={"threshold": 0.8})
    assert (changed.max_turns, changed.max_tool_turns) == (10, 4)
    assert changed.compact_config == {"threshold": 0.8}
    assert config.max_tool_turns == 25  # the original is untouched
    with pytest.raises(ValidationError):
        config.replace(max_turns=0)


def test_config_json_round_trip() -> None:
    config = AgentConfig(
        max_cost_usd=2.5, session_ttl=3600, repetition_action="stop", compact_config={"a": 1}
    )
    assert AgentConfig.model_validate_json(config.model_dump_json()) == config


# ---------------------------------------------------------------------------------------- cost

PRICES = ModelRegistry([
    ModelInfo(id="big", provider="anthropic", context_window=200_000, max_output_tokens=8_000,
              input_usd_per_mtok=3.0, output_usd_per_mtok=15.0,
              cache_read_usd_per_mtok=0.3, cache_write_usd_per_mtok=3.75),
    ModelInfo(id="small", provider="openai", context_window=128_000, max_output_tokens=16_000,
              input_usd_per_mtok=0.15, output_usd_per_mtok=0.6),
])


def reply(model: str, **usage: int) -> AssistantMessage:
    return AssistantMessage(content=[TextBlock(text="ok")], model=model, provider="p", usage=Usage(**usage))


def test_tracker_totals_by_model_with_cache_tokens_priced() -> None:
    tracker = CostTracker(registry=PRICES)
    tracker.add(reply("big", input_tokens=1_000_000, output_tokens=100_000))
    tracker.add(reply("big", cache_read_tokens=1_000_000, cache_write_tokens=1_000_000))
    tracker.add(reply("small", input_tokens=2_000_000, output_tokens=1_000_000))
    assert tracker.calls == 3
    assert tracker.by_model["big"] == Usage(input_tokens=1_000_000, output_tokens=100_000,
                                            cache_read_tokens=1_000_000, cache_write_tokens=1_000_000)
    assert tracker.usage.total_tokens == 1_100_000 + 2_000_000 + 3_000_000
    big = 3.0 + 1.5 + 0.3 + 3.75
    small = 0.3 + 0.6
    assert tracker.cost_by_model() == pytest.approx({"big": big, "small": small})
    assert tracker.cost_usd == pytest.approx(big + small)
    assert tracker.unknown_models == set()


def test_unknown_models_are_left_out_of_the_cost_and_listed() -> None:
    tracker = CostTracker(registry=PRICES)
    tracker.add(reply("small", input_tokens=1_000_000))
    tracker.add(reply("homemade-llm", input_tokens=5_000_000))
    tracker.add(reply("", output_tokens=10))
    assert tracker.cost_usd == pytest.approx(0.15)
    assert tracker.unknown_models == {"homemade-llm", "<unknown>"}
    assert tracker.cost_by_model()["homemade-llm"] is None
    assert tracker.usage.input_tokens == 6_000_000


def test_cost_is_none_when_nothing_could_be_priced_and_zero_when_nothing_was_spent() -> None:
    assert CostTracker(registry=PRICES).cost_usd == 0.0
    tracker = CostTracker(registry=PRICES)
    tracker.add(reply("homemade-llm", input_tokens=10))
    assert tracker.cost_usd is None


def test_a_price_registered_later_applies_to_the_whole_session() -> None:
    registry = ModelRegistry()
    tracker = CostTracker(registry=registry)
    tracker.add(reply("late", input_tokens=1_000_000))
    assert tracker.cost_usd is None
    registry.register(ModelInfo(id="late", provider="x", context_window=1000, max_output_tokens=100,
                                input_usd_per_mtok=2.0, output_usd_per_mtok=4.0))
    assert tracker.cost_usd == pytest.approx(2.0)


def test_default_registry_prices_known_models() -> None:
    tracker = CostTracker()
    tracker.add(reply("claude-sonnet-4-5-20250929", input_tokens=1_000_000))
    assert tracker.cost_usd is not None
    assert tracker.cost_usd > 0


def test_tracker_json_round_trip() -> None:
    tracker = CostTracker(registry=PRICES)
    tracker.add(reply("big", input_tokens=10, output_tokens=5, cache_read_tokens=3))
    tracker.add_usage("small", Usage(input_tokens=7))
    loaded = CostTracker.model_validate_json(tracker.model_dump_json())
    assert loaded.usage == tracker.usage
    assert loaded.by_model == tracker.by_model
    assert loaded.calls == 2
