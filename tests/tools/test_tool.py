"""``Tool``: the decorator, invocation (validation, threads, context), output conversion, truncation."""

from __future__ import annotations

import datetime as dt
import functools
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from pydantic import BaseModel, ValidationError

from agcore.llm.types import ImageBlock, TextBlock, ToolUseBlock
from agcore.tools import (
    MissingDependencyError,
    Tool,
    ToolContext,
    ToolError,
    ToolProgress,
    tool,
)
from agcore.tools._tool import render_output, truncate_output

PNG = ImageBlock(media_type="image/png", data="iVBORw0KGgo=")


class Forecast(BaseModel):
    city: str
    celsius: float


@dataclass
class Reading:
    sensor: str
    at: dt.datetime


class Unjsonable:
    def __str__(self) -> str:
        return "<unjsonable thing>"


# -------------------------------------------------------------------------------------- decorator


def test_bare_decorator_gives_a_callable_tool() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    assert isinstance(add, Tool)
    assert (add.name, add.description, add.mode) == ("add", "Add two integers.", "server")
    assert add(2, 3) == 5  # still the function: handy in tests
    assert add.__wrapped__.__name__ == "add"
    assert add.definition() is add.definition()  # built once


def test_decorator_with_options() -> None:
    @tool(name="fetch_url", requires_confirmation=True, timeout=5, max_retries=2, retry_delay=0.5)
    async def fetch(url: str) -> str:
        return url

    assert fetch.name == "fetch_url"
    assert fetch.requires_confirmation is True
    assert (fetch.timeout, fetch.max_retries, fetch.retry_delay) == (5, 2, 0.5)
    assert fetch.max_output_chars == 50_000


@pytest.mark.parametrize(
    "options",
    [{"timeout": 0}, {"timeout": -1}, {"max_retries": -1}, {"retry_delay": -0.1}, {"max_output_chars": 0}],
)
def test_nonsense_options_are_refused(options: dict[str, Any]) -> None:
    def f() -> None:
        pass

    with pytest.raises(ValueError, match="tool 'f'"):
        Tool.from_function(f, **options)


def test_lambda_needs_a_name() -> None:
    with pytest.raises(TypeError, match="name="):
        Tool.from_function(lambda x: x)
    assert Tool.from_function(lambda x: x, name="echo").name == "echo"


# ------------------------------------------------------------------------------------- invocation


@pytest.mark.anyio
async def test_invoke_validates_and_coerces_arguments() -> None:
    @tool
    async def repeat(text: str, times: int = 2) -> str:
        return text * times

    assert await repeat.invoke({"text": "ab", "times": "3"}, ToolContext()) == "ababab"
    assert await repeat.invoke({"text": "ab"}, ToolContext()) == "abab"
    with pytest.raises(ValidationError) as info:
        await repeat.invoke({"times": "many"}, ToolContext())
    assert {e["loc"] for e in info.value.errors()} == {("text",), ("times",)}
    with pytest.raises(ValidationError):  # unknown arguments are refused, not silently dropped
        await repeat.invoke({"text": "a", "count": 3}, ToolContext())


@pytest.mark.anyio
async def test_nested_models_arrive_as_instances() -> None:
    seen: list[Any] = []

    @tool
    def record(forecast: Forecast, readings: list[Reading]) -> str:
        seen.extend([forecast, *readings])
        return "ok"

    arguments = {
        "forecast": {"city": "Paris", "celsius": "18.5"},
        "readings": [{"sensor": "s1", "at": "2024-05-01T12:00:00"}],
    }
    assert await record.invoke(arguments, ToolContext()) == "ok"
    assert seen == [Forecast(city="Paris", celsius=18.5), Reading("s1", dt.datetime(2024, 5, 1, 12))]


@pytest.mark.anyio
async def test_reserved_and_positional_only_parameter_names_reach_the_function() -> None:
    @tool
    def f(json: str, /, schema: int, _hidden: bool = False) -> str:
        return f"{json}|{schema}|{_hidden}"

    assert await f.invoke({"json": "{}", "schema": 2, "_hidden": True}, ToolContext()) == "{}|2|True"


@pytest.mark.anyio
async def test_sync_tool_runs_in_a_worker_thread() -> None:
    @tool
    def where() -> int:
        return threading.get_ident()

    assert await where.invoke({}, ToolContext()) != threading.get_ident()


@pytest.mark.anyio
async def test_sync_tool_does_not_block_other_tasks() -> None:
    @tool
    def slow(seconds: float) -> str:
        time.sleep(seconds)
        return "slept"

    ticks = 0
    results: list[Any] = []

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.sleep(0.01)

    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        results.append(await slow.invoke({"seconds": 0.3}, ToolContext()))
        tg.cancel_scope.cancel()
    assert results == ["slept"]
    assert ticks >= 10  # a blocked loop would have ticked once


@pytest.mark.anyio
async def test_callable_object_with_async_call() -> None:
    class Greeter:
        async def __call__(self, name: str) -> str:
            return f"hi {name}"

    greeter = Tool.from_function(Greeter(), name="greet")
    assert await greeter.invoke({"name": "Ada"}, ToolContext()) == "hi Ada"


class Workspace:
    def __init__(self, root: str) -> None:
        self.root = root


async def resolve(path: str, workspace: Workspace, strict: bool = True) -> str:
    """Resolve a path in the workspace."""
    return f"{workspace.root}/{path} strict={strict}"


@pytest.mark.anyio
async def test_partial_hides_the_keywords_it_binds() -> None:
    bound = Tool.from_function(functools.partial(resolve, workspace=Workspace("/ws")), name="resolve")
    assert bound.description == "Resolve a path in the workspace."
    assert set(bound.input_schema["properties"]) == {"path", "strict"}
    assert await bound.invoke({"path": "a.txt", "strict": False}, ToolContext()) == "/ws/a.txt strict=False"


@pytest.mark.anyio
async def test_client_tool_has_nothing_to_run() -> None:
    show = Tool.client("show_photos", "Show photos to the user.", {"type": "object", "properties": {}})
    assert show.mode == "client"
    assert show.definition().description == "Show photos to the user."
    assert Tool.client("x").input_schema == {"type": "object", "properties": {}}
    with pytest.raises(ToolError, match="client tool"):
        await show.invoke({}, ToolContext())
    with pytest.raises(TypeError, match="client tool"):
        show()


@pytest.mark.anyio
async def test_handler_tool_gets_the_raw_dict_and_context() -> None:
    async def handler(arguments: dict[str, Any], ctx: ToolContext) -> list[TextBlock]:
        return [TextBlock(text=f"{ctx.tool_name}:{arguments['q']}")]

    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    search = Tool.from_handler("search", "Search.", schema, handler, timeout=3)
    assert search.input_schema is schema
    assert search.parameter_names == ("q",)
    assert search.timeout == 3
    out = await search.invoke({"q": "cats"}, ToolContext(tool_name="search"))
    assert out == [TextBlock(text="search:cats")]
    with pytest.raises(ValidationError):
        await search.invoke(["not", "an", "object"], ToolContext())  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ ToolContext


@pytest.mark.anyio
async def test_context_is_injected_with_dependencies() -> None:
    @tool
    async def whoami(ctx: ToolContext, /, suffix: str = "") -> str:
        return f"{ctx.session_id}/{ctx.tool_call_id}/{ctx.get('user')}/{ctx.get('missing', 'd')}{suffix}"

    ctx = ToolContext(session_id="s1", dependencies={"user": "ada"})
    call = ToolUseBlock(id="call_1", name="whoami", input={})
    assert await whoami.invoke({"suffix": "!"}, ctx.for_call(call)) == "s1/call_1/ada/d!"


def test_for_call_copies_ids_and_shares_the_rest() -> None:
    deps = {"db": object()}
    base = ToolContext(session_id="s", dependencies=deps, metadata={"k": 1})
    derived = base.for_call(ToolUseBlock(id="c9", name="query"))
    assert (derived.tool_call_id, derived.tool_name, derived.session_id) == ("c9", "query", "s")
    assert derived.dependencies is deps
    assert derived.metadata is base.metadata
    assert base.tool_call_id == ""


def test_require_names_the_missing_dependency() -> None:
    ctx = ToolContext(tool_name="recall", dependencies={"store": 1})
    assert ctx.require("store") == 1
    with pytest.raises(MissingDependencyError, match=r"'recall' needs the dependency 'retriever'") as info:
        ctx.require("retriever")
    assert isinstance(info.value, KeyError)
    assert isinstance(info.value, ToolError)
    assert "available: store" in str(info.value)


@pytest.mark.anyio
async def test_report_progress_reaches_sync_and_async_callbacks() -> None:
    seen: list[ToolProgress] = []

    async def async_sink(update: ToolProgress) -> None:
        seen.append(update)

    ctx = ToolContext(tool_call_id="c1", tool_name="index", progress=async_sink)
    await ctx.report_progress("half", fraction=0.5)
    await ctx.report_progress("overshoot", fraction=3)
    ctx.progress = seen.append
    await ctx.report_progress("sync sink")
    assert [(p.message, p.fraction) for p in seen] == [("half", 0.5), ("overshoot", 1.0), ("sync sink", None)]
    assert seen[0].tool_call_id == "c1"
    assert seen[0].tool_name == "index"
    await ToolContext().report_progress("nobody listens")  # no callback: a no-op


@pytest.mark.anyio
async def test_broken_progress_callback_does_not_fail_the_tool(caplog: pytest.LogCaptureFixture) -> None:
    def broken(update: ToolProgress) -> None:
        raise RuntimeError("sink down")

    with caplog.at_level(logging.WARNING, logger="agcore.tools"):
        await ToolContext(tool_name="t", progress=broken).report_progress("x")
    assert "progress callback failed" in caplog.text


@pytest.mark.anyio
async def test_sync_tool_reports_progress_from_its_thread() -> None:
    seen: list[str] = []

    @tool
    def crunch(ctx: ToolContext) -> str:
        anyio.from_thread.run(ctx.report_progress, "working")
        return "done"

    assert await crunch.invoke({}, ToolContext(progress=lambda p: seen.append(p.message))) == "done"
    assert seen == ["working"]


# ---------------------------------------------------------------------------------------- output


def test_render_output_conversions() -> None:
    assert render_output("plain") == "plain"
    assert render_output(None) == ""
    assert render_output(42) == "42"
    assert render_output({"ville": "Zürich", "n": [1, 2]}) == '{"ville": "Zürich", "n": [1, 2]}'
    assert render_output(Forecast(city="Paris", celsius=18)) == '{"city":"Paris","celsius":18.0}'
    reading = Reading("s", dt.datetime(2024, 1, 2))
    assert render_output(reading) == '{"sensor": "s", "at": "2024-01-02T00:00:00"}'
    assert render_output([Forecast(city="A", celsius=1)]) == '[{"city": "A", "celsius": 1.0}]'
    assert render_output(TextBlock(text="t")) == [TextBlock(text="t")]
    assert render_output([TextBlock(text="t"), PNG]) == [TextBlock(text="t"), PNG]
    assert render_output(Unjsonable()) == "<unjsonable thing>"
    assert render_output([]) == "[]"


@pytest.mark.anyio
async def test_invoke_returns_blocks_and_model_json() -> None:
    @tool
    async def snapshot() -> list[TextBlock | ImageBlock]:
        return [TextBlock(text="the page"), PNG]

    @tool
    def forecast(city: str) -> Forecast:
        return Forecast(city=city, celsius=21.5)

    assert await snapshot.invoke({}, ToolContext()) == [TextBlock(text="the page"), PNG]
    assert await forecast.invoke({"city": "Oslo"}, ToolContext()) == '{"city":"Oslo","celsius":21.5}'


def test_truncate_string_with_marker() -> None:
    text = "x" * 62_345
    out = truncate_output(text, 50_000)
    assert out == "x" * 50_000 + "\n[… truncated 12,345 of 62,345 characters]"
    assert truncate_output("short", 10) == "short"
    assert truncate_output(text, None) is text


def test_truncate_blocks_shares_the_budget_and_keeps_images() -> None:
    blocks: list[TextBlock | ImageBlock] = [TextBlock(text="a" * 6), PNG, TextBlock(text="b" * 6)]
    out = truncate_output(blocks, 8)
    assert out == [
        TextBlock(text="a" * 6),
        PNG,
        TextBlock(text="bb"),
        TextBlock(text="[… truncated 4 of 12 characters]"),
    ]
    assert truncate_output(blocks, 12) is blocks


@pytest.mark.anyio
async def test_invoke_applies_max_output_chars() -> None:
    @tool(max_output_chars=10)
    def dump() -> dict[str, str]:
        return {"data": "y" * 50}

    out = await dump.invoke({}, ToolContext())
    assert isinstance(out, str)
    assert out.startswith('{"data": "')
    assert out.endswith("\n[… truncated 52 of 62 characters]")
