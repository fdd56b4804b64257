"""The shared streaming machinery: unit tests and split-invariance properties."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from toolcall.scanning import (
    DECODE_AT,
    UNDECODED,
    ContentGate,
    Found,
    JsonEmitter,
    JsonValueScanner,
    Marker,
    Markers,
    MarkerScanner,
    Text,
    json_object_problem,
    name_problem,
)

MARKERS = ("<tool_call>", "</tool_call>", "<arg_key>", "[TOOL_CALLS]")


def split_at(text: str, cuts: Sequence[int]) -> list[str]:
    points = sorted({min(max(c, 0), len(text)) for c in cuts})
    pieces, last = [], 0
    for point in [*points, len(text)]:
        pieces.append(text[last:point])
        last = point
    return pieces


def reference_segments(text: str, markers: Sequence[str]) -> list[tuple[str, str, int]]:
    """Leftmost, longest marker first: written with str.startswith, not regex."""
    ordered = sorted(markers, key=len, reverse=True)
    out: list[tuple[str, str, int]] = []
    buffer, buffer_start, i = "", 0, 0
    while i < len(text):
        hit = next((m for m in ordered if text.startswith(m, i)), None)
        if hit is None:
            if not buffer:
                buffer_start = i
            buffer += text[i]
            i += 1
            continue
        if buffer:
            out.append(("text", buffer, buffer_start))
            buffer = ""
        out.append(("marker", hit, i))
        i += len(hit)
    if buffer:
        out.append(("text", buffer, buffer_start))
    return out


def scan(pieces: Sequence[str], markers: Sequence[str]) -> list[tuple[str, str, int]]:
    scanner = MarkerScanner(markers)
    segments: list[Text | Marker] = []
    for piece in pieces:
        segments += scanner.feed(piece)
        assert len(scanner.held) < max(map(len, markers))
        assert any(m.startswith(scanner.held) for m in markers)
    segments += scanner.finish()
    merged: list[tuple[str, str, int]] = []
    for segment in segments:
        if isinstance(segment, Marker):
            merged.append(("marker", segment.marker, segment.start))
        elif merged and merged[-1][0] == "text":
            kind, text, start = merged[-1]
            assert start + len(text) == segment.start
            merged[-1] = (kind, text + segment.text, start)
        else:
            merged.append(("text", segment.text, segment.start))
    return merged


# Texts full of marker fragments: markers, their prefixes and suffixes, and noise.
FRAGMENTS = st.sampled_from(
    [
        *MARKERS,
        *(m[:k] for m in MARKERS for k in range(1, len(m))),
        *(m[k:] for m in MARKERS for k in range(1, len(m))),
        "<",
        ">",
        "/",
        "a",
        " ",
        "\n",
        '"',
        "東京",
        "🗼",
    ]
)
MARKER_TEXTS = st.lists(FRAGMENTS, max_size=30).map("".join)


@given(text=MARKER_TEXTS, cuts=st.lists(st.integers(0, 400), max_size=12))
@settings(max_examples=400)
def test_marker_scanner_is_split_invariant(text: str, cuts: list[int]) -> None:
    assert scan(split_at(text, cuts), MARKERS) == reference_segments(text, MARKERS)


@given(text=MARKER_TEXTS)
def test_marker_scanner_one_character_at_a_time(text: str) -> None:
    assert scan(list(text), MARKERS) == reference_segments(text, MARKERS)


def test_marker_scanner_holds_back_only_a_possible_prefix() -> None:
    scanner = MarkerScanner(["<tool_call>"])
    assert scanner.feed("Let me check <to") == [Text("Let me check ", 0)]
    assert scanner.held == "<to"
    assert scanner.feed("ol") == []
    assert scanner.feed("s> no") == [Text("<tools> no", 13)]
    assert scanner.finish() == []


def test_marker_scanner_releases_an_unfinished_prefix_at_finish() -> None:
    scanner = MarkerScanner(["<tool_call>"])
    assert scanner.feed("x <tool_cal") == [Text("x ", 0)]
    assert scanner.finish() == [Text("<tool_cal", 2)]


def test_markers_reports_partial_and_complete_matches() -> None:
    markers = Markers(["</tool_call>", "<tool_call>"])
    assert markers.find("ab</tool_call>cd").marker == "</tool_call>"  # type: ignore[union-attr]
    partial = markers.find("ab</tool")
    assert partial is not None
    assert partial.partial
    assert partial.start == 2
    assert markers.find("abc") is None
    with pytest.raises(ValueError, match="at least one"):
        Markers([""])


# -- JSON values -------------------------------------------------------------------

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.lists(
        st.sampled_from([*'ab "\\/\n\t{}[],:<>東🗼', "</tool_call>", "\\u00e9"]), max_size=8
    ).map("".join)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)
CONTAINERS = st.lists(JSON_VALUES, max_size=4) | st.dictionaries(
    st.text(max_size=5), JSON_VALUES, max_size=4
)


def scan_value(
    pieces: Sequence[str], stop: Markers | None = None
) -> tuple[str, str, JsonValueScanner]:
    scanner = JsonValueScanner(stop)
    value, rest = [], []
    for piece in pieces:
        if scanner.done:
            rest.append(piece)
            continue
        part, after = scanner.feed(piece)
        value.append(part)
        rest.append(after)
    value.append(scanner.finish())
    return "".join(value), "".join(rest), scanner


@given(
    value=CONTAINERS,
    indent=st.sampled_from([None, 0, 2]),
    lead=st.sampled_from(["", " ", "\n  "]),
    tail=st.sampled_from(["", "}", "\n</tool_call>", ', "x": 1}']),
    cuts=st.lists(st.integers(0, 600), max_size=10),
)
@settings(max_examples=400)
def test_json_value_scanner_streams_the_raw_value_for_every_split(
    value: object, indent: int | None, lead: str, tail: str, cuts: list[int]
) -> None:
    raw = json.dumps(value, indent=indent, ensure_ascii=bool(cuts and cuts[0] % 2))
    text = lead + raw + tail
    got, rest, scanner = scan_value(split_at(text, cuts), Markers(["</tool_call>"]))
    assert scanner.done
    assert not scanner.stopped
    assert got == raw
    assert rest == tail
    assert json.loads(got) == value


@given(value=st.text(max_size=20), cuts=st.lists(st.integers(0, 100), max_size=6))
def test_json_string_values_end_at_their_closing_quote(value: str, cuts: list[int]) -> None:
    raw = json.dumps(value, ensure_ascii=False)
    got, rest, scanner = scan_value(split_at(raw + ", 1", cuts))
    assert (got, rest) == (raw, ", 1")
    assert scanner.is_string


@given(cuts=st.lists(st.integers(0, 40), max_size=6))
def test_a_scalar_ends_at_a_delimiter_or_at_finish(cuts: list[int]) -> None:
    assert scan_value(split_at("  -12.5e3}", cuts))[:2] == ("-12.5e3", "}")
    got, rest, scanner = scan_value(split_at("true", cuts))
    assert (got, rest, scanner.done) == ("true", "", True)


@given(cuts=st.lists(st.integers(0, 60), max_size=8))
def test_an_unclosed_value_stops_at_a_marker_outside_strings(cuts: list[int]) -> None:
    text = '{"a": [1, "x</tool_call>y"  \n</tool_call> after'
    got, rest, scanner = scan_value(split_at(text, cuts), Markers(["</tool_call>"]))
    assert scanner.stopped
    assert got == '{"a": [1, "x</tool_call>y"'
    assert rest == "</tool_call> after"


def string_end_reference(text: str) -> int:
    """Where a string that starts at ``text[0]`` ends, one character at a time: a
    backslash takes the next character whatever it is (-1: it does not end)."""
    escape = False
    for at, char in enumerate(text[1:], 1):
        if escape:
            escape = False
        elif char == "\\":
            escape = True
        elif char == '"':
            return at + 1
    return -1


def scan_string_lane(pieces: Sequence[str]) -> tuple[str, str, JsonValueScanner]:
    """Like :func:`scan_value`, but each piece goes to ``string_text`` first (the
    lane a stream takes for text inside a string) and to ``feed`` only if refused."""
    scanner = JsonValueScanner()
    value, rest = [], []
    for piece in pieces:
        if scanner.done:
            rest.append(piece)
        elif scanner.string_text(piece):
            value.append(piece)
        else:
            part, after = scanner.feed(piece)
            value.append(part)
            rest.append(after)
    return "".join(value), "".join(rest), scanner


STRING_BODIES = st.lists(
    st.sampled_from(["a", "\\", '"', '\\"', "\\q", "\\u12", "\\n", "東"]), max_size=30
).map("".join)


@given(body=STRING_BODIES, cuts=st.lists(st.integers(0, 60), max_size=8))
@example(body='a\\\\"', cuts=[3, 4])  # an escaped backslash cut in two, then the end
@example(body='a\\\\\\"b"', cuts=[3, 4, 5])  # ... and an escaped quote
@settings(max_examples=500)
def test_a_string_ends_where_escapes_say_for_every_split(body: str, cuts: list[int]) -> None:
    # Escapes JSON does not know (\\q), runs of backslashes and escaped quotes: the
    # string's end does not depend on where the text is cut, nor on the lane taken.
    text = '"' + body
    end = string_end_reference(text)
    for scan in (scan_value, scan_string_lane):
        got, rest, scanner = scan(split_at(text, cuts))
        if end < 0:
            assert not scanner.done
            assert (got, rest) == (text, "")
        else:
            assert scanner.done
            assert (got, rest) == (text[:end], text[end:])


def test_a_container_met_whole_is_decoded_once() -> None:
    value = {"a": ["x" * DECODE_AT, 1.5, None], "b": {"c": True}}
    text = json.dumps(value)
    got, rest, scanner = scan_value([text + " tail"])
    assert (got, rest) == (text, " tail")
    assert scanner.value == value
    assert json_object_problem(text, scanner.value) is None
    # Strict JSON only: NaN is not decoded (the scan finds its end all the same).
    bad = text[:-1] + ', "d": NaN}'
    got, rest, scanner = scan_value([bad])
    assert (got, scanner.value) == (bad, UNDECODED)
    assert json_object_problem(bad) is not None
    # Cut into pieces, nothing is decoded.
    assert scan_value(split_at(text, [10, 500]))[2].value is UNDECODED


def test_an_incomplete_value_is_not_done() -> None:
    got, rest, scanner = scan_value(['{"a": "b', 'c\\"', ", [1"])
    assert not scanner.done
    assert got == '{"a": "bc\\", [1'
    assert rest == ""


# -- JSON emitter ------------------------------------------------------------------

OBJECTS = st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=5)


@given(obj=OBJECTS, cuts=st.lists(st.integers(0, 20), max_size=4))
def test_json_emitter_writes_the_canonical_text(obj: dict[str, object], cuts: list[int]) -> None:
    emitter = JsonEmitter()
    pieces = [emitter.open()]
    for key, value in obj.items():
        pieces.append(emitter.key(key))
        if isinstance(value, str):
            pieces.append(emitter.string_start())
            pieces += [emitter.string_chunk(part) for part in split_at(value, cuts)]
            pieces.append(emitter.string_end())
        else:
            pieces.append(emitter.value(value))
    pieces.append(emitter.close())
    assert "".join(pieces) == json.dumps(obj, ensure_ascii=False)


# -- content gate ------------------------------------------------------------------


def gate_run(events: Sequence[str | None]) -> str:
    """``None`` is a call boundary; strings are content text."""
    gate, out = ContentGate(), []
    for event in events:
        if event is None:
            gate.boundary()
        else:
            out.append(gate.text(event))
    gate.finish()
    return "".join(out)


def test_content_gate_drops_whitespace_that_only_frames_calls() -> None:
    assert gate_run(["A\n", None, "\nB\n"]) == "A\nB"
    assert gate_run(["\n\n", None, "\n", None, "\n"]) == ""
    assert gate_run(["  Hello", " world  "]) == "Hello world"
    assert gate_run([None, "\n\nSure."]) == "Sure."


@given(
    parts=st.lists(st.sampled_from(["a", " ", "\n", "b c", None]), max_size=12),
    cuts=st.lists(st.integers(0, 10), max_size=4),
)
def test_content_gate_is_split_invariant(parts: list[str | None], cuts: list[int]) -> None:
    whole: list[str | None] = []
    split: list[str | None] = []
    for part in parts:
        if part is None:
            whole.append(None)
            split.append(None)
        else:
            whole.append(part)
            split += split_at(part, cuts)
    assert gate_run(whole) == gate_run(split)


OVERLAPPING = ("abcd", "bc", "c", "[TOOL_CALLS]", "[ARGS]")
OVERLAP_TEXTS = st.lists(
    st.sampled_from(["a", "b", "c", "d", "x", "[", "]", "[TOOL_", "CALLS]", "[ARGS]", "[ARG"]),
    max_size=20,
).map("".join)


def reference_find(text: str, markers: Sequence[str], pos: int, end: int) -> Found | None:
    """The leftmost complete marker (the longest at its offset) in ``text[pos:end]``,
    else the leftmost proper marker prefix that reaches ``end``."""
    ordered = sorted(markers, key=len, reverse=True)
    for at in range(pos, end):
        hit = next((m for m in ordered if text.startswith(m, at, end)), None)
        if hit is not None:
            return Found(at, at + len(hit), hit)
    for at in range(pos, end):
        if any(m.startswith(text[at:end]) for m in markers):
            return Found(at, end, None)
    return None


@given(text=OVERLAP_TEXTS, pos=st.integers(0, 60), length=st.integers(0, 60))
@settings(max_examples=600)
def test_markers_find_the_leftmost_complete_marker_else_a_prefix(
    text: str, pos: int, length: int
) -> None:
    pos = min(pos, len(text))
    end = min(pos + length, len(text))
    found = Markers(OVERLAPPING).find(text, pos, end)
    assert found == reference_find(text, OVERLAPPING, pos, end)


@pytest.mark.parametrize("text", ["plain", 'q"b\\s\n\t\r', "del\x7f", "ctl\x00\x1f", "é東🗼", ""])
def test_a_string_chunk_is_what_json_dumps_writes(text: str) -> None:
    assert JsonEmitter.string_chunk(text) == json.dumps(text, ensure_ascii=False)[1:-1]


@pytest.mark.parametrize(
    ("escaped", "readable"),
    [
        ('"get_time"', True),
        ('"caf\\u00e9"', True),
        ('"\\ud83d\\ude00"', True),  # a surrogate pair: one character
        ('"\\ud800"', False),  # a lone high surrogate
        ('"f\\udc00"', False),  # a lone low surrogate
        ('"\\ude00\\ud83d"', False),  # a pair in the wrong order is two lone ones
        ('""', False),
    ],
)
def test_a_name_is_readable_when_it_is_not_empty_and_utf8_can_write_it(
    escaped: str, readable: bool
) -> None:
    name = json.loads(escaped)
    assert (name_problem(name) is None) is readable
    if readable:
        name.encode("utf-8")


def test_a_name_that_is_not_a_string_has_a_problem() -> None:
    assert name_problem(None) is not None
    assert name_problem(5) is not None
