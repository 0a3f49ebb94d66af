"""How much client CPU agcore's providers add on top of the bare vendor SDKs.

For each vendor (Anthropic, OpenAI) and mode (``complete``, ``stream``) it times one "call" — the
two-request exchange every tool loop makes: the question (the model answers with a tool call), then
the question, that call and its result (the model answers in text) — made two ways against the same
loopback fake vendor:

* **bare**: the vendor SDK alone, ``messages.create`` / ``chat.completions.create`` with pre-built
  dict params (streaming: ``stream=True``, every raw event iterated);
* **agcore**: ``AnthropicProvider`` / ``OpenAIProvider`` on the same kind of SDK client, calling
  ``complete()`` or consuming ``stream()`` with agcore messages and tool definitions.

The fake vendor runs in a subprocess, so ``time.process_time()`` counts the client only. Within each
round bare and agcore calls alternate one by one, so drift and load from other processes hit both
alike; the report gives the median over rounds of each side's per-call CPU, their ratio, and wall
time. It is a report: it exits 0 whatever
the ratio. Run ``python bench/llm_overhead.py`` (``--quick`` for a smoke run, ``--help`` for knobs).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: `python bench/llm_overhead.py`
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from anthropic import AsyncAnthropic  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from openai.types.chat import ChatCompletionStreamOptionsParam  # noqa: E402

from agcore.llm import (  # noqa: E402
    BaseProvider,
    DoneEvent,
    ErrorEvent,
    LLMRequest,
    LLMResponse,
    StopReason,
    ToolDefinition,
    ToolResultBlock,
    UserMessage,
)

ANTHROPIC_MODEL = "claude-haiku-4-5"  # one the SDK does not flag as deprecated (a warning per call)
OPENAI_MODEL = "gpt-4.1"
MAX_TOKENS = 1024
SYSTEM = "You are a concise assistant. Use the tools you are given when they help answer."
QUESTION = "What's the weather like in Paris right now?"
TOOL_RESULT = '{"temperature": 18, "unit": "celsius", "conditions": "partly cloudy", "humidity": 60}'
# The bare side's second request is pre-built, so it cannot echo the server's fresh call id; the fake
# server does not check ids, and a fixed one of the vendor's shape costs the SDK the same.
BARE_CALL_ID = {"anthropic": "toolu_01A09q90qw90lq917835lq9", "openai": "call_abc123def456ghi789jkl012"}
WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["city"],
}
WEATHER_DESCRIPTION = "Current weather for a city."
ARGUMENTS = {"city": "Paris", "unit": "celsius"}
TOOLS = [ToolDefinition(name="get_weather", description=WEATHER_DESCRIPTION, input_schema=WEATHER_SCHEMA)]

Exchange = Callable[[], Awaitable[None]]


# ---------------------------------------------------------------- bare SDK side


def anthropic_params() -> tuple[dict[str, Any], dict[str, Any]]:
    question = {"role": "user", "content": QUESTION}
    first = {
        "model": ANTHROPIC_MODEL,
        "max_tokens": MAX_TOKENS,
        "system": SYSTEM,
        "messages": [question],
        "tools": [{"name": "get_weather", "description": WEATHER_DESCRIPTION,
                   "input_schema": WEATHER_SCHEMA}],
    }
    call_id = BARE_CALL_ID["anthropic"]
    second = dict(first, messages=[
        question,
        {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": "get_weather",
                                           "input": ARGUMENTS}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                      "content": TOOL_RESULT}]},
    ])
    return first, second


def openai_params() -> tuple[dict[str, Any], dict[str, Any]]:
    head = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    first = {
        "model": OPENAI_MODEL,
        "max_tokens": MAX_TOKENS,  # what OpenAIProvider sends for gpt-4.1, so both bodies match
        "messages": head,
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": WEATHER_DESCRIPTION,
                                                    "parameters": WEATHER_SCHEMA}}],
    }
    call_id = BARE_CALL_ID["openai"]
    second = dict(first, messages=[
        *head,
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris", "unit": "celsius"}'}}]},
        {"role": "tool", "tool_call_id": call_id, "content": TOOL_RESULT},
    ])
    return first, second


def bare_anthropic(client: AsyncAnthropic, stream: bool) -> Exchange:
    first, second = anthropic_params()

    async def complete() -> None:
        await client.messages.create(**first)
        await client.messages.create(**second)

    async def streamed() -> None:
        for params in (first, second):
            events = await client.messages.create(**params, stream=True)
            async for _ in events:
                pass

    return streamed if stream else complete


def bare_openai(client: AsyncOpenAI, stream: bool) -> Exchange:
    first, second = openai_params()
    usage: ChatCompletionStreamOptionsParam = {"include_usage": True}

    async def complete() -> None:
        await client.chat.completions.create(**first)
        await client.chat.completions.create(**second)

    async def streamed() -> None:
        for params in (first, second):
            chunks = await client.chat.completions.create(**params, stream=True, stream_options=usage)
            async for _ in chunks:
                pass

    return streamed if stream else complete


# ---------------------------------------------------------------- agcore side


def weather_request(messages: Sequence[Any]) -> LLMRequest:
    return LLMRequest.build(messages, system=SYSTEM, tools=TOOLS, max_tokens=MAX_TOKENS)


def agcore_exchange(provider: BaseProvider, stream: bool) -> Exchange:
    question = UserMessage(content=QUESTION)

    async def streamed_reply(messages: Sequence[Any]) -> LLMResponse:
        done: DoneEvent | None = None
        async for event in provider.stream(weather_request(messages)):
            if isinstance(event, DoneEvent):
                done = event
            elif isinstance(event, ErrorEvent):
                raise event.to_exception()
        if done is None:
            raise RuntimeError(f"{provider!r}: stream() ended without a DoneEvent")
        return LLMResponse(message=done.message, request_id=done.request_id)

    async def reply(messages: Sequence[Any]) -> LLMResponse:
        if stream:
            return await streamed_reply(messages)
        return await provider.complete(weather_request(messages))

    async def exchange() -> None:
        first = await reply([question])
        call = first.tool_calls[0]
        result = UserMessage(content=[ToolResultBlock(tool_use_id=call.id, content=TOOL_RESULT)])
        await reply([question, first.message, result])

    return exchange


async def check_agcore(provider: BaseProvider, stream: bool) -> None:
    """Fail loudly, before timing anything, if the provider does not do the exchange right."""
    question = UserMessage(content=QUESTION)
    make = agcore_exchange(provider, stream)  # warms the exact code path timed later
    await make()
    first = await provider.complete(weather_request([question]))
    calls = first.tool_calls
    if first.stop_reason is not StopReason.TOOL_USE or len(calls) != 1 or calls[0].input != ARGUMENTS:
        raise RuntimeError(f"{provider!r}: expected one get_weather call, got {first.message!r}")
    result = UserMessage(content=[ToolResultBlock(tool_use_id=calls[0].id, content=TOOL_RESULT)])
    second = await provider.complete(weather_request([question, first.message, result]))
    if second.stop_reason is not StopReason.END_TURN or "Paris" not in second.text:
        raise RuntimeError(f"{provider!r}: expected a text answer, got {second.message!r}")


def build_providers(base_url: str) -> tuple[dict[str, BaseProvider], str | None]:
    """agcore's providers on fresh SDK clients, or ({}, why not) when they cannot be loaded yet."""
    try:  # by name: the bench must still run (bare only) while the providers are being written
        anthropic_module = importlib.import_module("agcore.llm.providers.anthropic")
        openai_module = importlib.import_module("agcore.llm.providers.openai")
    except ModuleNotFoundError as exc:
        if exc.name not in ("agcore.llm.providers.anthropic", "agcore.llm.providers.openai"):
            raise  # a provider that exists but is broken must fail the run, not vanish from it
        return {}, f"agcore providers not written yet ({exc}); measuring the bare SDKs only"
    return {
        "anthropic": anthropic_module.AnthropicProvider(ANTHROPIC_MODEL, client=AsyncAnthropic(
            base_url=base_url, api_key="x", max_retries=0)),
        "openai": openai_module.OpenAIProvider(OPENAI_MODEL, client=AsyncOpenAI(
            base_url=base_url + "/v1", api_key="x", max_retries=0)),
    }, None


# ---------------------------------------------------------------- measuring


@dataclass
class Case:
    vendor: str
    mode: str
    runs: dict[str, Exchange]
    cpu_us: dict[str, list[float]] = field(default_factory=dict)
    wall_us: dict[str, list[float]] = field(default_factory=dict)


async def measure_round(case: Case, calls: int) -> None:
    """One round: ``calls`` calls per side, the sides alternating call by call (and which goes first
    alternating too), so load from other processes and allocator or cache drift hit both alike."""
    sides = list(case.runs)
    cpu = dict.fromkeys(sides, 0.0)
    wall = dict.fromkeys(sides, 0.0)
    gc.collect()  # the previous round's garbage is not this round's cost
    for i in range(calls):
        for side in sides if i % 2 == 0 else sides[::-1]:
            cpu0, wall0 = time.process_time(), time.perf_counter()
            await case.runs[side]()
            cpu[side] += time.process_time() - cpu0
            wall[side] += time.perf_counter() - wall0
    for side in sides:
        case.cpu_us.setdefault(side, []).append(cpu[side] / calls * 1e6)
        case.wall_us.setdefault(side, []).append(wall[side] / calls * 1e6)


async def measure(cases: list[Case], rounds: int, calls: int, warmup: int) -> None:
    for case in cases:
        for run in case.runs.values():
            for _ in range(warmup):
                await run()
    for _ in range(rounds):
        for case in cases:
            await measure_round(case, calls)


def report(cases: list[Case], args: argparse.Namespace, port: int, elapsed: float, note: str | None) -> str:
    lines = [
        "agcore LLM overhead: client CPU per call (one call = 2 requests: tool call, then text answer)",
        f"fake vendor subprocess on 127.0.0.1:{port}; {args.rounds} rounds x {args.calls} calls per side "
        "(sides alternating call by call), "
        f"{args.warmup} warm-up; median over rounds; Python {sys.version.split()[0]}",
    ]
    if note:
        lines.append(f"NOTE: {note}")
    header = (f"{'vendor':<10} {'mode':<9} {'bare CPU µs':>12} {'agcore CPU µs':>14} {'ratio':>7} "
              f"{'Δ µs':>8} {'round ratios':>14} {'bare wall µs':>13} {'agcore wall µs':>15}")
    lines += ["", header, "-" * len(header)]
    for case in cases:
        bare = statistics.median(case.cpu_us["bare"])
        bare_wall = statistics.median(case.wall_us["bare"])
        if "agcore" not in case.cpu_us:
            lines.append(f"{case.vendor:<10} {case.mode:<9} {bare:>12.0f} {'n/a':>14} {'n/a':>7} {'':>8} "
                         f"{'':>14} {bare_wall:>13.0f} {'n/a':>15}")
            continue
        agc = statistics.median(case.cpu_us["agcore"])
        per_round = [a / b for a, b in zip(case.cpu_us["agcore"], case.cpu_us["bare"], strict=True)]
        spread = f"{min(per_round):.2f}-{max(per_round):.2f}"
        lines.append(
            f"{case.vendor:<10} {case.mode:<9} {bare:>12.0f} {agc:>14.0f} {agc / bare:>7.3f} "
            f"{agc - bare:>+8.0f} {spread:>14} {bare_wall:>13.0f} "
            f"{statistics.median(case.wall_us['agcore']):>15.0f}"
        )
    lines += ["", f"total wall time: {elapsed:.1f} s",
              "ratio = agcore CPU / bare CPU (1.00 = no overhead); round ratios = min-max over rounds"]
    return "\n".join(lines)


def start_server() -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("fake_vendor.py"))],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    try:
        return proc, int(line)
    except ValueError:
        proc.kill()
        raise RuntimeError(f"the fake vendor did not print its port (got {line!r})") from None


async def run(args: argparse.Namespace) -> str:
    started = time.perf_counter()
    server, port = start_server()
    try:
        base_url = f"http://127.0.0.1:{port}"
        bare_a = AsyncAnthropic(base_url=base_url, api_key="x", max_retries=0)
        bare_o = AsyncOpenAI(base_url=base_url + "/v1", api_key="x", max_retries=0)
        providers, note = build_providers(base_url)
        cases: list[Case] = []
        for vendor in args.vendors:
            for mode in ("complete", "stream"):
                stream = mode == "stream"
                runs = {"bare": bare_anthropic(bare_a, stream) if vendor == "anthropic"
                        else bare_openai(bare_o, stream)}
                if vendor in providers:
                    await check_agcore(providers[vendor], stream)
                    runs["agcore"] = agcore_exchange(providers[vendor], stream)
                cases.append(Case(vendor, mode, runs))
        await measure(cases, args.rounds, args.calls, args.warmup)
        for provider in providers.values():
            await provider.aclose()
        await bare_a.close()
        await bare_o.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    return report(cases, args, port, time.perf_counter() - started, note)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7, help="interleaved bare/agcore rounds (default 7)")
    parser.add_argument("--calls", type=int, default=100,
                        help="calls (2-request exchanges) per side per round (default 100)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed calls per side first (default 20)")
    parser.add_argument("--vendor", dest="vendors", action="append", choices=["anthropic", "openai"],
                        help="measure only this vendor (repeatable; default both)")
    parser.add_argument("--quick", action="store_true", help="a few-second smoke run (2 rounds x 5 calls)")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.calls, args.warmup = 2, 5, 2
    if args.rounds < 1 or args.calls < 1 or args.warmup < 0:
        parser.error("--rounds and --calls must be at least 1, --warmup at least 0")
    args.vendors = args.vendors or ["anthropic", "openai"]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(anyio.run(run, args, backend="asyncio"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
