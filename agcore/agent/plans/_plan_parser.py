"""Reading the plan a model wrote: ``PlanParser`` and the tolerant ``JsonPlanParser``.

Models rarely answer with exactly the JSON asked for. ``JsonPlanParser`` reads, in this order, each
fenced code block (```json or untagged), the whole answer, and every JSON-looking ``{...}``/``[...]``
in the prose, mending what json-repair can (trailing commas, single quotes, comments, missing commas,
an answer cut off mid-way), and takes the first that is a plan. ``_plan_shape`` turns that JSON into
steps (the spellings models use, steps keyed by name, sub-steps, code spread over items) and says in
``Plan.warnings`` what it had to change: a step cut off by the answer's end dropped, ``depends_on``
entries that name no step dropped.

Prose is not a plan: code in a fence tagged with another language is never read, a bracket right after
a name (``data["key"]``) or after ``name =`` (a TOML or Python assignment) is code, and a list found in
prose counts only if its items read as steps (phrases, or objects with a step's fields).

What it cannot read raises ``PlanParseError`` whose message says what was wrong and shows the shape
wanted; ``TaskAgent`` hands that message back to the model when it asks again.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import json_repair

from agcore.agent._brackets import span_end
from agcore.agent._errors import PlanParseError
from agcore.agent.plans._plan import Plan
from agcore.agent.plans._plan_cut import find_cut
from agcore.agent.plans._plan_shape import PlanData, locate_steps, plan_data
from agcore.agent.plans._plan_steps import step_text

__all__ = ["PLAN_SHAPE", "JsonPlanParser", "PlanParser"]

#: The answer shape the parser's errors (and the default planning prompt) show the model.
PLAN_SHAPE = (
    '{"goal": "<the goal>", "steps": [{"id": "1", "description": "<what to do>", '
    '"tool_hints": ["<tool name>"], "depends_on": []}]}'
)


@runtime_checkable
class PlanParser(Protocol):
    """Turns a model's answer into a ``Plan`` for ``goal``, or raises ``PlanParseError``."""

    async def parse(self, raw: str, goal: str) -> Plan:
        """The plan ``raw`` (a model's answer) describes for ``goal``. Raises ``PlanParseError`` saying what
        was wrong, which the agent shows the model when it asks again. What the parser changed to read
        the answer goes in ``plan.warnings``, which the agent logs."""


_FENCE = re.compile(r"(```|~~~)[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:\n[ \t]*\1|\Z)", re.DOTALL)
_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
#: The longest broken JSON handed to json-repair (about 1 s on the worst input seen, linear on real plans).
_REPAIR_LIMIT = 8_000
_JSON_TAGS = {"", "json", "jsonc", "json5", "javascript", "js"}


@dataclass(frozen=True, slots=True)
class _Candidate:
    """A text that may hold the plan; ``in_prose``: found inside prose, so it must look like steps."""

    text: str
    in_prose: bool


class JsonPlanParser:
    """The default ``PlanParser``: JSON as models write it. It reads fenced blocks, the whole answer,
    or JSON inside prose, mends what json-repair can (trailing commas, quotes, a cut-off answer), and
    accepts a bare list of steps, steps as plain strings, steps keyed by name and the usual key
    spellings (``task``, ``title``, ``dependencies``...). What it changed to read the plan is in
    ``plan.warnings``; what it cannot read raises ``PlanParseError`` showing the shape wanted.

    ``max_steps`` (None: no cap) rejects a plan with more steps, asking for a shorter one.
    """

    def __init__(self, *, max_steps: int | None = None) -> None:
        self.max_steps = max_steps

    async def parse(self, raw: str, goal: str) -> Plan:
        """``parse_text`` (parsing does no I/O; the protocol method is async so a parser may call a model)."""
        return self.parse_text(raw, goal)

    def parse_text(self, raw: str, goal: str) -> Plan:
        """``parse()`` without the ``await`` (parsing never does I/O)."""
        if not raw.strip():
            raise self._error("the answer is empty", raw)
        text = _THINK.sub("", raw)
        problems: list[str] = []
        found_json = False
        for candidate in _candidates(text):
            value, strict = _load(candidate.text)
            if value is None:
                continue
            found_json = True
            try:
                # JSON that had to be mended must look like steps too: json-repair reads "[the x]" as a list.
                read = _read(candidate.text, value, in_prose=candidate.in_prose or not strict)
                plan = Plan.from_dict(read.data, goal=goal)
            except PlanParseError as exc:
                problems.append(exc.message.removeprefix("The plan is not valid: ").removesuffix(
                    ". Fix the plan and load it again."))
                continue
            if self.max_steps is not None and len(plan.steps) > self.max_steps:
                problems.append(f"the plan has {len(plan.steps)} steps, more than the {self.max_steps} "
                                "allowed; merge steps")
                continue
            if not plan.goal:
                plan.goal = goal
            plan.warnings = read.warnings
            return plan
        if not found_json:
            raise self._error("it contains no JSON plan (no JSON object or list was found)", raw)
        # The first candidate is the one the model most likely meant (a fenced block, or the whole text).
        raise self._error(problems[0], raw)

    @staticmethod
    def _error(problem: str, raw: str) -> PlanParseError:
        return PlanParseError(
            f"The model's plan could not be read: {problem}. Answer with only a JSON object of this "
            f"shape: {PLAN_SHAPE}",
            raw=raw, problem=problem,
        )


def _candidates(text: str) -> list[_Candidate]:
    """Texts that may hold the plan, the likeliest first."""
    out: list[_Candidate] = []
    prose = text
    for match in _FENCE.finditer(text):
        body = match.group(3)
        if match.group(2).lower() in _JSON_TAGS:
            if body.strip()[:1] in ("{", "["):
                out.append(_Candidate(body.strip(), in_prose=False))
            else:  # an untagged fence may hold prose or code around the JSON
                out.extend(_Candidate(span, in_prose=True) for span in _embedded(body))
        # Code in another language is not a plan, nor is anything inside it.
        prose = prose.replace(match.group(0), "\n" * match.group(0).count("\n"), 1)
    stripped = text.strip()
    if stripped and stripped[0] in "{[":
        out.append(_Candidate(stripped, in_prose=False))
    out.extend(_Candidate(span, in_prose=True) for span in _embedded(prose))
    seen: set[str] = set()
    unique: list[_Candidate] = []
    for candidate in out:
        if candidate.text not in seen:
            seen.add(candidate.text)
            unique.append(candidate)
    return unique


_ASSIGNMENT = re.compile(r"[ \t]*[\w.\-\[\]\"']+[ \t]*[:=]?=[ \t]*")  # "tools = " before a bracket


def _embedded(text: str) -> list[str]:
    """Each outermost ``{...}``/``[...]`` in ``text``; an unclosed one runs to the end (cut off). A
    bracket right after a name or a closing bracket (``data["key"]``, ``f(x)[0]``) or after
    ``name =`` at the start of a line (an assignment) is code, and a markdown link's ``[text](url)``
    is prose: both are skipped."""
    spans: list[str] = []
    i = 0
    while i < len(text):
        if text[i] not in "{[":
            i += 1
            continue
        end = span_end(text, i) or len(text)
        line_start = text.rfind("\n", 0, i) + 1
        link = text[i] == "[" and text[end:end + 1] == "("  # a markdown link: [text](url)
        before = text[i - 1] if i > 0 else " "
        code = (before.isascii() and (before.isalnum() or before in "_)]")) or (
            i - line_start <= 200 and _ASSIGNMENT.fullmatch(text, line_start, i) is not None)
        if not link and not code:
            spans.append(text[i:end])
        i = end if end > i + 1 else i + 1
    return spans


def _read(text: str, value: Any, *, in_prose: bool) -> PlanData:
    """The plan data of ``value`` (``text`` read as JSON); when ``text`` is cut off inside the steps,
    of ``text`` without the step the cut went through, with a warning saying so."""
    cut = find_cut(text)
    if cut is None:
        return plan_data(value, in_prose=in_prose)
    # json-repair's guess at the cut-off end is not trusted: the text is cut back to whole items.
    _, container, depth = locate_steps(value)
    if cut.depth < depth:  # cut after the steps were closed: they are whole
        kept = cut.close(text) if cut.whole else cut.trim(text, cut.depth)[0]
        whole, _ = _load(kept)
        return plan_data(whole if whole is not None else value, in_prose=in_prose)
    if cut.depth == depth and cut.whole:
        kept, left_out = cut.close(text), ""
    else:
        kept, left_out = cut.trim(text, depth)
    whole, _ = _load(kept)
    done = len(locate_steps(whole)[1]) if whole is not None else 0
    if not left_out:
        warning = (f"the answer was cut off after step {done} (max_tokens?); the plan may be missing its "
                   "last steps")
    else:
        said = _fragment_text(left_out, keyed=not isinstance(container, list))
        what = f"step {done + 1}" + (f" ({said!r})" if said else "")
        warning = f"{what} was cut off by the end of the answer (max_tokens?); it was dropped"
    if whole is None or done == 0:
        raise PlanParseError("the answer was cut off inside its first step (max_tokens?); nothing complete "
                             "is left of the plan")
    return plan_data(whole, in_prose=in_prose, warnings=[warning])


def _fragment_text(fragment: str, *, keyed: bool) -> str:
    """What the partial step ``fragment`` says, as well as it can be read (for the warning)."""
    fragment = fragment[:300]  # enough to name the step; json-repair is slow on long broken text
    try:
        value = json_repair.loads("{" + fragment + "}" if keyed else "[" + fragment + "]")
    except Exception:  # json-repair may raise on input it does not expect; then show nothing
        return ""
    if isinstance(value, dict) and value:
        key, item = list(value.items())[-1]
        text = step_text(item, str(key))
    elif isinstance(value, list) and value:
        text = step_text(value[0], None)
    else:
        return ""
    return text if len(text) <= 60 else text[:57] + "..."


def _load(candidate: str) -> tuple[Any, bool]:
    """The JSON value of ``candidate``, mended if need be (None when there is none), and whether it
    was valid JSON as written. A cut-off candidate is first closed by ``find_cut`` (exact); json-repair
    gets what is still broken, if it is short enough (it takes quadratic time on some broken input)."""
    if '"' not in candidate and "'" not in candidate:
        return None, False  # a plan holds strings: "[1]" or "{name}" in prose is not one
    try:
        return json.loads(candidate), True
    except (ValueError, RecursionError):
        pass
    cut = find_cut(candidate)
    if cut is not None:
        closed = cut.close(candidate) if cut.whole else cut.trim(candidate, cut.depth)[0]
        try:
            return json.loads(closed), False
        except (ValueError, RecursionError):
            pass
    if len(candidate) > _REPAIR_LIMIT:
        return None, False
    try:
        value = json_repair.loads(candidate)
    except Exception:  # json-repair may raise on input it does not expect; that is "unreadable" here
        return None, False
    if value == "" or not isinstance(value, dict | list):
        return None, False
    return value, False
