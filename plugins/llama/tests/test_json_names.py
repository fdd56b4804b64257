"""llama3_json and llama4_json: a name spelled with JSON escapes is readable only if UTF-8
can write it (DESIGN §6: a call is committed once its name is complete and readable).

A lone surrogate escape (``"\\ud800"``) decodes to a name vLLM could not encode in its
response: the object is no call and is content, verbatim with its marker, and
``unparsed-markup`` says why. A surrogate pair escape is one character of a name. Every
output is checked one-shot and under every split with up to two cuts.
"""

from __future__ import annotations

import pytest
from llama_testing import make_parser

from toolcall import EventName, Parsed, Parser
from toolcall.contract import check_splits
from toolcall_conformance.splits import every_split
from toolcall_llama import Llama3JsonParser, Llama4JsonParser

PARSERS = [Llama3JsonParser, Llama4JsonParser]


def parse(text: str, parser_class: type[Parser]) -> Parsed:
    parser = make_parser(parser_class)
    violations = check_splits(parser, text, every_split(text))
    assert violations == [], "\n".join(map(str, violations[:5]))
    return parser.parse(text)


def events_of(parsed: Parsed) -> list[tuple[str, int | None]]:
    return [(str(event.name), event.call_index) for event in parsed.events]


@pytest.mark.parametrize(
    "text",
    [
        '<|python_tag|>{"name": "\\ud800", "parameters": {}}',
        '{"name": "get_\\udfff", "parameters": {"tz": "CET"}}',
        '{"parameters": {}, "name": "\\udc00"}',
        "<|python_tag|>{'name': '\\ud800', 'parameters': {}}",
    ],
)
@pytest.mark.parametrize("parser_class", PARSERS)
def test_a_lone_surrogate_escape_in_the_name_makes_no_call(
    text: str, parser_class: type[Parser]
) -> None:
    parsed = parse(text, parser_class)
    assert parsed.tool_calls == ()
    assert parsed.content == text
    assert events_of(parsed) == [(EventName.UNPARSED_MARKUP, None)]


@pytest.mark.parametrize("parser_class", PARSERS)
def test_the_call_before_it_stands(parser_class: type[Parser]) -> None:
    text = (
        '<|python_tag|>{"name": "get_time", "parameters": {}}; '
        '{"name": "\\ud800", "parameters": {}}'
    )
    parsed = parse(text, parser_class)
    assert [(call.name, call.arguments) for call in parsed.tool_calls] == [("get_time", "{}")]
    # The run ends at what is no call: the ";" before it is content too (README).
    assert parsed.content == '; {"name": "\\ud800", "parameters": {}}'
    assert events_of(parsed) == [(EventName.UNPARSED_MARKUP, None)]


def test_after_content_such_an_object_is_text() -> None:
    # After content only an object naming a declared tool is a call; this one names none.
    text = 'Hi.{"name": "\\ud800", "parameters": {}}'
    parsed = parse(text, Llama4JsonParser)
    assert parsed.tool_calls == ()
    assert parsed.content == text


@pytest.mark.parametrize("parser_class", PARSERS)
def test_a_surrogate_pair_escape_is_one_name_character(parser_class: type[Parser]) -> None:
    parsed = parse('{"name": "get_\\ud83d\\ude00", "parameters": {}}', parser_class)
    assert [(call.name, call.arguments) for call in parsed.tool_calls] == [
        ("get_\N{GRINNING FACE}", "{}")
    ]
    assert parsed.content is None
    assert parsed.events == ()


def test_the_checker_places_a_call_whose_name_is_written_with_escapes() -> None:
    # Found by the fuzz: the contract checker looked for the decoded name in the output
    # and, not finding it, held the call's later key (which waits for its value) against
    # promptness. The name as JSON spells it in ASCII is where the call stands.
    text = '{"name": "get_time\\ud83d\\udd50", "pa</arg_value>"rameters": {}}'
    parsed = parse(text, Llama3JsonParser)
    assert [call.name for call in parsed.tool_calls] == ["get_time\N{CLOCK FACE ONE OCLOCK}"]
    assert parsed.content == '"pa</arg_value>"rameters": {}}'
