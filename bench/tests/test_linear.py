"""The linear-cost benchmark's outputs are what their shapes say, in every installed
parser's format (no clock is looked at), and its smoke run works."""

from __future__ import annotations

import pytest

from toolcall.registry import Registry
from toolcall_bench.linear import MODES, SHAPES, context_for, distinct_parsers, main, shape_output
from toolcall_bench.outputs import TOOL_NAME, renderers_of
from toolcall_hf_response_template.patterns import LONGEST

PARSERS = distinct_parsers(Registry.load())
#: Every format measured: a parser measured on several generations of its format once each.
RENDERED = {
    label: (PARSERS[name], render)
    for name in PARSERS
    for label, render, _ in renderers_of(name, PARSERS[name])
}
#: How many calls each shape holds (``None``: at least two).
CALLS = {
    "arguments": 1,
    "content": 0,
    "whitespace": 0,
    "partial markers": 0,
    "deep nesting": 1,
    "many calls": None,
    "line braces": 0,
    "newlines before a call": 1,
    "argument whitespace": 1,
}


@pytest.mark.parametrize("label", sorted(RENDERED))
@pytest.mark.parametrize("shape", SHAPES)
def test_each_shape_parses_as_it_says(label: str, shape: str) -> None:
    parser_class, render = RENDERED[label]
    text = shape_output(shape, render, parser_class, 3000)
    assert 2000 <= len(text) <= 6000
    parser = parser_class(context_for(parser_class))
    parsed = parser.parse(text)
    if shape == "cut calls":
        # The name is never written whole; where a format ends a name at the line break
        # (GLM), each cut is a call of the half name.
        assert TOOL_NAME not in text
        assert all(call.name != TOOL_NAME for call in parsed.tool_calls)
        return
    expected = CALLS[shape]
    if shape == "newlines before a call" and text.startswith("\n" * LONGEST):
        # A format whose message is its calls alone (xLAM): the run opens the message and
        # is the start of the opener pattern, which matches at most LONGEST characters
        # (plugins/hf_response_template/README.md): a longer run leaves the list as content.
        expected = 0
        assert parsed.content is not None
        assert TOOL_NAME in parsed.content
    if expected is None:
        assert len(parsed.tool_calls) >= 2
    else:
        assert len(parsed.tool_calls) == expected
    assert all(call.name == TOOL_NAME for call in parsed.tool_calls)
    if shape == "deep nesting":
        # The nesting is the argument (as a list, or as a string where the schema types
        # the argument as one); too deep to decode with json here.
        assert "[" * 500 in parsed.tool_calls[0].arguments


def test_the_smoke_run_prints_a_row_per_parser_and_shape(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--smoke"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "growth" not in line]
    assert len(rows) == len(RENDERED) * len(SHAPES)
    assert {row.split(" | ")[2] for row in rows} == {MODES[0]}
