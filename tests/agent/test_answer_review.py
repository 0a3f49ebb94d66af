"""Without acceptance checks, "done" is reviewed: a separate short request shows the task, the calls
that succeeded, the changed files and the answer, and asks what is missing. Not done: the model is
told and goes on; still not done, the turn fails (``ReviewFailed``), never "done".

Real sessions on scripted providers (the review is the scripted model's next reply, as it would be
the session's model), the real workspace tools in a tmp directory, asyncio and trio."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from agcore.agent import (
    REVIEW_PROMPT,
    AcceptanceChecks,
    AgentBuilder,
    AgentSession,
    AnswerReview,
    BasicAgent,
    ContextNote,
    ReviewFailed,
    review_requests,
    review_verdict,
)
from agcore.cli._render import outcome_words
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools.workspace import Workspace

pytestmark = pytest.mark.anyio

TASK = "Write the names of the Python files in src into files.txt, one per line."
WRITE_NAMES = tool_call_reply("write_file", {"path": "files.txt", "content": "alpha.py\nbeta.py\n"})
WRITE_PLACEHOLDER = tool_call_reply("write_file", {"path": "files.txt", "content": "the names\n"})
DONE = json.dumps({"missing": "", "done": True})
NOT_DONE = json.dumps({"missing": "files.txt holds no file names", "done": False})


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "src").mkdir()
    for name in ("alpha.py", "beta.py"):
        (tmp_path / "src" / name).write_text("A = 1\n")
    return Workspace(tmp_path, confirm_commands=False, confirm_writes=False)


def make_session(model: ScriptedProvider, workspace: Workspace, *extra: object) -> AgentSession:
    bundle = (AgentBuilder().provider(model).tools(workspace.tools())
              .capabilities(AnswerReview(workspace), *extra).build())  # type: ignore[arg-type]
    session = AgentSession(BasicAgent(name="coder", system_prompt="You code."), "s1", bundle)
    session.state.created_at = time.time() - 60  # a file system's coarse clock may lag time.time()
    return session


def notes(session: AgentSession) -> list[str]:
    return [m.text for m in session.messages if isinstance(m, ContextNote)]


async def test_work_the_review_finds_done_ends_done_and_says_reviewed(workspace: Workspace) -> None:
    model = ScriptedProvider([WRITE_NAMES, "files.txt lists alpha.py and beta.py.", DONE])
    session = make_session(model, workspace)
    result = await session.submit_turn(TASK)
    assert result.stop == "done"
    assert result.text == "files.txt lists alpha.py and beta.py."
    assert review_verdict(result) == "done"
    assert review_requests(result) == 1
    assert outcome_words(result) == "✓ done · reviewed"
    review = model.requests[-1]
    assert review.system == REVIEW_PROMPT
    assert review.response_format is not None
    asked = str(review.messages[-1].content)
    assert TASK in asked
    assert 'write_file({"path": "files.txt"' in asked  # the call that succeeded, with its result
    assert "-> Created 'files.txt'" in asked
    assert "--- files.txt ---\nalpha.py\nbeta.py" in asked  # the file as it is now
    assert "files.txt lists alpha.py and beta.py." in asked


async def test_work_the_review_finds_missing_goes_on_and_ends_done_once_there(workspace: Workspace) -> None:
    model = ScriptedProvider([
        WRITE_PLACEHOLDER, "I wrote the names into files.txt.", NOT_DONE,
        tool_call_reply("read_file", {"path": "files.txt"}), WRITE_NAMES, "files.txt now lists them.", DONE,
    ])
    session = make_session(model, workspace)
    result = await session.submit_turn(TASK)
    assert result.stop == "done"
    assert result.text == "files.txt now lists them."
    (note,) = notes(session)
    assert "A review of your work says the task is not done yet: files.txt holds no file names." in note
    assert (workspace.root / "files.txt").read_text() == "alpha.py\nbeta.py\n"


async def test_work_still_not_done_after_the_model_was_told_fails_saying_what_is_missing(
    workspace: Workspace,
) -> None:
    model = ScriptedProvider([WRITE_PLACEHOLDER, "Done.", NOT_DONE, "It is done.", NOT_DONE])
    session = make_session(model, workspace)
    result = await session.submit_turn(TASK)
    assert result.stop == "error"
    assert isinstance(result.error, ReviewFailed)
    assert result.error.missing == "files.txt holds no file names"
    assert "found the task not done (files.txt holds no file names)" in str(result.error)
    assert result.error.is_recoverable()
    assert review_requests(result) == 2
    assert outcome_words(result) == "✗ failed · review: files.txt holds no file names"
    model.add("Nothing more.")  # the history stays valid: a chat answer with no tool call is not reviewed
    assert (await session.submit_turn("Anything else?")).stop == "done"


async def test_no_review_without_tool_work_with_checks_or_when_the_verdict_is_unreadable(
    workspace: Workspace,
) -> None:
    model = ScriptedProvider(["Hello."])
    session = make_session(model, workspace)
    result = await session.submit_turn("Say hello.")
    assert (result.stop, review_verdict(result), len(model.requests)) == ("done", None, 1)
    assert outcome_words(result) == "✓ done (unchecked) · no tool call succeeded"

    model = ScriptedProvider([WRITE_NAMES, "Done."])
    checks = AcceptanceChecks(workspace, ["test -s files.txt"])
    result = await make_session(model, workspace, checks).submit_turn(TASK)
    assert (result.stop, review_verdict(result), len(model.requests)) == ("done", None, 2)
    assert outcome_words(result) == "✓ done · checks passed"

    model = ScriptedProvider([WRITE_NAMES, "Done.", "I think it looks fine"])
    result = await make_session(model, workspace).submit_turn(TASK)
    assert (result.stop, review_verdict(result)) == ("done", "unreviewed")
    assert outcome_words(result) == "✓ done (unchecked)"


def test_rounds_must_not_be_negative(workspace: Workspace) -> None:
    with pytest.raises(ValueError, match="rounds must be 0 or more"):
        AnswerReview(workspace, rounds=-1)


async def test_the_reviewer_reads_a_tools_own_warning(workspace: Workspace) -> None:
    (workspace.root / "app.py").write_text("from users import get_usr\n\nNAME = get_usr(1)\n")
    model = ScriptedProvider([
        tool_call_reply("read_file", {"path": "app.py"}),
        tool_call_reply("edit_file", {"path": "app.py", "old": "get_usr(1)", "new": "get_user(1)"}),
        "Renamed get_usr to get_user in app.py.", NOT_DONE, "Nothing more to do.", NOT_DONE,
    ])
    result = await make_session(model, workspace).submit_turn("Rename get_usr to get_user in app.py.")
    assert isinstance(result.error, ReviewFailed)
    asked = str(model.requests[3].messages[-1].content)
    assert "-> Edited 'app.py'" in asked
    assert "Note: 'get_usr' (line 1), which this edit replaced, still appears in 'app.py'" in asked
    assert "--- app.py ---\nfrom users import get_usr\n\nNAME = get_user(1)" in asked
