"""OpenAIProvider against OpenAI-compatible servers (vLLM, llama.cpp, LM Studio, Ollama, DeepSeek,
OpenRouter...): no key, ``max_tokens``, and the ways their replies differ from OpenAI's, in
``complete()`` and ``stream()`` alike. Also the health check and an unreachable server."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
import respx

from agcore.llm.errors import LLMConnectionError, RateLimitError, ServerNotRunningError
from agcore.llm.events import DoneEvent, ErrorEvent, ThinkingEnd, ToolCallDelta, ToolCallStart
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import NO_RETRY, RetryPolicy
from agcore.llm.types import (
    AssistantMessage,
    LLMRequest,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from tests.llm.test_openai_provider import (
    API,
    CALL_ID,
    COMPAT,
    COMPAT_CHAT,
    HI,
    MODEL,
    ROLE,
    api_error,
    chunk,
    collect,
    completion,
    make,
    openai_router,
    respond_json,
    respond_sse,
    sent,
    sse,
    tool_call,
    usage_chunk,
    wire_usage,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    yield from openai_router(monkeypatch)


def compat() -> OpenAIProvider:
    return make(base_url=COMPAT)


async def complete_with(router: respx.MockRouter, body: dict[str, Any]) -> AssistantMessage:
    router.post(COMPAT_CHAT).mock(return_value=respond_json(body))
    return (await compat().complete(LLMRequest.build(HI))).message


async def stream_with(router: respx.MockRouter, body: bytes) -> DoneEvent:
    router.post(COMPAT_CHAT).mock(return_value=respond_sse(body))
    done = (await collect(compat().stream(LLMRequest.build(HI))))[-1]
    assert isinstance(done, DoneEvent), done
    return done


def closed_port_base() -> str:
    with socket.socket() as sock:  # bound, never listening: connecting is refused at once
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# ------------------------------------------------------------------ no key, max_tokens


async def test_compatible_server_needs_no_key(api: respx.MockRouter) -> None:
    reply = completion({"content": "Hello from llama.cpp"})
    route = api.post(COMPAT_CHAT).mock(return_value=respond_json(reply))
    provider = OpenAIProvider("llama-3.1-8b-instruct", base_url=COMPAT, retry_policy=NO_RETRY)
    response = await provider.complete(LLMRequest.build(HI, max_tokens=32))
    assert response.text == "Hello from llama.cpp"
    assert response.message.provider == "openai-compatible"
    assert response.message.model == "llama-3.1-8b-instruct"
    assert route.calls[0].request.headers["authorization"] == "Bearer not-needed"
    assert sent(route) == {"model": "llama-3.1-8b-instruct",
                           "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
                           "max_tokens": 32}
    await provider.aclose()


async def test_compatible_server_key_is_sent_when_given(api: respx.MockRouter) -> None:
    route = api.post(COMPAT_CHAT).mock(return_value=respond_json(completion({"content": "ok"})))
    await make(base_url=COMPAT, api_key="vllm-secret").complete(LLMRequest.build(HI))
    assert route.calls[0].request.headers["authorization"] == "Bearer vllm-secret"


# ------------------------------------------------------------------ replies that differ from OpenAI's


async def test_missing_tool_call_ids_are_generated_and_unique(api: respx.MockRouter) -> None:
    message = await complete_with(api, completion({"tool_calls": [
        tool_call(None, "get_weather", '{"city":"Paris"}'),
        tool_call(None, "get_weather", '{"city":"Tokyo"}'),
    ]}, finish_reason="tool_calls"))
    ids = [call.id for call in message.tool_calls]
    assert all(CALL_ID.match(i) for i in ids)
    assert ids[0] != ids[1]
    assert [call.input for call in message.tool_calls] == [{"city": "Paris"}, {"city": "Tokyo"}]


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_becomes_a_thinking_block_first(api: respx.MockRouter, field: str) -> None:
    message = await complete_with(api, completion(
        {"content": "Paris.", field: "The user asks for a capital.",
         "tool_calls": [tool_call("call_1", "get_weather", '{"city":"Paris"}')]}, finish_reason="tool_calls"))
    assert message.content == [
        ThinkingBlock(thinking="The user asks for a capital.", provider="openai-compatible"),
        TextBlock(text="Paris."),
        ToolUseBlock(id="call_1", name="get_weather", input={"city": "Paris"}),
    ]


async def test_arguments_sent_as_an_object_are_accepted(api: respx.MockRouter) -> None:
    message = await complete_with(api, completion(
        {"tool_calls": [tool_call("call_1", "get_weather", {"city": "Paris", "days": 3})]},
        finish_reason="tool_calls"))
    assert message.tool_calls == [
        ToolUseBlock(id="call_1", name="get_weather", input={"city": "Paris", "days": 3})]


async def test_absent_or_null_usage_is_zero(api: respx.MockRouter) -> None:
    body = completion({"content": "hi"})
    del body["usage"]
    assert (await complete_with(api, body)).usage == Usage()
    assert (await complete_with(api, completion({"content": "hi"}, usage=None))).usage == Usage()


async def test_deepseek_cache_hits_are_cache_reads(api: respx.MockRouter) -> None:
    usage = {"prompt_tokens": 1200, "completion_tokens": 50, "total_tokens": 1250,
             "prompt_cache_hit_tokens": 1024, "prompt_cache_miss_tokens": 176}
    message = await complete_with(api, completion({"content": "hi"}, usage=usage))
    assert message.usage == Usage(input_tokens=176, output_tokens=50, cache_read_tokens=1024)


@pytest.mark.parametrize("finish_reason", ["stop", None])
async def test_stop_with_tool_calls_is_tool_use(api: respx.MockRouter, finish_reason: str | None) -> None:
    message = await complete_with(api, completion(
        {"tool_calls": [tool_call("call_1", "get_time", "{}")]}, finish_reason=finish_reason))
    assert message.stop_reason is StopReason.TOOL_USE


async def test_content_as_a_list_of_parts(api: respx.MockRouter) -> None:
    message = await complete_with(api, completion(
        {"content": [{"type": "text", "text": "Hello "}, {"type": "text", "text": "world"}]}))
    assert message.content == [TextBlock(text="Hello world")]


async def test_legacy_function_call(api: respx.MockRouter) -> None:
    message = await complete_with(api, completion(
        {"function_call": {"name": "get_time", "arguments": "{}"}}, finish_reason="function_call"))
    assert len(message.tool_calls) == 1
    assert message.tool_calls[0].name == "get_time"
    assert CALL_ID.match(message.tool_calls[0].id)
    assert message.stop_reason is StopReason.TOOL_USE


async def test_error_object_in_a_200_reply(api: respx.MockRouter) -> None:
    api.post(COMPAT_CHAT).mock(return_value=respond_json(
        {"error": {"message": "Rate limit exceeded: free-models-per-min", "code": 429}}))
    with pytest.raises(RateLimitError, match="free-models-per-min"):
        await compat().complete(LLMRequest.build(HI))


# ------------------------------------------------------------------ streams that differ from OpenAI's


async def test_stream_tool_calls_without_index(api: respx.MockRouter) -> None:
    done = await stream_with(api, sse(
        chunk({"role": "assistant", "tool_calls": [
            {"id": "call_a", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city":'}}]}),
        # No index, no id: it continues call_a.
        chunk({"tool_calls": [{"function": {"arguments": ' "Paris"}'}}]}),
        chunk({"tool_calls": [{"id": "call_b", "type": "function",
                               "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]}),
        chunk({}, "tool_calls"),
    ))
    assert done.message.tool_calls == [
        ToolUseBlock(id="call_a", name="get_weather", input={"city": "Paris"}),
        ToolUseBlock(id="call_b", name="get_weather", input={"city": "Oslo"}),
    ]
    assert done.message.usage == Usage()  # no usage chunk at all


async def test_stream_calls_all_at_index_zero_with_their_own_ids(api: respx.MockRouter) -> None:
    done = await stream_with(api, sse(
        chunk({"tool_calls": [
            {"index": 0, "id": "call_a", "function": {"name": "get_time", "arguments": "{}"}}]}),
        chunk({"tool_calls": [
            {"index": 0, "id": "call_b", "function": {"name": "get_weather", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Rome"}'}}]}),
        chunk({}, "tool_calls"), usage_chunk(),
    ))
    assert done.message.tool_calls == [
        ToolUseBlock(id="call_a", name="get_time"),
        ToolUseBlock(id="call_b", name="get_weather", input={"city": "Rome"}),
    ]


async def test_stream_whole_calls_in_one_delta_as_objects_without_ids(api: respx.MockRouter) -> None:
    # Ollama's /v1 style: every call complete in one delta, arguments an object, finish "stop".
    done = await stream_with(api, sse(
        chunk({"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}},
        ]}),
        chunk({}, "stop"),
    ))
    calls = done.message.tool_calls
    assert [(c.name, c.input) for c in calls] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})]
    assert all(CALL_ID.match(c.id) for c in calls)
    assert calls[0].id != calls[1].id
    assert done.message.stop_reason is StopReason.TOOL_USE


async def test_stream_name_repeated_on_every_delta(api: respx.MockRouter) -> None:
    api.post(COMPAT_CHAT).mock(return_value=respond_sse(sse(
        chunk({"tool_calls": [
            {"index": 0, "id": "call_1", "function": {"name": "get_weather", "arguments": '{"ci'}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "call_1",
                               "function": {"name": "get_weather", "arguments": 'ty":"Lima"}'}}]}),
        chunk({}, "tool_calls"),
    )))
    events = await collect(compat().stream(LLMRequest.build(HI)))
    assert [e for e in events if isinstance(e, ToolCallStart | ToolCallDelta)] == [
        ToolCallStart(index=0, id="call_1", name="get_weather"),
        ToolCallDelta(index=0, arguments='{"ci'),
        ToolCallDelta(index=0, arguments='ty":"Lima"}'),
    ]
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.message.tool_calls == [ToolUseBlock(id="call_1", name="get_weather", input={"city": "Lima"})]


async def test_stream_name_after_the_arguments_started(api: respx.MockRouter) -> None:
    api.post(COMPAT_CHAT).mock(return_value=respond_sse(sse(
        chunk({"tool_calls": [{"index": 0, "id": "call_1", "function": {"arguments": '{"a":'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"name": "echo", "arguments": " 1}"}}]}),
        chunk({}, "tool_calls"),
    )))
    events = await collect(compat().stream(LLMRequest.build(HI)))
    assert [e for e in events if isinstance(e, ToolCallStart | ToolCallDelta)] == [
        ToolCallStart(index=0, id="call_1", name="echo"),
        ToolCallDelta(index=0, arguments='{"a": 1}'),
    ]


async def test_stream_reasoning_field_and_generated_id(api: respx.MockRouter) -> None:
    api.post(COMPAT_CHAT).mock(return_value=respond_sse(sse(
        chunk({"role": "assistant", "content": "", "reasoning": "Need the time."}),
        chunk({"tool_calls": [
            {"index": 0, "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]}),
        chunk({}, "tool_calls"),
    )))
    events = await collect(compat().stream(LLMRequest.build(HI)))
    ended = [e for e in events if isinstance(e, ThinkingEnd)]
    assert ended[0].block == ThinkingBlock(thinking="Need the time.", provider="openai-compatible")
    assert events.index(ended[0]) < next(i for i, e in enumerate(events) if isinstance(e, ToolCallStart))
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert CALL_ID.match(done.message.tool_calls[0].id)


async def test_stream_keepalive_comments_crlf_and_unterminated_done(api: respx.MockRouter) -> None:
    body = (b": OPENROUTER PROCESSING\r\n\r\n"
            + sse(chunk(ROLE), chunk({"content": "Hi"}), chunk({}, "stop"), usage_chunk(7, 2), done=False)
            .replace(b"\n", b"\r\n")
            + b"data: [DONE]")
    done = await stream_with(api, body)
    assert done.message.content == [TextBlock(text="Hi")]
    assert done.message.usage == Usage(input_tokens=7, output_tokens=2)


async def test_stream_usage_sent_with_the_last_choice(api: respx.MockRouter) -> None:
    last = chunk({}, "stop")
    last["usage"] = wire_usage(30, 4)
    done = await stream_with(api, sse(chunk(ROLE), chunk({"content": "ok"}), last))
    assert done.message.usage == Usage(input_tokens=30, output_tokens=4)


# ------------------------------------------------------------------ unreachable server, health


async def test_connection_refused_names_the_server() -> None:
    base = closed_port_base()
    provider = OpenAIProvider(MODEL, base_url=base, retry_policy=NO_RETRY)
    # A refusal on this machine: nothing listens there, said as ServerNotRunningError (an
    # LLMConnectionError) with how to start a local server.
    with pytest.raises(ServerNotRunningError, match="nothing is listening at") as caught:
        await provider.complete(LLMRequest.build(HI))
    assert base in caught.value.message
    assert isinstance(caught.value, LLMConnectionError)
    assert "llama-server" in (caught.value.advice or "")
    events = await collect(provider.stream(LLMRequest.build(HI)))
    assert len(events) == 1
    assert isinstance(events[0], ErrorEvent)
    assert events[0].error_type == "ServerNotRunningError"
    await provider.aclose()


async def test_connection_refused_on_this_machine_is_not_retried() -> None:
    attempts: list[float] = []

    async def sleep(seconds: float) -> None:
        attempts.append(seconds)

    policy = RetryPolicy(max_attempts=2, sleep=sleep)
    provider = OpenAIProvider(MODEL, base_url=closed_port_base(), retry_policy=policy)
    with pytest.raises(ServerNotRunningError) as caught:
        await provider.complete(LLMRequest.build(HI))
    assert not caught.value.is_retryable
    assert attempts == []  # nothing listens on that port: a retry cannot find a server there
    await provider.aclose()


MODEL_OBJECT = {"id": MODEL, "object": "model", "created": 1744316542, "owned_by": "system"}
MODEL_LIST = {"object": "list", "data": [
    {"id": "meta-llama/Llama-3.1-8B-Instruct", "object": "model", "created": 1731000000, "owned_by": "vllm"}]}


async def test_health_check_official_asks_for_the_model(api: respx.MockRouter) -> None:
    route = api.get(f"{API}/models/{MODEL}").mock(return_value=respond_json(MODEL_OBJECT))
    assert await make().health_check() is True
    assert route.called
    route.mock(return_value=respond_json(api_error(
        "The model `gpt-4.1` does not exist", "invalid_request_error", "model_not_found"), status=404))
    assert await make().health_check() is False


async def test_health_check_compatible_only_needs_an_answer(api: respx.MockRouter) -> None:
    route = api.get(f"{COMPAT}/models").mock(return_value=respond_json(MODEL_LIST))
    assert await compat().health_check() is True  # the model is listed under another name: still fine
    route.mock(return_value=respond_json({"error": "loading"}, status=503))
    assert await compat().health_check() is False


async def test_health_check_unreachable_is_false() -> None:
    provider = OpenAIProvider(MODEL, base_url=closed_port_base())
    assert await provider.health_check() is False
    await provider.aclose()
