"""The fast path: deltas the hooks need not read (content outside calls, the inside of a
string of JSON arguments) give what reading them would.

Each output is fed under many splits (one character per delta, fixed-width pieces that
put an escape's two characters in one delta or two, word pieces, seeded random cuts) and
must give the one-shot parse under the delta contract checker; the expected values follow
from the format: a JSON format's arguments are the model's own text of the value.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from typing import Any

import pytest
import regex
from hf_testing import calls, parser, shipped, splits

from toolcall import Parsed
from toolcall.contract import check_splits
from toolcall_hf_response_template import HfParser
from toolcall_hf_response_template.patterns import match_starts
from toolcall_hf_response_template.stream import HfStream

HERMES = shipped("hermes")
MISTRAL = shipped("mistral_v11")
LLAMA = shipped("llama3_json")


def pieces(text: str) -> list[list[str]]:
    """Every split of :func:`hf_testing.splits`, fixed widths 2 to 5 at every offset
    (an escape whole in a delta, and cut after its backslash), and word pieces with
    their blanks before or after them."""
    out = splits(text, 60)
    for width in range(2, 6):
        for offset in range(width):
            cuts = [0, *range(offset or width, len(text), width), len(text)]
            out.append([text[a:b] for a, b in itertools.pairwise(cuts) if b > a])
    out.append(re.findall(r"\s*\S+|\s+", text))
    out.append(re.findall(r"\S+\s*|\s+", text))
    return out


def parse_all_splits(hf: HfParser, text: str) -> Parsed:
    violations = check_splits(hf, text, pieces(text))
    assert violations == [], "\n".join(map(str, violations[:5]))
    return hf.parse(text)


def hermes_call(name: str, arguments: dict[str, Any]) -> str:
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call>"


# Strings whose JSON text has every escape the fast path must read right: escaped
# quotes and backslashes (runs of both parities before a quote), \n, \u escapes,
# blanks at a piece's end, characters delimiters start with.
TRICKY = [
    'say "hi"',
    "a\\b\\\\c",
    '\\"',
    '\\\\"',
    "ends in a backslash \\",
    "line\n    indented\n\ttab   ",
    "a < b <tool and </tool",
    "\u00e9\u4e2d\U0001f600 \u2028",
    "   ",
    "",
]


@pytest.mark.parametrize("value", TRICKY, ids=[repr(v) for v in TRICKY])
def test_a_string_argument_reads_alike_under_every_split(value: str) -> None:
    arguments = {"city": value, "days": 2, "nested": {"list": [value, "x"]}}
    text = "Sure " + hermes_call("get_weather", arguments)
    parsed = parse_all_splits(parser(HERMES), text)
    assert parsed.content == "Sure"
    assert calls(parsed) == [("get_weather", arguments)]
    # The model's own text of the value, unchanged.
    assert parsed.tool_calls[0].arguments == json.dumps(arguments, ensure_ascii=False)


def test_content_with_delimiter_characters_between_calls_reads_alike() -> None:
    first = hermes_call("get_weather", {"city": "Oslo"})
    second = hermes_call("get_time", {})
    text = f"a < b and <tools> {first}\nthen x<y {second} after <tool_c"
    parsed = parse_all_splits(parser(HERMES), text)
    assert calls(parsed) == [("get_weather", {"city": "Oslo"}), ("get_time", {})]
    # Content is the text outside the regions (the cut-off opener at the end too: it
    # never completed); whitespace held before a call is framing, what follows it is
    # content once text follows (the content gate: "A\n<call/>\nB" gives "A\nB").
    assert parsed.content == "a < b and <tools>\nthen x<y after <tool_c"


def test_blanks_the_fast_path_held_in_a_string_stay_in_it_before_a_closer_there() -> None:
    # Inside a string the closer is string text: the blanks held before it go on with
    # the string, whether they came in pieces or not.
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo  \t </tool_call>"}}'
    parsed = parse_all_splits(parser(HERMES), text + "</tool_call>")
    assert [call.arguments for call in parsed.tool_calls] == ['{"city": "Oslo  \t </tool_call>"}']


def test_a_closer_after_an_unclosed_value_ends_the_call_and_its_blanks_are_trimmed() -> None:
    # Outside a string the closer ends the region at any depth; the unclosed value runs to
    # it, trailing whitespace removed (DESIGN §6), whether the blanks came in pieces or not.
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"  \t </tool_call>'
    parsed = parse_all_splits(parser(HERMES), text)
    assert [call.arguments for call in parsed.tool_calls] == ['{"city": "Oslo"']


def test_the_output_ending_inside_a_string_keeps_the_text_without_its_blanks() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo is \\"big\\"  '
    parsed = parse_all_splits(parser(HERMES), text)
    assert [call.arguments for call in parsed.tool_calls] == ['{"city": "Oslo is \\"big\\"']


def test_a_look_ahead_closer_ends_a_string_where_its_character_stands() -> None:
    # mistral_v11: a call ends where the next [TOOL_CALLS] starts, inside a string too.
    first = '[TOOL_CALLS]get_weather[ARGS]{"city": "a [b] \\"c\\" \\\\"}'
    text = f'{first}[TOOL_CALLS]get_time[ARGS]{{"zone": "x\\ny"}}'
    parsed = parse_all_splits(parser(MISTRAL), text)
    assert calls(parsed) == [
        ("get_weather", {"city": 'a [b] "c" \\'}),
        ("get_time", {"zone": "x\ny"}),
    ]


def test_a_template_with_a_look_behind_reads_alike_without_the_fast_path() -> None:
    text = 'Hi {"name": "get_weather", "parameters": {"city": "a \\" b"}};'
    hf = parser(LLAMA)
    parse_all_splits(hf, text)
    stream = _CountingStream(hf)
    for char in text:
        stream.feed(char)
    stream.finish()
    assert stream.hooks == len(text)  # every delta reaches the hooks


class _CountingStream(HfStream):
    """An hf stream that counts the deltas its hooks read."""

    def __init__(self, parser: HfParser) -> None:
        super().__init__(parser)
        self.hooks = 0

    def on_text(self, text: str, start: int) -> None:
        self.hooks += 1
        super().on_text(text, start)


def word_pieces(text: str) -> list[str]:
    """Word pieces with the blank before the word, as tokenizers cut text."""
    return re.findall(r"\s*\S+|\s+", text)


def fed(text: str) -> tuple[str, str, int]:
    """The content and the arguments of ``text`` fed in :func:`word_pieces`, and how
    many pieces reached the hooks."""
    stream = _CountingStream(parser(HERMES))
    deltas = [delta for piece in word_pieces(text) for delta in stream.feed(piece)]
    deltas += stream.finish()
    content = "".join(delta.content for delta in deltas)
    arguments = "".join(call.arguments for delta in deltas for call in delta.tool_calls)
    return content, arguments, stream.hooks


def test_a_long_string_argument_reaches_the_hooks_only_where_it_must() -> None:
    words = [random.Random(n).choice(["alpha", "beta", "gamma", "delta"]) for n in range(400)]
    value = " ".join(words)
    content, arguments, hooks = fed("Content here. " + hermes_call("get_weather", {"city": value}))
    assert content == "Content here."
    assert arguments == json.dumps({"city": value})
    # Inside the string no piece holds a quote, a backslash or a '<', nor ends in a
    # blank: only the pieces around the value and the call's markup reach the hooks.
    assert hooks < 30


def test_escaped_quotes_inside_a_piece_stay_on_the_fast_path() -> None:
    value = " ".join(['"quoted"', "plain", "back\\slash"] * 100)
    # Pieces like ' \"quoted\"' and ' back\\slash'.
    _, arguments, hooks = fed(hermes_call("get_weather", {"city": value}))
    assert arguments == json.dumps({"city": value})
    assert hooks < 30


def test_pieces_of_blanks_inside_a_string_stay_on_the_fast_path() -> None:
    # Indented code: runs of blanks come as pieces of their own. The machine keeps the
    # blanks a piece ends in for the next piece, so neither reaches the hooks.
    value = "def f(x):\n    if x:\n        return  x\n" * 50
    stream = _CountingStream(parser(HERMES))
    pieces = re.findall(r" +|[^ ]+", hermes_call("run", {"code": value}))
    assert sum(not piece.strip() for piece in pieces) > 100
    deltas = [delta for piece in pieces for delta in stream.feed(piece)] + stream.finish()
    arguments = "".join(call.arguments for delta in deltas for call in delta.tool_calls)
    assert arguments == json.dumps({"code": value})
    assert stream.hooks < 30


def test_content_outside_calls_reaches_the_hooks_only_where_it_must() -> None:
    words = " ".join(["word"] * 300)
    content, arguments, hooks = fed(words + " " + hermes_call("get_time", {}))
    assert (content, arguments) == (words, "{}")
    assert hooks < 30


# -- the characters a delimiter starts at ------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "starts"),
    [
        ("<tool_call>", {"<"}),
        (r"\[TOOL_CALLS\](?:\[TOOL_CALLS\])*", {"["}),
        (r"(?=\[TOOL_CALLS\])", {"["}),  # a look-ahead: the character it looks at
        (r";|(?=<\|python_tag\|>)", {";", "<"}),
        (r"(?:</function>\s*)?</tool_call>", {"<"}),
        (r"[a-c]x|(?!z)q", {"a", "b", "c", "q"}),
        (r"x*y", {"x", "y"}),
    ],
)
def test_match_starts_are_the_characters_a_match_can_start_at(
    pattern: str, starts: set[str]
) -> None:
    assert match_starts(pattern) == starts


def test_a_blank_class_covers_every_blank() -> None:
    found = match_starts(r"\s*<")
    assert found is not None
    assert {" ", "\t", "\n", "\r", "\x0b", "\x0c", "\u00a0", "\u3000", "<"} <= found


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?<=;)\s*(?=\{)",  # looks behind
        r"x(?<=ax)",  # looks behind, past the match's start
        r"^\s*(?=\{)",  # an anchor
        r"\bfoo",  # a word boundary looks at the character before
        r"a*",  # matches the empty text anywhere
        r"(?i)tool",  # case-folded
        r".x",  # any character
        r"[^<]x",  # a negated class
    ],
)
def test_match_starts_are_unknown_where_a_match_depends_on_more(pattern: str) -> None:
    assert match_starts(pattern) is None


@pytest.mark.parametrize(
    "pattern", [r"\[TOOL_CALLS\][^\[\]{]+?(?:\[ARGS\]|(?=\{))", r"\s*<a>|;", r"(?=<b)|c+d"]
)
def test_no_match_or_partial_match_starts_elsewhere(pattern: str) -> None:
    starts = match_starts(pattern)
    assert starts is not None
    compiled = regex.compile(pattern, regex.DOTALL)
    rng = random.Random(pattern)
    alphabet = "[]{}<>;abcdTOOL_CALS ARG\n"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        for at in range(len(text)):
            # A match, or the start of one, at ``at`` (empty ones too: a look-ahead's).
            if compiled.match(text, at, partial=True) is not None:
                assert text[at] in starts, (text, at)
