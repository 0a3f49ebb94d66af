"""Per-tool retries of any exception (``retry_on``), as seed 004's loop retries every failure with a
delay; the default (only ``RetryableToolError``) is unchanged."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from agcore.agent import AgentBuilder, AgentSession, BasicAgent, ToolResults
from agcore.llm.types import ToolUseBlock
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import Tool, ToolContext, ToolDenied, ToolRegistry, tool

pytestmark = pytest.mark.anyio


def call(name: str) -> ToolUseBlock:
    return ToolUseBlock(id="call_1", name=name, input={})


def failing(failures: int, error: Exception, **options: Any) -> tuple[Tool, list[float]]:
    """A sync tool (run in a worker thread) failing ``failures`` times with ``error``."""
    runs: list[float] = []

    def fetch() -> str:
        runs.append(time.perf_counter())
        if len(runs) <= failures:
            raise error
        return f"ok after {len(runs)}"

    return Tool.from_function(fetch, **options), runs


async def test_any_exception_is_retried_with_the_delay() -> None:
    fetch, runs = failing(2, ConnectionResetError("peer reset"), max_retries=3, retry_on=Exception,
                          retry_delay=0.05)
    detail = await ToolRegistry([fetch]).execute_detailed(call("fetch"), ToolContext())
    assert (detail.status, detail.attempts, detail.result.content) == ("ok", 3, "ok after 3")
    assert runs[1] - runs[0] >= 0.05
    assert runs[2] - runs[1] >= 0.05


async def test_exhausted_retries_say_how_many_attempts() -> None:
    fetch, runs = failing(10, ValueError("bad page"), max_retries=2, retry_on=Exception)
    detail = await ToolRegistry([fetch]).execute_detailed(call("fetch"), ToolContext())
    assert len(runs) == 3
    assert (detail.status, detail.attempts) == ("error", 3)
    assert detail.result.is_error
    assert detail.result.content == "Tool 'fetch' raised ValueError (after 3 attempts): bad page"
    assert isinstance(detail.error, ValueError)


async def test_only_the_named_exceptions_are_retried() -> None:
    fetch, runs = failing(10, ValueError("bad"), max_retries=3, retry_on=(OSError, TimeoutError))
    detail = await ToolRegistry([fetch]).execute_detailed(call("fetch"), ToolContext())
    assert len(runs) == 1
    assert detail.result.content == "Tool 'fetch' raised ValueError: bad"


async def test_the_default_retries_no_ordinary_exception() -> None:
    fetch, runs = failing(10, OSError("disk"), max_retries=3)
    detail = await ToolRegistry([fetch]).execute_detailed(call("fetch"), ToolContext())
    assert (len(runs), detail.attempts, detail.status) == (1, 1, "error")


async def test_a_denial_is_never_retried() -> None:
    fetch, runs = failing(10, ToolDenied("not in this folder"), max_retries=3, retry_on=Exception)
    detail = await ToolRegistry([fetch]).execute_detailed(call("fetch"), ToolContext())
    assert (len(runs), detail.status) == (1, "denied")


async def test_timeouts_retry_when_timeout_error_is_named() -> None:
    runs: list[int] = []

    @tool(timeout=0.05, max_retries=2, retry_on=TimeoutError)
    async def slow() -> str:
        runs.append(1)
        if len(runs) < 3:
            await anyio.sleep(10)
        return "finally"

    with anyio.fail_after(5):
        detail = await ToolRegistry([slow]).execute_detailed(call("slow"), ToolContext())
    assert (detail.status, detail.attempts, detail.result.content) == ("ok", 3, "finally")

    @tool(timeout=0.05, max_retries=1, retry_on=Exception)  # TimeoutError is an Exception too
    async def stuck() -> str:
        await anyio.sleep(10)
        return "never"

    with anyio.fail_after(5):
        detail = await ToolRegistry([stuck]).execute_detailed(call("stuck"), ToolContext())
    assert (detail.status, detail.attempts) == ("timeout", 2)
    assert "(each of 2 attempts)" in str(detail.result.content)

    @tool(timeout=0.05, max_retries=3)  # the default: a timeout is reported at once
    async def once() -> str:
        await anyio.sleep(10)
        return "never"

    detail = await ToolRegistry([once]).execute_detailed(call("once"), ToolContext())
    assert (detail.status, detail.attempts) == ("timeout", 1)


def test_retry_on_takes_exception_classes_only() -> None:
    with pytest.raises(TypeError, match="retry_on takes Exception classes"):
        Tool.from_function(lambda: "x", name="x", retry_on=KeyboardInterrupt)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not 'oops'"):
        Tool.from_function(lambda: "x", name="x", retry_on=(OSError, "oops"))  # type: ignore[arg-type]
    assert Tool.from_function(lambda: "x", name="x", retry_on=OSError).retry_on == (OSError,)


async def test_the_model_sees_only_the_successful_result() -> None:
    fetch, runs = failing(2, RuntimeError("flaky backend"), max_retries=2, retry_on=Exception)
    model = ScriptedProvider([tool_call_reply("fetch", {}), "Fetched."])
    session = AgentSession(BasicAgent("a"), "s1", AgentBuilder().provider(model).tools(fetch).build())
    result = await session.submit_turn("fetch it")
    assert result.text == "Fetched."
    results = [r for m in session.messages if isinstance(m, ToolResults) for r in m.results]
    assert [(r.content, r.is_error) for r in results] == [("ok after 3", False)]
    assert len(runs) == 3
