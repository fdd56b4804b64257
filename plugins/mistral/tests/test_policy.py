"""The parsing policy (DESIGN §6) as it applies to Mistral, and the issue's bad input.

Every expected value is derived from the policy and the format (plugins/mistral/README.md).
Each output is also replayed one character per step and in one piece under the delta
contract checker, so that streaming and one-shot agree on it.
"""

from __future__ import annotations

import json

import pytest
from mistral_testing import TIME, calls, events, feed_all, make_parser, tool

from toolcall import EventName
from toolcall.contract import check_splits
from toolcall_conformance.splits import every_split


def parse(text: str, **kw: object):  # type: ignore[no-untyped-def]
    parser = make_parser(**kw)  # type: ignore[arg-type]
    violations = check_splits(parser, text, [list(text), [text]])
    assert violations == [], [str(v) for v in violations[:3]]
    return parser.parse(text)


# -- v11 ------------------------------------------------------------------------------------


def test_v11_call_with_content_before_and_after() -> None:
    parsed = parse('Checking.[TOOL_CALLS]get_time[ARGS]{"timezone": "UTC"}\n\nDone soon.')
    assert parsed.content == "Checking.\n\nDone soon."
    assert calls(parsed) == [("get_time", '{"timezone": "UTC"}')]
    assert events(parsed) == []


def test_v11_arguments_are_the_models_own_text() -> None:
    text = '[TOOL_CALLS]search[ARGS]  {"query":"a  b" ,"n":1.50}  '
    parsed = parse(text)
    assert calls(parsed) == [("search", '{"query":"a  b" ,"n":1.50}')]


def test_call_id_from_call_id_marker_and_from_text() -> None:
    written = parse('[TOOL_CALLS]get_time[CALL_ID]abcDEF123[ARGS]{"timezone": "UTC"}')
    assert [(c.name, c.id) for c in written.tool_calls] == [("get_time", "abcDEF123")]
    # vLLM's detokenizer releases no text for [CALL_ID]: a declared name + 9 alphanumerics.
    glued = parse('[TOOL_CALLS]get_timeXy9Zw8Vu7[ARGS]{"timezone": "UTC"}')
    assert [(c.name, c.id) for c in glued.tool_calls] == [("get_time", "Xy9Zw8Vu7")]


def test_an_id_of_the_wrong_shape_is_replaced_and_recorded() -> None:
    parsed = parse("[TOOL_CALLS]get_time[CALL_ID]call_1[ARGS]{}")
    call = parsed.tool_calls[0]
    assert call.name == "get_time"
    assert call.id != "call_1"
    assert len(call.id) == 9
    assert call.id.isalnum()
    assert events(parsed) == [EventName.IGNORED_MEMBER]


def test_fresh_ids_have_mistrals_shape() -> None:
    parsed = parse("[TOOL_CALLS]get_time[ARGS]{}[TOOL_CALLS]get_time[ARGS]{}")
    ids = [call.id for call in parsed.tool_calls]
    assert all(len(i) == 9 and i.isascii() and i.isalnum() for i in ids)
    assert ids[0] != ids[1]


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("[TOOL_CALLS]", "[TOOL_CALLS]"),  # [TOOL_CALLS] with nothing after it
        ("Sure.[TOOL_CALLS]  ", "Sure.[TOOL_CALLS]"),
        ("[TOOL_CALLS]get_time", "[TOOL_CALLS]get_time"),  # a name with no [ARGS]
        ("[TOOL_CALLS]I cannot call that.", "[TOOL_CALLS]I cannot call that."),
        ("[TOOL_CALLS][ARGS]{}", "[TOOL_CALLS][ARGS]{}"),  # no name at all
        ("a [ARGS] b", "a [ARGS] b"),  # a stray marker
    ],
)
def test_a_body_that_is_no_call_is_content_verbatim(text: str, content: str) -> None:
    parsed = parse(text)
    assert parsed.tool_calls == ()
    assert parsed.content == content
    assert EventName.UNPARSED_MARKUP in events(parsed)


def test_two_json_values_after_one_args() -> None:
    parsed = parse('[TOOL_CALLS]search[ARGS]{"query": "a"}{"query": "b"}')
    assert calls(parsed) == [("search", '{"query": "a"}')]
    assert parsed.content == '{"query": "b"}'


def test_arguments_cut_by_max_tokens_keep_what_was_written() -> None:
    parsed = parse('[TOOL_CALLS]search[ARGS]{"query": "vll')
    assert calls(parsed) == [("search", '{"query": "vll')]
    assert events(parsed) == [EventName.TRUNCATED]
    cut_at_args = parse("[TOOL_CALLS]search[ARGS]")
    assert calls(cut_at_args) == [("search", "")]
    assert events(cut_at_args) == [EventName.TRUNCATED]


def test_a_call_cut_by_the_next_call_is_malformed() -> None:
    parsed = parse('[TOOL_CALLS]search[ARGS]{"query": "a"[TOOL_CALLS]get_time[ARGS]{}')
    assert calls(parsed) == [("search", '{"query": "a"'), ("get_time", "{}")]
    assert events(parsed) == [EventName.MALFORMED_ARGUMENTS]


def test_python_literal_arguments_are_recovered_whole() -> None:
    parsed = parse("[TOOL_CALLS]search[ARGS]{'query': 'x', 'exact': True, 'k': None}")
    assert json.loads(parsed.tool_calls[0].arguments) == {"query": "x", "exact": True, "k": None}
    assert parsed.recoveries == ("python-literal",)
    strict = parse("[TOOL_CALLS]search[ARGS]{'query': 'x'}", strict_parsing=True)
    assert calls(strict) == [("search", "{'query': 'x'}")]
    assert events(strict) == [EventName.MALFORMED_ARGUMENTS]


def test_python_constants_inside_json_arguments_are_malformed() -> None:
    # The first key is JSON, so the arguments stream as written; True is no JSON.
    parsed = parse('[TOOL_CALLS]search[ARGS]{"query": "x", "exact": True}')
    assert calls(parsed) == [("search", '{"query": "x", "exact": True}')]
    assert events(parsed) == [EventName.MALFORMED_ARGUMENTS]


def test_arguments_given_as_a_json_string() -> None:
    parsed = parse('[TOOL_CALLS]get_time[ARGS]"{\\"timezone\\": \\"UTC\\"}"')
    assert calls(parsed) == [("get_time", '{"timezone": "UTC"}')]
    assert parsed.recoveries == ("arguments-string",)


def test_names_are_kept_even_when_undeclared() -> None:
    parsed = parse("[TOOL_CALLS]do_something[ARGS]{}")
    assert calls(parsed) == [("do_something", "{}")]


def test_a_name_with_a_space_is_no_name() -> None:
    parsed = parse('[TOOL_CALLS]get time[ARGS]{"a": 1}')
    assert parsed.tool_calls == ()
    assert parsed.content == '[TOOL_CALLS]get time[ARGS]{"a": 1}'


def test_tool_choice_none_is_all_content() -> None:
    text = 'Hi.[TOOL_CALLS]get_time[ARGS]{"timezone": "UTC"}'
    parsed = parse(text, tool_choice="none")
    assert parsed.tool_calls == ()
    assert parsed.content == text


def test_reasoning_is_reasoning() -> None:
    parsed = parse("[THINK]Need the time.[/THINK]Here.[TOOL_CALLS]get_time[ARGS]{}")
    assert parsed.reasoning == "Need the time."
    assert parsed.content == "Here."
    assert calls(parsed) == [("get_time", "{}")]
    unclosed = parse("[THINK]Thinking on[TOOL_CALLS]get_time[ARGS]{}")
    assert unclosed.reasoning == "Thinking on"
    assert calls(unclosed) == [("get_time", "{}")]


def test_the_tool_calls_marker_as_plain_text_tokens() -> None:
    # A non-Mistral tokenizer writes [TOOL_CALLS] as ordinary text: markers are read from
    # the text, so the split into tokens does not matter.
    text = '[TOOL_CALLS]get_time[ARGS]{"timezone": "UTC"}'
    steps = ["[", "TOOL", "_CALLS", "]", "get", "_time", "[", "ARGS", "]", '{"timezone": "UTC"}']
    _, parsed = feed_all(make_parser(), steps)
    assert calls(parsed) == [("get_time", '{"timezone": "UTC"}')]
    assert parsed.content is None
    assert "".join(steps) == text


# -- before v11 -------------------------------------------------------------------------------


def test_pre_v11_list() -> None:
    parsed = parse(
        '[TOOL_CALLS] [{"name": "get_time", "arguments": {"timezone": "UTC"}}, '
        '{"name": "search", "arguments": {"query": "q"}}]'
    )
    assert calls(parsed) == [("get_time", '{"timezone": "UTC"}'), ("search", '{"query": "q"}')]
    assert parsed.content is None


def test_pre_v11_id_before_the_name_is_kept_after_it_is_recorded() -> None:
    first = parse('[TOOL_CALLS] [{"id": "abcDEF123", "name": "get_time", "arguments": {}}]')
    assert first.tool_calls[0].id == "abcDEF123"
    last = parse('[TOOL_CALLS] [{"name": "get_time", "arguments": {}, "id": "abcDEF123"}]')
    assert last.tool_calls[0].id != "abcDEF123"
    assert events(last) == [EventName.IGNORED_MEMBER]


def test_pre_v11_malformed_element_between_good_ones() -> None:
    parsed = parse(
        '[TOOL_CALLS] [{"name": "get_time", "arguments": {"timezone": "UTC"}}, '
        '{"name": "search", "arguments": {"query": }}, '
        '{"name": "get_time", "arguments": {"timezone": "CET"}}]'
    )
    assert calls(parsed) == [
        ("get_time", '{"timezone": "UTC"}'),
        ("search", '{"query": }'),
        ("get_time", '{"timezone": "CET"}'),
    ]
    assert [(e.name, e.call_index) for e in parsed.events] == [(EventName.MALFORMED_ARGUMENTS, 1)]


def test_pre_v11_element_that_is_no_call_is_content() -> None:
    parsed = parse(
        '[TOOL_CALLS] [{"name": "get_time", "arguments": {}}, {"tool": "x"}, '
        '{"name": "search", "arguments": {"query": "q"}}]'
    )
    assert calls(parsed) == [("get_time", "{}"), ("search", '{"query": "q"}')]
    assert parsed.content == '{"tool": "x"}'


@pytest.mark.parametrize(
    ("text", "content", "other_events"),
    [
        # An element that is no call, with a marker inside one of its strings.
        (
            '[TOOL_CALLS] [{"name": "get_time", "arguments": {}}, {"id": "a[TOOL_CALLS]b"}]',
            '{"id": "a[TOOL_CALLS]b"}',
            [],
        ),
        # A call object that breaks off (no comma after the name): its rest is content.
        (
            '[TOOL_CALLS] [{"name": "get_time" "arguments": {"q": "a[ARGS]b"}}]',
            '"arguments": {"q": "a[ARGS]b"}}',
            [EventName.MALFORMED_ARGUMENTS],
        ),
    ],
)
def test_pre_v11_a_marker_in_element_text_that_becomes_content_is_unparsed_markup(
    text: str, content: str, other_events: list[str]
) -> None:
    # DESIGN §6: markup released as content is recorded; the contract checker in parse()
    # holds every split to it (content with a marker needs an unparsed-markup event).
    parsed = parse(text)
    assert [call.name for call in parsed.tool_calls] == ["get_time"]
    assert parsed.content == content
    names = [e.name for e in parsed.events]
    assert sorted(names) == sorted([*other_events, EventName.UNPARSED_MARKUP])


def test_pre_v11_member_value_with_a_stray_quote_ends_at_its_objects_brace() -> None:
    # The id lost its opening quote: an unreadable member (ignored), but the object still
    # closes at its "}", so the next call and the text after the list are read as usual.
    parsed = parse(
        '[TOOL_CALLS] [{"name": "search", "arguments": {"query": "a"}, "id": abcDEF123"}, '
        '{"name": "search", "arguments": {"query": "b"}}] Done.'
    )
    assert calls(parsed) == [("search", '{"query": "a"}'), ("search", '{"query": "b"}')]
    assert parsed.content == "Done."
    assert [(e.name, e.call_index) for e in parsed.events] == [(EventName.IGNORED_MEMBER, 0)]


def test_pre_v11_element_broken_inside_its_brackets_ends_where_they_balance() -> None:
    # The arguments lost their opening brace's place: the object breaks off, and the rest
    # of the element runs to where its brackets balance; the next call is read as usual.
    parsed = parse(
        '[TOOL_CALLS] [{"name": "get_time", "arguments": 1{"timezone": "UTC"}}, '
        '{"name": "search", "arguments": {"query": "q"}}] Done.'
    )
    assert [call.name for call in parsed.tool_calls] == ["get_time", "search"]
    assert parsed.tool_calls[1].arguments == '{"query": "q"}'
    assert (parsed.content or "").endswith("Done.")
    assert [(e.name, e.call_index) for e in parsed.events] == [(EventName.MALFORMED_ARGUMENTS, 0)]


def test_pre_v11_element_that_is_not_an_object_is_content_at_once() -> None:
    # Found by the kit's fuzz: a list whose first element is broken and whose next one
    # is no object at all is content; the stream must not hold that element back (§4.6).
    text = (
        '[TOOL_CALLS] [{</arg_key>"name": "get_time", "arguments": {}},</arg_value> '
        '{"name": "search", "arguments": {}}]'
    )
    parsed = parse(text)
    assert parsed.content == text
    assert parsed.tool_calls == ()
    assert set(events(parsed)) == {EventName.UNPARSED_MARKUP}


def test_pre_v11_python_literal_list_and_text_after() -> None:
    parsed = parse("[TOOL_CALLS] [{'name': 'get_time', 'arguments': {'timezone': 'UTC'}}] Done.")
    assert calls(parsed) == [("get_time", '{"timezone": "UTC"}')]
    assert parsed.content == "Done."
    assert parsed.recoveries == ("python-literal",)


def test_pre_v11_recoveries_are_off_under_strict_parsing() -> None:
    text = '[TOOL_CALLS] [{"name": "get_time", "parameters": {"timezone": "UTC"}}'
    assert calls(parse(text)) == [("get_time", '{"timezone": "UTC"}')]
    assert set(parse(text).recoveries) == {"parameters-key", "missing-end"}
    strict = parse(text, strict_parsing=True)
    assert calls(strict) == [("get_time", "{}")]
    assert set(events(strict)) == {EventName.IGNORED_MEMBER, EventName.TRUNCATED}


def test_pre_v11_list_cut_inside_a_call() -> None:
    parsed = parse('[TOOL_CALLS] [{"name": "search", "arguments": {"query": "mist')
    assert calls(parsed) == [("search", '{"query": "mist')]
    assert events(parsed) == [EventName.TRUNCATED]
    no_name = parse('[TOOL_CALLS] [{"name": "sea')
    assert no_name.tool_calls == ()
    assert no_name.content == '[TOOL_CALLS] [{"name": "sea'


def test_pre_v11_call_without_arguments_gets_an_empty_object() -> None:
    parsed = parse('[TOOL_CALLS] [{"name": "get_time"}]')
    assert calls(parsed) == [("get_time", "{}")]


def test_repeated_marker_is_framing() -> None:
    parsed = parse('[TOOL_CALLS] [TOOL_CALLS][{"name": "get_time", "arguments": {}}]')
    assert calls(parsed) == [("get_time", "{}")]
    assert parsed.content is None


@pytest.mark.parametrize(
    "text",
    [
        '[TOOL_CALLS] [{"name": "get_time", "arguments": {"a": "}]"}}, 3, [1, {"x": "]"}]]',
        '[TOOL_CALLS]{"name": "get_time", "arguments": {}} and [TOOL_CALLS]search[ARGS]{}',
        "[TOOL_CALLS] [{'name': 'it\\'s', 'arguments': {'q': \"}]\"}}]",
        "[THINK][TOOL_CALLS][/THINK][ARGS][CALL_ID][THINK]",
        "[TOOL_CALLS]get_time[CALL_ID] has no id[ARGS]{}",
        '[TOOL_CALLS]search[ARGS]{"query": "[TOOL_CALLS]x[ARGS]"}',
    ],
)
def test_odd_outputs_keep_the_contract(text: str) -> None:
    parse(text)


def test_declared_tools_do_not_change_unrelated_reading() -> None:
    parsed = parse("[TOOL_CALLS]lookupabcDEF123[ARGS]{}", tools=[TIME, tool("lookupabcDEF123")])
    assert calls(parsed) == [("lookupabcDEF123", "{}")]
    assert parsed.tool_calls[0].id != "abcDEF123"


# -- one-shot: arguments met whole are decoded once; the result is the piecewise one -------

_PAD = '"pad": "' + 'x\\n\\"y' * 1200 + '"'


@pytest.mark.parametrize(
    ("body", "strict"),
    [
        ('"s": "tab\\t quote\\" \\u00e9 pair \\ud83d\\ude00 \\\\"}', True),
        ('"k": 1, "k": 2}', True),
        ('"s": "lone \\ud800 escape"}', False),
        ('"s": "invalid \\x41 escape"}', False),
        ('"n": NaN}', False),
        ('"s": "raw\tcontrol"}', False),
    ],
)
@pytest.mark.parametrize("framing", ["v11", "pre-v11"])
def test_long_arguments_in_one_piece_read_as_in_many(body: str, strict: bool, framing: str) -> None:
    arguments = "{" + _PAD + ", " + body
    if framing == "v11":
        text = "[TOOL_CALLS]get_time[ARGS]" + arguments
    else:
        text = '[TOOL_CALLS] [{"name": "get_time", "arguments": ' + arguments + "}]"
    parser = make_parser()
    pieces = [text[i : i + 61] for i in range(0, len(text), 61)]
    assert check_splits(parser, text, [pieces, [text]]) == []
    parsed = parser.parse(text)
    assert calls(parsed) == [("get_time", arguments)]
    assert (EventName.MALFORMED_ARGUMENTS in events(parsed)) is not strict


# -- a name that UTF-8 cannot write; the text of a member the call ends in ----------------


def parse_every_split(text: str, **kw: object):  # type: ignore[no-untyped-def]
    parser = make_parser(**kw)  # type: ignore[arg-type]
    violations = check_splits(parser, text, every_split(text))
    assert violations == [], [str(v) for v in violations[:3]]
    return parser.parse(text)


@pytest.mark.parametrize(
    "text",
    [
        '[TOOL_CALLS] [{"name": "\\ud800", "arguments": {}}]',
        '[TOOL_CALLS] {"name": "\\udc00", "arguments": {"a": 1}}',
        '[TOOL_CALLS] [{"arguments": {}, "name": "get_\\ud800"}]',
        "[TOOL_CALLS] [{'name': '\\ud800', 'arguments': {}}]",
    ],
)
def test_a_name_with_a_lone_surrogate_escape_is_no_call(text: str) -> None:
    # DESIGN §6: a call is committed once its name is complete and readable; a name
    # UTF-8 cannot write (vLLM could not send it) is none: the text is content.
    parsed = parse_every_split(text)
    assert parsed.tool_calls == ()
    assert parsed.content == text
    assert EventName.UNPARSED_MARKUP in events(parsed)


def test_a_lone_surrogate_name_after_a_call_is_content_and_the_call_stands() -> None:
    element = '{"name": "\\ud800", "arguments": {}}'
    text = '[TOOL_CALLS] [{"name": "get_time", "arguments": {}}, ' + element + "]"
    parsed = parse_every_split(text)
    assert calls(parsed) == [("get_time", "{}")]
    assert parsed.content == element
    assert events(parsed) == [EventName.UNPARSED_MARKUP]


def test_a_surrogate_pair_escape_is_a_name_character() -> None:
    parsed = parse_every_split('[TOOL_CALLS] [{"name": "f\\ud83d\\ude00", "arguments": {}}]')
    assert calls(parsed) == [("f\N{GRINNING FACE}", "{}")]
    assert events(parsed) == []


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ('[TOOL_CALLS] [{"name": "search", "I chose Pa', '"I chose Pa'),
        ('[TOOL_CALLS] {"name": "search", "id"', '"id"'),
        ('[TOOL_CALLS] [{"name": "search", "arguments"  :', '"arguments"  :'),
    ],
)
def test_the_key_of_a_member_the_output_ends_in_is_content(text: str, content: str) -> None:
    # The call is committed at its name (DESIGN §6) and keeps what was emitted, no
    # arguments; the key read so far is text the model wrote: content (§4.5).
    parsed = parse_every_split(text)
    assert calls(parsed) == [("search", "")]
    assert parsed.content == content
    assert events(parsed) == [EventName.TRUNCATED]


def test_the_key_of_a_member_a_marker_ends_is_content() -> None:
    text = '[TOOL_CALLS] [{"name": "search", "no" [TOOL_CALLS]get_time[ARGS]{}'
    parsed = parse_every_split(text)
    assert calls(parsed) == [("search", ""), ("get_time", "{}")]
    assert parsed.content == '"no"'


def test_an_ignored_member_the_output_ends_in_is_recorded() -> None:
    parsed = parse_every_split('[TOOL_CALLS] [{"name": "search", "note": "I chose Pa')
    assert calls(parsed) == [("search", "")]
    assert parsed.content is None
    assert events(parsed) == [EventName.IGNORED_MEMBER, EventName.TRUNCATED]


def test_arguments_the_output_ends_in_keep_their_text() -> None:
    text = '[TOOL_CALLS] [{"name": "search", "arguments": {"x": [1, 2 and then I said hello'
    parsed = parse_every_split(text)
    assert calls(parsed) == [("search", '{"x": [1, 2 and then I said hello')]
    assert parsed.content is None
    assert events(parsed) == [EventName.TRUNCATED]
