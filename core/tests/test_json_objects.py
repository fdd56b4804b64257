"""What counts as a call's arguments (delta contract clause 3): a strict RFC 8259 JSON object,
every string encodable as UTF-8; and the small pieces of the marker scanner around it."""

from __future__ import annotations

import pytest

from toolcall.scanning import (
    JsonValueScanner,
    Marker,
    Markers,
    MarkerScanner,
    Text,
    json_object_problem,
)


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        '{"city": "Paris", "days": 3, "ratio": 0.5, "ok": true, "none": null}',
        '{"emoji": "\\ud83d\\ude00", "raw": "東京 🗼"}',  # a surrogate pair is one character
        '{"deep": ' + "[" * 200 + "]" * 200 + "}",
    ],
)
def test_json_objects_are_arguments(text: str) -> None:
    assert json_object_problem(text) is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"a": NaN}', "not JSON (NaN is not JSON)"),
        ('{"a": -Infinity}', "not JSON (-Infinity is not JSON)"),
        ('{"a": 1e999}', "not JSON (1e999 is out of a float's range)"),
        ('{"a": 1,}', "not JSON (Expecting property name enclosed in double quotes"),
        ("[1, 2]", "a JSON list, not an object"),
        ('"text"', "a JSON str, not an object"),
        ('{"a": "\ud800"}', "a lone surrogate in the text"),
        ('{"a": "\\ud800"}', "a lone surrogate escape in a string"),
        ('{"\\udc00": 1}', "a lone surrogate escape in a string"),
        ('{"a": [1, {"b": ["ok", "\\ud83d"]}]}', "a lone surrogate escape in a string"),
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply to read"),
    ],
)
def test_what_is_not_an_arguments_object(text: str, problem: str) -> None:
    found = json_object_problem(text)
    assert found is not None
    assert found.startswith(problem)


def test_an_escaped_pair_beside_a_lone_surrogate_is_still_a_defect() -> None:
    text = '{"ok": "\\ud83d\\ude00", "bad": ["\\udfff"]}'
    assert json_object_problem(text) == "a lone surrogate escape in a string"


@pytest.mark.parametrize("items", [3, 1000])
@pytest.mark.parametrize("decoded", [False, True])
@pytest.mark.parametrize("raw", ["", "\u00e9"])  # an ASCII text, or not
def test_a_lone_surrogate_escape_is_found_in_a_small_or_large_value(
    items: int, decoded: bool, raw: str
) -> None:
    """Whatever the size of the value (a few items are looked at, many searched for)."""
    import json

    # An escaped backslash, then an é
    sound = ", ".join([f'"\\\\u00e9 \\u00e9{raw}"'] * items)
    for last, problem in (
        ('"\\u00e9"', None),
        ('"\\udfff"', "a lone surrogate escape in a string"),
    ):
        text = f'{{"a": [{sound}, {last}]}}'
        value = json.loads(text) if decoded else None
        assert json_object_problem(text, *([value] if decoded else [])) == problem


def test_markers_need_a_marker() -> None:
    with pytest.raises(ValueError, match="at least one non-empty marker"):
        Markers(["", ""])
    markers = Markers(["<a>", "</a>"])
    assert "<a>" in markers
    assert "<b>" not in markers
    assert markers.longest == 4


def test_segments_know_where_they_end() -> None:
    scanner = MarkerScanner(["<call>"])
    segments = scanner.feed("hi <call>x")
    assert segments == [Text("hi ", 0), Marker("<call>", 3), Text("x", 9)]
    assert [segment.end for segment in segments] == [3, 9, 10]


def test_nothing_goes_by_unscanned_while_a_prefix_is_held() -> None:
    scanner = MarkerScanner(["<call>"])
    assert scanner.feed("text <ca") == [Text("text ", 0)]
    assert scanner.held == "<ca"
    with pytest.raises(RuntimeError, match="skip\\(\\) while a marker prefix is held"):
        scanner.skip(10)
    assert scanner.finish() == [Text("<ca", 5)]
    scanner.skip(4)
    assert scanner.position == 12
    assert scanner.feed("end") == [Text("end", 12)]


def test_a_value_whose_stop_marker_comes_first_is_empty() -> None:
    scanner = JsonValueScanner(Markers(["</call>"]))
    # Whitespace, then the stop marker before any value: the value is empty, the marker is
    # the rest.
    assert scanner.feed("  </call> after") == ("", "</call> after")
    assert scanner.done
    assert scanner.feed("more") == ("", "more")
