"""The JSON call-object reader: what it reads, its recoveries, and split invariance."""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall.jsoncall import CallObjectReader, ItemKind, ReaderState, ValueScanner
from toolcall.scanning import DECODE_AT, UNDECODED

KEYS = ("parameters", "arguments")


def split_at(text: str, cuts: Sequence[int]) -> list[str]:
    points = sorted({min(max(c, 0), len(text)) for c in cuts})
    pieces, last = [], 0
    for point in [*points, len(text)]:
        pieces.append(text[last:point])
        last = point
    return pieces


def read(
    text: str, *, recover: bool = True, pieces: Sequence[str] | None = None
) -> tuple[list[tuple[str, str]], str, ReaderState, str]:
    """Feed ``text`` (in ``pieces``): the items but arguments, the arguments, the final
    state, and the text after the object."""
    reader = CallObjectReader(KEYS, recover=recover)
    items: list[tuple[str, str]] = []
    arguments: list[str] = []
    rest = ""
    for piece in pieces if pieces is not None else [text]:
        if reader.done:
            rest += piece
            continue
        for item in reader.feed(piece):
            if item.kind is ItemKind.ARGUMENTS:
                arguments.append(item.value)
            elif item.kind not in (ItemKind.MEMBER, ItemKind.VALUE):
                items.append((item.kind.value, item.value))
            if item.kind in (ItemKind.CLOSE, ItemKind.BREAK):
                rest += piece[item.end :]
    if not reader.done:
        arguments += [item.value for item in reader.finish()]
    return items, "".join(arguments), reader.state, rest


def test_a_call_object_name_first() -> None:
    items, arguments, state, rest = read('{"name": "f", "parameters": {"a": [1, "}"]}} tail')
    assert items == [("key", "name"), ("name", "f"), ("key", "parameters"), ("close", "")]
    assert arguments == '{"a": [1, "}"]}'
    assert state is ReaderState.CLOSED
    assert rest == " tail"


def test_arguments_before_the_name_and_either_key() -> None:
    items, arguments, _, _ = read('{"arguments": {"x": 1},"name":"g"}')
    assert ("name", "g") in items
    assert arguments == '{"x": 1}'


def test_other_members_are_ignored_and_recorded() -> None:
    items, arguments, _, _ = read(
        '{"type": "function", "name": "f", "parameters": {}, "parameters": {"b": 2}, "id": 7}'
    )
    events = [value for kind, value in items if kind == "event"]
    assert events == ["ignored-member", "duplicate-key", "ignored-member"]
    assert arguments == "{}"


def test_the_model_text_is_kept_byte_for_byte() -> None:
    text = '{"name": "f", "parameters": {"a":1,  "b" :"x\\ny\\u00e9"}}'
    _, arguments, _, _ = read(text)
    assert arguments == '{"a":1,  "b" :"x\\ny\\u00e9"}'


def test_python_literals_are_written_as_json() -> None:
    text = "{'name': 'f', 'parameters': {'a': True, 'b': None, 'c': 'it\\'s \"x\"', 'd': [False]}}"
    items, arguments, _, _ = read(text)
    assert ("name", "f") in items
    assert ("event", "python-literal") in items
    expected = ast.literal_eval(text)["parameters"]
    assert json.loads(arguments) == expected


def test_python_escapes() -> None:
    _, arguments, _, _ = read("{'name': 'f', 'parameters': {'a': 'x\\x41\\q\\n'}}")
    assert json.loads(arguments) == {"a": "xA\\q\n"}


def test_strict_reading_has_no_python() -> None:
    items, _, state, _ = read("{'name': 'f'}", recover=False)
    assert items == [("break", "")]
    assert state is ReaderState.BROKEN
    _, arguments, _, _ = read('{"name": "f", "parameters": {"a": True}}', recover=False)
    assert arguments == '{"a": True}'


def test_arguments_given_as_a_string() -> None:
    items, arguments, _, _ = read('{"name": "f", "parameters": "{\\"a\\": 1}"}')
    assert ("event", "arguments-string") in items
    assert arguments == '{"a": 1}'
    items, arguments, _, _ = read('{"name": "f", "parameters": "Paris"}')
    assert ("event", "arguments-string") not in items
    assert arguments == '"Paris"'
    _, arguments, _, _ = read('{"name": "f", "parameters": "{\\"a\\": 1}"}', recover=False)
    assert arguments == '"{\\"a\\": 1}"'


def test_the_function_envelope() -> None:
    text = '{"type": "function", "function": {"name": "g", "parameters": {"a": 1}}}'
    items, arguments, state, _ = read(text)
    assert ("event", "function-envelope") in items
    assert ("name", "g") in items
    assert arguments == '{"a": 1}'
    assert state is ReaderState.CLOSED
    items, _, _, _ = read(text, recover=False)
    assert ("name", "g") not in items


@pytest.mark.parametrize(
    "text",
    ['{"name": 5}', '{"name": ""}', '{"name": "f" "x"}', "{'a': 1}"],
)
def test_unreadable_objects_break(text: str) -> None:
    items, _, state, _ = read(text, recover=False)
    assert state is ReaderState.BROKEN
    assert items[-1][0] == "break"


@pytest.mark.parametrize("recover", [True, False])
@pytest.mark.parametrize(
    "text",
    ['{"name": "\\ud800", "parameters": {}}', '{"parameters": {}, "name": "f\\udfff"}'],
)
def test_a_name_utf8_cannot_write_breaks_and_says_why(text: str, recover: bool) -> None:
    # A lone surrogate escape decodes to a name no response can carry (DESIGN §6: no
    # readable name, no call); the break says so, whichever way the text is split.
    for cut in range(len(text) + 1):
        reader = CallObjectReader(KEYS, recover=recover)
        found = [item for piece in split_at(text, [cut]) for item in reader.feed(piece)]
        assert reader.state is ReaderState.BROKEN
        assert reader.name is None
        assert found[-1].kind is ItemKind.BREAK
        assert "surrogate" in found[-1].detail
        assert ItemKind.NAME not in [item.kind for item in found]


def test_a_surrogate_pair_escape_is_one_name_character() -> None:
    items, _, state, _ = read('{"name": "f\\ud83d\\ude00", "parameters": {}}')
    assert ("name", "f\N{GRINNING FACE}") in items
    assert state is ReaderState.CLOSED


def test_cut_off_arguments_are_kept_as_written() -> None:
    _, arguments, state, _ = read('{"name": "f", "parameters": {"a": "x; ')
    assert arguments == '{"a": "x; '
    assert state is ReaderState.ARGUMENTS


def test_value_scanner_holds_trailing_whitespace() -> None:
    scanner = ValueScanner()
    assert scanner.feed('{"a": 1,  ') == ('{"a": 1,', "")
    assert scanner.feed('"b": 2}') == ('  "b": 2}', "")
    assert scanner.done


def test_value_scanner_cost_is_linear_in_whitespace() -> None:
    scanner = ValueScanner()
    scanner.feed("{")
    for _ in range(10_000):
        assert scanner.feed(" ") == ("", "")
    assert scanner.feed("}") == (" " * 10_000 + "}", "")


_CALLS = [
    '{"name": "get_weather", "parameters": {"city": "Paris", "days": [1, 2]}}',
    '{"type": "function", "name": "f", "arguments": {"q": "a; b \\" } {"}} ',
    "{'name': 'f', 'parameters': {'a': True, 'b': 'x\\'y', 'c': \"q'\"}}",
    '{"name": "f", "parameters": "{\\"a\\": [1, {}]}"}',
    '{"type": "function", "function": {"name": "g", "parameters": {"x": null}}}',
    '{"parameters": {"a": {"b": {"c": [true, false, null]}}}, "name": "h"}',
    '{"name": "f", "parameters": {"a": "x\\x41", "b": 1e5, "c": -0.5}}',
    '{"name": "cut", "parameters": {"a": "unfinished',
]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(_CALLS),
    st.lists(st.integers(min_value=0, max_value=120), max_size=12),
    st.booleans(),
)
def test_every_split_reads_alike(text: str, cuts: list[int], recover: bool) -> None:
    assert read(text, recover=recover, pieces=split_at(text, cuts)) == read(text, recover=recover)


def test_after_the_name_a_member_it_cannot_read_is_skipped() -> None:
    items, arguments, state, _ = read('{"name": "f", "f", "parameters": {"a": 1}}')
    assert ("event", "ignored-member") in items
    assert arguments == '{"a": 1}'
    assert state is ReaderState.CLOSED
    items, _, state, _ = read('{"name": "f", "\\q": 1, "parameters": {}}', recover=False)
    assert ("event", "ignored-member") in items
    assert state is ReaderState.CLOSED
    # Before the name, the object is not a call: it breaks.
    _, _, state, _ = read('{"f", "name": "f"}')
    assert state is ReaderState.BROKEN


def test_members_and_values_say_where_they_start() -> None:
    text = '{"name": "f", "parameters": {}}'
    reader = CallObjectReader(KEYS, recover=True)
    starts = [
        (item.kind.value, item.end)
        for item in reader.feed(text)
        if item.kind in (ItemKind.MEMBER, ItemKind.VALUE)
    ]
    assert starts == [
        ("member", text.index('"name"')),
        ("value", text.index('"f"')),
        ("member", text.index('"parameters"')),
        ("value", text.index("{}")),
    ]


@pytest.mark.parametrize("recover", [True, False])
@pytest.mark.parametrize(
    "escape", ['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u00e9"]
)
def test_a_json_escape_in_a_double_quoted_argument_string_is_argument_text_as_written(
    recover: bool, escape: str
) -> None:
    reader = CallObjectReader(KEYS, recover=recover)
    reader.feed('{"name": "f", "arguments": {"a": "x')
    assert reader.plain_escapes
    items = reader.feed(escape)
    assert [(item.kind, item.value) for item in items] == [(ItemKind.ARGUMENTS, escape)]
    assert reader.plain_escapes


def test_escapes_in_a_single_quoted_string_are_translated_so_not_plain() -> None:
    reader = CallObjectReader(KEYS, recover=True)
    reader.feed('{"name": "f", "arguments": {"a": \'x')
    assert reader.plain_arguments
    assert not reader.plain_escapes


# -- a value met whole (one-shot) against the same value read piecewise --------------------

_PAD = '"pad": "' + 'x\\n\\"y' * (DECODE_AT // 4) + '"'


@pytest.mark.parametrize(
    ("body", "strict"),
    [
        ('"s": "tab\\t quote\\" slash\\/ \\u00e9 \\\\"}', True),
        ('"s": "pair \\ud83d\\ude00", "t": [true, null, -1.5e3]}', True),
        ('"s": "lone \\ud800 escape"}', True),  # JSON; the policy check is the stream's
        ('"s": "invalid \\x41 escape"}', False),
        ('"n": NaN}', False),
        ('"n": 1e999}', False),
        ('"k": 1, "k": 2}', True),
        ('"s": "raw\tcontrol"}', False),
        ("'s': 'python', \"b\": True}", False),
        ('"s": "cut off \\', False),
    ],
)
@pytest.mark.parametrize("recover", [True, False])
def test_arguments_decoded_whole_read_as_when_read_piecewise(
    body: str, strict: bool, recover: bool
) -> None:
    arguments = "{" + _PAD + ", " + body
    text = '{"name": "f", "arguments": ' + arguments + ', "x": 1} tail'
    whole = read(text, recover=recover)
    pieces = [text[i : i + 7] for i in range(0, len(text), 7)]
    assert whole == read(text, recover=recover, pieces=pieces)
    reader = CallObjectReader(KEYS, recover=recover)
    decoded = [item.decoded for item in reader.feed(text) if item.kind is ItemKind.ARGUMENTS]
    if strict:
        assert decoded == [json.loads(arguments)]
    else:
        assert all(value is UNDECODED for value in decoded)
