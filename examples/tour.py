"""`make demo`: agcore's kernel running a real tool-using agent, end to end.

With ANTHROPIC_API_KEY and/or OPENAI_API_KEY set (or --base-url for an OpenAI-compatible server) it
talks to those real models. Without them it starts agcore's loopback fake of the Anthropic Messages
and OpenAI Chat Completions APIs (bench/fake_vendor.py) and says so: the vendor SDKs, the HTTP and
SSE traffic, agcore's wire code, the loop, the tools and the hooks are all real; only the model's
replies are scripted.

What it shows: an `AgentSession` built with `AgentBuilder` streams a turn in which the model calls a
tool (run by the `ToolRegistry`, watched by a pluggy plugin); the next turn switches vendor mid-session
through a provider resolver (context handoff); a tool call a guard plugin denies; cost by model; and a
retried 529.
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

from agcore.agent import (
    AgentBuilder,
    AgentSession,
    BasicAgent,
    Done,
    Failed,
    ProviderSwitched,
    TextDelta,
    ToolCallRequested,
    ToolResultReady,
)
from agcore.hooks import HookContext, ToolCallDecision, hookimpl
from agcore.llm import (
    LLMProvider,
    LLMRequest,
    OverloadedError,
    RetryPolicy,
    ToolUseBlock,
    UserMessage,
    create_provider,
)
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import tool

SYSTEM = "You are a concise assistant. Use the get_weather tool for weather questions."


@tool
def get_weather(city: str, unit: str = "celsius") -> str:
    """Current weather for a city.

    Args:
        city: The city, e.g. "Paris".
        unit: "celsius" or "fahrenheit".
    """
    return f"{city}: 18 degrees {unit}, partly cloudy, wind 12 km/h from the west"


@tool
def delete_file(path: str) -> str:
    """Delete a file (the guard plugin below never lets this run)."""
    raise AssertionError("the guard denies this tool before it runs")


class Narrator:
    """A pluggy plugin that narrates what the loop does."""

    @hookimpl
    def on_turn_start(self, ctx: HookContext, user_input: UserMessage) -> None:
        print(f"  [hook] turn {ctx.turn_index} starts: {user_input.content!r}")

    @hookimpl
    def before_tool_call(self, ctx: HookContext, call: ToolUseBlock) -> ToolCallDecision | None:
        if call.name == "delete_file":
            return ToolCallDecision.deny("deleting files is not allowed in this demo")
        return None


async def stream(session: AgentSession, text: str) -> None:
    print(f"\n> {text}")
    async for event in session.stream_turn(text):
        if isinstance(event, ProviderSwitched):
            print(f"  [switch] {event.from_provider}:{event.from_model} -> "
                  f"{event.to_provider}:{event.to_model}")
        elif isinstance(event, TextDelta):
            print(event.text, end="", flush=True)
        elif isinstance(event, ToolCallRequested):
            print(f"  -> {event.call.name}({event.call.input})")
        elif isinstance(event, ToolResultReady):
            marker = "error" if event.result.is_error else "ok"
            print(f"  <- {event.name} [{marker}]: {event.result.text}")
        elif isinstance(event, Done):
            print(f"\n  done: {event.turns} model calls, {event.usage.input_tokens} in / "
                  f"{event.usage.output_tokens} out tokens")
        elif isinstance(event, Failed):
            print(f"\n  failed: {event.error}")


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
              f"of the Anthropic and OpenAI APIs at {server.base_url} (the SDKs, HTTP, SSE, agcore's wire\n"
              "code, loop, tools and hooks are real; the model's replies are scripted).")
        yield [
            create_provider("anthropic:claude-haiku-5-5", api_key="demo", base_url=server.anthropic_base_url,
                            cache=False),
            create_provider("openai:gpt-6-luna", api_key="demo", base_url=server.openai_base_url,
                            provider_name="openai", cache=False),
        ]


async def main(base_url: str | None) -> None:
    with providers(base_url) as available:
        current = {"provider": available[0]}
        bundle = (
            AgentBuilder()
            .provider_resolver(lambda session, request: current["provider"])
            .tools(get_weather)
            .plugins(Narrator())
            .build()
        )
        session = AgentSession(BasicAgent(name="weather", system_prompt=SYSTEM), "demo-session", bundle)
        print(f"\n== a tool-using turn on {available[0].provider_name}")
        await stream(session, "What's the weather in Paris right now?")
        if len(available) > 1:
            current["provider"] = available[1]
            print(f"\n== the same session continues on {available[1].provider_name} (context handoff)")
            await stream(session, "Check Paris once more, please.")
        print("\n== cost by model (from the model registry)")
        for model, cost in session.usage.cost_by_model().items():
            print(f"  {model}: " + (f"${cost:.6f}" if cost is not None else "price unknown"))
        await session.close()
        for provider in available:
            await provider.aclose()  # type: ignore[attr-defined]

    print("\n== a guard plugin denies a tool call; the model reads why and carries on")
    scripted = ScriptedProvider([tool_call_reply("delete_file", {"path": "notes.txt"}),
                                 "Understood: I may not delete files here."])
    guarded = AgentBuilder().provider(scripted).tools(get_weather, delete_file).plugins(Narrator()).build()
    await stream(AgentSession(BasicAgent(name="janitor"), "demo-guard", guarded), "Delete notes.txt")

    print("\n== the retry layer: a 529 on the first try")
    quick: Any = RetryPolicy(base_delay=0.05, sleep=anyio.sleep)
    flaky = ScriptedProvider([OverloadedError("overloaded (529)"), "Back on my feet."], retry_policy=quick)
    reply = await flaky.complete(LLMRequest.build([UserMessage(content="hello?")]))
    print(f"  retried: {reply.text!r} after {flaky.calls} calls")
    print("\nDone. Next: the full showcase, `python examples/demo.py` (`make demo`), and the command line,\n"
          "`agcore --help`.")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--base-url", help="an OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1")
    args = parser.parse_args()
    anyio.run(main, args.base_url)
