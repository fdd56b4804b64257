"""Typing raw GLM values by the tool's schema (the policy in toolcall_glm.values)."""

from __future__ import annotations

from typing import Any

import pytest

from toolcall_glm.values import ANY, ToolTypes, read_json, value_type


@pytest.mark.parametrize(
    ("schema", "raw", "value"),
    [
        # A declared string stays exactly as written, whatever it looks like.
        ({"type": "string"}, "123", "123"),
        ({"type": "string"}, "true", "true"),
        ({"type": "string"}, '"quoted"', '"quoted"'),
        ({"type": "string"}, " padded \n", " padded \n"),
        ({"type": "string"}, "", ""),
        # Other types: the JSON value when it fits.
        ({"type": "integer"}, "3", 3),
        ({"type": "integer"}, " 3 ", 3),
        ({"type": "integer"}, "-12", -12),
        ({"type": "number"}, "2.5", 2.5),
        ({"type": "number"}, "7", 7),
        ({"type": "boolean"}, "false", False),
        ({"type": "null"}, "null", None),
        ({"type": "object"}, '{"a": [1, {"b": null}]}', {"a": [1, {"b": None}]}),
        ({"type": "array"}, '["x", 2]', ["x", 2]),
        # Not JSON: kept as the text.
        ({"type": "integer"}, "three", "three"),
        ({"type": "integer"}, "", ""),
        ({"type": "object"}, "{not json", "{not json"),
        # JSON of another type than declared: the JSON value (it parses).
        ({"type": "integer"}, "2.5", 2.5),
        ({"type": "integer"}, '"3"', "3"),
        ({"type": "boolean"}, "1", 1),
    ],
)
def test_a_value_is_typed_by_its_declared_type(schema: object, raw: str, value: object) -> None:
    got = value_type(schema).read(raw)
    assert got == value
    assert type(got) is type(value)


@pytest.mark.parametrize(
    ("schema", "raw", "value"),
    [
        # The first type that fits wins.
        ({"type": ["integer", "string"]}, "42", 42),
        ({"type": ["integer", "string"]}, "A-7", "A-7"),
        ({"type": ["string", "integer"]}, "42", "42"),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, "42", 42),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, "x", "x"),
        ({"oneOf": [{"type": "boolean"}, {"type": "array"}]}, "[true]", [True]),
        ({"anyOf": [{"type": "null"}, {"type": "string"}]}, "null", None),
        ({"anyOf": [{"type": "null"}, {"type": "string"}]}, "none", "none"),
        # Optional[str] as pydantic writes it: string first, so "null" is the string.
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, "null", "null"),
        ({"type": "integer", "nullable": True}, "null", None),
        # enum and const give their members' types.
        ({"enum": [1, 2, 3]}, "2", 2),
        ({"enum": ["a", "b"]}, "2", "2"),
        ({"const": True}, "true", True),
        # allOf: the first branch with a type.
        ({"allOf": [{"description": "x"}, {"type": "integer"}]}, "5", 5),
    ],
)
def test_unions_take_the_first_type_that_fits(schema: object, raw: str, value: object) -> None:
    got = value_type(schema).read(raw)
    assert got == value
    assert type(got) is type(value)


@pytest.mark.parametrize(
    ("raw", "value"),
    [("7", 7), ("true", True), ("[1]", [1]), ('"x"', "x"), ("hello", "hello"), ("", "")],
)
def test_an_undeclared_key_is_json_when_it_parses(raw: str, value: object) -> None:
    types = ToolTypes.from_parameters({"type": "object", "properties": {"a": {"type": "string"}}})
    assert types.of("other").read(raw) == value
    assert value_type({"description": "no type"}).read(raw) == value
    assert ANY.read(raw) == value


def test_local_refs_are_followed() -> None:
    parameters: dict[str, Any] = {
        "type": "object",
        "$defs": {"Count": {"type": "integer"}, "Name": {"$ref": "#/$defs/Text"}},
        "properties": {
            "count": {"$ref": "#/$defs/Count"},
            "name": {"$ref": "#/$defs/Name"},
            "loop": {"$ref": "#/properties/loop"},
            "remote": {"$ref": "https://example.com/schema"},
        },
    }
    parameters["$defs"]["Text"] = {"type": "string"}
    types = ToolTypes.from_parameters(parameters)
    assert types.of("count").read("5") == 5
    assert types.of("name").read("5") == "5"
    assert types.of("name").streams
    # A cycle or a remote reference types nothing: JSON when it parses.
    assert types.of("loop").read("5") == 5
    assert types.of("remote").read("x") == "x"


def test_only_a_leading_string_type_streams() -> None:
    assert value_type({"type": "string"}).streams
    assert value_type({"type": ["string", "null"]}).streams
    assert value_type({"anyOf": [{"type": "string"}, {"type": "null"}]}).streams
    assert not value_type({"type": ["null", "string"]}).streams
    assert not value_type({"type": "integer"}).streams
    assert not value_type({}).streams
    assert not ANY.streams


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "[NaN]"])
def test_nan_and_infinity_are_not_json(raw: str) -> None:
    value = value_type({"type": "number"}).read(raw)
    assert isinstance(value, str)
    assert value == raw


def test_values_json_cannot_hold_are_kept_as_text_without_raising() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert read_json(deep) == (False, None)
    assert value_type({"type": "array"}).read(deep) == deep
    huge = "9" * 5000  # past Python's default int digit limit
    assert value_type({"type": "integer"}).read(huge) == huge


def test_schemas_that_are_not_objects_type_nothing() -> None:
    for schema in (True, None, "string", 3, ["string"]):
        assert value_type(schema).read("3") == 3
    assert ToolTypes.from_parameters(None).of("a").read("x") == "x"
    assert ToolTypes.from_parameters({"properties": ["a"]}).of("a").read("1") == 1
