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
import json
import re
import sys
import warnings
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, overload

import anyio.to_thread
from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from agcore.llm.types import ImageBlock, TextBlock, ToolDefinition
from agcore.tools._context import ToolContext
from agcore.tools._errors import ToolDefinitionWarning, ToolError
from agcore.tools._schema import FunctionSchema, function_schema

__all__ = [
    "Precheck",
    "VENDOR_TOOL_NAME", "Tool", "ToolHandler", "ToolOutput", "render_output", "tool", "truncate_output",
]

ToolOutput = str | list[TextBlock | ImageBlock]
ToolHandler = Callable[[dict[str, Any], ToolContext], Awaitable[Any]]
#: A tool's pre-check: the call's arguments in, why it would be refused out (None: it may run).
Precheck = Callable[[Mapping[str, Any]], "str | None"]
ToolMode = Literal["server", "client"]

# Internals the registry calls directly: prepare (validate, may raise ValidationError), then call.
_Prepare = Callable[[Any], Any]
_Call = Callable[[Any, ToolContext], Awaitable[Any]]

DEFAULT_MAX_OUTPUT_CHARS = 50_000
_BLOCKS = (TextBlock, ImageBlock)
# One encoder, built once: json.dumps with options builds a new one per call.
_encode_json = json.JSONEncoder(ensure_ascii=False, default=to_jsonable_python).encode
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

#: The tool names Anthropic and OpenAI accept; any other name is refused by them at request time.
VENDOR_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def _warn_vendor_name(name: str) -> None:
    """Warn at the user's line (the first frame outside ``agcore.tools``) of a name the big vendors
    refuse. Only a warning: MCP servers and other providers name tools more freely."""
    level, frame = 2, sys._getframe(1)
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith("agcore.tools"):
        frame, level = frame.f_back, level + 1
    warnings.warn(
        f"tool name {name!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$, which Anthropic and OpenAI "
        "require: they refuse the request at call time. Give the tool a name of letters, digits, "
        "'_' and '-' (at most 64 characters), e.g. with name=...",
        ToolDefinitionWarning, stacklevel=level,
    )


class Tool:
    """A tool a model may call. Build one with ``@tool``, ``Tool.from_function``, ``Tool.from_handler``
    or ``Tool.client``; the options below may be changed afterwards, the definition may not.

    * ``requires_confirmation``: the agent loop asks before running it (the registry does not ask);
    * ``timeout``: seconds per attempt (None: the registry's default). An async tool is cancelled at
      the deadline. A sync tool's thread cannot be killed: it is abandoned and runs to completion in
      the background, its result discarded, so give sync tools their own internal timeouts too;
    * ``max_retries``/``retry_delay``: how often a ``RetryableToolError`` is retried, and the pause;
    * ``max_output_chars``: longer text output is cut, with a marker saying how much (None: no cap);
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
        timeout: float | None = None,
        max_retries: int = 0,
        retry_delay: float = 0.0,
        max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS,
        prepare: _Prepare | None = None,
        call: _Call | None = None,
        function: Callable[..., Any] | None = None,
        parameter_names: tuple[str, ...] | None = None,
        wants_context: bool = True,
        arguments_model: type[BaseModel] | None = None,
    ) -> None:
        if not name or any(c.isspace() for c in name):
            raise ValueError(f"invalid tool name {name!r}: use a non-empty name without whitespace")
        if VENDOR_TOOL_NAME.fullmatch(name) is None:
            _warn_vendor_name(name)
        if timeout is not None and timeout <= 0:
            raise ValueError(f"tool {name!r}: timeout must be positive seconds or None, not {timeout!r}")
        if max_retries < 0 or retry_delay < 0:
            raise ValueError(f"tool {name!r}: max_retries and retry_delay must not be negative")
        if max_output_chars is not None and max_output_chars <= 0:
            raise ValueError(f"tool {name!r}: max_output_chars must be positive or None")
        if (call is None) != (mode == "client"):
            raise ValueError(f"tool {name!r}: a server tool needs a handler and a client tool has none")
        self._name = name
        self._description = description
        self._input_schema = input_schema if input_schema is not None else dict(_EMPTY_SCHEMA)
        self._mode: ToolMode = mode
        self.requires_confirmation = requires_confirmation
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_delay = retry_delay
        self.max_output_chars = max_output_chars
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
        timeout: float | None = None,
        max_retries: int = 0,
        retry_delay: float = 0.0,
        max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS,
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
            timeout=timeout,
            max_retries=max_retries,
            retry_delay=retry_delay,
            max_output_chars=max_output_chars,
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
        timeout: float | None = None,
        max_retries: int = 0,
        retry_delay: float = 0.0,
        max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS,
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
            timeout=timeout,
            max_retries=max_retries,
            retry_delay=retry_delay,
            max_output_chars=max_output_chars,
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
    ) -> Tool:
        """A tool the application executes: the loop pauses and hands the call to the caller."""
        return cls(
            name, description, input_schema, mode="client", requires_confirmation=requires_confirmation
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

    def render(self, value: Any) -> ToolOutput:
        """Convert a return value to tool-result content and apply ``max_output_chars``."""
        if type(value) is str and (self.max_output_chars is None or len(value) <= self.max_output_chars):
            return value  # the common case, kept cheap
        return truncate_output(render_output(value), self.max_output_chars)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the original function (or handler) directly: no validation, no thread, no timeout."""
        if self._function is None:
            raise TypeError(f"tool {self._name!r} is a client tool: there is nothing to call")
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool(name={self._name!r}, mode={self._mode!r})"


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


# -------------------------------------------------------------------------------------- output


def render_output(value: Any) -> ToolOutput:
    """A tool's return value as tool-result content: str as is; None -> ""; a TextBlock/ImageBlock or a
    list of them -> blocks; a pydantic model -> its JSON; other data -> JSON (``ensure_ascii=False``),
    falling back to ``str(value)`` for what JSON cannot hold."""
    if isinstance(value, str):
        return str(value)
    if value is None:
        return ""
    if type(value) is int:
        return str(value)
    if isinstance(value, TextBlock | ImageBlock):
        return [value]
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, list | tuple) and value and all(isinstance(v, _BLOCKS) for v in value):
        return list(value)
    try:
        return _encode_json(value)
    except (TypeError, ValueError):
        return str(value)


def truncate_output(output: ToolOutput, limit: int | None) -> ToolOutput:
    """Cut text past ``limit`` characters, ending with ``[… truncated N of M characters]``.

    For block lists the budget spans all text blocks in order; images are kept.
    """
    if limit is None:
        return output
    if isinstance(output, str):
        if len(output) <= limit:
            return output
        return output[:limit] + _marker(len(output) - limit, len(output))
    total = sum(len(b.text) for b in output if isinstance(b, TextBlock))
    if total <= limit:
        return output
    budget = limit
    kept: list[TextBlock | ImageBlock] = []
    for block in output:
        if isinstance(block, TextBlock):
            if budget > 0:
                kept.append(block if len(block.text) <= budget else TextBlock(text=block.text[:budget]))
            budget -= len(block.text)
        else:
            kept.append(block)
    kept.append(TextBlock(text=_marker(total - limit, total).lstrip("\n")))
    return kept


def _marker(cut: int, total: int) -> str:
    return f"\n[… truncated {cut:,} of {total:,} characters]"


# -------------------------------------------------------------------------------------- @tool


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    requires_confirmation: bool = False,
    timeout: float | None = None,
    max_retries: int = 0,
    retry_delay: float = 0.0,
    max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_confirmation: bool = False,
    timeout: float | None = None,
    max_retries: int = 0,
    retry_delay: float = 0.0,
    max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a function a ``Tool``: bare (``@tool``) or with options (``@tool(timeout=5)``).

    The result stays callable: calling it calls the original function.
    """

    def decorate(f: Callable[..., Any]) -> Tool:
        return Tool.from_function(
            f,
            name=name,
            description=description,
            requires_confirmation=requires_confirmation,
            timeout=timeout,
            max_retries=max_retries,
            retry_delay=retry_delay,
            max_output_chars=max_output_chars,
        )

    return decorate(fn) if fn is not None else decorate
