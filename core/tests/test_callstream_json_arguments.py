"""``CallStream.json_arguments``: a call's JSON value streamed as the model wrote it, with the
fast path inside plain strings, and what follows the value handed back."""

from __future__ import annotations

from typing import Any

import pytest
from json_probe import JsonProbe, JsonProbeStream

from toolcall import EventName, ParserContext, assemble
from toolcall.scanning import DECODE_AT


def test_the_value_streams_and_what_follows_is_content() -> None:
    stream = JsonProbe(ParserContext()).stream()
    steps = ['Hi <a>{"k": "', "long ", "string ", "body", '"} ', "and after"]
    deltas = [delta for step in steps for delta in stream.feed(step)] + stream.finish()
    parsed = assemble(deltas, events=stream.events, framing=stream.framing)
    assert parsed.content == "Hi and after"
    calls = [(c.name, c.arguments) for c in parsed.tool_calls]
    assert calls == [("f", '{"k": "long string body"}')]
    # Inside the plain string, "long ", "string " and "body" needed no hook.
    assert isinstance(stream, JsonProbeStream)
    assert stream.hooks == len(steps) - 2


def _streamed(steps: list[str]) -> tuple[object, int]:
    stream = JsonProbe(ParserContext()).stream()
    deltas = [delta for step in steps for delta in stream.feed(step)] + stream.finish()
    assert isinstance(stream, JsonProbeStream)
    parsed = assemble(deltas, events=stream.events, framing=stream.framing)
    return parsed, stream.hooks


def _seen(parsed: object) -> tuple[object, ...]:
    """A parse without its call ids (fresh for each parse)."""
    calls = [(c.name, c.arguments) for c in parsed.tool_calls]  # type: ignore[attr-defined]
    return (parsed.content, calls, parsed.events, parsed.framing)  # type: ignore[attr-defined]


def test_an_escape_split_between_deltas_stays_on_the_fast_path() -> None:
    # "\" then "n": the commonest pair of tokens in code; '\"' is an escaped quote.
    steps = ['<a>{"k": "a', "\\", "n b\\", '"c', "\\\\", " d", '"} after']
    parsed, hooks = _streamed(steps)
    calls = [(c.name, c.arguments) for c in parsed.tool_calls]  # type: ignore[attr-defined]
    assert calls == [("f", '{"k": "a\\n b\\"c\\\\ d"}')]
    assert parsed.content == "after"  # type: ignore[attr-defined]
    # Only the first delta (the marker) and the last (the closing quote) need a hook.
    assert hooks == 2


def test_a_delimiter_after_a_backslash_still_stops_the_fast_path() -> None:
    # The marker's first character is found escaped or not: here it starts a marker.
    _, hooks = _streamed(['<a>{"k": "a', "\\<a", '>"}'])
    assert hooks == 3


def test_streamed_as_characters_or_at_once_the_parse_is_the_same() -> None:
    outputs = [
        '<a>{"k": "x\\\\\\"y\\n"} tail',
        '<a>{"k": "ends in a backslash\\',
        '<a>{"k": "\\u00e9\\\\", "j": "\\<a>"} z',
        "no call \\ here",
    ]
    for output in outputs:
        whole, _ = _streamed([output])
        for size in (1, 2, 3):
            pieces = [output[i : i + size] for i in range(0, len(output), size)]
            parsed, _ = _streamed(pieces)
            assert _seen(parsed) == _seen(whole), (output, size)


# -- a value met whole (one-shot) against the same value read piecewise --------------------

#: Padding that makes a value long enough to be decoded whole when it comes in one chunk.
_PAD = '"pad": "' + 'x\\n\\"y' * (DECODE_AT // 4) + '"'
#: Argument bodies and whether DESIGN §4.3 calls them a strict JSON object.
_BODIES = [
    ('{"s": "tab\\t quote\\" slash\\/ \\u00e9 \\\\"}', True),
    ('{"s": "pair \\ud83d\\ude00"}', True),
    ('{"s": "lone \\ud800 escape"}', False),
    ('{"s": "invalid \\x41 escape"}', False),
    ('{"n": NaN}', False),
    ('{"n": -Infinity}', False),
    ('{"n": 1e999}', False),
    ('{"k": 1, "k": 2}', True),
    ('{"s": "raw\tcontrol"}', False),
    ("{'s': 'python'}", False),
    ("[1, 2]", False),
]


def _run(text: str, pieces: int) -> tuple[Any, ...]:
    stream = JsonProbe(ParserContext()).stream()
    size = max(1, -(-len(text) // pieces))
    steps = [text[i : i + size] for i in range(0, len(text), size)]
    deltas = [delta for step in steps for delta in stream.feed(step)] + stream.finish()
    parsed = assemble(deltas, events=stream.events, framing=stream.framing)
    calls = [(call.name, call.arguments) for call in parsed.tool_calls]
    return parsed.content, calls, parsed.events, parsed.framing


@pytest.mark.parametrize(("body", "strict"), _BODIES)
def test_a_value_decoded_whole_reads_as_one_read_piecewise(body: str, strict: bool) -> None:
    text = "Hi <a>" + body[0] + _PAD + ", " + body[1:] + " after"
    whole = _run(text, 1)
    assert whole == _run(text, 97)
    content, calls, events, _ = whole
    assert content == "Hi after"
    assert calls == [("f", body[0] + _PAD + ", " + body[1:])]
    malformed = [event for event in events if event.name == EventName.MALFORMED_ARGUMENTS]
    assert bool(malformed) is not strict


def test_a_value_cut_off_reads_as_one_read_piecewise() -> None:
    text = "<a>{" + _PAD + ', "s": "unfinished \\'
    whole = _run(text, 1)
    assert whole == _run(text, 97)
    assert whole[1] == [("f", text[3:])]
