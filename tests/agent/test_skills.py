"""Skills from SKILL.md folders: the prompt section, the load_skill tool, and a session using both."""

from __future__ import annotations

from pathlib import Path

import pytest

from agcore.agent import (
    AgentBuilder,
    AgentSession,
    BasicAgent,
    SkillError,
    Skills,
    SystemPrompt,
    ToolResults,
)
from agcore.testing import ScriptedProvider, tool_call_reply


def write_skill(root: Path, folder: str, front: str, body: str = "Do the thing.") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    write_skill(tmp_path, "style", "name: house-style\ndescription: How we write.\nalways: true",
                "Write short sentences.\nNever use passive voice.")
    write_skill(tmp_path, "release", "name: release-notes\ndescription: >\n  Write release notes\n  "
                "from the git log.\nowner: docs-team", "1. Run `git log`.\n2. Group by area.")
    write_skill(tmp_path, "翻译", "description: 把英文翻译成中文。", "逐句翻译。")
    (tmp_path / "notes").mkdir()  # a folder without SKILL.md is not a skill
    (tmp_path / "README.md").write_text("not a skill")
    return tmp_path


def test_from_dir_reads_each_folder(skills_dir: Path) -> None:
    skills = Skills.from_dir(skills_dir)
    assert [s.name for s in skills] == ["release-notes", "house-style", "翻译"]  # folder-name order
    assert [s.name for s in skills.always_on] == ["house-style"]
    release = skills.get("release-notes")
    assert release is not None
    assert release.description == "Write release notes from the git log."  # folded to one line
    assert release.instructions == "1. Run `git log`.\n2. Group by area."
    assert release.metadata == {"owner": "docs-team"}
    assert release.folder == skills_dir / "release"
    assert skills.get("翻译") is not None  # no name: the folder's


def test_prompt_has_always_on_in_full_and_the_rest_by_summary(skills_dir: Path) -> None:
    skills = Skills.from_dir(skills_dir)
    text = skills.apply(SystemPrompt("You are Ada.").memory("Remember things.")).render()
    section = text.split("# Skills\n", 1)[1]
    assert section.startswith("## house-style\nWrite short sentences.\nNever use passive voice.")
    assert "call `load_skill` with its name" in section
    assert "- release-notes: Write release notes from the git log." in section
    assert "- 翻译: 把英文翻译成中文。" in section
    assert "1. Run `git log`." not in text  # on-demand bodies stay out of the prompt
    assert text.index("# Memory") < text.index("# Skills")
    assert skills.prompt_section().startswith("# Skills\n## house-style")


@pytest.mark.anyio
async def test_load_skill_tool_in_a_session(skills_dir: Path) -> None:
    skills = Skills.from_dir(skills_dir)
    model = ScriptedProvider([
        tool_call_reply("load_skill", {"name": "release-notes"}),
        tool_call_reply("load_skill", {"name": "release"}),
        "Done.",
    ])
    bundle = AgentBuilder().provider(model).tools(skills.tool()).build()
    agent = BasicAgent("ada", skills.apply(SystemPrompt("You are Ada.")).render())
    session = AgentSession(agent, "s1", bundle)
    result = await session.submit_turn("Write the release notes.")
    assert result.text == "Done."
    assert "release-notes" in (model.requests[0].system or "")
    tool_def = next(t for t in model.requests[0].tools if t.name == "load_skill")
    assert "release-notes" in tool_def.description
    assert "house-style" not in tool_def.description  # always on: nothing to load
    results = [r for m in session.messages if isinstance(m, ToolResults) for r in m.results]
    assert not results[0].is_error
    assert "2. Group by area." in str(results[0].content)
    assert str(skills_dir / "release") in str(results[0].content)
    assert results[1].is_error  # an unknown name is told to the model, with the names there are
    assert "Unknown skill 'release'" in str(results[1].content)
    assert "release-notes" in str(results[1].content)


@pytest.mark.parametrize(("content", "expected"), [
    ("no front matter", "no front matter"),
    ("---\nname: x\ndescription: y\n", "not closed"),
    ("---\nname: [x\n---\n", "not valid YAML"),
    ("---\n- a\n- b\n---\n", "key: value"),
    ("---\nname: x\n---\nbody", "no description"),
    ("---\nname: x\ndescription: y\nalways: sometimes\n---\n", "true or false"),
])
def test_bad_skill_files_say_what_to_fix(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bad" / "SKILL.md"
    path.parent.mkdir()
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SkillError, match=expected) as caught:
        Skills.from_dir(tmp_path)
    assert "bad" in str(caught.value)


def test_duplicate_names_and_missing_dir_are_errors(tmp_path: Path) -> None:
    write_skill(tmp_path, "a", "name: same\ndescription: one")
    write_skill(tmp_path, "b", "name: same\ndescription: two")
    with pytest.raises(SkillError, match="two skills are named 'same'"):
        Skills.from_dir(tmp_path)
    with pytest.raises(SkillError, match="no such directory"):
        Skills.from_dir(tmp_path / "missing")


def test_no_skills_no_section(tmp_path: Path) -> None:
    skills = Skills.from_dir(tmp_path)
    assert len(skills) == 0
    assert skills.prompt_section() == ""
    assert "Skills" not in skills.apply(SystemPrompt("Hi.")).render()
