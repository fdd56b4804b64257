"""The first difference between a parse and a case's ``expected``, by the case format's
rules, each named so a failure says what to look at."""

from __future__ import annotations

from toolcall import Event, EventName, Parsed, ToolCall
from toolcall_conformance.cases import Expected, ExpectedCall
from toolcall_conformance.compare import first_difference, json_difference, text_difference

CALL = ExpectedCall("get_weather", {"city": "Paris"})


def parsed(*calls: ToolCall, content: str | None = None, events: tuple[Event, ...] = ()) -> Parsed:
    return Parsed(content=content, tool_calls=calls, events=events)


def test_the_number_of_calls() -> None:
    expected = Expected(content=None, tool_calls=(CALL,))
    assert first_difference(expected, parsed()) == (
        "tool_calls: expected 1 call(s) ['get_weather'], got 0 []"
    )


def test_a_call_of_another_name() -> None:
    expected = Expected(content=None, tool_calls=(CALL,))
    got = parsed(ToolCall("1", "get_time", '{"city": "Paris"}'))
    assert first_difference(expected, got) == (
        "tool_calls[0].name: expected 'get_weather', got 'get_time'"
    )


def test_arguments_that_do_not_parse_where_an_object_is_expected() -> None:
    expected = Expected(content=None, tool_calls=(CALL,))
    got = parsed(ToolCall("1", "get_weather", '{"city": "Par'))
    difference = first_difference(expected, got)
    assert difference is not None
    assert difference.startswith(
        "tool_calls[0].arguments: expected a JSON object, got text that does not parse ("
    )
    assert difference.endswith(': \'{"city": "Par\'')


def test_a_nested_difference_names_its_path() -> None:
    expected = Expected(
        content=None,
        tool_calls=(ExpectedCall("f", {"when": {"days": [1, {"at": "9:00"}]}}),),
    )
    got = parsed(ToolCall("1", "f", '{"when": {"days": [1, {"at": "10:00"}]}}'))
    assert first_difference(expected, got) == (
        'tool_calls[0].arguments["when"]["days"][1]["at"]: expected "9:00", got "10:00"'
    )


def test_recoveries_missing_and_unexpected() -> None:
    expected = Expected(content=None, tool_calls=(), recoveries=("missing-end",))
    got = parsed(events=(Event(EventName.PARAMETERS_KEY),))
    assert first_difference(expected, got) == (
        "recoveries: expected ['missing-end'], got ['parameters-key'] "
        "(missing ['missing-end'], unexpected ['parameters-key'])"
    )
    # Without recoveries (vLLM's built-ins record none) they are not compared.
    assert first_difference(expected, got, recoveries=False) is None
    assert first_difference(Expected(None, ()), got) == (
        "recoveries: expected [], got ['parameters-key'] (unexpected ['parameters-key'])"
    )


def test_json_kinds_and_keys() -> None:
    assert json_difference({"a": None}, {"a": 0}) == '["a"]: expected null, got 0'
    assert json_difference({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}}) == (
        "[\"a\"]: unexpected key(s) ['c']"
    )
    assert json_difference({"a": 1, "b": 2}, {"a": 1}) == " (top level): missing key(s) ['b']"
    assert json_difference([1, 2], [1, 3]) == "[1]: expected 2, got 3"
    assert json_difference("x" * 200, "y") == (
        ' (top level): expected "' + "x" * 116 + '..., got "y"'
    )


def test_a_text_difference_shows_context() -> None:
    want = "a" * 40 + "XYZ"
    got = "a" * 40 + "XQZ"
    assert text_difference(want, got) == (
        "first difference at character 41: expected '..." + "a" * 23 + "XYZ', got '..."
        + "a" * 23 + "XQZ' (lengths 43 and 43)"
    )  # fmt: skip
