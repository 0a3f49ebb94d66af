"""The user's "do not change FILE" is kept by the runtime: a changing call aimed at that file is
refused before it runs, saying why; reads and other files go on. Real sessions on scripted providers,
the real workspace tools in a tmp directory, asyncio and trio."""

from __future__ import annotations

from pathlib import Path

import pytest

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, ToolResults, hands_off_files
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools.workspace import Workspace

pytestmark = pytest.mark.anyio

TEST = "def test_one():\n    assert 1 == 1\n"
PATCH = "--- a/test_calc.py\n+++ b/test_calc.py\n@@ -1 +1 @@\n-x\n+y\n"
TASK = "`pytest -q test_calc.py` fails. Fix the bug in calc.py (do not change test_calc.py)."


@pytest.mark.parametrize(("text", "files"), [
    (TASK, ["test_calc.py"]),
    ("Fix it without modifying `tests/test_x.py`, and don't touch setup.cfg.",
     ["setup.cfg", "tests/test_x.py"]),
    ("Leave the file README.md unchanged. Never overwrite ./data.json", ["data.json", "README.md"]),
    ("Change the port in config.ini; do not change anything else.", []),
    ("Rename get_usr in users.py and update every use of it in app.py.", []),
])
def test_the_files_a_request_says_not_to_change(text: str, files: list[str]) -> None:
    assert sorted(hands_off_files(text)) == sorted(files)


async def test_a_change_to_a_file_the_user_said_not_to_change_is_refused(tmp_path: Path) -> None:
    (tmp_path / "test_calc.py").write_text(TEST)
    (tmp_path / "calc.py").write_text("X = 1\n")
    workspace = Workspace(tmp_path, confirm_commands=False, confirm_writes=False)
    model = ScriptedProvider([
        tool_call_reply("read_file", {"path": "test_calc.py"}),  # reading it is fine
        tool_call_reply("edit_file", {"path": "./test_calc.py", "old": "1 == 1", "new": "2 == 2"}),
        tool_call_reply("apply_patch", {"patch": PATCH}),
        tool_call_reply("read_file", {"path": "calc.py"}),
        tool_call_reply("write_file", {"path": "calc.py", "content": "X = 2\n"}),
        "Fixed calc.py.",
    ])
    bundle = AgentBuilder().provider(model).tools(workspace.tools()).build()
    session = AgentSession(BasicAgent(name="coder", system_prompt="You code."), "s1", bundle)
    result = await session.submit_turn(TASK)
    assert result.stop == "done"
    results = [r for m in session.messages if isinstance(m, ToolResults) for r in m.results]
    read, edit, patch, _, write = results
    assert not read.is_error
    for refused in (edit, patch):
        assert refused.is_error
        assert refused.text.startswith("Not run: the user asked not to change ")
        assert "make the change in another file" in refused.text
    assert not write.is_error
    assert (tmp_path / "test_calc.py").read_text() == TEST
    assert (tmp_path / "calc.py").read_text() == "X = 2\n"
    model.add(tool_call_reply("edit_file", {"path": "test_calc.py", "old": "1 == 1", "new": "2 == 2"}))
    model.add("Changed the test.")
    await session.submit_turn("Now change test_calc.py so that it checks 2 == 2.")  # a new request: allowed
    assert (tmp_path / "test_calc.py").read_text() == "def test_one():\n    assert 2 == 2\n"
