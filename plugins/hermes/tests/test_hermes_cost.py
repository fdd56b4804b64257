"""1 MB of arguments: parsed correctly, streamed as it arrives, at a cost per delta that
does not grow with the output (DESIGN §4.7, measured by toolcall.contract.check_cost)."""

from __future__ import annotations

import json

import pytest
from hermes_testing import make_parser

from toolcall.contract import check_cost, check_stream

HEAD = ["<tool_call>", "\n", '{"', "name", '":', ' "', "write", "_file", '",', ' "', "arguments"]
HEAD += ['":', ' {"', "path", '":', ' "', "big", ".txt", '",', ' "', "content", '":', ' "']
TAIL = ['"}}', "\n", "</tool_call>"]
# Token-sized pieces of a long string value, with escapes, non-ASCII text and markers.
PIECES = [" lorem", " ipsum", "\\n", " 東京", '\\"', " </tool_call>", " <tool_call>", ",", " 42"]

WRITE = {
    "type": "function",
    "function": {
        "name": "write_file",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        },
    },
}


def output(tokens: int) -> list[str]:
    return HEAD + [PIECES[i % len(PIECES)] for i in range(tokens)] + TAIL


def test_a_megabyte_of_arguments_is_parsed_and_streamed() -> None:
    steps = output(180_000)
    body = "".join(steps[len(HEAD) : -len(TAIL)])
    assert len(body.encode()) > 1_000_000
    parser = make_parser(tools=[WRITE])
    stream = parser.stream()
    fragments = 0
    for step in steps:
        for delta in stream.feed(step):
            fragments += sum(1 for entry in delta.tool_calls if entry.arguments)
    stream.finish()
    assert stream.events == ()
    # Every token of the value was released by the feed that brought it.
    assert fragments >= 180_000
    parsed = parser.parse("".join(steps))
    assert len(parsed.tool_calls) == 1
    arguments = parsed.tool_calls[0].arguments
    assert arguments == '{"path": "big.txt", "content": "' + body + '"}'
    assert json.loads(arguments)["content"] == json.loads('"' + body + '"')


def test_a_megabyte_keeps_the_contract_one_token_per_step() -> None:
    steps = output(180_000)
    _, violations = check_stream(make_parser(tools=[WRITE]), steps)
    assert violations == []


def test_the_cost_per_delta_does_not_grow_with_the_output() -> None:
    assert check_cost(make_parser(tools=[WRITE]), output) == []


def test_the_cost_per_delta_of_content_does_not_grow_either() -> None:
    def prose(tokens: int) -> list[str]:
        return ["Sure", "."] + [PIECES[i % 3] for i in range(tokens)]

    assert check_cost(make_parser(tools=[WRITE]), prose) == []


def test_the_cost_per_delta_of_arguments_before_the_name_does_not_grow() -> None:
    def late_name(tokens: int) -> list[str]:
        return (
            ["<tool_call>", '{"arguments": {"content": "']
            + [PIECES[i % 3] for i in range(tokens)]
            + ['"}, "name": "write_file"}', "</tool_call>"]
        )

    assert check_cost(make_parser(tools=[WRITE]), late_name) == []


# Issue 16 (9): a whitespace run was re-copied on every feed (74 -> 495 us per character
# from 8 kB to 64 kB inside arguments). Every place a run can stand, one space per delta.
WHITESPACE_RUNS = {
    "inside the arguments": ('<tool_call>{"name": "write_file", "arguments": {"a": 1', "}}"),
    "before the arguments value": ('<tool_call>{"name": "write_file", "arguments":', "{}}"),
    "between members": ('<tool_call>{"name": "write_file"', ', "arguments": {}}'),
    "before the name": ("<tool_call>", '{"name": "write_file", "arguments": {}}'),
    "after the object": ('<tool_call>{"name": "write_file", "arguments": {}}', ""),
    "arguments before the name": ('<tool_call>{"arguments": {"a": 1', '}, "name": "f"}'),
    "a bare-json candidate": ('{"name": "write_file", "arguments": {"a": 1', "}}"),
    "content": ("Sure", "."),
}


@pytest.mark.parametrize("where", sorted(WHITESPACE_RUNS))
def test_the_cost_per_delta_of_a_whitespace_run_does_not_grow(where: str) -> None:
    head, tail = WHITESPACE_RUNS[where]

    def run(tokens: int) -> list[str]:
        return [head, *([" "] * tokens), tail, "</tool_call>"]

    assert check_cost(make_parser(tools=[WRITE]), run) == []


@pytest.mark.parametrize("piece", ['\\"', "\\\\", "\\u00e9", "a\\nb"])
def test_the_cost_per_delta_of_escapes_in_a_string_does_not_grow(piece: str) -> None:
    def escapes(tokens: int) -> list[str]:
        # Whole escapes, and an escape cut off at the end of a delta (":\\" then "n").
        cycle = [":\\", "n    ", piece, " x"]
        return [*HEAD, *(cycle[i % 4] for i in range(tokens)), *TAIL]

    assert check_cost(make_parser(tools=[WRITE]), escapes) == []
