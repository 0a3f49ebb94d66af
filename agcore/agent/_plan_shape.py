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
from agcore.agent._plan_code import code_line, join_code_lines

__all__ = ["Cut", "PlanData", "plan_data"]

_STEP_LISTS = ("steps", "tasks", "subtasks", "plan", "todo", "todos", "actions", "items",
               "步骤", "任务", "计划")
_SUBSTEP_KEYS = ("substeps", "sub_steps", "subtasks", "children", "steps", "tasks", "子步骤", "子任务")
_CALL_ARGUMENTS = ("arguments", "parameters", "input", "args")
_GOAL_KEYS = ("goal", "objective", "目标")
_DESCRIPTION_KEYS = (
    "description", "step", "task", "title", "name", "action", "instruction", "instructions",
    "content", "text", "summary", "desc", "details", "描述", "内容", "任务", "步骤", "说明",
)
_CODE_KEYS = ("code", "snippet", "file_content", "file_contents", "contents", "content", "代码")
_COMMAND_KEYS = ("command", "cmd", "shell", "命令")
_ID_KEYS = ("id", "step_id", "number", "step_number", "index", "step", "编号", "序号")
_DEPENDS_KEYS = ("depends_on", "dependencies", "depends", "deps", "after", "requires", "needs",
                 "prerequisites", "依赖", "前置")
_TOOL_KEYS = ("tool_hints", "tools", "tool", "suggested_tools", "工具")
_STEPISH_KEYS = frozenset((*_DESCRIPTION_KEYS, *_DEPENDS_KEYS, *_TOOL_KEYS))
_NUMBERED_KEY = re.compile(r"^(?:step|task|步骤|第)?[ _-]?(\d+)(?:步)?$", re.IGNORECASE)
_STEP_REF = re.compile(r"^\s*(?:step|task|步骤|第)?\s*#?\s*(\d+)\s*(?:步)?\s*$", re.IGNORECASE)
_NAME_ID = re.compile(r"^[\w.-]{1,40}$")
_WORD = re.compile(r"[^\W\d_]{2,}")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LIST_NUMBER = re.compile(r"^(?:step\s*)?\d{1,3}\s*[.):]\s+(?=\S)", re.IGNORECASE)  # "1. Read the file"
_SPLIT_REFS = re.compile(r"\s*(?:,|;|\band\b|&|、|和)\s*", re.IGNORECASE)

#: Beyond these, a plan is a model caught in a loop, not a plan.
_MAX_SAME_STEP = 8
_MAX_BLOCK_REPEATS = 5
_MAX_NESTING = 3


@dataclass(frozen=True, slots=True)
class Cut:
    """Where an answer cut off mid-JSON ended: how many brackets were open, and whether inside a
    string that is an object's key or a value."""

    depth: int
    in_string: bool = False
    in_key: bool = False


@dataclass(slots=True)
class PlanData:
    """``Plan.from_dict``'s data for the value read, and the warnings saying what was changed."""

    data: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def plan_data(value: Any, *, in_prose: bool = False, cut: Cut | None = None) -> PlanData:
    """``value`` (parsed JSON) as plan data. ``in_prose``: the value was found inside prose or code,
    so it must look like a plan (steps with descriptions) to count as one; ``cut``: the answer ended
    inside this value, so its last step may be incomplete."""
    goal, container, depth = _locate(value)
    warnings: list[str] = []
    items: list[tuple[str | None, Any]] = (
        list(container.items()) if isinstance(container, Mapping) else [(None, v) for v in container])
    if cut is not None and items:
        if cut.depth > depth or (cut.depth == depth and cut.in_string and not cut.in_key):
            key, last = items.pop()
            where = f"step {len(items) + 1}" + (f" ({_shorten(_any_text(last, key))!r})"
                                                if _any_text(last, key) else "")
            warnings.append(f"{where} was cut off by the end of the answer (max_tokens?); it was dropped")
            if not items:
                raise PlanParseError("the answer was cut off inside its first step (max_tokens?); "
                                     "nothing complete is left of the plan")
        elif cut.depth == depth:
            warnings.append(f"the answer was cut off after step {len(items)} (max_tokens?); the plan may "
                            "be missing its last steps")
    if in_prose and isinstance(value, list) and not _looks_like_steps(value):
        raise PlanParseError("the only bracketed text in the answer is code or prose (e.g. "
                             f"{_shorten(str(value))!r}), not a list of steps with descriptions")
    steps = _read_steps(items)
    steps = _flatten(steps, warnings)
    steps = _join_code(steps, warnings)
    _check_not_looping(steps)
    _resolve_refs(steps, warnings)
    data: dict[str, Any] = {"steps": [s.fields() for s in steps]}
    if goal:
        data["goal"] = goal
    return PlanData(data, warnings)


def _locate(value: Any) -> tuple[str | None, list[Any] | Mapping[str, Any], int]:
    """The goal, the steps' container (a list or an object keyed by step) and how many brackets
    enclose a step's container (1 for a bare list)."""
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
            all(_NUMBERED_KEY.match(str(k)) for k in steps)
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
            return any(phrase(item.get(k)) for k in _DESCRIPTION_KEYS) or bool(
                {*_DEPENDS_KEYS, *_TOOL_KEYS}.intersection(item))
        return phrase(item)

    return bool(items) and all(step(item) for item in items)


@dataclass(slots=True)
class _Step:
    """A step as read, before ``Plan.from_dict`` checks it; ``aliases`` are other names refs may use."""

    id: str
    description: str | None
    raw_id: bool = False  # the model gave the id (else it is the step's position)
    depends_on: list[Any] | None = None
    tool_hints: Any = None
    children: list[tuple[str | None, Any]] = field(default_factory=list)
    aliases: set[str] = field(default_factory=set)
    own: str | None = None  # a sub-step's description before its parent's was put in front
    other: Any = None  # an item that is no step at all: Plan.from_dict names it and what it got

    def fields(self) -> Any:
        if self.other is not None:
            return self.other
        out: dict[str, Any] = {"id": self.id}
        if self.description is not None:
            out["description"] = self.description
        if self.depends_on is not None:
            out["depends_on"] = self.depends_on
        if self.tool_hints is not None:
            out["tool_hints"] = self.tool_hints
        return out


def _read_steps(items: list[tuple[str | None, Any]], *, prefix: str = "") -> list[_Step]:
    return [_read_step(key, raw, f"{prefix}{position}") for position, (key, raw) in enumerate(items, 1)]


def _read_step(key: str | None, raw: Any, fallback: str) -> _Step:
    number = _NUMBERED_KEY.match(key) if key is not None else None
    name = key.strip() if key is not None and number is None else None
    slug = name is not None and _NAME_ID.match(name) is not None
    step_id = number.group(1) if number else (name if slug and name else fallback)
    step = _Step(id=step_id, description=None, raw_id=number is not None or slug)
    if name and not slug:
        step.aliases.add(name)
    if isinstance(raw, str):
        text = _clean(raw, numbered=True)
        step.description = _titled(name, slug, text) or name or text
    elif isinstance(raw, list) and name:
        step.description, step.children = name, [(None, item) for item in raw]
    elif isinstance(raw, Mapping):
        _read_fields(step, raw)
        step.description = _titled(name, slug, step.description) if step.description else name
    elif name:
        step.description = name
    else:
        step.other = raw
    return step


def _clean(text: str, *, numbered: bool = False) -> str:
    """A description without edge whitespace, or a line of code with its indentation kept; a string
    step loses a list number ("1. Read the file")."""
    if code_line(text):
        return text.rstrip()
    return _LIST_NUMBER.sub("", text.strip()) if numbered else text.strip()


def _titled(name: str | None, slug: bool, text: str | None) -> str | None:
    """A step named by a title key: the title, then what the value says (unless it repeats it)."""
    if not text or not name or slug or text.lower().startswith(name.lower()):
        return text
    return f"{name}: {text}"


def _read_fields(step: _Step, raw: Mapping[str, Any]) -> None:
    texts = {k: _clean(raw[k]) for k in _DESCRIPTION_KEYS if isinstance(raw.get(k), str) and raw[k].strip()}
    # {"step": "2", "task": "..."}: a number under "step" is the step's id, not what to do.
    number = _STEP_REF.match(texts["step"]) if "step" in texts else None
    if number is not None:
        del texts["step"]
        step.id, step.raw_id = number.group(1), True
    chosen = next(iter(texts), None)
    if chosen is not None:
        description = texts[chosen]
        for key in _CODE_KEYS:  # code the model put beside the description belongs to the step
            if key != chosen and isinstance(raw.get(key), str) and raw[key].strip():
                description += "\n" + join_code_lines(raw[key].splitlines())
                break
        command = next((raw[k] for k in _COMMAND_KEYS if isinstance(raw.get(k), str) and raw[k].strip()),
                       None)
        if command is not None:
            description += f" (command: {command.strip()})"
        step.description = description
    for key in _ID_KEYS:
        found = raw.get(key)
        if number is not None and key == "step":
            break
        if isinstance(found, int) and not isinstance(found, bool):
            step.id, step.raw_id = str(found), True
            break
        if isinstance(found, str) and found.strip() and key != "step":
            step.id, step.raw_id = found.strip(), True
            break
    step.depends_on = next((_as_list(raw[k]) for k in _DEPENDS_KEYS if raw.get(k) is not None), None)
    step.tool_hints = next((raw[k] for k in _TOOL_KEYS if raw.get(k) is not None), None)
    children = next((raw[k] for k in _SUBSTEP_KEYS if isinstance(raw.get(k), list | Mapping) and raw[k]),
                    None)
    if isinstance(children, Mapping):
        step.children = list(children.items())
    elif children is not None:
        step.children = [(None, child) for child in children]


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _flatten(steps: list[_Step], warnings: list[str], level: int = 1,
             ancestors: tuple[str, ...] = ()) -> list[_Step]:
    """Sub-steps become steps ``<parent>.1``, ``<parent>.2``... in place of their parent; refs to the
    parent mean its last sub-step. A deep or self-repeating tree is a loop, not a plan."""
    out: list[_Step] = []
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
        children = _read_steps(step.children, prefix=f"{step.id}.")
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
        children[-1].aliases |= {step.id, *step.aliases}
        warnings.append(f"step {step.id} ({_shorten(step.description or '')!r}) was split into its "
                        f"{len(children)} sub-steps")
        out.extend(children)
    return out


def _join_code(steps: list[_Step], warnings: list[str]) -> list[_Step]:
    """Items that are lines of code or file contents join the step before them (or, at the start, the
    step after them) instead of being steps of their own."""
    def is_code(step: _Step) -> bool:
        return (step.other is None and step.description is not None and not step.children
                and step.depends_on is None and step.tool_hints is None and code_line(step.description))

    out: list[_Step] = []
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
        # "Create main.py with:" (or a full-width colon) introduces the lines after it.
        introduced = before is not None and (before.description or "").rstrip().endswith((":", "\uff1a"))
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


def _check_not_looping(steps: list[_Step]) -> None:
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


def _resolve_refs(steps: list[_Step], warnings: list[str]) -> None:
    """``depends_on`` entries become the ids they mean ("step 2" -> "2", a title key -> its id, a
    merged item -> the step it joined); entries naming no other step are dropped with a warning.
    Steps the model gave no ids are numbered 1, 2... again when items were merged or dropped."""
    ids = {s.id for s in steps if s.other is None}
    aliases = {alias: s.id for s in steps for alias in s.aliases if alias not in ids}
    for s in steps:  # small models name the step they need by what it says
        if s.description and s.description not in ids:
            aliases.setdefault(s.description, s.id)
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
    match = _STEP_REF.match(text)
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


def _any_text(raw: Any, key: str | None) -> str:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, Mapping):
        return next((raw[k] for k in _DESCRIPTION_KEYS if isinstance(raw.get(k), str)), key or "")
    return key or ""


def _first_line(step: _Step) -> str:
    return (step.description or "").split("\n", 1)[0]


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .;:,!。")


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
