"""A pattern delimiter is settled only when no longer match is possible, and its text in
content is markup that was not read, as a literal delimiter's is.

Each output is streamed one character per step, cut in two at every offset, and given
whole; every stream must keep the delta contract, add up to the one-shot parse and record
the same events, and the one-shot parse must be what the format says (written here from
the policy, not read from the parser).
"""

from __future__ import annotations

from typing import Any

import pytest
from hf_testing import calls, events, parser, shipped, with_field

from toolcall import EventName, Parsed
from toolcall.contract import check_stream
from toolcall_hf_response_template import HfParser
from toolcall_hf_response_template.markup import literal_pieces
from toolcall_hf_response_template.patterns import Delimiter


def every_split(text: str) -> list[list[str]]:
    """One character per step, the text whole, and the text cut in two at every offset."""
    return [list(text), [text], *([text[:cut], text[cut:]] for cut in range(1, len(text)))]


def parse_every_split(hf: HfParser, text: str) -> Parsed:
    """The one-shot parse, after checking that every split streams to it, events included."""
    one_shot = hf.parse(text)
    for steps in every_split(text):
        streamed, violations = check_stream(hf, steps)
        assert violations == [], (steps, [str(v) for v in violations[:3]])
        assert sorted(events(streamed)) == sorted(events(one_shot)), steps
    return one_shot


def ds(text: str) -> str:
    """DeepSeek's spelling of a special token: ``<|tool calls end|>`` with its full-width
    bars (U+FF5C) and its word separators (U+2581)."""
    bar = "\N{FULLWIDTH VERTICAL LINE}"
    return text.replace("|", bar).replace(" ", "\N{LOWER ONE EIGHTH BLOCK}")


# A DeepSeek V3.1-style template: the closer of the last call may take the closer of
# the list too (an optional group after it), and the name is a capture of the opener.
DEEPSEEK: dict[str, Any] = {
    "version": 1,
    "start_anchor": ds("<|Assistant|>"),
    "fields": {
        "tool_calls": {
            "open_pattern": ds(
                "(?:<|tool calls begin|>)?<|tool call begin|>(?P<name>[^<]+)<|tool sep|>"
            ),
            "close_pattern": ds("<|tool call end|>(?:<|tool calls end|>)?"),
            "content": "json",
            "repeats": True,
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        }
    },
}
DEEPSEEK_CALLS = (
    ds(
        "<|tool calls begin|><|tool call begin|>get_time<|tool sep|>{}<|tool call end|>"
        "<|tool call begin|>get_weather<|tool sep|>"
    )
    + '{"city": "Oslo"}'
    + ds("<|tool call end|><|tool calls end|>")
)
# Hermes with Mistral's opener shape: the opener may repeat.
REPEATED_OPENER = with_field(
    shipped("hermes"), "tool_calls", open=None, open_pattern="<tool_call>(?:<tool_call>)*"
)
# Qwen3-Coder whose closer may take a list closer after it.
QWEN3_CODER_LIST = with_field(
    shipped("qwen3_coder"),
    "tool_calls",
    close_pattern=r"(?:</function>\s*)?</tool_call>(?:</tool_calls>)?",
)
# Hermes with two literal closers, one the start of the other.
TWO_CLOSERS = with_field(
    shipped("hermes"), "tool_calls", close=["</tool_call>", "</tool_call></tool_calls>"]
)


# -- 1. a longer match wins, however the text is cut ------------------------------------


@pytest.mark.parametrize(
    ("template", "text"),
    [
        (shipped("mistral"), '[TOOL_CALLS][TOOL_CALLS][{"name": "get_time", "arguments": {}}]'),
        (
            REPEATED_OPENER,
            '<tool_call><tool_call>{"name": "get_time", "arguments": {}}</tool_call>',
        ),
    ],
    ids=["mistral", "repeated-opener"],
)
@pytest.mark.parametrize("before", ["", "word " * 120], ids=["alone", "after-600-characters"])
def test_a_repeated_opener_is_all_framing_under_every_split(
    template: dict[str, Any], text: str, before: str
) -> None:
    # 600 characters of content first: the opener stands past the search's first windows.
    parsed = parse_every_split(parser(template), before + text)
    assert calls(parsed) == [("get_time", {})]
    assert (parsed.content or "") == before.strip()


def test_an_optional_group_after_the_last_closer_is_framing_under_every_split() -> None:
    parsed = parse_every_split(parser(DEEPSEEK), DEEPSEEK_CALLS)
    assert calls(parsed) == [("get_time", {}), ("get_weather", {"city": "Oslo"})]
    assert not parsed.content
    assert events(parsed) == []


def test_an_optional_group_after_a_pattern_closer_then_content() -> None:
    text = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n"
        "</function>\n</tool_call></tool_calls>done"
    )
    parsed = parse_every_split(parser(QWEN3_CODER_LIST), text)
    assert calls(parsed) == [("get_weather", {"city": "Oslo"})]
    assert parsed.content == "done"


def test_the_longer_of_two_literal_closers_wins_under_every_split() -> None:
    text = '<tool_call>{"name": "get_time", "arguments": {}}</tool_call></tool_calls> ok'
    parsed = parse_every_split(parser(TWO_CLOSERS), text)
    assert calls(parsed) == [("get_time", {})]
    assert parsed.content == "ok"


def test_a_shorter_match_is_kept_when_the_longer_one_does_not_complete() -> None:
    # '<|tool calls end' is cut off by the end of the output: the closer is the call's
    # alone, and the rest is content (an opener of the list that did not complete).
    text = ds("<|tool call begin|>get_time<|tool sep|>{}<|tool call end|><|tool calls end")
    parsed = parse_every_split(parser(DEEPSEEK), text)
    assert calls(parsed) == [("get_time", {})]
    assert parsed.content == ds("<|tool calls end")


# -- 2. a pattern delimiter's text in content is recorded ---------------------------------


@pytest.mark.parametrize(
    ("template", "text"),
    [
        # a full match of a closer pattern
        (shipped("qwen3_coder"), "use </tool_call> to end"),
        # a run of literal text in an optional group of a closer pattern
        (shipped("qwen3_coder"), "then </function> here"),
        # a run of literal text in an alternative of an opener pattern
        (shipped("mistral_v11"), "the [ARGS] marker"),
        # a run of literal text after the start of an opener pattern
        (shipped("qwen3_coder"), "a <function=get_time> b"),
        (DEEPSEEK, "end " + ds("<|tool calls end|>") + " here"),
        # a literal delimiter, as before
        (shipped("hermes"), "use </tool_call> to end"),
    ],
    ids=[
        "qwen3-closer",
        "qwen3-function-closer",
        "mistral-args",
        "qwen3-function",
        "deepseek",
        "hermes",
    ],
)
def test_a_delimiters_text_in_content_is_unparsed_markup(
    template: dict[str, Any], text: str
) -> None:
    parsed = parse_every_split(parser(template), text)
    assert parsed.tool_calls == ()
    assert parsed.content == text
    assert events(parsed) == [EventName.UNPARSED_MARKUP]


def test_content_without_a_delimiters_text_records_nothing() -> None:
    text = "a function, [args] and a tool call"
    for name in ("qwen3_coder", "mistral_v11"):
        parsed = parse_every_split(parser(shipped(name)), text)
        assert parsed.content == text
        assert events(parsed) == []


@pytest.mark.parametrize(
    ("pattern", "pieces"),
    [
        (r"(?:</function>\s*)?</tool_call>", ("</function>", "</tool_call>")),
        (r"\[TOOL_CALLS\](?P<name>[^\[\]{]+?)(?:\[ARGS\]|(?=\{))", ("[TOOL_CALLS]", "[ARGS]")),
        # a look-around's text is not consumed; a class is no literal text
        (r"<a>(?=<b>)[xy]+</a>(?<=>)", ("<a>", "</a>")),
        (r"(?=\[TOOL_CALLS\])", ()),
        (r"<t>(?:<t>)*", ("<t>",)),
    ],
)
def test_a_patterns_markup_is_each_run_of_literal_text_it_consumes(
    pattern: str, pieces: tuple[str, ...]
) -> None:
    assert literal_pieces(Delimiter(pattern=pattern)) == pieces
