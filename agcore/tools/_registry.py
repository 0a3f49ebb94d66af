"""``ToolRegistry``: the tools an agent may call, server and client, and the one place calls run.

``execute()`` turns every tool-side failure into an error ``ToolResultBlock`` the model can read and
act on; only cancellation (and ``BaseException``s such as ``KeyboardInterrupt``) propagate.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from pydantic import ValidationError

from agcore._clock import monotonic
from agcore.llm.types import ToolDefinition, ToolResultBlock, ToolUseBlock
from agcore.tools._context import ToolContext
from agcore.tools._errors import (
    RetryableToolError,
    ToolDenied,
    ToolError,
    ToolNameCollisionError,
    UnknownToolError,
    describe_invalid_arguments,
)
from agcore.tools._tool import Tool, Truncation
from agcore.tools._windows import call_keywords

__all__ = ["ToolExecution", "ToolRegistry", "ToolStatus"]

_log = logging.getLogger("agcore.tools")

ToolStatus = Literal[
    "ok", "unknown_tool", "parse_error", "client_tool", "invalid_arguments", "denied", "timeout", "error"
]


@dataclass(frozen=True, slots=True)
class ToolExecution:
    """How one call went: the result for the model, plus what a loop or hook wants to know.

    ``attempts`` counts runs of the tool (0 when it never ran: unknown, invalid, client...);
    ``duration`` is wall-clock seconds; ``error`` is the exception behind a failure, if any.
    """

    result: ToolResultBlock
    status: ToolStatus
    attempts: int
    duration: float
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        """Whether the tool ran and succeeded (``status == "ok"``)."""
        return self.status == "ok"


class ToolRegistry:
    """Server tools (run here) and client tools (run by the caller), by unique name.

    ``default_timeout`` (seconds) applies to tools that set no ``timeout`` of their own;
    ``truncation`` to tools that set no ``truncation``: output over a tool's ``max_output_chars`` is
    cut at its ``"head"`` (the default) or to ``"keywords"`` windows (its head, its tail and the
    lines around the terms of the call's arguments: ``pattern``, ``query``, ``path``...).
    """

    def __init__(
        self,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        *,
        default_timeout: float | None = None,
        truncation: Truncation = "head",
    ) -> None:
        if default_timeout is not None and default_timeout <= 0:
            raise ValueError(f"default_timeout must be positive seconds or None, not {default_timeout!r}")
        if truncation not in ("head", "keywords"):
            raise ValueError(f"truncation is 'head' or 'keywords', not {truncation!r}")
        self.default_timeout = default_timeout
        self.truncation: Truncation = truncation
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.register(item)

    # ---------------------------------------------------------------------------- registration

    def register(self, tool: Tool | Callable[..., Any], *, replace: bool = False) -> Tool:
        """Add a tool (a plain function is wrapped with ``Tool.from_function``); returns the Tool."""
        item = tool if isinstance(tool, Tool) else Tool.from_function(tool)
        if not replace:
            self._check_free(item.name)
        self._tools[item.name] = item
        return item

    def register_client_tool(self, definition: ToolDefinition | Tool, *, replace: bool = False) -> Tool:
        """Add a tool the caller executes. A server ``Tool`` given here is registered by its
        definition only, as a client tool."""
        if isinstance(definition, Tool) and definition.mode == "client":
            item = definition
        else:
            d = definition.definition() if isinstance(definition, Tool) else definition
            item = Tool.client(d.name, d.description, dict(d.input_schema))
        if not replace:
            self._check_free(item.name)
        self._tools[item.name] = item
        return item

    def merge_client_definitions(self, definitions: Iterable[ToolDefinition]) -> list[Tool]:
        """Take the client tools an application sends with a request: each replaces an earlier
        client tool of its name; a name held by a server tool is an error (nothing is merged then)."""
        pending = list(definitions)
        for d in pending:
            existing = self._tools.get(d.name)
            if existing is not None and existing.mode == "server":
                raise ToolNameCollisionError(
                    f"The client tool '{d.name}' has the name of a server tool; rename the client "
                    "tool (server and client tools share one namespace).",
                    tool_name=d.name,
                )
        return [self.register_client_tool(d, replace=True) for d in pending]

    def unregister(self, name: str) -> Tool:
        """Remove and return the tool called ``name`` (``UnknownToolError``, a KeyError, if none)."""
        try:
            return self._tools.pop(name)
        except KeyError:
            raise self._unknown(name) from None

    def _check_free(self, name: str) -> None:
        existing = self._tools.get(name)
        if existing is not None:
            raise ToolNameCollisionError(
                f"A {existing.mode} tool named '{name}' is already registered; pass replace=True to "
                "replace it, or give the new tool another name.",
                tool_name=name,
            )

    # ----------------------------------------------------------------------------------- lookup

    def classify(self, name: str) -> Literal["server", "client", "unknown"]:
        """Who runs tool ``name``: ``"server"`` (this process), ``"client"`` (the caller) or
        ``"unknown"`` (no such tool)."""
        tool = self._tools.get(name)
        return "unknown" if tool is None else tool.mode

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or None (``registry[name]`` raises instead, suggesting close names)."""
        return self._tools.get(name)

    def precheck(self, call: ToolUseBlock) -> str | None:
        """The denial ``call`` would get from its tool (``Tool.precheck``), worded as the result the
        model reads (``Denied: ...``), before anyone is asked to approve it; None when it may go on
        (or the tool is unknown: running it says so)."""
        tool = self._tools.get(call.name)
        reason = None if tool is None else tool.precheck(call.input)
        return None if reason is None else f"Denied: {reason}"  # worded as when running it is refused

    def __getitem__(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise self._unknown(name) from None

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def names(self) -> list[str]:
        """The tool names, in registration order."""
        return list(self._tools)

    def definitions(
        self,
        *,
        names: Iterable[str] | None = None,
        mode: Literal["server", "client"] | None = None,
        predicate: Callable[[Tool], bool] | None = None,
    ) -> list[ToolDefinition]:
        """The definitions to send to a model: all tools in registration order, or the ``names``
        given (in that order; an unknown name raises ``UnknownToolError``), filtered by ``mode`` and
        ``predicate``."""
        if names is None:
            tools: Iterable[Tool] = self._tools.values()
        else:
            tools = [self[n] for n in dict.fromkeys(names)]
        return [
            t.definition()
            for t in tools
            if (mode is None or t.mode == mode) and (predicate is None or predicate(t))
        ]

    def __repr__(self) -> str:
        return f"ToolRegistry({self.names()!r})"

    # -------------------------------------------------------------------------------- execution

    async def execute(
        self, call: ToolUseBlock, ctx: ToolContext, *, default_timeout: float | None = None
    ) -> ToolResultBlock:
        """Run one call and return its result; tool-side failures become ``is_error`` results.

        The timeout per attempt is the tool's own, else the registry's ``default_timeout``, else the
        ``default_timeout`` given here (the agent loop passes ``AgentConfig.tool_timeout``).
        Cancellation from outside propagates (no result is returned for a cancelled call).
        """
        return (await self.execute_detailed(call, ctx, default_timeout=default_timeout)).result

    async def execute_detailed(
        self, call: ToolUseBlock, ctx: ToolContext, *, default_timeout: float | None = None
    ) -> ToolExecution:
        """``execute()``, also reporting the status, attempts, duration and the exception."""
        started = monotonic()
        tool = self._tools.get(call.name)
        if tool is None:
            unknown = self._unknown(call.name)
            return _failed(call, "unknown_tool", unknown.message, started, unknown)
        if call.parse_error is not None:
            return _failed(call, "parse_error", call.parse_error, started)
        run = tool._call
        if run is None:
            message = f"Tool '{tool.name}' is a client tool, the caller executes it; it cannot run here."
            return _failed(call, "client_tool", message, started)
        try:
            values = tool._prepare(call.input)
        except ValidationError as exc:
            message = describe_invalid_arguments(tool.name, exc, call.input, tool.parameter_names)
            return _failed(call, "invalid_arguments", message, started, exc)
        if tool.wants_context:
            ctx = ctx.for_call(call)
        timeout = tool.timeout if tool.timeout is not None else self.default_timeout
        if timeout is None:
            timeout = default_timeout
        attempts = 0
        while True:
            attempts += 1
            try:
                if timeout is None:
                    value = await run(values, ctx)
                else:
                    # move_on_after + cancelled_caught, not fail_after: a TimeoutError the tool raises
                    # itself stays an ordinary tool error, and an outer cancellation passes through.
                    with anyio.move_on_after(timeout) as scope:
                        value = await run(values, ctx)
                    if scope.cancelled_caught:
                        message = (
                            f"Tool '{tool.name}' timed out after {timeout:g}s"
                            + (f" (each of {attempts} attempts)" if attempts > 1 else "")
                            + ". Try again with a smaller request or different arguments."
                        )
                        expired = TimeoutError(message)
                        if await _retry_pause(tool, expired, attempts):
                            continue
                        return _failed(call, "timeout", message, started, expired, attempts)
                break
            except Exception as caught:
                failure = _single(caught)
                if await _retry_pause(tool, failure, attempts):
                    continue
                status, message = _describe_failure(tool, failure, attempts)
                return _failed(call, status, message, started, failure, attempts)
        if (tool.truncation or self.truncation) == "keywords":
            content = tool.render(value, keywords=call_keywords(call.input))
        else:
            content = tool.render(value)
        result = ToolResultBlock(tool_use_id=call.id, content=content)
        return ToolExecution(result, "ok", attempts, monotonic() - started)

    def _unknown(self, name: str) -> UnknownToolError:
        names = list(self._tools)
        if not names:
            return UnknownToolError(f"Unknown tool '{name}': no tools are available.", tool_name=name)
        close = difflib.get_close_matches(name, names, n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        shown = ", ".join(names[:50]) + (f" and {len(names) - 50} more" if len(names) > 50 else "")
        return UnknownToolError(
            f"Unknown tool '{name}'.{hint} Available tools: {shown}.", tool_name=name
        )


def _single(exc: Exception) -> Exception:
    """The one exception inside (nested) single-member exception groups, e.g. from a task group."""
    while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


async def _retry_pause(tool: Tool, failure: Exception, attempts: int) -> bool:
    """Whether ``failure`` of attempt ``attempts`` is retried; if so, after the tool's pause (or the
    ``retry_after`` a ``RetryableToolError`` asks for). A denial is a decision, never retried."""
    if attempts > tool.max_retries or isinstance(failure, ToolDenied):
        return False
    if not isinstance(failure, (RetryableToolError, *tool.retry_on)):
        return False
    delay = tool.retry_delay
    if isinstance(failure, RetryableToolError) and failure.retry_after is not None:
        delay = failure.retry_after
    if delay > 0:
        await anyio.sleep(delay)
    return True


def _describe_failure(tool: Tool, exc: Exception, attempts: int) -> tuple[ToolStatus, str]:
    if isinstance(exc, ToolDenied):
        return "denied", f"Denied: {exc.reason or 'the call is not allowed'}"
    if isinstance(exc, ToolError):
        message = exc.message or f"Tool '{tool.name}' failed ({type(exc).__name__})."
        if isinstance(exc, RetryableToolError) and attempts > 1:
            message = f"Tool '{tool.name}' failed after {attempts} attempts: {message}"
        return "error", message
    _log.warning("tool %r raised %s", tool.name, type(exc).__name__, exc_info=exc)
    detail = str(exc)
    tries = f" (after {attempts} attempts)" if attempts > 1 else ""
    return "error", (f"Tool '{tool.name}' raised {type(exc).__name__}{tries}"
                     + (f": {detail}" if detail else "."))


def _failed(
    call: ToolUseBlock,
    status: ToolStatus,
    message: str,
    started: float,
    error: BaseException | None = None,
    attempts: int = 0,
) -> ToolExecution:
    result = ToolResultBlock(tool_use_id=call.id, content=message, is_error=True)
    return ToolExecution(result, status, attempts, monotonic() - started, error)
