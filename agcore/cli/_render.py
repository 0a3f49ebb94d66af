"""Showing a turn: the model's text as it streams, one or two lines per tool call, a summary.

Everything is printed as plain lines (no live regions) so the output reads the same in a terminal, a
log file or a pipe; colour comes from rich and goes away with ``NO_COLOR`` or a dumb terminal.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rich.console import Console
from rich.text import Text

from agcore.agent import (
    AgentEvent,
    AskedAgain,
    CheckFinished,
    ChecksFailed,
    CheckStarted,
    ClientToolsRequested,
    Done,
    Failed,
    ProviderSwitched,
    ReviewFailed,
    Steered,
    SubagentEvent,
    TextDelta,
    TextModeSwitched,
    ThinkingDelta,
    ToolCallRequested,
    ToolResultReady,
    ToolResults,
    TurnEnded,
    TurnResult,
    check_report,
    review_requests,
    review_verdict,
)
from agcore.cli._errors import cli_advice
from agcore.llm.types import ToolResultBlock, ToolUseBlock, Usage

__all__ = [
    "Renderer", "count", "format_call", "format_usage", "outcome_words", "shorten", "summarize_result",
]

_ARG_CHARS = 60
_CALL_CHARS = 160
_RESULT_CHARS = 160
_CHECK_TAIL_LINES = 6  # of a failing check's output, shown under it
#: run_command's result: "$ cmd" then "exit code: N"; a non-zero N is a failed command.
_COMMAND_FAILED = re.compile(r"\$ [^\n]*\nexit code: (?!0\b)-?\d+")
#: The workspace's write_file and apply_patch results end with this: the change can be undone.
_UNDO_NOTE = "undo_patch() takes it back."


def shorten(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def format_call(call: ToolUseBlock) -> str:
    """``write_file(path="a.txt", content="hello…")``: a call as one short line."""
    args = ", ".join(f"{k}={shorten(_value(v), _ARG_CHARS)}" for k, v in call.input.items())
    return shorten(f"{call.name}({args})", _CALL_CHARS)


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def summarize_result(text: str) -> str:
    """A tool result on one line: its first line (a command's with its exit status), and how many
    more lines there are."""
    lines = [line for line in text.strip().splitlines() if line.strip()] or ["(no output)"]
    head, rest = lines[0], lines[1:]
    if head.startswith("$ ") and rest:  # run_command: "$ cmd" then "exit code: N"
        head, rest = f"{head} → {rest[0]}", rest[1:]
    more = f" (+{len(rest)} lines)" if rest else ""
    return shorten(head, _RESULT_CHARS) + more


def format_usage(usage: Usage) -> str:
    tokens = f"{usage.input_tokens:,} in / {usage.output_tokens:,} out tokens"
    cached = usage.cache_read_tokens + usage.cache_write_tokens
    return tokens + (f" ({cached:,} cached)" if cached else "")


class Renderer:
    """Prints the events of turns on ``console``."""

    def __init__(self, console: Console, *, follow_up: bool = True, base_url: str | None = None) -> None:
        self.console = console
        # A follow-up turn is possible (chat): the undo hint can be followed. Not in run or plan run.
        self.follow_up = follow_up
        self.base_url = base_url  # --base-url, for the /v1 hint of a 404
        self._mid_line = False
        self._thinking = False  # streaming the model's reasoning (shown dim, before its text)
        self._subagent: str | None = None  # the session of the sub-agent whose events were shown last

    def line(self, text: str | Text, style: str | None = None) -> None:
        """A line of its own (ending the model's text first if it stopped mid-line)."""
        self.end_text()
        self.console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)

    def interrupted(self) -> None:
        """Ctrl-C was pressed: a terminal echoed ``^C`` where the cursor stood, so what is printed
        next starts on a line of its own."""
        if self.console.is_terminal:
            self.console.print()
        self._mid_line = False
        self._thinking = False

    def end_text(self) -> None:
        if self._mid_line:
            self.console.print()
            self._mid_line = False
        self._thinking = False

    def _stream(self, text: str, style: str | None = None) -> None:
        self.console.print(text, end="", style=style, markup=False, highlight=False, soft_wrap=True)
        self._mid_line = not text.endswith("\n")

    def event(self, event: AgentEvent) -> None:
        if isinstance(event, TextDelta):
            if event.text:
                if self._thinking:  # the answer starts on a line of its own, after the reasoning
                    self.end_text()
                self._stream(event.text)
        elif isinstance(event, ThinkingDelta):
            if event.thinking:
                if not self._thinking:
                    self.end_text()
                    self._stream("thinking: ", style="dim")
                    self._thinking = True
                self._stream(event.thinking, style="dim italic")
        elif isinstance(event, ToolCallRequested):
            self._subagent = None
            self.tool_call(event.call, mode=event.mode)
        elif isinstance(event, ToolResultReady):
            self._subagent = None
            self.tool_result(event.result, event.status)
        elif isinstance(event, Steered):
            skipped = f" ({len(event.skipped)} pending call(s) skipped)" if event.skipped else ""
            self.line(f"↪ steered: {shorten(event.text, _RESULT_CHARS)}{skipped}", style="magenta")
        elif isinstance(event, ProviderSwitched):
            self.line(f"model: {event.from_model} → {event.to_model}", style="dim")
        elif isinstance(event, TextModeSwitched):
            self.line(f"{event.model} writes its tool calls as text: text-mode tool calls from now on",
                      style="dim")
        elif isinstance(event, ClientToolsRequested):
            names = ", ".join(c.name for c in event.calls)
            self.line(f"the turn paused for client tools ({names}), which this CLI cannot run",
                      style="yellow")
        elif isinstance(event, CheckStarted):
            self.line(f"⧗ check: {event.command}" + (f" (round {event.round})" if event.round > 1 else ""),
                      style="cyan")
        elif isinstance(event, CheckFinished):
            self.check_finished(event)
        elif isinstance(event, AskedAgain):
            why = event.why or (f"{event.by} wants more" if event.by else "the reply was not an answer")
            self.line(f"↻ asked again: {shorten(why, _RESULT_CHARS)}", style="dim")
        elif isinstance(event, TurnEnded | Done | Failed):
            self.end_text()  # a reply's text ends its line: the next reply's starts on one of its own
        elif isinstance(event, SubagentEvent):
            self.subagent_event(event)

    def subagent_event(self, event: SubagentEvent) -> None:
        """What a sub-agent did, indented under the parent's calls by its depth: a ``↳ agent`` line
        whenever another sub-agent's events start, then its tool calls and results, and how its turn
        ended."""
        base = "    " * (event.depth - 1) + "  "
        if self._subagent != event.session_id:
            self._subagent = event.session_id
            self.line(f"{base}↳ {event.agent}", style="dim")
        indent = base + "  "
        inner = event.event
        if isinstance(inner, ToolCallRequested):
            self.tool_call(inner.call, mode=inner.mode, indent=indent)
        elif isinstance(inner, ToolResultReady):
            self.tool_result(inner.result, inner.status, indent=indent)
        elif isinstance(inner, Failed):
            self.line(f"{indent}✗ {event.agent} stopped: {shorten(inner.error, _RESULT_CHARS)}", style="red")
        elif isinstance(inner, Done):
            self.line(f"{indent}· {event.agent} answered ({count(inner.turns, 'model call')})", style="dim")

    def tool_call(self, call: ToolUseBlock, *, mode: str = "server", indent: str = "") -> None:
        where = "" if mode == "server" else f" [{mode}]"
        self.line(f"{indent}▸ {format_call(call)}{where}", style="cyan")

    def tool_result(self, result: ToolResultBlock, status: str, *, indent: str = "") -> None:
        ok = status == "ok" and not result.is_error
        text = result.text
        undoable = ok and text.rstrip().endswith(_UNDO_NOTE)  # a write or a patch (the workspace's)
        if undoable:
            text = text.rstrip().removesuffix(_UNDO_NOTE)
        failed_command = ok and _COMMAND_FAILED.match(text) is not None
        if failed_command:  # the tool worked; the command it ran did not: not a green tick
            mark, style = "✗", "yellow"
        else:
            mark, style = ("✓", "green") if ok else (f"✗ {status}:", "red")
        self.line(f"{indent}  {mark} {summarize_result(text)}", style=style)
        if undoable and self.follow_up:
            self.line(f"{indent}    ↩ undo: tell the agent to undo it (undo_patch takes back the last write "
                      "or patch, one at a time, while this session runs)", style="dim")

    def check_finished(self, event: CheckFinished) -> None:
        if event.passed:
            self.line(f"  ✓ check passed: {event.command}", style="green")
            return
        self.line(f"  ✗ check failed: {event.command} ({event.status})", style="yellow")
        for line in [x for x in event.output.splitlines() if x.strip()][-_CHECK_TAIL_LINES:]:
            self.line(f"    {shorten(line, _RESULT_CHARS)}", style="dim")

    def summary(self, result: TurnResult) -> None:
        """The closing line of a turn: how it ended, model calls, tokens, cost."""
        self.end_text()
        reviews = review_requests(result)
        calls = count(result.turns, "model call")
        calls += f" (+{count(reviews, 'review call')})" if reviews else ""
        cost = (f"${result.cost_usd:.4f}" if result.cost_usd is not None
                else "cost unknown (no price for this model)")
        ending = _ENDINGS[result.stop]
        style = "green" if result.stop == "done" else "yellow" if result.stop == "cancelled" else "red"
        if result.error is not None and result.stop != "cancelled":
            message = cli_advice(str(result.error), base_url=self.base_url, error=result.error)
            self.console.print(Text(f"{ending}: {message}", style=style), soft_wrap=True)
        verdict = outcome_words(result)
        self.console.print(Text(f"{verdict} · {calls} · {format_usage(result.usage)} · {cost}", style=style),
                           soft_wrap=True)


_ENDINGS = {"done": "✓ done", "cancelled": "⏹ cancelled", "limit": "✗ stopped at a limit",
            "error": "✗ failed", "stopped_by_hook": "■ stopped by a hook",
            "client_tools": "■ paused for client tools"}


def outcome_words(result: TurnResult) -> str:
    """How a turn ended, in the summary's words: ``✓ done · checks passed``, ``✗ failed · check
    'pytest -q' exit 1``, ``✓ done · reviewed`` (no check, but a review found the task done), ``✗
    failed · review: what is missing``, ``✓ done (unchecked)`` (no check ran, no review), each done
    followed by ``· no tool call succeeded`` when none did, or the other endings as they are."""
    error = result.error
    if isinstance(error, ChecksFailed):
        return f"✗ failed · check {error.outcome.command!r} {error.outcome.status}"
    if isinstance(error, ReviewFailed):
        return f"✗ failed · review: {error.missing}"
    if result.stop != "done":
        return _ENDINGS[result.stop]
    report = check_report(result)
    if report is not None and report.passed:
        words = "✓ done · checks passed"
    else:
        words = "✓ done · reviewed" if review_verdict(result) == "done" else "✓ done (unchecked)"
    return words if _a_tool_call_succeeded(result) else f"{words} · no tool call succeeded"


def _a_tool_call_succeeded(result: TurnResult) -> bool:
    """Whether a tool call of the turn returned without an error (a "done" with none is a claim
    about work nothing was seen doing)."""
    return any(not r.is_error for m in result.messages if isinstance(m, ToolResults) for r in m.results)


def count(n: int, noun: str) -> str:
    """``1 model call``, ``2 model calls``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
