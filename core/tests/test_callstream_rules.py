"""The call-stream machine's rules that hermes needed added to it, for every family:
content on both sides of a call (or of markup) never joins into a marker without ``unparsed-markup``
saying why (DESIGN §4.4), and ``close_call`` checks arguments a family's JSON scanner
decoded already without decoding them again.

The family here is the smallest one the machine can carry: ``<c>NAME</c>`` is a call
named NAME with no arguments; everything else is content.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from toolcall import CallStream, EventName, Parser
from toolcall.contract import check_stream
from toolcall.scanning import UNDECODED

START, END = "<c>", "</c>"


class TinyParser(Parser):
    name: ClassVar[str] = "tiny"
    markers: ClassVar[tuple[str, ...]] = (START, END)

    def stream(self) -> TinyStream:
        return TinyStream(self)


class TinyStream(CallStream):
    def __init__(self, parser: Parser) -> None:
        super().__init__(parser, markers=(START, END))
        self._in_call = False

    def on_marker(self, marker: str, start: int) -> None:
        if marker == START and not self._in_call:
            self._in_call = True
            self.hold(marker, start)
        elif marker == END and self._in_call:
            self._in_call = False
            name = self.held[len(START) :]
            self.settle()
            self.frame(start, start + len(marker))
            self.open_call(name, "{}")
            self.close_call()
        else:
            self.event(EventName.UNPARSED_MARKUP, "a marker out of place", None)
            self.content(marker, start)

    def on_text(self, text: str, start: int) -> None:
        if self._in_call:
            self.hold(text, start)
        else:
            self.content(text, start)

    def on_end(self) -> None:
        self._in_call = False  # the machine releases what is held as content


def splits(text: str) -> list[list[str]]:
    return [[text], list(text), [text[i : i + 3] for i in range(0, len(text), 3)]]


@pytest.mark.parametrize(
    ("text", "content", "marker"),
    [
        ("Done</c<c>f</c>>", "Done</c>", "</c>"),  # a marker's two ends around one call
        ("<<c>f</c>c>", "<c>", "<c>"),
        ("A</<c>f</c>c<c>g</c>>", "A</c>", "</c>"),  # ... around two calls
        ("</<c>f</c><c>g</c>c>", "</c>", "</c>"),  # two calls with no content between
        ("Done</c <c>f</c>>", "Done</c>", "</c>"),  # the space before a call is framing
    ],
)
def test_content_that_joins_into_a_marker_across_calls_is_reported(
    text: str, content: str, marker: str
) -> None:
    parser = TinyParser()
    for steps in splits(text):
        parsed, violations = check_stream(parser, steps)
        assert violations == [], "\n".join(map(str, violations))
        assert parsed.content == content
        assert parsed.tool_calls
        joins = [e for e in parsed.events if e.name == EventName.UNPARSED_MARKUP]
        assert len(joins) == 1, steps
        assert joins[0].call_index is None
        assert repr(marker) in joins[0].detail


@pytest.mark.parametrize(
    "text",
    [
        "Done</c <c>f</c> >",  # the space after a call separates content
        "Done<c>f</c>ok",
        "</c<c>f</c>x>",  # the content around the call is "</cx>"
        "</<c>f</c>" + "x" * 10 + "c>",
    ],
)
def test_content_that_does_not_join_into_a_marker_is_not_reported(text: str) -> None:
    parser = TinyParser()
    for steps in splits(text):
        parsed, violations = check_stream(parser, steps)
        assert violations == [], "\n".join(map(str, violations))
        assert parsed.events == ()


SEPARATOR = "<s>"


class SeparatedParser(TinyParser):
    """The tiny family with one more marker, ``<s>``: framing between content, no call."""

    name: ClassVar[str] = "tiny-separated"
    markers: ClassVar[tuple[str, ...]] = (START, END, SEPARATOR)

    def stream(self) -> TinyStream:
        return SeparatedStream(self)


class SeparatedStream(TinyStream):
    def __init__(self, parser: Parser) -> None:
        CallStream.__init__(self, parser, markers=(START, END, SEPARATOR))
        self._in_call = False

    def on_marker(self, marker: str, start: int) -> None:
        if marker == SEPARATOR and not self._in_call:
            self.frame(start, start + len(marker))
        else:
            super().on_marker(marker, start)


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Done</c<s>>", "Done</c>"),  # a marker's two ends around markup, no call between
        ("</<s>c>", "</c>"),
    ],
)
def test_content_that_joins_into_a_marker_across_markup_is_reported(
    text: str, content: str
) -> None:
    parser = SeparatedParser()
    for steps in splits(text):
        parsed, violations = check_stream(parser, steps)
        assert violations == [], "\n".join(map(str, violations))
        assert parsed.content == content
        joins = [e for e in parsed.events if e.name == EventName.UNPARSED_MARKUP]
        assert len(joins) == 1, steps
        assert repr(END) in joins[0].detail


class DecodedStream(TinyStream):
    """The tiny family, handing the machine a value its arguments decode to."""

    def __init__(self, parser: Parser, value: object) -> None:
        super().__init__(parser)
        self._value = value

    def on_marker(self, marker: str, start: int) -> None:
        if marker == END and self.holding:
            self.settle()
            self.frame(start, start + len(marker))
            self.open_call("f", '{"a": 1}')
            self.close_call(value=self._value)
        else:
            super().on_marker(marker, start)


@pytest.mark.parametrize(
    ("value", "events"),
    [({"a": 1}, []), ([1], ["malformed-arguments"]), (UNDECODED, [])],
)
def test_close_call_checks_a_value_already_decoded_without_decoding_again(
    value: object, events: list[str]
) -> None:
    # The arguments text is a sound object; what the machine checks is the value it is
    # given (a family whose JSON scanner decoded the arguments whole), else the text.
    stream = DecodedStream(TinyParser(), value)
    stream.feed("<c>f</c>")
    stream.finish()
    assert [event.name for event in stream.events] == events
