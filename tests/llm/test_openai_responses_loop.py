"""A whole agent turn with tools on ``openai-responses``: the loop calls the model, runs the tool, and
the next request carries the reasoning item back with the call and its output. Through
``submit_turn`` (the loop's complete path) and ``stream_turn`` (its streaming path), over respx with
the API's real payloads; a reloaded session (JSON round trip) still replays the reasoning."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from agcore.agent import AgentBuilder, AgentSession, BasicAgent
from agcore.llm.factory import create_provider
from agcore.llm.types import ThinkingBlock, ToolUseBlock
from agcore.tools import tool
from tests.llm.test_openai_provider import KEY, REQUEST_ID, openai_router
from tests.llm.test_openai_responses import (
    CALL_ID,
    ENCRYPTED,
    RESPONSES,
    SUMMARY,
    call_item,
    message_item,
    reasoning_item,
    response_body,
    wire_usage,
)
from tests.llm.test_openai_responses_stream import SSE_HEADERS, sse, stream_events

pytestmark = [
    pytest.mark.anyio,
    # o4-mini is a reasoning model the registry no longer lists (shut down): its warning is expected.
    pytest.mark.filterwarnings("ignore::agcore.llm.UnknownModelWarning"),
]

FIRST = response_body([reasoning_item(SUMMARY), call_item('{"city": "Paris"}')],
                      usage=wire_usage(inp=300, out=90, reasoning=64))
SECOND = response_body([reasoning_item(["**Answering**"], encrypted="gAAAAABsecond", item_id="rs_2"),
                        message_item("It is 18°C and cloudy in Paris.")],
                       usage=wire_usage(inp=420, out=40, cached=256, reasoning=16))


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    yield from openai_router(monkeypatch)


def vendor(api: respx.MockRouter, *bodies: dict[str, Any]) -> list[dict[str, Any]]:
    """Answers each request with the next body, as SSE when the request streams; returns what was sent."""
    requests: list[dict[str, Any]] = []
    replies = iter(bodies)

    def answer(request: httpx.Request) -> httpx.Response:
        sent = json.loads(request.content)
        requests.append(sent)
        body = next(replies)
        if sent.get("stream"):
            return httpx.Response(200, headers=SSE_HEADERS, content=sse(stream_events(body)))
        return httpx.Response(200, json=body, headers={"x-request-id": REQUEST_ID})

    api.post(RESPONSES).mock(side_effect=answer)
    return requests


def weather_session() -> tuple[AgentSession, list[str]]:
    cities: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        cities.append(city)
        return f"18°C and cloudy in {city}"

    provider = create_provider("openai-responses:o4-mini", cache=False, api_key=KEY)
    bundle = AgentBuilder().provider(provider).tools(get_weather).build()
    return AgentSession(BasicAgent(name="weather", system_prompt="Be brief."), None, bundle), cities


def check_second_request(second: dict[str, Any]) -> None:
    assert second["instructions"] == "Be brief."
    assert second["store"] is False
    assert second["include"] == ["reasoning.encrypted_content"]
    assert [item.get("type", item.get("role")) for item in second["input"]] == [
        "user", "reasoning", "function_call", "function_call_output"]
    reasoning, call, output = second["input"][1:]
    summary = [{"type": "summary_text", "text": "\n\n".join(SUMMARY)}]
    assert reasoning == {"type": "reasoning", "summary": summary, "encrypted_content": ENCRYPTED}
    assert (call["call_id"], call["name"], json.loads(call["arguments"])) == (CALL_ID, "get_weather",
                                                                              {"city": "Paris"})
    assert output == {"type": "function_call_output", "call_id": CALL_ID,
                      "output": "18°C and cloudy in Paris"}


@pytest.mark.parametrize("streaming", [False, True], ids=["submit_turn", "stream_turn"])
async def test_a_tool_turn_replays_the_reasoning(api: respx.MockRouter, streaming: bool) -> None:
    requests = vendor(api, FIRST, SECOND)
    session, cities = weather_session()
    if streaming:
        async for _ in session.stream_turn("Weather in Paris?"):
            pass
        result = session.last_result
        assert result is not None
    else:
        result = await session.submit_turn("Weather in Paris?")
    assert result.ok, result.error
    assert result.text == "It is 18°C and cloudy in Paris."
    assert cities == ["Paris"]
    assert len(requests) == 2
    assert requests[0]["tools"][0]["name"] == "get_weather"
    assert requests[0]["tools"][0]["strict"] is False
    check_second_request(requests[1])
    # Both calls' usage is counted; the cached input and the reasoning part of the output apart.
    usage = result.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.reasoning_tokens) == (
        300 + 420 - 256, 90 + 40, 256, 64 + 16)
    await session.close()


async def test_a_reloaded_history_still_replays_the_reasoning(api: respx.MockRouter) -> None:
    """Sessions persist as JSON: the reasoning block (id, encrypted content) survives the round trip."""
    requests = vendor(api, FIRST, SECOND, response_body([message_item("Tomorrow: sunny.")]))
    session, _ = weather_session()
    await session.submit_turn("Weather in Paris?")
    history = session.history_for_llm()
    thinking = [b for m in history for b in getattr(m, "content", []) if isinstance(b, ThinkingBlock)]
    assert [b.redacted_data for b in thinking] == [ENCRYPTED, "gAAAAABsecond"]
    restored = [type(m).model_validate_json(m.model_dump_json()) for m in history]
    assert restored == history
    calls = [b for m in restored for b in getattr(m, "content", []) if isinstance(b, ToolUseBlock)]
    assert calls[0].id == CALL_ID
    await session.submit_turn("And tomorrow?")
    third = requests[2]["input"]
    assert [item.get("type", item.get("role")) for item in third] == [
        "user", "reasoning", "function_call", "function_call_output", "reasoning", "assistant", "user"]
    assert third[4]["encrypted_content"] == "gAAAAABsecond"
    await session.close()
