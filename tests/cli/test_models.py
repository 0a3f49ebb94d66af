"""Resolving ``--model`` and ``--base-url`` into a provider, and the errors that say what to set."""

from __future__ import annotations

from pathlib import Path

import pytest

from agcore.cli._errors import CliError, ExitCode
from agcore.cli._models import resolve_provider
from agcore.testing import ScriptedProvider
from tests.cli import write_script

URL = "http://127.0.0.1:9/v1"


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "AGCORE_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_scripted_spec_loads_the_script(tmp_path: Path) -> None:
    provider = resolve_provider(f"scripted:{write_script(tmp_path, ['hi'])}")
    assert isinstance(provider, ScriptedProvider)
    assert provider.remaining == 1


@pytest.mark.parametrize("model", ["qwen2.5-coder", "llama3.1:8b", "gpt-5.5"])
def test_with_a_base_url_a_model_is_served_by_that_server(model: str) -> None:
    provider = resolve_provider(model, URL)
    assert (provider.provider_name, provider.model_id) == ("openai-compatible", model)
    assert str(provider.client.base_url).rstrip("/") == URL  # type: ignore[attr-defined]


def test_base_url_without_a_model_asks_for_one() -> None:
    with pytest.raises(CliError, match="pass --model NAME") as info:
        resolve_provider(None, URL)
    assert info.value.code == ExitCode.CONFIG


def test_the_default_model_follows_the_key_that_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    provider = resolve_provider(None)
    assert (provider.provider_name, provider.model_id) == ("openai", "gpt-5.5")
    monkeypatch.setenv("AGCORE_MODEL", "openai:gpt-5.6-luna")
    assert resolve_provider(None).model_id == "gpt-5.6-luna"


def test_an_unknown_model_says_how_to_write_the_spec() -> None:
    with pytest.raises(CliError, match="cannot tell which provider serves 'mystery'") as info:
        resolve_provider("mystery")
    assert info.value.code == ExitCode.CONFIG


def test_a_missing_key_names_the_variable() -> None:
    with pytest.raises(CliError, match="OPENAI_API_KEY") as info:
        resolve_provider("openai:gpt-5.5")
    assert info.value.code == ExitCode.CONFIG


def test_a_misspelt_bare_model_gets_did_you_mean_in_cli_words() -> None:
    with pytest.raises(CliError, match="did you mean --model claude-haiku-4-5\\?") as info:
        resolve_provider("claude-haku-4-5")
    assert info.value.code == ExitCode.CONFIG


def test_an_unlisted_model_of_a_known_vendor_is_a_warning_in_cli_words(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with caplog.at_level("WARNING", logger="agcore.cli"):
        provider = resolve_provider("anthropic:claude-haiku-45")
    assert provider.model_id == "claude-haiku-45"
    [record] = [r for r in caplog.records if r.name == "agcore.cli"]
    assert "did you mean --model anthropic:claude-haiku-4-5?" in record.getMessage()


def test_openai_compatible_without_a_url_asks_for_base_url_in_cli_words() -> None:
    with pytest.raises(CliError, match="add --base-url URL") as info:
        resolve_provider("openai-compatible:qwen")
    assert "base_url=" not in info.value.message
    assert info.value.code == ExitCode.CONFIG
