"""Acceptance checks: the model's "done" counts only once the checks pass in the command sandbox.

Real sessions driven by scripted providers, real commands in a tmp workspace (bubblewrap where the
machine has it, as ``run_command`` uses it), on asyncio and trio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agcore.agent import (
    AcceptanceChecks,
    AgentBuilder,
    AgentEventAdapter,
    AgentSession,
    AskedAgain,
    BasicAgent,
    Cancelled,
    CheckFinished,
    ChecksFailed,
    CheckStarted,
    ContextNote,
    check_report,
    checks_for_turn,
)
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools.workspace import Workspace

pytestmark = pytest.mark.anyio

#: A check that passes once answer.txt holds 42 (the model's fix), and says why not otherwise.
CHECK_SCRIPT = """\
import pathlib, sys
path = pathlib.Path("answer.txt")
text = path.read_text().strip() if path.exists() else "(missing)"
if text != "42":
    print("collected 1 item")
    print(f"FAILED test_answer - expected 42, answer.txt holds {text}")
    sys.exit(1)
print("1 passed")
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "check_answer.py").write_text(CHECK_SCRIPT)
    return Workspace(tmp_path, confirm_commands=False, confirm_writes=False)


def make_session(provider: ScriptedProvider, workspace: Workspace, checks: AcceptanceChecks) -> AgentSession:
    bundle = AgentBuilder().provider(provider).tools(workspace.tools()).capabilities(checks).build()
    return AgentSession(BasicAgent(name="coder", system_prompt="You code."), "s1", bundle)


async def run(session: AgentSession, text: str) -> list[Any]:
    events: list[Any] = []
    async for event in session.stream_turn(text):
        events.append(event)
    return events


async def test_a_passing_check_accepts_the_answer(workspace: Workspace, tmp_path: Path) -> None:
    (tmp_path / "answer.txt").write_text("42\n")
    provider = ScriptedProvider(["The answer file is right."])
    session = make_session(provider, workspace, AcceptanceChecks(workspace, ["python3 check_answer.py"]))
    events = await run(session, "check the answer")
    result = session.last_result
    assert result is not None
    assert result.stop == "done"
    assert result.error is None
    report = check_report(result)
    assert report is not None
    assert report.passed
    assert report.rounds == 1
    assert report.outcomes[0].status == "exit 0"
    started = [e for e in events if isinstance(e, CheckStarted)]
    finished = [e for e in events if isinstance(e, CheckFinished)]
    assert [e.command for e in started] == ["python3 check_answer.py"]
    assert finished[0].passed
    assert finished[0].exit_code == 0
    assert "1 passed" in finished[0].output
    # the events serialise for a UI like every other event
    assert AgentEventAdapter.validate_json(finished[0].model_dump_json()) == finished[0]


async def test_a_failing_check_is_shown_to_the_model_which_fixes_the_file(workspace: Workspace) -> None:
    provider = ScriptedProvider([
        "Done, the answer is written.",  # a claim: nothing was written
        tool_call_reply("write_file", {"path": "answer.txt", "content": "42\n"}),
        "Fixed: answer.txt holds 42.",
    ])
    session = make_session(provider, workspace, AcceptanceChecks(workspace, ["python3 check_answer.py"]))
    events = await run(session, "write 42 to answer.txt")
    result = session.last_result
    assert result is not None
    assert result.stop == "done", result.error
    assert result.turns == 3
    report = check_report(result)
    assert report is not None
    assert report.passed
    assert report.rounds == 2
    # what the model read before its second call: the command, the status, the output's end
    notes = [m.text for m in session.messages if isinstance(m, ContextNote)]
    assert len(notes) == 1
    assert "`python3 check_answer.py` failed (exit 1)" in notes[0]
    assert "answer.txt holds (missing)" in notes[0]
    assert "round 1 of 3" in notes[0]
    assert [(e.passed, e.status) for e in events if isinstance(e, CheckFinished)] == [
        (False, "exit 1"), (True, "exit 0"),
    ]


async def test_a_check_failing_every_round_fails_the_turn_with_its_output(workspace: Workspace) -> None:
    # Each answer after a failure with nothing changed is asked again once before the check reruns.
    provider = ScriptedProvider(["done", "done now", "really done", "done!", "truly done"])
    checks = AcceptanceChecks(workspace, ["python3 check_answer.py"], rounds=2)
    session = make_session(provider, workspace, checks)
    await run(session, "write 42 to answer.txt")
    result = session.last_result
    assert result is not None
    assert result.stop == "error"
    error = result.error
    assert isinstance(error, ChecksFailed)
    assert error.is_recoverable()
    assert error.outcome.exit_code == 1
    assert error.rounds == 2
    assert "'python3 check_answer.py' failed (exit 1) after asking the model to fix it 2 times" in str(error)
    assert "answer.txt holds (missing)" in str(error)
    assert result.turns == 5  # the first answer, and two rounds of fixes each asked again once
    report = check_report(result)
    assert report is not None
    assert not report.passed
    assert report.rounds == 3
    # the history stays valid: the session takes another turn
    provider.add("hello")
    checks_off = await session.submit_turn("just say hello")
    assert checks_off.stop == "error"  # the checks apply to every turn of the bundle


async def test_checks_run_in_order_and_stop_at_the_first_failure(
    workspace: Workspace, tmp_path: Path
) -> None:
    provider = ScriptedProvider(["done"])
    checks = AcceptanceChecks(workspace, ["true", "false", "touch never.txt"], rounds=0)
    session = make_session(provider, workspace, checks)
    events = await run(session, "go")
    assert [e.command for e in events if isinstance(e, CheckStarted)] == ["true", "false"]
    result = session.last_result
    assert result is not None
    assert isinstance(result.error, ChecksFailed)
    assert result.error.outcome.command == "false"
    assert result.turns == 1
    assert not (tmp_path / "never.txt").exists()


async def test_a_check_past_its_timeout_is_killed_and_reported(workspace: Workspace) -> None:
    provider = ScriptedProvider(["done"])
    checks = AcceptanceChecks(workspace, ["sleep 30"], rounds=0, timeout=0.5)
    session = make_session(provider, workspace, checks)
    await run(session, "go")
    result = session.last_result
    assert result is not None
    assert isinstance(result.error, ChecksFailed)
    assert result.error.outcome.status == "timed out after 0.5s"
    assert result.error.outcome.exit_code is None


async def test_a_check_the_guard_refuses_fails_at_once_saying_to_fix_the_check(workspace: Workspace) -> None:
    provider = ScriptedProvider(["done"])
    session = make_session(provider, workspace, AcceptanceChecks(workspace, ["sudo true"], rounds=3))
    await run(session, "go")
    result = session.last_result
    assert result is not None
    assert isinstance(result.error, ChecksFailed)
    assert result.error.outcome.not_run
    assert result.turns == 1
    assert "could not run" in str(result.error)
    assert "Fix the check's command" in str(result.error)


async def test_cancelling_the_turn_kills_the_running_check(workspace: Workspace, tmp_path: Path) -> None:
    (tmp_path / "slow_check.py").write_text(
        "import pathlib, time\npathlib.Path('started').write_text('yes')\ntime.sleep(60)\n"
        "pathlib.Path('finished').write_text('yes')\n"
    )
    provider = ScriptedProvider(["done"])
    session = make_session(provider, workspace, AcceptanceChecks(workspace, ["python3 slow_check.py"]))
    async with anyio.create_task_group() as group:
        group.start_soon(session.submit_turn, "go")
        while not (tmp_path / "started").exists():  # noqa: ASYNC110  (the check runs in another process)
            await anyio.sleep(0.02)
        group.cancel_scope.cancel()
    result = session.last_result
    assert result is not None
    assert result.stop == "cancelled"
    assert isinstance(result.error, Cancelled)
    assert not (tmp_path / "finished").exists()
    provider.add("hello")  # the history is valid; with the checks passing now, the turn is done
    (tmp_path / "slow_check.py").write_text("print('ok')\n")
    assert (await session.submit_turn("again")).stop == "done"


async def test_a_turns_own_checks_join_the_capabilitys(workspace: Workspace, tmp_path: Path) -> None:
    provider = ScriptedProvider(["first", "second"])
    session = make_session(provider, workspace, AcceptanceChecks(workspace, rounds=0))
    with checks_for_turn(session, ["test -f marker.txt"]):
        first = await session.submit_turn("go")
    assert isinstance(first.error, ChecksFailed)
    assert first.error.outcome.command == "test -f marker.txt"
    second = await session.submit_turn("go")  # outside the block: no check, nothing reported
    assert second.stop == "done"
    assert check_report(second) is None


def test_bad_settings_are_refused_with_what_to_do(workspace: Workspace) -> None:
    with pytest.raises(TypeError, match=r"AcceptanceChecks\(workspace, \['pytest -q'\]\)"):
        AcceptanceChecks(workspace, "pytest -q")
    with pytest.raises(ValueError, match="rounds must be 0 or more"):
        AcceptanceChecks(workspace, ["true"], rounds=-1)
    with pytest.raises(ValueError, match="a check command is empty"):
        AcceptanceChecks(workspace, ["  "])


async def test_reads_before_a_failed_check_do_not_count_as_in_a_row_after_it(
    workspace: Workspace, tmp_path: Path
) -> None:
    (tmp_path / "answer.txt").write_text("41\n")
    read = tool_call_reply("read_file", {"path": "answer.txt"})
    provider = ScriptedProvider([
        read, read, "It is done.",  # two reads, then a claim the check refutes
        read, read,  # read again twice after the failure: not the third and fourth in a row
        tool_call_reply("write_file", {"path": "answer.txt", "content": "42\n"}), "Fixed it.",
    ])
    session = make_session(provider, workspace, AcceptanceChecks(workspace, ["python3 check_answer.py"]))
    await run(session, "make the answer right")
    result = session.last_result
    assert result is not None
    assert result.stop == "done"
    assert result.error is None
    assert (tmp_path / "answer.txt").read_text() == "42\n"


async def test_a_check_whose_program_does_not_exist_fails_at_once(workspace: Workspace) -> None:
    provider = ScriptedProvider(["Done.", "Done again."])
    session = make_session(provider, workspace, AcceptanceChecks(workspace, ["nosuchprogram --x"]))
    await run(session, "do it")
    result = session.last_result
    assert result is not None
    assert result.stop == "error"
    assert isinstance(result.error, ChecksFailed)
    report = check_report(result)
    assert report is not None
    assert report.outcomes[0].status.startswith("not run: the shell found no such command")
    assert result.turns == 1  # the model was not asked to fix the user's command


async def test_a_check_reads_the_answer_and_a_corrected_answer_passes(workspace: Workspace) -> None:
    # A question's answer is checked as files are: the check reads it on its standard input.
    provider = ScriptedProvider([
        "settings.py configures the server.",  # no codename: the check fails on the answer
        "settings.py configures the server; the release codename is heliotrope-5731.",
    ])
    checks = AcceptanceChecks(workspace, ["grep -q heliotrope-5731"])
    session = make_session(provider, workspace, checks)
    events = await run(session, "explain settings.py with its codename")
    result = session.last_result
    assert result is not None
    assert result.stop == "done", result.error
    assert result.turns == 2  # the new answer is a change: checked at once, not "nothing changed"
    report = check_report(result)
    assert report is not None
    assert report.passed
    assert report.outcomes[0].read_answer
    notes = [m.text for m in session.messages if isinstance(m, ContextNote)]
    assert len(notes) == 1
    assert "The check reads your answer: answer again, in full" in notes[0]
    assert "Change the files so that the check passes" not in notes[0]
    # no forced edit: ChangeFirst was not asked for one (a question is fixed by a new answer)
    assert provider.requests[1].tool_choice is None or provider.requests[1].tool_choice.mode != "any"
    assert [e.passed for e in events if isinstance(e, CheckFinished)] == [False, True]


async def test_the_same_wrong_answer_again_is_asked_for_a_correction_before_it_is_checked(
    workspace: Workspace,
) -> None:
    same = "It configures the server."
    provider = ScriptedProvider([same, same, "codename heliotrope-5731"])
    session = make_session(provider, workspace, AcceptanceChecks(workspace, ["grep -q heliotrope-5731"]))
    events = await run(session, "explain settings.py with its codename")
    result = session.last_result
    assert result is not None
    assert result.stop == "done", result.error
    notes = [m.text for m in session.messages if isinstance(m, ContextNote)]
    assert "Your answer is the same as when the check" in notes[1]
    asked = [e.why for e in events if isinstance(e, AskedAgain)]
    assert "it answered with the same answer since the check failed" in asked
    assert [e.passed for e in events if isinstance(e, CheckFinished)] == [False, True]


async def test_a_check_that_does_not_read_the_answer_asks_for_a_change_in_the_files(
    workspace: Workspace,
) -> None:
    provider = ScriptedProvider(["done", "done, really", "still done"])
    checks = AcceptanceChecks(workspace, ["python3 check_answer.py"], rounds=1)
    session = make_session(provider, workspace, checks)
    await run(session, "write 42 to answer.txt")
    notes = [m.text for m in session.messages if isinstance(m, ContextNote)]
    assert "Change the files so that the check passes" in notes[0]
    assert "Nothing in the workspace has changed" in notes[1]  # a new wording is no change to the files
    result = session.last_result
    assert result is not None
    assert isinstance(result.error, ChecksFailed)
    assert not result.error.outcome.read_answer
