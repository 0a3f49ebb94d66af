"""Reading the plan a model wrote: ``PlanParser`` and the tolerant ``JsonPlanParser``.

Models rarely answer with exactly the JSON asked for. ``JsonPlanParser`` reads, in this order, each
fenced code block (```json or untagged), the whole answer, and every JSON-looking ``{...}``/``[...]``
in the prose, mending what json-repair can (trailing commas, single quotes, comments, missing commas,
an answer cut off mid-way), and takes the first that is a plan. A plan may be an object with ``steps``
(or ``tasks``, ``plan``, ``subtasks``, ``todo``...), a bare list of steps, or ``{"step1": ..., ...}``;
a step may be a plain string; its description may be under ``step``, ``task``, ``title``, ``name``,
``action``...; ``dependencies``/``deps``/``after`` mean ``depends_on``, and "step 2" in them means "2".
Keys the model adds (``rationale``, ``expected_output``...) and any statuses it invents are dropped.

What it cannot read raises ``PlanParseError`` whose message says what was wrong and shows the shape
wanted; ``TaskAgent`` hands that message back to the model when it asks again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import json_repair

from agcore.agent._errors import PlanParseError
from agcore.agent._plan import Plan

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
        was wrong, which the agent shows the model when it asks again."""


_FENCE = re.compile(r"(```|~~~)[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:\n[ \t]*\1|\Z)", re.DOTALL)
_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_JSON_TAGS = {"", "json", "jsonc", "json5", "javascript", "js"}
_STEP_LISTS = ("steps", "tasks", "subtasks", "plan", "todo", "todos", "actions", "items")
_GOAL_KEYS = ("goal", "objective")
_DESCRIPTION_KEYS = (
    "description", "step", "task", "title", "name", "action", "instruction", "instructions",
    "content", "text", "summary", "desc", "details",
)
_ID_KEYS = ("id", "step_id", "number", "step_number", "index", "step")
_DEPENDS_KEYS = ("depends_on", "dependencies", "depends", "deps", "after", "requires", "needs",
                 "prerequisites")
_TOOL_KEYS = ("tool_hints", "tools", "tool", "suggested_tools")
_NUMBERED_KEY = re.compile(r"^(?:step|task)?[ _-]?(\d+)$", re.IGNORECASE)
_STEP_REF = re.compile(r"^\s*(?:step|task)?\s*#?\s*(\d+)\s*$", re.IGNORECASE)


class JsonPlanParser:
    """The default ``PlanParser``: JSON as models write it. It reads fenced blocks, the whole answer,
    or JSON inside prose, mends what json-repair can (trailing commas, quotes, a cut-off answer), and
    accepts a bare list of steps, steps as plain strings and the usual key spellings (``task``,
    ``title``, ``dependencies``...). What it cannot read raises ``PlanParseError`` showing the shape
    wanted.

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
            value = _load(candidate)
            if value is None:
                continue
            found_json = True
            try:
                data = _plan_data(value)
                plan = Plan.from_dict(data, goal=goal)
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


def _candidates(text: str) -> list[str]:
    """Texts that may hold the plan, the likeliest first."""
    out: list[str] = []
    fences = list(_FENCE.finditer(text))
    for match in fences:
        if match.group(2).lower() in _JSON_TAGS and match.group(3).strip():
            out.append(match.group(3))
    stripped = text.strip()
    if stripped and stripped[0] in "{[":
        out.append(stripped)
    out.extend(_embedded(text))
    return list(dict.fromkeys(out))


def _embedded(text: str) -> list[str]:
    """Each outermost ``{...}``/``[...]`` in ``text``; an unclosed one runs to the end (cut off)."""
    spans: list[str] = []
    i = 0
    while i < len(text):
        if text[i] not in "{[":
            i += 1
            continue
        end = _closing(text, i)
        spans.append(text[i:end])
        i = end if end > i + 1 else i + 1
    return spans


def _closing(text: str, start: int) -> int:
    depth = 0
    quote: str | None = None
    escaped = False
    for j in range(start, len(text)):
        ch = text[j]
        if quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch == '"':
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


def _load(candidate: str) -> Any:
    """The JSON value of ``candidate``, repaired if need be; None when there is none."""
    if '"' not in candidate and "'" not in candidate:
        return None  # a plan holds strings: "[1]" or "{name}" in prose is not one
    try:
        return json.loads(candidate)
    except ValueError:
        pass
    try:
        value = json_repair.loads(candidate)
    except Exception:  # json-repair may raise on input it does not expect; that is "unreadable" here
        return None
    if value == "" or not isinstance(value, dict | list):
        return None
    return value


def _plan_data(value: Any) -> dict[str, Any]:
    """``value`` rewritten into ``Plan.from_dict``'s shape (strict checks are left to it)."""
    goal: str | None = None
    steps: Any = None
    if isinstance(value, list):
        steps = value
    elif isinstance(value, Mapping):
        goal = next((value[k] for k in _GOAL_KEYS if isinstance(value.get(k), str)), None)
        inner = value
        for _ in range(3):  # {"plan": {"steps": [...]}} and the like
            key = next((k for k in _STEP_LISTS if isinstance(inner.get(k), list | Mapping)), None)
            if key is None:
                break
            found = inner[key]
            if isinstance(found, list):
                steps = found
                break
            if goal is None:
                goal = next((found[k] for k in _GOAL_KEYS if isinstance(found.get(k), str)), None)
            inner = found
        if steps is None:
            steps = _numbered(inner)
        if steps is None:
            keys = ", ".join(repr(k) for k in list(value)[:8]) or "none"
            raise PlanParseError(f"the JSON object has no list of steps under 'steps' (its keys: {keys})")
    else:
        raise PlanParseError(f"the JSON is a {type(value).__name__}, not a plan")
    data: dict[str, Any] = {"steps": [_step(s) for s in steps]}
    if goal:
        data["goal"] = goal
    _resolve_refs(data["steps"])
    return data


def _numbered(value: Mapping[str, Any]) -> list[Any] | None:
    """``{"step1": "...", "step2": {...}}`` as a list, in number order; None if not that shape."""
    if not value:
        return None
    numbered: list[tuple[int, Any]] = []
    for key, item in value.items():
        match = _NUMBERED_KEY.match(str(key))
        if match is None:
            return None
        if isinstance(item, Mapping):
            item = {"id": match.group(1), **item}
        elif isinstance(item, str):
            item = {"id": match.group(1), "description": item}
        numbered.append((int(match.group(1)), item))
    return [item for _, item in sorted(numbered, key=lambda pair: pair[0])]


def _step(raw: Any) -> Any:
    if isinstance(raw, str):
        return raw.strip()
    if not isinstance(raw, Mapping):
        return raw  # Plan.from_dict names the step and what it got
    step: dict[str, Any] = {}
    texts = {k: raw[k].strip() for k in _DESCRIPTION_KEYS if isinstance(raw.get(k), str) and raw[k].strip()}
    # {"step": "2", "task": "..."}: a number under "step" is the step's id, not what to do.
    number = _STEP_REF.match(texts["step"]) if "step" in texts else None
    if number is not None:
        del texts["step"]
        step["id"] = number.group(1)
    description = next(iter(texts.values()), None)
    if description is not None:
        step["description"] = description
    for key in _ID_KEYS:
        found = raw.get(key)
        if "id" in step and key == "step":
            break
        if isinstance(found, int) and not isinstance(found, bool):
            step["id"] = str(found)
            break
        if isinstance(found, str) and found.strip() and key != "step":
            step["id"] = found.strip()
            break
    depends = next((raw[k] for k in _DEPENDS_KEYS if raw.get(k) is not None), None)
    if depends is not None:
        step["depends_on"] = depends
    tools = next((raw[k] for k in _TOOL_KEYS if raw.get(k) is not None), None)
    if tools is not None:
        step["tool_hints"] = tools
    agent = raw.get("agent")  # the sub-agent the step is delegated to (DefaultTaskAgent.subagents)
    if isinstance(agent, str) and agent.strip():
        step["agent"] = agent.strip()
    return step


def _resolve_refs(steps: list[Any]) -> None:
    """``depends_on`` entries like "step 2" or 2 become the id they mean, when that id exists."""
    ids = {str(s.get("id", i + 1)) if isinstance(s, Mapping) else str(i + 1) for i, s in enumerate(steps)}
    for step in steps:
        if not isinstance(step, dict) or "depends_on" not in step:
            continue
        refs = step["depends_on"]
        refs = refs if isinstance(refs, list) else [refs]
        resolved: list[Any] = []
        for ref in refs:
            text = str(ref) if isinstance(ref, int | str) and not isinstance(ref, bool) else None
            if text is not None and text not in ids and (match := _STEP_REF.match(text)) is not None:
                text = match.group(1)
            resolved.append(text if text is not None else ref)
        step["depends_on"] = resolved
