"""``create_provider("vendor:model")``: one string picks and configures the provider."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agcore.llm import (
    MissingCredentialsError,
    clear_provider_cache,
    create_provider,
    parse_model_spec,
    register_provider_factory,
)
from agcore.llm.providers.anthropic import AnthropicProvider
from agcore.llm.providers.ollama import OllamaProvider
from agcore.llm.providers.openai import OpenAIProvider
from agcore.testing import ScriptedProvider

ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    clear_provider_cache()
    yield
    clear_provider_cache()


def test_each_vendor_spec_builds_its_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    anthropic = create_provider("anthropic:claude-haiku-4-5")
    assert isinstance(anthropic, AnthropicProvider)
    assert (anthropic.provider_name, anthropic.model_id) == ("anthropic", "claude-haiku-4-5")
    openai = create_provider("openai:gpt-4.1")
    assert isinstance(openai, OpenAIProvider)
    assert openai.provider_name == "openai"
    ollama = create_provider("ollama:llama3.1:8b")
    assert isinstance(ollama, OllamaProvider)
    assert ollama.model_id == "llama3.1:8b"  # the Ollama tag keeps its colon


def test_openai_compatible_needs_a_url_and_no_key() -> None:
    with pytest.raises(ValueError, match="base_url"):
        create_provider("openai-compatible:qwen3")
    compatible = create_provider("openai-compatible:qwen3", base_url="http://127.0.0.1:8080/v1")
    assert compatible.provider_name == "openai-compatible"
    assert create_provider("openai:qwen3", base_url="http://127.0.0.1:8080/v1").provider_name == (
        "openai-compatible"
    )


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(MissingCredentialsError, match="ANTHROPIC_API_KEY"):
        create_provider("anthropic:claude-haiku-4-5")
    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY"):
        create_provider("openai:gpt-4.1")


def test_providers_are_cached_by_arguments_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "key-one")
    first = create_provider("anthropic:claude-haiku-4-5")
    assert create_provider("anthropic:claude-haiku-4-5") is first
    assert create_provider("anthropic:claude-haiku-4-5", timeout=5.0) is not first
    assert create_provider("anthropic:claude-haiku-4-5", cache=False) is not first
    monkeypatch.setenv("ANTHROPIC_API_KEY", "key-two")  # a changed key must not reuse the old client
    assert create_provider("anthropic:claude-haiku-4-5") is not first


def test_bare_model_ids_are_resolved_through_the_registry() -> None:
    assert parse_model_spec("claude-haiku-4-5-20251001") == ("anthropic", "claude-haiku-4-5-20251001")
    assert parse_model_spec("gpt-4.1") == ("openai", "gpt-4.1")
    with pytest.raises(ValueError, match="'<provider>:<model>'"):
        parse_model_spec("my-house-model")
    with pytest.raises(ValueError, match="names no model"):
        create_provider("anthropic:")


def test_other_vendors_plug_in() -> None:
    seen: dict[str, Any] = {}

    def factory(model: str, **options: Any) -> ScriptedProvider:
        seen.update(options, model=model)
        return ScriptedProvider(["hi"], model_id=model, provider_name="house")

    register_provider_factory("house", factory)
    provider = create_provider("house:tiny-1", temperature_hint=0.3)
    assert provider.provider_name == "house"
    assert seen == {"model": "tiny-1", "temperature_hint": 0.3}
