"""Typed final answers on each vendor's wire (respx, vendor-shaped payloads): what the request body
carries (OpenAI's ``response_format`` json_schema, Anthropic's final-answer tool forced or its
``output_config.format``, Ollama's ``format``, a compatible server's final tool) and how the reply
becomes ``TurnResult.output``, on asyncio and trio, streamed and not."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from pydantic import BaseModel

from agcore.agent import (
    AgentBuilder,
    AgentConfig,
    AgentSession,
    BasicAgent,
    OutputValidationError,
    StructuredOutput,
)
from agcore.llm import LLMProvider
from agcore.tools import tool
from tests.llm import test_anthropic_provider as anthropic_wire
from tests.llm import test_ollama_provider as ollama_wire
from tests.llm import test_openai_provider as openai_wire

pytestmark = pytest.mark.anyio


class Forecast(BaseModel):
    city: str
    celsius: float
    summary: str


FORECAST = {"city": "Paris", "celsius": 18.5, "summary": "cloudy"}


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: 18.5 C, cloudy"


def session_for(provider: LLMProvider, *tools: Any, config: AgentConfig | None = None) -> AgentSession:
    builder = AgentBuilder().provider(provider).config(config or AgentConfig())
    if tools:
        builder = builder.tools(*tools)
    return AgentSession(BasicAgent("forecaster", system_prompt="You forecast."), "s1", builder.build())


def bodies(route: respx.Route) -> list[dict[str, Any]]:
    return [json.loads(call.request.content) for call in route.calls]


@pytest.fixture
def openai_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    yield from openai_wire.openai_router(monkeypatch)


@pytest.fixture
def anthropic_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with respx.mock(assert_all_called=False) as router:
        yield router


@pytest.fixture
def ollama_api() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True) as router:
        yield router


# ----------------------------------------------------------------------------------- OpenAI


async def test_openai_gets_a_strict_json_schema_and_the_tools_and_answers_typed(
    openai_api: respx.MockRouter,
) -> None:
    call = openai_wire.tool_call("call_wx1", "get_weather", json.dumps({"city": "Paris"}))
    route = openai_api.post(openai_wire.CHAT).mock(side_effect=[
        openai_wire.respond_json(openai_wire.completion({"tool_calls": [call]}, finish_reason="tool_calls")),
        openai_wire.respond_json(openai_wire.completion({"content": json.dumps(FORECAST)})),
    ])
    session = session_for(openai_wire.make(), get_weather)
    result = await session.submit_turn("Weather in Paris?", output_type=Forecast)
    assert result.ok, result.error
    assert result.output == Forecast(**FORECAST)
    first, second = bodies(route)
    assert first["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "final_result",
            "strict": True,
            "schema": {
                "type": "object", "title": "Forecast", "additionalProperties": False,
                "properties": {
                    "city": {"type": "string", "title": "City"},
                    "celsius": {"type": "number", "title": "Celsius"},
                    "summary": {"type": "string", "title": "Summary"},
                },
                "required": ["city", "celsius", "summary"],
            },
        },
    }
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]
    assert second["response_format"] == first["response_format"]
    assert second["messages"][-1]["role"] == "tool"


async def test_openai_streamed_answer_is_validated_after_the_stream(openai_api: respx.MockRouter) -> None:
    text = json.dumps(FORECAST)
    openai_api.post(openai_wire.CHAT).mock(return_value=openai_wire.respond_sse(
        openai_wire.sse(*openai_wire.text_chunks(text[:9], text[9:30], text[30:]))
    ))
    session = session_for(openai_wire.make())
    events = [e async for e in session.stream_turn("Paris?", output_type=Forecast)]
    assert events[-1].type == "done"
    assert session.last_result is not None
    assert session.last_result.output == Forecast(**FORECAST)


async def test_openai_invalid_json_goes_back_with_the_errors(openai_api: respx.MockRouter) -> None:
    route = openai_api.post(openai_wire.CHAT).mock(side_effect=[
        openai_wire.respond_json(openai_wire.completion({"content": '{"city": "Paris", "celsius": "warm"}'})),
        openai_wire.respond_json(openai_wire.completion({"content": json.dumps(FORECAST)})),
    ])
    session = session_for(openai_wire.make())
    result = await session.submit_turn("Paris?", output_type=Forecast)
    assert result.output == Forecast(**FORECAST)
    retry = bodies(route)[1]["messages"][-1]
    assert retry["role"] == "user"
    assert "celsius: Input should be a valid number" in retry["content"]
    assert "summary: Field required" in retry["content"]


async def test_a_compatible_server_gets_the_final_tool_not_a_response_format(
    openai_api: respx.MockRouter,
) -> None:
    call = openai_wire.tool_call("call_f1", "final_result", json.dumps(FORECAST))
    route = openai_api.post(openai_wire.COMPAT_CHAT).mock(return_value=openai_wire.respond_json(
        openai_wire.completion({"tool_calls": [call]}, finish_reason="tool_calls")
    ))
    session = session_for(openai_wire.make(base_url=openai_wire.COMPAT))
    result = await session.submit_turn("Paris?", output_type=Forecast)
    assert result.output == Forecast(**FORECAST)
    body = bodies(route)[0]
    assert "response_format" not in body
    assert "tool_choice" not in body
    final = body["tools"][0]["function"]
    assert final["name"] == "final_result"
    assert final["parameters"]["required"] == ["city", "celsius", "summary"]


async def test_native_mode_can_be_asked_of_a_compatible_server(openai_api: respx.MockRouter) -> None:
    route = openai_api.post(openai_wire.COMPAT_CHAT).mock(return_value=openai_wire.respond_json(
        openai_wire.completion({"content": '{"result": [3, 1, 2]}'})
    ))
    session = session_for(openai_wire.make(base_url=openai_wire.COMPAT))
    result = await session.submit_turn("Numbers?", output_type=StructuredOutput(list[int], mode="native"))
    assert result.output == [3, 1, 2]
    schema = bodies(route)[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["result"] == {"type": "array", "items": {"type": "integer"}}


# ----------------------------------------------------------------------------------- Anthropic


async def test_anthropic_gets_the_final_tool_forced_and_the_history_replays(
    anthropic_api: respx.MockRouter,
) -> None:
    final = {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "final_result",
             "input": FORECAST}
    thanks_body = anthropic_wire.message_body([{"type": "text", "text": "You're welcome."}])
    route = anthropic_api.post(anthropic_wire.MESSAGES).mock(side_effect=[
        anthropic_wire.respond_json(anthropic_wire.message_body([final], stop_reason="tool_use")),
        anthropic_wire.respond_json(thanks_body),
    ])
    session = session_for(anthropic_wire.make(), get_weather)
    result = await session.submit_turn("Paris?", output_type=Forecast)
    assert result.output == Forecast(**FORECAST)
    assert json.loads(result.text) == FORECAST
    first = bodies(route)[0]
    assert first["tool_choice"] == {"type": "any"}
    assert [t["name"] for t in first["tools"]] == ["get_weather", "final_result"]
    assert first["tools"][1]["input_schema"]["required"] == ["city", "celsius", "summary"]
    assert "`final_result`" in first["system"]
    thanks = await session.submit_turn("Thanks!")  # untyped: the final tool's call and result replay
    assert thanks.output is None
    second = bodies(route)[1]
    assert "tool_choice" not in second
    assert [t["name"] for t in second["tools"]] == ["get_weather"]
    replayed = second["messages"][1:3]
    assert replayed[0]["content"][0]["name"] == "final_result"
    assert replayed[1]["content"][0] == {
        "type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
        "content": "Final answer received.",
    }


async def test_anthropic_structured_outputs_when_asked_natively(anthropic_api: respx.MockRouter) -> None:
    route = anthropic_api.post(anthropic_wire.MESSAGES).mock(return_value=anthropic_wire.respond_json(
        anthropic_wire.message_body([{"type": "text", "text": json.dumps(FORECAST)}])
    ))
    session = session_for(anthropic_wire.make())
    result = await session.submit_turn("Paris?", output_type=StructuredOutput(Forecast, mode="native"))
    assert result.output == Forecast(**FORECAST)
    body = bodies(route)[0]
    fmt = body["output_config"]["format"]
    assert fmt["type"] == "json_schema"
    assert fmt["schema"]["additionalProperties"] is False
    assert "tools" not in body
    assert "tool_choice" not in body


# ----------------------------------------------------------------------------------- Ollama


async def test_ollama_gets_the_schema_as_format_without_tools(ollama_api: respx.MockRouter) -> None:
    route = ollama_api.post(ollama_wire.CHAT).mock(return_value=httpx.Response(
        200, json=ollama_wire.reply({"content": json.dumps(FORECAST)})
    ))
    session = session_for(ollama_wire.make())
    result = await session.submit_turn("Paris?", output_type=Forecast)
    assert result.output == Forecast(**FORECAST)
    body = bodies(route)[0]
    assert body["format"]["required"] == ["city", "celsius", "summary"]
    assert "tools" not in body


async def test_ollama_with_tools_answers_through_the_final_tool(ollama_api: respx.MockRouter) -> None:
    call = {"function": {"name": "final_result", "arguments": FORECAST}}
    route = ollama_api.post(ollama_wire.CHAT).mock(return_value=httpx.Response(
        200, json=ollama_wire.reply({"content": "", "tool_calls": [call]})
    ))
    session = session_for(ollama_wire.make(), get_weather)
    result = await session.submit_turn("Paris?", output_type=Forecast)
    assert result.output == Forecast(**FORECAST)
    body = bodies(route)[0]
    assert "format" not in body
    assert [t["function"]["name"] for t in body["tools"]] == ["get_weather", "final_result"]


async def test_anthropic_streamed_final_tool_arguments_are_assembled_then_validated(
    anthropic_api: respx.MockRouter,
) -> None:
    args = json.dumps(FORECAST)
    body = anthropic_wire.sse(
        anthropic_wire.message_start(),
        anthropic_wire.block_start(0, {"type": "tool_use", "id": "toolu_01Stream", "name": "final_result",
                                       "input": {}}),
        anthropic_wire.PING,
        *(anthropic_wire.block_delta(0, {"type": "input_json_delta", "partial_json": args[i : i + 7]})
          for i in range(0, len(args), 7)),
        anthropic_wire.block_stop(0),
        anthropic_wire.message_delta("tool_use", 40),
        anthropic_wire.MESSAGE_STOP,
    )
    anthropic_api.post(anthropic_wire.MESSAGES).mock(
        return_value=httpx.Response(200, headers=anthropic_wire.SSE_HEADERS, content=body))
    session = session_for(anthropic_wire.make())
    events = [e async for e in session.stream_turn("Paris?", output_type=Forecast)]
    assert events[-1].type == "done"
    assert session.last_result is not None
    assert session.last_result.output == Forecast(**FORECAST)


async def test_an_openai_refusal_ends_the_typed_turn_without_retrying(openai_api: respx.MockRouter) -> None:
    refusal = "I'm sorry, I can't help with that request."
    route = openai_api.post(openai_wire.CHAT).mock(return_value=openai_wire.respond_json(
        openai_wire.completion({"content": None, "refusal": refusal})
    ))
    session = session_for(openai_wire.make())
    result = await session.submit_turn("Something bad?", output_type=Forecast)
    assert result.stop == "error"
    assert isinstance(result.error, OutputValidationError)
    assert f"The model refused to give a Forecast: {refusal}" in str(result.error)
    assert len(route.calls) == 1  # not asked again
    assert (await session.submit_turn("Never mind.")).stop == "done"  # the session goes on
