"""`make demo`: a tour of agcore's LLM layer doing a real tool-call exchange.

With ANTHROPIC_API_KEY and/or OPENAI_API_KEY set (or --base-url for an OpenAI-compatible server) it
talks to those real models. Without them it starts agcore's loopback fake of the Anthropic Messages
and OpenAI Chat Completions APIs (bench/fake_vendor.py) and says so: the vendor SDKs, the HTTP and
SSE traffic and agcore's wire code are all real, only the model's replies are scripted.

What it shows, per vendor: a streamed reply with a tool call, the tool run locally, the result sent
back, the streamed answer, usage and cost from the model registry; then the whole conversation handed
from one vendor to the other (context handoff), and a retried 529.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for bench.fake_vendor

from agcore.llm import (
    DoneEvent,
    ErrorEvent,
    LLMProvider,
    Message,
    OverloadedError,
    RetryPolicy,
    TextDelta,
    ToolCallEnd,
    ToolDefinition,
    ToolResultBlock,
    UserMessage,
    cost_usd,
    create_provider,
)
from agcore.testing import ScriptedProvider

WEATHER_TOOL = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    input_schema={
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
)
SYSTEM = "You are a concise assistant. Use the get_weather tool for weather questions."


def get_weather(city: str, unit: str = "celsius") -> str:
    """The demo's tool: deterministic, local, no network."""
    return f"{city}: 18 degrees {unit}, partly cloudy, wind 12 km/h from the west"


async def stream_turn(provider: LLMProvider, history: list[Message]) -> bool:
    """Stream one model reply into ``history``; True when the model asked for tools."""
    print(f"  [{provider.provider_name}:{provider.model_id}] ", end="", flush=True)
    async for event in provider.stream(history, system=SYSTEM, tools=[WEATHER_TOOL], max_tokens=512):
        if isinstance(event, TextDelta):
            print(event.text, end="", flush=True)
        elif isinstance(event, ToolCallEnd):
            print(f"\n    -> tool call {event.tool_call.name}({event.tool_call.input})", end="")
        elif isinstance(event, ErrorEvent):
            raise event.to_exception()
        elif isinstance(event, DoneEvent):
            message = event.message
            history.append(message)
            cost = cost_usd(message.model, message.usage)
            price = f"${cost:.6f}" if cost is not None else "cost unknown (model not in registry)"
            print(f"\n    stop={message.stop_reason}  tokens in/out={message.usage.input_tokens}/"
                  f"{message.usage.output_tokens}  {price}")
            if message.tool_calls:
                results = [ToolResultBlock(tool_use_id=c.id, content=get_weather(**c.input))
                           for c in message.tool_calls]
                for result in results:
                    print(f"    <- tool result {result.text!r}")
                history.append(UserMessage(content=list(results)))
                return True
    return False


async def exchange(provider: LLMProvider, history: list[Message]) -> None:
    for _ in range(4):  # a hand-written loop; the kernel's AgentSession arrives with the kernel issue
        if not await stream_turn(provider, history):
            return


@contextlib.contextmanager
def providers(base_url: str | None) -> Iterator[list[LLMProvider]]:
    real: list[LLMProvider] = []
    if os.environ.get("ANTHROPIC_API_KEY"):
        real.append(create_provider("anthropic:claude-haiku-5-5"))
    if os.environ.get("OPENAI_API_KEY") and not base_url:
        real.append(create_provider("openai:gpt-6-luna"))
    if base_url:
        real.append(create_provider(f"openai-compatible:{os.environ.get('AGCORE_DEMO_MODEL', 'default')}",
                                    base_url=base_url))
    if real:
        print("Using real models:", ", ".join(f"{p.provider_name}:{p.model_id}" for p in real))
        yield real
        return
    from bench.fake_vendor import FakeVendor

    with FakeVendor() as server:
        print("No ANTHROPIC_API_KEY / OPENAI_API_KEY / --base-url: running against agcore's loopback fake\n"
              f"of the Anthropic and OpenAI APIs at {server.base_url} (the SDKs, HTTP, SSE and agcore's\n"
              "wire code are real; the model's replies are scripted).")
        yield [
            create_provider("anthropic:claude-haiku-5-5", api_key="demo", base_url=server.anthropic_base_url,
                            cache=False),
            create_provider("openai:gpt-6-luna", api_key="demo", base_url=server.openai_base_url,
                            provider_name="openai", cache=False),
        ]


async def retry_showcase() -> None:
    quick: Any = RetryPolicy(base_delay=0.05, sleep=anyio.sleep)
    model = ScriptedProvider([OverloadedError("overloaded (529)"), "Back on my feet."], retry_policy=quick)
    reply = await model.complete([UserMessage(content="hello?")])
    print(f"  a 529 on the first try, retried: {reply.text!r} after {model.calls} calls")


async def main(base_url: str | None) -> None:
    with providers(base_url) as available:
        first_history: list[Message] = []
        for provider in available:
            print(f"\n== {provider.provider_name}: a tool-call exchange, streamed")
            history: list[Message] = [UserMessage(content="What's the weather in Paris right now?")]
            await exchange(provider, history)
            first_history = first_history or history
        if len(available) > 1:
            source, target = available[0], available[1]
            print(f"\n== context handoff: the {source.provider_name} conversation continues on "
                  f"{target.provider_name}")
            handoff = [*first_history, UserMessage(content="And what should I wear?")]
            await exchange(target, handoff)
            print(f"  {len(handoff)} messages; assistant turns by "
                  + ", ".join(sorted({getattr(m, 'provider', '') for m in handoff if m.role == 'assistant'})))
        for provider in available:
            await provider.aclose()  # type: ignore[attr-defined]
    print("\n== retry layer")
    await retry_showcase()
    print("\nDone. Next: the tool system and the kernel's AgentSession loop (see roadmap.md).")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--base-url", help="an OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1")
    args = parser.parse_args()
    anyio.run(main, args.base_url)
