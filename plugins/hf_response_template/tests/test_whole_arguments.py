"""Arguments met whole (a one-shot parse): decoded once, where the body reader meets them.

The value the reader hands the stream must be the arguments the format gives (the JSON
the model wrote, decoded), and the parse must be the one a stream reads token by token
in small deltas, which never decodes a container whole: the same calls, argument text
and events, strict JSON or not.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hf_testing import parser, shipped

import toolcall.callstream
from toolcall.contract import check_splits
from toolcall.scanning import DECODE_AT, UNDECODED

HERMES = shipped("hermes")
_PAD = '"pad": "' + 'x\\n\\"y' * (DECODE_AT // 4) + '"'


def _output(arguments: str, *, name_first: bool = True) -> str:
    members = ['"name": "get_weather"', f'"arguments": {arguments}']
    if not name_first:
        members.reverse()
    return "Sure.\n<tool_call>\n{" + ", ".join(members) + "}\n</tool_call>"


def _checked_values(monkeypatch: pytest.MonkeyPatch, text: str) -> list[object]:
    """The values the stream's check at each call's close was handed, in a one-shot
    parse of ``text`` that agrees with a stream of 7-character deltas."""
    hf = parser(HERMES)
    pieces = [text[i : i + 7] for i in range(0, len(text), 7)]
    assert check_splits(hf, text, [pieces]) == []
    seen: list[object] = []
    check = toolcall.callstream.json_object_problem

    def recording(arguments: str, value: object = UNDECODED) -> str | None:
        seen.append(value)
        return check(arguments, value)

    monkeypatch.setattr(toolcall.callstream, "json_object_problem", recording)
    hf.parse(text)
    return seen


@pytest.mark.parametrize(
    ("body", "strict"),
    [
        ('"city": "tab\\t quote\\" slash\\/ \\u00e9 \\\\"}', True),
        ('"city": "pair \\ud83d\\ude00", "t": [true, null, -1.5e3, {"a": {}}]}', True),
        ('"city": "lone \\ud800 escape"}', True),  # JSON; the policy's check rejects it
        ('"k": 1, "k": 2}', True),
        ('"city": "invalid \\x41 escape"}', False),
        ('"n": NaN}', False),
        ('"n": 1e999}', False),
        ('"city": "raw\tcontrol"}', False),
        ('"city": "unclosed}', False),
    ],
)
def test_arguments_met_whole_are_decoded_once_and_read_as_in_a_stream(
    monkeypatch: pytest.MonkeyPatch, body: str, strict: bool
) -> None:
    arguments = "{" + _PAD + ", " + body
    values = _checked_values(monkeypatch, _output(arguments))
    if strict:
        assert values == [json.loads(arguments)]
    else:
        assert all(value is UNDECODED for value in values)


def test_the_value_handed_on_is_the_arguments_the_model_wrote(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected: dict[str, Any] = {"city": "Paris " * DECODE_AT, "days": 3, "metric": True}
    text = _output(json.dumps(expected, indent=1))
    values = _checked_values(monkeypatch, text)
    assert values == [expected]
    parsed = parser(HERMES).parse(text)
    assert [json.loads(call.arguments) for call in parsed.tool_calls] == [expected]
    assert parsed.events == ()


def test_arguments_that_are_no_object_are_handed_on_as_they_decode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    arguments = "[" + ", ".join(['"Paris"'] * DECODE_AT) + "]"
    values = _checked_values(monkeypatch, _output(arguments))
    assert values == [["Paris"] * DECODE_AT]
    parsed = parser(HERMES).parse(_output(arguments))
    assert [str(event.name) for event in parsed.events] == ["malformed-arguments"]


def test_arguments_before_the_name_are_checked_from_their_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The text arrives before the call is committed: it is decoded at the close.
    arguments = "{" + _PAD + "}"
    values = _checked_values(monkeypatch, _output(arguments, name_first=False))
    assert values == [UNDECODED]
