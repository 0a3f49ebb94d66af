"""``Tool``: one thing a model may call, with its schema, options and a fast invocation path.

Three kinds, one class:

* **function tools** (``@tool`` / ``Tool.from_function``): schema and validation come from the
  signature and docstring; sync functions run in a worker thread so the event loop never blocks;
* **handler tools** (``Tool.from_handler``): a hand-written JSON schema and an async handler that takes
  the raw argument dict (MCP tools, generated tools);
* **client tools** (``Tool.client``): only a definition; the application executes them.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, overload

import anyio.to_thread
from pydantic import BaseModel, ValidationError

from agcore.llm.types import ToolDefinition
from agcore.tools._context import ToolContext
from agcore.tools._errors import ToolError
from agcore.tools._schema import FunctionSchema, function_schema
from agcore.tools._tool_output import ToolOutput, render_output, truncate_output
from agcore.tools._tool_settings import VENDOR_TOOL_NAME, check_tool_settings
from agcore.tools._windows import keyword_windows

__all__ = [
    "VENDOR_TOOL_NAME", "Precheck", "RetryOn", "Tool", "ToolHandler", "ToolOutput", "Truncation",
    "render_output", "tool", "truncate_output",
]

ToolHandler = Callable[[dict[str, Any], ToolContext], Awaitable[Any]]
#: A tool's pre-check: the call's arguments in, why it would be refused out (None: it may run).
Precheck = Callable[[Mapping[str, Any]], "str | None"]
ToolMode = Literal["server", "client"]
#: Exceptions a tool's failures are retried on, besides ``RetryableToolError``: a class or a tuple.
RetryOn = type[Exception] | tuple[type[Exception], ...]
#: How output over ``max_output_chars`` is cut: at its ``"head"``, or to the ``"keywords"`` windows
#: (head, tail and the lines around what the call's arguments name; see ``keyword_windows``).
Truncation = Literal["head", "keywords"]

# Internals the registry calls directly: prepare (validate, may raise ValidationError), then call.
_Prepare = Callable[[Any], Any]
_Call = Callable[[Any, ToolContext], Awaitable[Any]]

DEFAULT_MAX_OUTPUT_CHARS = 50_000
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

class Tool:
    """A tool a model may call. Build one with ``@tool``, ``Tool.from_function``, ``Tool.from_handler``
    or ``Tool.client``; the options below may be changed afterwards, the definition may not.

    * ``requires_confirmation``: the agent loop asks before running it (the registry does not ask);
    * ``read_only``: the tool only reads (files, the index, memory) and changes nothing, so it may be
      offered where nothing may change: a task agent drafting its plan with ``read_only_planning``;
    * ``timeout``: seconds per attempt (None: the registry's default). An async tool is cancelled at
      the deadline. A sync tool's thread cannot be killed: it is abandoned and runs to completion in
      the background, its result discarded, so give sync tools their own internal timeouts too;
    * ``max_retries``/``retry_delay``: how often a failure is retried, and the pause between tries.
      A ``RetryableToolError`` is always retryable (its ``retry_after`` wins over the delay);
      ``retry_on`` adds exception classes (``retry_on=Exception``: any failure, as seed 004's loop
      does; a timeout too, when ``TimeoutError`` is among them). ``ToolDenied`` is never retried;
    * ``max_output_chars``: longer text output is cut, with a marker saying how much (None: no cap);
    * ``truncation``: how: ``"head"`` or ``"keywords"`` (None: the registry's ``truncation``).
    * ``prechecker``: a function of the call's arguments that returns why the call would be refused
      (None: it may run). The agent loop calls ``precheck`` before asking for confirmation, so a call
      the tool will refuse anyway (``run_command("rm -rf /")``) is refused at once, never shown for
      approval. It must be cheap and must not act: it only reads the arguments.
    """

    def __init__(
        self,
        name: str,
        description: str = "",
        input_schema: dict[str, Any] | None = None,
        *,
        mode: ToolMode = "server",
        requires_confirmation: bool = False,
        read_only: bool = False,
        timeout: float | None = None,
        max_retries: int = 0,
        retry_delay: float = 0.0,
        retry_on: RetryOn = (),
        max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS,
        truncation: Truncation | None = None,
        prepare: _Prepare | None = None,
        call: _Call | None = None,
        function: Callable[..., Any] | None = None,
        parameter_names: tuple[str, ...] | None = None,
        wants_context: bool = True,
        arguments_model: type[BaseModel] | None = None,
    ) -> None:
        check_tool_settings(name, timeout, max_retries, retry_delay, max_output_chars, truncation,
                        has_handler=call is not None, mode=mode)
        self._name = name
        self._description = description
        self._input_schema = input_schema if input_schema is not None else dict(_EMPTY_SCHEMA)
        self._mode: ToolMode = mode
        self.requires_confirmation = requires_confirmation
        self.read_only = read_only
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_delay = retry_delay
        self.retry_on: tuple[type[Exception], ...] = _exception_classes(name, retry_on)
        self.max_output_chars = max_output_chars
        self.truncation: Truncation | None = truncation
        self.prechecker: Precheck | None = None
        self._prepare: _Prepare = prepare if prepare is not None else _require_object
        self._call = call
        self._function = function
        self.parameter_names = parameter_names  # what the model may send, for error messages
        self.wants_context = wants_context  # skip building a per-call context when False
        self.arguments_model = arguments_model
        self._definition = ToolDefinition(
            name=name, description=description, input_schema=self._input_schema
        )
        if function is not None:
            self.__wrapped__ = function
            self.__doc__ = getattr(function, "__doc__", None)

    @property
    def name(self) -> str:
        """The name the model calls the tool by."""
        return self._name

    @property
    def description(self) -> str:
        """What the tool does, as the model reads it."""
        return self._description

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments, as sent to the model."""
        return self._input_schema

    @property
    def mode(self) -> ToolMode:
        """``"server"`` (agcore runs it) or ``"client"`` (the turn pauses for the caller to run it)."""
        return self._mode

    def definition(self) -> ToolDefinition:
        """What the model is told about this tool."""
        return self._definition

    def precheck(self, arguments: Mapping[str, Any]) -> str | None:
        """Why the call with ``arguments`` would be refused, or None (also when there is no
        ``prechecker``, or it cannot read the arguments: running the call reports those)."""
        if self.prechecker is None or not isinstance(arguments, Mapping):
            return None
        try:
            return self.prechecker(arguments)
        except (TypeError, ValueError, KeyError):
            return None

    # ------------------------------------------------------------------------------- factories

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        requires_confirmation: bool = False,
        read_only: bool = False,
        timeout: float | None = None,
        max_retries: int = 0,
        retry_delay: float = 0.0,
        retry_on: RetryOn = (),
        max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS,
        truncation: Truncation | None = None,
    ) -> Tool:
        """A tool from a sync or async function: its name, its docstring's first paragraph, and a
        schema built from its type hints and docstring parameter docs (Google, NumPy or reST).

        A parameter annotated ``ToolContext`` is injected, not shown to the model. ``*args`` and
        ``**kwargs`` raise ``TypeError``, as does a type pydantic cannot build from JSON.
        """
        if isinstance(fn, Tool):
            raise TypeError(f"{fn!r} is already a Tool")
        tool_name = name or getattr(fn, "__name__", None)
        if not tool_name or tool_name == "<lambda>":
            raise TypeError(f"cannot name a tool after {fn!r}: pass name=...")
        first = next(iter(inspect.signature(fn).parameters.values()), None)
        if first is not None and first.name in ("self", "cls") and first.annotation is first.empty:
            raise TypeError(
                f"tool {tool_name!r} takes {first.name!r}: decorate a plain function, or register "
                f"the bound method (registry.register(instance.{tool_name}))"
            )
        schema = function_schema(fn, name=tool_name, description=description)
        validate = schema.model.__pydantic_validator__.validate_python

        def prepare(arguments: Any) -> dict[str, Any]:
            values: dict[str, Any] = validate(arguments).__dict__
            return values

        return cls(
            tool_name,
            schema.description,
            schema.input_schema,
            requires_confirmation=requires_confirmation,
            read_only=read_only,
            timeout=timeout,
            max_retries=max_retries,
            retry_delay=retry_delay,
            retry_on=retry_on,
            max_output_chars=max_output_chars,
            truncation=truncation,
            prepare=prepare,
            call=_function_caller(fn, schema, _is_async(fn)),
            function=fn,
            parameter_names=schema.parameter_names,
            wants_context=schema.context_parameter is not None,
            arguments_model=schema.model,
        )

    @classmethod
    def from_handler(
        cls,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        handler: ToolHandler,
        *,
        requires_confirmation: bool = False,
        read_only: bool = False,
        timeout: float | None = None,
        max_retries: int = 0,
        retry_delay: float = 0.0,
        retry_on: RetryOn = (),
        max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS,
        truncation: Truncation | None = None,
    ) -> Tool:
        """A tool with a hand-written JSON schema and an async ``handler(arguments, ctx)``.

        Arguments are only checked to be an object; the handler validates the rest. Its return value
        is converted like a function tool's (str, blocks, pydantic model, JSON-able data).
        """
        properties = input_schema.get("properties")
        return cls(
            name,
            description,
            input_schema,
            requires_confirmation=requires_confirmation,
            read_only=read_only,
            timeout=timeout,
            max_retries=max_retries,
            retry_delay=retry_delay,
            retry_on=retry_on,
            max_output_chars=max_output_chars,
            truncation=truncation,
            call=handler,
            function=handler,
            parameter_names=tuple(properties) if isinstance(properties, dict) else None,
        )

    @classmethod
    def client(
        cls,
        name: str,
        description: str = "",
        input_schema: dict[str, Any] | None = None,
        *,
        requires_confirmation: bool = False,
        read_only: bool = False,
    ) -> Tool:
        """A tool the application executes: the loop pauses and hands the call to the caller."""
        return cls(
            name, description, input_schema, mode="client", requires_confirmation=requires_confirmation,
            read_only=read_only,
        )

    # ----------------------------------------------------------------------------------- calling

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Validate ``arguments`` (pydantic ``ValidationError`` if wrong), run the tool once, and
        return its converted, truncated output. No timeout or retries: the registry adds those."""
        if self._call is None:
            raise ToolError(
                f"Tool '{self._name}' is a client tool, the caller executes it", tool_name=self._name
            )
        values = self._prepare(arguments)
        return self.render(await self._call(values, ctx))

    def render(self, value: Any, *, keywords: Sequence[re.Pattern[str]] | None = None) -> ToolOutput:
        """Convert a return value to tool-result content and apply ``max_output_chars``: text over
        it is cut to ``keyword_windows`` around ``keywords`` when they are given, else at its head
        (block lists are always cut at the head)."""
        limit = self.max_output_chars
        if type(value) is str and (limit is None or len(value) <= limit):
            return value  # the common case, kept cheap
        output = render_output(value)
        if keywords is not None and limit is not None and isinstance(output, str):
            return keyword_windows(output, keywords, limit)
        return truncate_output(output, limit)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the original function (or handler) directly: no validation, no thread, no timeout."""
        if self._function is None:
            raise TypeError(f"tool {self._name!r} is a client tool: there is nothing to call")
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool(name={self._name!r}, mode={self._mode!r})"


def _exception_classes(name: str, retry_on: RetryOn) -> tuple[type[Exception], ...]:
    classes = retry_on if isinstance(retry_on, tuple) else (retry_on,)
    for cls in classes:
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            raise TypeError(f"tool {name!r}: retry_on takes Exception classes (or a tuple of them), "
                            f"not {cls!r}; e.g. retry_on=(OSError, TimeoutError)")
    return classes


def _is_async(fn: Callable[..., Any]) -> bool:
    call = type(fn).__call__ if not inspect.isroutine(fn) else None  # a callable object
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


def _function_caller(fn: Callable[..., Any], schema: FunctionSchema, is_async: bool) -> _Call:
    simple = not schema.positional and all(p == f for p, f in schema.keywords)
    context_keyword = schema.context_keyword
    bind = schema.bind

    if is_async:
        # Return the coroutine itself: no extra frame on the hot path.
        if simple and context_keyword is None:
            return lambda values, ctx: fn(**values)
        if simple and context_keyword is not None:
            keyword: str = context_keyword
            return lambda values, ctx: fn(**values, **{keyword: ctx})

        def call_bound(values: dict[str, Any], ctx: ToolContext) -> Awaitable[Any]:
            args, kwargs = bind(values, ctx)
            return fn(*args, **kwargs)  # type: ignore[no-any-return]

        return call_bound

    async def call_in_thread(values: dict[str, Any], ctx: ToolContext) -> Any:
        args, kwargs = bind(values, ctx)
        # abandon_on_cancel: a timeout or cancellation returns at once; the thread, which cannot be
        # killed, finishes in the background and its result is dropped.
        result = await anyio.to_thread.run_sync(
            functools.partial(fn, *args, **kwargs), abandon_on_cancel=True
        )
        if inspect.isawaitable(result):  # a sync wrapper around a coroutine function
            result = await result
        return result

    return call_in_thread


def _require_object(arguments: Any) -> Any:
    if isinstance(arguments, dict):
        return arguments
    raise ValidationError.from_exception_data(
        "arguments", [{"type": "dict_type", "loc": (), "input": arguments}]
    )


# -------------------------------------------------------------------------------------- @tool


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    requires_confirmation: bool = False,
    read_only: bool = False,
    timeout: float | None = None,
    max_retries: int = 0,
    retry_delay: float = 0.0,
    retry_on: RetryOn = (),
    max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS,
    truncation: Truncation | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_confirmation: bool = False,
    read_only: bool = False,
    timeout: float | None = None,
    max_retries: int = 0,
    retry_delay: float = 0.0,
    retry_on: RetryOn = (),
    max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS,
    truncation: Truncation | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a function a ``Tool``: bare (``@tool``) or with options (``@tool(timeout=5)``).

    The result stays callable: calling it calls the original function.
    ``@tool(max_retries=2, retry_on=Exception, retry_delay=0.5)`` retries any failure twice.
    """

    def decorate(f: Callable[..., Any]) -> Tool:
        return Tool.from_function(
            f,
            name=name,
            description=description,
            requires_confirmation=requires_confirmation,
            read_only=read_only,
            timeout=timeout,
            max_retries=max_retries,
            retry_delay=retry_delay,
            retry_on=retry_on,
            max_output_chars=max_output_chars,
            truncation=truncation,
        )

    return decorate(fn) if fn is not None else decorate
