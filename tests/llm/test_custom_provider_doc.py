"""The third-party provider shown in docs/llm.md ("Writing a provider") works as the page says.

The code block is read from the page and executed as it stands, so the docs cannot drift from the
provider seam: one ``LLMRequest`` in, one reply out, registered with ``register_provider_factory``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, TextDelta, ToolResultReady
from agcore.llm import LLMProvider, LLMRequest, RateLimitError, RetryPolicy, create_provider
from agcore.llm import factory as llm_factory
from agcore.tools import tool

pytestmark = pytest.mark.anyio

DOC = Path(__file__).resolve().parents[2] / "docs" / "llm.md"
CHAT = "https://api.acme.example/v1/chat"


def doc_block() -> str:
    page = DOC.read_text(encoding="utf-8")
    section = page[page.index("### Writing a provider") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None, "docs/llm.md lost its provider example"
    return match.group(1)


@pytest.fixture
def acme() -> Iterator[dict[str, Any]]:
    saved = dict(llm_factory._factories)
    namespace: dict[str, Any] = {"__name__": "acme_doc_example"}
    exec(compile(doc_block(), str(DOC), "exec"), namespace)
    yield namespace
    llm_factory._factories.clear()
    llm_factory._factories.update(saved)
    llm_factory.clear_provider_cache()


def reply(text: str = "", calls: list[dict[str, Any]] | None = None) -> httpx.Response:
    body = {"text": text, "calls": calls or [], "usage": {"input": 12, "output": 5}}
    return httpx.Response(200, json=body, headers={"x-request-id": "req-1"})


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: 18°C"


def test_the_example_is_under_forty_lines() -> None:
    assert len(doc_block().splitlines()) < 40


@pytest.mark.parametrize("streamed", [False, True])
async def test_the_documented_provider_runs_a_tool_turn(acme: dict[str, Any], streamed: bool) -> None:
    with respx.mock(assert_all_called=True) as mock:
        route = mock.post(CHAT).mock(side_effect=[
            reply(calls=[{"id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}]),
            reply("18°C in Paris."),
        ])
        bundle = AgentBuilder().model("acme:rocket-1").tools(get_weather).build()
        session = AgentSession(BasicAgent(name="weather"), "s1", bundle)
        if streamed:
            events = [event async for event in session.stream_turn("Weather in Paris?")]
            assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "18°C in Paris."
            assert [e.result.text for e in events if isinstance(e, ToolResultReady)] == ["Paris: 18°C"]
            result = session.last_result
            assert result is not None
        else:
            result = await session.submit_turn("Weather in Paris?")
    assert result.ok
    assert result.text == "18°C in Paris."
    assert result.usage.input_tokens == 24
    first = json.loads(route.calls[0].request.content)
    assert first["model"] == "rocket-1"
    assert first["tools"][0]["name"] == "get_weather"
    second = json.loads(route.calls[1].request.content)
    assert second["messages"][-1]["content"][0]["tool_use_id"] == "c1"  # the tool result went back


async def test_the_documented_provider_maps_errors_so_429_is_retried(acme: dict[str, Any]) -> None:
    fast = RetryPolicy(base_delay=0.0, max_attempts=2)
    provider = create_provider("acme:rocket-1", retry_policy=fast, cache=False)
    assert isinstance(provider, LLMProvider)
    with respx.mock() as mock:
        mock.post(CHAT).mock(side_effect=[
            httpx.Response(429, text="slow down", headers={"retry-after": "0"}),
            reply("hello"),
        ])
        response = await provider.complete(LLMRequest.build("hi"))
    assert response.text == "hello"
    assert response.request_id == "req-1"
    with respx.mock() as mock:
        mock.post(CHAT).mock(return_value=httpx.Response(429, text="slow down"))
        with pytest.raises(RateLimitError, match="slow down"):
            await provider.complete(LLMRequest.build("hi"))
