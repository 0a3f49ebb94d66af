"""A process running an agcore agent on LangGraph with a SQLite checkpoint, for the kill/resume tests.

    run_graph.py crash   DB COUNTS   run a turn; its slow tool blocks until the process is killed
    run_graph.py recover DB COUNTS   finish that turn from the checkpoint (GraphSession.recover)
    run_graph.py pending DB COUNTS   what pending() says of that turn, then recover() and ask again
    run_graph.py ask     DB COUNTS   run a turn on the bare graph up to its confirmation interrupt
    run_graph.py approve DB COUNTS   answer that confirmation (Command(resume=True)) and finish

Every model call and every tool run appends a line to COUNTS, so the test counts what ran where.
The last line printed is a JSON summary.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Command

from agcore.agent import AgentBuilder, BasicAgent
from agcore.integrations.langgraph import GraphSession, compile_agent
from agcore.llm import Message, ToolDefinition, UserMessage
from agcore.testing import FunctionProvider, tool_calls_reply
from agcore.tools import tool

MODE, DB, COUNTS = sys.argv[1], sys.argv[2], Path(sys.argv[3])
THREAD = "thread-1"


def count(line: str) -> None:
    with COUNTS.open("a") as file:
        file.write(line + "\n")
        file.flush()


@tool
async def fast(n: int) -> str:
    """A quick tool."""
    count(f"fast {n}")
    return f"fast {n} done"


@tool
async def slow() -> str:
    """A tool that hangs in the first process (killed there) and finishes in the next."""
    count("slow started")
    if MODE == "crash":
        await asyncio.sleep(3600)
    count("slow finished")
    return "slow done"


@tool(requires_confirmation=True)
async def deploy(target: str) -> str:
    """A tool that needs the user's approval."""
    count(f"deploy {target}")
    return f"deployed {target}"


def model(messages: list[Message], tools: list[ToolDefinition]) -> Any:
    count("model")
    if isinstance(messages[-1], UserMessage) and isinstance(messages[-1].content, str):
        if MODE in ("ask", "approve"):
            return tool_calls_reply([("fast", {"n": 1}), ("deploy", {"target": "prod"})])
        return tool_calls_reply([("fast", {"n": 1}), ("fast", {"n": 2}), ("slow", {})])
    return "all done"


def summary(messages: list[Any], **extra: Any) -> str:
    return json.dumps({"kinds": [m.kind for m in messages], **extra})


async def main() -> None:
    bundle = AgentBuilder().provider(FunctionProvider(model)).tools(fast, slow, deploy).build()
    agent = BasicAgent(name="durable", system_prompt="be brief")
    async with AsyncSqliteSaver.from_conn_string(DB) as saver:
        if MODE in ("crash", "recover", "pending"):
            session = GraphSession(agent, THREAD, bundle, checkpointer=saver)
            if MODE == "crash":
                print("STARTED", flush=True)
                await session.submit_turn("run the tools")
                raise SystemExit("the slow tool should have hung until the process was killed")
            before = await session.pending()
            result = await session.recover()
            print(summary(await session.history(), stop=result.stop, text=result.text, before=before,
                          after=await session.pending()), flush=True)
            return
        graph = compile_agent(agent, bundle, checkpointer=saver)
        config: Any = {"configurable": {"thread_id": THREAD}}
        if MODE == "ask":
            out = await graph.ainvoke({"input": "deploy it"}, config, durability="sync")
            waiting = [i.value for i in out.get("__interrupt__", [])]
            print(summary(out["messages"], interrupts=waiting), flush=True)
            return
        out = await graph.ainvoke(Command(resume=True), config, durability="sync")
        print(summary(out["messages"], stop=out.get("stop")), flush=True)


asyncio.run(main())
