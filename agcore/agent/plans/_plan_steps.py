"""Reading one step of a model's plan under the spellings models use: ``RawStep`` and ``read_steps``.

A step may be a string (``"1. Read the file"`` loses its list number), an object whose description is
under ``description``, ``task``, ``title``, ``name``... (or Chinese keys), whose dependencies are under
``depends_on``, ``dependencies``, ``after``..., and whose tools under ``tool_hints``, ``tools``...; or
the value of an object keyed by step (``step1``, ``第1步``, an identifier, or a title). Code or a
command the model put beside the description is kept in it. Sub-steps are kept for the caller to
flatten. Nothing is checked here: ``Plan.from_dict`` does that.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agcore.agent.plans._plan_code import code_line, join_code_lines

__all__ = ["DEPENDS_KEYS", "DESCRIPTION_KEYS", "NUMBERED_KEY", "STEP_REF", "TOOL_KEYS", "RawStep",
           "read_steps", "step_text"]

_SUBSTEP_KEYS = ("substeps", "sub_steps", "subtasks", "children", "steps", "tasks", "子步骤", "子任务")
DESCRIPTION_KEYS = (
    "description", "step", "task", "title", "name", "action", "instruction", "instructions",
    "content", "text", "summary", "desc", "details", "描述", "内容", "任务", "步骤", "说明",
)
_CODE_KEYS = ("code", "snippet", "file_content", "file_contents", "contents", "content", "代码")
_COMMAND_KEYS = ("command", "cmd", "shell", "命令")
_ID_KEYS = ("id", "step_id", "number", "step_number", "index", "step", "编号", "序号")
DEPENDS_KEYS = ("depends_on", "dependencies", "depends", "deps", "after", "requires", "needs",
                "prerequisites", "依赖", "前置")
TOOL_KEYS = ("tool_hints", "tools", "tool", "suggested_tools", "工具")
NUMBERED_KEY = re.compile(r"^(?:step|task|步骤|第)?[ _-]?(\d+)(?:步)?$", re.IGNORECASE)
STEP_REF = re.compile(r"^\s*(?:step|task|步骤|第)?[\s_#-]*(\d+)\s*(?:步)?\s*$", re.IGNORECASE)
_NAME_ID = re.compile(r"^[\w.-]{1,40}$")
_LIST_NUMBER = re.compile(r"^(?:step\s*)?\d{1,3}\s*[.):]\s+(?=\S)", re.IGNORECASE)  # "1. Read the file"


@dataclass(slots=True)
class RawStep:
    """A step as read, before ``Plan.from_dict`` checks it; ``aliases`` are other names refs may use."""

    id: str
    description: str | None
    raw_id: bool = False  # the model gave the id (else it is the step's position)
    depends_on: list[Any] | None = None
    tool_hints: Any = None
    agent: str | None = None  # the sub-agent the step is delegated to (DefaultTaskAgent.subagents)
    children: list[tuple[str | None, Any]] = field(default_factory=list)
    aliases: set[str] = field(default_factory=set)
    own: str | None = None  # a sub-step's description before its parent's was put in front
    other: Any = None  # an item that is no step at all: Plan.from_dict names it and what it got

    def fields(self) -> Any:
        """The step as ``Plan.from_dict`` takes it (an item that is no step, as the model wrote it)."""
        if self.other is not None:
            return self.other
        out: dict[str, Any] = {"id": self.id}
        if self.description is not None:
            out["description"] = self.description
        if self.depends_on is not None:
            out["depends_on"] = self.depends_on
        if self.tool_hints is not None:
            out["tool_hints"] = self.tool_hints
        if self.agent is not None:
            out["agent"] = self.agent
        return out


def read_steps(items: list[tuple[str | None, Any]], *, prefix: str = "") -> list[RawStep]:
    """The steps ``items`` hold: (key, value) pairs, the key None for a list's items. A step without an
    id gets ``prefix`` + its position."""
    return [_read_step(key, raw, f"{prefix}{position}") for position, (key, raw) in enumerate(items, 1)]


def _read_step(key: str | None, raw: Any, fallback: str) -> RawStep:
    number = NUMBERED_KEY.match(key) if key is not None else None
    name = key.strip() if key is not None and number is None else None
    slug = name is not None and _NAME_ID.match(name) is not None
    step_id = number.group(1) if number else (name if slug and name else fallback)
    step = RawStep(id=step_id, description=None, raw_id=number is not None or slug)
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


def _read_fields(step: RawStep, raw: Mapping[str, Any]) -> None:
    texts = {k: _clean(raw[k]) for k in DESCRIPTION_KEYS if isinstance(raw.get(k), str) and raw[k].strip()}
    # {"step": "2", "task": "..."}: a number under "step" is the step's id, not what to do.
    number = STEP_REF.match(texts["step"]) if "step" in texts else None
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
    step.depends_on = next((_as_list(raw[k]) for k in DEPENDS_KEYS if raw.get(k) is not None), None)
    step.tool_hints = next((raw[k] for k in TOOL_KEYS if raw.get(k) is not None), None)
    agent = raw.get("agent")
    if isinstance(agent, str) and agent.strip():
        step.agent = agent.strip()
    children = next((raw[k] for k in _SUBSTEP_KEYS if isinstance(raw.get(k), list | Mapping) and raw[k]),
                    None)
    if isinstance(children, Mapping):
        step.children = list(children.items())
    elif children is not None:
        step.children = [(None, child) for child in children]


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def step_text(raw: Any, key: str | None) -> str:
    """What the step ``raw`` (under ``key``) says, for messages; "" when it says nothing."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, Mapping):
        return next((raw[k] for k in DESCRIPTION_KEYS if isinstance(raw.get(k), str)), key or "")
    return key or ""
