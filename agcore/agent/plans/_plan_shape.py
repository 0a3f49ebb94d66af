"""From the JSON value a model wrote to ``Plan.from_dict``'s data, and what had to change on the way.

``plan_data`` finds the steps (a list under ``steps``/``tasks``/``plan``..., a bare list, an object keyed
by ``step1``... or by step names), reads each step's fields under the spellings models use, and then
mends what can be mended, saying so in warnings: a step cut off by the answer's end is dropped, lines of
code or file contents spread over several items are joined back to the step that introduces them,
sub-steps are flattened, and ``depends_on`` entries that name no other step (a package name, "", a
number that is no id, the step itself) are dropped. What cannot be mended is a ``PlanParseError``
saying why: no steps, the same steps repeated over and over (a model caught in a loop), steps nested
in a deep self-repeating tree, or (for JSON found inside prose) brackets that hold no steps at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agcore.agent._errors import PlanParseError
from agcore.agent.plans._plan_code import code_line, join_code_lines
from agcore.agent.plans._plan_steps import (
    DEPENDS_KEYS,
    DESCRIPTION_KEYS,
    NUMBERED_KEY,
    STEP_REF,
    TOOL_KEYS,
    RawStep,
    read_steps,
)

__all__ = ["PlanData", "locate_steps", "plan_data"]

_STEP_LISTS = ("steps", "tasks", "subtasks", "plan", "todo", "todos", "actions", "items",
               "步骤", "任务", "计划")
_CALL_ARGUMENTS = ("arguments", "parameters", "input", "args")
_GOAL_KEYS = ("goal", "objective", "目标")
_STEPISH_KEYS = frozenset((*DESCRIPTION_KEYS, *DEPENDS_KEYS, *TOOL_KEYS))
_WORD = re.compile(r"[^\W\d_]{2,}")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_SPLIT_REFS = re.compile(r"\s*(?:,|;|\band\b|&|、|和)\s*", re.IGNORECASE)

#: Beyond these, a plan is a model caught in a loop, not a plan.
_MAX_SAME_STEP = 8
_MAX_BLOCK_REPEATS = 5
_MAX_NESTING = 3


@dataclass(slots=True)
class PlanData:
    """``Plan.from_dict``'s data for the value read, and the warnings saying what was changed."""

    data: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def plan_data(value: Any, *, in_prose: bool = False, warnings: list[str] | None = None) -> PlanData:
    """``value`` (parsed JSON) as plan data. ``in_prose``: the value was found inside prose or code,
    or had to be mended, so it must look like a plan (steps with descriptions) to count as one;
    ``warnings``: what was changed already (a step cut off by the answer's end, dropped)."""
    goal, container, _ = locate_steps(value)
    warnings = list(warnings or [])
    items: list[tuple[str | None, Any]] = (
        list(container.items()) if isinstance(container, Mapping) else [(None, v) for v in container])
    if in_prose and isinstance(value, list) and not _looks_like_steps(value):
        raise PlanParseError("the only bracketed text in the answer is code or prose (e.g. "
                             f"{_shorten(str(value))!r}), not a list of steps with descriptions")
    steps = read_steps(items)
    steps = _flatten(steps, warnings)
    steps = _join_code(steps, warnings)
    _check_not_looping(steps)
    _resolve_refs(steps, warnings)
    data: dict[str, Any] = {"steps": [s.fields() for s in steps]}
    if goal:
        data["goal"] = goal
    return PlanData(data, warnings)


def locate_steps(value: Any) -> tuple[str | None, list[Any] | Mapping[str, Any], int]:
    """The goal, the steps' container (a list or an object keyed by step) and how many brackets
    enclose a step (1 for a bare list); ``PlanParseError`` when ``value`` holds no steps."""
    if isinstance(value, list):
        return None, value, 1
    if not isinstance(value, Mapping):
        raise PlanParseError(f"the JSON is a {type(value).__name__}, not a plan")
    goal = _goal(value)
    inner: Mapping[str, Any] = value
    depth = 1
    call = _call_arguments(value)
    if call is not None:  # {"tool": "make_plan", "arguments": {"steps": [...]}}: a plan written as a call
        inner, goal, depth = call, goal or _goal(call), 2
    for _ in range(3):  # {"plan": {"steps": [...]}} and the like
        key = next((k for k in _STEP_LISTS if isinstance(inner.get(k), list | Mapping)), None)
        if key is None:
            break
        found = inner[key]
        depth += 1
        if isinstance(found, list):
            return goal, found, depth
        goal = goal or _goal(found)
        if not any(k in found for k in _STEP_LISTS):
            keyed = {k: v for k, v in found.items() if k not in _GOAL_KEYS}
            # {"plan": {"summary": "..."}} describes a plan; it does not list its steps
            if keyed and not any(k in _STEPISH_KEYS and isinstance(v, str) for k, v in keyed.items()):
                return goal, keyed, depth
            break
        inner = found
    steps = {k: v for k, v in inner.items() if k not in _GOAL_KEYS}
    if steps and not any(k in _STEP_LISTS for k in steps) and (
            all(NUMBERED_KEY.match(str(k)) for k in steps)
            or all(isinstance(v, Mapping) and _STEPISH_KEYS.intersection(v) for v in steps.values())):
        return goal, steps, depth
    keys = ", ".join(repr(k) for k in list(value)[:8]) or "none"
    raise PlanParseError(f"the JSON object has no list of steps under 'steps' (its keys: {keys})")


def _call_arguments(value: Mapping[str, Any]) -> Mapping[str, Any] | None:
    if any(k in value for k in _STEP_LISTS):
        return None
    for key in _CALL_ARGUMENTS:
        found = value.get(key)
        if isinstance(found, str):
            try:
                found = json.loads(found)
            except ValueError:
                continue
        if isinstance(found, Mapping) and any(k in found for k in _STEP_LISTS):
            return found
    return None


def _goal(value: Mapping[str, Any]) -> str | None:
    return next((value[k] for k in _GOAL_KEYS if isinstance(value.get(k), str)), None)


def _looks_like_steps(items: list[Any]) -> bool:
    """Whether every item reads as a step: a phrase of words, or an object with a step's fields."""
    def phrase(text: Any) -> bool:
        if not isinstance(text, str) or code_line(text):
            return False
        return len(_WORD.findall(text)) >= 2 or len(_CJK.findall(text)) >= 2

    def step(item: Any) -> bool:
        if isinstance(item, Mapping):
            return any(phrase(item.get(k)) for k in DESCRIPTION_KEYS) or bool(
                {*DEPENDS_KEYS, *TOOL_KEYS}.intersection(item))
        return phrase(item)

    return bool(items) and all(step(item) for item in items)


def _flatten(steps: list[RawStep], warnings: list[str], level: int = 1,
             ancestors: tuple[str, ...] = ()) -> list[RawStep]:
    """Sub-steps become steps ``<parent>.1``, ``<parent>.2``... in place of their parent; refs to the
    parent mean its last sub-step. A deep or self-repeating tree is a loop, not a plan."""
    out: list[RawStep] = []
    for step in steps:
        if not step.children:
            out.append(step)
            continue
        text = _norm(step.own or step.description or "")
        if text and text in ancestors:
            raise PlanParseError(f"step {step.id} ({_shorten(step.description or '')!r}) contains itself "
                                 "as a sub-step (the model looped); write each step once, without sub-steps")
        if level >= _MAX_NESTING:
            raise PlanParseError(f"the steps nest more than {_MAX_NESTING} levels deep (step {step.id}); "
                                 "write one flat list of steps")
        children = read_steps(step.children, prefix=f"{step.id}.")
        for child in children:
            if child.description and step.description:
                child.own, child.description = child.description, f"{step.description}: {child.description}"
            if not child.id.startswith(f"{step.id}."):
                child.aliases.add(child.id)
                child.id = f"{step.id}.{child.id}"
        children = _flatten(children, warnings, level + 1, (*ancestors, text))
        if not children:
            out.append(step)
            continue
        if step.depends_on is not None:
            children[0].depends_on = [*step.depends_on, *(children[0].depends_on or [])]
        for child in children:  # the parent's tool hints hold for sub-steps that give none
            if child.tool_hints is None:
                child.tool_hints = step.tool_hints
        children[-1].aliases |= {step.id, *step.aliases}
        warnings.append(f"step {step.id} ({_shorten(step.description or '')!r}) was split into its "
                        f"{len(children)} sub-steps")
        out.extend(children)
    return out


def _introduces_code(text: str) -> bool:
    """Whether a step reads as "Create main.py with:" (or ends in a full-width colon), introducing the
    lines after it. It must say something: an item of punctuation such as ": :" introduces nothing."""
    said = text.rstrip()
    return said.endswith((":", "\uff1a")) and (_WORD.search(said) or _CJK.search(said)) is not None


def _join_code(steps: list[RawStep], warnings: list[str]) -> list[RawStep]:
    """Items that are lines of code or file contents join the step before them (or, at the start, the
    step after them) instead of being steps of their own."""
    def is_code(step: RawStep) -> bool:
        # depends_on does not count: models chain every item to the one before, code lines too
        return (step.other is None and step.description is not None and not step.children
                and step.tool_hints is None and code_line(step.description))

    out: list[RawStep] = []
    i = 0
    while i < len(steps):
        if not is_code(steps[i]) or not (steps[i].description or "").strip():
            out.append(steps[i])
            i += 1
            continue
        end = i
        while end < len(steps) and is_code(steps[end]):
            end += 1
        run = steps[i:end]
        lines = [s.description or "" for s in run]
        before = out[-1] if out else None
        introduced = before is not None and _introduces_code(before.description or "")
        if len(run) == 1 and not introduced:
            out.append(run[0])  # one command-like item on its own may well be a step
            i = end
            continue
        ids = [s.id for s in run]
        if before is not None:
            before.description = f"{before.description}\n{join_code_lines(lines)}"
            target = before
        elif end < len(steps):
            target = steps[end]
            target.description = f"{join_code_lines(lines)}\n{target.description}"
        else:
            raise PlanParseError("the list holds lines of code, not steps")
        for s in run:
            target.aliases |= {s.id, *s.aliases}
        where = "before" if target is before else "after"
        warnings.append(f"items {ids[0]}..{ids[-1]} are lines of code or file contents, not steps; they "
                        f"were joined to the step {where} them ({_shorten(_first_line(target))!r})")
        i = end
    kept = []
    for step in out:
        if step.other is None and step.description is not None and not step.description.strip():
            warnings.append(f"step {step.id} is empty; it was dropped")
        else:
            kept.append(step)
    return kept


def _check_not_looping(steps: list[RawStep]) -> None:
    texts = [_norm(s.description or "") for s in steps]
    for size in (1, 2, 3):
        for start in range(len(texts) - size * _MAX_BLOCK_REPEATS + 1):
            block = texts[start:start + size]
            repeats = 1
            while texts[start + size * repeats:start + size * (repeats + 1)] == block:
                repeats += 1
            if repeats >= _MAX_BLOCK_REPEATS:
                shown = " / ".join(_shorten(t, 40) for t in block)
                what = "step" if size == 1 else "steps"
                raise PlanParseError(f"the plan repeats the {what} {shown!r} {repeats} times in a row (the "
                                     "model looped); write each step once")
    counts: dict[str, int] = {}
    for text in texts:
        counts[text] = counts.get(text, 0) + 1
    worst = max(counts.items(), key=lambda pair: pair[1], default=("", 0))
    if worst[0] and worst[1] >= _MAX_SAME_STEP:
        raise PlanParseError(f"the plan repeats the step {_shorten(worst[0])!r} {worst[1]} times (the model "
                             "looped); write each step once")


def _resolve_refs(steps: list[RawStep], warnings: list[str]) -> None:
    """``depends_on`` entries become the ids they mean ("step 2" -> "2", a title key -> its id, a
    merged item -> the step it joined); entries naming no other step are dropped with a warning.
    Steps the model gave no ids are numbered 1, 2... again when items were merged or dropped."""
    ids = {s.id for s in steps if s.other is None}
    aliases = {alias: s.id for s in steps for alias in s.aliases if alias not in ids}
    for s in steps:
        if s.description and s.description not in ids:  # small models name a step by what it says
            aliases.setdefault(s.description, s.id)
        number = NUMBERED_KEY.match(s.id)
        if number is not None and number.group(1) not in ids:  # 2 for a step whose id is "step2"
            aliases.setdefault(number.group(1), s.id)
    new = {s.id: s.id for s in steps}
    if not any(s.raw_id for s in steps):
        new = {s.id: str(i) for i, s in enumerate(steps, 1)}
    shown_ids = [new[s.id] for s in steps if s.other is None]
    for step in steps:
        if step.depends_on is None:
            continue
        resolved: list[str] = []
        where = f"step {new[step.id]}" + (f" ({_shorten(step.description)!r})" if step.description else "")
        for ref in step.depends_on:
            found = _resolve(ref, ids, aliases)
            if not found:
                shown = ref if isinstance(ref, str | int | float) and not isinstance(ref, bool) else str(ref)
                warnings.append(f"{where}: depends_on {shown!r} is not the id of a step (the ids are "
                                f"{shown_ids}); it was dropped")
            for dep in found:
                if dep == step.id:
                    warnings.append(f"{where}: depends_on {ref!r} is the step itself; it was dropped")
                elif new[dep] not in resolved:
                    resolved.append(new[dep])
        step.depends_on = resolved
    for step in steps:
        step.id = new[step.id]


def _resolve(ref: Any, ids: set[str], aliases: dict[str, str]) -> list[str]:
    if isinstance(ref, bool) or not isinstance(ref, str | int | float):
        return []
    if isinstance(ref, float):
        if not ref.is_integer():
            return []
        ref = int(ref)
    text = str(ref).strip()
    if not text:
        return []
    if text in ids:
        return [text]
    if text in aliases:
        return [aliases[text]]
    match = STEP_REF.match(text)
    if match is not None and match.group(1) in ids:
        return [match.group(1)]
    if match is not None and match.group(1) in aliases:
        return [aliases[match.group(1)]]
    parts = [p for p in _SPLIT_REFS.split(text) if p]
    if len(parts) > 1:
        found = [_resolve(p, ids, aliases) for p in parts]
        if all(found):
            return [dep for deps in found for dep in deps]
    return []


def _first_line(step: RawStep) -> str:
    return (step.description or "").split("\n", 1)[0]


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .;:,!。")


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
