"""A sub-agent's work on the screen: its tool calls indented under the parent's call that ran it,
deeper for a sub-agent's own sub-agents, from the events of a real run."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from agcore.agent import AgentBuilder, AgentEventAdapter, AgentSession, BasicAgent, SubagentEvent, agent_tool
from agcore.cli._render import Renderer
from agcore.testing import tool_call_reply
from agcore.tools import tool
from tests.agent._subagent_support import Scripts

pytestmark = pytest.mark.anyio


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"facts about {topic}"


async def test_child_calls_are_indented_under_the_parent_call() -> None:
    scripts = Scripts({
        "You lead.": [tool_call_reply("researcher", {"task": "otters"}), "Otters hold hands."],
        "You research.": [tool_call_reply("lookup", {"topic": "otters"}),
                          tool_call_reply("deep", {"task": "dig"}), "they hold hands"],
        "You dig.": [tool_call_reply("lookup", {"topic": "paws"}), "dug"],
    })
    researcher = BasicAgent("researcher", "You research.", tools=["lookup", "deep"])
    deep = BasicAgent("deep", "You dig.", tools=["lookup"])
    bundle = AgentBuilder().provider(scripts.model).tools(
        lookup, agent_tool(researcher), agent_tool(deep)
    ).build()
    session = AgentSession(BasicAgent("lead", "You lead.", tools=["researcher"]), "p", bundle)
    out = io.StringIO()
    renderer = Renderer(Console(file=out, width=200, color_system=None))
    events = []
    async for event in session.stream_turn("otters?"):
        events.append(event)
        renderer.event(event)
    renderer.end_text()

    assert out.getvalue().splitlines() == [
        '▸ researcher(task="otters")',
        "  ↳ researcher",
        '    ▸ lookup(topic="otters")',
        "      ✓ facts about otters",
        '    ▸ deep(task="dig")',
        "      ↳ deep",
        '        ▸ lookup(topic="paws")',
        "          ✓ facts about paws",
        "        · deep answered (2 model calls)",
        "  ↳ researcher",
        "      ✓ dug",
        "    · researcher answered (3 model calls)",
        "  ✓ they hold hands",
        "Otters hold hands.",
    ]
    # The nested events are plain data: they survive a trip through JSON.
    nested = [e for e in events if isinstance(e, SubagentEvent)]
    assert [AgentEventAdapter.validate_json(e.model_dump_json()) for e in nested] == nested
