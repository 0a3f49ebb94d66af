"""Signature + docstring -> the JSON schema a model sees (``Tool.definition().input_schema``)."""

from __future__ import annotations

import enum
import sys
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from agcore.tools import Tool, ToolContext, tool
from agcore.tools._schema import clean_json_schema, parse_docstring


def schema_of(fn: Any) -> dict[str, Any]:
    return Tool.from_function(fn).definition().input_schema


def walk(node: Any) -> typing.Iterator[dict[str, Any]]:
    """Every schema object in a JSON schema (not the property-name maps themselves)."""
    if isinstance(node, dict):
        yield node
        for key, value in node.items():
            if key in ("properties", "$defs"):
                for sub in value.values():
                    yield from walk(sub)
            elif key in ("anyOf", "oneOf", "allOf", "prefixItems"):
                for sub in value:
                    yield from walk(sub)
            elif key in ("items", "additionalProperties") and isinstance(value, dict):
                yield from walk(value)


def refs_resolve(schema: dict[str, Any]) -> bool:
    defs = schema.get("$defs", {})
    refs = [n["$ref"] for n in walk(schema) if "$ref" in n]
    return all(r.startswith("#/$defs/") and r.removeprefix("#/$defs/") in defs for r in refs)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str = "Paris"


class TreeNode(BaseModel):
    label: str
    children: list[TreeNode] = []


@dataclass
class Point:
    x: int
    y: int = 0


class Span(TypedDict):
    start: int
    end: int


class Opaque:
    pass


class OldTypedDict(typing.TypedDict):
    a: int


# ------------------------------------------------------------------------------------ basic types


def test_basic_types_required_and_defaults() -> None:
    def f(name: str, count: int, ratio: float, flag: bool = False, label: str = "x") -> None:
        """Do it."""

    schema = schema_of(f)
    assert schema == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean", "default": False},
            "label": {"type": "string", "default": "x"},
        },
        "required": ["name", "count", "ratio"],
        "additionalProperties": False,
    }


def test_no_parameters_gives_an_empty_object_schema() -> None:
    def ping() -> str:
        return "pong"

    assert schema_of(ping) == {"type": "object", "properties": {}, "additionalProperties": False}


def test_optional_and_pipe_none_are_nullable_and_not_required() -> None:
    def f(a: Optional[int] = None, b: str | None = None, c: int | None = 5) -> None:  # noqa: UP045
        pass

    props = schema_of(f)["properties"]
    for name in ("a", "b"):
        assert props[name]["default"] is None
        assert {"type": "null"} in props[name]["anyOf"]
    assert props["c"] == {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5}
    assert "required" not in schema_of(f)


def test_literal_and_enum_become_inline_enums() -> None:
    def f(mode: Literal["fast", "safe"], color: Color = Color.BLUE) -> None:
        pass

    schema = schema_of(f)
    assert schema["properties"]["mode"] == {"type": "string", "enum": ["fast", "safe"]}
    assert schema["properties"]["color"] == {"type": "string", "enum": ["red", "blue"], "default": "blue"}
    assert "$defs" not in schema


def test_lists_dicts_and_tuples() -> None:
    def f(tags: list[str], counts: dict[str, int], pair: tuple[int, str], anything: list[Any]) -> None:
        pass

    props = schema_of(f)["properties"]
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["counts"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert props["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert props["anything"] == {"type": "array", "items": {}}


def test_missing_annotation_is_any_not_a_crash() -> None:
    def f(a, b=3):  # type: ignore[no-untyped-def]
        pass

    schema = schema_of(f)
    assert schema["properties"] == {"a": {}, "b": {"default": 3}}
    assert schema["required"] == ["a"]


# ---------------------------------------------------------------------------------- nested types


def test_nested_model_is_inlined_with_its_own_required_and_description() -> None:
    def f(home: Address, work: Address | None = None) -> None:
        """Ship.

        Args:
            home: Where the user lives.
        """

    schema = schema_of(f)
    assert "$defs" not in schema
    home = schema["properties"]["home"]
    assert home == {
        "type": "object",
        "description": "Where the user lives.",  # the parameter doc wins over the class docstring
        "properties": {"street": {"type": "string"}, "city": {"type": "string", "default": "Paris"}},
        "required": ["street"],
    }
    work_object = schema["properties"]["work"]["anyOf"][0]
    assert work_object["description"] == "A postal address."
    assert work_object["required"] == ["street"]


def test_recursive_model_keeps_valid_defs() -> None:
    def f(tree: TreeNode) -> None:
        pass

    schema = schema_of(f)
    tree = schema["properties"]["tree"]
    assert tree["properties"]["children"]["items"] == {"$ref": "#/$defs/TreeNode"}
    assert set(schema["$defs"]) == {"TreeNode"}
    assert refs_resolve(schema)


def test_dataclass_and_typeddict_parameters() -> None:
    def f(point: Point, span: Span) -> None:
        pass

    props = schema_of(f)["properties"]
    assert props["point"]["properties"] == {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}}
    assert props["point"]["required"] == ["x"]
    assert props["span"]["required"] == ["start", "end"]


def test_no_pydantic_titles_anywhere() -> None:
    def f(title: str, home: Address, tree: TreeNode, color: Color, point: Point) -> None:
        pass

    schema = schema_of(f)
    assert "title" in schema["properties"]  # a parameter called "title" is kept, of course
    assert not [node for node in walk(schema) if "title" in node and node is not schema["properties"]]


def test_clean_json_schema_keeps_sibling_keywords_of_a_ref() -> None:
    raw = {
        "$defs": {
            "A": {"title": "A", "type": "object", "properties": {"x": {"title": "X", "type": "integer"}}}
        },
        "title": "Root",
        "type": "object",
        "properties": {"a": {"allOf": [{"$ref": "#/$defs/A"}], "description": "the a", "default": {"x": 1}}},
    }
    assert clean_json_schema(raw) == {
        "type": "object",
        "properties": {
            "a": {
                "type": "object",
                "description": "the a",
                "properties": {"x": {"type": "integer"}},
                "default": {"x": 1},
            }
        },
    }


# ------------------------------------------------------------------------------------ ToolContext


def test_tool_context_is_hidden_at_any_position_and_any_name() -> None:
    def first(context: ToolContext, path: str) -> None:
        pass

    def middle(path: str, c: ToolContext, limit: int = 3) -> None:
        pass

    def optional(path: str, ctx: ToolContext | None = None) -> None:
        pass

    def positional_only(c: ToolContext, /, path: str) -> None:
        pass

    for fn in (first, middle, optional, positional_only):
        schema = schema_of(fn)
        assert "path" in schema["properties"]
        assert not {"context", "c", "ctx"} & set(schema["properties"]), fn.__name__
        assert schema["required"] == ["path"]


def test_tool_context_annotation_that_only_exists_under_type_checking() -> None:
    # The module imports ToolContext under TYPE_CHECKING only: at runtime the annotation is a string.
    namespace: dict[str, Any] = {}
    source = (
        "from __future__ import annotations\n"
        "def f(path: str, ctx: ToolContext) -> Result:\n"
        "    pass\n"
        "def g(path: str, ctx: 'agcore.tools.ToolContext | None' = None) -> None:\n"
        "    pass\n"
    )
    exec(source, namespace)
    assert set(schema_of(namespace["f"])["properties"]) == {"path"}
    assert set(schema_of(namespace["g"])["properties"]) == {"path"}


# -------------------------------------------------------------------------------------- docstrings


def test_google_docstring_gives_summary_and_parameter_descriptions() -> None:
    def read_file(path: str, start_line: int = 1, encoding: str = "utf-8") -> str:
        """Read a text file.

        The whole second paragraph is not part of the description.

        Args:
            path: Path relative to the
                workspace root.
            start_line (int, optional): First line, 1-based.
            encoding: Text encoding.

        Returns:
            The text.
        """
        return ""

    definition = Tool.from_function(read_file).definition()
    assert definition.name == "read_file"
    assert definition.description == "Read a text file."
    props = definition.input_schema["properties"]
    assert props["path"]["description"] == "Path relative to the workspace root."
    assert props["start_line"]["description"] == "First line, 1-based."
    assert props["encoding"]["description"] == "Text encoding."


def test_numpy_docstring_gives_parameter_descriptions() -> None:
    def search(query: str, limit: int = 10, lo: int = 0, hi: int = 9) -> list[str]:
        """Search the index
        for documents.

        Parameters
        ----------
        query : str
            What to look for,
            in plain words.
        limit : int, optional
            At most this many hits.
        lo, hi : int
            The range.

        Returns
        -------
        list of str
            The hits.
        """
        return []

    definition = Tool.from_function(search).definition()
    assert definition.description == "Search the index for documents."
    props = definition.input_schema["properties"]
    assert props["query"]["description"] == "What to look for, in plain words."
    assert props["limit"]["description"] == "At most this many hits."
    assert props["lo"]["description"] == props["hi"]["description"] == "The range."


def test_rest_docstring_gives_parameter_descriptions() -> None:
    def move(src: str, dst: str) -> None:
        """Move a file.

        :param src: Where from.
        :param str dst: Where to,
            relative to the root.
        :returns: nothing
        """

    props = schema_of(move)["properties"]
    assert props["src"]["description"] == "Where from."
    assert props["dst"]["description"] == "Where to, relative to the root."


def test_summary_stops_at_a_section_without_a_blank_line() -> None:
    assert parse_docstring("Add numbers.\nArgs:\n    a: first.\n") == ("Add numbers.", {"a": "first."})
    assert parse_docstring(None) == ("", {})


def test_description_override_and_no_docstring() -> None:
    def f(x: int) -> int:
        return x

    assert Tool.from_function(f).description == ""
    assert Tool.from_function(f, description="Custom.").description == "Custom."


def test_annotated_field_description_wins_and_keeps_constraints() -> None:
    def f(
        count: Annotated[int, Field(description="How many.", ge=1, le=100)] = 10,
        note: Annotated[str, "A plain-string description."] = "",
        size: int = Field(5, description="From a Field default."),
    ) -> None:
        """F.

        Args:
            count: Docstring text, overridden.
            size: Docstring text, overridden too.
        """

    props = schema_of(f)["properties"]
    assert props["count"] == {
        "type": "integer",
        "description": "How many.",
        "default": 10,
        "maximum": 100,
        "minimum": 1,
    }
    assert props["note"]["description"] == "A plain-string description."
    assert props["size"] == {"type": "integer", "description": "From a Field default.", "default": 5}


def test_names_pydantic_reserves_are_shown_as_written() -> None:
    def f(json: str, schema: int = 1, _private: bool = False) -> None:
        """F.

        Args:
            json: Some JSON text.
        """

    schema = schema_of(f)
    assert list(schema["properties"]) == ["json", "schema", "_private"]
    assert schema["properties"]["json"]["description"] == "Some JSON text."
    assert schema["required"] == ["json"]


# ------------------------------------------------------------------------- what cannot be a tool


def test_var_args_and_kwargs_are_rejected_at_decoration() -> None:
    def star(*paths: str) -> None:
        pass

    def double_star(**options: int) -> None:
        pass

    with pytest.raises(TypeError, match=r"\*paths"):
        tool(star)
    with pytest.raises(TypeError, match=r"\*\*options"):
        tool(double_star)


def test_type_pydantic_cannot_build_is_a_clear_type_error() -> None:
    def f(thing: Opaque) -> None:
        pass

    with pytest.raises(TypeError, match=r"tool 'f': parameter 'thing' .*cannot send as JSON"):
        tool(f)


def test_typing_typeddict_on_old_python_is_a_clear_type_error() -> None:
    def f(x: OldTypedDict) -> None:
        pass

    if sys.version_info >= (3, 12):
        pytest.skip("typing.TypedDict is fine for pydantic on 3.12+")
    with pytest.raises(TypeError, match=r"typing_extensions\.TypedDict"):
        tool(f)


def test_unresolvable_annotation_names_the_parameter() -> None:
    class Local(BaseModel):  # a class local to a function cannot be resolved from a string
        a: int

    def f(x: Local) -> None:
        pass

    with pytest.raises(TypeError, match=r"parameter 'x'.*not a class local to a function"):
        tool(f)


def test_method_with_self_must_be_bound() -> None:
    class Service:
        def lookup(self, key: str) -> str:
            return key

    with pytest.raises(TypeError, match="bound method"):
        tool(Service.lookup)
    bound = tool(Service().lookup)
    assert bound.name == "lookup"
    assert set(bound.input_schema["properties"]) == {"key"}


def test_a_parameter_a_model_cannot_send_is_named_with_what_to_do() -> None:
    with pytest.raises(TypeError) as info:
        @tool
        def watch(path: str, lock: Opaque) -> str:
            """Watch a path."""
            return path

    message = str(info.value)
    assert "parameter 'lock'" in message
    assert "tool 'watch'" in message
    assert "functools.partial" in message
    assert "arbitrary_types_allowed" not in message  # pydantic's advice is for model authors


def test_a_missing_type_hint_or_description_is_warned_about_at_the_users_line() -> None:
    from agcore.tools import ToolDefinitionWarning

    with pytest.warns(ToolDefinitionWarning) as caught:
        @tool
        def lookup(key):  # type: ignore[no-untyped-def]
            return key

    messages = [str(w.message) for w in caught]
    assert any("parameter 'key' has no type hint" in m for m in messages)
    assert any("'lookup' has no description" in m for m in messages)
    assert {w.filename for w in caught} == {__file__}  # points at the line that made the tool


def test_a_described_and_typed_tool_makes_no_warning() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")

        @tool
        def lookup(key: str) -> str:
            """Look a key up."""
            return key
