"""OpenAIResponsesProvider over real HTTP on loopback (``bench/fake_vendor.py``'s ``/v1/responses``):
keep-alive, chunked SSE arriving in pieces. The ``openai`` SDK's own typed parser reads the fake's
replies first, so the fake is held to the API's shapes, not to what agcore expects."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai import AsyncOpenAI
from openai.types.responses import ResponseCompletedEvent, ResponseFunctionToolCall, ResponseOutputMessage

from agcore.llm.events import DoneEvent, ToolCallDelta
from agcore.llm.providers.openai_responses import OpenAIResponsesProvider
from agcore.llm.retry import NO_RETRY
from agcore.llm.types import LLMRequest, StopReason, ToolDefinition, ToolResultBlock, UserMessage
from bench.fake_vendor import ANSWER_TEXT, TOOL_ARGUMENTS, TOOL_NAME, FakeVendor

TOOLS = [ToolDefinition(name=TOOL_NAME, description="Weather for a city.",
                        input_schema={"type": "object", "properties": {"city": {"type": "string"}}})]
QUESTION = UserMessage(content="Weather in Paris?")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeVendor]:
    with FakeVendor() as vendor:
        yield vendor


@pytest.mark.anyio
async def test_the_sdk_parses_the_fake_responses(server: FakeVendor) -> None:
    client = AsyncOpenAI(base_url=server.openai_base_url, api_key="x", max_retries=0)
    first = await client.responses.create(model="o4-mini", input="Weather in Paris?",
                                          tools=[{"type": "function", "name": TOOL_NAME, "strict": False,
                                                  "parameters": {"type": "object"}}])
    call = first.output[0]
    assert isinstance(call, ResponseFunctionToolCall)
    second = await client.responses.create(model="o4-mini", input=[
        {"role": "user", "content": "Weather in Paris?"},
        {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
        {"type": "function_call_output", "call_id": call.call_id, "output": "18C"},
    ], stream=True)
    events = [event async for event in second]
    assert isinstance(events[-1], ResponseCompletedEvent)
    message = events[-1].response.output[0]
    assert isinstance(message, ResponseOutputMessage)
    assert events[-1].response.output_text == ANSWER_TEXT
    await client.close()


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
async def test_a_tool_exchange_over_loopback(server: FakeVendor, streaming: bool) -> None:
    provider = OpenAIResponsesProvider("o4-mini", base_url=server.openai_base_url, api_key="x",
                                       retry_policy=NO_RETRY)
    deltas = 0

    async def reply(request: LLMRequest) -> DoneEvent:
        nonlocal deltas
        if not streaming:
            response = await provider.complete(request)
            return DoneEvent(message=response.message, request_id=response.request_id)
        events = [event async for event in provider.stream(request)]
        deltas += sum(isinstance(event, ToolCallDelta) for event in events)
        assert isinstance(events[-1], DoneEvent), events[-1]
        return events[-1]

    first = await reply(LLMRequest.build([QUESTION], tools=TOOLS))
    assert first.message.stop_reason is StopReason.TOOL_USE
    call = first.message.tool_calls[0]
    assert (call.name, call.input) == (TOOL_NAME, TOOL_ARGUMENTS)
    assert first.request_id
    results = UserMessage(content=[ToolResultBlock(tool_use_id=call.id, content="18C")])
    second = await reply(LLMRequest.build([QUESTION, first.message, results], tools=TOOLS))
    assert second.message.text == ANSWER_TEXT
    assert second.message.usage.output_tokens == 52
    if streaming:
        assert deltas > 1  # the arguments arrived in fragments
    await provider.aclose()


def test_the_overhead_bench_runs() -> None:
    """``bench/responses_overhead.py --quick`` checks the exchange and reports both ratios."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, str(root / "bench" / "responses_overhead.py"), "--quick"],
                          capture_output=True, text=True, timeout=120, cwd=root)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("responses ")]
    assert [row[:2] for row in rows] == [["responses", "complete"], ["responses", "stream"]]
    assert all(float(row[4]) > 0 for row in rows)
