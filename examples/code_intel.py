"""A coding agent's code intelligence: the repo map in its system prompt, ``search_code`` as a tool,
and both kept fresh in the background while the agent works.

    python examples/code_intel.py [WORKSPACE] [--question "..."]

WORKSPACE defaults to agcore's own source. The model comes from ``AGCORE_MODEL`` (for a local
llama-server: ``openai:MODEL`` with ``OPENAI_BASE_URL=http://127.0.0.1:8080/v1``); without it a
scripted model calls ``search_code`` once and answers with the first hit, and says so.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import anyio

from agcore.agent import DEFAULT_TOOL_RULES, Agent, AgentBuilder, AgentSession, SystemPrompt
from agcore.code import REPO_MAP_TITLE, CodeIndex, RepoMap, search_code_tool
from agcore.llm import AssistantMessage, LLMProvider, LLMRequest, ToolResultBlock, create_provider
from agcore.testing import ScriptedProvider, text_reply, tool_call_reply


class CodingAgent(Agent):
    """The system prompt is read before every model call: it always shows the current map."""

    name = "coder"

    def __init__(self, repo_map: RepoMap) -> None:
        self.repo_map = repo_map

    @property
    def system_prompt(self) -> str:
        return (
            SystemPrompt("You are a careful coding agent. Find code with search_code before reading files.")
            .tool_rules(*DEFAULT_TOOL_RULES)
            .extra(self.repo_map.text, title=REPO_MAP_TITLE)
            .render()
        )


def scripted_model(question: str) -> LLMProvider:
    def answer(request: LLMRequest) -> AssistantMessage:
        results = [block for message in request.messages for block in getattr(message, "content", [])
                   if isinstance(block, ToolResultBlock)]
        first = results[-1].text.split("\n", 1)[0] if results else "nothing"
        return text_reply(f"The best match is {first.removeprefix('1. ')}.")

    print("No AGCORE_MODEL: the model is SCRIPTED (one search_code call, then an answer).\n")
    return ScriptedProvider([tool_call_reply("search_code", {"query": question, "limit": 3}), answer])


async def main(workspace: Path, question: str) -> None:
    repo_map = RepoMap(workspace, max_tokens=512)
    async with CodeIndex(workspace) as index, anyio.create_task_group() as tg:
        await tg.start(repo_map.watch)  # first map ready; re-rendered when files change
        await tg.start(index.watch)     # first index ready; changed files re-indexed every 2 s
        spec = os.environ.get("AGCORE_MODEL")
        bundle = (
            AgentBuilder()
            .provider(create_provider(spec) if spec else scripted_model(question))
            .tools([search_code_tool(index)])
            .build()
        )
        print("\n".join(repo_map.text.splitlines()[:8]) + "\n...\n")
        session = AgentSession(CodingAgent(repo_map), "code-intel", bundle)
        result = await session.submit_turn(question)
        print(result.text)
        await session.close()
        tg.cancel_scope.cancel()  # stops both watchers


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workspace", nargs="?", type=Path,
                        default=Path(__file__).resolve().parents[1] / "agcore")
    parser.add_argument("--question", default="Where are the retrievers fused by reciprocal rank?")
    args = parser.parse_args()
    anyio.run(main, args.workspace, args.question)
