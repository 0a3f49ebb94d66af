"""What running agcore on LangGraph costs: CPU per tool-call turn on the graph vs agcore's own loop vs
LangGraph's own prebuilt agent, in one run.

The turn is ``agent_loop.py``'s (its building blocks are reused, not changed): the user asks for the
weather, the model calls ``get_weather``, the tool runs, the model answers; two LLM calls against
``fake_vendor.py`` in a subprocess (its CPU is not counted). Sides, each non-streaming:

* ``bare``: the hand-written loop on the ``openai`` SDK (the baseline every ratio is against);
* ``agcore``: ``AgentSession.submit_turn`` (one session, history cleared per turn);
* ``agcore-sqlite``: the same, saving the session to a ``SqliteSessionStore`` file as it runs;
* ``graph``: the same agent compiled by ``agcore.integrations.langgraph`` and run by
  ``GraphSession.submit_turn`` with an ``InMemorySaver`` and the session's default durability for it
  (``"exit"``: the checkpoint written when the run ends, as an in-memory saver dies with the process)
  (a new thread per turn, so every turn sends the same requests);
* ``graph-sync``: the same with ``durability="sync"`` (a checkpoint per step, as ``langgraph-floor``,
  ``langgraph-sdk`` and ``graph-sqlite`` write them: the like-for-like side for those);
* ``graph-sqlite``: the same with an ``AsyncSqliteSaver`` on a file (what crash safety costs);
* ``graph-nockpt``: ``compile_agent`` without a checkpointer, ``ainvoke`` straight: LangGraph's
  engine with no checkpoint writes;
* ``langgraph-floor``: a graph of the same three steps and state whose nodes do no work, with an
  ``InMemorySaver``: what LangGraph itself costs per turn of this shape, agent or not;
* ``loop+floor``: ``agcore``'s turn and ``langgraph-floor``'s turn back to back, in one process: what
  the two cost together when their code alternates (more than the sum of the two measured apart: each
  evicts the other's code and data from the CPU's caches). ``graph`` runs the same two bodies of code
  interleaved, so ``graph-sync / loop+floor`` is the share of the graph's cost that is agcore's own glue;
* ``langgraph-sdk``: the agent a user writes on LangGraph without langchain: a ``model`` node calling
  the bare ``openai`` SDK as ``bare`` does and a ``tools`` node running the calls, the messages as
  plain dicts in the state, with an ``InMemorySaver`` and ``durability="sync"``, a new thread per
  turn. The like-for-like reference of ``graph``: LangGraph's steps, checkpoints and the same two
  HTTP calls, with no agent runtime in between; ``graph-sync`` over it is what agcore adds on LangGraph;
* ``prebuilt`` / ``prebuilt-ckpt``: LangGraph's own ``create_react_agent`` on ``langchain-openai``'s
  ``ChatOpenAI`` pointed at the fake server, without and with an ``InMemorySaver`` (like for like with
  ``graph-nockpt`` and ``graph``).

``langchain-openai`` is a benchmark-only peer: when it is not importable here, the script re-runs
itself in ``bench/.venv-peers`` (built by ``agent_loop.py`` from ``bench/peers/requirements.txt``);
if that venv cannot be built, the prebuilt sides are left out and the report says so.

    python bench/langgraph_loop.py            # 7 rounds x 30 turns per side
    python bench/langgraph_loop.py --quick    # a smoke run

A report, not a test: it exits 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from bench.agent_loop import (  # noqa: E402
    CLOSERS,
    FUNCTIONS,
    MODEL,
    QUESTION,
    TOOL_CALLS,
    WEATHER_TOOL,
    Side,
    Turn,
    agcore_bundle,
    agcore_reused,
    bare_loop,
    close_clients,
    get_weather,
    measure_cpu,
    openai_client,
    peers_python,
)
from bench.llm_overhead import start_server  # noqa: E402


def graph_session_side(bundle: Any, saver: Any = None, durability: Any = None) -> Turn:
    """``GraphSession`` with ``saver`` (an ``InMemorySaver`` by default) and ``durability`` (None: the
    session's default for the saver): a new thread (session) per turn, on one graph."""
    from langgraph.checkpoint.memory import InMemorySaver

    from agcore.agent import BasicAgent
    from agcore.integrations.langgraph import AgentGraph

    graph = AgentGraph(BasicAgent(name="bench"), bundle, saver if saver is not None else InMemorySaver())

    async def turn() -> str:
        session = graph.session(durability=durability)
        result = await session.submit_turn(QUESTION)
        if result.error is not None:
            raise result.error
        return result.text

    return turn


def agcore_stored_side(bundle: Any, path: Path) -> Turn:
    """``AgentSession`` saving to a ``SqliteSessionStore`` file as it runs (agcore's own durable
    sessions, the like-for-like peer of ``graph-sqlite``): a new session per turn."""
    from agcore.agent import AgentSession, BasicAgent
    from agcore.memory import SqliteSessionStore

    store = SqliteSessionStore(path)
    CLOSERS.append(store.aclose)
    agent = BasicAgent(name="bench")

    async def turn() -> str:
        session = AgentSession(agent, None, bundle, store=store)
        result = await session.submit_turn(QUESTION)
        if result.error is not None:
            raise result.error
        return result.text

    return turn


async def sqlite_saver(path: Path) -> Any:
    """An ``AsyncSqliteSaver`` on a file, closed with the other clients at the end."""
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    connection = await aiosqlite.connect(str(path))
    CLOSERS.append(connection.close)
    saver = AsyncSqliteSaver(connection)
    await saver.setup()
    return saver


def graph_bare_side(bundle: Any) -> Turn:
    """The compiled graph without a checkpointer, invoked directly."""
    from agcore.agent import BasicAgent
    from agcore.integrations.langgraph import compile_agent

    graph = compile_agent(BasicAgent(name="bench"), bundle)
    # agcore_events=False: nobody reads the custom stream, so no events and no streamed model calls.
    config: Any = {"configurable": {"thread_id": "bench", "agcore_events": False}}

    async def turn() -> str:
        state = await graph.ainvoke({"input": QUESTION}, config)
        if state.get("error"):
            raise RuntimeError(state["error"])
        return str(state["messages"][-1].text)

    return turn


def _append(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    return [*(left or []), *(right or [])]

class _FloorState(TypedDict, total=False):
    """``langgraph_floor_side``'s state: the channels agcore's graph writes in a tool-call turn."""

    session_id: str
    messages: Annotated[list[Any], _append]
    input: Any
    session_state: dict[str, Any]
    phase: dict[str, Any] | None
    stop: str | None


def langgraph_floor_side() -> Turn:
    """LangGraph's own cost for a turn of this shape, with no agent in it: a graph of the same three
    steps (model, tools, model), the same state channels and updates of the same kinds, whose nodes do
    no work, on an ``InMemorySaver``, a new thread per turn. What any agent on LangGraph pays on top of
    its own work; ``graph`` minus this is what agcore's nodes cost beyond its loop. (The tools node
    calls ``get_weather``, as every side does, and the answer names the city, so the turn checks.)"""
    from langgraph.graph import END
    from langgraph.types import Command

    async def model(state: _FloorState) -> Command[str]:
        if state.get("input") is not None:
            return Command(goto="tools", update={
                "session_id": "s", "input": None, "session_state": {"turn": 1}, "phase": {"cursor": 0},
                "messages": [{"role": "user"}, {"role": "assistant"}]})
        answer = {"role": "assistant", "text": f"Paris: {state['messages'][-1]}"}
        update = {"session_state": {"turn": None}, "stop": "done", "messages": [answer]}
        return Command(goto=END, update=update)

    async def tools(state: _FloorState) -> Command[str]:
        result = await get_weather("Paris")
        return Command(goto="model", update={"session_state": {"turn": 2}, "phase": None,
                                             "messages": [result]})

    run = _model_and_tools(_FloorState, model, tools)

    async def turn() -> str:
        state = await run({"input": QUESTION})
        return str(state["messages"][-1]["text"])

    return turn


def loop_then_floor_side(bundle: Any) -> Turn:
    """``agcore``'s turn, then ``langgraph-floor``'s (each on its own session and graph)."""
    loop, floor = agcore_reused(bundle), langgraph_floor_side()

    async def turn() -> str:
        await floor()
        TOOL_CALLS["Paris"] -= 1  # the check before timing counts one call a turn: the loop's
        return await loop()

    return turn


def _model_and_tools(state: Any, model: Any, tools: Any) -> Callable[[Any], Awaitable[Any]]:
    """A graph of a ``model`` node and a ``tools`` node routing by ``Command``, with an
    ``InMemorySaver``; run with an input on a new thread each time, ``durability="sync"``."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph

    builder: Any = StateGraph(state)
    builder.add_node("model", model, destinations=("tools", END))
    builder.add_node("tools", tools, destinations=("model",))
    builder.add_edge(START, "model")
    graph = builder.compile(checkpointer=InMemorySaver())
    counter = iter(range(10**9))

    async def run(inputs: Any) -> Any:
        config: Any = {"configurable": {"thread_id": f"t{next(counter)}"}}
        return await graph.ainvoke(inputs, config, durability="sync")

    return run


class _SdkState(TypedDict, total=False):
    """``langgraph_sdk_side``'s state: the chat messages, as the SDK takes them."""

    messages: Annotated[list[dict[str, Any]], _append]


def langgraph_sdk_side(client: Any) -> Turn:
    """A tool-calling agent written on LangGraph and the bare SDK (see the module docstring)."""
    from langgraph.graph import END
    from langgraph.types import Command

    async def model(state: _SdkState) -> Command[str]:
        reply = await client.chat.completions.create(model=MODEL, messages=state["messages"],
                                                     tools=[WEATHER_TOOL])
        message = reply.choices[0].message
        if not message.tool_calls:
            return Command(goto=END, update={"messages": [{"role": "assistant", "content": message.content}]})
        calls = [{"id": c.id, "type": "function",
                  "function": {"name": c.function.name, "arguments": c.function.arguments}}
                 for c in message.tool_calls if c.type == "function"]
        return Command(goto="tools", update={"messages": [
            {"role": "assistant", "content": message.content, "tool_calls": calls}]})

    async def tools(state: _SdkState) -> Command[str]:
        results = []
        for call in state["messages"][-1]["tool_calls"]:
            function = call["function"]
            content = await FUNCTIONS[function["name"]](**json.loads(function["arguments"]))
            results.append({"role": "tool", "tool_call_id": call["id"], "content": content})
        return Command(goto="model", update={"messages": results})

    run = _model_and_tools(_SdkState, model, tools)

    async def turn() -> str:
        state = await run({"messages": [{"role": "user", "content": QUESTION}]})
        return str(state["messages"][-1]["content"])

    return turn


def prebuilt_side(base_url: str, *, checkpointed: bool) -> Callable[[], Turn]:
    """LangGraph's own ``create_react_agent`` on ``ChatOpenAI``."""
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import create_react_agent

    # LangGraph 1.x points to langchain.agents.create_agent (another package) instead; the prebuilt
    # agent is still LangGraph's own, and what its users run.
    warnings.filterwarnings("ignore", message="create_react_agent has been moved")

    model = ChatOpenAI(model=MODEL, base_url=base_url, api_key="x", max_retries=0)  # type: ignore[arg-type]
    agent = create_react_agent(model, [get_weather], checkpointer=InMemorySaver() if checkpointed else None)
    counter = iter(range(10**9))

    async def turn() -> str:
        config: Any = {"configurable": {"thread_id": f"t{next(counter)}"}}
        state = await agent.ainvoke({"messages": [("user", QUESTION)]}, config)
        return str(state["messages"][-1].content)

    return lambda: turn


async def build_sides(base_url: str, workdir: Path) -> tuple[list[Side], list[str]]:
    bare_client = openai_client(base_url)
    bundle = agcore_bundle(base_url)
    notes: list[str] = []
    sides = [
        Side("bare", "openai SDK loop, non-streaming", lambda: bare_loop(bare_client)),
        Side("agcore", "AgentSession.submit_turn (agcore's loop)", lambda: agcore_reused(bundle)),
        Side("agcore-sqlite", "AgentSession(store=SqliteSessionStore file).submit_turn",
             lambda: agcore_stored_side(bundle, workdir / "sessions.sqlite")),
        Side("graph", "GraphSession.submit_turn, InMemorySaver (its default durability: exit)",
             lambda: graph_session_side(bundle)),
        Side("graph-sync", "the same with durability=sync (a checkpoint per step)",
             lambda: graph_session_side(bundle, durability="sync")),
        Side("graph-nockpt", "compile_agent(...).ainvoke, no checkpointer", lambda: graph_bare_side(bundle)),
        Side("langgraph-floor", "the same 3 steps on LangGraph, nodes doing no work, InMemorySaver",
             langgraph_floor_side),
        Side("loop+floor", "agcore's turn and langgraph-floor's, back to back",
             lambda: loop_then_floor_side(bundle)),
        Side("langgraph-sdk", "an agent on LangGraph + the bare openai SDK, InMemorySaver, sync",
             lambda: langgraph_sdk_side(bare_client)),
    ]
    try:
        on_disk = graph_session_side(bundle, await sqlite_saver(workdir / "checkpoints.sqlite"))
        sides.insert(5, Side("graph-sqlite", "GraphSession.submit_turn, AsyncSqliteSaver (file), sync",
                             lambda: on_disk))
    except ImportError as exc:
        notes.append(f"the SQLite checkpointer left out ({exc})")
    try:
        sides.append(Side("prebuilt", "create_react_agent(ChatOpenAI), no checkpointer",
                          prebuilt_side(base_url, checkpointed=False)))
        sides.append(Side("prebuilt-ckpt", "create_react_agent(ChatOpenAI), InMemorySaver",
                          prebuilt_side(base_url, checkpointed=True)))
    except ImportError as exc:
        notes.append(f"LangGraph's prebuilt agent left out ({exc}): langchain-openai is not installed here")
    return sides, notes


def table(sides: list[Side], args: argparse.Namespace) -> str:
    by_name = {s.name: s for s in sides}
    bare = statistics.median(by_name["bare"].cpu_us)
    loop = statistics.median(by_name["agcore"].cpu_us)
    lines = [
        "CPU per tool-call turn (2 LLM calls + 1 tool call), client side only, non-streaming",
        f"   {args.rounds} rounds x {args.turns} turns per side, sides interleaved in random order, "
        f"{args.warmup} warm-up turns, median over rounds; Python {sys.version.split()[0]}",
        "",
        f"{'side':<14} {'CPU µs/turn':>12} {'vs bare':>8} {'vs agcore':>10} {'best round':>11} "
        f"{'wall µs/turn':>13}  how",
    ]
    lines.append("-" * (len(lines[-1]) + 50))
    best_loop = min(by_name["agcore"].cpu_us)
    for side in sides:
        cpu = statistics.median(side.cpu_us)
        lines.append(f"{side.name:<14} {cpu:>12.0f} {cpu / bare:>8.2f} {cpu / loop:>10.2f} "
                     f"{min(side.cpu_us) / best_loop:>11.2f} "
                     f"{statistics.median(side.wall_us):>13.0f}  {side.how}")
    lines += ["", "best round: the side's cheapest round over agcore's cheapest, vs agcore (on a shared "
              "machine other work only adds CPU time, so the minimum is the steadier figure)"]
    if "graph-sync" in by_name and "langgraph-sdk" in by_name:
        graph, sdk = by_name["graph-sync"].cpu_us, by_name["langgraph-sdk"].cpu_us
        median = statistics.median(graph) / statistics.median(sdk)
        lines.append(f"graph-sync / langgraph-sdk: {median:.2f} median, "
                     f"{min(graph) / min(sdk):.2f} best round (what agcore adds over an agent written on "
                     "LangGraph and the bare SDK)")
    if "graph-sync" in by_name and "loop+floor" in by_name:
        graph, both = by_name["graph-sync"].cpu_us, by_name["loop+floor"].cpu_us
        ratio = statistics.median(graph) / statistics.median(both)
        lines.append(f"graph-sync / loop+floor: {ratio:.2f} median, "
                     f"{min(graph) / min(both):.2f} best round (agcore's glue on LangGraph, beyond running "
                     "its loop's and LangGraph's code in turn)")
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> str:
    server, port = start_server()
    out: list[str] = []
    workdir = Path(tempfile.mkdtemp(prefix="agcore-langgraph-bench-"))
    try:
        sides, notes = await build_sides(f"http://127.0.0.1:{port}/v1", workdir)
        out += [f"NOTE: {note}" for note in notes]
        from importlib.metadata import version

        packages = ["openai", "langgraph", "langchain-core"]
        if any(s.name.startswith("prebuilt") for s in sides):
            packages.append("langchain-openai")
        out.append("versions: " + ", ".join(f"{p} {version(p)}" for p in packages))
        measured = await measure_cpu(sides, args.rounds, args.turns, args.warmup)
        out += ["", table(measured, args)]
    finally:
        await close_clients()
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 2 rounds x 5 turns")
    parser.add_argument("--here", action="store_true", help="measure in this interpreter, whatever it has")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.turns, args.warmup = 2, 5, 2
    print("agcore on LangGraph: CPU per turn (a report, not a test: exits 0 whatever the numbers)",
          flush=True)
    try:
        import langchain_openai  # noqa: F401
    except ImportError:
        if not args.here:
            python, how = peers_python()
            if python is not None:
                print(f"running in bench/.venv-peers ({how}), where langchain-openai is installed",
                      flush=True)
                forwarded = list(argv if argv is not None else sys.argv[1:])
                done = subprocess.run([str(python), str(Path(__file__).resolve()), "--here", *forwarded])
                if done.returncode != 0:
                    print(f"NOTE: the run in bench/.venv-peers failed (exit {done.returncode})")
                return 0
            print(f"NOTE: bench/.venv-peers could not be set up ({how}); "
                  "measuring without the prebuilt agent")
    print(anyio.run(run, args, backend="asyncio"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
