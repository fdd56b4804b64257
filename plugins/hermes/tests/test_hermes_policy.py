"""The parsing policy (DESIGN §6) applied to the Hermes format, one-shot and streamed.

Every expected value is written from the policy and the format (plugins/hermes/README.md),
never from a parse. Each output is checked one-shot, one character per step and under
seeded random splits, with the delta contract checker watching every stream.
"""

from __future__ import annotations

import random

import pytest
from hermes_testing import (
    TIME,
    WEATHER,
    calls_of,
    events_of,
    make_parser,
    outside_framing,
    random_split,
    values_of,
)

from toolcall import Parsed, Parser, assemble
from toolcall.contract import check_stream
from toolcall_hermes import HermesParser, Qwen3JsonParser


def parse_everywhere(parser: Parser, text: str, *, promptness: bool = True) -> Parsed:
    """One-shot parse, checked against character-by-character and random-split streams."""
    parsed = parser.parse(text)
    rng = random.Random(text)
    for steps in [list(text), *(random_split(text, rng) for _ in range(12))]:
        streamed, violations = check_stream(parser, steps, promptness=promptness)
        assert violations == [], "\n".join(map(str, violations))
        assert calls_of(streamed) == calls_of(parsed)
        assert streamed.content == parsed.content
    # Nothing lost: outside the framing there is exactly the content (DESIGN §4.5).
    assert outside_framing(text, parsed).strip() == (parsed.content or "")
    return parsed


# -- clean calls ------------------------------------------------------------------------------


def test_newline_framing_as_the_templates_write_it() -> None:
    text = (
        "I'll check both.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_time", "arguments": {"tz": "CET"}}\n</tool_call>'
    )
    parsed = parse_everywhere(make_parser(), text)
    assert parsed.content == "I'll check both."
    assert calls_of(parsed) == [
        ("get_weather", '{"city": "Paris"}'),
        ("get_time", '{"tz": "CET"}'),
    ]
    assert parsed.events == ()


def test_compact_framing_and_the_models_own_argument_text() -> None:
    text = (
        '<tool_call>{"name":"get_weather","arguments":{"city":"Oslo","unit":"celsius"}}</tool_call>'
    )
    parsed = parse_everywhere(make_parser(), text)
    # The arguments are the model's text, not re-serialised ('{"city": "Oslo", ...}').
    assert calls_of(parsed) == [("get_weather", '{"city":"Oslo","unit":"celsius"}')]
    assert parsed.content is None


def test_arguments_before_name() -> None:
    text = '<tool_call>\n{ "arguments": {"tz": "UTC"}, "name": "get_time"}\n</tool_call> '
    parsed = parse_everywhere(make_parser(), text)
    assert calls_of(parsed) == [("get_time", '{"tz": "UTC"}')]
    assert parsed.content is None


def test_any_whitespace_between_and_around_calls_is_framing() -> None:
    text = (
        '\n\n<tool_call>{"name": "get_time", "arguments": {}}</tool_call>  \n\t\n'
        '<tool_call>\n\n  {"name": "get_time", "arguments": {"tz": "UTC"}}  \n\n</tool_call>\n\n'
    )
    parsed = parse_everywhere(make_parser(), text)
    assert calls_of(parsed) == [("get_time", "{}"), ("get_time", '{"tz": "UTC"}')]
    assert parsed.content is None


def test_content_before_between_and_after_calls() -> None:
    text = (
        'First.\n<tool_call>{"name": "get_time", "arguments": {}}</tool_call>\nThen.\n'
        '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>\nDone.'
    )
    parsed = parse_everywhere(make_parser(), text)
    # Whitespace before a call is framing; after a call it separates content (ContentGate).
    assert parsed.content == "First.\nThen.\nDone."
    assert len(parsed.tool_calls) == 2


def test_a_call_object_without_arguments_has_empty_arguments() -> None:
    parsed = parse_everywhere(make_parser(), '<tool_call>{"name": "get_time"}</tool_call>')
    assert calls_of(parsed) == [("get_time", "{}")]
    assert parsed.events == ()


def test_other_keys_of_the_call_object_are_ignored_and_recorded() -> None:
    text = (
        '<tool_call>{"id": 7, "name": "get_time", "meta": {"a": [1]}, "arguments": {}}</tool_call>'
    )
    parsed = parse_everywhere(make_parser(), text)
    assert calls_of(parsed) == [("get_time", "{}")]
    assert parsed.content is None
    assert events_of(parsed) == [("ignored-member", 0), ("ignored-member", 0)]
    assert ['"id"' in parsed.events[0].detail, '"meta"' in parsed.events[1].detail] == [True, True]


def test_a_misspelt_arguments_key_is_ignored_and_recorded() -> None:
    # Issue 16 (5): the member was dropped with no event.
    text = '<tool_call>{"name": "get_weather", "argument": {"city": "Oslo"}}</tool_call>'
    parsed = parse_everywhere(make_parser(), text)
    assert calls_of(parsed) == [("get_weather", "{}")]
    assert events_of(parsed) == [("ignored-member", 0)]
    assert '"argument"' in parsed.events[0].detail


def test_a_repeated_key_keeps_the_first_value_and_is_recorded() -> None:
    # Issue 16 (5): a second "arguments" was dropped with no event.
    text = (
        '<tool_call>{"name": "get_time", "arguments": {"tz": "UTC"}, '
        '"arguments": {"tz": "CET"}, "name": "get_weather"}</tool_call>'
    )
    parsed = parse_everywhere(make_parser(), text)
    assert calls_of(parsed) == [("get_time", '{"tz": "UTC"}')]
    assert events_of(parsed) == [("duplicate-key", 0), ("duplicate-key", 0)]
    assert ['"arguments"' in parsed.events[0].detail, '"name"' in parsed.events[1].detail] == [
        True,
        True,
    ]


@pytest.mark.parametrize(
    ("body", "arguments", "events"),
    [
        ('{"name": "get_time", " arguments": {"tz": "UTC"}}', {"tz": "UTC"}, ["parameters-key"]),
        (
            '{"name": "get_time", "arguments": {"tz": "UTC"}, "arguments": {"tz": "CET"}}',
            {"tz": "UTC"},
            ["duplicate-key"],
        ),
        (
            '{"name": "get_time", "parameters": {"tz": "UTC"}, "arguments": {"tz": "CET"}}',
            {"tz": "UTC"},
            ["parameters-key", "duplicate-key"],
        ),
        ('{"id": 1, "name": "get_time", "argument": {"tz": "UTC"}}', {}, ["ignored-member"] * 2),
        (
            '{"arguments": {"tz": "UTC"}, "name": "get_time", "name": "get_weather"}',
            {"tz": "UTC"},
            ["duplicate-key"],
        ),
    ],
)
def test_a_python_literal_reads_keys_as_the_json_object_does(
    body: str, arguments: dict[str, str], events: list[str]
) -> None:
    # Issue 16 (5): the python-literal path dropped a " arguments" key the JSON path
    # reads, and kept the last of a repeated key where the JSON path keeps the first.
    parser = make_parser()
    as_json = parse_everywhere(parser, f"<tool_call>{body}</tool_call>")
    python = f"<tool_call>{body.replace(chr(34), chr(39))}</tool_call>"
    as_python = parse_everywhere(parser, python, promptness=False)
    assert values_of(as_json) == values_of(as_python) == [("get_time", arguments)]
    assert [name for name, _ in events_of(as_json)] == events
    assert [name for name, _ in events_of(as_python)] == ["python-literal", *events]


def test_content_around_a_call_that_joins_into_a_marker_is_reported() -> None:
    # Issue 16 (6): content held a marker with no event (DESIGN §4.4).
    text = 'Done</tool<tool_call>{"name": "get_time", "arguments": {}}</tool_call>_call>'
    parsed = parse_everywhere(make_parser(), text)
    assert parsed.content == "Done</tool_call>"
    assert calls_of(parsed) == [("get_time", "{}")]
    assert events_of(parsed) == [("unparsed-markup", None)]


def test_names_are_kept_as_written_even_when_undeclared() -> None:
    text = '<tool_call>{"name": "get_stock_price", "arguments": {"ticker": "NVDA"}}</tool_call>'
    parsed = parse_everywhere(make_parser(), text)
    assert calls_of(parsed) == [("get_stock_price", '{"ticker": "NVDA"}')]


def test_markers_inside_json_strings_are_string_text() -> None:
    text = (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "a</tool_call>b<tool_call>c"'
        "}}</tool_call>after"
    )
    parsed = parse_everywhere(make_parser(), text)
    assert values_of(parsed) == [("get_weather", {"city": "a</tool_call>b<tool_call>c"})]
    assert parsed.content == "after"


def test_look_alike_tags_are_content() -> None:
    text = "Use <tool_calls> or <tool or </tool_call for that <tool_call"
    parsed = parse_everywhere(make_parser(), text)
    assert parsed.content == text
    assert parsed.tool_calls == ()


def test_qwen3_json_parses_the_same_format() -> None:
    text = '<think>\n</think>\n\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    parsed = parse_everywhere(make_parser(parser_class=Qwen3JsonParser), text)
    assert parsed.content == "<think>\n</think>"
    assert calls_of(parsed) == [("get_time", "{}")]
    assert Qwen3JsonParser.corpus == "hermes"
    assert Qwen3JsonParser.markers == HermesParser.markers


def test_tool_choice_none_makes_the_whole_output_content() -> None:
    # DESIGN §6: the model was told not to call; what it wrote anyway is shown, markup
    # included, not swallowed and not read as a call.
    text = 'Sure.\n<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'
    parsed = parse_everywhere(make_parser(tool_choice="none"), text)
    assert parsed.tool_calls == ()
    assert parsed.content == text
    assert events_of(parsed) == [("unparsed-markup", None)]


# -- defects ------------------------------------------------------------------------------------


def test_malformed_arguments_in_one_call_do_not_touch_the_others() -> None:
    text = (
        '<tool_call>{"name": "get_time", "arguments": {"tz": "UTC",}}</tool_call>\n'
        '<tool_call>{"name": "get_weather", "arguments": {"city": bare}}</tool_call>\n'
        '<tool_call>{"name": "get_time", "arguments": {"tz": "CET"}}</tool_call>'
    )
    parsed = parse_everywhere(make_parser(), text)
    assert calls_of(parsed) == [
        ("get_time", '{"tz": "UTC",}'),
        ("get_weather", '{"city": bare}'),
        ("get_time", '{"tz": "CET"}'),
    ]
    assert events_of(parsed) == [("malformed-arguments", 0), ("malformed-arguments", 1)]
    assert parsed.content is None


def test_arguments_that_never_close_run_to_the_end_marker() -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": ["Paris", 2  \n</tool_call>x'
    parsed = parse_everywhere(make_parser(), text)
    # Trailing whitespace before the end marker is removed; the text is kept as written.
    assert calls_of(parsed) == [("get_weather", '{"city": ["Paris", 2')]
    assert events_of(parsed) == [("malformed-arguments", 0)]
    assert parsed.content == "x"


@pytest.mark.parametrize("value", ["[1, 2]", "5", "null", '"just text"'])
def test_arguments_that_are_not_an_object_are_malformed(value: str) -> None:
    text = '<tool_call>{"name": "get_time", "arguments": ' + value + "}</tool_call>"
    parsed = parse_everywhere(make_parser(strict_parsing=True), text)
    assert calls_of(parsed) == [("get_time", value)]
    assert events_of(parsed) == [("malformed-arguments", 0)]


def test_a_call_without_a_readable_name_is_content_verbatim() -> None:
    text = 'Here: <tool_call>get_time()</tool_call> and <tool_call>{"nam": 1}</tool_call>.'
    parsed = parse_everywhere(make_parser(), text)
    assert parsed.content == text
    assert parsed.tool_calls == ()
    assert [name for name, _ in events_of(parsed)] == ["unparsed-markup", "unparsed-markup"]


def test_an_end_marker_without_a_call_is_content() -> None:
    parsed = parse_everywhere(make_parser(), "done</tool_call>")
    assert parsed.content == "done</tool_call>"
    assert events_of(parsed) == [("unparsed-markup", None)]


def test_cut_off_after_the_name_keeps_exactly_the_argument_text() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par'
    parsed = parse_everywhere(make_parser(), text)
    assert calls_of(parsed) == [("get_weather", '{"city": "Par')]
    assert events_of(parsed) == [("truncated", 0)]


def test_cut_off_before_the_name_is_closed_is_content() -> None:
    text = 'Looking.\n<tool_call>\n{"name": "get_wea'
    parsed = parse_everywhere(make_parser(), text)
    assert parsed.content == text
    assert parsed.tool_calls == ()


def test_cut_off_right_after_the_name_has_no_arguments_yet() -> None:
    parsed = parse_everywhere(make_parser(), '<tool_call>{"name": "get_time", "argu')
    assert calls_of(parsed) == [("get_time", "")]
    assert events_of(parsed) == [("truncated", 0)]


def test_text_after_the_call_object_inside_the_tag_is_content() -> None:
    text = '<tool_call>{"name": "get_time", "arguments": {}}}</tool_call>'
    parsed = parse_everywhere(make_parser(), text)
    assert calls_of(parsed) == [("get_time", "{}")]
    assert parsed.content == "}"


@pytest.mark.parametrize(
    ("text", "calls", "content", "events"),
    [
        # Committed by its name; the object breaks right after it.
        (
            'A <tool_call>{"name": "get_time" "tz"}</tool_call> B',
            [("get_time", "")],
            'A "tz"} B',
            [("malformed-arguments", 0)],
        ),
        # Issue 16 (4): the key of the member that breaks the object was lost.
        (
            '<tool_call>{"name": "f", "Hello world" x}</tool_call>',
            [("f", "")],
            ', "Hello world" x}',
            [("malformed-arguments", 0)],
        ),
        # Members read before the break are framing (and recorded when ignored).
        (
            'Hi <tool_call>{"name": "f", "arguments": {"a": 1}, "id": 2, "why" nope}</tool_call>',
            [("f", '{"a": 1}')],
            'Hi, "why" nope}',
            [("ignored-member", 0)],
        ),
        # The tag ends inside a member: the member is given back.
        (
            '<tool_call>{"name": "f", "arguments": {}, "x": [1, 2</tool_call>',
            [("f", "{}")],
            ', "x": [1, 2',
            [],
        ),
    ],
)
def test_text_of_a_tag_not_read_as_a_member_is_content_from_the_last_member_on(
    text: str, calls: list[tuple[str, str]], content: str, events: list[tuple[str, int]]
) -> None:
    parsed = parse_everywhere(make_parser(), text)
    assert calls_of(parsed) == calls
    assert parsed.content == content
    assert events_of(parsed) == events


@pytest.mark.parametrize(
    ("text", "content"),
    [
        # A member the object breaks at, with a marker inside its key string.
        ('<tool_call>{"name": "f", "a</tool_call>b" x}</tool_call>', ', "a</tool_call>b" x}'),
        # JSON content that looked like a bare call until its first key.
        ('{"</tool_call>": 1}', '{"</tool_call>": 1}'),
    ],
)
def test_a_marker_read_as_string_text_and_given_back_is_unparsed_markup(
    text: str, content: str
) -> None:
    # Content holds a marker only with an event that says why (DESIGN §4.4).
    parsed = parse_everywhere(make_parser(), text)
    assert parsed.content == content
    assert ("unparsed-markup", None) in events_of(parsed)


def test_a_missing_final_brace_before_the_end_marker() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}\n</tool_call>'
    parsed = parse_everywhere(make_parser(), text)
    assert calls_of(parsed) == [("get_weather", '{"city": "Rome"}')]
    assert parsed.events == ()


# -- recoveries, on and off ----------------------------------------------------------------------

PYTHON = (
    "<tool_call>{'name': 'get_weather', "
    "'arguments': {'city': \"O'Hare\", 'ok': True, 'x': None}}</tool_call>"
)
PARAMETERS = '<tool_call>{"name": "get_time", "parameters": {"tz": "UTC"}}</tool_call>'
SPACED_KEY = '<tool_call>{"name": "get_time", " arguments": {"tz": "UTC"}}</tool_call>'
AS_STRING = '<tool_call>{"name": "get_time", "arguments": "{\\"tz\\": \\"UTC\\"}"}</tool_call>'
NO_END = 'Sure.<tool_call>{"name": "get_time", "arguments": {"tz": "UTC"}}'
NO_END_NEXT = (
    '<tool_call>{"name": "get_time", "arguments": {}}\n'
    '<tool_call>{"name": "get_time", "arguments": {"tz": "UTC"}}</tool_call>'
)
BARE = '  {"name": "get_weather", "arguments": {"city": "Lima"}}\n'


def test_python_literal() -> None:
    parsed = parse_everywhere(make_parser(), PYTHON, promptness=False)
    assert calls_of(parsed) == [("get_weather", '{"city": "O\'Hare", "ok": true, "x": null}')]
    assert parsed.recoveries == ("python-literal",)
    strict = parse_everywhere(make_parser(strict_parsing=True), PYTHON)
    assert strict.tool_calls == ()
    assert strict.content == PYTHON
    assert events_of(strict) == [("unparsed-markup", None)]


def test_parameters_key() -> None:
    parsed = parse_everywhere(make_parser(), PARAMETERS)
    assert calls_of(parsed) == [("get_time", '{"tz": "UTC"}')]
    assert parsed.recoveries == ("parameters-key",)
    strict = parse_everywhere(make_parser(strict_parsing=True), PARAMETERS)
    assert calls_of(strict) == [("get_time", "")]
    assert events_of(strict) == [("ignored-member", 0), ("malformed-arguments", 0)]


def test_an_arguments_key_with_stray_whitespace_is_a_parameters_key_recovery() -> None:
    parsed = parse_everywhere(make_parser(), SPACED_KEY)
    assert calls_of(parsed) == [("get_time", '{"tz": "UTC"}')]
    assert parsed.recoveries == ("parameters-key",)
    strict = parse_everywhere(make_parser(strict_parsing=True), SPACED_KEY)
    assert events_of(strict) == [("ignored-member", 0), ("malformed-arguments", 0)]


def test_arguments_string() -> None:
    parsed = parse_everywhere(make_parser(), AS_STRING, promptness=False)
    assert calls_of(parsed) == [("get_time", '{"tz": "UTC"}')]
    assert parsed.recoveries == ("arguments-string",)
    strict = parse_everywhere(make_parser(strict_parsing=True), AS_STRING)
    assert calls_of(strict) == [("get_time", '"{\\"tz\\": \\"UTC\\"}"')]
    assert events_of(strict) == [("malformed-arguments", 0)]


def test_missing_end() -> None:
    parsed = parse_everywhere(make_parser(), NO_END)
    assert parsed.content == "Sure."
    assert calls_of(parsed) == [("get_time", '{"tz": "UTC"}')]
    assert parsed.recoveries == ("missing-end",)
    strict = parse_everywhere(make_parser(strict_parsing=True), NO_END)
    assert calls_of(strict) == [("get_time", '{"tz": "UTC"}')]  # committed by its name
    assert events_of(strict) == [("truncated", 0)]


def test_missing_end_before_the_next_call() -> None:
    parsed = parse_everywhere(make_parser(), NO_END_NEXT)
    assert calls_of(parsed) == [("get_time", "{}"), ("get_time", '{"tz": "UTC"}')]
    assert events_of(parsed) == [("missing-end", 0)]


def test_bare_json() -> None:
    parsed = parse_everywhere(make_parser(), BARE, promptness=False)
    assert calls_of(parsed) == [("get_weather", '{"city": "Lima"}')]
    assert parsed.recoveries == ("bare-json",)
    assert parsed.content is None
    strict = parse_everywhere(make_parser(strict_parsing=True), BARE)
    assert strict.tool_calls == ()
    assert strict.content == BARE.strip()


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "not_declared", "arguments": {}}',  # no declared tool of that name
        '{"name": "get_time", "arguments": {}} and more',  # not the whole output
        '{"name": "get_time", "arguments": [1]}',  # arguments not an object
        '{"answer": 42}',  # not a call object at all
        '{"name": "get_time", "arguments": {',  # never closes
    ],
)
def test_json_that_is_not_a_bare_call_is_content(text: str) -> None:
    parsed = parse_everywhere(make_parser(), text)
    assert parsed.tool_calls == ()
    assert parsed.content == text


def test_bare_json_needs_declared_tools() -> None:
    parser = make_parser(tools=())
    parsed = parser.parse('{"name": "get_time", "arguments": {}}')
    assert parsed.tool_calls == ()


def test_recoveries_are_recorded_per_call() -> None:
    text = PARAMETERS + "\n" + AS_STRING
    parsed = parse_everywhere(make_parser(), text)
    assert events_of(parsed) == [("parameters-key", 0), ("arguments-string", 1)]


# -- no exception escapes, nothing is lost ------------------------------------------------------


@pytest.mark.parametrize("method", ["_structure", "_commit", "_outside_text"])
def test_an_internal_error_degrades_to_content(
    monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    from toolcall_hermes import parser as module

    def broken(self: object, *args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(module.HermesStream, method, broken)
    parser = make_parser()
    text = 'A <tool_call>{"name": "get_time"}</tool_call> B'
    for steps in ([text], list(text), [text[:20], text[20:]]):
        stream = parser.stream()
        deltas = [d for step in steps for d in stream.feed(step)] + stream.finish()
        content = "".join(d.content for d in deltas)
        assert [event.name for event in stream.events] == ["internal-error"]
        assert "".join(content.split()) == "".join(text.split()), steps
        assert not any(d.tool_calls for d in deltas)


def test_an_internal_error_inside_a_committed_call(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolcall_hermes import parser as module

    def broken(self: object, *args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(module.HermesStream, "_arguments_done", broken)
    stream = make_parser().stream()
    text = '<tool_call>{"name": "get_time", "arguments": {"tz": "UTC"}}</tool_call> B'
    deltas = stream.feed(text) + stream.finish()
    # The call was committed and its arguments streamed; from the failing step on, the
    # output is content (best effort: the step's own text may appear in both).
    arguments = "".join(e.arguments for d in deltas for e in d.tool_calls)
    content = "".join(d.content for d in deltas)
    assert [event.name for event in stream.events] == ["internal-error"]
    assert arguments == '{"tz": "UTC"}'
    assert content.endswith("}</tool_call> B")
    assert text.endswith(content)


def test_finish_twice_releases_nothing_more_and_feed_after_finish_raises() -> None:
    stream = make_parser().stream()
    # "Hi" goes out at once; " " waits for what follows, "<tool" may become a marker.
    assert "".join(d.content for d in stream.feed("Hi <tool")) == "Hi"
    assert "".join(d.content for d in stream.finish()) == " <tool"
    assert stream.finish() == []
    with pytest.raises(RuntimeError, match="after finish"):
        stream.feed("more")


@pytest.mark.parametrize("delta", [None, 5, b"<tool_call>", ["x"]])
def test_a_delta_that_is_not_text_is_refused_by_name(delta: object) -> None:
    # Issue 16 (8): the type is named, and the stream goes on with the next text.
    stream = make_parser().stream()
    deltas = stream.feed('Hi <tool_call>{"name": "get_time", ')
    with pytest.raises(TypeError, match=type(delta).__name__):
        stream.feed(delta)  # type: ignore[arg-type]
    deltas += stream.feed('"arguments": {}}</tool_call>') + stream.finish()
    assert calls_of(assemble(deltas)) == [("get_time", "{}")]


def test_parsers_build_their_tags_from_plans() -> None:
    # Tools without a grammar: the resolver says no tag, the parser returns none.
    from toolcall.strictness import resolve_plan

    parser = make_parser(tools=(WEATHER, TIME))
    plan = resolve_plan(parser.request)
    assert plan.grammar is False
    assert parser.structural_tag(plan) is None
