"""What agcore's agent loop costs: CPU per tool-call turn, throughput, import time and session memory.

One *turn* is what every tool-using agent does most: the user asks for the weather, the model calls
``get_weather``, the tool runs, the model answers in text. So two LLM calls and one trivial tool call,
against ``fake_vendor.py`` running in a subprocess (its CPU is not counted). Sides:

* ``bare``: a hand-written loop on the bare ``openai`` SDK (``chat.completions.create``, parse the
  tool calls, run the function, append the tool message, call again), non-streaming;
* ``bare-stream``: the same loop with ``stream=True``, assembling the tool-call deltas by hand (the
  like-for-like baseline of ``agcore-stream`` and of ``stream_turn``);
* ``agcore``: ``AgentSession.submit_turn()`` on a bundle from ``AgentBuilder``; one session reused, its
  history cleared before each turn. ``submit_turn`` makes one ``complete()`` call per model turn, as
  nobody reads the deltas (``AgentConfig.streaming="auto"``). ``agcore-new``: a new session per turn;
  ``agcore-stream``: ``streaming="always"``, every call streamed;
* with ``--peers``: ``pydantic-ai`` (``Agent.run``) and the OpenAI Agents SDK (``Runner.run``), both on
  an ``AsyncOpenAI`` client pointed at the fake server, run in their own virtualenv (``bench/.venv-peers``,
  built from ``bench/peers/requirements.txt``; never agcore dependencies).

Sections: ``cpu`` (client CPU per sequential turn, sides interleaved), ``throughput`` (100 sessions
running turns concurrently on one event loop), ``import`` (cold ``import agcore...`` in fresh
interpreters) and ``memory`` (tracemalloc size of an idle ``AgentSession`` and of its history).
It is a report: it exits 0 whatever the numbers. ``--quick`` for a smoke run, ``--help`` for knobs.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import json
import os
import pstats
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: `python bench/agent_loop.py`
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

from bench.llm_overhead import start_server  # noqa: E402

MODEL = "gpt-4.1"
QUESTION = "What's the weather like in Paris right now?"
WEATHER = '{"temperature": 18, "unit": "celsius", "conditions": "partly cloudy", "humidity": 60}'
PEERS_VENV = ROOT / "bench" / ".venv-peers"
PEERS_REQUIREMENTS = ROOT / "bench" / "peers" / "requirements.txt"
TOOL_CALLS = Counter[str]()
#: Closes every client made, before the event loop ends (else their finalizers hit a closed loop).
CLOSERS: list[Callable[[], Awaitable[None]]] = []

#: One turn; returns the final answer text (checked before timing).
Turn = Callable[[], Awaitable[str]]


async def get_weather(city: str, unit: str = "celsius") -> str:
    """Current weather for a city.

    Args:
        city: City name, e.g. Paris
        unit: celsius or fahrenheit
    """
    TOOL_CALLS[city] += 1
    return WEATHER


# The schema agcore derives from get_weather's hints and docstring: the bare loop sends the same.
WEATHER_TOOL: dict[str, Any] = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name, e.g. Paris"},
        "unit": {"type": "string", "description": "celsius or fahrenheit", "default": "celsius"}},
        "required": ["city"], "additionalProperties": False}}}
FUNCTIONS: dict[str, Callable[..., Awaitable[str]]] = {"get_weather": get_weather}
MAX_ITERATIONS = 10
RAMP = 5  # new connections opened at once in the throughput warm-up (see measure_throughput)


# ---------------------------------------------------------------- bare SDK loops


def openai_client(base_url: str) -> AsyncOpenAI:
    client = AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
    CLOSERS.append(client.close)
    return client


async def close_clients() -> None:
    while CLOSERS:
        await CLOSERS.pop()()


def bare_loop(client: AsyncOpenAI, messages_out: list[list[dict[str, Any]]] | None = None) -> Turn:
    """The loop a user writes on the SDK alone: call, run the tool calls, append, call again."""

    async def turn() -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
        for _ in range(MAX_ITERATIONS):
            reply = await client.chat.completions.create(model=MODEL, messages=messages,  # type: ignore[arg-type]
                                                         tools=[WEATHER_TOOL])  # type: ignore[list-item]
            message = reply.choices[0].message
            if not message.tool_calls:
                messages.append({"role": "assistant", "content": message.content})
                break
            messages.append({"role": "assistant", "content": message.content, "tool_calls": [
                {"id": c.id, "type": "function",
                 "function": {"name": c.function.name, "arguments": c.function.arguments}}
                for c in message.tool_calls if c.type == "function"]})
            for call in message.tool_calls:
                if call.type != "function":
                    continue
                result = await FUNCTIONS[call.function.name](**json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        if messages_out is not None:
            messages_out.append(messages)
        return str(messages[-1]["content"] or "")

    return turn


def bare_stream_loop(client: AsyncOpenAI, messages_out: list[list[dict[str, Any]]] | None = None) -> Turn:
    """The same loop streaming, as agcore does: text and tool-call deltas assembled by hand."""

    async def turn() -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
        for _ in range(MAX_ITERATIONS):
            chunks = await client.chat.completions.create(
                model=MODEL, messages=messages, tools=[WEATHER_TOOL],  # type: ignore[arg-type, list-item]
                stream=True, stream_options={"include_usage": True})
            text: list[str] = []
            calls: dict[int, dict[str, Any]] = {}
            async for chunk in chunks:
                if not chunk.choices:
                    continue  # the usage chunk
                delta = chunk.choices[0].delta
                if delta.content:
                    text.append(delta.content)
                for piece in delta.tool_calls or ():
                    call = calls.setdefault(piece.index, {"id": "", "name": "", "arguments": []})
                    if piece.id:
                        call["id"] = piece.id
                    if piece.function is not None:
                        if piece.function.name:
                            call["name"] = piece.function.name
                        if piece.function.arguments:
                            call["arguments"].append(piece.function.arguments)
            content = "".join(text) or None
            if not calls:
                messages.append({"role": "assistant", "content": content})
                break
            ordered = [calls[i] for i in sorted(calls)]
            messages.append({"role": "assistant", "content": content, "tool_calls": [
                {"id": c["id"], "type": "function",
                 "function": {"name": c["name"], "arguments": "".join(c["arguments"])}} for c in ordered]})
            for call in ordered:
                result = await FUNCTIONS[call["name"]](**json.loads("".join(call["arguments"])))
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        if messages_out is not None:
            messages_out.append(messages)
        return str(messages[-1]["content"] or "")

    return turn


# ---------------------------------------------------------------- agcore


def agcore_bundle(base_url: str) -> Any:
    from agcore.agent import AgentBuilder
    from agcore.llm.providers.openai import OpenAIProvider

    provider = OpenAIProvider(MODEL, base_url=base_url, api_key="x", provider_name="openai")
    CLOSERS.append(provider.aclose)
    return AgentBuilder().provider(provider).tools(get_weather).build()


def agcore_reused(bundle: Any) -> Turn:
    """One session; its history is cleared before each turn, so every turn sends the same requests."""
    from agcore.agent import AgentSession, BasicAgent

    session = AgentSession(BasicAgent(name="bench"), None, bundle)

    async def turn() -> str:
        session.messages.clear()
        result = await session.submit_turn(QUESTION)
        if result.error is not None:
            raise result.error
        return result.text

    return turn


def agcore_new(bundle: Any) -> Turn:
    """A new session per turn (and ``close()``d after): what a one-shot request handler does."""
    from agcore.agent import AgentSession, BasicAgent

    agent = BasicAgent(name="bench")

    async def turn() -> str:
        session = AgentSession(agent, None, bundle)
        result = await session.submit_turn(QUESTION)
        await session.close()
        if result.error is not None:
            raise result.error
        return result.text

    return turn


def agcore_streaming_bundle(base_url: str) -> Any:
    """The same agent with ``AgentConfig(streaming="always")``: ``submit_turn`` streams every call
    (by default it streams only when someone reads the events, i.e. in ``stream_turn``)."""
    from agcore.agent import AgentBuilder
    from agcore.llm.providers.openai import OpenAIProvider

    provider = OpenAIProvider(MODEL, base_url=base_url, api_key="x", provider_name="openai")
    CLOSERS.append(provider.aclose)
    return AgentBuilder().provider(provider).tools(get_weather).config(streaming="always").build()


# ---------------------------------------------------------------- peers (only in bench/.venv-peers)


def pydantic_ai_side(base_url: str) -> Callable[[], Turn]:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = openai_client(base_url)
    agent = Agent(OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client)), tools=[get_weather])

    async def turn() -> str:
        return (await agent.run(QUESTION)).output

    return lambda: turn


def openai_agents_side(base_url: str) -> Callable[[], Turn]:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)
    client = openai_client(base_url)
    agent = Agent(name="bench", model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client),
                  tools=[function_tool(get_weather)])

    async def turn() -> str:
        return str((await Runner.run(agent, QUESTION)).final_output)

    return lambda: turn


PEERS: dict[str, Callable[[str], Callable[[], Turn]]] = {
    "pydantic-ai": pydantic_ai_side,
    "openai-agents": openai_agents_side,
}
PEER_PACKAGES = {"pydantic-ai": "pydantic_ai", "openai-agents": "agents"}


# ---------------------------------------------------------------- sides


@dataclass
class Side:
    name: str
    how: str
    make: Callable[[], Turn]  # a turn function with its own state (one per concurrent session)
    cpu_us: list[float] = field(default_factory=list)
    wall_us: list[float] = field(default_factory=list)


def build_sides(base_url: str, with_peers: bool) -> tuple[list[Side], list[str]]:
    bare_client = openai_client(base_url)
    stream_client = openai_client(base_url)
    bundle = agcore_bundle(base_url)
    streaming_bundle = agcore_streaming_bundle(base_url)
    sides = [
        Side("bare", "openai SDK loop, non-streaming", lambda: bare_loop(bare_client)),
        Side("bare-stream", "openai SDK loop, stream=True", lambda: bare_stream_loop(stream_client)),
        Side("agcore", "AgentSession.submit_turn, reused session", lambda: agcore_reused(bundle)),
        Side("agcore-new", "AgentSession.submit_turn, new session", lambda: agcore_new(bundle)),
        Side("agcore-stream", "submit_turn with streaming=\"always\"",
             lambda: agcore_reused(streaming_bundle)),
    ]
    notes: list[str] = []
    if with_peers:
        for name, build in PEERS.items():
            try:
                make = build(base_url)
            except Exception as exc:  # a peer that will not load or configure is skipped, not fatal
                notes.append(f"{name} skipped: {type(exc).__name__}: {exc}")
                continue
            how = "Agent.run (non-streaming)" if name == "pydantic-ai" else "Runner.run (non-streaming)"
            sides.append(Side(name, how, make))
    return sides, notes


async def check(side: Side, turn: Turn) -> None:
    """Fail loudly before timing if a side does not do the whole turn (tool call, then the answer)."""
    before = TOOL_CALLS["Paris"]
    text = await turn()
    if TOOL_CALLS["Paris"] != before + 1 or "Paris" not in text:
        raise RuntimeError(f"{side.name}: expected one get_weather call and an answer about Paris, "
                           f"got {TOOL_CALLS['Paris'] - before} calls and {text!r}")


# ---------------------------------------------------------------- 1. CPU per turn


async def measure_cpu(sides: list[Side], rounds: int, turns: int, warmup: int) -> list[Side]:
    runs = [side.make() for side in sides]
    usable: list[tuple[Side, Turn]] = []
    for side, run in zip(sides, runs, strict=True):
        try:
            await check(side, run)
        except Exception as exc:
            if side.name in PEERS:  # a peer that cannot talk to the fake server is reported, not fatal
                print(f"NOTE: {side.name} skipped: its turn failed: {type(exc).__name__}: {exc}")
                continue
            raise
        usable.append((side, run))
    for _ in range(warmup):
        for _side, run in usable:
            await run()
    order = list(range(len(usable)))
    shuffle = random.Random(4).shuffle
    for _ in range(rounds):
        cpu = [0.0] * len(usable)
        wall = [0.0] * len(usable)
        gc.collect()  # the previous round's garbage is not this round's cost
        for _ in range(turns):
            # A new order every turn: a side that always ran right after the same other side would
            # inherit (or lose) its warm CPU caches. Rotating the order did that: agcore-new, mostly
            # after agcore, came out ~8% cheaper than the identical reused-session turn.
            shuffle(order)
            for k in order:
                run = usable[k][1]
                c0, w0 = time.process_time(), time.perf_counter()
                await run()
                cpu[k] += time.process_time() - c0
                wall[k] += time.perf_counter() - w0
        for k, (side, _run) in enumerate(usable):
            side.cpu_us.append(cpu[k] / turns * 1e6)
            side.wall_us.append(wall[k] / turns * 1e6)
    return [side for side, _run in usable]


def cpu_table(sides: list[Side], args: argparse.Namespace, port: int) -> str:
    by_name = {s.name: s for s in sides}
    bare, bare_stream = by_name["bare"], by_name["bare-stream"]
    lines = [
        "1. CPU per tool-call turn (2 LLM calls + 1 tool call), client side only",
        f"   fake vendor subprocess on 127.0.0.1:{port}; {args.rounds} rounds x {args.turns} turns per side, "
        f"sides interleaved turn by turn in random order; {args.warmup} warm-up turns; median over rounds; "
        f"Python {sys.version.split()[0]}",
        "",
    ]
    header = (f"{'side':<14} {'CPU µs/turn':>12} {'vs bare':>8} {'vs bare-stream':>15} {'round ratios':>13} "
              f"{'wall µs/turn':>13}  how")
    lines += [header, "-" * (len(header) + 40)]
    for side in sides:
        cpu = statistics.median(side.cpu_us)
        per_round = [a / b for a, b in zip(side.cpu_us, bare.cpu_us, strict=True)]
        spread = f"{min(per_round):.2f}-{max(per_round):.2f}"
        lines.append(
            f"{side.name:<14} {cpu:>12.0f} {cpu / statistics.median(bare.cpu_us):>8.2f} "
            f"{cpu / statistics.median(bare_stream.cpu_us):>15.2f} {spread:>13} "
            f"{statistics.median(side.wall_us):>13.0f}  {side.how}")
    lines += ["", "   vs bare / vs bare-stream = CPU ÷ that baseline's CPU (median over rounds);",
              "   round ratios = min-max per-round ratio vs bare"]
    return "\n".join(lines)


# ---------------------------------------------------------------- 2. throughput


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of another process (Linux /proc), to show whether the fake server saturates."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Throughput:
    side: Side
    rates: list[float] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)
    client_util: list[float] = field(default_factory=list)
    server_util: list[float] = field(default_factory=list)


async def run_concurrently(runs: list[Turn], turns_each: int) -> None:
    async def worker(run: Turn) -> None:
        for _ in range(turns_each):
            await run()

    async with anyio.create_task_group() as group:
        for run in runs:
            group.start_soon(worker, run)


async def measure_throughput(sides: list[Side], server_pid: int, sessions: int, turns_each: int,
                             rounds: int) -> list[Throughput]:
    """Each side in turn: a warm-up that grows to all sessions ``RAMP`` at a time, then its rounds.

    The warm-up opens the client pool's connections a few at a time: the fake server listens with
    socketserver's backlog of 5, and 100 connects at once overflow it (the kernel drops the SYNs, the
    client retries after 1 s, then gets a reset). The rounds follow at once because the SDK's pool
    drops connections idle for 5 s, which would bring that burst back.
    """
    results = []
    for side in sides:
        if side.name in ("agcore-new", "agcore-stream"):
            continue  # the reused-session, default variant stands for agcore here
        runs = [side.make() for _ in range(sessions)]
        result = Throughput(side)
        for width in range(RAMP, sessions + RAMP, RAMP):
            await run_concurrently(runs[:width], 1)
        for _ in range(rounds):
            gc.collect()
            c0, w0, s0 = time.process_time(), time.perf_counter(), proc_cpu_seconds(server_pid)
            await run_concurrently(runs, turns_each)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            server = proc_cpu_seconds(server_pid) - s0
            done = sessions * turns_each
            result.rates.append(done / wall)
            result.cpu_us.append(cpu / done * 1e6)
            result.client_util.append(cpu / wall)
            result.server_util.append(server / wall)
        results.append(result)
    return results


def throughput_table(results: list[Throughput], args: argparse.Namespace) -> str:
    bare = next(r for r in results if r.side.name == "bare")
    lines = [
        f"2. Throughput: {args.sessions_concurrent} sessions running turns concurrently on one event loop "
        f"(anyio task group, one shared client/agent per side)",
        f"   {args.conc_rounds} rounds x {args.conc_turns} turns per session "
        f"({args.sessions_concurrent * args.conc_turns} turns per round) after a warm-up; median over rounds",
        "",
    ]
    header = (f"{'side':<14} {'turns/s':>8} {'rounds':>10} {'vs bare':>8} {'client CPU µs/turn':>19} "
              f"{'client CPU':>11} {'server CPU':>11}")
    lines += [header, "-" * len(header)]
    for r in results:
        rate = statistics.median(r.rates)
        lines.append(
            f"{r.side.name:<14} {rate:>8.0f} {f'{min(r.rates):.0f}-{max(r.rates):.0f}':>10} "
            f"{rate / statistics.median(bare.rates):>8.2f} "
            f"{statistics.median(r.cpu_us):>19.0f} {statistics.median(r.client_util):>10.0%} "
            f"{statistics.median(r.server_util):>10.0%}")
    lines += ["", "   client/server CPU = CPU seconds ÷ wall seconds (100% = one core busy). The client is "
              "one thread: near 100% it is the bottleneck;", "   the fake server (threads, one GIL) near "
              "100% would cap every side alike. rounds = min-max turns/s over the rounds."]
    starved = [r.side.name for r in results if statistics.median(r.client_util) < 0.9]
    if starved:
        lines.append(f"   WARNING: client CPU below 90% for {', '.join(starved)}: the client waited or was "
                     "not scheduled (other load on the machine?); rerun on a quiet machine before comparing.")
    return "\n".join(lines)


# ---------------------------------------------------------------- profile (--profile)


async def profile_sides(sides: list[Side], turns: int) -> str:
    chosen = [s for s in sides if s.name in ("bare", "bare-stream", "agcore", "agcore-stream")]
    runs = [s.make() for s in chosen]
    for run in runs:
        for _ in range(10):
            await run()
    profiles = [cProfile.Profile(time.process_time) for _ in chosen]
    for i in range(turns):
        for k in (range(len(runs)) if i % 2 == 0 else reversed(range(len(runs)))):
            profiles[k].enable()
            await runs[k]()
            profiles[k].disable()
    out = [f"Profile: {turns} turns per side, alternating; µs per turn under cProfile (inflated ~4x; "
           "compare sides, not absolute numbers)"]
    tables = [pstats.Stats(prof).stats for prof in profiles]  # type: ignore[attr-defined]
    packages = [Counter[str]() for _ in tables]
    for counter, table in zip(packages, tables, strict=True):
        for (path, _line, _name), (_cc, _nc, tt, _ct, _callers) in table.items():
            counter[_package(path)] += tt / turns * 1e6
    names = sorted(set().union(*packages), key=lambda n: -max(c[n] for c in packages))[:14]
    out += ["", "own time (tottime) by package, µs per turn:",
            f"{'package':<22}" + "".join(f"{s.name:>13}" for s in chosen)]
    for name in names:
        out.append(f"{name:<22}" + "".join(f"{c[name]:>13.0f}" for c in packages))
    out.append(f"{'total':<22}" + "".join(f"{sum(c.values()):>13.0f}" for c in packages))
    for side, table in zip(chosen, tables, strict=True):
        if not side.name.startswith("agcore"):
            continue
        own = [(key, v) for key, v in table.items() if "/agcore/" in key[0]]
        own.sort(key=lambda kv: kv[1][3], reverse=True)
        out += ["", f"{side.name}: agcore functions by cumulative time (with callees), top 20",
                f"{'calls/turn':>10} {'tottime':>8} {'cumtime':>8}  function"]
        for (path, line, name), (_cc, nc, tt, ct, _callers) in own[:20]:
            where = re.sub(r".*/(site-packages|main)/", "", path)
            out.append(f"{nc / turns:>10.1f} {tt / turns * 1e6:>8.1f} {ct / turns * 1e6:>8.1f}  "
                       f"{where}:{line}({name})")
    return "\n".join(out)


def _package(path: str) -> str:
    """A profile entry's package: the top-level name under site-packages, agcore's module, or stdlib."""
    if "/agcore/" in path:
        return "agcore." + path.rsplit("/agcore/", 1)[1].split("/")[0].removesuffix(".py")
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1].split("/")[0].removesuffix(".py")
    if path == "~":
        return "(builtins)"
    return "stdlib:" + Path(path).stem if path.startswith("/") else path


# ---------------------------------------------------------------- sections 1 + 2 driver


async def run_loop_sections(args: argparse.Namespace) -> str:
    server, port = start_server()
    out: list[str] = []
    try:
        base_url = f"http://127.0.0.1:{port}/v1"
        sides, notes = build_sides(base_url, args.in_peers_venv)
        out += [f"NOTE: {note}" for note in notes]
        if args.in_peers_venv:
            versions = []
            for name, module in PEER_PACKAGES.items():
                if any(s.name == name for s in sides):
                    from importlib.metadata import version
                    dist = {"pydantic-ai": "pydantic-ai-slim", "openai-agents": "openai-agents"}[name]
                    versions.append(f"{name} {version(dist)} (import {module})")
            out.append("peers (bench/.venv-peers): " + (", ".join(versions) or "none loaded"))
        import openai
        out.append(f"openai SDK {openai.__version__}")
        if "cpu" in args.only:
            sides = await measure_cpu(sides, args.rounds, args.turns, args.warmup)
            out += ["", cpu_table(sides, args, port)]
        if "throughput" in args.only:
            results = await measure_throughput(sides, server.pid, args.sessions_concurrent, args.conc_turns,
                                               args.conc_rounds)
            out += ["", throughput_table(results, args)]
        if args.profile:
            out += ["", await profile_sides(sides, args.profile)]
    finally:
        await close_clients()
        server.terminate()
        server.wait(timeout=10)
    return "\n".join(out)


# ---------------------------------------------------------------- 3. import time


#: label -> statement, each timed in a fresh interpreter. "floor" is what any pydantic + anyio + pluggy
#: program pays before agcore's own code: agcore cannot import faster than that.
IMPORT_TARGETS = {
    "pass": "pass",
    "import agcore": "import agcore",
    "import agcore.llm": "import agcore.llm",
    "import agcore.tools": "import agcore.tools",
    "import agcore.agent": "import agcore.agent",
    "user line": "from agcore.agent import AgentBuilder, AgentSession, BasicAgent; "
                 "from agcore.tools import tool",
    "floor": "from pydantic import BaseModel, Field; import anyio, pluggy",
}


def import_times(runs: int) -> str:
    # Bytecode cached, as for an installed package: a private pycache (PYTHONDONTWRITEBYTECODE would
    # compile agcore from source in every run), filled by one warm-up run per statement.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="agcore-bench-pycache-") as cache:
        env["PYTHONPYCACHEPREFIX"] = cache
        return _import_times(runs, env)


def _import_times(runs: int, env: dict[str, str]) -> str:
    targets = list(IMPORT_TARGETS)

    def python(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *args], check=True, cwd=ROOT, env=env,
                              capture_output=True, text=True)

    for target in targets:
        python("-c", IMPORT_TARGETS[target])
    walls: dict[str, list[float]] = {t: [] for t in targets}
    for _ in range(runs):  # interleaved, so drift hits every target alike
        for target in targets:
            started = time.perf_counter()
            python("-c", IMPORT_TARGETS[target])
            walls[target].append((time.perf_counter() - started) * 1e3)
    self_ms: dict[str, list[float]] = {t: [] for t in targets[1:]}
    by_package: Counter[str] = Counter()
    count = max(3, runs // 2)
    for _ in range(count):
        for target in targets[1:]:
            err = python("-X", "importtime", "-c", IMPORT_TARGETS[target]).stderr
            total = 0
            statement = False  # the interpreter's start-up imports come first, ending with `site`
            for line in err.splitlines():
                m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
                if m is None:
                    continue
                if not statement:
                    statement = len(m[3]) == 1 and m[4] == "site"
                    continue
                if len(m[3]) == 1:  # a top-level import: its cumulative time counts
                    total += int(m[2])
                if target == "user line":
                    by_package[m[4].split(".")[0]] += int(m[1])
            self_ms[target].append(total / 1e3)
    base = statistics.median(walls["pass"])
    lines = [f"3. Cold import time: fresh interpreter per run (bytecode cached), {runs} runs each "
             "(interleaved), median",
             f"   python -c 'pass' = {base:.0f} ms wall (interpreter start-up, subtracted below)", "",
             f"{'statement':<22} {'wall - pass ms':>15} {'-X importtime ms':>17}",
             "-" * 56]
    for target in targets[1:]:
        lines.append(f"{target:<22} {statistics.median(walls[target]) - base:>15.0f} "
                     f"{statistics.median(self_ms[target]):>17.0f}")
    top = ", ".join(f"{name} {us / count / 1e3:.0f}" for name, us in by_package.most_common(10))
    lines += ["", f"   user line = {IMPORT_TARGETS['user line']}",
              f"   floor = {IMPORT_TARGETS['floor']}",
              f"   user line, own (self) time by top-level package, ms: {top}"]
    return "\n".join(lines)


# ---------------------------------------------------------------- 4. memory


async def memory(sessions: int, history_sessions: int) -> str:
    from agcore.agent import AgentSession, BasicAgent

    server, port = start_server()
    try:
        base_url = f"http://127.0.0.1:{port}/v1"
        bundle = agcore_bundle(base_url)
        agent = BasicAgent(name="bench")
        warm = AgentSession(agent, None, bundle)
        for _ in range(3):  # lazy imports, pools, caches: warm before tracing, they are not per session
            warm.messages.clear()
            await warm.submit_turn(QUESTION)
        bare_histories: list[list[dict[str, Any]]] = []
        bare_client = openai_client(base_url)
        bare = bare_loop(bare_client, bare_histories)
        for _ in range(3):
            await bare()
        bare_histories.clear()

        gc.collect()
        tracemalloc.start()
        start = tracemalloc.get_traced_memory()[0]
        kept = [AgentSession(agent, None, bundle) for _ in range(sessions)]
        gc.collect()
        idle = tracemalloc.get_traced_memory()[0]
        with_history = kept[:history_sessions]
        for session in with_history:
            await session.submit_turn(QUESTION)
        gc.collect()
        after_first = tracemalloc.get_traced_memory()[0]
        for session in with_history:
            await session.submit_turn(QUESTION)
        gc.collect()
        after_second = tracemalloc.get_traced_memory()[0]
        messages = sum(len(s.messages) for s in with_history) // 2
        for _ in range(history_sessions):
            await bare()
        gc.collect()
        after_bare = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        bare_messages = sum(len(h) for h in bare_histories)
    finally:
        await close_clients()
        server.terminate()
        server.wait(timeout=10)
    per_idle = (idle - start) / sessions
    first = (after_first - idle) / history_sessions
    second = (after_second - after_first) / history_sessions
    per_message = (after_second - after_first) / messages
    bare_turn = (after_bare - after_second) / history_sessions
    per_turn_messages = messages // history_sessions
    lines = [
        "4. Session memory (tracemalloc; the bundle, agent and provider are shared and not counted)",
        "",
        f"{'what':<56} {'bytes':>7}",
        "-" * 64,
        f"{'idle AgentSession, right after construction':<56} {per_idle:>7.0f}   "
        f"({sessions} sessions, total ÷ {sessions})",
        f"{'first tool-call turn (history, usage, last_result)':<56} {first:>7.0f}   "
        f"({history_sessions} sessions, {per_turn_messages} messages each)",
        f"{'each further turn':<56} {second:>7.0f}",
        f"{'  per history message (further turn ÷ its messages)':<56} {per_message:>7.0f}",
        f"{'idle session + one turn':<56} {per_idle + first:>7.0f}",
        f"{'bare SDK loop: messages list of one turn (dicts)':<56} {bare_turn:>7.0f}   "
        f"({bare_messages // history_sessions} messages, for scale)",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------- the peers venv


def peers_python() -> tuple[Path | None, str]:
    """bench/.venv-peers' python, created and filled on first use (or when the requirements change)."""
    python = PEERS_VENV / "bin" / "python"
    stamp = PEERS_VENV / ".installed-stamp"
    inputs = PEERS_REQUIREMENTS.read_bytes() + (ROOT / "pyproject.toml").read_bytes()
    want = hashlib.sha256(inputs).hexdigest()
    if python.exists() and stamp.exists() and stamp.read_text() == want:
        return python, "reused"
    print(f"setting up {PEERS_VENV.relative_to(ROOT)}: pip install -e . -r "
          f"{PEERS_REQUIREMENTS.relative_to(ROOT)} ...", flush=True)
    steps = [[sys.executable, "-m", "venv", str(PEERS_VENV)],
             [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
              "-e", str(ROOT), "-r", str(PEERS_REQUIREMENTS)]]
    for step in steps:
        if step[0] != sys.executable and not python.exists():
            break
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            errors = [ln for ln in (done.stderr + done.stdout).splitlines() if "ERROR" in ln or "rror:" in ln]
            return None, f"`{' '.join(step[:4])} ...` failed: {' | '.join(errors[-3:]) or done.returncode}"
    stamp.write_text(want)
    return python, "installed"


def run_in_peers_venv(args: argparse.Namespace, argv: list[str]) -> bool:
    python, how = peers_python()
    if python is None:
        print(f"NOTE: peers skipped, their virtualenv could not be set up: {how}")
        return False
    child: list[str] = []
    rest = iter(argv)
    for arg in rest:  # the child gets every knob but --peers and --only, then only sections 1-2
        if arg == "--only":
            next(rest, None)
        elif arg != "--peers" and not arg.startswith("--only="):
            child.append(arg)
    child += [f"--only={section}" for section in ("cpu", "throughput") if section in args.only]
    print(f"peers virtualenv {PEERS_VENV.relative_to(ROOT)} ({how}); sections 1-2 run there", flush=True)
    done = subprocess.run([str(python), str(Path(__file__).resolve()), "--in-peers-venv", *child])
    if done.returncode != 0:
        print(f"NOTE: the peers run failed (exit {done.returncode}); measuring without peers")
        return False
    return True


# ---------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--peers", action="store_true",
                        help="also measure pydantic-ai and the OpenAI Agents SDK, in bench/.venv-peers")
    parser.add_argument("--only", action="append", choices=["cpu", "throughput", "import", "memory"],
                        help="run only this section (repeatable; default all)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run of every section (20 concurrent sessions, not 100)")
    parser.add_argument("--rounds", type=int, default=7, help="CPU: interleaved rounds (default 7)")
    parser.add_argument("--turns", type=int, default=30, help="CPU: turns per side per round (default 30)")
    parser.add_argument("--warmup", type=int, default=10, help="CPU: untimed turns per side (default 10)")
    parser.add_argument("--sessions-concurrent", type=int, default=100,
                        help="throughput: concurrent sessions (default 100)")
    parser.add_argument("--conc-turns", type=int, default=4, help="throughput: turns per session per round")
    parser.add_argument("--conc-rounds", type=int, default=3, help="throughput: rounds (default 3)")
    parser.add_argument("--import-runs", type=int, default=10, help="import: runs per statement (default 10)")
    parser.add_argument("--sessions", type=int, default=1000, help="memory: idle sessions (default 1000)")
    parser.add_argument("--history-sessions", type=int, default=300,
                        help="memory: sessions given one turn of history (default 300)")
    parser.add_argument("--profile", type=int, default=0, metavar="TURNS",
                        help="also cProfile agcore vs bare-stream for TURNS turns each and print hot spots")
    parser.add_argument("--in-peers-venv", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.turns, args.warmup = 2, 5, 2
        args.conc_turns, args.conc_rounds, args.sessions_concurrent = 2, 1, 20
        args.import_runs, args.sessions, args.history_sessions = 3, 200, 50
    if min(args.rounds, args.turns, args.conc_turns, args.conc_rounds, args.sessions_concurrent,
           args.import_runs, args.sessions, args.history_sessions) < 1 or args.warmup < 0:
        parser.error("counts must be at least 1 (--warmup at least 0)")
    args.history_sessions = min(args.history_sessions, args.sessions)
    args.only = args.only or ["cpu", "throughput", "import", "memory"]
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    started = time.perf_counter()
    if args.in_peers_venv:
        print(anyio.run(run_loop_sections, args, backend="asyncio"), flush=True)
        return 0
    print("agcore agent-loop benchmark (a report, not a test: exits 0 whatever the numbers)", flush=True)
    loop_sections = "cpu" in args.only or "throughput" in args.only
    if loop_sections and not (args.peers and run_in_peers_venv(args, argv)):
        print(anyio.run(run_loop_sections, args, backend="asyncio"), flush=True)
    if "import" in args.only:
        print("\n" + import_times(args.import_runs), flush=True)
    if "memory" in args.only:
        print("\n" + anyio.run(memory, args.sessions, args.history_sessions, backend="asyncio"), flush=True)
    print(f"\ntotal wall time: {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
