"""A name a call object spells with JSON escapes: readable only if UTF-8 can write it.

DESIGN §6 commits a call once its name is complete and readable; a lone surrogate escape
(``"\\ud800"``) decodes to a name vLLM could not encode in its response, so the tag is no
call and is content, verbatim with its markup (``unparsed-markup``). A surrogate pair
escape is one character and stays a name. Each output is checked one-shot and under every
split with up to two cuts (and one character per step).
"""

from __future__ import annotations

import pytest
from hermes_testing import make_parser

from toolcall import EventName, Parsed, Parser
from toolcall.contract import check_splits
from toolcall_conformance.splits import every_split

CALL = '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'


def parse(text: str, parser: Parser | None = None) -> Parsed:
    parser = parser if parser is not None else make_parser()
    violations = check_splits(parser, text, every_split(text))
    assert violations == [], "\n".join(map(str, violations[:5]))
    return parser.parse(text)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "\\ud800", "arguments": {}}</tool_call>',
        '<tool_call>\n{"arguments": {"a": 1}, "name": "get_\\udbff"}\n</tool_call>',
        '<tool_call>{"name": "\\udc00x", "arguments": {}}',
        "<tool_call>{'name': '\\ud800', 'arguments': {}}</tool_call>",
    ],
)
def test_a_lone_surrogate_escape_in_the_name_makes_no_call(text: str) -> None:
    parsed = parse(text)
    assert parsed.tool_calls == ()
    assert parsed.content == text
    assert [event.name for event in parsed.events] == [EventName.UNPARSED_MARKUP]


def test_the_calls_around_it_stand() -> None:
    bad = '<tool_call>{"name": "\\ud800", "arguments": {"x": 1}}</tool_call>'
    parsed = parse(f"{CALL}\n{bad}\n{CALL}")
    assert [(call.name, call.arguments) for call in parsed.tool_calls] == [
        ("get_time", "{}"),
        ("get_time", "{}"),
    ]
    assert parsed.content == bad
    assert [(event.name, event.call_index) for event in parsed.events] == [
        (EventName.UNPARSED_MARKUP, None)
    ]


def test_a_surrogate_pair_escape_is_one_name_character() -> None:
    parsed = parse('<tool_call>{"name": "get_\\ud83d\\ude00", "arguments": {}}</tool_call>')
    assert [(call.name, call.arguments) for call in parsed.tool_calls] == [
        ("get_\N{GRINNING FACE}", "{}")
    ]
    assert parsed.content is None
    assert parsed.events == ()
