"""MCPToolset against real MCP servers: ``mcp_servers/toolbox.py`` started as a subprocess (stdio) or
as a streamable-HTTP server on a loopback port. Runs on asyncio and trio (the SDK is anyio-based and
its stdio and HTTP clients work on both)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from agcore.integrations.mcp import (
    MCPConnectionError,
    MCPHttpServer,
    MCPStdioServer,
    MCPToolset,
    namespaced_tool_name,
)
from agcore.llm.types import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock
from agcore.tools import ToolContext, ToolProgress, ToolRegistry

pytestmark = pytest.mark.anyio

TOOLBOX = Path(__file__).parent / "mcp_servers" / "toolbox.py"
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
TOOLBOX_TOOLS = [
    "add", "echo", "image", "fail", "sleep", "crash", "structured", "resource", "pid", "dotted.name",
    "progress", "header",
]  # fmt: skip


def toolbox(name: str = "box", *extra: str, **options: Any) -> MCPStdioServer:
    return MCPStdioServer(name=name, command=sys.executable, args=(str(TOOLBOX), *extra), **options)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def child_pids() -> set[int]:
    """This process's live children (Linux /proc), to prove a toolset leaves none behind."""
    children: set[int] = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == os.getpid() and fields[0] != "Z":
                children.add(int(entry.name))
    return children


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


class Calls:
    """Runs tool calls through a ToolRegistry, the way the agent loop does."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self.count = 0

    async def __call__(
        self, name: str, args: dict[str, object] | None = None, ctx: ToolContext | None = None
    ) -> ToolResultBlock:
        self.count += 1
        call = ToolUseBlock(id=f"call_{self.count}", name=name, input=dict(args or {}))
        return await self.registry.execute(call, (ctx or ToolContext()).for_call(call))


@needs_proc
async def test_stdio_round_trip_through_the_registry() -> None:
    before = child_pids()
    # box2 skips the current-revision probe and uses the classic initialize handshake.
    servers = [toolbox("box", "--page-size", "4"), toolbox("box2", "--page-size", "100", protocol="legacy")]
    async with MCPToolset(servers) as toolset:
        # Three pages of tools were followed; every tool is namespaced by its server.
        box_names = [t.name for t in toolset.tools if t.name.startswith("box__")]
        assert box_names == [namespaced_tool_name("box", n) for n in TOOLBOX_TOOLS]
        assert len(toolset.tools) == 2 * len(TOOLBOX_TOOLS)
        assert "box2__echo" in {t.name for t in toolset.tools}
        dotted = namespaced_tool_name("box", "dotted.name")
        assert dotted.startswith("box__dotted_name_")
        assert len(dotted) <= 64

        registry = ToolRegistry()
        registered = toolset.register_into(registry)
        assert [t.name for t in registered] == [t.name for t in toolset.tools]
        [add] = registry.definitions(names=["box__add"])
        assert add.description == "Add two integers."
        assert add.input_schema == {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        }

        call = Calls(registry)
        # Text wins over the duplicate structuredContent.
        result = await call("box__add", {"a": 2, "b": 3})
        assert (result.is_error, result.content) == (False, "5")
        assert (await call("box2__echo", {"text": "héllo"})).content == "héllo"
        assert (await call(dotted)).content == "dotted ok"
        image = await call("box__image")
        assert image.content == [TextBlock(text="a pixel:"), ImageBlock(data=PNG_1X1, media_type="image/png")]
        assert (await call("box__structured")).content == '{"answer": 42, "unit": "none"}'
        assert (await call("box__resource")).content == "notes"

        failed = await call("box__fail", {"why": "it is Sunday"})
        assert failed.is_error
        assert "cannot do that: it is Sunday" in failed.text

        # A protocol-level error (the handler raised) is an error result, and the server lives on.
        rejected = await call("box__add", {"a": "x", "b": 1})
        assert rejected.is_error
        assert "MCP server 'box' rejected the call to 'add'" in rejected.text

        # Progress notifications reach the ToolContext's progress callback.
        updates: list[ToolProgress] = []
        progressed = await call("box__progress", ctx=ToolContext(progress=updates.append))
        assert progressed.content == "finished"
        assert [(u.message, u.fraction, u.tool_name) for u in updates] == [
            ("halfway", 0.5, "box__progress"),
            ("done", 1.0, "box__progress"),
        ]

        pid = int((await call("box__pid")).text)
        assert pid_alive(pid)
        assert pid in child_pids()
        assert toolset.connections["box"].alive
        info = toolset.connections["box2"].server_info
        assert info is not None
        assert info.name == "toolbox"
        assert toolset.connections["box2"].protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
        assert toolset.connections["box"].protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS

    # Closing stopped both subprocesses.
    assert not pid_alive(pid)
    assert child_pids() == before
    after = await Calls(registry)("box__echo", {"text": "late"})
    assert after.is_error
    assert "toolset holding server 'box' is closed" in after.text


async def test_call_timeout_is_an_error_result_and_the_server_keeps_working() -> None:
    async with MCPToolset([toolbox(call_timeout=0.3)]) as toolset:
        call = Calls(ToolRegistry(toolset.tools))
        started = time.monotonic()
        slow = await call("box__sleep", {"seconds": 10})
        assert time.monotonic() - started < 3
        assert slow.is_error
        assert "MCP tool 'sleep' on server 'box' timed out after 0.3s" in slow.text
        assert (await call("box__echo", {"text": "still here"})).content == "still here"


@needs_proc
async def test_server_that_dies_mid_call() -> None:
    before = child_pids()
    async with MCPToolset([toolbox()]) as toolset:
        call = Calls(ToolRegistry(toolset.tools))
        pid = int((await call("box__pid")).text)
        with anyio.fail_after(10):  # an error result, not a hang
            died = await call("box__crash")
        assert died.is_error
        assert "MCP server 'box' died or disconnected, so the call to 'crash' failed" in died.text
        assert "toolbox: crashing on purpose" in died.text  # the stderr tail
        assert not toolset.connections["box"].alive

        # Later calls fail fast with the same story.
        later = await call("box__echo", {"text": "anyone?"})
        assert later.is_error
        assert "MCP server 'box' is no longer connected" in later.text
    assert not pid_alive(pid)
    assert child_pids() == before


async def test_missing_command_is_a_clear_connect_error() -> None:
    server = MCPStdioServer(name="ghost", command="/nonexistent/bin/mcp-ghost-server", args=("--port", "1"))
    with pytest.raises(MCPConnectionError) as caught:
        async with MCPToolset([server]):
            pytest.fail("connected to a server that does not exist")
    message = str(caught.value)
    assert "MCP server 'ghost'" in message
    assert "/nonexistent/bin/mcp-ghost-server --port 1" in message
    assert "could not start its command" in message
    assert caught.value.errors.keys() == {"ghost"}


@needs_proc
async def test_server_that_exits_at_start_reports_its_stderr_and_the_others_are_closed() -> None:
    before = child_pids()
    servers = [toolbox("good"), toolbox("broken", "--fail-at-start")]
    with pytest.raises(MCPConnectionError) as caught:
        async with MCPToolset(servers):
            pytest.fail("entered although a server failed")
    message = str(caught.value)
    assert message.startswith("MCP server 'broken' (command: ")
    assert "toolbox.py --fail-at-start" in message
    assert "missing setting TOOLBOX_TOKEN, refusing to start" in message
    assert caught.value.errors.keys() == {"broken"}
    assert child_pids() == before  # "good" was connected, then closed again


async def test_server_that_never_answers_times_out_at_connect() -> None:
    # Reads stdin to EOF without ever answering: a hung server that still exits when closed.
    mute = MCPStdioServer(
        name="mute", command=sys.executable, args=("-c", "import sys; sys.stdin.read()"), connect_timeout=0.5
    )
    started = time.monotonic()
    with pytest.raises(
        MCPConnectionError, match=r"MCP server 'mute' .* did not finish starting .* within 0.5s"
    ):
        async with MCPToolset([mute]):
            pass
    assert time.monotonic() - started < 5


@needs_proc
async def test_cancelled_while_connecting_leaves_nothing_behind() -> None:
    before = child_pids()
    with anyio.move_on_after(0.2) as scope:
        async with MCPToolset([toolbox()]):
            pytest.fail("connected within 0.2s, so this test proves nothing")
    assert scope.cancelled_caught
    assert child_pids() == before


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_toolbox() -> Iterator[str]:
    """The toolbox served over streamable HTTP; yields its URL once the port answers."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(TOOLBOX), "--http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    stderr = process.stderr.read().decode() if process.stderr else ""
                    pytest.fail(f"the HTTP toolbox did not start: {stderr}")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait()
        if process.stderr:
            process.stderr.close()


async def test_streamable_http_round_trip_and_a_server_that_dies(http_toolbox: str) -> None:
    server = MCPHttpServer(name="web", url=http_toolbox, headers={"X-Agcore-Test": "yes"})
    async with MCPToolset([server]) as toolset:
        assert len(toolset.tools) == len(TOOLBOX_TOOLS)
        call = Calls(ToolRegistry(toolset.tools))
        assert (await call("web__add", {"a": 40, "b": 2})).content == "42"
        assert (await call("web__header", {"name": "x-agcore-test"})).content == "yes"
        image = await call("web__image")
        assert isinstance(image.content, list)
        assert image.content[1] == ImageBlock(data=PNG_1X1, media_type="image/png")

        with anyio.fail_after(10):
            died = await call("web__crash")
        assert died.is_error
        assert "MCP server 'web' died or disconnected, so the call to 'crash' failed" in died.text
        later = await call("web__echo", {"text": "anyone?"})
        assert later.is_error
        assert "no longer connected" in later.text
    # Leaving the block after the server died raised nothing (no task-group error leaked out).


async def test_http_server_that_is_not_there_is_a_connect_error() -> None:
    server = MCPHttpServer(name="nowhere", url=f"http://127.0.0.1:{_free_port()}/mcp", connect_timeout=5)
    with pytest.raises(MCPConnectionError) as caught:
        async with MCPToolset([server]):
            pass
    assert "MCP server 'nowhere' (url: http://127.0.0.1:" in str(caught.value)
    assert "ConnectError" in str(caught.value)


async def test_an_error_in_the_body_propagates_unwrapped_and_closes_the_servers() -> None:
    toolset = MCPToolset([toolbox()])

    async def agent() -> None:
        async with toolset:
            assert toolset.connections["box"].alive
            raise LookupError("from the agent")

    with pytest.raises(LookupError, match="from the agent"):
        await agent()
    assert not toolset.connections["box"].alive
