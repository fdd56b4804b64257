"""What the stream emits, and when (DESIGN §6, the GLM paragraph).

Each test feeds an output piece by piece and states, per piece, exactly what that feed
must release: the rules, not a recording of the parser.
"""

from __future__ import annotations

from collections.abc import Sequence

from glm_testing import START, WEATHER, feed_all, make_parser, shape

from toolcall_glm import Glm47Parser


def check(steps_and_releases: Sequence[tuple[str, list[tuple[str, object]]]], **kw: object) -> None:
    parser = make_parser(**kw)  # type: ignore[arg-type]
    steps = [step for step, _ in steps_and_releases]
    per_step, _ = feed_all(parser, steps)
    for number, ((step, want), got) in enumerate(zip(steps_and_releases, per_step, strict=False)):
        assert shape(got) == want, f"feed #{number} {step!r}"
    assert shape(per_step[-1]) == [], "finish() has nothing left to release"


def test_glm45_framing_emits_each_piece_when_its_marker_arrives() -> None:
    check(
        [
            ("<tool_call>", []),
            ("get_weather", []),
            ("\n", [(START, "get_weather")]),  # the name is complete at the newline
            ("<arg_key>", []),
            ("city", []),
            ("</arg_key>", [("args", '{"city": ')]),
            ("\n", []),
            ("<arg_value>", [("args", '"')]),  # city is a string: it streams
            ("Par", [("args", "Par")]),
            ("is", [("args", "is")]),
            ("</arg_value>", [("args", '"')]),
            ("\n", []),
            ("<arg_key>", []),
            ("days", []),
            ("</arg_key>", [("args", ', "days": ')]),
            ("\n", []),
            ("<arg_value>", []),  # days is an integer: emitted whole at </arg_value>
            ("1", []),
            ("4", []),
            ("</arg_value>", [("args", "14")]),
            ("\n", []),
            ("</tool_call>", [("args", "}")]),
        ]
    )


def test_glm47_framing_completes_the_name_at_arg_key() -> None:
    check(
        [
            ("<tool_call>", []),
            ("get_", []),
            ("weather", []),
            ("<arg_key>", [(START, "get_weather")]),
            ("unit", []),
            ("</arg_key>", [("args", '{"unit": ')]),
            ("<arg_value>", [("args", '"')]),
            ("celsius", [("args", "celsius")]),
            ("</arg_value>", [("args", '"')]),
            ("</tool_call>", [("args", "}")]),
        ],
        parser_class=Glm47Parser,
    )


def test_a_call_without_arguments_completes_at_the_end_marker() -> None:
    check(
        [
            ("<tool_call>", []),
            ("get_time", []),
            ("</tool_call>", [(START, "get_time"), ("args", "{}")]),
        ]
    )
    check(
        [
            ("<tool_call>", []),
            ("get_time", []),
            ("\n", [(START, "get_time")]),
            ("</tool_call>", [("args", "{}")]),
        ]
    )


def test_string_values_stream_json_escaped() -> None:
    check(
        [
            (
                "<tool_call>run_code\n<arg_key>code</arg_key>",
                [(START, "run_code"), ("args", '{"code": ')],
            ),
            ("<arg_value>", [("args", '"')]),
            ('print("é")', [("args", 'print(\\"é\\")')]),
            ("\n\t", [("args", "\\n\\t")]),
            ("x < 1 \\ 2", [("args", "x < 1 \\\\ 2")]),
            ("</arg_value></tool_call>", [("args", '"}')]),
        ]
    )


def test_undeclared_and_unknown_values_wait_for_their_end_marker() -> None:
    check(
        [
            (
                "<tool_call>get_weather<arg_key>note</arg_key>",
                [(START, "get_weather"), ("args", '{"note": ')],
            ),
            ("<arg_value>hello", []),
            (" world", []),
            ("</arg_value>", [("args", '"hello world"')]),
            ("<arg_key>city</arg_key><arg_value>Oslo</arg_value>", [("args", ', "city": "Oslo"')]),
            ("</tool_call>", [("args", "}")]),
        ]
    )
    check(
        [
            (
                "<tool_call>lookup<arg_key>id</arg_key><arg_value>",
                [(START, "lookup"), ("args", '{"id": ')],
            ),
            ("007", []),
            ("</arg_value>", [("args", '"007"')]),  # 007 is not JSON: kept as text
            ("</tool_call>", [("args", "}")]),
        ]
    )


def test_content_is_released_as_soon_as_it_cannot_be_a_marker() -> None:
    check(
        [
            ("Sure, ", [("content", "Sure,")]),  # trailing whitespace waits for what follows
            ("one moment.", [("content", " one moment.")]),
            ("\n<tool", []),  # may be the start of <tool_call>
            ("_call>get_time</tool_call>", [(START, "get_time"), ("args", "{}")]),
            ("\nDone <", [("content", "\nDone")]),
            ("b>", [("content", " <b>")]),
        ]
    )


def test_several_pieces_in_one_feed_keep_their_order() -> None:
    parser = make_parser([WEATHER])
    text = "A<tool_call>get_weather<arg_key>city</arg_key><arg_value>Rome</arg_value></tool_call>B"
    per_step, parsed = feed_all(parser, [text])
    assert shape(per_step[0]) == [
        ("content", "A"),
        (START, "get_weather"),
        ("args", '{"city": "Rome"}'),
        ("content", "B"),
    ]
    for delta in per_step[0]:
        indices = [entry.index for entry in delta.tool_calls]
        assert len(indices) == len(set(indices)), "one entry per call per delta"
    assert parsed.content == "AB"


def test_a_repeated_pair_is_content_once_the_calls_arguments_end() -> None:
    """Issue 10: no content between two fragments of a call (DESIGN §4.2); the repeated
    pair waits for the call's final fragment."""
    check(
        [
            (
                "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>",
                [(START, "get_weather"), ("args", '{"city": "Paris"')],
            ),
            ("<arg_key>city</arg_key>", []),
            ("<arg_value>Lyon", []),
            ("</arg_value>", []),
            ("<arg_key>days</arg_key>", [("args", ', "days": ')]),
            ("<arg_value>2</arg_value>", [("args", "2")]),
            (
                "</tool_call>",
                [("args", "}"), ("content", "<arg_key>city</arg_key><arg_value>Lyon</arg_value>")],
            ),
            ("Done.", [("content", "Done.")]),
        ]
    )
