"""``agcore run/chat --skills DIR`` and ``--image PATH``: skills reach the prompt and the load_skill
tool; images reach the model with the task (or the first chat message)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import finish, write_script
from tests.cli.conftest import Invoke, SpawnCli


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


def write_png(path: Path) -> Path:
    from tests.llm.test_images import png_bytes

    path.write_bytes(png_bytes())
    return path


def test_run_sends_the_images_with_the_task(tmp_path: Path, invoke: Invoke) -> None:
    write_png(tmp_path / "a.png")
    (tmp_path / "b.jpg").write_bytes(b"\xff\xd8\xff\xe0" + b"\x00" * 20)
    # The reply comes only if the request holds both images (the scripted model's text of a request
    # shows an image as "[image MEDIA_TYPE]").
    write_script(tmp_path, [{"expect": "[image image/png]\n[image image/jpeg]\ncompare them",
                             "text": "Two images."}])
    done = invoke("run", "compare them", "--model", "scripted:model.json", "--no-plugins",
                  "--image", "a.png", "--image", "b.jpg")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "Two images." in done.stdout


def test_chat_sends_the_images_with_the_first_message_only(tmp_path: Path, spawn_cli: SpawnCli) -> None:
    write_png(tmp_path / "a.png")
    write_script(tmp_path, [{"expect": "[image image/png]\nwhat is this", "text": "A grey square."},
                            {"text": "Yes."}])
    child = spawn_cli("chat", "--model", "scripted:model.json", "--no-plugins", "--image", "a.png")
    child.expect("you> ")
    child.sendline("what is this")
    child.expect("A grey square.")
    child.expect("you> ")
    child.sendline("sure?")
    child.expect("Yes.")
    child.expect("you> ")
    child.sendline("/exit")
    assert finish(child) == 0
    db = tmp_path / "home" / "sessions.db"
    assert db.read_bytes().count(b'"type":"image"') == 1  # saved once, with the first message


@pytest.mark.parametrize(("file", "content", "expected"), [
    ("missing.png", None, "no such file"),
    ("notes.png", b"plain text", "not a PNG, JPEG, GIF or WebP"),
])
def test_a_bad_image_is_a_usage_error_before_any_model_call(
    tmp_path: Path, invoke: Invoke, file: str, content: bytes | None, expected: str,
) -> None:
    if content is not None:
        (tmp_path / file).write_bytes(content)
    write_script(tmp_path, [{"text": "never"}])
    done = invoke("run", "look", "--model", "scripted:model.json", "--no-plugins", "--image", file)
    assert done.exit_code == 2
    assert expected in done.stdout + done.stderr
    assert "never" not in done.stdout
