"""How a streamed turn reads on the screen: reasoning apart from the answer, tool lines on their own."""

from __future__ import annotations

import io

from rich.console import Console

from agcore.agent import AgentEvent, TextDelta, ThinkingDelta, ToolCallRequested
from agcore.cli._render import Renderer
from agcore.llm import ToolUseBlock


def render(*events: AgentEvent) -> str:
    out = io.StringIO()
    renderer = Renderer(Console(file=out, width=200, color_system=None))
    for event in events:
        renderer.event(event)
    renderer.end_text()
    return out.getvalue()


def test_thinking_is_shown_on_its_own_line_before_the_answer() -> None:
    screen = render(
        ThinkingDelta(thinking="The user wants "), ThinkingDelta(thinking="a greeting."),
        TextDelta(text="Hello"), TextDelta(text=", world!"),
    )
    assert screen == "thinking: The user wants a greeting.\nHello, world!\n"


def test_a_tool_call_ends_the_text_line_and_reasoning_restarts_after_it() -> None:
    call = ToolUseBlock(id="c1", name="read_file", input={"path": "a.txt"})
    screen = render(
        TextDelta(text="Let me look."), ToolCallRequested(call=call, mode="server"),
        ThinkingDelta(thinking="It is short."), TextDelta(text="Done."),
    )
    assert screen.splitlines() == [
        "Let me look.", '▸ read_file(path="a.txt")', "thinking: It is short.", "Done.",
    ]
