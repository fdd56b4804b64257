"""llama3_json and llama4_json on arbitrary and degenerate input: no exception, no internal
error, the delta contract under splits, and a cost per delta that does not grow with the
output (DESIGN §4.7, measured by toolcall.contract.check_cost: no clock)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llama_testing import character_splits, make_parser

from toolcall import Parser
from toolcall.contract import check_cost, check_splits
from toolcall_conformance.feeding import feed_steps, released
from toolcall_llama import Llama3JsonParser, Llama4JsonParser

FRAGMENTS = [
    "<|python_tag|>",
    "<|python_start|>",
    "<|python_end|>",
    "<|python",
    "{",
    "}",
    "[",
    "]",
    '"name"',
    '"parameters"',
    '"arguments"',
    '"type"',
    '"function"',
    '"get_weather"',
    '"get_time"',
    ": ",
    ", ",
    "; ",
    '{"city": "Paris"}',
    '"',
    "'",
    "\\",
    "True",
    "None",
    "\n",
    "  ",
    "text",
    "東京 🗼",
    "1.5e3",
]

PARSERS = [Llama3JsonParser, Llama4JsonParser]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(FRAGMENTS), max_size=30),
    st.sampled_from(PARSERS),
    st.booleans(),
)
def test_any_output_keeps_the_contract(
    fragments: list[str], parser_class: type[Parser], strict: bool
) -> None:
    text = "".join(fragments)
    parser = make_parser(parser_class, strict_parsing=strict)
    parsed = parser.parse(text)
    assert "internal-error" not in [event.name for event in parsed.events]
    violations = check_splits(parser, text, character_splits(text, count=4), promptness=False)
    assert violations == [], "\n".join(map(str, violations[:5]))


# -- degenerate shapes: correct, and linear ------------------------------------------------------

HEAD = ["<|python_tag|>", '{"', "name", '":', ' "', "get", "_weather", '",', ' "', "parameters"]
HEAD += ['":', ' {"', "city", '":', ' "']
PIECES = [" lorem", " ipsum", "\\n", " 東京", '\\"', " <|python_end|>", ";", " }", " 42"]


def long_string(tokens: int) -> list[str]:
    return [*HEAD, *(PIECES[i % len(PIECES)] for i in range(tokens)), '"}}']


def long_content(tokens: int) -> list[str]:
    return ["Sure", "."] + [PIECES[i % 3] for i in range(tokens)]


def long_whitespace(tokens: int) -> list[str]:
    return ['{"name": "get_time", "parameters": {', *(["  \n"] * tokens), "}}"]


def deep_nesting(tokens: int) -> list[str]:
    return ['{"name": "get_time", "parameters": {"a": ', *(["["] * tokens), *(["]"] * tokens), "}}"]


def many_calls(tokens: int) -> list[str]:
    call = ['{"name": "get_time",', ' "parameters": {', '"tz": "UTC"', "}}", "; "]
    return ["<|python_tag|>", *(call[i % len(call)] for i in range(tokens * 5))]


def content_lines(tokens: int) -> list[str]:
    # Lines that start with "{" but are not calls: every one is a candidate, then content.
    line = ['\n{"', "answer", '": 42}', " ok"]
    return ["Numbers:"] + [line[i % len(line)] for i in range(tokens)]


@pytest.mark.parametrize(
    "make_output",
    [long_string, long_content, long_whitespace, deep_nesting, many_calls, content_lines],
)
@pytest.mark.parametrize("parser_class", PARSERS)
def test_the_cost_per_delta_does_not_grow(make_output: object, parser_class: type[Parser]) -> None:
    assert callable(make_output)
    assert check_cost(make_parser(parser_class), make_output) == []


def test_ten_thousand_calls() -> None:
    text = "<|python_tag|>" + "; ".join(
        f'{{"name": "get_time", "parameters": {{"n": {n}}}}}' for n in range(10_000)
    )
    parsed = make_parser().parse(text)
    assert len(parsed.tool_calls) == 10_000
    assert json.loads(parsed.tool_calls[-1].arguments) == {"n": 9999}
    assert parsed.content is None


def test_deep_nesting_is_read_without_recursion() -> None:
    depth = 100_000
    text = '{"name": "get_time", "parameters": {"a": ' + "[" * depth + "]" * depth + "}}"
    parsed = make_parser().parse(text)
    assert parsed.tool_calls[0].arguments == '{"a": ' + "[" * depth + "]" * depth + "}"
    assert [event.name for event in parsed.events] == ["malformed-arguments"]


def test_a_long_run_of_partial_markers_is_content() -> None:
    text = "<|python" * 5_000
    parsed = make_parser().parse(text)
    assert parsed.content == text


def test_a_megabyte_of_arguments_streams_token_by_token() -> None:
    steps = long_string(220_000)
    body = "".join(steps[len(HEAD) : -1])
    assert len(body.encode()) > 1_000_000
    per_step, parsed = feed_steps(make_parser(), steps)
    # Every token of the value is released by the feed that brings it.
    inside = range(len(HEAD), len(steps) - 1)
    assert all(released(per_step[at]) == [("arguments", steps[at])] for at in inside)
    assert parsed.events == ()
    assert parsed.tool_calls[0].arguments == '{"city": "' + body + '"}'
