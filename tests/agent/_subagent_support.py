"""Scripted parents and children for the sub-agent tests: one model shared by every session of a
bundle, answering each agent from its own script (picked by the request's system prompt), so
children running concurrently never take each other's replies."""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from agcore.agent import AgentMessage, AssistantReply, ToolResults
from agcore.llm import LLMRequest
from agcore.testing import ScriptedProvider

Entry = Any  # an AssistantMessage, a str, an LLMError to raise, or a callable(request)


class Scripts:
    """Per-agent scripts behind one ``ScriptedProvider`` (``.model``); an agent is known by its
    system prompt."""

    def __init__(self, scripts: Mapping[str, Iterable[Entry]], **model_options: Any) -> None:
        self.scripts = {system: deque(entries) for system, entries in scripts.items()}
        self.requests: list[LLMRequest] = []
        self.model = ScriptedProvider([self._answer] * 200, **model_options)

    async def _answer(self, request: LLMRequest) -> Any:
        self.requests.append(request)
        # A typed turn appends its instructions to the system prompt: its first paragraph names the agent.
        system = request.system or ""
        script = self.scripts.get(system) or self.scripts[system.split("\n\n")[0]]
        if not script:
            raise AssertionError(f"the script of {request.system!r} ran out")
        entry = script.popleft()
        if isinstance(entry, BaseException):
            raise entry
        if callable(entry):
            entry = entry(request)
            if inspect.isawaitable(entry):
                entry = await entry
        return entry

    def left(self, system: str) -> int:
        return len(self.scripts[system])


def assert_every_call_answered(messages: list[AgentMessage]) -> None:
    """The history invariant: every tool call has exactly one result, in the message right after."""
    for i, message in enumerate(messages):
        if isinstance(message, AssistantReply) and message.message.tool_calls:
            wanted = [c.id for c in message.message.tool_calls]
            later = [m for m in messages[i + 1 :] if isinstance(m, ToolResults)]
            assert later, f"calls {wanted} have no results"
            got = [r.tool_use_id for r in later[0].results]
            assert sorted(got) == sorted(wanted), (wanted, got)
