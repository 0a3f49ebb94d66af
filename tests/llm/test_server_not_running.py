"""A local model server that is not running: a refused connection to a loopback address is a
``ServerNotRunningError`` at once (no retries: nothing listens there), saying how to start one; a
refusal elsewhere stays a retryable ``LLMConnectionError``."""

from __future__ import annotations

import socket

import pytest

from agcore.llm import (
    LLMConnectionError,
    LLMRequest,
    RetryPolicy,
    ServerNotRunningError,
    UserMessage,
    create_provider,
)
from agcore.llm._urls import refused_on_loopback
from agcore.llm.errors import error_class_named

pytestmark = pytest.mark.anyio
REQUEST = LLMRequest(messages=[UserMessage(content="hi")])


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def retry_counter() -> tuple[RetryPolicy, list[float]]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    return RetryPolicy(max_attempts=4, sleep=sleep), slept


@pytest.mark.parametrize(("spec", "option"), [
    ("openai-compatible:qwen", "base_url"),
    ("anthropic:claude-haiku-4-5", "base_url"),
    ("ollama:llama3.1", "host"),
])
async def test_a_refused_loopback_server_is_not_retried_and_says_how_to_start_one(
    spec: str, option: str, retry_counter: tuple[RetryPolicy, list[float]]
) -> None:
    policy, slept = retry_counter
    root = f"http://127.0.0.1:{closed_port()}"
    url = root if option == "host" else f"{root}/v1" if spec.startswith("openai") else root
    key = {} if option == "host" else {"api_key": "sk-test"}
    provider = create_provider(spec, cache=False, retry_policy=policy, **key, **{option: url})
    with pytest.raises(ServerNotRunningError) as info:
        await provider.complete(REQUEST)
    assert slept == []  # failed at once
    assert info.value.is_retryable is False
    assert isinstance(info.value, LLMConnectionError)  # still a connection error to whoever catches those
    assert f"nothing is listening at {url}" in str(info.value)
    assert "ollama serve" in (info.value.advice or "") + str(info.value)


def test_only_a_refusal_on_this_machine_counts() -> None:
    refused = ConnectionRefusedError(111, "Connect call failed")
    wrapped = OSError("All connection attempts failed")
    wrapped.__cause__ = refused
    assert refused_on_loopback("http://127.0.0.1:8080/v1", wrapped)
    assert refused_on_loopback("http://localhost:11434", refused)
    assert refused_on_loopback("http://[::1]:8000/v1", refused)
    assert not refused_on_loopback("http://10.0.0.5:8000/v1", refused)  # another machine may be restarting
    assert not refused_on_loopback("https://api.example.com/v1", refused)
    assert not refused_on_loopback("http://127.0.0.1:8080/v1", TimeoutError("slow"))
    attempts = OSError("all attempts to connect to 127.0.0.1:8080 failed")  # trio: one per address
    attempts.__cause__ = ExceptionGroup("attempts", [refused])
    assert refused_on_loopback("http://127.0.0.1:8080/v1", attempts)


def test_the_error_round_trips_by_name() -> None:
    # Durable runtimes carry errors across processes by class name.
    assert error_class_named("ServerNotRunningError") is ServerNotRunningError
