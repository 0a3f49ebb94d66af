"""``ToolRegistry``: registration, lookup, definitions, and ``execute()``'s never-raise contract."""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agcore.llm.types import ImageBlock, TextBlock, ToolDefinition, ToolResultBlock, ToolUseBlock
from agcore.tools import (
    RetryableToolError,
    Tool,
    ToolContext,
    ToolDenied,
    ToolError,
    ToolNameCollisionError,
    ToolProgress,
    ToolRegistry,
    UnknownToolError,
    tool,
)

PNG = ImageBlock(media_type="image/png", data="iVBORw0KGgo=")


def call(name: str, arguments: dict[str, Any] | None = None, *, id: str = "call_1") -> ToolUseBlock:
    return ToolUseBlock(id=id, name=name, input=arguments or {})


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def read_file(path: str, start_line: int = 1) -> str:
    """Read a file."""
    return f"{path}:{start_line}"


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown, so worker threads abandoned by a test finish at once."""
    event = threading.Event()
    yield event
    event.set()


# ------------------------------------------------------------------------------------ registration


def test_register_tools_and_functions() -> None:
    def ping() -> str:
        """Ping."""
        return "pong"

    registry = ToolRegistry([add])
    registered = registry.register(ping)
    assert isinstance(registered, Tool)
    assert registry.names() == ["add", "ping"]
    assert len(registry) == 2
    assert "ping" in registry
    assert "nope" not in registry
    assert [t.name for t in registry] == ["add", "ping"]
    assert registry["add"] is add
    assert registry.get("nope") is None


def test_name_collision_and_replace() -> None:
    registry = ToolRegistry([add])

    @tool(name="add")
    def other_add(a: int) -> int:
        return a

    with pytest.raises(ToolNameCollisionError, match=r"'add' is already registered.*replace=True") as info:
        registry.register(other_add)
    assert isinstance(info.value, ValueError)
    assert registry["add"] is add
    assert registry.register(other_add, replace=True) is other_add
    assert registry["add"] is other_add


def test_unregister() -> None:
    registry = ToolRegistry([add, read_file])
    assert registry.unregister("add") is add
    assert registry.names() == ["read_file"]
    with pytest.raises(UnknownToolError, match="'add'") as info:
        registry.unregister("add")
    assert isinstance(info.value, KeyError)
    with pytest.raises(KeyError):
        registry["add"]


def test_client_tools_classify_and_collide() -> None:
    registry = ToolRegistry([add])
    show = registry.register_client_tool(ToolDefinition(name="show_photos", description="Show photos."))
    assert show.mode == "client"
    assert registry.classify("show_photos") == "client"
    assert registry.classify("add") == "server"
    assert registry.classify("missing") == "unknown"
    with pytest.raises(ToolNameCollisionError):
        registry.register_client_tool(ToolDefinition(name="add"))
    # a server Tool handed over as a client tool keeps only its definition
    as_client = registry.register_client_tool(read_file)
    assert as_client.mode == "client"
    assert as_client.definition() == read_file.definition()


def test_merge_client_definitions_replaces_client_tools_and_refuses_server_names() -> None:
    registry = ToolRegistry([add])
    registry.merge_client_definitions([ToolDefinition(name="pick_date", description="v1")])
    merged = registry.merge_client_definitions(
        [ToolDefinition(name="pick_date", description="v2"), ToolDefinition(name="share")]
    )
    assert [t.name for t in merged] == ["pick_date", "share"]
    assert registry["pick_date"].description == "v2"
    with pytest.raises(ToolNameCollisionError, match=r"'add'.*server tool"):
        registry.merge_client_definitions([ToolDefinition(name="notify"), ToolDefinition(name="add")])
    assert "notify" not in registry  # all or nothing
    assert registry["add"] is add


def test_definitions_filtering() -> None:
    registry = ToolRegistry([add, read_file])
    registry.register_client_tool(ToolDefinition(name="show"))
    assert [d.name for d in registry.definitions()] == ["add", "read_file", "show"]
    assert [d.name for d in registry.definitions(mode="server")] == ["add", "read_file"]
    assert [d.name for d in registry.definitions(mode="client")] == ["show"]
    assert [d.name for d in registry.definitions(names=["show", "add", "show"])] == ["show", "add"]
    assert [d.name for d in registry.definitions(predicate=lambda t: t.name.startswith("r"))] == ["read_file"]
    assert registry.definitions(names=["add"], mode="client") == []
    assert registry.definitions()[0] == add.definition()
    with pytest.raises(UnknownToolError, match="Did you mean 'add'"):
        registry.definitions(names=["ad"])


def test_default_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="default_timeout"):
        ToolRegistry(default_timeout=0)


# --------------------------------------------------------------------------------- execute: success


@pytest.mark.anyio
async def test_execute_returns_a_result_block() -> None:
    registry = ToolRegistry([add])
    result = await registry.execute(call("add", {"a": 2, "b": "3"}, id="toolu_9"), ToolContext())
    assert result == ToolResultBlock(tool_use_id="toolu_9", content="5", is_error=False)


@pytest.mark.anyio
async def test_execute_passes_content_blocks_and_model_json() -> None:
    class Weather(BaseModel):
        city: str
        celsius: float

    @tool
    def weather(city: str) -> Weather:
        return Weather(city=city, celsius=18)

    @tool
    async def screenshot() -> list[TextBlock | ImageBlock]:
        return [TextBlock(text="the page"), PNG]

    registry = ToolRegistry([weather, screenshot])
    result = await registry.execute(call("weather", {"city": "Paris"}), ToolContext())
    assert result.content == '{"city":"Paris","celsius":18.0}'
    result = await registry.execute(call("screenshot"), ToolContext())
    assert result.content == [TextBlock(text="the page"), PNG]
    assert result.is_error is False


@pytest.mark.anyio
async def test_execute_injects_context_and_forwards_progress() -> None:
    seen: list[ToolProgress] = []

    @tool
    async def index(folder: str, ctx: ToolContext) -> str:
        await ctx.report_progress("scanning", fraction=0.5)
        return f"{ctx.session_id}:{ctx.tool_call_id}:{ctx.tool_name}:{ctx.require('store')}:{folder}"

    registry = ToolRegistry([index])
    ctx = ToolContext(session_id="s1", dependencies={"store": "sqlite"}, progress=seen.append)
    result = await registry.execute(call("index", {"folder": "docs"}, id="c7"), ctx)
    assert result.content == "s1:c7:index:sqlite:docs"
    assert seen == [ToolProgress(tool_call_id="c7", tool_name="index", message="scanning", fraction=0.5)]
    assert ctx.tool_call_id == ""  # the caller's context is not modified


@pytest.mark.anyio
async def test_execute_truncates_long_output() -> None:
    @tool(max_output_chars=100)
    def dump() -> str:
        return "z" * 1_234

    result = await ToolRegistry([dump]).execute(call("dump"), ToolContext())
    assert result.is_error is False
    assert result.content == "z" * 100 + "\n[… truncated 1,134 of 1,234 characters]"


@pytest.mark.anyio
async def test_independent_calls_run_concurrently() -> None:
    @tool
    async def nap(seconds: float) -> str:
        await anyio.sleep(seconds)
        return "up"

    registry = ToolRegistry([nap])
    results: list[ToolResultBlock] = []

    async def run(i: int) -> None:
        results.append(await registry.execute(call("nap", {"seconds": 0.2}, id=f"c{i}"), ToolContext()))

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for i in range(5):
            tg.start_soon(run, i)
    assert time.perf_counter() - start < 0.8
    assert sorted(r.tool_use_id for r in results) == [f"c{i}" for i in range(5)]


# ---------------------------------------------------------------------------------- execute: errors


@pytest.mark.anyio
async def test_invalid_arguments_name_each_field() -> None:
    registry = ToolRegistry([read_file])
    detail = await registry.execute_detailed(call("read_file", {"start_line": "ten"}), ToolContext())
    assert detail.status == "invalid_arguments"
    assert detail.attempts == 0
    assert detail.result.is_error is True
    assert detail.result.content == (
        "Invalid arguments for tool 'read_file': 'path': required field missing. "
        "'start_line': expected an integer, got 'ten'. Call 'read_file' again with corrected arguments."
    )


@pytest.mark.anyio
async def test_unknown_argument_lists_what_the_tool_takes() -> None:
    result = await ToolRegistry([read_file]).execute(
        call("read_file", {"path": "a.py", "line": 3}), ToolContext()
    )
    assert result.is_error is True
    assert "'line': unexpected argument (this tool takes: path, start_line)." in result.text


@pytest.mark.anyio
async def test_unknown_tool_lists_the_available_tools() -> None:
    registry = ToolRegistry([add, read_file])
    detail = await registry.execute_detailed(call("read_fil", {"path": "x"}), ToolContext())
    assert detail.status == "unknown_tool"
    assert detail.result.content == (
        "Unknown tool 'read_fil'. Did you mean 'read_file'? Available tools: add, read_file."
    )
    empty = await ToolRegistry().execute(call("x"), ToolContext())
    assert empty.content == "Unknown tool 'x': no tools are available."


@pytest.mark.anyio
async def test_parse_error_call_gets_that_message() -> None:
    ran: list[bool] = []

    @tool
    def note(text: str) -> str:
        ran.append(True)
        return text

    message = "The tool arguments are not valid JSON."
    broken = ToolUseBlock(id="c1", name="note", input={}, parse_error=message)
    detail = await ToolRegistry([note]).execute_detailed(broken, ToolContext())
    assert detail.status == "parse_error"
    assert detail.result == ToolResultBlock(tool_use_id="c1", content=message, is_error=True)
    assert ran == []


@pytest.mark.anyio
async def test_client_tool_is_not_executed_here() -> None:
    registry = ToolRegistry()
    registry.register_client_tool(ToolDefinition(name="show_photos"))
    detail = await registry.execute_detailed(call("show_photos"), ToolContext())
    assert detail.status == "client_tool"
    assert detail.result.is_error is True
    assert "client tool, the caller executes it" in detail.result.text


@pytest.mark.anyio
async def test_exceptions_become_error_results() -> None:
    @tool
    def explode() -> str:
        raise ValueError("boom")

    @tool
    async def explain() -> str:
        raise ToolError("The index is empty; add documents first.")

    @tool
    async def forbidden(path: str) -> str:
        raise ToolDenied(f"'{path}' is outside the workspace")

    @tool
    async def own_timeout() -> str:
        raise TimeoutError("upstream took too long")

    registry = ToolRegistry([explode, explain, forbidden, own_timeout])
    detail = await registry.execute_detailed(call("explode"), ToolContext())
    assert (detail.status, detail.result.content) == ("error", "Tool 'explode' raised ValueError: boom")
    assert isinstance(detail.error, ValueError)
    result = await registry.execute(call("explain"), ToolContext())
    assert result.content == "The index is empty; add documents first."
    detail = await registry.execute_detailed(call("forbidden", {"path": "/etc"}), ToolContext())
    assert (detail.status, detail.result.content) == ("denied", "Denied: '/etc' is outside the workspace")
    # a TimeoutError the tool raises itself is an ordinary error, not the registry's timeout
    detail = await registry.execute_detailed(call("own_timeout"), ToolContext())
    assert detail.status == "error"
    assert detail.result.content == "Tool 'own_timeout' raised TimeoutError: upstream took too long"


@pytest.mark.anyio
async def test_single_exception_in_a_task_group_is_unwrapped() -> None:
    @tool
    async def fan_out() -> str:
        async def fail() -> None:
            raise KeyError("shard-3")

        async with anyio.create_task_group() as tg:
            tg.start_soon(fail)
        return "unreachable"

    result = await ToolRegistry([fan_out]).execute(call("fan_out"), ToolContext())
    assert result.content == "Tool 'fan_out' raised KeyError: 'shard-3'"


# ---------------------------------------------------------------------------------------- timeouts


@pytest.mark.anyio
async def test_async_tool_that_never_returns_times_out() -> None:
    @tool(timeout=0.2)
    async def hang() -> str:
        await anyio.sleep_forever()
        return ""

    start = time.perf_counter()
    detail = await ToolRegistry([hang]).execute_detailed(call("hang"), ToolContext())
    assert time.perf_counter() - start < 2
    assert detail.status == "timeout"
    assert detail.result.is_error is True
    assert detail.result.content.startswith("Tool 'hang' timed out after 0.2s.")


@pytest.mark.anyio
async def test_sync_tool_times_out_and_its_thread_is_abandoned(release: threading.Event) -> None:
    # A thread cannot be killed: the registry stops waiting for it, and it finishes on its own.
    @tool(timeout=0.2)
    def block() -> str:
        release.wait(10)
        return "late"

    start = time.perf_counter()
    result = await ToolRegistry([block]).execute(call("block"), ToolContext())
    assert time.perf_counter() - start < 2
    assert result.is_error is True
    assert "timed out after 0.2s" in result.text


@pytest.mark.anyio
async def test_registry_default_timeout_applies_when_the_tool_sets_none() -> None:
    @tool
    async def hang() -> str:
        await anyio.sleep_forever()
        return ""

    @tool(timeout=5)
    async def quick() -> str:
        await anyio.sleep(0.3)
        return "ok"

    registry = ToolRegistry([hang, quick], default_timeout=0.1)
    assert (await registry.execute_detailed(call("hang"), ToolContext())).status == "timeout"
    assert (await registry.execute(call("quick"), ToolContext())).content == "ok"  # its own 5 s wins


# ----------------------------------------------------------------------------------------- retries


def flaky(failures: int, **options: Any) -> tuple[Tool, list[int]]:
    attempts: list[int] = []

    async def fetch() -> str:
        attempts.append(len(attempts) + 1)
        if len(attempts) <= failures:
            raise RetryableToolError(f"busy (attempt {len(attempts)})")
        return f"ok after {len(attempts)}"

    return Tool.from_function(fetch, **options), attempts


@pytest.mark.anyio
async def test_retryable_error_is_retried_until_success() -> None:
    fetch, attempts = flaky(2, max_retries=2, retry_delay=0.05)
    start = time.perf_counter()
    detail = await ToolRegistry([fetch]).execute_detailed(call("fetch"), ToolContext())
    assert time.perf_counter() - start >= 0.1  # two pauses of retry_delay
    assert detail.result == ToolResultBlock(tool_use_id="call_1", content="ok after 3")
    assert (detail.status, detail.attempts) == ("ok", 3)
    assert attempts == [1, 2, 3]


@pytest.mark.anyio
async def test_retries_exhausted_report_the_attempts() -> None:
    fetch, attempts = flaky(10, max_retries=1)
    detail = await ToolRegistry([fetch]).execute_detailed(call("fetch"), ToolContext())
    assert attempts == [1, 2]
    assert (detail.status, detail.attempts) == ("error", 2)
    assert detail.result.content == "Tool 'fetch' failed after 2 attempts: busy (attempt 2)"


@pytest.mark.anyio
async def test_retry_after_overrides_the_delay() -> None:
    attempts: list[float] = []

    @tool(max_retries=1, retry_delay=30)
    async def limited() -> str:
        attempts.append(time.perf_counter())
        if len(attempts) == 1:
            raise RetryableToolError("rate limited", retry_after=0.05)
        return "ok"

    with anyio.fail_after(5):
        assert (await ToolRegistry([limited]).execute(call("limited"), ToolContext())).content == "ok"
    assert attempts[1] - attempts[0] >= 0.05


@pytest.mark.anyio
async def test_other_exceptions_are_not_retried() -> None:
    runs: list[int] = []

    @tool(max_retries=3)
    def fragile() -> str:
        runs.append(1)
        raise RuntimeError("disk full")

    detail = await ToolRegistry([fragile]).execute_detailed(call("fragile"), ToolContext())
    assert runs == [1]
    assert (detail.status, detail.attempts) == ("error", 1)
    assert detail.result.content == "Tool 'fragile' raised RuntimeError: disk full"


# ------------------------------------------------------------------------------------ cancellation


async def runs_until_cancelled(registry: ToolRegistry, name: str, started: anyio.Event) -> list[str]:
    """Cancel a scope around a running execute(); report what came out of it."""
    outcome: list[str] = []

    async def runner() -> None:
        try:
            await registry.execute(call(name), ToolContext())
            outcome.append("returned a result")
        except anyio.get_cancelled_exc_class():
            outcome.append("cancelled")
            raise

    with anyio.fail_after(5), anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(runner)
            await started.wait()
            await anyio.sleep(0.05)
            scope.cancel()
    assert scope.cancelled_caught
    return outcome


def hanging_tools(started: anyio.Event, release: threading.Event) -> list[Tool]:
    async def hang() -> str:
        started.set()
        await anyio.sleep_forever()
        return ""

    async def catch_all() -> str:  # a tool that swallows every *Exception* still gets cancelled
        started.set()
        try:
            await anyio.sleep_forever()
        except Exception:
            return "swallowed"
        return ""

    def block() -> str:
        anyio.from_thread.run_sync(started.set)
        release.wait(10)
        return ""

    async def busy() -> str:
        started.set()
        raise RetryableToolError("busy")

    return [
        Tool.from_function(hang),
        Tool.from_function(hang, name="hang_with_timeout", timeout=30),
        Tool.from_function(catch_all),
        Tool.from_function(block),
        Tool.from_function(busy, max_retries=5, retry_delay=30),  # cancelled while waiting to retry
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["hang", "hang_with_timeout", "catch_all", "block", "busy"])
async def test_cancellation_propagates_out_of_execute(name: str, release: threading.Event) -> None:
    started = anyio.Event()
    registry = ToolRegistry(hanging_tools(started, release))
    assert await runs_until_cancelled(registry, name, started) == ["cancelled"]


@pytest.mark.anyio
async def test_outer_deadline_is_not_reported_as_the_tools_timeout() -> None:
    @tool(timeout=10)
    async def hang() -> str:
        await anyio.sleep_forever()
        return ""

    results: list[ToolResultBlock] = []
    with anyio.move_on_after(0.1) as outer:
        results.append(await ToolRegistry([hang]).execute(call("hang"), ToolContext()))
    assert outer.cancelled_caught
    assert results == []


@pytest.mark.anyio
async def test_tool_timeout_inside_a_longer_outer_deadline() -> None:
    @tool(timeout=0.1)
    async def hang() -> str:
        await anyio.sleep_forever()
        return ""

    with anyio.move_on_after(5) as outer:
        result = await ToolRegistry([hang]).execute(call("hang"), ToolContext())
    assert not outer.cancelled_caught
    assert "timed out after 0.1s" in result.text


@pytest.mark.anyio
async def test_handler_tool_through_the_registry() -> None:
    received: list[tuple[dict[str, Any], str]] = []

    async def handler(arguments: dict[str, Any], ctx: ToolContext) -> str:
        received.append((arguments, ctx.tool_call_id))
        return "done"

    mcp_like: Callable[[dict[str, Any], ToolContext], Awaitable[str]] = handler
    registry = ToolRegistry([Tool.from_handler("remote", "A remote tool.", {"type": "object"}, mcp_like)])
    result = await registry.execute(call("remote", {"anything": [1, 2]}, id="c3"), ToolContext())
    assert result.content == "done"
    assert received == [({"anything": [1, 2]}, "c3")]
