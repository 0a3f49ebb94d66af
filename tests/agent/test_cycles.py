"""Loop guards against small models going round in circles (issue 18 cycles, issue 14 repetition).

The replies are shaped like those of a 1.5B coding model served by llama.cpp: tool calls written as
JSON in the text (text mode), alternating read/list, read/patch/run/write loops, and the same call
made again right after its result. The tools are the real workspace tools on a tmp directory.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agcore.agent import AgentConfig, LimitExceeded
from agcore.agent._batch import Batch
from agcore.agent._cycles import CycleTracker, describe_call, repeat_verdict
from agcore.agent._turn import TurnState
from agcore.llm import ToolResultBlock, ToolUseBlock
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools.workspace import Workspace

from .test_loop_basic import assert_history_valid, make_session, results_of

pytestmark = pytest.mark.anyio


def fenced(name: str, arguments: dict[str, Any]) -> str:
    """A call the way small models write it in text mode: a sentence, then a fenced JSON object."""
    return f"I will use {name}.\n```json\n" + json.dumps({"name": name, "arguments": arguments}) + "\n```"


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    (tmp_path / "main.py").write_text("print('hello')\n")
    (tmp_path / "util.py").write_text("def add(a, b):\n    return a - b\n")
    return Workspace(tmp_path, confirm_writes=False, confirm_commands=False)


def text_config(**changes: Any) -> AgentConfig:
    return AgentConfig(text_mode_tools=True, **changes)


async def test_alternating_read_list_is_nudged_then_stopped(space: Workspace) -> None:
    read = fenced("read_file", {"path": "main.py"})
    listing = fenced("list_dir", {"path": "."})
    model = ScriptedProvider([read, listing] * 4 + ["never reached"])
    session = make_session(model, *space.tools(), config=text_config())
    result = await session.submit_turn("explain main.py")
    assert result.stop == "limit"
    assert isinstance(result.error, LimitExceeded)
    assert result.error.limit == "repetition_limit"
    message = str(result.error)
    assert 'read_file({"path":"main.py"})' in message
    assert 'list_dir({"path":"."})' in message
    assert "same 2 tool calls" in message
    # Every call ran (nothing was refused), the 4th result carries the nudge, the 6th pass stopped it.
    results = results_of(session)
    assert len(results) == 6
    assert model.calls == 6
    assert "[Note from the runtime" not in results[2].text
    nudge = results[3].text
    assert "same 2 calls twice in a row" in nudge
    assert "read_file" in nudge
    assert "list_dir" in nudge
    assert "no new information" in nudge
    assert "Note from the runtime" not in results[5].text  # the stop is told to the user, not the model
    assert_history_valid(session)


async def test_nudge_that_works_lets_the_turn_finish(space: Workspace) -> None:
    read = fenced("read_file", {"path": "main.py"})
    listing = fenced("list_dir", {"path": "."})
    model = ScriptedProvider([read, listing, read, listing, "main.py prints hello."])
    session = make_session(model, *space.tools(), config=text_config())
    result = await session.submit_turn("explain main.py")
    assert result.stop == "done"
    assert result.text == "main.py prints hello."
    assert "Note from the runtime" in results_of(session)[3].text


async def test_four_call_loop_read_patch_run_write(space: Workspace) -> None:
    bad_patch = (
        "--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a + c\n"
        "+    return a + b\n"
    )
    original = (space.root / "util.py").read_text()
    round_ = [
        tool_call_reply("read_file", {"path": "util.py"}),
        tool_call_reply("apply_patch", {"patch": bad_patch}),
        tool_call_reply("run_command", {"command": [sys.executable, "-c", "import util; util.add(1, 1)"]}),
        tool_call_reply("write_file", {"path": "util.py", "content": original}),
    ]
    model = ScriptedProvider(round_ * 3 + ["never reached"])
    session = make_session(model, *space.tools(), config=AgentConfig())
    result = await session.submit_turn("fix util.add")
    assert isinstance(result.error, LimitExceeded)
    message = str(result.error)
    for name in ("read_file", "apply_patch", "run_command", "write_file"):
        assert name in message
    results = results_of(session)
    assert model.calls == 12
    assert len(results) == 12
    nudge = results[7].text
    assert "same 4 calls twice in a row" in nudge
    # The patch and the command failed: the model is told to read the errors, not to wrap up.
    assert "fail the same way each time" in nudge
    assert "use the results you have" not in nudge
    assert_history_valid(session)


async def test_new_information_is_not_a_cycle(space: Workspace) -> None:
    # read/write/read/write, but every write changes the file: each read says something new.
    replies: list[Any] = []
    for i in range(4):
        replies.append(tool_call_reply("read_file", {"path": "main.py"}))
        replies.append(tool_call_reply("write_file", {"path": "main.py", "content": f"print({i})\n"}))
    model = ScriptedProvider([*replies, "done"])
    session = make_session(model, *space.tools())
    result = await session.submit_turn("count")
    assert result.stop == "done"
    assert not any("Note from the runtime" in r.text for r in results_of(session))


async def test_stop_action_stops_at_the_first_cycle(space: Workspace) -> None:
    read = fenced("read_file", {"path": "main.py"})
    listing = fenced("list_dir", {"path": "."})
    model = ScriptedProvider([read, listing] * 3)
    session = make_session(model, *space.tools(), config=text_config(repetition_action="stop"))
    result = await session.submit_turn("explain main.py")
    assert isinstance(result.error, LimitExceeded)
    assert model.calls == 4


async def test_calls_in_one_reply_cycle_too(space: Workspace) -> None:
    both = [("read_file", {"path": "main.py"}), ("list_dir", {"path": "."})]
    from agcore.testing import tool_calls_reply

    model = ScriptedProvider([tool_calls_reply(both)] * 3 + ["never"])
    session = make_session(model, *space.tools())
    result = await session.submit_turn("look around")
    assert isinstance(result.error, LimitExceeded)
    assert model.calls == 3
    assert "Note from the runtime" in results_of(session)[3].text


# ----------------------------------------------------- the same call right after its result


async def test_small_model_repeating_a_call_is_nudged_then_stopped(space: Workspace) -> None:
    """The default (repetition_limit=3, repetition_action="nudge"): the 3rd identical call in a row
    is not run but answered with a nudge; a 4th stops the turn, naming the call."""
    read = fenced("read_file", {"path": "main.py"})
    model = ScriptedProvider([read] * 6)
    session = make_session(model, *space.tools(), config=text_config())
    assert session.bundle.config().repetition_limit == 3
    result = await session.submit_turn("explain main.py")
    results = results_of(session)
    assert [r.is_error for r in results] == [False, False, True, True]
    assert "1\tprint('hello')" in results[0].text
    assert "3 times in a row" in results[2].text
    assert "Use the earlier result" in results[2].text
    assert isinstance(result.error, LimitExceeded)
    assert model.calls == 4
    assert 'read_file({"path":"main.py"})' in str(result.error)
    assert_history_valid(session)


async def test_repeating_a_failing_call_is_not_told_to_use_the_result(space: Workspace) -> None:
    missing = fenced("read_file", {"path": "src/main.py"})
    model = ScriptedProvider([missing, missing, missing, "I will list the files first."])
    session = make_session(model, *space.tools(), config=text_config())
    result = await session.submit_turn("explain main.py")
    assert result.stop == "done"
    results = results_of(session)
    assert results[0].is_error
    assert results[1].is_error
    nudge = results[2].text
    assert "failed the same way" in nudge
    assert "Read the error message" in nudge
    assert "Use the earlier result" not in nudge


# ----------------------------------------------------------------------------------- units


def call(name: str, **arguments: Any) -> ToolUseBlock:
    return ToolUseBlock(id=f"c_{name}", name=name, input=arguments)


def ok(text: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id="x", content=text)


def test_repeat_verdict() -> None:
    assert [repeat_verdict(n, 3, "nudge") for n in (1, 2, 3, 4)] == ["run", "run", "nudge", "stop"]
    assert [repeat_verdict(n, 2, "stop") for n in (1, 2)] == ["run", "stop"]


def test_describe_call_is_short() -> None:
    assert describe_call(call("list_dir")) == "list_dir()"
    long = describe_call(call("write_file", path="a.py", content="x" * 500))
    assert long.startswith('write_file({"content":"xxx')
    assert len(long) < 80


def test_rotated_cycle_after_a_nudge_is_the_same_cycle() -> None:
    tracker = CycleTracker()
    config = AgentConfig()
    a, b = (call("read_file", path="a"), ok("A")), (call("list_dir"), ok("B"))
    found = []
    for pair in (a, b, a, b, a, b):
        tracker.add(*pair)
        found.append(tracker.check(config))
    assert found[:3] == [None, None, None]
    assert found[3] is not None
    assert not found[3].stop
    assert found[4] is None  # B, A, B, A is the same cycle, inside the pass after the nudge
    assert found[5] is not None
    assert found[5].stop


def test_cycle_state_survives_a_pause() -> None:
    tracker = CycleTracker()
    config = AgentConfig()
    for pair in ((call("read_file", path="a"), ok("A")), (call("list_dir"), ok("B"))) * 2:
        tracker.add(*pair)
    assert tracker.check(config) is not None
    state = TurnState(start=0, cycles=tracker)
    state.batch = Batch([])
    restored = TurnState.from_json(json.loads(json.dumps(state.to_json())), 10)
    for pair in ((call("read_file", path="a"), ok("A")), (call("list_dir"), ok("B"))):
        restored.cycles.add(*pair)
    again = restored.cycles.check(config)
    assert again is not None
    assert again.stop


def test_blocks_longer_than_max_period_are_not_cycles() -> None:
    tracker = CycleTracker()
    labels = [(call("read_file", path=str(i)), ok(str(i))) for i in range(5)]
    for pair in labels * 2:  # a block of 5 is longer than MAX_PERIOD: not reported
        tracker.add(*pair)
    assert tracker.check(AgentConfig()) is None
