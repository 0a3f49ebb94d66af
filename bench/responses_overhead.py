"""How much client CPU ``OpenAIResponsesProvider`` adds on top of the bare ``openai`` SDK's
``responses.create``, for the same two-request tool exchange ``llm_overhead.py`` times (the question,
answered with a tool call; then the question, the call and its result, answered in text), against the
loopback fake vendor's ``/v1/responses`` in a subprocess.

* **bare**: ``client.responses.create`` with pre-built dict params (streaming: ``stream=True``, every
  typed event iterated);
* **agcore**: ``OpenAIResponsesProvider`` on the same kind of SDK client, ``complete()`` or ``stream()``
  with agcore messages and tool definitions.

Sides alternate call by call within each round; the report gives the median per-call CPU over rounds,
the ratio and wall time. A report, never a pass/fail: run ``python bench/responses_overhead.py``
(``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

from agcore.llm.providers.openai_responses import OpenAIResponsesProvider  # noqa: E402
from bench.llm_overhead import (  # noqa: E402
    QUESTION,
    SYSTEM,
    TOOL_RESULT,
    WEATHER_DESCRIPTION,
    WEATHER_SCHEMA,
    Case,
    Exchange,
    agcore_exchange,
    check_agcore,
    measure,
    report,
    start_server,
)

MODEL = "gpt-4.1"  # not a reasoning model: no encrypted reasoning asked for, as on the bare side
MAX_TOKENS = 1024
CALL_ID = "call_abc123def456ghi789jkl012"


def responses_params() -> tuple[dict[str, Any], dict[str, Any]]:
    """The bodies ``OpenAIResponsesProvider`` sends for the exchange, as the bare side's params."""
    question = {"role": "user", "content": QUESTION}
    first: dict[str, Any] = {
        "model": MODEL, "input": [question], "store": False, "instructions": SYSTEM,
        "tools": [{"type": "function", "name": "get_weather", "description": WEATHER_DESCRIPTION,
                   "parameters": WEATHER_SCHEMA, "strict": False}],
        "max_output_tokens": MAX_TOKENS,
    }
    second = dict(first, input=[
        question,
        {"type": "function_call", "call_id": CALL_ID, "name": "get_weather",
         "arguments": '{"city": "Paris", "unit": "celsius"}'},
        {"type": "function_call_output", "call_id": CALL_ID, "output": TOOL_RESULT},
    ])
    return first, second


def bare_responses(client: AsyncOpenAI, stream: bool) -> Exchange:
    first, second = responses_params()

    async def complete() -> None:
        await client.responses.create(**first)
        await client.responses.create(**second)

    async def streamed() -> None:
        for params in (first, second):
            events = await client.responses.create(**params, stream=True)
            async for _ in events:
                pass

    return streamed if stream else complete


async def run(args: argparse.Namespace) -> str:
    started = time.perf_counter()
    server, port = start_server()
    try:
        base_url = f"http://127.0.0.1:{port}/v1"
        bare = AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
        provider = OpenAIResponsesProvider(MODEL, client=AsyncOpenAI(base_url=base_url, api_key="x",
                                                                     max_retries=0))
        cases: list[Case] = []
        for mode in ("complete", "stream"):
            stream = mode == "stream"
            await check_agcore(provider, stream)
            runs = {"bare": bare_responses(bare, stream), "agcore": agcore_exchange(provider, stream)}
            cases.append(Case("responses", mode, runs))
        await measure(cases, args.rounds, args.calls, args.warmup)
        await provider.aclose()
        await provider.client.close()
        await bare.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    return report(cases, args, port, time.perf_counter() - started, None)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7, help="interleaved bare/agcore rounds (default 7)")
    parser.add_argument("--calls", type=int, default=100,
                        help="calls (2-request exchanges) per side per round (default 100)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed calls per side first (default 20)")
    parser.add_argument("--quick", action="store_true", help="a few-second smoke run (2 rounds x 5 calls)")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.calls, args.warmup = 2, 5, 2
    if args.rounds < 1 or args.calls < 1 or args.warmup < 0:
        parser.error("--rounds and --calls must be at least 1, --warmup at least 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(anyio.run(run, args, backend="asyncio"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
