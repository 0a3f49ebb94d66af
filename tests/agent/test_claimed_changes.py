"""An answer that says it wrote, fixed or updated a file is held to the workspace: a file it names so
that is missing, unchanged since the session began, or empty gets the model asked to make the change,
then the turn fails (``ClaimNotBorneOut``) instead of ending "done".

Real sessions on scripted providers, the real workspace tools in a tmp directory, asyncio and trio."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agcore.agent import (
    AcceptanceChecks,
    AgentBuilder,
    AgentSession,
    BasicAgent,
    ClaimedChanges,
    ClaimNotBorneOut,
    ContextNote,
    claimed_files,
)
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools.workspace import Workspace

pytestmark = pytest.mark.anyio

CALC = "def average(numbers):\n    return sum(numbers) / (len(numbers) + 1)\n"
TASK = "`pytest -q test_calc.py` fails. Fix the bug in calc.py (do not change test_calc.py)."
FALSE_CLAIM = "The bug in `calc.py` was fixed. The tests pass now."


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "calc.py").write_text(CALC)
    (tmp_path / "test_calc.py").write_text("from calc import average\n")
    an_hour_ago = time.time() - 3600  # the files are the user's, from before the session
    for name in ("calc.py", "test_calc.py"):
        os.utime(tmp_path / name, (an_hour_ago, an_hour_ago))
    return Workspace(tmp_path, confirm_commands=False, confirm_writes=False)


def make_session(provider: ScriptedProvider, workspace: Workspace, rounds: int = 1) -> AgentSession:
    bundle = (AgentBuilder().provider(provider).tools(workspace.tools())
              .capabilities(ClaimedChanges(workspace, rounds=rounds)).build())
    session = AgentSession(BasicAgent(name="coder", system_prompt="You code."), "s1", bundle)
    session.state.created_at = time.time() - 60  # a file system's coarse clock may lag time.time()
    return session


def notes(session: AgentSession) -> list[str]:
    return [m.text for m in session.messages if isinstance(m, ContextNote)]


@pytest.mark.parametrize(("answer", "files"), [
    ("The bug in `calc.py` was fixed by adding an assertion.", ["calc.py"]),
    ("Added multiply to mathutils.py, and a test test_multiply has been added to test_mathutils.py.",
     ["mathutils.py", "test_mathutils.py"]),
    ("I counted the lines of data.csv and wrote 37 into count.txt.", ["count.txt"]),
    ("I wrote the number of lines in data.csv (37) into count.txt.", ["count.txt"]),
    ("I created hello.txt with the text from template.txt.", ["hello.txt"]),
    ("I fixed calc.py so test_calc.py passes.", ["calc.py"]),
    ("The file config.ini has been updated: the port is now 9090.", ["config.ini"]),
    ("Wrote NOTES.md with the settings.", ["NOTES.md"]),
    ("The tests in test_calc.py pass now that I fixed calc.py.", ["calc.py"]),
    ("I did not change test_calc.py; I edited calc.py.", ["calc.py"]),
    ("I edited calc.py to fix test_calc.py, without changing test_calc.py.", ["calc.py"]),
    ("settings.py configures the billing service; its codename is heliotrope-5731.", []),
    ("The function mathutils.multiply returns a * b.", []),
])
def test_the_files_an_answer_says_it_changed(answer: str, files: list[str]) -> None:
    assert claimed_files(answer) == files


async def test_a_claimed_fix_of_an_unchanged_file_is_asked_about_then_fails_the_turn(
    workspace: Workspace,
) -> None:
    model = ScriptedProvider([FALSE_CLAIM, FALSE_CLAIM])
    session = make_session(model, workspace)
    result = await session.submit_turn(TASK)
    assert result.stop == "error"
    assert isinstance(result.error, ClaimNotBorneOut)
    assert [c.path for c in result.error.claims] == ["calc.py"]
    assert "does not match the workspace: your answer says calc.py was written or changed, but calc.py has " \
        "not changed" in str(result.error)
    assert "agcore run --check CMD" in str(result.error)
    assert result.error.is_recoverable()
    (note,) = notes(session)
    assert "Your answer does not match the workspace: your answer says calc.py was written or changed, " \
        "but calc.py has not changed" in note
    assert "make it now with a tool call" in note
    assert (workspace.root / "calc.py").read_text() == CALC  # nothing touched the work


async def test_asked_about_its_claim_the_model_makes_the_change_and_the_turn_is_done(
    workspace: Workspace,
) -> None:
    model = ScriptedProvider([
        FALSE_CLAIM,
        tool_call_reply("read_file", {"path": "calc.py"}),
        tool_call_reply("edit_file", {"path": "calc.py", "old": "(len(numbers) + 1)", "new": "len(numbers)"}),
        "I fixed calc.py: it divides by len(numbers) now.",
    ])
    session = make_session(model, workspace)
    result = await session.submit_turn(TASK)
    assert result.stop == "done", result.error
    assert result.text == "I fixed calc.py: it divides by len(numbers) now."
    assert len(notes(session)) == 1
    assert "len(numbers)\n" in (workspace.root / "calc.py").read_text()


async def test_a_true_claim_and_an_answer_that_claims_nothing_are_done_at_once(workspace: Workspace) -> None:
    model = ScriptedProvider([
        tool_call_reply("read_file", {"path": "calc.py"}),
        tool_call_reply("edit_file", {"path": "calc.py", "old": "(len(numbers) + 1)", "new": "len(numbers)"}),
        "The bug in calc.py was fixed.",
        "calc.py divides the sum by the count.",
    ])
    session = make_session(model, workspace)
    assert (await session.submit_turn(TASK)).stop == "done"
    assert (await session.submit_turn("What does calc.py do?")).stop == "done"
    assert notes(session) == []
    assert len(model.requests) == 4


async def test_a_file_the_task_names_that_was_never_written_or_was_left_empty(workspace: Workspace) -> None:
    model = ScriptedProvider(["I wrote the path into answer.txt."])
    session = make_session(model, workspace, rounds=0)
    result = await session.submit_turn("Write the path of the file into answer.txt.")
    assert isinstance(result.error, ClaimNotBorneOut)
    assert "answer.txt does not exist" in str(result.error)

    model.add(tool_call_reply("write_file", {"path": "files.txt", "content": "\n"}))
    model.add("The names are written into files.txt.")
    result = await session.submit_turn("Write the names of the Python files into files.txt.")
    assert isinstance(result.error, ClaimNotBorneOut)
    assert "files.txt is empty" in str(result.error)

    model.add(tool_call_reply("write_file", {"path": "empty.txt", "content": ""}))
    model.add("I created empty.txt.")
    result = await session.submit_turn("Create an empty file empty.txt.")
    assert result.stop == "done"  # an empty file was what the user asked for


def test_rounds_must_not_be_negative(workspace: Workspace) -> None:
    with pytest.raises(ValueError, match="rounds must be 0 or more"):
        ClaimedChanges(workspace, rounds=-1)


async def test_a_rename_left_half_done_is_asked_about(workspace: Workspace) -> None:
    app = "from users import get_usr\n\n\ndef greeting(i):\n    return get_usr(i)\n"
    (workspace.root / "app.py").write_text(app)
    done = "Updated every use of get_usr in app.py."
    model = ScriptedProvider([
        tool_call_reply("read_file", {"path": "app.py"}),
        tool_call_reply("edit_file", {"path": "app.py", "old": "get_usr(i)", "new": "get_user(i)"}),
        done,
        tool_call_reply("edit_file", {"path": "app.py", "old": "import get_usr", "new": "import get_user"}),
        done,
    ])
    session = make_session(model, workspace)
    result = await session.submit_turn("Rename get_usr to get_user in app.py.")
    assert result.stop == "done", result.error
    (note,) = notes(session)
    assert "app.py still has 'get_usr' (line 1), which your edit replaced in another place of it" in note
    assert "get_usr" not in (workspace.root / "app.py").read_text()


async def test_an_edit_that_rewrites_or_deletes_is_no_rename(workspace: Workspace) -> None:
    (workspace.root / "app.py").write_text("x = compute(1)\ny = compute(2)\n")
    model = ScriptedProvider([
        tool_call_reply("read_file", {"path": "app.py"}),
        tool_call_reply("edit_file", {"path": "app.py", "old": "x = compute(1)\n", "new": ""}),
        "Removed x from app.py.",
    ])
    result = await make_session(model, workspace).submit_turn("Remove x from app.py.")
    assert result.stop == "done", result.error


async def test_a_turn_with_acceptance_checks_is_theirs_to_judge(workspace: Workspace) -> None:
    model = ScriptedProvider([
        FALSE_CLAIM,  # the check fails and says why: no claims note, no ClaimNotBorneOut
        tool_call_reply("write_file", {"path": "done.txt", "content": "yes\n"}),
        "Wrote done.txt.",
    ])
    checks = AcceptanceChecks(workspace, ["test -s done.txt"])
    bundle = (AgentBuilder().provider(model).tools(workspace.tools())
              .capabilities(ClaimedChanges(workspace), checks).build())
    session = AgentSession(BasicAgent(name="coder", system_prompt="You code."), "s1", bundle)
    result = await session.submit_turn(TASK)
    assert result.stop == "done", result.error
    (note,) = notes(session)
    assert note.startswith("The acceptance check `test -s done.txt` failed")
