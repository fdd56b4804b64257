"""GLM values typed by the schema (toolcall.schema_types), end to end through the parser:
unions with null, numbers a float cannot hold, surrogates, and the stream's timing.

Expected values follow from the policy in plugins/glm/README.md ("Typing values by the
schema", "Strict JSON"); the delta contract is checked alongside.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from glm_testing import START, assert_contract, event_names, feed_all, make_parser, shape

from toolcall.contract import check_stream
from toolcall.scanning import json_object_problem


def tool(properties: dict[str, Any], name: str = "edit") -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": properties}},
    }


OPTIONAL_STR = {"anyOf": [{"type": "string"}, {"type": "null"}]}  # pydantic's Optional[str]
NULLABLE = [
    OPTIONAL_STR,
    {"type": ["string", "null"]},
    {"type": "string", "nullable": True},
    {"anyOf": [{"type": "null"}, {"type": "string"}]},
]


def call(value: str, key: str = "note", name: str = "edit") -> str:
    return f"<tool_call>{name}<arg_key>{key}</arg_key><arg_value>{value}</arg_value></tool_call>"


# -- null in a union (issue 10) ---------------------------------------------------------------


@pytest.mark.parametrize("schema", NULLABLE, ids=range(len(NULLABLE)))
def test_null_for_a_parameter_that_admits_null_is_null(schema: dict[str, Any]) -> None:
    parser = make_parser([tool({"note": schema})])
    for text in (call("null"), call(" null\n"), call("null", name="edit\n")):
        parsed = parser.parse(text)
        assert parsed.tool_calls[0].arguments == '{"note": null}'
        assert parsed.events == ()
        assert_contract(parser, text)
    # Anything else is the string, verbatim.
    for raw in ("nul", "Null", "null.", "nu ll", "none", "", " "):
        parsed = parser.parse(call(raw))
        assert parsed.tool_calls[0].arguments == json.dumps({"note": raw}, ensure_ascii=False)


def test_a_plain_string_parameter_keeps_the_text_null() -> None:
    parser = make_parser([tool({"note": {"type": "string"}})])
    assert parser.parse(call("null")).tool_calls[0].arguments == '{"note": "null"}'


def test_an_optional_string_is_held_only_while_it_may_be_null() -> None:
    parser = make_parser([tool({"note": OPTIONAL_STR})])
    steps = [
        "<tool_call>edit<arg_key>note</arg_key>",
        "<arg_value>",
        " ",
        "nu",
        "ll",
        "y",  # no longer null: the held text goes out as a string, and the rest streams
        " text",
        "</arg_value>",
        "</tool_call>",
    ]
    per_step, parsed = feed_all(parser, steps)
    assert [shape(step) for step in per_step] == [
        [(START, "edit"), ("args", '{"note": ')],
        [],
        [],
        [],
        [],
        [("args", '" nully')],
        [("args", " text")],
        [("args", '"')],
        [("args", "}")],
        [],
    ]
    assert json.loads(parsed.tool_calls[0].arguments) == {"note": " nully text"}
    per_step, parsed = feed_all(parser, [*steps[:5], "</arg_value>", "</tool_call>"])
    assert shape(per_step[5]) == [("args", "null")]
    assert parsed.tool_calls[0].arguments == '{"note": null}'


def test_an_optional_string_cut_while_it_may_be_null_is_content() -> None:
    """Truncation: text of the call not emitted yet is content, verbatim (DESIGN §6)."""
    parser = make_parser([tool({"note": OPTIONAL_STR})], strict_parsing=True)
    parsed = parser.parse("<tool_call>edit<arg_key>note</arg_key><arg_value>nul")
    assert parsed.tool_calls[0].arguments == '{"note": '
    assert parsed.content == "<arg_value>nul"
    assert "truncated" in event_names(parsed)


# -- numbers a float cannot hold (issue 16.1) ---------------------------------------------------


@pytest.mark.parametrize("raw", ["1e400", "-1e999", "[1e400]", '{"x": 1E+309}'])
@pytest.mark.parametrize(
    "schema", [{"type": "number"}, {"type": "array"}, None], ids=["number", "array", "undeclared"]
)
def test_a_number_beyond_a_float_is_kept_as_the_models_text(
    raw: str, schema: dict[str, Any] | None
) -> None:
    parser = make_parser([tool({"a": schema} if schema else {})])
    text = call(raw, key="a")
    parsed = parser.parse(text)
    arguments = parsed.tool_calls[0].arguments
    assert json_object_problem(arguments) is None
    assert arguments == json.dumps({"a": raw})
    assert event_names(parsed) == ["unrepresentable-value"]
    assert "beyond a float's range" in parsed.events[0].detail
    assert parsed.events[0].call_index == 0
    assert_contract(parser, text)


def test_numbers_a_float_holds_stay_numbers() -> None:
    parser = make_parser([tool({"a": {"type": "number"}})])
    parsed = parser.parse(call("1e308", key="a"))
    assert parsed.tool_calls[0].arguments == json.dumps({"a": 1e308})
    assert parsed.events == ()


# -- surrogates (issue 16.2) ---------------------------------------------------------------------


@pytest.mark.parametrize("raw", ['"\\ud800"', '["\\uDFFF"]', '{"\\ud83d": 1}'])
def test_an_escaped_lone_surrogate_is_kept_as_the_models_text(raw: str) -> None:
    parser = make_parser([tool({})])
    text = call(raw, key="a")
    parsed = parser.parse(text)
    arguments = parsed.tool_calls[0].arguments
    assert json_object_problem(arguments) is None
    assert json.loads(arguments) == {"a": raw}
    assert event_names(parsed) == ["unrepresentable-value"]
    assert_contract(parser, text)


def test_an_escaped_surrogate_pair_is_its_character() -> None:
    parsed = make_parser([tool({})]).parse(call('"\\ud83d\\ude00"', key="a"))
    assert json.loads(parsed.tool_calls[0].arguments) == {"a": "\U0001f600"}
    assert parsed.events == ()


@pytest.mark.parametrize(
    "schema", [{"type": "string"}, OPTIONAL_STR, {"type": "integer"}, None], ids=str
)
def test_a_raw_surrogate_in_a_value_becomes_the_replacement_character(
    schema: dict[str, Any] | None,
) -> None:
    """No detokenizer writes one, but a str can hold it: it never reaches the arguments."""
    parser = make_parser([tool({"a": schema} if schema else {})])
    text = call("x\ud800y\udc00", key="a")
    for steps in ([text], list(text)):
        _, parsed = feed_all(parser, steps)
        arguments = parsed.tool_calls[0].arguments
        assert json_object_problem(arguments) is None
        assert json.loads(arguments) == {"a": "x\ufffdy\ufffd"}
        assert event_names(parsed) == ["unrepresentable-value"]
        one_shot = parser.parse(text)
        assert (arguments, parsed.events) == (one_shot.tool_calls[0].arguments, one_shot.events)


def test_a_surrogate_in_a_name_or_key_is_not_read_as_one() -> None:
    parser = make_parser([tool({})])
    parsed = parser.parse("<tool_call>ed\ud800it\n</tool_call>")
    assert parsed.tool_calls == ()
    assert parsed.content == "<tool_call>ed\ud800it\n</tool_call>"
    parsed = parser.parse(call("1", key="k\udc00"))
    assert parsed.tool_calls[0].arguments == ""
    assert "malformed-arguments" in event_names(parsed)
    for text in ("<tool_call>ed\ud800it\n</tool_call>", call("1", key="k\udc00")):
        _, violations = check_stream(parser, list(text))
        assert violations == [], [str(v) for v in violations]


# -- Unicode whitespace (issue 16.3) ---------------------------------------------------------------

UNICODE_SPACES = ["\u00a0", "\u2028", "\u3000", "\x0c", "\x0b", "\x85", "\u200b"]


@pytest.mark.parametrize("space", UNICODE_SPACES, ids=ascii)
def test_only_json_whitespace_is_whitespace_in_both_modes(space: str) -> None:
    parser = make_parser([tool({"a": {"type": "integer"}, "s": {"type": "string"}})])
    outputs = [
        space,
        f"\n{space}\n",
        f"{space}<tool_call>edit\n</tool_call>{space}",
        f"<tool_call>edit<arg_key>{space}s{space}</arg_key><arg_value>{space}</arg_value></tool_call>",
        f"<tool_call>edit<arg_key>a</arg_key>{space}<arg_value>1</arg_value></tool_call>",
    ]
    for text in outputs:
        one_shot = parser.parse(text)
        for steps in ([text], list(text)):
            per_step, streamed = feed_all(parser, steps)
            # What the deltas carry, not what assemble() makes of it.
            sent = "".join(delta.content for step in per_step for delta in step)
            assert sent == (one_shot.content or "")
            assert streamed.content == one_shot.content
            assert [c.arguments for c in streamed.tool_calls] == [
                c.arguments for c in one_shot.tool_calls
            ]
        _, violations = check_stream(parser, list(text))
        assert violations == [], [str(v) for v in violations]
    # A Unicode space is not JSON whitespace: content, and a key's own character.
    assert parser.parse(space).content == space
    keyed = parser.parse(outputs[3]).tool_calls[0].arguments
    assert json.loads(keyed) == {f"{space}s{space}": space}
