"""llama4_pythonic: the parsing policy, case by case, in one piece and under character
splits (expected values written from DESIGN §6, toolcall.pycall's rules and the README)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llama_testing import character_splits, declare, make_parser

from toolcall import Parsed, Parser
from toolcall.contract import check_cost, check_splits
from toolcall_conformance.feeding import CALL, feed_steps, released
from toolcall_llama import Llama4PythonicParser

TOOLS = (
    declare("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}),
    declare("get_time", {"tz": {"type": "string"}}),
    declare("book", {"from": {"type": "string"}, "class": {"type": "string"}}),
)


def pythonic(*, strict: bool = False, tool_choice: object = "auto") -> Parser:
    return make_parser(Llama4PythonicParser, TOOLS, tool_choice=tool_choice, strict_parsing=strict)


def parse(text: str, parser: Parser | None = None, *, promptness: bool = True) -> Parsed:
    parser = parser if parser is not None else pythonic()
    violations = check_splits(parser, text, character_splits(text), promptness=promptness)
    assert violations == [], "\n".join(map(str, violations[:5]))
    return parser.parse(text)


def calls(parsed: Parsed) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for call in parsed.tool_calls:
        try:
            out.append((call.name, json.loads(call.arguments)))
        except ValueError:
            out.append((call.name, call.arguments))
    return out


def event_names(parsed: Parsed) -> list[str]:
    return [str(event.name) for event in parsed.events]


# -- the format -------------------------------------------------------------------------------


def test_a_list_of_calls() -> None:
    parsed = parse("[get_weather(city=\"Paris\", days=3), get_time(tz='CET')]")
    assert parsed.content is None
    assert calls(parsed) == [
        ("get_weather", {"city": "Paris", "days": 3}),
        ("get_time", {"tz": "CET"}),
    ]
    assert parsed.tool_calls[0].arguments == '{"city": "Paris", "days": 3}'


@pytest.mark.parametrize(
    "text",
    [
        '<|python_start|>[get_time(tz="UTC")]<|python_end|>',
        '<|python_start|>[get_time(tz="UTC")]',
        '  \n<|python_start|> [get_time(tz="UTC")] \n<|python_end|>\n',
        '<|python_start|>get_time(tz="UTC")<|python_end|>',
    ],
)
def test_the_python_tokens_are_framing(text: str) -> None:
    parsed = parse(text)
    assert parsed.content is None
    assert calls(parsed) == [("get_time", {"tz": "UTC"})]
    assert parsed.events == ()


def test_calls_one_per_line_after_the_start_token() -> None:
    parsed = parse('<|python_start|>get_time(tz="UTC")\nget_weather(city="Oslo")<|python_end|>')
    assert calls(parsed) == [("get_time", {"tz": "UTC"}), ("get_weather", {"city": "Oslo"})]


def test_a_list_directly_after_text() -> None:
    parsed = parse('Let me check.[get_weather(city="Paris")] Done.')
    assert parsed.content == "Let me check. Done."
    assert calls(parsed) == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize(
    "text",
    [
        "See [the docs](https://example.com).",
        "Call [lookup(term='x')] yourself.",
        "Numbers: [1, 2, 3].",
        "An empty list [] is fine.",
    ],
)
def test_brackets_after_text_that_are_not_declared_calls_are_content(text: str) -> None:
    parsed = parse(text)
    assert parsed.content == text
    assert parsed.tool_calls == ()


def test_at_the_start_any_name_makes_a_call() -> None:
    parsed = parse("[lookup(term='x')]")
    assert calls(parsed) == [("lookup", {"term": "x"})]


def test_the_name_comes_with_its_parenthesis_and_strings_stream() -> None:
    text = '[get_weather(city="Paris")]'
    per_step, _ = feed_steps(pythonic(), list(text))
    paren = text.index("(")
    assert released(per_step[paren]) == [(CALL, "get_weather")]
    assert all(not released(step) for step in per_step[:paren])
    value = text.index("Paris")
    for at in range(value, value + len("Paris")):
        assert released(per_step[at]) == [("arguments", text[at])]


def test_tool_choice_none_is_content() -> None:
    text = '<|python_start|>[get_time(tz="UTC")]<|python_end|>'
    parsed = parse(text, pythonic(tool_choice="none"))
    assert parsed.content == text
    assert parsed.tool_calls == ()


# -- bad input (issue 12) ----------------------------------------------------------------------


def test_a_list_with_a_non_call_element() -> None:
    parsed = parse('[get_time(tz="UTC"), "oops", get_time(tz="CET")]')
    assert calls(parsed) == [("get_time", {"tz": "UTC"}), ("get_time", {"tz": "CET"})]
    assert parsed.content == '"oops"'
    assert "unparsed-markup" in event_names(parsed)


def test_keywords_named_from_and_class() -> None:
    text = '[book(from="NYC", class="economy")]'
    parsed = parse(text, promptness=False)
    assert calls(parsed) == [("book", {"from": "NYC", "class": "economy"})]
    assert parsed.recoveries == ("reserved-word", "reserved-word")
    strict = parse(text, pythonic(strict=True))
    assert strict.tool_calls[0].arguments == ""
    assert "malformed-arguments" in event_names(strict)
    assert strict.content is not None
    assert 'from="NYC"' in strict.content


def test_a_positional_argument() -> None:
    parsed = parse('[get_weather("Paris"), get_time(tz="UTC")]')
    assert calls(parsed) == [("get_weather", ""), ("get_time", {"tz": "UTC"})]
    assert parsed.content == '"Paris"'
    assert "malformed-arguments" in event_names(parsed)


def test_raw_newlines_inside_a_string() -> None:
    text = '[get_weather(city="Par\nis")]'
    parsed = parse(text, promptness=False)
    assert calls(parsed) == [("get_weather", {"city": "Par\nis"})]
    assert parsed.recoveries == ("control-character",)
    strict = parse(text, pythonic(strict=True))
    assert "malformed-arguments" in event_names(strict)
    assert strict.content is not None


def test_a_call_inside_a_call() -> None:
    parsed = parse('[get_weather(city=get_time(tz="x")), get_time(tz="UTC")]')
    assert calls(parsed) == [("get_weather", '{"city": '), ("get_time", {"tz": "UTC"})]
    assert parsed.content == 'get_time(tz="x")'


def test_a_list_cut_off_inside_a_string() -> None:
    parsed = parse('[get_weather(city="Par')
    assert calls(parsed) == [("get_weather", '{"city": "Par')]
    assert "truncated" in event_names(parsed)


def test_an_end_token_inside_a_string_is_text() -> None:
    parsed = parse('<|python_start|>[get_weather(city="<|python_end|>")]<|python_end|>')
    assert calls(parsed) == [("get_weather", {"city": "<|python_end|>"})]
    assert parsed.content is None


@pytest.mark.parametrize(
    "text",
    [
        "<|python_start|>",
        "<|python_start|>import os",
        '<|python_start|>{"name": "get_time", "parameters": {}}<|python_end|>',
        "done<|python_end|>",
    ],
)
def test_unreadable_markup_is_content_verbatim(text: str) -> None:
    # (After <|python_start|>, "print('hi')" would be a call named print, with a
    # positional argument: see test_a_positional_argument.)
    parsed = parse(text)
    assert parsed.content == text
    assert parsed.tool_calls == ()
    assert "unparsed-markup" in event_names(parsed)


# -- robustness ------------------------------------------------------------------------------------

FRAGMENTS = [
    "<|python_start|>",
    "<|python_end|>",
    "[",
    "]",
    "(",
    ")",
    "get_weather",
    "get_time",
    "city=",
    "from=",
    '"Paris"',
    "'x'",
    '"',
    "'",
    "\\",
    "3",
    "True",
    "null",
    ", ",
    "\n",
    "text ",
    "{",
    "}",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30), st.booleans())
def test_any_output_keeps_the_contract(fragments: list[str], strict: bool) -> None:
    text = "".join(fragments)
    parser = pythonic(strict=strict)
    parsed = parser.parse(text)
    assert "internal-error" not in event_names(parsed)
    violations = check_splits(parser, text, character_splits(text, count=4), promptness=False)
    assert violations == [], "\n".join(map(str, violations[:5]))


def long_string(tokens: int) -> list[str]:
    pieces = [" lorem", " 東京", "\\n", " <|python_end|>", "]", ")"]
    return (
        ["<|python_start|>", "[get", "_weather", "(city", '="']
        + [pieces[i % len(pieces)] for i in range(tokens)]
        + ['")]', "<|python_end|>"]
    )


def many_calls(tokens: int) -> list[str]:
    call = ["get", "_time", "(tz", '="', "UTC", '"),', " "]
    return ["["] + [call[i % len(call)] for i in range(tokens * 7)] + ["get_time()]"]


def long_content(tokens: int) -> list[str]:
    return ["Sure", "."] + [" lorem [x]"[i % 3 :] for i in range(tokens)]


@pytest.mark.parametrize("make_output", [long_string, many_calls, long_content])
def test_the_cost_per_delta_does_not_grow(make_output: object) -> None:
    assert callable(make_output)
    assert check_cost(pythonic(), make_output) == []
