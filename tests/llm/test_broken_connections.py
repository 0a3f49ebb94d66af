"""A connection the server reached and then broke (reset before any header, a body cut short) is
reported as broken off, not as "could not connect", on real loopback HTTP (``bench.chaos_vendor``).
Found by issue 17's fault campaign: the message sent users looking for a server that was not running.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agcore.llm.errors import LLMConnectionError
from agcore.llm.provider import BaseProvider
from agcore.llm.providers.anthropic import AnthropicProvider
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import NO_RETRY
from agcore.llm.types import LLMRequest, UserMessage
from bench.chaos_vendor import ChaosVendor

pytestmark = pytest.mark.anyio

REQUEST = LLMRequest.build([UserMessage(content="hi")])


@pytest.fixture(scope="module")
def server() -> Iterator[ChaosVendor]:
    with ChaosVendor() as chaos:
        yield chaos


def provider(vendor: str, base_url: str) -> BaseProvider:
    if vendor == "anthropic":
        return AnthropicProvider("claude-haiku-4-5", api_key="k", base_url=base_url, retry_policy=NO_RETRY)
    return OpenAIProvider("gpt-4.1", api_key="k", base_url=base_url, retry_policy=NO_RETRY)


@pytest.mark.parametrize("vendor", ["anthropic", "openai"])
@pytest.mark.parametrize("fault", ["reset", "cut_body"])
async def test_a_broken_connection_says_it_broke_off(
    server: ChaosVendor, anyio_backend: str, vendor: str, fault: str
) -> None:
    key = f"{vendor}-{fault}-{anyio_backend}"
    server.plan(key, faults=[fault], tools=[])
    async with provider(vendor, server.base_url(key, vendor)) as model:
        with pytest.raises(LLMConnectionError) as caught:
            await model.complete(REQUEST)
    error = caught.value
    assert error.is_retryable
    assert "broke off before the reply was complete" in error.message
    assert "could not connect" not in error.message
    assert "try the call again" in error.message


@pytest.mark.parametrize("vendor", ["anthropic", "openai"])
async def test_a_server_that_is_not_there_still_cannot_be_reached(anyio_backend: str, vendor: str) -> None:
    nowhere = "http://127.0.0.1:9/v1" if vendor == "openai" else "http://127.0.0.1:9"  # nothing listens
    async with provider(vendor, nowhere) as model:
        with pytest.raises(LLMConnectionError) as caught:
            await model.complete(REQUEST)
    # On this machine, a refusal means nothing listens there: said at once (ServerNotRunningError).
    assert "nothing is listening at" in caught.value.message
    assert "broke off" not in caught.value.message
    assert not caught.value.is_retryable
