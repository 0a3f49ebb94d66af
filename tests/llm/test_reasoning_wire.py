"""Reasoning on the Chat Completions wire: ``reasoning_content`` sent back to the vendor that wrote
it, per the vendor's rule (``_reasoning_echo``), never to another; and reasoning tokens kept in
``Usage`` and priced once. Over respx, with vendor-shaped payloads: an emulated Moonshot endpoint
answers 400, as Kimi's does, when an assistant tool-call message comes back without its reasoning.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from agcore.llm.events import DoneEvent
from agcore.llm.models import ModelInfo, ModelRegistry
from agcore.llm.providers._reasoning_echo import NEVER, echo_rule, vendor_for
from agcore.llm.providers.anthropic import AnthropicProvider
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import NO_RETRY
from agcore.llm.types import (
    AssistantMessage,
    LLMRequest,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from tests.llm.test_openai_provider import chunk, completion, openai_router, respond_json, respond_sse, sse

pytestmark = pytest.mark.anyio

MOONSHOT = "https://api.moonshot.ai/v1"
DEEPSEEK = "https://api.deepseek.com"
LOCAL = "http://127.0.0.1:8080/v1"
GROQ = "https://api.groq.com/openai/v1"
WEATHER = ToolDefinition(name="get_weather", description="Current weather for a city",
                         input_schema={"type": "object", "properties": {"city": {"type": "string"}}})
OK = respond_json(completion({"content": "ok"}))
REASONING = "The user wants the weather in Paris. I should call get_weather with city=Paris."


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    yield from openai_router(monkeypatch)


def provider(model: str, base_url: str | None, **options: Any) -> OpenAIProvider:
    options.setdefault("api_key", "sk-test")
    return OpenAIProvider(model, base_url=base_url, retry_policy=NO_RETRY, **options)


def kimi_tool_call_reply() -> dict[str, Any]:
    """kimi-k2-thinking calling a tool, field for field (Kimi's ids read ``functions.<name>:<n>``)."""
    body = completion({
        "content": "",
        "reasoning_content": REASONING,
        "tool_calls": [{"index": 0, "id": "functions.get_weather:0", "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}],
    }, finish_reason="tool_calls", usage={"prompt_tokens": 92, "completion_tokens": 61, "total_tokens": 153,
                                          "cached_tokens": 0})
    body["model"] = "kimi-k2-thinking"
    return body


def moonshot_endpoint(request: httpx.Request) -> httpx.Response:
    """Kimi's check: with thinking, every assistant tool-call message must carry its reasoning."""
    body = json.loads(request.content)
    for index, message in enumerate(body["messages"]):
        calls = message["role"] == "assistant" and message.get("tool_calls")
        if calls and not message.get("reasoning_content"):
            return respond_json({"error": {
                "message": f"thinking is enabled but reasoning_content is missing in assistant tool call "
                           f"message at index {index}", "type": "invalid_request_error"}}, status=400)
    if body["messages"][-1]["role"] == "tool":
        final = completion({"content": "It is 18°C in Paris.", "reasoning_content": "Answer briefly."})
        return respond_json(final)
    return respond_json(kimi_tool_call_reply())


def sent_messages(route: respx.Route, call: int = -1) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = json.loads(route.calls[call].request.content)["messages"]
    return messages


def result_for(reply: AssistantMessage, text: str = "18°C, partly cloudy") -> UserMessage:
    return UserMessage(content=[ToolResultBlock(tool_use_id=reply.tool_calls[0].id, content=text)])


# ------------------------------------------------------------------ the table


@pytest.mark.parametrize(("base_url", "vendor"), [
    (None, "openai"), ("https://api.openai.com/v1", "openai"), (MOONSHOT, "moonshot"),
    ("https://api.moonshot.cn/v1", "moonshot"), (DEEPSEEK, "deepseek"),
    ("https://api.deepseek.com/v1", "deepseek"),
    ("https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "qwen"), (GROQ, "groq"), (LOCAL, None),
    ("https://evil-api.deepseek.com.example.org/v1", None),
])
def test_vendor_by_host(base_url: str | None, vendor: str | None) -> None:
    assert vendor_for(base_url) == vendor


def test_rules_self_hosted_and_unknown_servers() -> None:
    assert echo_rule("openai-compatible", LOCAL).field == "reasoning_content"
    assert echo_rule("openai-compatible", "http://gpu-box:8000/v1").same_model
    assert echo_rule("openai-compatible", "http://10.1.2.3:8000/v1").field == "reasoning_content"
    assert echo_rule("openai-compatible", "https://llm.example.com/v1") is NEVER  # strict APIs reject it
    assert echo_rule("moonshot", "https://kimi-proxy.example.com/v1").field == "reasoning_content"
    assert echo_rule("openai", None) is NEVER


def test_known_vendors_go_by_their_name() -> None:
    assert provider("kimi-k2-thinking", MOONSHOT).provider_name == "moonshot"
    assert provider("deepseek-chat", DEEPSEEK).provider_name == "deepseek"
    assert provider("qwen3-coder", LOCAL).provider_name == "openai-compatible"
    proxied = provider("kimi-k2-thinking", "https://proxy.example.com/v1", provider_name="kimi")
    assert proxied.provider_name == "kimi"


# ------------------------------------------------------------------ echo to the writer


@pytest.mark.parametrize("stream", [False, True])
async def test_kimi_tool_loop_sends_its_reasoning_back(api: respx.MockRouter, stream: bool) -> None:
    route = api.post(f"{MOONSHOT}/chat/completions")
    if stream:
        first = sse(chunk({"role": "assistant", "content": ""}),
                    chunk({"reasoning_content": REASONING[:30]}),
                    chunk({"reasoning_content": REASONING[30:]}),
                    chunk({"tool_calls": [{"index": 0, "id": "functions.get_weather:0", "type": "function",
                                           "function": {"name": "get_weather", "arguments": ""}}]}),
                    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Paris"}'}}]}),
                    chunk({}, "tool_calls"))
        def endpoint(request: httpx.Request) -> httpx.Response:
            streamed = json.loads(request.content).get("stream")
            return respond_sse(first) if streamed else moonshot_endpoint(request)

        route.side_effect = endpoint
    else:
        route.side_effect = moonshot_endpoint
    model = provider("kimi-k2-thinking", MOONSHOT)
    history: list[Message] = [UserMessage(content="Weather in Paris?")]
    request = LLMRequest.build(history, tools=[WEATHER])
    if stream:
        events = [event async for event in model.stream(request)]
        assert isinstance(events[-1], DoneEvent)
        reply = events[-1].message
    else:
        reply = (await model.complete(request)).message
    assert reply.provider == "moonshot"
    assert reply.thinking == [ThinkingBlock(thinking=REASONING, provider="moonshot")]
    history += [reply, result_for(reply)]
    answer = await model.complete(LLMRequest.build(history, tools=[WEATHER]))  # 400 without the echo
    assert answer.text == "It is 18°C in Paris."
    assistant = sent_messages(route)[1]
    assert assistant["reasoning_content"] == REASONING
    assert assistant["tool_calls"][0]["id"] == "functions.get_weather:0"
    # The history survives JSON (a persisted session) and still echoes.
    reloaded = [AssistantMessage.model_validate_json(reply.model_dump_json())]
    again = await model.complete(LLMRequest.build([history[0], *reloaded, history[2]], tools=[WEATHER]))
    assert again.text == "It is 18°C in Paris."


def deepseek_history(writer: str = "deepseek", model: str = "deepseek-chat") -> list[Message]:
    """Two turns: a finished one (call, result, answer), and the current one (call, result)."""
    def call(n: int) -> AssistantMessage:
        return AssistantMessage(
            content=[ThinkingBlock(thinking=f"reasoning {n}", provider=writer),
                     ToolUseBlock(id=f"call_{n}", name="get_weather", input={"city": "Paris"})],
            provider=writer, model=model)

    answer = AssistantMessage(content=[ThinkingBlock(thinking="reasoning answer", provider=writer),
                                       TextBlock(text="18°C.")], provider=writer, model=model)
    return [
        UserMessage(content="Weather in Paris?"), call(1),
        UserMessage(content=[ToolResultBlock(tool_use_id="call_1", content="18°C")]), answer,
        UserMessage(content="And tomorrow?"), call(2),
        UserMessage(content=[ToolResultBlock(tool_use_id="call_2", content="20°C")]),
    ]


def assistant_reasoning(route: respx.Route) -> list[str | None]:
    return [m.get("reasoning_content") for m in sent_messages(route) if m["role"] == "assistant"]


async def test_deepseek_gets_reasoning_back_within_the_current_tool_turn_only(api: respx.MockRouter) -> None:
    route = api.post(f"{DEEPSEEK}/chat/completions").mock(return_value=OK)
    await provider("deepseek-chat", DEEPSEEK).complete(LLMRequest.build(deepseek_history(), tools=[WEATHER]))
    assert assistant_reasoning(route) == [None, None, "reasoning 2"]


async def test_moonshot_gets_every_reply_reasoning_back(api: respx.MockRouter) -> None:
    route = api.post(f"{MOONSHOT}/chat/completions").mock(return_value=OK)
    history = deepseek_history(writer="moonshot", model="kimi-k2-thinking")
    await provider("kimi-k2-thinking", MOONSHOT).complete(LLMRequest.build(history, tools=[WEATHER]))
    assert assistant_reasoning(route) == ["reasoning 1", "reasoning answer", "reasoning 2"]


@pytest.mark.parametrize(("base_url", "model"), [
    (DEEPSEEK, "deepseek-chat"),  # another vendor that would take the field
    (None, "gpt-4.1"),  # OpenAI itself
    (GROQ, "openai/gpt-oss-120b"),  # a strict API
    (LOCAL, "kimi-k2-thinking"),  # a self-hosted server, even serving the same model name
])
async def test_reasoning_never_goes_to_another_vendor(
    api: respx.MockRouter, base_url: str | None, model: str
) -> None:
    chat = f"{base_url or 'https://api.openai.com/v1'}/chat/completions"
    route = api.post(chat).mock(return_value=respond_json(completion({"content": "ok"})))
    history = deepseek_history(writer="moonshot", model="kimi-k2-thinking")
    await provider(model, base_url).complete(LLMRequest.build(history, tools=[WEATHER]))
    assert all("reasoning_content" not in m for m in sent_messages(route))


async def test_self_hosted_server_gets_its_own_model_reasoning_back(api: respx.MockRouter) -> None:
    route = api.post(f"{LOCAL}/chat/completions").mock(return_value=OK)
    mine = deepseek_history(writer="openai-compatible", model="qwen3-coder")
    await provider("qwen3-coder", LOCAL).complete(LLMRequest.build(mine, tools=[WEATHER]))
    assert assistant_reasoning(route) == [None, None, "reasoning 2"]
    # Another model behind a server of the same kind ("openai-compatible"): not its reasoning.
    await provider("llama-3.3-70b", LOCAL).complete(LLMRequest.build(mine, tools=[WEATHER]))
    assert assistant_reasoning(route) == [None, None, None]


async def test_anthropic_never_gets_openai_compatible_reasoning(api: respx.MockRouter) -> None:
    route = api.post("https://api.anthropic.com/v1/messages").mock(return_value=httpx.Response(200, json={
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 2}}))
    model = AnthropicProvider("claude-haiku-4-5", api_key="k", retry_policy=NO_RETRY)
    await model.complete(LLMRequest.build(deepseek_history(writer="moonshot"), tools=[WEATHER]))
    sent = json.loads(route.calls[0].request.content)
    kinds = {block["type"] for m in sent["messages"] for block in m["content"] if isinstance(block, dict)}
    assert "thinking" not in kinds
    assert "reasoning" not in json.dumps(sent)


# ------------------------------------------------------------------ reasoning tokens


@pytest.mark.parametrize("stream", [False, True])
async def test_openai_reasoning_tokens_are_kept_and_priced_once(api: respx.MockRouter, stream: bool) -> None:
    usage = {"prompt_tokens": 1200, "completion_tokens": 900, "total_tokens": 2100,
             "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
             "completion_tokens_details": {"reasoning_tokens": 768, "audio_tokens": 0,
                                           "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
    route = api.post("https://api.openai.com/v1/chat/completions")
    if stream:
        last = chunk()
        last["choices"], last["usage"] = [], usage
        route.mock(return_value=respond_sse(sse(chunk({"role": "assistant", "content": "ok"}),
                                                chunk({}, "stop"), last)))
        events = [event async for event in provider("gpt-5-mini", None).stream(LLMRequest.build("hi"))]
        assert isinstance(events[-1], DoneEvent)
        got = events[-1].message.usage
    else:
        route.mock(return_value=respond_json(completion({"content": "ok"}, usage=usage)))
        got = (await provider("gpt-5-mini", None).complete(LLMRequest.build("hi"))).usage
    assert got == Usage(input_tokens=176, output_tokens=900, cache_read_tokens=1024, reasoning_tokens=768)
    assert got.total_tokens == 2100  # reasoning is inside the output, not on top of it
    prices = ModelRegistry([ModelInfo(id="m", provider="openai", context_window=1, max_output_tokens=1,
                                      input_usd_per_mtok=1.0, output_usd_per_mtok=10.0,
                                      cache_read_usd_per_mtok=0.1)])
    info = prices.get("m")
    assert info is not None
    assert info.cost_usd(got) == pytest.approx((176 * 1.0 + 900 * 10.0 + 1024 * 0.1) / 1e6)


async def test_deepseek_usage_shape(api: respx.MockRouter) -> None:
    usage = {"prompt_tokens": 520, "completion_tokens": 410, "total_tokens": 930,
             "prompt_tokens_details": {"cached_tokens": 384},
             "completion_tokens_details": {"reasoning_tokens": 350},
             "prompt_cache_hit_tokens": 384, "prompt_cache_miss_tokens": 136}
    api.post(f"{DEEPSEEK}/chat/completions").mock(return_value=respond_json(completion(
        {"content": "ok", "reasoning_content": "think"}, usage=usage)))
    got = (await provider("deepseek-reasoner", DEEPSEEK).complete(LLMRequest.build("hi"))).usage
    assert got == Usage(input_tokens=136, output_tokens=410, cache_read_tokens=384, reasoning_tokens=350)


async def test_a_server_that_leaves_reasoning_out_of_completion_tokens_is_not_underbilled(
    api: respx.MockRouter,
) -> None:
    # Its total shows the reasoning on top of completion_tokens: agcore counts it as output.
    usage = {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 152,
             "completion_tokens_details": {"reasoning_tokens": 100}}
    reply = respond_json(completion({"content": "ok"}, usage=usage))
    api.post(f"{LOCAL}/chat/completions").mock(return_value=reply)
    got = (await provider("qwen3", LOCAL).complete(LLMRequest.build("hi"))).usage
    assert got == Usage(input_tokens=40, output_tokens=112, reasoning_tokens=100)
    assert got.total_tokens == 152


def test_reasoning_tokens_add_up() -> None:
    total = Usage(output_tokens=10, reasoning_tokens=4) + Usage(output_tokens=5, reasoning_tokens=1)
    assert (total.output_tokens, total.reasoning_tokens) == (15, 5)
    assert Usage.model_validate_json('{"input_tokens": 3}').reasoning_tokens == 0  # older records load


# ------------------------------------------------------------------ through the agent loop


@pytest.mark.parametrize("streaming", ["never", "always"])
async def test_an_agent_turn_on_kimi_runs_its_tool_and_finishes(
    api: respx.MockRouter, streaming: str
) -> None:
    from agcore.agent import AgentBuilder, AgentConfig, AgentSession, BasicAgent
    from agcore.tools import tool

    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"18°C, partly cloudy in {city}"

    def endpoint(request: httpx.Request) -> httpx.Response:
        if not json.loads(request.content).get("stream"):
            return moonshot_endpoint(request)
        # The streamed form of the same replies (the loop streams by default).
        answer = moonshot_endpoint(request)
        if answer.status_code != 200:
            return answer
        message = answer.json()["choices"][0]["message"]
        calls = [{**call, "index": n} for n, call in enumerate(message.get("tool_calls") or [])]
        delta = {k: v for k, v in {"reasoning_content": message.get("reasoning_content"),
                                    "content": message.get("content") or None}.items() if v}
        chunks = [chunk({"role": "assistant", "content": ""}), chunk(delta)]
        if calls:
            chunks.append(chunk({"tool_calls": calls}))
        chunks.append(chunk({}, "tool_calls" if calls else "stop"))
        return respond_sse(sse(*chunks))

    route = api.post(f"{MOONSHOT}/chat/completions").mock(side_effect=endpoint)
    bundle = AgentBuilder().provider(provider("kimi-k2-thinking", MOONSHOT)).tools(get_weather).config(
        AgentConfig(streaming=streaming)).build()
    session = AgentSession(BasicAgent(name="weather"), "kimi-1", bundle)
    result = await session.submit_turn("Weather in Paris?")
    assert result.stop == "done"
    assert result.text == "It is 18°C in Paris."
    assert len(route.calls) == 2
    echoed = [m.get("reasoning_content") for m in sent_messages(route) if m["role"] == "assistant"]
    assert echoed == [REASONING]  # the tool-call reply, with its reasoning
