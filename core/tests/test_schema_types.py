"""Typing raw argument values by the parameter's schema (the policy in toolcall.schema_types)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall import WHITESPACE
from toolcall.scanning import json_object_problem
from toolcall.schema_types import (
    ANY,
    NullWatch,
    ParameterTypes,
    ValueType,
    replace_surrogates,
    value_type,
)

OPTIONAL_STR = {"anyOf": [{"type": "string"}, {"type": "null"}]}


def read(schema: object, raw: str) -> object:
    return value_type(schema).read(raw).value


def strict_json(value: object) -> bool:
    """Whether ``value`` is written as strict JSON (the arguments' definition)."""
    return json_object_problem(json.dumps({"v": value}, ensure_ascii=False)) is None


@pytest.mark.parametrize(
    ("schema", "raw", "value"),
    [
        # A declared string stays exactly as written, whatever it looks like.
        ({"type": "string"}, "123", "123"),
        ({"type": "string"}, "true", "true"),
        ({"type": "string"}, '"quoted"', '"quoted"'),
        ({"type": "string"}, " padded \n", " padded \n"),
        ({"type": "string"}, "", ""),
        ({"type": "string"}, "null", "null"),
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
    typed = value_type(schema).read(raw)
    assert typed.value == value
    assert type(typed.value) is type(value)
    assert typed.problem is None


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
    typed = value_type(schema).read(raw)
    assert typed.value == value
    assert type(typed.value) is type(value)


@pytest.mark.parametrize(
    "schema",
    [
        OPTIONAL_STR,  # pydantic's Optional[str]
        {"type": ["string", "null"]},
        {"type": "string", "nullable": True},
        {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
        {"anyOf": [{"$ref": "#/$defs/Text"}, {"type": "null"}], "$defs": {}},
    ],
)
def test_null_is_null_wherever_a_schema_admits_it(schema: dict[str, Any]) -> None:
    """Issue 10: a string-first union with null reads the text null as null, not "null"."""
    root = {"$defs": {"Text": {"type": "string"}}}
    kind = value_type(schema, root)
    assert kind.nullable
    assert kind.streams  # a string until the text cannot be null any more
    for raw in ("null", " null", "null\n", "\t null \r\n"):
        assert kind.read(raw).value is None
    for raw in ("Null", "nul", "null.", "nu ll", "'null'", "", "none"):
        assert kind.read(raw).value == raw
    assert kind.read('"null"').value == '"null"'


@pytest.mark.parametrize(
    ("schema", "raw", "value"),
    [
        ({"type": "boolean"}, "True", True),
        ({"type": "boolean"}, " False\n", False),
        ({"type": "boolean"}, "true", True),  # JSON's literal still fits
        ({"type": ["integer", "boolean"]}, "True", True),
        (OPTIONAL_STR, "None", None),  # null first, as for the text null
        ({"type": "null"}, "None", None),
        # Only where the type admits it: a string stays the text, a number refuses it.
        ({"type": "string"}, "True", "True"),
        ({"type": "string"}, "None", "None"),
        ({"type": "integer"}, "True", "True"),
        ({"type": "boolean"}, "TRUE", "TRUE"),
        ({"type": "boolean"}, "None", "None"),
    ],
)
def test_python_literals_fit_the_types_json_literals_fit(
    schema: object, raw: str, value: object
) -> None:
    """A template that writes values with Jinja's |string writes True, False, None."""
    typed = value_type(schema).read(raw, python_literals=True)
    assert typed.value == value
    assert type(typed.value) is type(value)
    assert typed.problem is None


@pytest.mark.parametrize("raw", ["True", "False", "None"])
def test_python_literals_are_text_unless_asked_for(raw: str) -> None:
    for schema in ({"type": "boolean"}, OPTIONAL_STR):
        assert value_type(schema).read(raw).value == raw


@pytest.mark.parametrize(
    ("raw", "value"),
    [("7", 7), ("true", True), ("[1]", [1]), ('"x"', "x"), ("hello", "hello"), ("", "")],
)
def test_an_undeclared_key_is_json_when_it_parses(raw: str, value: object) -> None:
    types = ParameterTypes.from_parameters(
        {"type": "object", "properties": {"a": {"type": "string"}}}
    )
    assert types.of("other").read(raw).value == value
    assert value_type({"description": "no type"}).read(raw).value == value
    assert ANY.read(raw).value == value


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
    types = ParameterTypes.from_parameters(parameters)
    assert types.of("count").read("5").value == 5
    assert types.of("name").read("5").value == "5"
    assert types.of("name").streams
    # A cycle or a remote reference types nothing: JSON when it parses.
    assert types.of("loop").read("5").value == 5
    assert types.of("remote").read("x").value == "x"


def test_only_a_leading_string_type_streams() -> None:
    assert value_type({"type": "string"}).streams
    assert value_type({"type": ["string", "null"]}).streams
    assert value_type(OPTIONAL_STR).streams
    assert not value_type({"type": ["null", "string"]}).streams
    assert not value_type({"type": "integer"}).streams
    assert not value_type({}).streams
    assert not ANY.streams
    assert not value_type({"type": "string"}).nullable


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "[NaN]"])
def test_nan_and_infinity_are_not_json(raw: str) -> None:
    typed = value_type({"type": "number"}).read(raw)
    assert typed.value == raw
    assert typed.problem is None


@pytest.mark.parametrize("schema", [{"type": "number"}, {"type": "array"}, {}, {"type": "null"}])
@pytest.mark.parametrize("raw", ["1e400", "-1e999", "[1e400]", '{"a": [2, -1E+400]}'])
def test_a_number_beyond_a_float_is_kept_as_text_with_a_problem(
    schema: dict[str, Any], raw: str
) -> None:
    """Issue 16.1: json.loads reads 1e400 as Infinity, which strict JSON cannot carry."""
    typed = value_type(schema).read(raw)
    assert typed.value == raw
    assert typed.problem is not None
    assert "range" in typed.problem
    assert strict_json(typed.value)


def test_a_string_candidate_takes_a_number_beyond_a_float_as_it_is() -> None:
    typed = value_type({"type": ["number", "string"]}).read("1e400")
    assert typed == value_type({"type": "string"}).read("1e400")
    assert typed.value == "1e400"
    assert typed.problem is None


@pytest.mark.parametrize("raw", ['"\\ud800"', '["\\uDC00", 1]', '{"\\ud83d": 1}', '"a\ud800"'])
def test_a_lone_surrogate_in_json_is_kept_as_text_with_a_problem(raw: str) -> None:
    """Issue 16.2: an escaped lone surrogate is valid JSON syntax but no UTF-8 text."""
    typed = ANY.read(raw)
    assert isinstance(typed.value, str)
    assert typed.problem is not None
    assert "surrogate" in typed.problem
    assert strict_json(typed.value)
    # The escaped form is kept verbatim: it is ASCII.
    if "\\u" in raw:
        assert typed.value == raw


def test_a_surrogate_pair_escape_is_one_character() -> None:
    typed = ANY.read('"\\ud83d\\ude00"')
    assert typed == ANY.read('"\U0001f600"')
    assert typed.value == "\U0001f600"
    assert typed.problem is None


@pytest.mark.parametrize("schema", [{"type": "string"}, {}, {"type": "integer"}, OPTIONAL_STR])
def test_a_raw_surrogate_becomes_the_replacement_character(schema: dict[str, Any]) -> None:
    typed = value_type(schema).read("a\ud800b")
    assert typed.value == "a\ufffdb"
    assert typed.problem is not None
    assert replace_surrogates("x\udfffy\ud83d") == ("x\ufffdy\ufffd", True)
    assert replace_surrogates("plain é 🗼") == ("plain é 🗼", False)


def test_values_python_cannot_hold_are_kept_as_text_without_raising() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    typed = value_type({"type": "array"}).read(deep)
    assert typed.value == deep
    assert typed.problem == "nested too deeply to read"
    huge = "9" * 5000  # past Python's default int digit limit
    typed = value_type({"type": "integer"}).read(huge)
    assert typed.value == huge
    assert typed.problem is not None


def test_schemas_that_are_not_objects_type_nothing() -> None:
    for schema in (True, None, "string", 3, ["string"]):
        assert value_type(schema).read("3").value == 3
    assert ParameterTypes.from_parameters(None).of("a").read("x").value == "x"
    assert ParameterTypes.from_parameters({"properties": ["a"]}).of("a").read("1").value == 1


# -- every value read is strict JSON ----------------------------------------------------------

TYPES = [
    ValueType(),
    ANY,
    value_type({"type": "string"}),
    value_type({"type": "number"}),
    value_type({"type": "integer"}),
    value_type({"type": "array"}),
    value_type({"type": "object"}),
    value_type(OPTIONAL_STR),
    value_type({"type": ["null", "integer", "string"]}),
]
JSONISH = st.lists(
    st.sampled_from([*'[]{}",:.-+eE0123456789 \n\\u', "null", "1e400", "\\ud800", "\ud800", "é"]),
    max_size=24,
).map("".join)


@settings(max_examples=600, deadline=None)
@given(raw=st.one_of(JSONISH, st.text(max_size=20)), kind=st.sampled_from(TYPES))
def test_every_value_read_is_strict_json(raw: str, kind: ValueType) -> None:
    typed = kind.read(raw)
    assert strict_json(typed.value), (raw, typed)
    if typed.problem is None and isinstance(typed.value, str) and kind.streams:
        assert typed.value == raw


# -- NullWatch --------------------------------------------------------------------------------


def could_be_null(text: str) -> bool:
    """Reference: some continuation makes the text read as null."""
    return any((text + "null"[k:]).strip(WHITESPACE) == "null" for k in range(5))


@settings(max_examples=800, deadline=None)
@given(
    pieces=st.lists(
        st.text(alphabet=st.sampled_from("nul \n\tx\xa0"), max_size=6),
        max_size=8,
    )
)
def test_null_watch_follows_the_text_piece_by_piece(pieces: list[str]) -> None:
    watch = NullWatch()
    text = ""
    for piece in pieces:
        text += piece
        assert watch.feed(piece) == could_be_null(text), repr(text)
        assert watch.possible == could_be_null(text)
    kind = value_type(OPTIONAL_STR)
    assert (kind.read(text).value is None) == (text.strip(WHITESPACE) == "null")


def test_null_watch_on_long_inputs() -> None:
    watch = NullWatch()
    for _ in range(100_000):
        assert watch.feed("  ")
    assert watch.feed("nu")
    assert not watch.feed("x" * 1_000_000)
    assert not watch.feed("null")
