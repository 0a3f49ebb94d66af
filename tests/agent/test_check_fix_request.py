"""What a model reads after a failing acceptance check (the failing lines first, the files the output
points at, a request for a change), and an answer with nothing changed since the failure: asked for
the change once instead of running the check again. Real pytest runs in a tmp workspace, sessions
driven by scripted providers, on asyncio and trio."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from agcore.agent import AcceptanceChecks, AgentBuilder, AgentSession, BasicAgent, ContextNote, check_report
from agcore.agent.checks._fix_request import fix_request, named_files
from agcore.agent.checks._shown_files import files_to_show
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools.workspace import Workspace

pytestmark = pytest.mark.anyio

CALC = "def average(xs):\n    return sum(xs) / (len(xs) + 1)\n"
TEST = "from calc import average\n\n\ndef test_average():\n    assert average([2, 4, 6]) == 4\n"
CHECK = f"{sys.executable} -m pytest -q -p no:cacheprovider test_calc.py"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "calc.py").write_text(CALC)
    (tmp_path / "test_calc.py").write_text(TEST)
    return Workspace(tmp_path, confirm_commands=False, confirm_writes=False)


def session_for(provider: ScriptedProvider, workspace: Workspace, rounds: int = 3) -> AgentSession:
    checks = AcceptanceChecks(workspace, [CHECK], rounds=rounds)
    bundle = AgentBuilder().provider(provider).tools(workspace.tools()).capabilities(checks).build()
    return AgentSession(BasicAgent(name="coder", system_prompt="You code."), "s1", bundle)


def notes(session: AgentSession) -> list[str]:
    return [m.text for m in session.messages if isinstance(m, ContextNote)]


async def test_an_answer_with_nothing_changed_is_asked_for_the_change(workspace: Workspace) -> None:
    fix = tool_call_reply("edit_file", {"path": "calc.py", "old": "(len(xs) + 1)", "new": "len(xs)"})
    provider = ScriptedProvider([
        "Done.",  # the claim: the check fails
        tool_call_reply("read_file", {"path": "calc.py"}),
        "Done, I checked calc.py.",  # nothing changed: not checked again, asked for the change
        tool_call_reply("read_file", {"path": "calc.py"}),  # the read edit_file needs
        fix,
        "Fixed the divisor in average.",
    ])
    session = session_for(provider, workspace)
    result = await session.submit_turn("make test_calc.py pass")
    assert result.stop == "done", result.error
    report = check_report(result)
    assert report is not None
    assert report.passed
    assert report.rounds == 2  # the unchanged answer did not use a round
    failed, unchanged = notes(session)
    # the failing lines come first, the wide separators are cut, the files are named
    what_failed = failed.split("The end of its output:")[0]
    assert "E       assert" in what_failed
    assert "FAILED test_calc.py::test_average" in what_failed
    assert "The output points at: test_calc.py line 5 (it imports calc.py)." in failed
    assert "Start with test_calc.py, shown above" in failed  # nothing keeps the test unchanged here
    assert not re.search(r"={20}", failed)
    assert "Change the files so that the check passes" in failed
    assert "round 1 of 3" in failed
    assert f"Nothing in the workspace has changed since the check `{CHECK}` failed" in unchanged


async def test_the_note_says_which_file_the_task_keeps_unchanged(workspace: Workspace) -> None:
    session = session_for(ScriptedProvider(["Done.", "Done, really."]), workspace, rounds=1)
    await session.submit_turn("Fix calc.py so that test_calc.py passes (do not change test_calc.py).")
    failed = notes(session)[0]
    assert "The task says not to change test_calc.py: the fix goes in another file." in failed
    assert "Start with calc.py, shown above: change what makes the check fail." in failed


def test_a_test_files_local_imports_are_named(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "wire.py").write_text("X = 1\n")
    (tmp_path / "util.py").write_text("Y = 2\n")
    (tmp_path / "test_x.py").write_text("import os, util\nfrom pkg.wire import X\nfrom missing import Z\n")
    assert named_files("test_x.py:3: AssertionError", tmp_path) == [
        "test_x.py line 3 (it imports util.py, pkg/wire.py)"
    ]


async def test_a_second_unchanged_answer_runs_the_check_and_uses_a_round(workspace: Workspace) -> None:
    provider = ScriptedProvider(["Done.", "Done, really.", "Done, I promise."])
    session = session_for(provider, workspace, rounds=1)
    result = await session.submit_turn("make test_calc.py pass")
    assert result.stop == "error"
    report = check_report(result)
    assert report is not None
    assert report.rounds == 2
    assert result.turns == 3


def test_only_files_inside_the_workspace_are_named(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    (tmp_path / "a.py").write_text("")
    output = (
        "pkg/mod.py:3: AssertionError\npkg/mod.py:7: in f\n/usr/lib/python3/x.py:1: boom\n"
        "../outside.py:2: nope\nmissing.py:4: gone\na.py"
    )
    assert named_files(output, tmp_path) == ["pkg/mod.py line 3, 7", "a.py"]


def test_a_check_that_printed_nothing_says_so() -> None:
    text = fix_request("false", "exit 1", "", [], 1, 3)
    assert "(it printed nothing)" in text
    assert "What failed" not in text
    assert "points at" not in text


async def test_the_note_shows_the_task_and_the_files_changed_so_far_as_they_are_now(
    workspace: Workspace,
) -> None:
    wrong = tool_call_reply("write_file", {"path": "result.txt", "content": "5fcf\nThis is the output.\n"})
    provider = ScriptedProvider([wrong, "Done.", "Done, really."])
    session = session_for(provider, workspace, rounds=1)
    session.state.created_at -= 60  # a file system's coarse clock may lag the session's
    for name in ("calc.py", "test_calc.py"):  # the user's, from before the session
        os.utime(workspace.root / name, (session.created_at - 3600, session.created_at - 3600))
    result = await session.submit_turn("Write what generate.py prints into result.txt.")
    assert result.stop == "error", result.error
    failed = notes(session)[0]
    assert "--- result.txt ---\n5fcf\nThis is the output.\n" in failed
    assert "calc.py ---" not in failed  # the user's files, unchanged, are not shown
    assert "The task, as the user gave it: Write what generate.py prints into result.txt.\n\n" in failed
    assert fix_request("false", "exit 1", "", [], 1, 3, task=" ", changed={}).endswith("(round 1 of 3).")


# ------------------------------------------------- the files a fix goes in, shown as they are

async def test_the_note_shows_the_imported_module_so_it_can_be_edited_at_once(workspace: Workspace) -> None:
    fix = tool_call_reply("edit_file", {"path": "calc.py", "old": "(len(xs) + 1)", "new": "len(xs)"})
    provider = ScriptedProvider([
        tool_call_reply("read_file", {"path": "test_calc.py"}),
        "Done.",  # the check fails: the note shows calc.py, which the turn never read
        fix,  # no read_file first: the note counts as the read
        "Fixed the divisor.",
    ])
    session = session_for(provider, workspace)
    task = "Fix calc.py so that test_calc.py passes (do not change test_calc.py)."
    result = await session.submit_turn(task)
    assert result.stop == "done", result.error
    failed = notes(session)[0]
    assert "calc.py as it is now (you have not read it in this task" in failed
    assert "     2\t    return sum(xs) / (len(xs) + 1)" in failed
    assert "test_calc.py as it is now" not in failed  # read in the turn, and kept unchanged
    assert "Start with calc.py, shown above" in failed


async def test_a_file_read_in_the_turn_or_too_big_is_not_shown(workspace: Workspace) -> None:
    (workspace.root / "calc.py").write_text(CALC + "".join(f"# line {n}\n" for n in range(100)))
    provider = ScriptedProvider([tool_call_reply("read_file", {"path": "test_calc.py"}), "Done.", "Done."])
    session = session_for(provider, workspace, rounds=1)
    await session.submit_turn("make test_calc.py pass")
    failed = notes(session)[0]
    assert "as it is now (you have not read it" not in failed
    assert "Start with test_calc.py: read it" in failed


def test_at_most_two_small_local_files_are_chosen(tmp_path: Path) -> None:
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text("X = 1\n")
    (tmp_path / "test_all.py").write_text("import a\nimport b\nimport c\n")
    chosen = files_to_show("test_all.py:3: AssertionError", tmp_path, start_with=None, keep=[], skip=set())
    assert chosen == ["a.py", "b.py"]
    kept = files_to_show("test_all.py:3: AssertionError", tmp_path, start_with="test_all.py",
                         keep=["test_all.py"], skip={"a.py"})
    assert kept == ["b.py", "c.py"]


async def test_a_tracebacks_absolute_paths_are_named_as_workspace_paths(workspace: Workspace) -> None:
    check = f"{sys.executable} -c 'import calc; assert calc.average([2]) == 2'"
    (workspace.root / "calc.py").write_text("def average(xs):\n    raise ValueError('broken')\n")
    checks = AcceptanceChecks(workspace, [check], rounds=1)
    provider = ScriptedProvider(["Done.", "Done."])
    bundle = AgentBuilder().provider(provider).tools(workspace.tools()).capabilities(checks).build()
    session = AgentSession(BasicAgent(name="coder", system_prompt="You code."), "s1", bundle)
    await session.submit_turn("make average work")
    failed = notes(session)[0]
    assert str(workspace.root) not in failed
    assert "The output points at: calc.py." in failed
    assert "calc.py as it is now" in failed
