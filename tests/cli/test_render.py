"""How a streamed turn reads on the screen: reasoning apart from the answer, tool lines on their own."""

from __future__ import annotations

import io

import pytest
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


def test_the_switch_to_text_mode_is_said_on_its_own_line() -> None:
    from agcore.agent import TextModeSwitched

    screen = render(TextDelta(text="Let me look."), TextModeSwitched(provider="openai", model="qwen-coder"))
    assert screen.splitlines() == [
        "Let me look.", "qwen-coder writes its tool calls as text: text-mode tool calls from now on",
    ]


def test_a_command_that_failed_gets_no_green_tick() -> None:
    from agcore.llm import ToolResultBlock

    out = io.StringIO()
    renderer = Renderer(Console(file=out, width=200, color_system=None))
    failing = "$ ls nothere\nexit code: 2\nls: no"
    renderer.tool_result(ToolResultBlock(tool_use_id="c1", content=failing), "ok")
    renderer.tool_result(ToolResultBlock(tool_use_id="c2", content="$ ls\nexit code: 0\na.txt"), "ok")
    failed, worked = out.getvalue().splitlines()
    assert failed.strip().startswith("✗ $ ls nothere → exit code: 2")
    assert worked.strip().startswith("✓ $ ls → exit code: 0")


def test_the_cli_logs_one_line_per_warning_without_a_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import logging

    from agcore.cli._execution import _log_to_stderr

    logger = logging.getLogger("agcore")
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # pytest's own capture handlers
    monkeypatch.delenv("AGCORE_DEBUG", raising=False)
    _log_to_stderr()
    _log_to_stderr()  # once only
    assert len(logger.handlers) == 1
    try:
        raise FileNotFoundError("gone")
    except FileNotFoundError as exc:
        logging.getLogger("agcore.tools").warning("tool %r raised %s", "write_file", "FileNotFoundError",
                                                  exc_info=exc)
    err = capsys.readouterr().err
    assert err == "warning: tool 'write_file' raised FileNotFoundError\n"  # no traceback
