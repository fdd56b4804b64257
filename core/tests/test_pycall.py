"""The streaming reader of Python call syntax (``toolcall.pycall``).

Two small families drive it here, as a plugin would: ``ListStream`` reads a Python
list of calls at the start of the output (after whitespace), ``LinesStream`` one
call per line from the start; everything else is content. Expected values come
from the module's specification and from Python itself (``ast.literal_eval``,
``json.dumps``), never from the reader's output.
"""

from __future__ import annotations

import ast
import itertools
import json
import math
import random
import string
import warnings
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall import CallStream, Parser, ParserContext, assemble
from toolcall.contract import check_cost, check_splits, check_stream
from toolcall.pycall import MAX_DEPTH, PyCallReader, dumps
from toolcall.scanning import UNDECODED
from toolcall.types import RECOVERIES, EventName, Parsed

# -- two families on the reader --------------------------------------------------------


class ListStream(CallStream):
    """A list of calls at the start of the output (after whitespace); the rest content."""

    lines = False

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        self.reader: PyCallReader | None = None
        self.started = False

    def on_text(self, text: str, start: int) -> None:
        while text:
            if self.reader is not None:
                taken = self.reader.feed(text, start)
                text, start = text[taken:], start + taken
                if self.reader.done:
                    self.reader = None
                continue
            if not self.started:
                body = text.lstrip(" \t\r\n")
                blank = len(text) - len(body)
                self.content(text[:blank], start)
                text, start = body, start + blank
                if not text:
                    return
                self.started = True
                if self.lines or text[0] == "[":
                    self.reader = PyCallReader(self, lines=self.lines)
                    continue
            self.content(text, start)
            return

    def on_end(self) -> None:
        if self.reader is not None:
            self.reader.end()


class LinesStream(ListStream):
    lines = True


class ListParser(Parser):
    name = "test_pycall_list"

    def stream(self) -> ListStream:
        return ListStream(self)


class LinesParser(Parser):
    name = "test_pycall_lines"

    def stream(self) -> ListStream:
        return LinesStream(self)


def make(kind: type[Parser] = ListParser, *, strict: bool = False) -> Parser:
    return kind(ParserContext(strict_parsing=strict))


def random_splits(text: str, count: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    splits = [list(text), [text]]
    if len(text) < 2:
        return splits
    for _ in range(count):
        cuts = sorted({rng.randrange(1, len(text)) for _ in range(rng.randint(1, 12))})
        points = [0, *cuts, len(text)]
        splits.append([text[a:b] for a, b in itertools.pairwise(points) if b > a])
    return splits


def parse_everywhere(parser: Parser, text: str, *, promptness: bool = True) -> Parsed:
    """The one-shot parse, after checking the contract under many splits."""
    violations = check_splits(parser, text, random_splits(text, 25, 7), promptness=promptness)
    assert violations == [], "\n".join(map(str, violations))
    return parser.parse(text)


def calls(parsed: Parsed) -> list[tuple[str, str]]:
    return [(call.name, call.arguments) for call in parsed.tool_calls]


def names(parsed: Parsed) -> set[str]:
    return {event.name for event in parsed.events}


# -- what is emitted, and when ---------------------------------------------------------


def test_each_piece_is_emitted_when_it_is_complete() -> None:
    text = '[get_weather(city="Pa\\u00efs", days=3), get_time()]'
    stream = make().stream()
    seen: dict[str, tuple[str | None, str]] = {}
    deltas = []
    for end, char in enumerate(text, 1):
        deltas += stream.feed(char)
        parsed = assemble(deltas)
        first = parsed.tool_calls[0] if parsed.tool_calls else None
        seen[text[:end]] = (first.name if first else None, first.arguments if first else "")
    assert seen["[get_weather"] == (None, "")
    assert seen["[get_weather("] == ("get_weather", "")
    assert seen["[get_weather(city"] == ("get_weather", "")
    assert seen["[get_weather(city="] == ("get_weather", '{"city": ')
    assert seen['[get_weather(city="'] == ("get_weather", '{"city": "')
    assert seen['[get_weather(city="Pa'] == ("get_weather", '{"city": "Pa')
    assert seen['[get_weather(city="Pa\\u00e'] == ("get_weather", '{"city": "Pa')
    assert seen['[get_weather(city="Pa\\u00ef'] == ("get_weather", '{"city": "Pa\u00ef')
    # The closing quote goes out once what follows shows that it closed the string.
    assert seen['[get_weather(city="Pa\\u00efs"'] == ("get_weather", '{"city": "Pa\u00efs')
    assert seen['[get_weather(city="Pa\\u00efs",'] == ("get_weather", '{"city": "Pa\u00efs"')
    # A number is emitted whole, once it cannot go on.
    assert seen['[get_weather(city="Pa\\u00efs", days='][1] == '{"city": "Pa\u00efs", "days": '
    assert seen['[get_weather(city="Pa\\u00efs", days=3'][1] == '{"city": "Pa\u00efs", "days": '
    assert seen['[get_weather(city="Pa\\u00efs", days=3)'][1] == '{"city": "Pa\u00efs", "days": 3}'
    deltas += stream.finish()
    assert calls(assemble(deltas)) == [
        ("get_weather", '{"city": "Pa\u00efs", "days": 3}'),
        ("get_time", "{}"),
    ]


def test_arguments_are_canonical_json() -> None:
    text = "[f( a = 'x' , b=( 1 ,2 ) ,c={ 'k' : None , 2: [ True ] } , d=-  0.5e1 ,)]"
    value = {"a": "x", "b": [1, 2], "c": {"k": None, 2: [True]}, "d": -5.0}
    assert calls(parse_everywhere(make(), text)) == [("f", json.dumps(value))]


def test_dotted_names_are_names() -> None:
    parsed = parse_everywhere(make(), "[functions.weather.get(city='Paris')]")
    assert calls(parsed) == [("functions.weather.get", '{"city": "Paris"}')]


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("'it\\'s'", "it's"),
        ('"say \\"hi\\""', 'say "hi"'),
        ("'tab\\tnew\\nline\\\\'", "tab\tnew\nline\\"),
        ("'\\x41\\101\\u00e9\\U0001F600\\N{BULLET}'", "AA\u00e9\U0001f600\u2022"),
        ("'line \\\ncontinued'", "line continued"),
        ("'\\d+ stays'", "\\d+ stays"),
        ("r'\\d+\\n'", "\\d+\\n"),
        ("'''a 'quoted' \"word\"\nover lines'''", "a 'quoted' \"word\"\nover lines"),
        ('""""""', ""),
        ("''", ""),
        ("'a' 'b' \"c\"", "abc"),
        ("u'x'", "x"),
        ("f'{{literal}} braces'", "{literal} braces"),
        ("'caf\u00e9 \U0001f600 \u65e5\u672c'", "caf\u00e9 \U0001f600 \u65e5\u672c"),
        ("'{\"json\": [1, 2]}'", '{"json": [1, 2]}'),
    ],
)
def test_strings(source: str, value: str) -> None:
    parsed = parse_everywhere(make(), f"[f(s={source}, n=1)]")
    assert calls(parsed) == [("f", json.dumps({"s": value, "n": 1}, ensure_ascii=False))]
    assert parsed.events == ()


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("0", 0),
        ("-17", -17),
        ("+3", 3),
        ("1_000_000", 1000000),
        ("0x1F", 31),
        ("0o17", 15),
        ("0b101", 5),
        ("1.5", 1.5),
        (".5", 0.5),
        ("5.", 5.0),
        ("1e3", 1000.0),
        ("-2.5E-3", -0.0025),
        ("1j", None),  # complex
        ("1e999", None),  # infinite
        ("1.2.3", None),
        ("3px", None),
        ("9" * 5000, None),  # no float holds it, and an int that long is not converted
    ],
)
def test_numbers(source: str, value: int | float | None) -> None:
    parsed = parse_everywhere(make(), f"[f(n={source})]")
    if value is None:
        assert calls(parsed) == [("f", '{"n": ')]
        assert EventName.MALFORMED_ARGUMENTS in names(parsed)
        assert parsed.content == source[1:] if source == "+3" else source
    else:
        assert calls(parsed) == [("f", json.dumps({"n": value}))]
        assert parsed.content is None


def test_a_number_is_complete_where_it_cannot_go_on() -> None:
    parsed = parse_everywhere(make(), "[f(n=10**2)]")
    assert calls(parsed) == [("f", '{"n": 10')]
    assert parsed.content == "**2"


def test_containers() -> None:
    text = "[f(a=[], b=(), c={}, d=(1,), e=(1), f={1, 2, 1}, g={'k': (1, [2, {3}])}, h=[1, 2,])]"
    value = {
        "a": [],
        "b": [],
        "c": {},
        "d": [1],
        "e": 1,
        "f": [1, 2],
        "g": {"k": [1, [2, [3]]]},
        "h": [1, 2],
    }
    assert calls(parse_everywhere(make(), text)) == [("f", json.dumps(value))]


def test_dict_keys_follow_json_dumps() -> None:
    text = "[f(a={1: 'one', 2.5: 'x', True: 't', None: 'n', 'k': 'v', 1.0: 'again'})]"
    value = {1: "again", 2.5: "x", None: "n", "k": "v"}  # 1, 1.0 and True are one key
    assert calls(parse_everywhere(make(), text)) == [("f", json.dumps({"a": value}))]


# -- the policy: what is not a call, defects, the end ---------------------------------


@pytest.mark.parametrize(
    "text",
    ["[1, 2, 3]", "[]", "[see the docs](https://example.com)", "[Paris, London]", '["a"]'],
)
def test_a_list_whose_first_element_is_not_a_call_is_content(text: str) -> None:
    parsed = parse_everywhere(make(), text)
    assert parsed.content == text
    assert parsed.tool_calls == ()
    assert names(parsed) == {EventName.UNPARSED_MARKUP}


def test_the_family_decides_which_first_names_start_calls() -> None:
    class Declared(ListStream):
        def on_text(self, text: str, start: int) -> None:
            if self.reader is None and not self.started and text.startswith("["):
                self.reader = PyCallReader(self, first=lambda name: name == "known")
                self.started = True
            super().on_text(text, start)

    class DeclaredParser(ListParser):
        def stream(self) -> ListStream:
            return Declared(self)

    parser = DeclaredParser()
    assert parser.parse("[other(a=1)]").content == "[other(a=1)]"
    assert calls(parser.parse("[known(a=1), other(b=2)]")) == [
        ("known", '{"a": 1}'),
        ("other", '{"b": 2}'),
    ]


@pytest.mark.parametrize(
    ("text", "expected_calls", "content"),
    [
        # A positional argument: the call keeps what was emitted; the rest is content.
        ("[f(1, 2), g(a=1)]", [("f", ""), ("g", '{"a": 1}')], "1, 2"),
        # An expression.
        ("[f(a=1+2, b=3), g()]", [("f", '{"a": 1'), ("g", "{}")], "+2, b=3"),
        ("[f(a=x)]", [("f", '{"a": ')], "x"),
        ("[f(a=float('inf'))]", [("f", '{"a": ')], "float('inf')"),
        # An f-string placeholder.
        ("[f(a=f'x{y}z')]", [("f", '{"a": "x')], "{y}z'"),
        # Bytes are not JSON.
        ("[f(a=b'x')]", [("f", '{"a": ')], "b'x'"),
        # A missing comma between keyword arguments.
        ("[f(a=1 b=2)]", [("f", '{"a": 1')], "b=2"),
        # Unbalanced brackets inside a value: the call's ")" still ends it.
        ("[f(a=[1, 2), g(b=1)]", [("f", '{"a": '), ("g", '{"b": 1}')], "[1, 2"),
        ("[f(a={'k': [1}), g()]", [("f", '{"a": '), ("g", "{}")], "{'k': [1}"),
        # A comparison is not a keyword argument.
        ("[f(a==1)]", [("f", '{"a": ')], "=1"),
        # **kwargs.
        ("[f(**{'a': 1}), g()]", [("f", ""), ("g", "{}")], "**{'a': 1}"),
        # An invalid escape.
        ("[f(a='\\x4g')]", [("f", '{"a": "')], "\\x4g'"),
        # A lone surrogate escape is no JSON string.
        ("[f(a='\\ud800')]", [("f", '{"a": "')], "\\ud800'"),
        # A string followed by an operator: it closed, and the operator is a defect.
        ("[f(a='x' + y)]", [("f", '{"a": "x"')], "+ y"),
        ("[f(a='x'.upper())]", [("f", '{"a": "x"')], ".upper()"),
    ],
)
def test_defects_keep_what_was_emitted(
    text: str, expected_calls: list[tuple[str, str]], content: str
) -> None:
    parsed = parse_everywhere(make(), text)
    assert calls(parsed) == expected_calls
    assert parsed.content == content
    assert {EventName.MALFORMED_ARGUMENTS, EventName.UNPARSED_MARKUP} <= names(parsed)


def test_one_malformed_call_does_not_spoil_the_others() -> None:
    parsed = parse_everywhere(make(), "[a(x=1), b(2), c(y='ok'), d(z=nope), e()]")
    assert calls(parsed) == [
        ("a", '{"x": 1}'),
        ("b", ""),
        ("c", '{"y": "ok"}'),
        ("d", '{"z": '),
        ("e", "{}"),
    ]
    assert parsed.content == "2nope"
    malformed = [e.call_index for e in parsed.events if e.name == EventName.MALFORMED_ARGUMENTS]
    assert malformed == [1, 3]


def test_list_elements_that_are_not_calls_are_content() -> None:
    parsed = parse_everywhere(make(), "[f(a=1), 'text', g(b=2) h(c=3), [i()]]")
    assert calls(parsed) == [("f", '{"a": 1}'), ("g", '{"b": 2}')]
    # Each skipped element is content, verbatim (the framing between them is not).
    assert parsed.content == "'text'h(c=3)[i()]"


def test_a_repeated_keyword_keeps_the_first_value() -> None:
    parsed = parse_everywhere(make(), "[f(a='x', a=[1, (2,)], b=2)]")
    assert calls(parsed) == [("f", '{"a": "x", "b": 2}')]
    assert parsed.content == "a=[1, (2,)]"
    assert names(parsed) == {EventName.DUPLICATE_KEY, EventName.UNPARSED_MARKUP}


@pytest.mark.parametrize(
    ("text", "expected_calls", "content"),
    [
        ("[f(a='open", [("f", '{"a": "open')], None),
        ("[f(a='done'", [("f", '{"a": "done')], "'"),
        ("[f(a=12", [("f", '{"a": ')], "12"),
        ("[f(a=[1, 2", [("f", '{"a": ')], "[1, 2"),
        ("[f(a", [("f", "")], "a"),
        ("[f(", [("f", "")], None),
        ("[f(a='\\u00", [("f", '{"a": "')], "\\u00"),
    ],
)
def test_a_call_cut_off_keeps_what_was_emitted(
    text: str, expected_calls: list[tuple[str, str]], content: str | None
) -> None:
    parsed = parse_everywhere(make(), text)
    assert calls(parsed) == expected_calls
    assert parsed.content == content
    assert EventName.TRUNCATED in names(parsed)


def test_an_unclosed_list_after_complete_calls() -> None:
    parsed = parse_everywhere(make(), "[f(a=1), g(b=2)", promptness=False)
    assert calls(parsed) == [("f", '{"a": 1}'), ("g", '{"b": 2}')]
    assert names(parsed) == {EventName.MISSING_END}
    strict = make(strict=True).parse("[f(a=1), g(b=2)")
    assert calls(strict) == calls(parsed)
    assert names(strict) == {EventName.TRUNCATED}


def test_text_after_the_list_is_the_familys() -> None:
    parsed = parse_everywhere(make(), "  [f(a=1)] Done: [not(a call)]\n")
    assert calls(parsed) == [("f", '{"a": 1}')]
    assert parsed.content == "Done: [not(a call)]"


# -- recoveries --------------------------------------------------------------------------


RECOVERED = [
    # (text, value of the argument a, the recovery)
    ("[f(a='line1\nline2')]", "line1\nline2", EventName.CONTROL_CHARACTER),
    ("[f(a='nul\x00here')]", "nul\x00here", EventName.CONTROL_CHARACTER),
    ("[f(a=1, from='x')]", None, EventName.RESERVED_WORD),
    ("[f(a=07)]", 7, EventName.LEADING_ZERO),
    ("[f(a=[007, 0_1])]", [7, 1], EventName.LEADING_ZERO),
    ("[f(a='sed -n '360,450p' f.py')]", "sed -n '360,450p' f.py", EventName.NESTED_QUOTE),
    ("[f(a='it's')]", "it's", EventName.NESTED_QUOTE),
    ("[f(a='echo 'hello'')]", "echo 'hello'", EventName.NESTED_QUOTE),
    ('[f(a="say "hi" now")]', 'say "hi" now', EventName.NESTED_QUOTE),
    ("[f(a=['it's', 'ok'])]", ["it's", "ok"], EventName.NESTED_QUOTE),
    ("[f(a=true, b=[false, null])]", True, EventName.JSON_LITERAL),
    ("[get-weather(a='x')]", "x", EventName.DASHED_NAME),
]


@pytest.mark.parametrize(("text", "value", "recovery"), RECOVERED)
def test_recoveries(text: str, value: object, recovery: str) -> None:
    parsed = parse_everywhere(make(), text, promptness=False)
    assert recovery in RECOVERIES
    assert {event.name for event in parsed.events} == {recovery}
    arguments = json.loads(parsed.tool_calls[0].arguments)
    if recovery == EventName.RESERVED_WORD:
        assert arguments == {"a": 1, "from": "x"}
    else:
        assert arguments["a"] == value
    assert parsed.content is None


@pytest.mark.parametrize(("text", "value", "recovery"), RECOVERED)
def test_strict_parsing_turns_recoveries_into_defects(
    text: str, value: object, recovery: str
) -> None:
    parsed = parse_everywhere(make(strict=True), text)
    assert recovery not in names(parsed)
    assert not parsed.recoveries
    assert parsed.content is not None  # what the recovery would have read is content
    if recovery != EventName.DASHED_NAME:
        assert EventName.MALFORMED_ARGUMENTS in names(parsed)


def test_json_literals_are_native_when_the_family_says_so() -> None:
    class Native(ListStream):
        def on_text(self, text: str, start: int) -> None:
            if self.reader is None and not self.started:
                self.reader = PyCallReader(self, json_literals=True)
                self.started = True
            super().on_text(text, start)

    class NativeParser(ListParser):
        def stream(self) -> ListStream:
            return Native(self)

    parsed = NativeParser(ParserContext(strict_parsing=True)).parse("[f(a=true, b=null)]")
    assert calls(parsed) == [("f", '{"a": true, "b": null}')]
    assert parsed.events == ()


def test_a_nested_quote_does_not_swallow_an_expression() -> None:
    """A quote that Python could go on from (an operator, a keyword) closed the string."""
    parsed = parse_everywhere(make(), "[f(a='x' + 'y'), g(b=1)]")
    assert calls(parsed) == [("f", '{"a": "x"'), ("g", '{"b": 1}')]
    assert EventName.NESTED_QUOTE not in names(parsed)


# -- the lines shape --------------------------------------------------------------------


def test_lines_one_call_per_line() -> None:
    text = "get_weather(city='Paris')\n\nget_time(tz=\"CET\")\nThat is all."
    parsed = parse_everywhere(make(LinesParser), text)
    assert calls(parsed) == [("get_weather", '{"city": "Paris"}'), ("get_time", '{"tz": "CET"}')]
    assert parsed.content == "That is all."


def test_lines_a_first_line_that_is_not_a_call_is_content() -> None:
    parsed = parse_everywhere(make(LinesParser), "Hello there(friend)")
    assert parsed.content == "Hello there(friend)"
    assert parsed.tool_calls == ()


def test_lines_two_calls_on_one_line_end_the_calls() -> None:
    parsed = parse_everywhere(make(LinesParser), "f(a=1) g(b=2)")
    assert calls(parsed) == [("f", '{"a": 1}')]
    assert parsed.content == "g(b=2)"


def test_in_string_and_in_call() -> None:
    stream = ListStream(make())
    stream.feed("[f(a='x")
    reader = stream.reader
    assert reader is not None
    assert (reader.in_string, reader.in_call) == (True, True)
    stream.feed("', b=1)")
    assert (reader.in_string, reader.in_call) == (False, False)


# -- agreement with Python's own reading ------------------------------------------------


class PySet:
    """A set literal written in source order (its elements sorted, distinct)."""

    def __init__(self, items: Sequence[object]) -> None:
        self.items = items


def _key(value: object) -> str:
    return repr(value)


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=20),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers()), inner, max_size=4),
        st.lists(st.integers(), max_size=4, unique=True).map(lambda xs: PySet(sorted(xs))),
        st.lists(st.text(max_size=5), max_size=4, unique=True).map(lambda xs: PySet(sorted(xs))),
    ),
    max_leaves=12,
)


def render(value: object, rng: random.Random) -> str:
    """Python source for ``value``, with some of the spellings a model may use."""
    if isinstance(value, PySet):
        if not value.items:
            return "set()"  # not a literal: the caller never makes empty sets
        return "{" + ", ".join(render(item, rng) for item in value.items) + "}"
    if isinstance(value, str):
        source = repr(value)
        if rng.random() < 0.3 and "\n" not in value and '"' not in value and "\\" not in value:
            source = '"' + value + '"' if value.isprintable() else source
        return source
    if isinstance(value, list):
        return "[" + ", ".join(render(item, rng) for item in value) + "]"
    if isinstance(value, tuple):
        if len(value) == 1:
            return "(" + render(value[0], rng) + ",)"
        return "(" + ", ".join(render(item, rng) for item in value) + ")"
    if isinstance(value, dict):
        items = (f"{render(key, rng)}: {render(item, rng)}" for key, item in value.items())
        return "{" + ", ".join(items) + "}"
    return repr(value)


def as_json_value(value: object) -> object:
    """What ``ast.literal_eval`` returns, as the JSON arguments hold it: tuples and
    sets as lists (a set's elements sorted, which is the order they were written)."""
    if isinstance(value, set | frozenset):
        return [as_json_value(item) for item in sorted(value, key=_key)]
    if isinstance(value, list | tuple):
        return [as_json_value(item) for item in value]
    if isinstance(value, dict):
        return {key: as_json_value(item) for key, item in value.items()}
    return value


def sort_sets(value: object) -> object:
    if isinstance(value, PySet):
        return PySet(sorted(value.items, key=_key))
    if isinstance(value, list):
        return [sort_sets(item) for item in value]
    if isinstance(value, tuple):
        return tuple(sort_sets(item) for item in value)
    if isinstance(value, dict):
        return {key: sort_sets(item) for key, item in value.items()}
    return value


def no_empty_sets(value: object) -> bool:
    if isinstance(value, PySet):
        return bool(value.items)
    if isinstance(value, list | tuple):
        return all(no_empty_sets(item) for item in value)
    if isinstance(value, dict):
        return all(no_empty_sets(item) for item in value.values())
    return True


@settings(max_examples=300, deadline=None)
@given(
    arguments=st.dictionaries(
        st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(
            lambda k: not __import__("keyword").iskeyword(k)
        ),
        VALUES.map(sort_sets).filter(no_empty_sets),
        max_size=4,
    ),
    seed=st.integers(0, 2**16),
)
def test_one_shot_agrees_with_literal_eval(arguments: dict[str, object], seed: int) -> None:
    rng = random.Random(seed)
    sources = {key: render(value, rng) for key, value in arguments.items()}
    text = "[f(" + ", ".join(f"{key}={source}" for key, source in sources.items()) + ")]"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expected = {key: as_json_value(ast.literal_eval(src)) for key, src in sources.items()}
    parsed = make().parse(text)
    assert parsed.events == ()
    assert parsed.content is None
    assert calls(parsed) == [("f", json.dumps(expected, ensure_ascii=False))]
    # And streamed, under a few splits, the same (the contract's clause 1).
    assert check_splits(make(), text, random_splits(text, 3, seed)) == []


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=string.printable + "\u00e9\u65e5", max_size=40))
def test_any_text_parses_without_error_under_any_split(tail: str) -> None:
    for text in ("[f(a=" + tail, "[" + tail, tail):
        violations = check_splits(make(), text, random_splits(text, 3, len(text)), promptness=False)
        assert violations == []
        _, strict = check_stream(make(strict=True), list(text), promptness=False)
        assert strict == []


# -- string text read in runs ------------------------------------------------------------
#
# A string's text and its complete escapes are read as one run; what a run cannot
# decide (an escape cut off by the end of a delta, ``\N{...}``, an unknown escape, a
# quote, a line break) is read one piece at a time. These pin that both agree with
# Python, whole and split anywhere.

#: Escapes of every kind, as source text: the ones a run decodes, and the ones it
#: leaves to the piece-by-piece reader.
ESCAPES = [
    "\\\\",
    "\\'",
    '\\"',
    "\\a",
    "\\b",
    "\\f",
    "\\n",
    "\\r",
    "\\t",
    "\\v",
    "\\\n",
    "\\x41",
    "\\xe9",
    "\\x7F",
    "\\u00e9",
    "\\u65E5",
    "\\U0001F600",
    "\\U0010FFFF",
    "\\0",
    "\\7",
    "\\12",
    "\\101",
    "\\377",
    "\\N{BULLET}",
    "\\d",
    "\\8",
    "\\{",
]
#: In a raw string a backslash keeps the character after it (and stays).
RAW_ESCAPES = ["\\\\", "\\'", '\\"', "\\n", "\\d", "\\x41", "\\N"]
#: Text around the escapes: digits (an octal escape may go on into them), both
#: quotes, braces, a tab, and characters beyond ASCII and beyond the BMP.
TEXT = st.text(alphabet="ab7 9\t'\"{}\u00e9\u65e5\U0001f600\x7f", max_size=6)


@st.composite
def string_literals(draw: st.DrawFn) -> tuple[str, str]:
    """A Python string literal and the text it means (by Python, not by the reader)."""
    quote = draw(st.sampled_from(["'", '"']))
    triple = draw(st.booleans())
    prefix = draw(st.sampled_from(["", "r", "f", "rf"]))
    escapes = RAW_ESCAPES if "r" in prefix else ESCAPES
    if "f" in prefix:  # a brace in an escape would be a placeholder's
        escapes = [escape for escape in escapes if "{" not in escape and "N" not in escape]
    pieces: list[str] = []
    for _ in range(draw(st.integers(0, 12))):
        text = draw(TEXT).replace(quote, "\\" + quote)  # its own quote, escaped
        if triple:  # raw line breaks
            text = text.replace("9", "\n")
        if "f" in prefix:  # an f-string writes a literal brace twice
            text = text.replace("{", "{{").replace("}", "}}")
        pieces += [text, draw(st.sampled_from(escapes))]
    # Long text (longer than a delta) is read in longer runs.
    body = "".join(pieces) * draw(st.sampled_from([1, 1, 60]))
    delimiter = quote * 3 if triple else quote
    source = prefix + delimiter + body + delimiter
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an unknown escape keeps its backslash, as here
        value = eval(source) if "f" in prefix else ast.literal_eval(source)
    assert isinstance(value, str)
    return source, value


@settings(max_examples=300, deadline=None)
@given(literal=string_literals(), nested=st.booleans(), seed=st.integers(0, 2**16))
def test_string_text_whole_and_split_agrees_with_python(
    literal: tuple[str, str], nested: bool, seed: int
) -> None:
    source, value = literal
    argument = f"[{source}, 1]" if nested else source
    text = f"[f(s={argument}, n=1)]"
    expected = json.dumps({"s": [value, 1] if nested else value, "n": 1}, ensure_ascii=False)
    parsed = make().parse(text)
    assert calls(parsed) == [("f", expected)]
    assert parsed.events == ()
    assert parsed.content is None
    splits = [list(text), [text], *random_splits(text, 6, seed)]
    assert check_splits(make(), text, splits) == []


@pytest.mark.parametrize("quote", ["'", '"', "'''", '"""'])
@pytest.mark.parametrize("nested", [False, True])
def test_a_long_string_of_every_escape_agrees_with_python(quote: str, nested: bool) -> None:
    # Far longer than a delta, escapes packed: the whole text is read in runs.
    body = "".join(ESCAPES) + "plain 'text' \"here\" \u00e9\U0001f600\t"
    body = body.replace("\\" + quote[0], "").replace(quote[0], "\\" + quote[0]) * 2000
    source = quote + body + quote
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = ast.literal_eval(source)
    argument = f"({source},)" if nested else source
    parsed = make().parse(f"[f(s={argument})]")
    expected = {"s": [value] if nested else value}
    assert calls(parsed) == [("f", json.dumps(expected, ensure_ascii=False))]
    assert parsed.events == ()
    # Streamed in deltas of a few characters, the same.
    short = f"[f(s={quote}{body[: len(body) // 400]}{quote})]"
    assert check_splits(make(), short, [steps(short, 3), steps(short, 7)]) == []


@pytest.mark.parametrize(
    ("escape", "content"),
    [
        # A run decodes only escapes that name a character JSON can hold.
        ("\\ud800", "\\ud800'"),
        ("\\uDFFF", "\\uDFFF'"),
        ("\\U0000d800", "\\U0000d800'"),
        ("\\U00110000", "\\U00110000'"),
        ("\\N{NO SUCH NAME}", "\\N{NO SUCH NAME}'"),
    ],
)
def test_an_escape_that_names_no_json_character_is_a_defect_after_a_run(
    escape: str, content: str
) -> None:
    text = f"[f(a='ok \\n {escape}'), g()]"
    parsed = parse_everywhere(make(), text)
    assert calls(parsed) == [("f", '{"a": "ok \\n '), ("g", "{}")]
    assert parsed.content == content
    assert EventName.MALFORMED_ARGUMENTS in names(parsed)


# -- size and depth ----------------------------------------------------------------------


def test_ten_thousand_calls() -> None:
    text = "[" + ", ".join(f"f{i}(n={i}, s='{i}')" for i in range(10000)) + "]"
    parsed = make().parse(text)
    assert len(parsed.tool_calls) == 10000
    assert parsed.tool_calls[9999].arguments == '{"n": 9999, "s": "9999"}'
    assert parsed.content is None


def test_a_one_megabyte_string_value() -> None:
    value = ("x" * 1023 + "\n") * 1024
    parsed = make().parse(f"[f(a={value!r})]")
    assert calls(parsed) == [("f", json.dumps({"a": value}))]


def test_deep_nesting_never_raises_a_recursion_error() -> None:
    # Deeper than MAX_DEPTH: a defect; the nesting is content and the next call parses.
    depth = MAX_DEPTH + 1
    parsed = make().parse("[f(a=" + "[" * depth + "]" * depth + "), g(b=1)]")
    assert calls(parsed) == [("f", '{"a": '), ("g", '{"b": 1}')]
    assert parsed.content == "[" * depth + "]" * depth
    # Deeper than json.loads reads back: emitted whole, malformed-arguments.
    parsed = make().parse("[f(a=" + "[" * 5000 + "]" * 5000 + ")]")
    assert calls(parsed) == [("f", '{"a": ' + "[" * 5000 + "]" * 5000 + "}")]
    assert names(parsed) == {EventName.MALFORMED_ARGUMENTS}
    # Shallower: clean.
    parsed = make().parse("[f(a=" + "[" * 500 + "]" * 500 + ")]")
    assert parsed.events == ()


def test_dumps_agrees_with_json_dumps_and_never_recurses() -> None:
    rng = random.Random(3)
    for _ in range(200):
        value: Any = [rng.random(), rng.randint(-(10**20), 10**20), "caf\u00e9\n", None, True]
        value = {"k": value, 1: (value, {}), 2.5: [[], {"x": False}], None: "n", False: 0}
        assert dumps(value) == json.dumps(value, ensure_ascii=False)
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    assert dumps(deep) == "[" * 100_001 + "]" * 100_001
    for bad in (math.inf, math.nan, {(1, 2): 1}, "\ud800", b"x"):
        with pytest.raises(ValueError, match=r"JSON|surrogate"):
            dumps(bad)


def steps(text: str, size: int = 3) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@pytest.mark.parametrize(
    ("label", "make_output"),
    [
        ("string value", lambda n: steps("[f(a='" + "ab\\n" * n + "')]")),
        ("held list value", lambda n: steps("[f(a=[" + "1, " * n + "2])]")),
        ("many calls", lambda n: steps("[" + "g(a=1), " * n + "h()]")),
        ("whitespace", lambda n: steps("[" + " " * (3 * n) + "f()]")),
        ("a name that is too long", lambda n: steps("[" + "a" * (3 * n) + "(x=1)]")),
        ("a long number, then a defect", lambda n: steps("[f(a=" + "1" * (3 * n) + "x)]")),
        ("deep nesting", lambda n: steps("[f(a=" + "[" * n + "]" * n + ")]")),
        ("skipping a defective call", lambda n: steps("[f(1, " + "'x', " * n + ")]")),
        ("nested quotes", lambda n: steps("[f(a='" + "it's " * n + "')]")),
    ],
)
def test_cost_per_delta_does_not_grow(label: str, make_output: Any) -> None:
    assert check_cost(make(), make_output) == [], label


# -- the machine around the reader ---------------------------------------------------------


class MarkedLines(CallStream):
    """One call per line between ``<calls>`` and ``</calls>``; the rest content."""

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser, markers=("<calls>", "</calls>"))
        self.reader: PyCallReader | None = None

    def on_marker(self, marker: str, start: int) -> None:
        if marker == "<calls>":
            self.hold(marker, start)
            self.reader = PyCallReader(self, lines=True)
        elif self.reader is not None:
            accepted = self.reader.accepted
            self.reader.end(marker=True)
            self.reader = None
            if accepted:
                self.frame(start, start + len(marker))
            else:
                self.content(marker, start)
        else:
            self.content(marker, start)

    def on_text(self, text: str, start: int) -> None:
        if self.reader is None:
            self.content(text, start)
            return
        taken = self.reader.feed(text, start)
        if taken < len(text):
            self.content(text[taken:], start + taken)

    def on_end(self) -> None:
        if self.reader is not None:
            self.reader.end()


class MarkedParser(Parser):
    name = "test_pycall_marked"
    markers = ("<calls>", "</calls>")

    def stream(self) -> MarkedLines:
        return MarkedLines(self)


def test_a_fast_path_never_skips_a_marker() -> None:
    """Inside a string the reader lets plain text skip it; a delta that holds a marker
    still reaches the family (the machine checks markers' first characters)."""
    text = "<calls>f(a='x y</calls>z"
    parser = MarkedParser()
    for steps in ([text], list(text), ["<calls>f(a='x", " y</calls>", "z"]):
        stream = parser.stream()
        deltas = [delta for step in steps for delta in stream.feed(step)] + stream.finish()
        parsed = assemble(deltas, events=stream.events)
        assert calls(parsed) == [("f", '{"a": "x y')]
        assert parsed.content == "z"
        assert EventName.MALFORMED_ARGUMENTS in names(parsed)  # the block ended inside it


def test_the_reader_names_held_text_the_family_held_first() -> None:
    """A block that turns out not to hold calls is content from its marker on, and the
    unparsed-markup span says so (the contract lets it be held until then)."""
    parsed = parse_everywhere(MarkedParser(), "<calls>not a call</calls>")
    assert parsed.content == "<calls>not a call</calls>"
    [event] = [e for e in parsed.events if e.name == EventName.UNPARSED_MARKUP]
    assert event.span is not None
    assert event.span.start == 0


def test_a_family_can_hand_over_a_name_it_held() -> None:
    """``held_name``: the family held the start of a line while deciding whether it is a
    call; the reader reads on from it, and ``every`` checks each call's name."""

    class Handed(ListStream):
        def on_text(self, text: str, start: int) -> None:
            if self.reader is None and not self.started:
                self.started = True
                self.hold(text[:3], start)
                self.reader = PyCallReader(
                    self,
                    lines=True,
                    first=lambda name: name.startswith("f"),
                    every=True,
                    held_name=text[:3],
                )
                text, start = text[3:], start + 3
            super().on_text(text, start)

    class HandedParser(ListParser):
        def stream(self) -> ListStream:
            return Handed(self)

    parsed = parse_everywhere(HandedParser(), "foo(a=1)\nfob()\ngoo()")
    assert calls(parsed) == [("foo", '{"a": 1}'), ("fob", "{}")]
    assert parsed.content == "goo()"
    with pytest.raises(ValueError, match="held_name"):
        PyCallReader(ListStream(make()), held_name="foo")


# -- the decoded arguments the reader hands to close_call ------------------------------


class _HandingStream(ListStream):
    """Records each decoded value the reader hands over, with the strict decode of the
    argument text it stands for."""

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        self.handed: list[tuple[object, object]] = []

    def close_call(self, *, check: bool = True, value: object = UNDECODED) -> None:
        if value is not UNDECODED:
            text = self.arguments_text()
            self.handed.append((value, json.loads(text, parse_constant=_no_constant)))
        super().close_call(check=check, value=value)


def _no_constant(name: str) -> object:
    raise ValueError(name)


class _HandingParser(Parser):
    name = "test_pycall_handing"

    def stream(self) -> _HandingStream:
        return _HandingStream(self)


_LONG_TEXT = "x = 1  # a line of code, long enough for the one-shot path\\n" * 12


@pytest.mark.parametrize(
    "arguments",
    [
        f'code="{_LONG_TEXT}"',
        f'code="{_LONG_TEXT}\\"quoted\\" \\\\u \\t\\b\\f\\r", n=-3, f=-0.0, ok=True, z=None',
        f'code="{_LONG_TEXT}\\\\/\\\\\\u00e9", g=1e300',
        f'code="{_LONG_TEXT}\\\'{_LONG_TEXT}"',  # \' is no JSON escape
        f'code="{_LONG_TEXT}\\/{_LONG_TEXT}"',  # \/ is JSON's, not Python's
        f'code="{_LONG_TEXT}\\u00e9\\ud83d\\ude00"',  # Python reads no surrogate pairs
        f'code="{_LONG_TEXT}\\x41\\101"',
        f'code="" "{_LONG_TEXT}"',
        f'code="{_LONG_TEXT}" "{_LONG_TEXT}"',
        f'code="{_LONG_TEXT}"a" b{_LONG_TEXT}"',  # a nested quote is text
        f'code="{_LONG_TEXT}", code="{_LONG_TEXT}again"',  # the first value is kept
        f'code="{_LONG_TEXT}", t=(1, 2), d={{1: "a"}}',
        f'code="{_LONG_TEXT}\\N{{BULLET}}", k=1',
    ],
)
def test_the_value_handed_to_close_call_is_the_strict_decode_of_the_text(arguments: str) -> None:
    stream = _HandingStream(_HandingParser(ParserContext()))
    source = f"[run({arguments})]"
    stream.feed(source)
    stream.finish()
    for value, decoded in stream.handed:
        assert value == decoded
        assert json.dumps(value) == json.dumps(decoded)  # -0.0 is not 0, True is not 1


def test_a_plain_long_string_hands_its_value() -> None:
    stream = _HandingStream(_HandingParser(ParserContext()))
    stream.feed(f'[run(code="{_LONG_TEXT}", n=2)]')
    stream.finish()
    assert stream.handed == [({"code": _LONG_TEXT.replace("\\n", "\n"), "n": 2},) * 2]


# -- long single-quoted strings read whole ---------------------------------------------
#
# The one-shot parse reads a long one-line ' string (Python's own repr of code) whole:
# Latin-1 text with Python's own decoder, other text by rewriting its quotes for JSON
# and handing it to JSON's string scanner; text neither reads falls back to the run.
# Expected values are Python's reading of the literal, whatever path the reader takes.

#: Code as ``repr`` writes it: \' and \\ and \n escapes, bare " quotes.
_CODE = repr('def f(x):\n    return "a" + \'b\' + "\\\\" + x  # it\'s "code"\n' * 8)[1:-1]


@pytest.mark.parametrize(
    "body",
    [
        _CODE,
        _CODE + "\\t\\r\\b\\f" + _CODE,
        _CODE + "\\\\",  # the closing quote after an escaped backslash
        "\\\\\\'" + _CODE + "\\\\\\\\\\'",  # odd and even runs before quotes
        _CODE + '\\"' + _CODE,  # \" means " in Python: escaped twice by the rewrite
        _CODE + '\\\\"' + _CODE,  # an escaped backslash, then a bare "
        _CODE + "\\x41\\101\\0" + _CODE,  # escapes JSON does not know
        _CODE + "\\u00e9\\U0001F600" + _CODE,  # \u: JSON's canonical text differs
        _CODE + "\\/" + _CODE,  # \/ is JSON's escape, Python keeps the backslash
        _CODE + "\\N{BULLET}\\a\\v\\d" + _CODE,
        _CODE + "\\\n" + _CODE,  # a line continuation
        _CODE + "\t" + _CODE,  # a raw tab (Python reads it, JSON does not)
        "\u00e9\U0001f600 " + _CODE,
        # Latin-1 beyond ASCII, raw and escaped; control characters JSON escapes.
        "\u00e9\\\u00e9\u00ff\x7f " + _CODE + "\\x7f\\x1f\\x00\\400\x01",
    ],
)
@pytest.mark.parametrize("nested", [False, True])
def test_a_long_single_quoted_string_reads_as_python_reads_it(body: str, nested: bool) -> None:
    source = f"'{body}'"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # \d keeps its backslash, as Python does
        value = ast.literal_eval(source)
    argument = f"[{source}]" if nested else source
    text = f"[f(s={argument}, n=1), g(t='{_CODE}')]"
    expected = json.dumps({"s": [value] if nested else value, "n": 1}, ensure_ascii=False)
    parsed = make().parse(text)
    assert calls(parsed) == [
        ("f", expected),
        ("g", json.dumps({"t": ast.literal_eval(f"'{_CODE}'")}, ensure_ascii=False)),
    ]
    assert parsed.events == ()
    assert parsed.content is None
    assert check_splits(make(), text, random_splits(text, 4, len(body))) == []


@pytest.mark.parametrize("body", [_CODE + "\\d\\q" + _CODE, "\u00e9\\\u00e9 " + _CODE])
def test_an_unknown_escape_reads_as_python_reads_it_where_warnings_are_ignored(
    body: str,
) -> None:
    # Python warns of an unknown escape and keeps its backslash. Where warnings are
    # errors (as in the test above, under this suite's settings) the reader takes another
    # way to the value; where they are ignored (Python's default) its decoder reads it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = ast.literal_eval(f"'{body}'")
        parsed = make().parse(f"[f(s='{body}')]")
    assert calls(parsed) == [("f", json.dumps({"s": value}, ensure_ascii=False))]
    assert parsed.events == ()


@pytest.mark.parametrize(
    ("text", "event"),
    [
        # A raw line break stops neither the recovery nor the text after it.
        (f"[f(a='{_CODE}\n{_CODE}')]", EventName.CONTROL_CHARACTER),
        # A quote followed by a word is text of the string (its own kind, nested).
        (f"[f(a='{_CODE}'word' {_CODE}')]", EventName.NESTED_QUOTE),
    ],
)
def test_a_long_single_quoted_string_with_a_recovery(text: str, event: str) -> None:
    body = text[len("[f(a='") : -len("')]")]
    expected = body.replace("\n", "\\n").replace("'word'", "\\'word\\'")
    parsed = make().parse(text)
    assert calls(parsed) == [("f", json.dumps({"a": ast.literal_eval(f"'{expected}'")}))]
    assert names(parsed) == {event}
    assert check_splits(make(), text, random_splits(text, 4, 5)) == []
    strict = make(strict=True).parse(text)
    assert EventName.MALFORMED_ARGUMENTS in names(strict)


def test_a_long_single_quoted_string_never_closed_is_truncated() -> None:
    text = f"[f(a='{_CODE}"
    parsed = make().parse(text)
    assert calls(parsed) == [("f", '{"a": ' + json.dumps(ast.literal_eval(f"'{_CODE}'"))[:-1])]
    assert names(parsed) == {EventName.TRUNCATED}


@pytest.mark.parametrize(
    ("escape", "content"),
    [
        ("\\ud800", "\\ud800'"),
        ("\\U0000d800", "\\U0000d800'"),
        ("\\U00110000", "\\U00110000'"),
        ("\\N{NO SUCH NAME}", "\\N{NO SUCH NAME}'"),
        ("\\x4", "\\x4'"),
    ],
)
def test_an_escape_that_names_no_json_character_is_a_defect_in_a_long_string(
    escape: str, content: str
) -> None:
    # Longer than a delta: the one-shot parse reads the string whole, or not at all.
    text = f"[f(a='{_CODE} {escape}'), g()]"
    parsed = make().parse(text)
    emitted = json.dumps(ast.literal_eval(f"'{_CODE} '"), ensure_ascii=False)[:-1]
    assert calls(parsed) == [("f", '{"a": ' + emitted), ("g", "{}")]
    assert parsed.content == content
    assert EventName.MALFORMED_ARGUMENTS in names(parsed)


def test_a_plain_long_single_quoted_string_hands_its_value() -> None:
    stream = _HandingStream(_HandingParser(ParserContext()))
    stream.feed(f"[run(code='{_CODE}', n=2)]")
    stream.finish()
    expected = {"code": ast.literal_eval(f"'{_CODE}'"), "n": 2}
    assert stream.handed == [(expected, expected)]


@pytest.mark.parametrize(
    "body",
    [
        _CODE,
        _CODE + '\\"' + _CODE,
        _CODE + "\\/\\u00e9" + _CODE,
        _CODE + "'a' " + _CODE,
        _CODE + "' '" + _CODE,  # implicitly joined
    ],
)
def test_a_long_single_quoted_value_handed_to_close_call_is_the_strict_decode(
    body: str,
) -> None:
    stream = _HandingStream(_HandingParser(ParserContext()))
    stream.feed(f"[run(code='{body}', k=1)]")
    stream.finish()
    for value, decoded in stream.handed:
        assert value == decoded
