"""The seeded fault campaign's fast subset (issue 17): multi-turn sessions with tools through
``AgentSession``, complete and streaming, on the Anthropic, OpenAI and Ollama wire formats, against
``bench.chaos_vendor.ChaosVendor`` on loopback, with every provider and tool fault the campaign
knows injected at least once, mixed. The invariants (``bench/_fault_session.py``) are checked after
every turn, and each session is saved as it runs in a SQLite session store that must hold what the
session holds; the full campaign with its figures is ``bench/faults.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from agcore.agent import TurnResult
from bench._fault_checks import check_requests
from bench._fault_session import SLOW_SECONDS, SessionPlan, TurnPlan, run_session
from bench.chaos_vendor import ChaosVendor, Served
from bench.faults import ALL_FAULTS, Figures, plan_campaign, run_campaign

pytestmark = pytest.mark.anyio

SEED = 17
SESSIONS = 36  # six of each vendor x (complete, streaming): enough for every fault to come up


@pytest.fixture(scope="module")
def server() -> Iterator[ChaosVendor]:
    with ChaosVendor(slow_seconds=SLOW_SECONDS) as chaos:
        yield chaos


async def test_seeded_subset_holds_every_invariant_under_every_fault(
    server: ChaosVendor, anyio_backend: str, tmp_path: Path
) -> None:
    plans = plan_campaign(SEED, SESSIONS)
    for plan in plans:
        plan.key += f"@{anyio_backend}"
    figures = Figures()
    figures.add(await run_campaign(server, plans, concurrency=8, store_path=tmp_path / "sessions.db"))
    assert figures.violations == []
    missing = [fault for fault in ALL_FAULTS if not figures.injected[fault]]
    assert missing == [], f"faults never injected by this seed: {missing}"
    assert figures.held == figures.injected


async def test_exhausted_retries_end_the_turn_and_the_next_turn_succeeds(
    server: ChaosVendor, anyio_backend: str
) -> None:
    plan = SessionPlan(
        key=f"exhausted@{anyio_backend}",
        vendor="openai",
        streaming=False,
        seed=1,
        turns=[
            TurnPlan(faults=["502", "503", "500"], tools=["lookup"]),
            TurnPlan(faults=[], tools=["lookup"]),
        ],
    )
    report = await run_session(server, plan)
    assert report.violations == []
    first, last = report.turns
    assert first.faults == ["502", "503", "500"]  # three attempts (the retry budget), then the turn failed
    assert last.faults == []
    assert last.requests == 2  # the tool call, then the answer


def test_the_checks_catch_a_retryable_fault_that_was_not_retried() -> None:
    """The campaign's checks can fail: a 502 followed by a new model call (not a retry) and a wait
    shorter than the server's retry-after are both reported."""
    session = SimpleNamespace(last_result=TurnResult(stop="done"))
    not_retried = [
        Served(index=0, vendor="openai", stream=False, fault="502", digest="a"),
        Served(index=1, vendor="openai", stream=False, fault="ok", digest="b", delivered=True),
    ]
    violations = check_requests(not_retried, [], session)
    assert "request 0: 502 (retryable) was not retried" in violations
    too_soon = [
        Served(index=0, vendor="openai", stream=False, fault="429_seconds", digest="a", retry_after=7.0),
        Served(index=1, vendor="openai", stream=False, fault="ok", digest="a", delivered=True),
    ]
    assert check_requests(too_soon, [0.5], session) == ["retried after 0.50s where the server asked for 7s"]


def test_the_server_rejects_a_history_a_real_endpoint_would_reject(server: ChaosVendor) -> None:
    body = {
        "model": "claude-haiku-4-5",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}],
            },
            {"role": "user", "content": "and now?"},
        ],
    }
    url = server.base_url("history", "anthropic") + "/v1/messages"
    response = httpx.post(url, json=body, headers={"x-api-key": "k", "anthropic-version": "2023-06-01"})
    assert response.status_code == 400
    assert "tool_use ids" in json.loads(response.content)["error"]["message"]
    (served,) = server.log("history")
    assert served.history_error is not None
    assert served.fault == "rejected_history"
