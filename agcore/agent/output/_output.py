"""Typed final answers: ``submit_turn(..., output_type=Model)`` and ``Agent.output_type``.

A turn with an output type ends only on an answer that validates into that type (anything a pydantic
``TypeAdapter`` takes: a ``BaseModel``, a dataclass, ``list[...]``, a ``TypedDict``, a union; ``str``
is the plain text answer). The model may call tools first; the answer reaches agcore one of three ways,
chosen per model call (``StructuredOutput.mode``):

* ``native``: the vendor constrains the text to the JSON Schema (``LLMRequest.response_format``:
  OpenAI's ``response_format`` json_schema (the Responses API's ``text.format``), strict where the
  schema allows it; Ollama's ``format``;
  Anthropic's ``output_config.format``); the reply's text is the answer;
* ``tool``: a tool named ``final_result`` (``StructuredOutput.name``) whose arguments are the answer is
  offered beside the agent's tools (forced on Anthropic, whose tool use is its robust way to JSON); a
  text-mode model sees it in its tool list and calls it in text like any other tool;
* ``prompted``: the schema goes in the system prompt and the answer is read from the text (fenced
  block, bare JSON, or JSON inside prose: the first value that validates), for servers that have
  neither.

``auto`` (the default) is ``native`` for OpenAI (Chat Completions and Responses), and for Ollama
when no tools are offered (its schema constraint would keep the model from calling them), else
``tool``. Whatever the mode, a text answer
that holds valid JSON is accepted too. An answer that does not validate goes back to the model with
pydantic's errors (as the final tool's error result, or as a user message) and the model tries again,
at most ``max_retries`` times (``AgentConfig.output_retries``); then the turn ends with
``OutputValidationError`` (stop ``error``, recoverable), the history valid for the next turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import PydanticUserError, TypeAdapter, ValidationError

from agcore.agent._errors import AgentError, ConfigError
from agcore.agent.output._output_schema import (
    WRAP_KEY,
    closed_schema,
    json_values,
    object_schema,
    strict_compatible,
)
from agcore.llm.types import (
    LLMRequest,
    ResponseFormat,
    ToolChoice,
    ToolDefinition,
)

if TYPE_CHECKING:
    from agcore.llm.provider import LLMProvider

__all__ = [
    "OutputMode",
    "OutputValidationError",
    "StructuredOutput",
    "resolve_output",
    "describe_validation_error",
    "shape_request",
    "unforce_with_thinking",
]

#: How the typed answer is asked for; see the module docstring.
OutputMode = Literal["auto", "native", "tool", "prompted"]

_MAX_ERRORS = 12
#: Providers whose vendor constrains a reply to a JSON Schema alongside native tool calls.
_NATIVE_WITH_TOOLS = frozenset({"openai", "openai-responses"})
#: Providers whose vendor constrains a reply to a JSON Schema, but only when no tools are offered.
_NATIVE_WITHOUT_TOOLS = frozenset({"ollama"})
#: Providers on which the final-answer tool is forced (``tool_choice`` any) unless thinking is on.
_FORCED_TOOL = frozenset({"anthropic"})


class OutputValidationError(AgentError):
    """The model's final answer did not validate into the turn's output type, even after
    ``retries`` tries with the errors shown to it. ``errors`` is pydantic's last error text and
    ``raw`` the last answer. Recoverable: the history is valid, and another turn (a clearer prompt,
    a stronger model, a looser type) may succeed."""

    recoverable: ClassVar[bool] = True

    def __init__(self, message: str, *, type_name: str, errors: str, raw: str, retries: int) -> None:
        super().__init__(message)
        self.type_name = type_name
        self.errors = errors
        self.raw = raw
        self.retries = retries


@dataclass(frozen=True, eq=False)
class StructuredOutput:
    """What a typed turn must answer with: ``type`` (anything a pydantic ``TypeAdapter`` takes) and
    how to ask for it. ``mode``: ``native`` (the vendor holds the text to the JSON Schema:
    ``LLMRequest.response_format``), ``tool`` (a final-answer tool whose arguments are the answer),
    ``prompted`` (the schema in the system prompt, JSON read from the text) or ``auto`` (native on
    OpenAI, and on Ollama without tools; else tool; the guide's "Typed final answers" page);
    ``name``/``description`` name the answer to the model (the final tool's name and description,
    the response format's name); ``max_retries`` overrides ``AgentConfig.output_retries``.
    ``output_type=Model`` anywhere is ``StructuredOutput(Model)``. Raises ``ConfigError`` (piece
    ``"output_type"``) for a ``type`` pydantic cannot validate or describe (``output_type=5``)."""

    type: Any
    mode: OutputMode = "auto"
    name: str = "final_result"
    description: str | None = None
    max_retries: int | None = None
    adapter: TypeAdapter[Any] = field(init=False, repr=False)
    #: The answer's JSON Schema as sent: a JSON object (non-object types are wrapped in ``result``).
    json_schema: dict[str, Any] = field(init=False, repr=False)
    wrapped: bool = field(init=False, repr=False)
    #: Whether the schema meets OpenAI's strict subset (every property required, objects closed).
    strict: bool = field(init=False, repr=False)
    #: What the request carries in ``native`` mode, and the tool offered in ``tool`` mode (built once).
    response_format: ResponseFormat = field(init=False, repr=False)
    final_tool: ToolDefinition = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "native", "tool", "prompted"):
            raise ValueError(f"mode must be 'auto', 'native', 'tool' or 'prompted', not {self.mode!r}")
        if self.max_retries is not None and self.max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, not {self.max_retries}")
        try:
            adapter = TypeAdapter(self.type)
            raw_schema = None if self.is_text else adapter.json_schema()
        except PydanticUserError as exc:  # e.g. output_type=5, or a type with no JSON Schema
            raise ConfigError(
                f"output_type={self.type!r} is not a type an answer can be validated into: pass a "
                "pydantic model, a dataclass, a TypedDict, list[...], str..., or a StructuredOutput "
                f"(pydantic: {type(exc).__name__})",
                piece="output_type", cause=exc,
            ) from exc
        object.__setattr__(self, "adapter", adapter)
        if raw_schema is None:
            schema: dict[str, Any] = {"type": "string"}
            wrapped = False
        else:
            schema, wrapped = object_schema(raw_schema)
        closed = closed_schema(schema)
        object.__setattr__(self, "json_schema", closed)
        object.__setattr__(self, "wrapped", wrapped)
        object.__setattr__(self, "strict", strict_compatible(closed))
        object.__setattr__(self, "response_format", ResponseFormat(
            name=self.name, description=self.description, json_schema=closed, strict=self.strict))
        described = self.description or f"Give the final answer ({self.type_name}). Call it once, last."
        object.__setattr__(self, "final_tool", ToolDefinition(
            name=self.name, description=described, input_schema=closed))

    @property
    def is_text(self) -> bool:
        """Whether the output is the plain text answer (``str``): nothing to ask for, only to keep."""
        return self.type is str

    @property
    def type_name(self) -> str:
        """The output type as messages name it."""
        # ``list[int].__name__`` is "list": generic aliases and unions are named by their repr.
        return self.type.__name__ if isinstance(self.type, type) else repr(self.type)

    def validate_data(self, data: Any) -> Any:
        """The typed value of already-decoded JSON ``data`` (unwrapped); ``ValidationError`` if not."""
        if self.wrapped and isinstance(data, dict) and set(data) == {WRAP_KEY}:
            data = data[WRAP_KEY]
        return self.adapter.validate_python(data)

    def validate_text(self, text: str) -> Any:
        """The typed value of a text answer: the first JSON value in it that validates. ``ValueError``
        when there is none (a ``ValidationError``, of the likeliest value, when JSON was found but
        did not fit)."""
        if self.is_text:
            return text
        first: ValidationError | None = None
        for data in json_values(text):  # e.g. a "[1]" citation before the answer's object
            try:
                return self.validate_data(data)
            except ValidationError as exc:
                first = first or exc
        if first is None:
            raise ValueError("the answer holds no JSON value")
        raise first

    def dump(self, value: Any) -> Any:
        """``value`` as JSON-able data (what plans save, and the text of a tool-given answer)."""
        return self.adapter.dump_python(value, mode="json")


def resolve_output(output_type: Any, agent: object) -> StructuredOutput | None:
    """The turn's ``StructuredOutput``: ``output_type`` if given, else the agent's ``output_type``
    attribute (None: an untyped turn)."""
    if output_type is None:
        output_type = getattr(agent, "output_type", None)
    if output_type is None or isinstance(output_type, StructuredOutput):
        return output_type
    # Building one costs ~0.6 ms (the TypeAdapter and its schema): an agent's type is built once.
    try:
        cached = _BUILT.get(output_type)
    except TypeError:  # an unhashable type form: built every time
        return StructuredOutput(output_type)
    if cached is None:
        if len(_BUILT) >= _BUILT_MAX:
            _BUILT.clear()
        cached = _BUILT[output_type] = StructuredOutput(output_type)
    return cached


_BUILT: dict[Any, StructuredOutput] = {}
_BUILT_MAX = 256


# ------------------------------------------------------------------------------------- request


def _mode(spec: StructuredOutput, request: LLMRequest, provider: LLMProvider, text_mode: bool) -> str:
    if spec.mode != "auto":
        return spec.mode
    native = getattr(provider, "native_structured_output", None)  # a custom provider may say so
    name = provider.provider_name
    if text_mode:
        return "tool"
    if native is True or name in _NATIVE_WITH_TOOLS or (name in _NATIVE_WITHOUT_TOOLS and not request.tools):
        return "native"
    return "tool"


def shape_request(
    spec: StructuredOutput, request: LLMRequest, provider: LLMProvider, text_mode: bool
) -> LLMRequest:
    """``request`` asking for the typed answer, in the mode this provider and model take
    (``text_mode``: the model writes its tool calls as text)."""
    if spec.is_text:
        return request
    mode = _mode(spec, request, provider, text_mode)
    if mode == "native":
        line = f"Give your final answer as a JSON object following the response format `{spec.name}`."
        native = {"response_format": spec.response_format, "system": _with(request.system, line)}
        return request.model_copy(update=native)
    if mode == "prompted":
        schema = json.dumps(spec.json_schema, ensure_ascii=False, separators=(",", ":"))
        line = ("When you give your final answer, answer with only a JSON object that follows this JSON "
                f"Schema, and no other text:\n{schema}")
        return request.model_copy(update={"system": _with(request.system, line)})
    if any(t.name == spec.name for t in request.tools):
        raise ConfigError(
            f"the agent offers a tool named '{spec.name}', which is also the name of the final-answer "
            "tool: pass StructuredOutput(Model, name='another_name') as output_type",
            piece="output_type",
        )
    update: dict[str, Any] = {"tools": [*request.tools, spec.final_tool]}
    line = (f"When you have the final answer, call the `{spec.name}` tool with it; "
            "do not answer in plain text.")
    update["system"] = _with(request.system, line)
    if (provider.provider_name in _FORCED_TOOL and request.tool_choice is None
            and "thinking" not in request.extra):
        update["tool_choice"] = ToolChoice(mode="any")
    return request.model_copy(update=update)


def unforce_with_thinking(request: LLMRequest, provider: LLMProvider) -> LLMRequest:
    """``request`` without the forced final tool when an ``on_llm_request`` hook turned extended
    thinking on after it was shaped: Anthropic refuses a forced tool with thinking (the tool stays
    offered, and the system prompt asks for it)."""
    choice = request.tool_choice
    if (provider.provider_name in _FORCED_TOOL and "thinking" in request.extra
            and choice is not None and choice.mode == "any"):
        return request.model_copy(update={"tool_choice": None})
    return request


def _with(system: str | None, line: str) -> str:
    return f"{system}\n\n{line}" if system else line


def describe_validation_error(exc: ValidationError) -> str:
    """The errors of ``exc`` as lines the model can read (at most a dozen)."""
    lines = []
    for error in exc.errors(include_url=False)[:_MAX_ERRORS]:
        where = ".".join(str(part) for part in error["loc"]) or "(the whole answer)"
        lines.append(f"- {where}: {error['msg']}")
    hidden = exc.error_count() - _MAX_ERRORS
    if hidden > 0:
        lines.append(f"- ... and {hidden} more")
    return "\n".join(lines)
