"""CountBot on the command line: one message, or a conversation when none is given.

    python -m examples.countbot "What is in this picture?" --image photo.png --home ~/.countbot

``--base-url`` is an OpenAI-compatible server (llama-server, Ollama's /v1, vLLM); ``--model`` names
what it serves, or any agcore model spec, or ``scripted:FILE`` to run offline on a script. The same
``--home`` and ``--session`` continue a conversation, and what the bot remembered stays there.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio
import anyio.to_thread

from agcore.agent import PERSONAS, AgentSession, LimitExceeded, SubagentEvent, TextDelta, ToolCallRequested
from agcore.llm import ImageFileError, LLMError, LLMProvider, UserMessage, create_provider
from agcore.testing import load_script
from examples.countbot.bot import Settings, countbot


def choose_model(spec: str | None, base_url: str | None) -> LLMProvider:
    """The model, or one line saying what is wrong with ``--model`` (a missing script, a bad spec)."""
    try:
        return model_for(spec, base_url)
    except (ValueError, LLMError) as error:  # ScriptFileError is a ValueError
        sys.exit(f"countbot: --model {spec}: {error}")


def model_for(spec: str | None, base_url: str | None) -> LLMProvider:
    if spec and spec.startswith("scripted:"):
        print(f"The model is SCRIPTED ({spec.removeprefix('scripted:')}).")
        return load_script(spec.removeprefix("scripted:"))
    if base_url:
        url = base_url.rstrip("/") if base_url.rstrip("/").endswith("/v1") else base_url.rstrip("/") + "/v1"
        return create_provider(f"openai-compatible:{spec or 'local'}", base_url=url)
    if spec:
        return create_provider(spec)
    sys.exit("Say which model: --base-url URL for a local server, or --model SPEC.")


def user_message(text: str, images: list[Path]) -> UserMessage:
    """The message with its images read inline; ``ImageFileError`` says which file is wrong and why."""
    return UserMessage.with_images(text, images)


async def chat(session: AgentSession, text: str, images: list[Path]) -> bool:
    """One message, the answer streamed chunk by chunk as seed 004's process_message yields it."""
    async for event in session.stream_turn(user_message(text, images)):
        if isinstance(event, TextDelta):
            print(event.text, end="", flush=True)
        elif isinstance(event, ToolCallRequested):  # seed 004's "tool started" notification
            print(f"\n[{event.call.name}]", flush=True)
        elif isinstance(event, SubagentEvent) and isinstance(event.event, ToolCallRequested):
            print(f"\n[{event.agent}: {event.event.call.name}]", flush=True)
    result = session.last_result
    assert result is not None  # the stream has ended, so the turn has a result
    print()
    if result.error is not None:  # agcore's messages say what went wrong and what to do
        print(f"countbot: {stop_message(result.error)}", file=sys.stderr)
    return result.ok


def stop_message(error: Exception) -> str:
    """What the user reads when a message failed: the flag to change, not the config field behind it."""
    if isinstance(error, LimitExceeded) and error.limit in ("max_turns", "max_tool_turns"):
        calls = "model calls" if error.limit == "max_turns" else "rounds of tool calls"
        return (f"stopped after {error.value} {calls}, this message's limit; raise --max-iterations, "
                "or ask for a smaller step.")
    return str(error)


async def main(args: argparse.Namespace) -> int:
    settings = Settings(args.home, persona=args.persona, name=args.name,
                        user_name=args.user_name, max_iterations=args.max_iterations,
                        context_window=args.context_window)
    user_message(args.message or "", args.image)  # a wrong image path is said before anything starts
    async with countbot(choose_model(args.model, args.base_url), settings, args.session) as session:
        if args.message:
            return 0 if await chat(session, args.message, args.image) else 1
        images, failed = args.image, False  # the images go with the conversation's first message
        while True:  # a conversation: an empty line or end of input ends it
            line = await anyio.to_thread.run_sync(lambda: sys.stdin.readline().strip())
            if not line:
                return 1 if failed else 0
            failed = not await chat(session, line, images) or failed
            images = []


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m examples.countbot",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("message", nargs="?", help="what to say; without it, read messages line by line")
    parser.add_argument("--image", type=Path, action="append", default=[], help="attach an image, repeatable")
    parser.add_argument("--home", type=lambda text: Path(text).expanduser(), default="~/.countbot",
                        help="where the workspace, memory, sessions and logs live")
    parser.add_argument("--session", default="main", help="the conversation to continue or start")
    parser.add_argument("--base-url", help="an OpenAI-compatible server, e.g. llama-server")
    parser.add_argument("--model", help="the served model's name, an agcore spec, or scripted:FILE")
    parser.add_argument("--persona", default="friendly", choices=sorted(PERSONAS),
                        help="the bot's personality (default friendly)")
    parser.add_argument("--name", default="CountBot", help="the bot's name")
    parser.add_argument("--user-name", help="how to address the user")
    parser.add_argument("--max-iterations", type=int, default=25,
                        help="tool calls per message (25); the model gets two more calls to answer")
    parser.add_argument("--context-window", type=int, default=8192, help="the model's window, in tokens")
    return parser.parse_args(argv)


if __name__ == "__main__":
    try:
        sys.exit(anyio.run(main, parse_args()))
    except ImageFileError as error:
        sys.exit(f"countbot: {error}")
