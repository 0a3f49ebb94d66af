"""``Skills``: instructions the agent can use, one ``SKILL.md`` per folder.

The convention (Anthropic's Agent Skills, CountBot's skills loader): a skills directory holds one
folder per skill, each with a ``SKILL.md`` whose YAML front matter names and describes it::

    skills/
      release-notes/
        SKILL.md        ---
                        name: release-notes
                        description: Write release notes from the git log since the last tag.
                        always: false        # optional; true puts the whole skill in every prompt
                        ---
                        1. Run `git describe --tags --abbrev=0` ...

Always-on skills go into the system prompt in full. The others are listed by name and description,
and the model reads one with the ``load_skill`` tool when a task needs it: a long skill costs
tokens only in the conversations that use it.

```python
skills = Skills.from_dir("skills")
prompt = skills.apply(SystemPrompt("You are Ada.")).render()
bundle = AgentBuilder().provider(p).tools(skills.tool()).build()
```
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agcore.agent._prompt import SystemPrompt
from agcore.tools import Tool, ToolError

__all__ = ["LOAD_SKILL_TOOL", "SKILL_FILE", "Skill", "SkillError", "Skills"]

SKILL_FILE = "SKILL.md"
LOAD_SKILL_TOOL = "load_skill"
_FENCE = "---"
_MAX_NAME = 64

_LOAD_NOTE = (
    "These skills are available on demand. When a task matches one, call `{tool}` with its name "
    "and follow the instructions it returns."
)


class SkillError(ValueError):
    """A skill that cannot be read: the message names the file and what to fix."""


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill: ``instructions`` is the body of its ``SKILL.md`` (without the front matter);
    ``folder`` is where its other files (scripts, templates) live; ``metadata`` holds the front
    matter's other keys."""

    name: str
    description: str
    instructions: str
    always: bool = False
    folder: Path | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        where = f" ({self.folder / SKILL_FILE})" if self.folder is not None else ""
        if not self.name.strip() or "\n" in self.name or len(self.name) > _MAX_NAME:
            raise SkillError(f"skill name {self.name!r}{where}: use one line of at most {_MAX_NAME} "
                             "characters, e.g. 'release-notes'")
        if not self.description.strip():
            raise SkillError(f"skill {self.name!r}{where} has no description: add `description:` "
                             "to its front matter; the model picks skills by it")

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Skill:
        """Read a ``SKILL.md``. ``name`` defaults to its folder's name; ``description`` is required."""
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise SkillError(f"{file}: not UTF-8 text ({exc.reason}); save it as UTF-8") from None
        except OSError as exc:
            raise SkillError(f"{file}: cannot read it ({exc.strerror or exc})") from None
        front, body = _split_front_matter(text, file)
        name = front.pop("name", file.parent.name)
        description = front.pop("description", "")
        always = front.pop("always", False)
        if not isinstance(name, str) or not isinstance(description, str):
            raise SkillError(f"{file}: `name` and `description` must be text")
        if not isinstance(always, bool):
            raise SkillError(f"{file}: `always` must be true or false, not {always!r}")
        return cls(name=name.strip(), description=" ".join(description.split()),
                   instructions=body.strip(), always=always, folder=file.parent, metadata=front)

    def summary(self) -> str:
        """``name: description``, the line the prompt lists an on-demand skill by."""
        return f"{self.name}: {self.description}"


class Skills:
    """A set of skills with unique names: a prompt section (``apply``/``prompt_section``) and the
    ``load_skill`` tool (``tool``)."""

    def __init__(self, skills: Iterable[Skill] = ()) -> None:
        self._skills: dict[str, Skill] = {}
        for skill in skills:
            if skill.name in self._skills:
                first = self._skills[skill.name].folder
                raise SkillError(f"two skills are named {skill.name!r} ({first} and {skill.folder}): "
                                 "rename one in its front matter")
            self._skills[skill.name] = skill

    @classmethod
    def from_dir(cls, path: str | os.PathLike[str]) -> Skills:
        """Every ``<path>/<folder>/SKILL.md``, in folder-name order; folders without one are
        skipped. A missing directory or an unreadable skill is a ``SkillError``."""
        root = Path(path).expanduser()
        if not root.is_dir():
            raise SkillError(f"skills directory {root}: no such directory; create it with one folder "
                             f"per skill, each holding a {SKILL_FILE}")
        files = sorted(p / SKILL_FILE for p in root.iterdir() if (p / SKILL_FILE).is_file())
        return cls(Skill.from_file(f) for f in files)

    def __iter__(self) -> Iterator[Skill]:
        return iter(list(self._skills.values()))

    def __len__(self) -> int:
        return len(self._skills)

    def __contains__(self, name: object) -> bool:
        return name in self._skills

    def get(self, name: str) -> Skill | None:
        """The skill called ``name``, or None."""
        return self._skills.get(name)

    @property
    def always_on(self) -> list[Skill]:
        """The skills whose instructions are in every prompt."""
        return [s for s in self._skills.values() if s.always]

    @property
    def on_demand(self) -> list[Skill]:
        """The skills listed by summary and loaded with the tool."""
        return [s for s in self._skills.values() if not s.always]

    def apply(self, prompt: SystemPrompt, *, tool_name: str = LOAD_SKILL_TOOL) -> SystemPrompt:
        """Put the skills into ``prompt``'s skills section: always-on ones in full, the others by
        summary with a note on loading them with ``tool_name``. Returns the prompt."""
        for skill in self.always_on:
            prompt.active_skill(skill.name, skill.instructions)
        on_demand = self.on_demand
        if on_demand:
            prompt.skills(*(s.summary() for s in on_demand), note=_LOAD_NOTE.format(tool=tool_name))
        return prompt

    def prompt_section(self, *, tool_name: str = LOAD_SKILL_TOOL) -> str:
        """The skills section alone (``# Skills`` ...), for a system prompt written as a string;
        empty when there are no skills."""
        return self.apply(SystemPrompt(), tool_name=tool_name).render()

    def load(self, name: str) -> str:
        """What the tool returns for ``name``: the skill's instructions and where its files are.
        ``KeyError`` naming the skills there are when there is no such skill."""
        skill = self._skills.get(name)
        if skill is None:
            raise KeyError(f"Unknown skill {name!r}. Skills: {', '.join(self._skills) or 'none'}.")
        where = f"\n\n(This skill's files are in {skill.folder}.)" if skill.folder is not None else ""
        return f"# Skill: {skill.name}\n\n{skill.instructions}{where}"

    def tool(self, *, name: str = LOAD_SKILL_TOOL) -> Tool:
        """The tool the model loads an on-demand skill with (``load_skill(name)``)."""

        tool_name = name

        async def load_skill(name: str) -> str:
            """Load a skill.

            Args:
                name: The skill's name, as listed in the system prompt.
            """
            try:
                return self.load(name.strip())
            except KeyError as exc:
                raise ToolError(str(exc.args[0]), tool_name=tool_name) from None

        listed = ", ".join(s.name for s in self.on_demand) or "none"
        description = ("Load the full instructions of a skill by its name, before doing a task the "
                       f"skill covers. Skills: {listed}.")
        return Tool.from_function(load_skill, name=tool_name, description=description, read_only=True)


def _split_front_matter(text: str, file: Path) -> tuple[dict[str, Any], str]:
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != _FENCE:
        raise SkillError(f"{file}: no front matter; start the file with '---', then `name:` and "
                         "`description:` lines, then '---'")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == _FENCE)
    except StopIteration:
        raise SkillError(f"{file}: the front matter is not closed; add a '---' line after it") from None
    yaml: Any = importlib.import_module("yaml")  # no type stubs installed; loaded with the first skill
    try:
        data = yaml.safe_load("".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        raise SkillError(f"{file}: the front matter is not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise SkillError(f"{file}: the front matter must be `key: value` lines")
    return {str(k): v for k, v in data.items()}, "".join(lines[end + 1 :])
