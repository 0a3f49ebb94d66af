"""A Python function's signature and docstring -> the JSON schema a model sees, and a pydantic model
that validates what the model sends back.

Everything here runs once, when a tool is defined; the only per-call work left is the pydantic
validator and building the call's arguments (see ``FunctionSchema.prepare``/``bind``).
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
import types
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError
from pydantic.fields import FieldInfo
from pydantic.json_schema import PydanticJsonSchemaWarning

from agcore.tools._context import ToolContext
from agcore.tools._errors import ToolDefinitionWarning

__all__ = ["FunctionSchema", "clean_json_schema", "function_schema", "parse_docstring"]

# Lax but LLM-friendly: numbers sent for string fields are accepted; unknown arguments are errors
# (the model learns the real names instead of silently losing an argument).
_ARGUMENTS_CONFIG = ConfigDict(extra="forbid", protected_namespaces=(), coerce_numbers_to_str=True)


@dataclass(frozen=True, slots=True)
class FunctionSchema:
    """What ``function_schema`` learned about a function, ready for fast calls."""

    name: str
    description: str
    input_schema: dict[str, Any]
    model: type[BaseModel]
    parameter_names: tuple[str, ...]  # as the model sees them (context parameter excluded)
    context_parameter: str | None  # name of the injected ToolContext parameter, if any
    # How to call: positional-only slots (a field name, or None for the context) then keywords.
    positional: tuple[str | None, ...]
    keywords: tuple[tuple[str, str], ...]  # (parameter name, field name)
    context_keyword: str | None

    def bind(self, values: dict[str, Any], ctx: ToolContext) -> tuple[list[Any], dict[str, Any]]:
        """Positional and keyword arguments for the function, from validated field values."""
        args = [ctx if f is None else values[f] for f in self.positional]
        kwargs = {p: values[f] for p, f in self.keywords}
        if self.context_keyword is not None:
            kwargs[self.context_keyword] = ctx
        return args, kwargs


# ---------------------------------------------------------------------------------------- docstrings

_GOOGLE_ARGS = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters):\s*$"
)
_GOOGLE_ANY_SECTION = re.compile(r"^[A-Z][A-Za-z ]{1,30}:\s*$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^\*{0,2}(\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?$")
_REST_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?\*{0,2}(\w+)\s*:\s*(.*)$")
_REST_FIELD = re.compile(r"^:\w+")
_NUMPY_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """``(summary, {parameter: description})`` from a Google, NumPy or reST style docstring.

    The summary is the first paragraph, its lines joined by spaces.
    """
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    for i, line in enumerate(lines):
        if not line.strip() or _is_section_start(lines, i):
            break
        summary.append(line.strip())
    params: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if _GOOGLE_ARGS.match(line.strip()):
            i = _google_section(lines, i + 1, _indent(line), params)
        elif line.strip() in ("Parameters", "Other Parameters") and i + 1 < len(lines) and (
            _NUMPY_UNDERLINE.match(lines[i + 1])
        ):
            i = _numpy_section(lines, i + 2, _indent(line), params)
        elif m := _REST_PARAM.match(line.strip()):
            text = [m.group(2).strip()]
            i += 1
            while i < len(lines) and lines[i].strip() and not _REST_FIELD.match(lines[i].strip()):
                text.append(lines[i].strip())
                i += 1
            params[m.group(1)] = " ".join(t for t in text if t)
        else:
            i += 1
    return " ".join(summary), params


def _is_section_start(lines: list[str], i: int) -> bool:
    text = lines[i].strip()
    if _GOOGLE_ANY_SECTION.match(text) or _REST_FIELD.match(text):
        return True
    return i + 1 < len(lines) and bool(_NUMPY_UNDERLINE.match(lines[i + 1]))


def _google_section(lines: list[str], i: int, base: int, params: dict[str, str]) -> int:
    entry_indent: int | None = None
    name: str | None = None
    text: list[str] = []
    while i < len(lines):
        line = lines[i]
        if line.strip():
            indent = _indent(line)
            if indent <= base:
                break
            if entry_indent is None:
                entry_indent = indent
            m = _GOOGLE_ENTRY.match(line.strip()) if indent <= entry_indent else None
            if m:
                if name is not None:
                    params[name] = " ".join(text)
                name, text = m.group(1), [m.group(2).strip()] if m.group(2).strip() else []
            elif name is not None:
                text.append(line.strip())
        i += 1
    if name is not None:
        params[name] = " ".join(text)
    return i


def _numpy_section(lines: list[str], i: int, base: int, params: dict[str, str]) -> int:
    names: list[str] = []
    text: list[str] = []

    def flush() -> None:
        for n in names:
            params[n] = " ".join(text)

    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and line.strip() and _NUMPY_UNDERLINE.match(lines[i + 1]):
            break  # the next section
        if line.strip():
            if _indent(line) <= base:
                m = _NUMPY_ENTRY.match(line.strip())
                if m is None:
                    break
                flush()
                names = [n.strip().lstrip("*") for n in m.group(1).split(",")]
                text = []
            elif names:
                text.append(line.strip())
        i += 1
    flush()
    return i


# ----------------------------------------------------------------------------------------- signature


def function_schema(
    fn: Callable[..., Any], *, name: str, description: str | None = None
) -> FunctionSchema:
    """Inspect ``fn`` once: raise ``TypeError`` now for what can never work as a tool."""
    documented = fn.func if isinstance(fn, functools.partial) else fn
    summary, param_docs = parse_docstring(inspect.getdoc(documented))
    # Keywords a partial binds are the application's (a workspace, a client): not the model's.
    bound = set(fn.keywords) if isinstance(fn, functools.partial) else set()
    parameters = [(p, a) for p, a in _resolved_parameters(fn, name) if p.name not in bound]
    fields: dict[str, Any] = {}
    visible: list[str] = []
    positional: list[str | None] = []
    keywords: list[tuple[str, str]] = []
    context_parameter: str | None = None
    context_keyword: str | None = None
    for index, (param, annotation) in enumerate(parameters):
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            star = "*" if param.kind is param.VAR_POSITIONAL else "**"
            raise TypeError(
                f"tool {name!r}: parameter {star}{param.name} cannot be described to a model; "
                "declare each argument the tool takes as a named parameter"
            )
        if _is_context(annotation):
            if context_parameter is not None:
                raise TypeError(f"tool {name!r} declares more than one ToolContext parameter")
            context_parameter = param.name
            if param.kind is param.POSITIONAL_ONLY:
                positional.append(None)
            else:
                context_keyword = param.name
            continue
        field_name = param.name
        if field_name.startswith("_") or hasattr(BaseModel, field_name):
            # pydantic reserves these names: validate under another, show the real one (an alias).
            field_name = f"arg{index}_{field_name.strip('_') or 'x'}"
        fields[field_name] = _field(
            param, annotation, param_docs.get(param.name), alias=field_name != param.name
        )
        visible.append(param.name)
        if param.kind is param.POSITIONAL_ONLY:
            positional.append(field_name)
        else:
            keywords.append((param.name, field_name))
    try:
        model: type[BaseModel] = create_model(
            f"{name}_arguments", __config__=_ARGUMENTS_CONFIG, **fields
        )
        with warnings.catch_warnings():
            # A default that is not JSON (a sentinel object) is left out of the schema, not an error.
            warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
            raw_schema = model.model_json_schema()
    except (PydanticSchemaGenerationError, PydanticUserError) as exc:
        raise _unbuildable(name, parameters, context_parameter) from exc
    final_description = description if description is not None else summary
    _warn_about_gaps(name, final_description, parameters, context_parameter)
    return FunctionSchema(
        name=name,
        description=final_description,
        input_schema=clean_json_schema(raw_schema),
        model=model,
        parameter_names=tuple(visible),
        context_parameter=context_parameter,
        positional=tuple(positional),
        keywords=tuple(keywords),
        context_keyword=context_keyword,
    )


def _unbuildable(
    name: str, parameters: list[tuple[inspect.Parameter, Any]], context_parameter: str | None
) -> TypeError:
    """The error for a parameter whose type cannot come from JSON, naming that parameter (pydantic's
    own message advises model authors on model config, which a tool author cannot use)."""
    for param, annotation in parameters:
        if param.name == context_parameter or annotation is inspect.Parameter.empty:
            continue
        try:
            TypeAdapter(annotation)
        except (PydanticSchemaGenerationError, PydanticUserError):
            shown = getattr(annotation, "__qualname__", None) or repr(annotation)
            return TypeError(
                f"tool {name!r}: parameter {param.name!r} is typed {shown}, which a model cannot send as "
                "JSON. Give it a JSON type (str, int, float, bool, a list, dict, Literal, Enum, a "
                "pydantic model, dataclass or typing_extensions.TypedDict); if the tool needs this "
                "object from your "
                "application, do not make it a parameter: bind it with functools.partial(fn, "
                f"{param.name}=...) or read it from ToolContext (ctx.require(...))."
            )
    return TypeError(
        f"tool {name!r}: a parameter type cannot be built from JSON. Use str, int, float, bool, lists, "
        "dicts, Literal, Enum, pydantic models, dataclasses or typing_extensions.TypedDict."
    )


def _warn_about_gaps(
    name: str, description: str, parameters: list[tuple[inspect.Parameter, Any]],
    context_parameter: str | None,
) -> None:
    """Warn (``ToolDefinitionWarning``) where the model would be told too little, pointing at the
    user's line that made the tool (the first frame outside ``agcore.tools``)."""
    level, frame = 2, sys._getframe(1)  # stacklevel 2 is our caller, the frame _getframe(1) gives
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith("agcore.tools"):
        frame, level = frame.f_back, level + 1
    if not description.strip():
        warnings.warn(
            f"tool {name!r} has no description, so the model sees only its name: give the function a "
            "docstring, or pass description=...",
            ToolDefinitionWarning, stacklevel=level,
        )
    for param, annotation in parameters:
        if annotation is inspect.Parameter.empty and param.name != context_parameter:
            warnings.warn(
                f"tool {name!r}: parameter {param.name!r} has no type hint, so the model is told it may "
                f"send any JSON value and nothing is validated; annotate it ({param.name}: str, say)",
                ToolDefinitionWarning, stacklevel=level,
            )


def _resolved_parameters(fn: Callable[..., Any], name: str) -> list[tuple[inspect.Parameter, Any]]:
    try:
        signature = inspect.signature(fn, eval_str=True)
        return [(p, p.annotation) for p in signature.parameters.values()]
    except NameError:
        pass  # some annotation (maybe only the return's) names something not importable at runtime
    globalns = getattr(inspect.unwrap(fn), "__globals__", {})
    resolved: list[tuple[inspect.Parameter, Any]] = []
    for p in inspect.signature(fn).parameters.values():
        annotation = p.annotation
        if isinstance(annotation, str) and not _is_context(annotation):
            try:
                annotation = eval(annotation, dict(globalns))
            except Exception as exc:
                raise TypeError(
                    f"tool {name!r}: cannot resolve the annotation {p.annotation!r} of parameter "
                    f"{p.name!r} ({exc}); the type must be importable at runtime from the function's "
                    "module (not only under TYPE_CHECKING, and not a class local to a function)"
                ) from exc
        resolved.append((p, annotation))
    return resolved


_CONTEXT_TEXT = re.compile(r"^(?:Optional\[)?(?:[\w.]+\.)?ToolContext\]?(?:\s*\|\s*None)?$")


def _is_context(annotation: Any) -> bool:
    if isinstance(annotation, str):  # unresolvable at runtime, e.g. imported under TYPE_CHECKING
        return bool(_CONTEXT_TEXT.match(annotation.strip()))
    if isinstance(annotation, type):
        return issubclass(annotation, ToolContext)
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _is_context(typing.get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return len(members) == 1 and _is_context(members[0])
    return False


def _field(param: inspect.Parameter, annotation: Any, doc: str | None, alias: bool) -> tuple[Any, Any]:
    if annotation is inspect.Parameter.empty:
        annotation = Any
    has_description = False
    if typing.get_origin(annotation) is Annotated:
        for extra in typing.get_args(annotation)[1:]:
            if isinstance(extra, FieldInfo) and extra.description:
                has_description = True
            elif isinstance(extra, str) and not has_description:
                doc = extra  # Annotated[int, "what it is"]
    options: dict[str, Any] = {}
    if doc and not has_description:
        options["description"] = doc
    if alias:
        options["alias"] = param.name
    if isinstance(param.default, FieldInfo):  # def f(x: int = Field(3, description=...)): it wins
        return (Annotated[annotation, Field(**options)] if options else annotation), param.default
    if param.default is not inspect.Parameter.empty:
        options["default"] = param.default
    return annotation, Field(**options)


# ------------------------------------------------------------------------------------- JSON schema

_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_ONE = frozenset(
    {"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"}
)
_KEY_ORDER = ("type", "description", "enum", "const", "format", "properties", "required", "items")
_DEFS_PREFIX = "#/$defs/"


def clean_json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Make a pydantic schema easy for a model to read: ``$ref``s inlined (kept, with ``$defs``, only
    for recursive types), pydantic's ``title`` noise dropped, ``type``/``description`` first."""
    defs: dict[str, Any] = schema.get("$defs", {})
    keep: set[str] = set()
    root = {k: v for k, v in schema.items() if k != "$defs"}
    out: dict[str, Any] = _clean(root, defs, frozenset(), keep)
    kept: dict[str, Any] = {}
    while pending := [name for name in keep if name not in kept]:
        for name in pending:
            kept[name] = _clean(defs[name], defs, frozenset({name}), keep)
    if kept:
        out["$defs"] = {name: kept[name] for name in sorted(kept)}
    return out


def _clean(node: Any, defs: dict[str, Any], stack: frozenset[str], keep: set[str]) -> Any:
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
        name = ref[len(_DEFS_PREFIX) :]
        siblings = _clean({k: v for k, v in node.items() if k != "$ref"}, defs, stack, keep)
        if name in stack or name not in defs:  # recursive: a model cannot read an infinite schema
            keep.add(name)
            return {"$ref": ref, **siblings}
        target = _clean(defs[name], defs, stack | {name}, keep)
        return _ordered({**target, **siblings})  # the field's own description wins over the class's
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" or (key == "description" and not value):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {k: _clean(v, defs, stack, keep) for k, v in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_clean(v, defs, stack, keep) for v in value]
        elif key in _SCHEMA_ONE and isinstance(value, dict):
            out[key] = _clean(value, defs, stack, keep)
        else:
            out[key] = value
    all_of = out.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        del out["allOf"]
        out = {**all_of[0], **out}
    return _ordered(out)


def _ordered(node: dict[str, Any]) -> dict[str, Any]:
    head = {k: node[k] for k in _KEY_ORDER if k in node}
    return {**head, **{k: v for k, v in node.items() if k not in head}}
