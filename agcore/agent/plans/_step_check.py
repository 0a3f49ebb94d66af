"""Whether a plan step's turn did the step: ``StepVerifier`` and the rule-based ``DefaultStepVerifier``.

A turn that ends normally is not proof that anything happened. Small models answer a step by repeating
it, by announcing what they would do, by writing a tool call as text that nothing runs, or by writing
"Tool result: ..." themselves. ``DefaultTaskAgent`` asks its verifier about every step whose turn ended
``done``; a step the verifier rejects is ``failed`` (``StepError.type`` ``"StepNotVerified"``, which is
recoverable, so ``failure_policy="retry"`` runs it again and tells the model why), so that
``plan.succeeded`` means every step was done.

``DefaultStepVerifier`` rejects a turn when

* the step's ``tool_hints`` name tools the session offers, yet no tool call of the turn ran without an
  error (``require_tool_calls``; a step without hints, or whose hints name no offered tool, needs none);
* its answer writes a tool's result itself: a line starting with a result label ("Tool result",
  "Observation:", ``<tool_response>``...) whose text no tool of the turn returned, or a tool call
  written as JSON text that was never run (``reject_invented_results``);
* no tool ran without an error and its answer repeats the step's description or its prompt
  (``reject_echo``), or is empty (``reject_empty``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import json_repair

from agcore.agent._messages import AssistantReply, ToolResults

if TYPE_CHECKING:
    from agcore.agent._turn import TurnResult
    from agcore.agent.plans._plan import Step

__all__ = ["DEFAULT_RESULT_LABELS", "NOT_VERIFIED", "DefaultStepVerifier", "StepVerifier"]

#: ``StepError.type`` of a step whose turn ended normally but did not do the step.
NOT_VERIFIED = "StepNotVerified"

#: Line openings by which a model writes a tool's result itself (compared case-insensitively).
DEFAULT_RESULT_LABELS = (
    "tool result", "tool output", "tool response", "tool_result", "function result", "function output",
    "observation:", "<tool_result", "<tool_response", "<function_result", "<result>", "[tool_result",
    "[tool result", "[tool output", "工具结果", "工具返回",
)

_CALL_NAME_KEYS = ("tool", "name", "tool_name", "function")
_CALL_ARG_KEYS = ("arguments", "args", "input", "parameters")
_MAX_OBJECTS = 20  # JSON objects of an answer looked at for a written-out call
_MAX_CALL_CHARS = 8000
_LINE_START = re.compile(r"^[\s>*_`#-]*")
#: Characters of the answer and of the step the similarity compares: an echo shows in its first
#: lines, and difflib's ratio is quadratic (a 300 kB step took minutes: past a Temporal workflow
#: task's 2 s deadline, and a hang in-process).
_ECHO_WINDOW = 500
_STEP_PREFIX = re.compile(r"^(?:now carry out )?step \S+(?: of \d+)?\s*[:.)-]\s*")


@runtime_checkable
class StepVerifier(Protocol):
    """Decides whether a step's turn, which ended normally, did the step."""

    async def verify(
        self, step: Step, turn: TurnResult, *, prompt: str, tools: Collection[str]
    ) -> str | None:
        """Why ``turn`` does not count as doing ``step`` (None when it does). ``prompt`` is the turn's
        input, ``tools`` the names of the tools the session offered. The reason is shown to the user
        and, when the step is retried, to the model."""
        ...


@dataclass(frozen=True, slots=True)
class DefaultStepVerifier:
    """The default ``StepVerifier``: the rules of this module, each one switchable. Give
    ``DefaultTaskAgent(verifier=None)`` to accept every turn that ends normally, as before."""

    require_tool_calls: bool = True
    reject_invented_results: bool = True
    reject_echo: bool = True
    reject_empty: bool = True
    result_labels: tuple[str, ...] = DEFAULT_RESULT_LABELS
    #: How alike (0-1, difflib's ratio) an answer and the step's description may be before it is an echo.
    echo_similarity: float = 0.9

    async def verify(
        self, step: Step, turn: TurnResult, *, prompt: str, tools: Collection[str]
    ) -> str | None:
        """The first rule ``turn`` breaks, as a sentence; None when it breaks none."""
        return self.check(step, turn, prompt=prompt, tools=tools)

    def check(self, step: Step, turn: TurnResult, *, prompt: str, tools: Collection[str]) -> str | None:
        """``verify`` without the ``await`` (the rules do no I/O)."""
        answer = _final_answer(turn)
        calls, results = _tool_activity(turn)
        ran = [name for name, ok in calls if ok]
        shown = _quote(answer)
        if self.reject_invented_results:
            label = self._invented_result(answer, results)
            if label is not None:
                return (f"the answer writes a tool result itself ({label!r}) instead of calling the tool; "
                        f"the answer was {shown}")
            unrun = _written_call(answer, tools)
            if unrun is not None:
                return (f"the answer is a call to {unrun!r} written as text, which was never run; "
                        f"the answer was {shown}")
        expected = [hint for hint in step.tool_hints if hint in tools]
        if self.require_tool_calls and expected and not ran:
            hinted = ", ".join(expected)
            if calls:
                return (f"every tool call of the turn failed ({len(calls)}), though the step needs its "
                        f"tools ({hinted}); the answer was {shown}")
            return (f"the turn made no tool calls, though the step needs its tools ({hinted}); "
                    f"the answer was {shown}")
        if self.reject_empty and not answer.strip() and not ran:
            return "the turn made no tool calls and its answer is empty"
        if self.reject_echo and not ran and self._echoes(answer, step.description, prompt):
            return f"the answer only repeats the step instead of doing it; the answer was {shown}"
        return None

    def _invented_result(self, answer: str, results: list[str]) -> str | None:
        labels = tuple(label.lower() for label in self.result_labels)
        real = [text for text in (_norm(r) for r in results) if text]
        lines = answer.splitlines()
        for i, line in enumerate(lines):
            bare = _LINE_START.sub("", line).lower()
            label = next((lb for lb in labels if bare.startswith(lb)), None)
            if label is None:
                continue
            # What follows the label: the rest of the line, else the next non-empty line.
            rest = bare[len(label):].lstrip(" :>]-*_`")
            rest = re.sub(r"^\([^)]*\)\s*:?\s*", "", rest)  # "Tool result (read_file, ok):"
            if not rest.strip():
                rest = next((x for x in lines[i + 1:] if x.strip()), "")
            claimed = _norm(rest)
            # A result is quoted when the label's text is part of one, or begins with one.
            if not claimed or not any(claimed[:80] in r or claimed.startswith(r[:80]) for r in real):
                return line.strip()[:60]
        return None

    def _echoes(self, answer: str, description: str, prompt: str) -> bool:
        text = _norm(answer)
        if not text:
            return False
        text = _STEP_PREFIX.sub("", text)
        wanted = _norm(description)
        if text == wanted or (len(text) >= 20 and text in _norm(prompt)):
            return True
        if len(text) > 2 * len(wanted) + 20:
            return False
        head, wanted_head = text[:_ECHO_WINDOW], wanted[:_ECHO_WINDOW]
        return SequenceMatcher(None, head, wanted_head, autojunk=False).ratio() >= self.echo_similarity


def _final_answer(turn: TurnResult) -> str:
    for message in reversed(turn.messages):
        if isinstance(message, AssistantReply):
            return message.message.text
    return turn.text


def _tool_activity(turn: TurnResult) -> tuple[list[tuple[str, bool]], list[str]]:
    """The turn's tool calls (name, ran without error) and the texts of their results."""
    names: dict[str, str] = {}
    outcome: dict[str, bool] = {}
    texts: list[str] = []
    for message in turn.messages:
        if isinstance(message, AssistantReply):
            for call in message.message.tool_calls:
                names[call.id] = call.name
                outcome.setdefault(call.id, False)
        elif isinstance(message, ToolResults):
            for result in message.results:
                outcome[result.tool_use_id] = not result.is_error
                texts.append(result.text)
    return [(names.get(call_id, "?"), ok) for call_id, ok in outcome.items()], texts


def _written_call(answer: str, tools: Collection[str]) -> str | None:
    """The offered tool a JSON object in ``answer`` calls (``{"tool": "read_file", "arguments": ...}``)."""
    if "{" not in answer:
        return None
    start = answer.find("{")
    for _ in range(_MAX_OBJECTS):
        if start == -1:
            break
        value = _json_object(answer[start:start + _MAX_CALL_CHARS])
        if isinstance(value, Mapping):
            name = next((value[k] for k in _CALL_NAME_KEYS if isinstance(value.get(k), str)), None)
            if name in tools and any(k in value for k in _CALL_ARG_KEYS):
                return str(name)
        start = answer.find("{", start + 1)
    return None


def _json_object(text: str) -> object:
    try:
        return json.JSONDecoder().raw_decode(text)[0]
    except ValueError:
        pass
    try:
        return json_repair.loads(text)
    except Exception:  # json-repair may raise on odd input; then it is no call
        return None


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .!。")


def _quote(answer: str) -> str:
    text = " ".join(answer.split())
    if not text:
        return "empty"
    return repr(text if len(text) <= 120 else text[:117] + "...")
