"""``StructuredOutput``'s schema work: the JSON object sent (closed objects, non-objects wrapped), when
OpenAI's strict mode can take it, and reading answers out of text without inventing any."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field, ValidationError, field_validator
from typing_extensions import TypedDict

from agcore.agent import StructuredOutput


class Address(BaseModel):
    street: str
    city: str


class Person(BaseModel):
    name: str
    home: Address
    tags: list[str]
    kind: Literal["a", "b"]


class WithOptional(BaseModel):
    name: str
    nickname: str | None = None


class WithLength(BaseModel):
    code: str = Field(min_length=3)


class WithMapping(BaseModel):
    scores: dict[str, int]


class Shape(BaseModel):
    type: str  # a property named like a keyword is still a property
    properties: list[str]


class Movie(TypedDict):
    title: str
    year: int


class Even(BaseModel):
    n: int

    @field_validator("n")
    @classmethod
    def _even(cls, value: int) -> int:
        if value % 2:
            raise ValueError("must be even")
        return value


def test_nested_models_are_closed_everywhere_and_strict() -> None:
    spec = StructuredOutput(Person)
    assert not spec.wrapped
    assert spec.json_schema["additionalProperties"] is False
    assert spec.json_schema["$defs"]["Address"]["additionalProperties"] is False
    assert spec.strict


@pytest.mark.parametrize("model", [WithOptional, WithLength, WithMapping])
def test_schemas_outside_the_strict_subset_go_non_strict(model: type[BaseModel]) -> None:
    assert not StructuredOutput(model).strict


def test_keyword_named_properties_are_properties() -> None:
    spec = StructuredOutput(Shape)
    assert spec.strict
    assert spec.json_schema["properties"]["type"] == {"title": "Type", "type": "string"}
    assert spec.validate_text('{"type": "circle", "properties": ["round"]}') == Shape(
        type="circle", properties=["round"])


def test_non_objects_are_wrapped_with_their_defs_on_top() -> None:
    spec = StructuredOutput(list[Address])
    assert spec.wrapped
    assert spec.json_schema["required"] == ["result"]
    assert spec.json_schema["properties"]["result"]["items"] == {"$ref": "#/$defs/Address"}
    assert "Address" in spec.json_schema["$defs"]
    assert spec.validate_data({"result": [{"street": "1 Rue", "city": "Lyon"}]}) == [
        Address(street="1 Rue", city="Lyon")]


def test_typed_dicts_and_validators_work_as_types() -> None:
    movie = StructuredOutput(Movie).validate_text('{"title": "Up", "year": 2009}')
    assert movie == {"title": "Up", "year": 2009}
    even = StructuredOutput(Even)
    with pytest.raises(ValidationError, match="must be even"):
        even.validate_text('{"n": 3}')


@pytest.mark.parametrize("text", [
    '{"street": "1 Rue", "city": "Lyon"}',
    'Here you go:\n```json\n{"street": "1 Rue", "city": "Lyon"}\n```\nAnything else?',
    'The address is {"street": "1 Rue", "city": "Lyon"} as asked.',
    'Filling in {street} and [city]: {"street": "1 Rue", "city": "Lyon"}',
    'As [1] says: {"street": "1 Rue", "city": "Lyon"}',  # valid JSON that does not fit comes first
    '  \n{"street": "1 Rue", "city": "Lyon"}\n\n',
])
def test_json_is_found_bare_fenced_or_in_prose(text: str) -> None:
    assert StructuredOutput(Address).validate_text(text) == Address(street="1 Rue", city="Lyon")


@pytest.mark.parametrize("text", [
    "",
    "I cannot answer that.",
    '{"street": "1 Rue", "city": ',  # cut off: not repaired, nothing invented
])
def test_text_without_json_is_an_error_not_a_guess(text: str) -> None:
    with pytest.raises(ValueError, match="holds no JSON value"):
        StructuredOutput(Address).validate_text(text)


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="mode must be"):
        StructuredOutput(Address, mode="json")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_retries"):
        StructuredOutput(Address, max_retries=-1)


def test_messages_name_the_type_as_written() -> None:
    assert StructuredOutput(Address).type_name == "Address"
    assert StructuredOutput(list[Address]).type_name.endswith("list[tests.agent.test_output_schema.Address]")
    assert StructuredOutput(int | None).type_name == "int | None"
