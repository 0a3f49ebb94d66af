"""Committed histories of agcore's workflows replay with the current code: a change to the loop, the
workflows or the data they exchange that would break workflows already running fails here.
Regenerate (on purpose only) with ``python -m tests.integrations.temporal.golden``.

Temporal's SDK is asyncio-only: these tests run on asyncio only (see conftest.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from temporalio.client import WorkflowHistory
from temporalio.workflow import NondeterminismError

from agcore.integrations.temporal import create_replayer

pytestmark = pytest.mark.anyio

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def test_the_golden_histories_are_there() -> None:
    # session_memo_at_turn_start was recorded by the code before a turn stopped publishing "busy"
    # (two memo updates per turn, the status memo marker set); golden.py does not regenerate it.
    assert {p.stem for p in HISTORIES} == {
        "session_tools", "session_confirm_client", "plan", "session_memo_at_turn_start",
    }


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
async def test_a_golden_history_replays(path: Path) -> None:
    history = WorkflowHistory.from_json(path.stem, await anyio.Path(path).read_text())
    result = await create_replayer().replay_workflow(history)
    assert result.replay_failure is None


async def test_a_history_the_code_would_not_produce_fails_to_replay() -> None:
    path = next(p for p in HISTORIES if p.stem == "session_tools")
    data = json.loads(path.read_text())
    for event in data["events"]:
        attributes = event.get("activityTaskScheduledEventAttributes")
        if attributes and attributes["activityType"]["name"] == "agcore.tool_call":
            attributes["activityType"]["name"] = "agcore.llm_call"
            break
    history = WorkflowHistory.from_json("tampered", json.dumps(data))
    with pytest.raises(NondeterminismError):
        await create_replayer().replay_workflow(history)
