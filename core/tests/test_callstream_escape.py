"""CallStream.fast_arguments with ``escape``: a format whose string values are not JSON
text streams them through the fast path, escaped, exactly as its hooks would."""

from __future__ import annotations

import json
import re
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall import CallStream, Parser, ParserContext, Request, assemble
from toolcall.contract import check_stream
from toolcall.scanning import JsonEmitter

OPEN, CLOSE = "<s>", "</s>"
MARKER_START = re.compile("<")


class StringStream(CallStream):
    """``<s>TEXT</s>``: a call ``f`` whose one argument ``s`` is TEXT, raw."""

    def __init__(self, parser: StringParser, *, fast: bool) -> None:
        super().__init__(parser, markers=(OPEN, CLOSE))
        self.fast = fast
        self.inside = False
        self.hooked = 0  # text the hooks saw

    def on_marker(self, marker: str, start: int) -> None:
        self.frame(start, start + len(marker))
        if marker == OPEN and not self.inside:
            self.inside = True
            self.open_call("f", '{"s": "')
            if self.fast:
                self.fast_arguments(MARKER_START, JsonEmitter.string_chunk)
        elif marker == CLOSE and self.inside:
            self.inside = False
            self.arguments('"}')
            self.close_call()
        else:
            self.content(marker, start)

    def on_text(self, text: str, start: int) -> None:
        self.hooked += len(text)
        if self.inside:
            self.frame(start, start + len(text))
            self.arguments(JsonEmitter.string_chunk(text))
        else:
            self.content(text, start)

    def on_end(self) -> None:
        if self.inside:
            self.event("truncated")


class StringParser(Parser):
    name = "test_strings"
    markers = (OPEN, CLOSE)
    fast = True

    def stream(self) -> StringStream:
        return StringStream(self, fast=self.fast)


class SlowStringParser(StringParser):
    fast = False


def parser(cls: type[StringParser]) -> StringParser:
    return cls(ParserContext(request=Request()))


TEXT = st.text(alphabet=st.sampled_from(list('ab "\\\n\t\x00é<>/s')), max_size=40)


@settings(max_examples=300, deadline=None)
@given(value=TEXT, cuts=st.lists(st.integers(0, 60), max_size=8))
def test_escaped_fast_arguments_equal_the_hooks(value: str, cuts: list[int]) -> None:
    value = value.replace(OPEN, "").replace(CLOSE, "")
    text = f"A{OPEN}{value}{CLOSE}B"
    points = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    steps = [text[a:b] for a, b in pairwise(points)]
    results = []
    for cls in (StringParser, SlowStringParser):
        stream = parser(cls).stream()
        deltas = [d for step in steps for d in stream.feed(step)] + stream.finish()
        results.append(assemble(deltas))
    fast, slow = results
    assert [c.arguments for c in fast.tool_calls] == [c.arguments for c in slow.tool_calls]
    assert fast.tool_calls[0].arguments == json.dumps({"s": value}, ensure_ascii=False)
    assert fast.content == slow.content == "AB"
    _, violations = check_stream(parser(StringParser), steps)
    assert violations == [], [str(v) for v in violations]


def test_a_delta_without_a_marker_start_takes_the_fast_path() -> None:
    stream = parser(StringParser).stream()
    stream.feed(OPEN)
    deltas = stream.feed('say "hi"\n')
    assert [(e.index, e.arguments) for d in deltas for e in d.tool_calls] == [
        (0, 'say \\"hi\\"\\n')
    ]
    assert stream.hooked == 0
    stream.feed(CLOSE)
    assert stream.framing[0].end == len(OPEN) + len('say "hi"\n') + len(CLOSE)


def test_an_empty_delta_on_the_fast_path_releases_nothing() -> None:
    stream = parser(StringParser).stream()
    stream.feed(OPEN)
    assert stream.feed("") == []
    assert stream.hooked == 0
    assert [e.arguments for d in stream.feed("x") for e in d.tool_calls] == ["x"]
