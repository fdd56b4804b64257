"""``json`` regions: a name spelled with JSON escapes is readable only if UTF-8 can write it.

DESIGN §6 commits a call once its name is complete and readable. A lone surrogate escape
(``"\\ud800"``) decodes to a name vLLM could not encode in its response, so the region
gives no call and is content, verbatim with its delimiters (``unparsed-markup``); a
surrogate pair escape is one character of a name. Each output is checked one-shot and
under every split with up to two cuts.
"""

from __future__ import annotations

import pytest
from hf_testing import parser, shipped

from toolcall import EventName, Parsed
from toolcall.contract import check_splits
from toolcall_conformance.splits import every_split


def parse(template: str, text: str) -> Parsed:
    hf = parser(shipped(template))
    violations = check_splits(hf, text, every_split(text))
    assert violations == [], "\n".join(map(str, violations[:5]))
    return hf.parse(text)


@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("hermes", '<tool_call>{"name": "\\ud800", "arguments": {}}</tool_call>'),
        ("hermes", '<tool_call>\n{"arguments": {"a": 1}, "name": "get_\\udbff"}\n</tool_call>'),
        ("llama3_json", '<|python_tag|>{"name": "\\ud800", "parameters": {}}'),
        ("llama3_json", '{"name": "get_\\udfff", "parameters": {}}'),
        ("mistral", '[TOOL_CALLS][{"name": "\\udc00", "arguments": {}}]'),
    ],
)
def test_a_lone_surrogate_escape_in_the_name_makes_no_call(template: str, text: str) -> None:
    parsed = parse(template, text)
    assert parsed.tool_calls == ()
    assert parsed.content == text
    assert EventName.UNPARSED_MARKUP in [event.name for event in parsed.events]


def test_the_call_before_it_stands() -> None:
    bad = '<tool_call>{"name": "\\ud800", "arguments": {}}</tool_call>'
    parsed = parse("hermes", '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>' + bad)
    assert [(call.name, call.arguments) for call in parsed.tool_calls] == [("get_time", "{}")]
    assert parsed.content == bad


@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("hermes", '<tool_call>{"name": "get_\\ud83d\\ude00", "arguments": {}}</tool_call>'),
        ("llama3_json", '{"name": "get_\\ud83d\\ude00", "parameters": {}}'),
        ("mistral", '[TOOL_CALLS][{"name": "get_\\ud83d\\ude00", "arguments": {}}]'),
    ],
)
def test_a_surrogate_pair_escape_is_one_name_character(template: str, text: str) -> None:
    parsed = parse(template, text)
    assert [(call.name, call.arguments) for call in parsed.tool_calls] == [
        ("get_\N{GRINNING FACE}", "{}")
    ]
    assert parsed.content is None
    assert parsed.events == ()
