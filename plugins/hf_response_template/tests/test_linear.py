"""Every input shape costs linear time (DESIGN §4.7), adversarial ones included.

``toolcall.contract.check_cost`` measures the work of each delta (Python trace events, and
bytes allocated, which shows a rescan done in C) at two output sizes, with no clock: the
work per delta at the end of a long output must not exceed that of a short one (twice, plus
a little). One step per character or short token, as a model streams.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from hf_testing import parser, shipped, with_field

from toolcall.contract import check_cost
from toolcall_hf_response_template import HfParser
from toolcall_hf_response_template.patterns import settles_at_end

HERMES = shipped("hermes")
CODER = shipped("qwen3_coder")
GLM = shipped("glm")
MISTRAL = shipped("mistral_v11")
GPT_OSS = {
    "start_anchor": "<|start|>assistant",
    "fields": {
        "thinking": {"open": "<|channel|>analysis<|message|>", "close": "<|end|>"},
        "content": {"open": "<|channel|>final<|message|>", "close": "<|end|>"},
        "tool_calls": {
            "open_pattern": (
                "<\\|channel\\|>commentary to=functions\\.(?P<name>\\w+).*?<\\|message\\|>"
            ),
            "close": "<|call|>",
            "content": "json",
            "repeats": True,
            "transform": {"function": {"name": "{name}", "arguments": "{content}"}},
        },
    },
}
CALL_COLON = with_field(
    HERMES, "tool_calls", open=None, open_pattern="<tool_call>call:(?P<name>\\w+)"
)
CALL_COLON["fields"]["tool_calls"]["transform"] = {
    "function": {"name": "{name}", "arguments": "{content}"}
}
DIALECT = with_field(
    HERMES,
    "tool_calls",
    content_args={"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
)


def chars(text: str) -> list[str]:
    return list(text)


def pieces(text: str, size: int = 3) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


SHAPES: dict[str, tuple[dict[str, object], Callable[[int], Sequence[str]]]] = {
    "long-json-string": (
        HERMES,
        lambda n: chars(
            '<tool_call>{"name": "get_weather", "arguments": {"city": "' + "ab c" * n + '"}}'
        ),
    ),
    "long-content": (HERMES, lambda n: chars("word " * n)),
    "long-reasoning": (HERMES, lambda n: chars("<think>" + "hmm " * n)),
    "whitespace-in-content": (HERMES, lambda n: chars("a" + " \n" * n)),
    "whitespace-in-reasoning": (HERMES, lambda n: chars("<think>a" + " \n" * n)),
    "whitespace-in-arguments": (
        HERMES,
        lambda n: chars('<tool_call>{"name": "get_time", "arguments": {' + " \n" * n),
    ),
    "many-calls": (
        HERMES,
        lambda n: pieces(
            '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>\n' * (n // 8)
        ),
    ),
    "deep-nesting": (
        HERMES,
        lambda n: chars('<tool_call>{"name": "get_time", "arguments": ' + '{"a": [' * (n // 8)),
    ),
    "partial-markers-in-content": (HERMES, lambda n: chars("<tool_ca " * (n // 2))),
    "long-xml-value": (
        CODER,
        lambda n: chars(
            "<tool_call>\n<function=get_weather>\n<parameter=city>\n" + "Par is " * (n // 2)
        ),
    ),
    "many-xml-parameters": (
        GLM,
        lambda n: chars(
            "<tool_call>get_weather" + "<arg_key>city</arg_key><arg_value>P</arg_value>" * (n // 16)
        ),
    ),
    "dialect-long-string": (
        DIALECT,
        lambda n: chars('<tool_call>{name:<|"|>get_time<|"|>,arguments:{a:<|"|>' + "xy " * n),
    ),
    "pattern-opener-never-completed": (
        GPT_OSS,
        lambda n: chars("<|channel|>commentary to=functions.get_weather " + "x" * (2 * n)),
    ),
    "pattern-opener-prefixes-again-and-again": (
        GPT_OSS,
        lambda n: chars("<|channel|>commentary to=functions.f " * (n // 4)),
    ),
    "lookahead-closer": (
        MISTRAL,
        lambda n: chars('[TOOL_CALLS]get_time[ARGS]{"a": "' + "[TOOL_CA" * (n // 4)),
    ),
    "closers-inside-a-string": (
        HERMES,
        lambda n: pieces(
            '<tool_call>{"name": "get_time", "arguments": {"a": "' + "</tool_call>" * (n // 4)
        ),
    ),
    "name-capture-that-keeps-growing": (
        CALL_COLON,
        lambda n: chars("<tool_call>call:" + "get_" * n),
    ),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_work_per_delta_does_not_grow(shape: str) -> None:
    template, make = SHAPES[shape]
    hf: HfParser = parser(template)  # type: ignore[arg-type]
    assert check_cost(hf, make) == []


@pytest.mark.parametrize(
    ("pattern", "settles"),
    [
        (r"\[TOOL_CALLS\](?P<name>[^\[\]]+?)\[ARGS\]", True),
        (r"<tool_call>\s*<function=(?P<name>[^>\n]+)>", True),
        (r"(?:</function>\s*)?</tool_call>", True),
        (r"<arg_key>(?P<key>.*?)</arg_key>\s*<arg_value>", True),
        (r"<a>\w+", False),  # more word characters would lengthen it
        (r"</a>\s*", False),
        (r"<a>.*</a>", False),  # a later </a> would lengthen it
        (r"x\n?", False),
        (r"<tool_call>(?P<name>\w+)(?=\n)", False),  # a look-ahead needs the next text
        # alternatives told apart by their first character, a look-ahead's included
        (r";|(?=<\|python_tag\|>)", True),
        (r"\[TOOL_CALLS\](?P<name>[^\[\]{]+?)(?:\[ARGS\]|(?=\{))", True),
        (r"x(?=a|$)", False),  # a look-ahead for the end
        (r"x(?!a)", False),  # a negative look-ahead fails once an 'a' follows
        (r"x(?:(?=a)|a)", False),  # two alternatives that start alike
        (r"x(?:ab|a)", False),  # more text could make the first branch match
        (r"a$", False),
    ],
)
def test_a_match_at_the_end_is_final_only_when_no_text_can_change_it(
    pattern: str, settles: bool
) -> None:
    assert settles_at_end(pattern) is settles
