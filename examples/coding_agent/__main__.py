"""The coding agent on the command line: one task, or a conversation when no task is given.

    python -m examples.coding_agent "Fix the failing test" --base-url http://127.0.0.1:8080 -w REPO

``--base-url`` is a llama.cpp ``llama-server`` (or any OpenAI-compatible server); ``--model`` names
what it serves, or any agcore model spec (``anthropic:claude-…``), or ``scripted:FILE`` to run
offline on a script (``agcore.testing.load_script``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio
import anyio.to_thread

from agcore.agent import AgentSession, ToolCallRequested, ToolResultReady
from agcore.llm import LLMError, LLMProvider, create_provider
from agcore.testing import load_script
from examples.coding_agent.agent import Settings, coding_session


def choose_model(spec: str | None, base_url: str | None) -> LLMProvider:
    """The model, or one line saying what is wrong with ``--model`` (a missing script, a bad spec)."""
    try:
        return model_for(spec, base_url)
    except (ValueError, LLMError) as error:  # ScriptFileError is a ValueError
        sys.exit(f"coding_agent: --model {spec}: {error}")


def model_for(spec: str | None, base_url: str | None) -> LLMProvider:
    if spec and spec.startswith("scripted:"):
        print(f"The model is SCRIPTED ({spec.removeprefix('scripted:')}).")
        return load_script(spec.removeprefix("scripted:"))
    if base_url:  # llama-server answers on /v1; people often give its bare address
        url = base_url.rstrip("/") if base_url.rstrip("/").endswith("/v1") else base_url.rstrip("/") + "/v1"
        return create_provider(f"openai-compatible:{spec or 'local'}", base_url=url)
    if spec:
        return create_provider(spec)
    sys.exit("Say which model: --base-url http://127.0.0.1:8080 for llama-server, or --model SPEC.")


async def run_task(session: AgentSession, task: str) -> bool:
    """One user request, showing each tool call and its outcome as it happens (seed 002 §7.2)."""
    async for event in session.stream_turn(task):
        if isinstance(event, ToolCallRequested):
            print(f"  -> {event.call.name} {event.call.input}")
        elif isinstance(event, ToolResultReady) and event.status != "ok":
            print(f"     {event.status}: {event.result.text[:160]}")
    result = session.last_result
    assert result is not None  # the stream has ended, so the turn has a result
    print(f"\n{result.text}\n[{result.stop}: {result.turns} model calls]")
    if result.error is not None:  # agcore's messages say what went wrong and what to do
        print(f"coding_agent: {result.error}", file=sys.stderr)
    return result.ok


async def main(args: argparse.Namespace) -> int:
    settings = Settings(Path(args.workspace), yes=args.yes, max_turns=args.max_turns,
                        history=args.history, intent=args.intent,
                        tool_calls=args.tool_calls or ("on" if args.base_url else "auto"))
    async with coding_session(choose_model(args.model, args.base_url), settings) as session:
        if args.task:
            return 0 if await run_task(session, args.task) else 1
        failed = False  # a conversation goes on after a failed request; the exit status says so
        while True:  # a conversation: an empty line or end of input ends it
            line = await anyio.to_thread.run_sync(lambda: sys.stdin.readline().strip())
            if not line:
                return 1 if failed else 0
            failed = not await run_task(session, line) or failed


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m examples.coding_agent",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("task", nargs="?", help="what to do; without it, read requests line by line")
    parser.add_argument("-w", "--workspace", default=".", help="the repository to work in (default: .)")
    parser.add_argument("--base-url", help="llama-server or another OpenAI-compatible server")
    parser.add_argument("--model", help="the served model's name, an agcore spec, or scripted:FILE")
    parser.add_argument("-y", "--yes", action="store_true", help="allow every write and command unasked")
    parser.add_argument("--max-turns", type=int, default=20, help="model calls per request (default 20)")
    parser.add_argument("--history", type=int, default=30, help="messages sent to the model (default 30)")
    parser.add_argument("--tool-calls", choices=("on", "off", "auto"),
                        help="tool calls written as text: on (the default with --base-url: small local "
                             "models), off (native calls), auto (the default otherwise: switch if the model "
                             "writes them as text)")
    parser.add_argument("--intent", choices=("keywords", "model"), default="keywords",
                        help="how a request is classified before the work starts (default keywords)")
    args = parser.parse_args(argv)
    if not Path(args.workspace).is_dir():  # a typo must not become a new, empty workspace
        sys.exit(f"coding_agent: --workspace {args.workspace}: no such directory; create it or point "
                 "at an existing one.")
    return args


if __name__ == "__main__":
    sys.exit(anyio.run(main, parse_args()))
