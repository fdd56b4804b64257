"""What the stream emits, and when (plugins/hermes/README.md, "What the stream emits").

Each test feeds an output piece by piece and states, per piece, exactly what that feed
must release: the rules, not a recording of the parser. The last test throws random
outputs at the stream and holds it to the delta contract.
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_testing import START, feed_all, make_parser, outside_framing, shape
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolcall.contract import check_stream


def check(steps_and_releases: Sequence[tuple[str, list[tuple[str, object]]]], **kw: object) -> None:
    parser = make_parser(**kw)  # type: ignore[arg-type]
    steps = [step for step, _ in steps_and_releases]
    per_step, _ = feed_all(parser, steps)
    for number, ((step, want), got) in enumerate(zip(steps_and_releases, per_step, strict=False)):
        assert shape(got) == want, f"feed #{number} {step!r}"
    assert shape(per_step[-1]) == [], "finish() has nothing left to release"


def test_qwen_tokens_one_per_feed() -> None:
    # The token boundaries of the real Qwen2.5 encoding of a template-rendered call.
    check(
        [
            ("Sure", [("content", "Sure")]),
            (".\n", [("content", ".")]),  # the newline waits: it may frame a call
            ("<tool_call>", []),
            ("\n", []),
            ('{"', []),
            ("name", []),
            ('":', []),
            (' "', []),
            ("get", []),
            ("_time", []),
            ('",', [(START, "get_time")]),  # the name string has closed
            (' "', []),
            ("arguments", []),
            ('":', []),
            (' {"', [("args", '{"')]),  # leading whitespace is not part of the value
            ("tz", [("args", "tz")]),
            ('":', [("args", '":')]),
            (' "', [("args", ' "')]),
            ("UTC", [("args", "UTC")]),
            ('"}}\n', [("args", '"}')]),  # the value closes; the envelope is framing
            ("</tool_call>", []),
        ]
    )


def test_arguments_before_the_name_come_with_the_name() -> None:
    check(
        [
            ('<tool_call>{"arguments": {"tz": ', []),
            ('"UTC"}, ', []),
            ('"name": "get_', []),
            ('time"}', [(START, "get_time"), ("args", '{"tz": "UTC"}')]),
            ("</tool_call>", []),
        ]
    )


def test_whitespace_inside_arguments_waits_for_what_follows() -> None:
    steps: list[tuple[str, list[tuple[str, object]]]] = [
        (
            '<tool_call>{"name": "get_time", "arguments": {"tz": 1',
            [(START, "get_time"), ("args", '{"tz": 1')],
        ),
        ("  ", []),  # may be the whitespace before an end marker: it waits
        (",", [("args", "  ,")]),  # ... and is released once more of the value follows
        ("   \n", []),
        ("</tool_call>", []),  # the value never closed: it ends at the marker, trimmed
    ]
    check(steps)
    _, parsed = feed_all(make_parser(), [step for step, _ in steps])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_time", '{"tz": 1  ,')]
    assert [e.name for e in parsed.events] == ["malformed-arguments"]


def test_a_possible_marker_is_held_only_while_it_can_still_be_one() -> None:
    check(
        [
            ("Use <to", [("content", "Use")]),
            ("ol", []),
            ("s> now", [("content", " <tools> now")]),
        ]
    )


def test_a_recovered_call_is_emitted_whole_when_it_closes() -> None:
    check(
        [
            ("<tool_call>{'name': 'get_time',", []),
            (" 'arguments': {}}", []),
            ("</tool_call>", [(START, "get_time"), ("args", "{}")]),
        ]
    )


def test_arguments_given_as_a_string_come_whole_when_the_string_closes() -> None:
    check(
        [
            ('<tool_call>{"name": "get_time", "arguments": "{\\"tz\\"', [(START, "get_time")]),
            (': \\"UTC\\"}"', [("args", '{"tz": "UTC"}')]),
            ("}</tool_call>", []),
        ]
    )


def test_an_unreadable_call_is_released_at_its_end_marker() -> None:
    check(
        [
            ("A <tool_call>", [("content", "A")]),
            ("oops", []),
            ("</tool_call>", [("content", " <tool_call>oops</tool_call>")]),
            (" B", [("content", " B")]),
        ]
    )


# -- random outputs under the delta contract ------------------------------------------------

FRAGMENTS = st.sampled_from(
    [
        "<tool_call>",
        "</tool_call>",
        "<tool",
        "_call>",
        "</tool_",
        "\n",
        " ",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        '"',
        "\\",
        '"name"',
        '"arguments"',
        '"parameters"',
        '"get_time"',
        '"get_weather"',
        "'name'",
        "'get_time'",
        "True",
        "null",
        "text",
        "東京🗼",
        '{"name": "get_time", "arguments": {"tz": "UTC"}}',
        '<tool_call>{"name": "get_weather", "arguments": {"city": "a</tool_call>"}}</tool_call>',
        "<tool_call>{'name': 'get_time', 'arguments': {}}</tool_call>",
    ]
)
OUTPUTS = st.lists(FRAGMENTS, max_size=14).map("".join)


@given(
    text=OUTPUTS,
    cuts=st.lists(st.integers(0, 300), max_size=10),
    strict=st.booleans(),
)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_outputs_keep_the_contract(text: str, cuts: list[int], strict: bool) -> None:
    parser = make_parser(strict_parsing=strict)
    parsed = parser.parse(text)  # never raises
    points = sorted({min(c, len(text)) for c in cuts})
    steps = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    # A recovered call may be emitted whole when it closes; a bare-json candidate (a
    # held tail starting with "{") is excused by the parser's unmarked_starts.
    streamed, violations = check_stream(parser, steps, promptness=not parsed.recoveries)
    assert violations == [], "\n".join(map(str, violations))
    assert [(c.name, c.arguments) for c in streamed.tool_calls] == [
        (c.name, c.arguments) for c in parsed.tool_calls
    ]
    assert outside_framing(text, parsed).strip() == (parsed.content or "")
