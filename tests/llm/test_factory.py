"""``create_provider("vendor:model")``: one string picks and configures the provider."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from agcore.llm import (
    MissingCredentialsError,
    UnknownModelWarning,
    clear_provider_cache,
    create_provider,
    default_registry,
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


@pytest.mark.parametrize(("spec", "meant"), [
    ("antropic:claude-haiku-4-5", "anthropic"), ("opnai:gpt-4.1", "openai"), ("olama:llama3.1", "ollama"),
])
def test_a_misspelt_vendor_is_refused_with_the_right_name(spec: str, meant: str) -> None:
    # It used to be taken as a bare model id of another vendor and priced as that model.
    with pytest.raises(ValueError, match=f"did you mean '{meant}'"):
        parse_model_spec(spec)
    from agcore.llm.models import get_model_info

    assert get_model_info(spec) is None  # and never priced as the model it names


def test_an_ollama_style_bare_id_is_not_taken_for_a_misspelt_vendor() -> None:
    with pytest.raises(ValueError, match="cannot tell which provider") as caught:
        parse_model_spec("llama3:8b")
    assert "did you mean" not in str(caught.value)


@pytest.mark.anyio
async def test_closing_a_shared_provider_spares_its_other_holders(anyio_backend: str) -> None:
    first = create_provider("openai:gpt-4.1", api_key="sk-test")
    second = create_provider("openai:gpt-4.1", api_key="sk-test")
    assert first is second
    await first.aclose()  # the first holder is done
    assert isinstance(second, OpenAIProvider)
    assert not second.closed
    assert not second.client.is_closed()
    await second.aclose()
    assert second.closed
    assert second.client.is_closed()
    third = create_provider("openai:gpt-4.1", api_key="sk-test")
    assert third is not second
    assert not third.closed
    await third.aclose()
    await third.aclose()  # idempotent


def test_the_cache_is_bounded() -> None:
    from agcore.llm.factory import MAX_CACHED_PROVIDERS

    first = create_provider("openai:gpt-4.1", api_key="sk-0")
    for i in range(1, MAX_CACHED_PROVIDERS + 10):
        create_provider("openai:gpt-4.1", api_key=f"sk-{i}")
    assert create_provider("openai:gpt-4.1", api_key="sk-0") is not first  # the oldest was dropped
    assert create_provider("openai:gpt-4.1", api_key=f"sk-{MAX_CACHED_PROVIDERS + 9}") is (
        create_provider("openai:gpt-4.1", api_key=f"sk-{MAX_CACHED_PROVIDERS + 9}")
    )


# ------------------------------------------------------------------ "did you mean" for model ids


def test_a_misspelt_bare_model_id_gets_the_registrys_nearest() -> None:
    with pytest.raises(ValueError, match=r"did you mean 'claude-haiku-4-5' \('anthropic:claude-haiku-4-5'\)"):
        parse_model_spec("claude-haku-4-5")


def test_a_model_id_the_registry_lacks_under_a_listed_vendor_builds_with_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with pytest.warns(UnknownModelWarning, match="did you mean 'anthropic:claude-haiku-4-5'"):
        provider = create_provider("anthropic:claude-haiku-45")
    assert provider.model_id == "claude-haiku-45"  # a new model must still be usable
    with pytest.warns(UnknownModelWarning, match="its cost is not counted") as caught:
        create_provider("anthropic:claude-zebra-9")
    assert "did you mean" not in str(caught[0].message)


@pytest.mark.parametrize(("spec", "options"), [
    ("anthropic:claude-haiku-4-5", {}),
    ("anthropic:claude-haiku-4-5-20251001", {}),  # a dated id is known
    ("openai:gpt-5.5", {}),
    ("ollama:llama3.1", {}),  # whatever Ollama pulled
    ("openai-compatible:qwen2.5-coder", {"base_url": "http://127.0.0.1:8080/v1"}),
    ("openai:qwen2.5-coder", {"base_url": "http://127.0.0.1:8080/v1"}),  # a local server
])
def test_no_warning_for_known_models_or_local_servers(
    spec: str, options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownModelWarning)
        create_provider(spec, **options)


def test_the_builder_warns_for_an_unknown_model_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from agcore.agent import AgentBuilder

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with pytest.warns(UnknownModelWarning, match="claude-haiku-4-5"):
        AgentBuilder().model("anthropic:claude-haiku-45").build()


def test_close_matches_stays_within_a_vendor_when_asked() -> None:
    assert default_registry.close_matches("claude-haku-4-5")[0] == "claude-haiku-4-5"
    assert default_registry.close_matches("claude-haku-4-5", provider="openai") == []
    assert default_registry.close_matches("something-else-entirely") == []
