"""What stands inside a region: a closer's text in a JSON string, the prompt's part of a
reasoning region, a name the opener's pattern cuts short.

Each expected value follows from the policy the README states (a closer inside a JSON
string of a ``json`` region is string text; ``strip`` trims a region's text as a whole; a
name capture must end where the name does); each output is checked one-shot and under
every split with the delta contract checker.
"""

from __future__ import annotations

from typing import Any

import pytest
from hf_testing import calls, events, parse_checked, parser, shipped, with_field

from toolcall import EventName

HERMES = shipped("hermes")
LLAMA = shipped("llama3_json")
MISTRAL = shipped("mistral_v11")
DIALECT = with_field(
    HERMES,
    "tool_calls",
    content_args={"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
)


def call_colon(content: str = "json", **args: Any) -> dict[str, Any]:
    """A template in the style of Gemma 4's: ``<|tool_call>call:NAME{...}<tool_call|>``,
    the name captured by ``\\w+``, reasoning in ``<|channel>thought\\n ... <channel|>``."""
    return {
        "version": 1,
        "start_anchor": "<|turn>model\n",
        "fields": {
            "thinking": {"open": "<|channel>thought\n", "close": "<channel|>"},
            "tool_calls": {
                "open_pattern": "<\\|tool_call>call:(?P<name>\\w+)",
                "close": "<tool_call|>",
                "content": content,
                "content_args": args,
                "repeats": True,
                "transform": {"function": {"name": "{name}", "arguments": "{content}"}},
            },
        },
    }


GEMMA = call_colon(unquoted_keys=True, string_delims=[['<|"|>', '<|"|>']])


# -- a closer inside a JSON string ---------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        '{"content": "Wrap it in </tool_call> and stop."}',
        '{"content":"</tool_call>"}',
        '{"content": "a <tool_call> b </tool_call> c", "n": [1, "</tool_call>"]}',
        '{"content": "escaped \\" </tool_call> \\\\"}',
    ],
)
def test_a_closer_inside_a_string_of_the_arguments_is_string_text(arguments: str) -> None:
    text = f'<tool_call>\n{{"name": "write_file", "arguments": {arguments}}}\n</tool_call> Done.'
    parsed = parse_checked(parser(HERMES), text)
    assert [(call.name, call.arguments) for call in parsed.tool_calls] == [
        ("write_file", arguments)
    ]
    assert parsed.content == "Done."
    assert events(parsed) == []


def test_a_closer_inside_a_key_or_an_ignored_member_is_string_text() -> None:
    text = (
        '<tool_call>{"id": "</tool_call>", "name": "get_time", '
        '"arguments": {"a </tool_call> b": 1}}</tool_call>'
    )
    parsed = parse_checked(parser(HERMES), text)
    assert calls(parsed) == [("get_time", {"a </tool_call> b": 1})]
    assert events(parsed) == [EventName.IGNORED_MEMBER]


def test_a_closer_inside_the_name_string_is_part_of_the_name() -> None:
    # Names are kept as the model wrote them; the region ends at the closer after the object.
    parsed = parse_checked(parser(HERMES), '<tool_call>{"name": "a</tool_call>b"}</tool_call>')
    assert calls(parsed) == [("a</tool_call>b", {})]


def test_a_string_that_never_closes_runs_to_the_end_of_the_output() -> None:
    # Never the closer, whatever follows: the call keeps the model's text so far (truncated),
    # the later call's text included; nothing is lost.
    second = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    first = '<tool_call>\n{"name": "write_file", "arguments": {"path": "a.md</tool_call>\n'
    text = f"Hi {first}{second}"
    parsed = parse_checked(parser(HERMES), text)
    assert [(call.name, call.arguments) for call in parsed.tool_calls] == [
        ("write_file", '{"path": "a.md</tool_call>\n' + second)
    ]
    assert parsed.content == "Hi"
    assert events(parsed) == [EventName.TRUNCATED]


def test_a_name_string_that_never_closes_leaves_the_region_as_content() -> None:
    text = 'Hi <tool_call>{"name": "get_time</tool_call> more'
    parsed = parse_checked(parser(HERMES), text)
    assert parsed.tool_calls == ()
    assert parsed.content == text
    assert EventName.UNPARSED_MARKUP in events(parsed)


def test_outside_strings_the_closer_ends_the_region_at_any_depth() -> None:
    parsed = parse_checked(
        parser(HERMES), '<tool_call>{"name": "get_time", "arguments": {"a": [1, </tool_call> ok'
    )
    assert [(call.name, call.arguments) for call in parsed.tool_calls] == [
        ("get_time", '{"a": [1,')
    ]
    assert parsed.content == "ok"
    assert events(parsed) == [EventName.MALFORMED_ARGUMENTS]


def test_a_root_that_is_a_string_is_no_call_object_and_its_closer_counts() -> None:
    text = '<tool_call>"a</tool_call> then <tool_call>{"name": "get_time"}</tool_call>'
    parsed = parse_checked(parser(HERMES), text)
    assert parsed.content == '<tool_call>"a</tool_call> then'
    assert calls(parsed) == [("get_time", {})]


def test_after_the_call_object_a_quote_opens_no_string() -> None:
    # The rest of the region is content (trailing-text) and no longer read: its closer counts.
    text = '<tool_call>{"name": "get_time", "arguments": {}} "x</tool_call> after'
    parsed = parse_checked(parser(HERMES), text)
    assert calls(parsed) == [("get_time", {})]
    assert parsed.content == '"x after'
    assert EventName.TRAILING_TEXT in events(parsed)


def test_a_partial_closer_inside_a_string_is_streamed_at_once() -> None:
    # Inside a string the closer is not looked for: nothing is held for it.
    stream = parser(HERMES).stream()
    deltas = stream.feed('<tool_call>{"name": "get_time", "arguments": {"a": "x </tool', [])
    fragments = [
        entry.arguments for delta in deltas for entry in delta.tool_calls if entry.arguments
    ]
    assert "".join(fragments) == '{"a": "x </tool'


def test_llama3_json_separator_and_tag_inside_a_string() -> None:
    text = (
        '<|python_tag|>{"name": "search", "parameters": {"q": "ls; pwd <|python_tag|>"}}; '
        '{"name": "get_time", "parameters": {}}'
    )
    parsed = parse_checked(parser(LLAMA), text)
    assert calls(parsed) == [("search", {"q": "ls; pwd <|python_tag|>"}), ("get_time", {})]
    assert parsed.content is None


def test_mistral_next_call_marker_inside_a_string() -> None:
    text = (
        '[TOOL_CALLS]write_file[ARGS]{"content": "then [TOOL_CALLS]get_time[ARGS]{}"}'
        '[TOOL_CALLS]get_time[ARGS]{"zone": "UTC"}'
    )
    parsed = parse_checked(parser(MISTRAL), text)
    assert calls(parsed) == [
        ("write_file", {"content": "then [TOOL_CALLS]get_time[ARGS]{}"}),
        ("get_time", {"zone": "UTC"}),
    ]


def test_a_closer_inside_a_delimited_string_of_a_dialect() -> None:
    text = (
        '<tool_call>{name: <|"|>get_time<|"|>, arguments: {a: <|"|>x </tool_call> y<|"|>}}'
        "</tool_call>"
    )
    parsed = parse_checked(parser(DIALECT), text)
    assert calls(parsed) == [("get_time", {"a": "x </tool_call> y"})]
    parsed = parse_checked(
        parser(GEMMA), '<|tool_call>call:get_time{zone:<|"|>a <tool_call|> b<|"|>}<tool_call|>ok'
    )
    assert calls(parsed) == [("get_time", {"zone": "a <tool_call|> b"})]
    assert parsed.content == "ok"


def test_a_delimited_strings_opener_ends_a_bare_word_in_every_split() -> None:
    # `x<|"` may become `x<|"|>`: the word ends at the opener, not at its `"` (a split
    # there once opened a JSON string, and the gate asked it).
    text = '<tool_call>{name: <|"|>get_time<|"|>, arguments: {x<|"|>}</tool_call>'
    parsed = parse_checked(parser(DIALECT), text)
    assert [(call.name, call.arguments) for call in parsed.tool_calls] == [("get_time", '{"x": ')]
    assert parsed.content == '<|"|>}</tool_call>'


# -- reasoning the prompt began ------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "output", "reasoning"),
    [
        # the prompt wrote some of the region: the output's first blank is inside it
        ("<think>\nThe user asks", " about Paris.</think>Paris.", " about Paris."),
        ("<think>\nThe user asks", "\n\nabout Paris.\n</think>Paris.", "\n\nabout Paris."),
        # nothing but blanks so far: blanks are at the region's start, framing
        ("<think>\n", " about Paris.</think>Paris.", "about Paris."),
        ("<think>\n  ", "\n about Paris.</think>Paris.", "about Paris."),
        ("<think>", "about Paris.</think>Paris.", "about Paris."),
    ],
)
def test_strip_trims_the_region_as_a_whole_prompt_included(
    prompt: str, output: str, reasoning: str
) -> None:
    hf = parser(HERMES, prompt="<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n" + prompt)
    parsed = parse_checked(hf, output)
    assert parsed.reasoning == reasoning
    assert parsed.content == "Paris."


def test_a_prefilled_channel_thought_continues_with_its_space() -> None:
    hf = parser(GEMMA, prompt="<|turn>user\nhi<turn|>\n<|turn>model\n<|channel>thought\nLet me")
    parsed = parse_checked(hf, " check.<channel|>Done.")
    assert parsed.reasoning == " check."
    assert parsed.content == "Done."


# -- a name the opener's pattern cuts short -----------------------------------------------------


def two_calls(name: str) -> tuple[str, str]:
    region = f'<|tool_call>call:{name}{{city:<|"|>Paris<|"|>}}<tool_call|>'
    return region, f'{region}\n<|tool_call>call:get_time{{zone:<|"|>UTC<|"|>}}<tool_call|>'


@pytest.mark.parametrize("name", ["get-weather", "get.weather", "get_weather-2"])
def test_a_name_capture_followed_by_a_name_character_gives_no_call(name: str) -> None:
    region, text = two_calls(name)
    parsed = parse_checked(parser(GEMMA), text)
    assert calls(parsed) == [("get_time", {"zone": "UTC"})]  # never a call named "get"
    assert parsed.content == region
    assert EventName.UNPARSED_MARKUP in events(parsed)
    assert EventName.MALFORMED_ARGUMENTS not in events(parsed)


@pytest.mark.parametrize("name", ["get_weather2", "getWéather"])
def test_a_name_capture_that_takes_the_whole_name_is_a_call(name: str) -> None:
    parsed = parse_checked(parser(GEMMA), two_calls(name)[1])
    assert calls(parsed) == [(name, {"city": "Paris"}), ("get_time", {"zone": "UTC"})]


def test_a_name_capture_at_the_end_of_the_output_gives_no_call() -> None:
    # The name may have gone on, as a JSON name cut off inside its string.
    text = "Checking. <|tool_call>call:get_time"
    parsed = parse_checked(parser(GEMMA), text)
    assert parsed.tool_calls == ()
    assert parsed.content == text


@pytest.mark.parametrize("content", ["json", "text"])
def test_a_name_capture_the_next_text_ends_is_a_call_in_every_body(content: str) -> None:
    template = call_colon(content)
    parsed = parse_checked(parser(template), '<|tool_call>call:get_time{"zone": "UTC"}<tool_call|>')
    assert [call.name for call in parsed.tool_calls] == ["get_time"]
    parsed = parse_checked(parser(template), '<|tool_call>call:get-time{"zone": "UTC"}<tool_call|>')
    assert parsed.tool_calls == ()
    assert parsed.content == '<|tool_call>call:get-time{"zone": "UTC"}<tool_call|>'


def test_text_the_pattern_requires_after_the_name_bounds_it() -> None:
    # The capture does not end the match: the pattern's own text after it ends the name.
    template = with_field(
        call_colon("json"), "tool_calls", open_pattern="<\\|tool_call>call:(?P<name>\\w+)_v1"
    )
    parsed = parse_checked(
        parser(template), '<|tool_call>call:get_time_v1{"zone": "UTC"}<tool_call|>'
    )
    assert calls(parsed) == [("get_time", {"zone": "UTC"})]
