"""llama3_json and llama4_json: the parsing policy, case by case, in one piece and under
character splits (every expected value below is written from the policy, DESIGN §6 and
the README, not read off the parser)."""

from __future__ import annotations

import json

import pytest
from llama_testing import character_splits, make_parser

from toolcall import Parsed, Parser
from toolcall.contract import check_splits
from toolcall_conformance.feeding import CALL, feed_steps, released
from toolcall_llama import Llama3JsonParser, Llama4JsonParser

WEATHER_CALL = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
TIME_CALL = '{"name": "get_time", "parameters": {"tz": "CET"}}'


def parse(text: str, parser: Parser | None = None, *, promptness: bool = True) -> Parsed:
    """The one-shot parse, after checking the contract under character splits."""
    parser = parser if parser is not None else make_parser()
    violations = check_splits(parser, text, character_splits(text), promptness=promptness)
    assert violations == [], "\n".join(map(str, violations[:5]))
    return parser.parse(text)


def calls(parsed: Parsed) -> list[tuple[str, str]]:
    return [(call.name, call.arguments) for call in parsed.tool_calls]


def events_of(parsed: Parsed) -> list[tuple[str, int | None]]:
    return [(str(event.name), event.call_index) for event in parsed.events]


# -- the format -------------------------------------------------------------------------------


def test_a_python_tag_run_with_separators() -> None:
    parsed = parse(f"<|python_tag|>{WEATHER_CALL}; {TIME_CALL}")
    assert parsed.content is None
    assert calls(parsed) == [("get_weather", '{"city": "Paris"}'), ("get_time", '{"tz": "CET"}')]
    assert parsed.events == ()


@pytest.mark.parametrize("between", ["", "\n", " ;\n ", ";", "\n\n"])
def test_calls_in_a_run_may_be_separated_by_anything_blank(between: str) -> None:
    parsed = parse(WEATHER_CALL + between + TIME_CALL)
    assert [name for name, _ in calls(parsed)] == ["get_weather", "get_time"]
    assert parsed.content is None


def test_the_arguments_are_the_model_text() -> None:
    text = '{"name":"get_weather","parameters":{ "city" :"Paris" ,"unit":"celsius"}}'
    parsed = parse(text)
    assert calls(parsed) == [("get_weather", '{ "city" :"Paris" ,"unit":"celsius"}')]


def test_both_argument_keys_are_native_and_a_call_without_them_gets_an_empty_object() -> None:
    parsed = parse('{"name": "get_time", "arguments": {"tz": "UTC"}}; {"name": "get_time"}')
    assert calls(parsed) == [("get_time", '{"tz": "UTC"}'), ("get_time", "{}")]
    assert parsed.events == ()


def test_the_name_is_released_with_its_closing_quote_and_the_arguments_as_they_come() -> None:
    text = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
    per_step, _ = feed_steps(make_parser(), list(text))
    quote = text.index('"get_weather"') + len('"get_weather"') - 1
    assert released(per_step[quote]) == [(CALL, "get_weather")]
    assert all(not released(step) for step in per_step[:quote])
    value = text.index('"Paris"')
    # The space before the value is held until something other than whitespace follows.
    assert released(per_step[value]) == [("arguments", ' "')]
    for at in range(value + 1, value + len('"Paris"')):
        assert released(per_step[at]) == [("arguments", text[at])]


@pytest.mark.parametrize(
    ("parser_class", "is_call"), [(Llama3JsonParser, False), (Llama4JsonParser, True)]
)
def test_a_call_directly_after_text(parser_class: type[Parser], is_call: bool) -> None:
    text = "Let me check." + WEATHER_CALL
    parsed = parse(text, make_parser(parser_class))
    if is_call:
        assert parsed.content == "Let me check."
        assert [name for name, _ in calls(parsed)] == ["get_weather"]
    else:
        assert parsed.content == text
        assert parsed.tool_calls == ()


@pytest.mark.parametrize("parser_class", [Llama3JsonParser, Llama4JsonParser])
def test_a_call_that_begins_a_line_after_content(parser_class: type[Parser]) -> None:
    parsed = parse("Let me check.\n  " + WEATHER_CALL, make_parser(parser_class))
    assert parsed.content == "Let me check."
    assert [name for name, _ in calls(parsed)] == ["get_weather"]


@pytest.mark.parametrize("parser_class", [Llama3JsonParser, Llama4JsonParser])
def test_after_content_only_a_declared_name_makes_a_call(parser_class: type[Parser]) -> None:
    text = 'Here:\n{"name": "get_stock", "parameters": {"x": 1}}'
    parsed = parse(text, make_parser(parser_class))
    assert parsed.content == text
    assert parsed.tool_calls == ()


def test_at_the_start_any_name_makes_a_call() -> None:
    parsed = parse('{"name": "get_stock", "parameters": {"x": 1}}')
    assert calls(parsed) == [("get_stock", '{"x": 1}')]


def test_json_content_is_released_as_soon_as_it_cannot_be_a_call() -> None:
    parser = make_parser(Llama4JsonParser)
    text = 'It is {"name": "Alice", "age": 30} here.'
    per_step, parsed = feed_steps(parser, list(text))
    assert parsed.content == text
    released = ""
    for at, step in enumerate(per_step[:-1]):
        released += "".join(delta.content for delta in step)
        if text[at] == "A":  # no declared tool's name starts with "A"
            assert released == text[: at + 1]


@pytest.mark.parametrize(
    "text", ['{"answer": 42}', '{"id": 7, "name": "get_time"}', "{ }", '{"name": 5}']
)
def test_objects_that_are_not_calls_are_content(text: str) -> None:
    parsed = parse(text)
    assert parsed.content == text
    assert parsed.tool_calls == ()


def test_content_around_a_run() -> None:
    parsed = parse(f"Checking.\n{WEATHER_CALL}\n{TIME_CALL}\n\nBoth are on their way.")
    assert parsed.content == "Checking.\n\nBoth are on their way."
    assert len(parsed.tool_calls) == 2


def test_tool_choice_none_is_content() -> None:
    text = f"<|python_tag|>{WEATHER_CALL}"
    parsed = parse(text, make_parser(tool_choice="none"))
    assert parsed.content == text
    assert parsed.tool_calls == ()


# -- bad input (issue 12) ----------------------------------------------------------------------


def test_two_objects_without_a_separator_are_two_calls() -> None:
    parsed = parse(WEATHER_CALL + TIME_CALL)
    assert [name for name, _ in calls(parsed)] == ["get_weather", "get_time"]


def test_a_separator_inside_a_string_is_text() -> None:
    parsed = parse('{"name": "get_weather", "parameters": {"city": "a; {b}; c"}}')
    assert calls(parsed) == [("get_weather", '{"city": "a; {b}; c"}')]


def test_parameters_holding_a_json_string() -> None:
    text = '{"name": "get_weather", "parameters": "{\\"city\\": \\"Paris\\"}"}'
    parsed = parse(text, promptness=False)
    assert calls(parsed) == [("get_weather", '{"city": "Paris"}')]
    assert parsed.recoveries == ("arguments-string",)
    strict = parse(text, make_parser(strict_parsing=True))
    assert calls(strict) == [("get_weather", '"{\\"city\\": \\"Paris\\"}"')]
    assert events_of(strict) == [("malformed-arguments", 0)]


def test_a_call_cut_inside_a_string() -> None:
    parsed = parse('{"name": "get_weather", "parameters": {"city": "Par')
    assert calls(parsed) == [("get_weather", '{"city": "Par')]
    assert events_of(parsed) == [("truncated", 0)]


def test_a_call_in_the_arguments_of_a_call_is_an_argument() -> None:
    text = f'{{"name": "get_weather", "parameters": {{"then": {TIME_CALL}}}}}'
    parsed = parse(text)
    assert calls(parsed) == [("get_weather", f'{{"then": {TIME_CALL}}}')]


def test_a_raw_newline_inside_a_string_is_kept_and_reported() -> None:
    parsed = parse('{"name": "get_weather", "parameters": {"city": "Par\nis"}}')
    assert calls(parsed) == [("get_weather", '{"city": "Par\nis"}')]
    assert events_of(parsed) == [("malformed-arguments", 0)]


def test_python_literals() -> None:
    text = "{'name': 'get_weather', 'parameters': {'city': 'Paris', 'verbose': True}}"
    parsed = parse(text, promptness=False)
    assert calls(parsed) == [("get_weather", '{"city": "Paris", "verbose": true}')]
    assert parsed.recoveries == ("python-literal",)
    strict = parse(text, make_parser(strict_parsing=True))
    assert strict.content == text
    assert strict.tool_calls == ()


def test_python_constants_after_a_json_name() -> None:
    text = '{"name": "get_weather", "parameters": {"city": "Paris", "x": None}}'
    parsed = parse(text, promptness=False)
    assert calls(parsed) == [("get_weather", '{"city": "Paris", "x": null}')]
    strict = parse(text, make_parser(strict_parsing=True))
    assert calls(strict) == [("get_weather", '{"city": "Paris", "x": None}')]
    assert events_of(strict) == [("malformed-arguments", 0)]


def test_the_function_envelope() -> None:
    text = '{"type": "function", "function": {"name": "get_time", "parameters": {"tz": "UTC"}}}'
    parsed = parse(text, promptness=False)
    assert calls(parsed) == [("get_time", '{"tz": "UTC"}')]
    assert events_of(parsed) == [("ignored-member", 0), ("function-envelope", 0)]
    # Strict: "function" is an ignored member, and the object is held as a possible call
    # (a name may still follow it) until it closes without one ("{" is an unmarked start).
    strict = parse(text, make_parser(strict_parsing=True))
    assert strict.content == text
    assert strict.tool_calls == ()


def test_a_call_object_that_never_closes() -> None:
    text = '{"name": "get_time", "parameters": {"tz": "UTC"}'
    parsed = parse(text, promptness=False)
    assert calls(parsed) == [("get_time", '{"tz": "UTC"}')]
    assert events_of(parsed) == [("missing-end", 0)]
    strict = parse(text, make_parser(strict_parsing=True))
    assert calls(strict) == [("get_time", '{"tz": "UTC"}')]
    assert events_of(strict) == [("truncated", 0)]


def test_repeated_and_extra_members_are_recorded() -> None:
    text = '{"type": "function", "name": "get_time", "parameters": {}, "arguments": {"a": 1}}'
    parsed = parse(text)
    assert calls(parsed) == [("get_time", "{}")]
    assert events_of(parsed) == [("ignored-member", 0), ("duplicate-key", 0)]


def test_a_defective_call_leaves_its_neighbours_alone() -> None:
    parsed = parse('{"name": "get_time", "parameters": {"tz": "UTC",}}; ' + WEATHER_CALL)
    assert calls(parsed) == [
        ("get_time", '{"tz": "UTC",}'),
        ("get_weather", '{"city": "Paris"}'),
    ]
    assert events_of(parsed) == [("malformed-arguments", 0)]


def test_text_after_the_object_is_content() -> None:
    parsed = parse(WEATHER_CALL + "} done")
    assert parsed.content == "} done"
    assert len(parsed.tool_calls) == 1


# -- markers -------------------------------------------------------------------------------------


def test_markers_inside_strings_are_text() -> None:
    text = '<|python_start|>{"name": "get_weather", "parameters": {"city": "<|python_end|>"}}'
    parsed = parse(text + "<|python_end|>", make_parser(Llama4JsonParser))
    assert calls(parsed) == [("get_weather", '{"city": "<|python_end|>"}')]
    assert parsed.content is None


def test_an_end_marker_cuts_an_unclosed_value() -> None:
    text = '<|python_start|>{"name": "get_weather", "parameters": {"city": "x" \n<|python_end|>ok'
    parsed = parse(text, make_parser(Llama4JsonParser))
    assert calls(parsed) == [("get_weather", '{"city": "x"')]
    assert events_of(parsed) == [("malformed-arguments", 0)]
    assert parsed.content == "ok"


@pytest.mark.parametrize(
    "text",
    [
        "<|python_tag|>print('hello')",
        "<|python_tag|>",
        "<|python_start|>[get_weather(city='Paris')]<|python_end|>",
        "done<|python_end|>",
        '<|python_tag|>{"city": "Paris"}',
    ],
)
def test_unreadable_markup_is_content_verbatim(text: str) -> None:
    parsed = parse(text)
    assert parsed.content == text
    assert parsed.tool_calls == ()
    assert ("unparsed-markup", None) in events_of(parsed)


def test_a_cut_off_marker_at_the_end_is_content() -> None:
    parsed = parse("Sure<|python_ta")
    assert parsed.content == "Sure<|python_ta"


# -- no exception escapes -------------------------------------------------------------------------


def test_an_internal_error_becomes_content(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolcall.jsoncall import CallObjectReader

    def broken(self: CallObjectReader, text: str) -> list[object]:
        raise ValueError("injected")

    monkeypatch.setattr(CallObjectReader, "feed", broken)
    text = "Hi.\n" + WEATHER_CALL + " after"
    stream = make_parser().stream()
    deltas = [d for piece in (text[:10], text[10:]) for d in stream.feed(piece)]
    deltas += stream.finish()
    content = "".join(delta.content for delta in deltas)
    assert content == text
    assert [event.name for event in stream.events] == ["internal-error"]


def test_arguments_are_strict_json_when_no_event_says_otherwise() -> None:
    parsed = parse('{"name": "get_time", "parameters": {"n": NaN}}')
    assert events_of(parsed) == [("malformed-arguments", 0)]
    with pytest.raises(ValueError, match="NaN"):
        json.loads(parsed.tool_calls[0].arguments, parse_constant=_reject)


def _reject(name: str) -> object:
    raise ValueError(name)


# -- call-list ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        f"[{WEATHER_CALL}, {TIME_CALL}]",
        f"<|python_tag|>[{WEATHER_CALL},\n {TIME_CALL},]",
        f"[ {WEATHER_CALL}{TIME_CALL} ]",
    ],
)
def test_calls_written_as_a_json_list(text: str) -> None:
    parsed = parse(text, promptness=False)
    assert parsed.content is None
    assert [name for name, _ in calls(parsed)] == ["get_weather", "get_time"]
    assert parsed.recoveries == ("call-list",)
    # Strict: the list's "[" and its first call are content (a later call that begins a
    # line after content may still be one).
    strict = parse(text, make_parser(strict_parsing=True))
    assert strict.recoveries == ()
    assert strict.content is not None
    assert strict.content.removeprefix("<|python_tag|>").lstrip().startswith("[")
    assert "get_weather" not in [call.name for call in strict.tool_calls]


def test_a_list_after_content_needs_a_declared_first_call() -> None:
    text = 'Here:\n[{"name": "lookup", "parameters": {}}]'
    parsed = parse(text)
    assert parsed.content == text
    parsed = parse("Here:\n[" + WEATHER_CALL + "]", promptness=False)
    assert parsed.content == "Here:"
    assert [name for name, _ in calls(parsed)] == ["get_weather"]


@pytest.mark.parametrize("text", ["[]", "[1, 2]", '[ {"a": 1} ]', "See [the docs](x)."])
def test_lists_that_are_not_calls_are_content(text: str) -> None:
    parsed = parse(text)
    assert parsed.content == text
    assert parsed.tool_calls == ()


def test_a_list_that_never_closes() -> None:
    parsed = parse(f"[{WEATHER_CALL}", promptness=False)
    assert [name for name, _ in calls(parsed)] == ["get_weather"]
    assert events_of(parsed) == [("call-list", 0), ("missing-end", 0)]
    parsed = parse(f"[{WEATHER_CALL}; and more", promptness=False)
    assert parsed.content == "; and more"
    assert events_of(parsed) == [("call-list", 0), ("missing-end", 0)]


# -- one-shot: arguments met whole are decoded once; the result is the piecewise one -------

_PAD = '"pad": "' + 'x\\n\\"y' * 1200 + '"'


@pytest.mark.parametrize(
    ("body", "strict"),
    [
        ('"s": "tab\\t quote\\" \\u00e9 pair \\ud83d\\ude00 \\\\"}', True),
        ('"k": 1, "k": 2}', True),
        ('"s": "lone \\ud800 escape"}', False),
        ('"n": NaN}', False),
        ('"s": "raw\tcontrol"}', False),
        # python-literal: Python's \xHH escape is written as JSON's \u00HH.
        ('"s": "hex \\x41 escape"}', True),
    ],
)
def test_long_arguments_in_one_piece_read_as_in_many(body: str, strict: bool) -> None:
    arguments = "{" + _PAD + ", " + body
    text = '{"name": "get_time", "parameters": ' + arguments + "}"
    parser = make_parser()
    pieces = [text[i : i + 61] for i in range(0, len(text), 61)]
    assert check_splits(parser, text, [pieces, [text]]) == []
    parsed = parser.parse(text)
    assert calls(parsed) == [("get_time", arguments.replace("\\x41", "\\u0041"))]
    assert (("malformed-arguments", 0) in events_of(parsed)) is not strict
