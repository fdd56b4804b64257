"""The machine's reasoning channel, ``unhold`` and ``handles_none``, and how the delta
contract checker accounts for reasoning.

The toy format: ``<r>...</r>`` is reasoning (text the format marks as reasoning, DESIGN
§6), ``<c>NAME</c>`` a call with empty arguments ``{}``, everything else content. The
stream keeps a possible marker prefix at the end of a step held (``hold``) and takes it
back (``unhold``) when the next step arrives, as a family with delimiters of its own does.
It reads ``tool_choice: "none"`` itself (``handles_none``): calls are then content,
reasoning stays reasoning. Expected values follow from this description.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import pytest

from toolcall import CallStream, Delta, EventName, Parser, ParserContext, Request, Span
from toolcall.contract import DeltaChecker, check_splits, check_stream

MARKERS = ("<r>", "</r>", "<c>", "</c>")


class ReasoningToy(Parser):
    name = "reasoning_toy"
    markers = MARKERS

    def __init__(self, context: ParserContext | None = None, *, mislabel: bool = False) -> None:
        super().__init__(context)
        self.mislabel = mislabel

    def stream(self) -> ReasoningStream:
        return ReasoningStream(self)


class ReasoningStream(CallStream):
    handles_none = True

    def __init__(self, parser: ReasoningToy) -> None:
        super().__init__(parser)
        self.toy = parser
        self.buffer = ""  # a copy of the held text: a possible marker prefix
        self.buffer_start = 0
        self.state = "out"  # out, think, call
        self.name = ""
        self.calls_allowed = self.request.tool_choice != "none"

    def on_text(self, text: str, start: int) -> None:
        if self.buffer:
            self.unhold(self.buffer_start)
        text, start = self.buffer + text, start - len(self.buffer)
        self.buffer = ""
        at = 0
        while at < len(text):
            found = min(
                ((text.find(m, at), m) for m in MARKERS if text.find(m, at) >= 0),
                default=(-1, ""),
            )
            stop = found[0] if found[0] >= 0 else len(text)
            if found[0] < 0:
                # keep the longest end that could grow into a marker
                for size in range(3, 0, -1):
                    if any(m.startswith(text[-size:]) for m in MARKERS) and len(text) - size >= at:
                        stop = len(text) - size
                        break
            self.piece(text[at:stop], start + at)
            if found[0] < 0:
                if stop < len(text):
                    self.buffer, self.buffer_start = text[stop:], start + stop
                    self.hold(self.buffer, self.buffer_start)
                return
            self.marker(found[1], start + stop)
            at = stop + len(found[1])

    def piece(self, text: str, start: int) -> None:
        if not text:
            return
        if self.state == "think":
            if self.toy.mislabel:
                text = text.upper()
            self.reasoning(text, start)
        elif self.state == "call":
            self.hold(text, start)
            self.name += text
        else:
            self.content(text, start)

    def marker(self, marker: str, start: int) -> None:
        end = start + len(marker)
        if marker == "<r>" and self.state == "out":
            self.frame(start, end)
            self.state = "think"
        elif marker == "</r>" and self.state == "think":
            self.frame(start, end)
            self.state = "out"
        elif marker == "<c>" and self.state == "out":
            self.hold(marker, start)
            self.name = ""
            self.state = "call"
        elif marker == "</c>" and self.state == "call":
            if self.calls_allowed and self.name:
                self.hold(marker, start)
                self.settle()
                self.open_call(self.name, "{}")
                self.close_call()
            else:
                self.event(EventName.UNPARSED_MARKUP, "a call that is content")
                self.hold(marker, start)
                self.release()
            self.state = "out"
        else:
            self.piece(marker, start)

    def on_end(self) -> None:
        if self.buffer:
            self.unhold(self.buffer_start)
            text, self.buffer = self.buffer, ""
            self.piece(text, self.buffer_start)
        if self.state == "call":
            self.event(EventName.UNPARSED_MARKUP, "an unclosed call")
            self.release()


def toy(tool_choice: str = "auto", **options: bool) -> ReasoningToy:
    request = Request.from_openai({"tools": [], "tool_choice": tool_choice})
    return ReasoningToy(ParserContext(request=request), **options)


def splits(text: str, count: int = 40) -> list[list[str]]:
    rng = random.Random(text)
    out = [list(text), [text]]
    for _ in range(count):
        cuts = sorted({rng.randrange(1, max(2, len(text))) for _ in range(rng.randint(1, 6))})
        bounds = [0, *cuts, len(text)]
        out.append([text[a:b] for a, b in itertools.pairwise(bounds) if b > a])
    return out


TEXTS = [
    "<r>think first</r>then answer",
    "<r>a</r> middle <c>f</c> <r>b</r> end",
    "lead <r>open at the end",
    "<r>x < y and </ r> is not a marker</r>done",
]


@pytest.mark.parametrize("text", TEXTS)
def test_reasoning_keeps_the_contract_under_every_split(text: str) -> None:
    assert check_splits(toy(), text, splits(text)) == []


def test_reasoning_is_reassembled_beside_content() -> None:
    text = "<r>a</r> middle <c>f</c> <r>b</r> end"
    parsed = toy().parse(text)
    assert parsed.reasoning == "ab"
    assert parsed.content == "middle end"
    assert [call.name for call in parsed.tool_calls] == ["f"]
    # Reasoning is output text, not framing: the framing is the markup and the
    # whitespace around the call and the reasoning.
    framed = "".join(text[span.start : span.end] for span in parsed.framing)
    assert framed == "<r></r>  <c>f</c> <r></r>"


def test_reasoning_that_is_not_the_output_is_caught() -> None:
    _, violations = check_stream(toy(mislabel=True), ["<r>quiet</r>done"])
    assert any(v.clause == 5 for v in violations), violations


def test_reasoning_that_ends_with_the_start_of_its_closer_is_a_leak() -> None:
    text = "<r>ab</r>"
    checker = DeltaChecker(MARKERS)
    checker.observe("<r>ab</", [Delta(reasoning="ab</")])
    checker.observe("r>", [])
    violations = checker.finish([], framing=(Span(0, 3), Span(5, 9)))
    assert any(v.clause == 4 and "'</'" in v.message for v in violations), violations
    assert text == checker.output


def test_reasoning_that_differs_between_splits_is_caught() -> None:
    class Flaky(ReasoningToy):
        def stream(self) -> ReasoningStream:
            stream = ReasoningStream(self)
            stream.toy = ReasoningToy(self.context, mislabel=self.calls == 1)
            self.calls += 1
            return stream

        calls = 0

    parser = Flaky(toy().context)
    _, violations = check_stream(parser, ["<r>abc</r>"])
    assert any(v.clause == 1 and "reasoning differs" in v.message for v in violations)


def test_held_text_taken_back_is_content_when_the_family_fails() -> None:
    class Failing(ReasoningStream):
        def piece(self, text: str, start: int) -> None:
            if "!" in text:
                raise RuntimeError("the toy breaks on '!'")
            super().piece(text, start)

    class FailingToy(ReasoningToy):
        def stream(self) -> ReasoningStream:
            return Failing(self)

    parser = FailingToy(toy().context)
    stream = parser.stream()
    deltas: list[Delta] = [*stream.feed("ok </"), *stream.feed("! tail")]
    deltas += stream.finish()
    content = "".join(d.content for d in deltas)
    assert content == "ok </! tail"
    assert [e.name for e in stream.events] == [EventName.INTERNAL_ERROR]


def test_unhold_keeps_earlier_held_text() -> None:
    stream = toy().stream()
    assert isinstance(stream, ReasoningStream)
    stream.hold("abc", 0)
    stream.hold("def", 3)
    stream.unhold(4)
    assert stream.held == "abcd"


@pytest.mark.parametrize("text", TEXTS)
def test_a_family_that_handles_none_keeps_reasoning_and_makes_calls_content(
    text: str,
) -> None:
    parsed = toy("none").parse(text)
    assert parsed.tool_calls == ()
    assert check_splits(toy("none"), text, splits(text, 10)) == []


def test_calls_under_none_are_content_with_their_markup() -> None:
    parsed = toy("none").parse("<r>why</r>ok <c>f</c>")
    assert parsed.reasoning == "why"
    assert parsed.content == "ok <c>f</c>"
    assert EventName.UNPARSED_MARKUP in [e.name for e in parsed.events]


def test_open_call_under_none_is_a_family_bug() -> None:
    stream = toy("none").stream()
    with pytest.raises(RuntimeError, match="none"):
        stream.open_call("f")


def feed_all(parser: Parser, steps: Sequence[str]) -> list[Delta]:
    stream = parser.stream()
    return [d for step in steps for d in stream.feed(step)] + stream.finish()


def test_reasoning_is_released_as_it_arrives() -> None:
    stream = toy().stream()
    first = stream.feed("<r>one ")
    assert "".join(d.reasoning for d in first) == "one "


def test_reasoning_of_other_whitespace_is_reasoning_in_the_parse_and_the_checker() -> None:
    # Only JSON's four whitespace characters make text blank (toolcall.is_blank): a
    # no-break space is reasoning, in the parse and in what the checker reassembles.
    text = "<r>\u00a0</r>done"
    assert toy().parse(text).reasoning == "\u00a0"
    assert check_splits(toy(), text, splits(text)) == []
