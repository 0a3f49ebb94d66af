"""A small MCP server the agcore tests start as a real subprocess.

Run ``python toolbox.py`` for stdio, ``python toolbox.py --http PORT`` for streamable HTTP on 127.0.0.1.
``--fail-at-start`` writes a message to stderr and exits with status 3 before serving, like a server
whose configuration is wrong. ``--page-size N`` sets how many tools one ``tools/list`` page holds, so
the client has to follow cursors.

Written with the low-level ``Server`` (not ``MCPServer``) so the tests control every field of the
results: image and embedded-resource content, ``isError``, structured-only results and pagination.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

# A 1x1 transparent PNG.
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="


def _schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


TOOLS = [
    types.Tool(
        name="add",
        description="Add two integers.",
        input_schema=_schema({"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"]),
    ),
    types.Tool(
        name="echo", description="Echo the text back.", input_schema=_schema({"text": {"type": "string"}})
    ),
    types.Tool(name="image", description="Return a 1x1 PNG.", input_schema=_schema({})),
    types.Tool(
        name="fail", description="Report a tool error.", input_schema=_schema({"why": {"type": "string"}})
    ),
    types.Tool(
        name="sleep", description="Sleep, then answer.", input_schema=_schema({"seconds": {"type": "number"}})
    ),
    types.Tool(name="crash", description="Kill the server process mid-call.", input_schema=_schema({})),
    types.Tool(
        name="structured", description="Answer with structuredContent only.", input_schema=_schema({})
    ),
    types.Tool(name="resource", description="Answer with an embedded resource.", input_schema=_schema({})),
    types.Tool(name="pid", description="The server's process id.", input_schema=_schema({})),
    types.Tool(name="dotted.name", description="A name that needs sanitising.", input_schema=_schema({})),
    types.Tool(name="progress", description="Report progress twice, then answer.", input_schema=_schema({})),
    types.Tool(
        name="header",
        description="An HTTP request header the server received (streamable HTTP only).",
        input_schema=_schema({"name": {"type": "string"}}, ["name"]),
    ),
]


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)])


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    args = params.arguments or {}
    match params.name:
        case "add":
            total = int(args["a"]) + int(args["b"])
            return types.CallToolResult(
                content=[types.TextContent(text=str(total))], structured_content={"sum": total}
            )
        case "echo":
            return _text(str(args.get("text", "")))
        case "image":
            return types.CallToolResult(
                content=[
                    types.TextContent(text="a pixel:"),
                    types.ImageContent(data=PNG_1X1, mime_type="image/png"),
                ]
            )
        case "fail":
            return types.CallToolResult(
                content=[types.TextContent(text=f"cannot do that: {args.get('why', 'no reason')}")],
                is_error=True,
            )
        case "sleep":
            await anyio.sleep(float(args.get("seconds", 1.0)))
            return _text("slept")
        case "crash":
            print("toolbox: crashing on purpose", file=sys.stderr, flush=True)
            os._exit(1)
        case "structured":
            return types.CallToolResult(content=[], structured_content={"answer": 42, "unit": "none"})
        case "resource":
            return types.CallToolResult(
                content=[
                    types.EmbeddedResource(
                        resource=types.TextResourceContents(
                            uri="file:///notes.txt", mime_type="text/plain", text="notes"
                        )
                    )
                ]
            )
        case "pid":
            return _text(str(os.getpid()))
        case "dotted.name":
            return _text("dotted ok")
        case "progress":
            await ctx.session.report_progress(1, 2, "halfway")
            await ctx.session.report_progress(2, 2, "done")
            return _text("finished")
        case "header":
            request = ctx.request
            headers = getattr(request, "headers", None)
            return _text(str(headers.get(str(args["name"]), "")) if headers is not None else "")
    return types.CallToolResult(
        content=[types.TextContent(text=f"unknown tool {params.name}")], is_error=True
    )


def build_server(page_size: int) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + page_size
        return types.ListToolsResult(
            tools=TOOLS[start:end], next_cursor=str(end) if end < len(TOOLS) else None
        )

    return Server("toolbox", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(server: Server[Any], port: int) -> None:
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    parser.add_argument("--page-size", type=int, default=4)
    parser.add_argument("--fail-at-start", action="store_true")
    options = parser.parse_args()
    if options.fail_at_start:
        print("toolbox: missing setting TOOLBOX_TOKEN, refusing to start", file=sys.stderr, flush=True)
        sys.exit(3)
    server = build_server(options.page_size)
    if options.http is None:
        anyio.run(serve_stdio, server)
    else:
        anyio.run(serve_http, server, options.http)


if __name__ == "__main__":
    main()
