"""``agcore run/chat --skills DIR``: the skills reach the prompt and the load_skill tool."""

from __future__ import annotations

from pathlib import Path

from tests.cli import write_script
from tests.cli.conftest import Invoke


def write_skills(root: Path) -> Path:
    skills = root / "skills"
    for folder, front, body in [
        ("style", "name: house-style\ndescription: How we write.\nalways: true", "Sentences stay short."),
        ("notes", "name: release-notes\ndescription: Write release notes.", "Group changes by area."),
    ]:
        (skills / folder).mkdir(parents=True)
        (skills / folder / "SKILL.md").write_text(f"---\n{front}\n---\n{body}\n", encoding="utf-8")
    return skills


def test_run_with_skills_lists_them_and_loads_one(tmp_path: Path, invoke: Invoke) -> None:
    write_skills(tmp_path)
    # Each reply comes only if the request holds what it expects: the always-on skill and the summary
    # in the prompt, then the body the tool returned.
    write_script(tmp_path, [
        {"expect": "release-notes: Write release notes.",
         "tool_calls": [{"name": "load_skill", "arguments": {"name": "release-notes"}}]},
        {"expect": "Group changes by area.", "text": "Loaded; sentences stay short."},
    ])
    done = invoke("run", "write notes", "--model", "scripted:model.json", "--yes", "--no-plugins",
                  "--skills", "skills")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "Loaded; sentences stay short." in done.stdout


def test_always_on_skill_is_in_the_chat_prompt(tmp_path: Path, invoke: Invoke) -> None:
    write_skills(tmp_path)
    write_script(tmp_path, [{"expect": "## house-style\nSentences stay short.", "text": "Hi."}])
    done = invoke("chat", "--model", "scripted:model.json", "--no-plugins", "--skills", "skills",
                  input="hello\n")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "Hi." in done.stdout
    assert "--skills skills" in done.stdout  # the resume command keeps the skills


def test_a_bad_skills_dir_is_a_usage_error(tmp_path: Path, invoke: Invoke) -> None:
    (tmp_path / "skills" / "bad").mkdir(parents=True)
    (tmp_path / "skills" / "bad" / "SKILL.md").write_text("no front matter")
    write_script(tmp_path, [{"text": "never"}])
    done = invoke("run", "x y", "--model", "scripted:model.json", "--no-plugins", "--skills", "skills")
    assert done.exit_code == 2
    assert "no front matter" in done.stdout + done.stderr
    missing = invoke("run", "x y", "--model", "scripted:model.json", "--no-plugins", "--skills", "nope")
    assert missing.exit_code == 2
    assert "no such directory" in missing.stdout + missing.stderr
