"""The delta contract checker against a correct toy format and deliberately broken ones.

The toy format is ``<call>NAME JSON</call>``: NAME is ``[A-Za-z_][A-Za-z0-9_]*`` and
ends at a space, which commits the call; the arguments are the text up to
``</call>``, surrounding whitespace trimmed; everything else is content, verbatim.
A ``<call>`` whose name cannot be read, and a stray ``</call>``, are content too
(``unparsed-markup``). The correct stream below implements that plainly, holding
back only what could still grow into a marker; each broken stream changes one
thing, and each test asserts that the checker names the clause it breaks.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import sys
from collections.abc import Callable, Sequence
from types import FrameType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall.contract import (
    DeltaChecker,
    Violation,
    check_cost,
    check_splits,
    check_stream,
    enabled_from_env,
)
from toolcall.parser import Parser, Stream
from toolcall.types import Delta, Event, Span, ToolCallDelta

START, END = "<call>", "</call>"
NAME = re.compile(r"[A-Za-z0-9_]*")
VALID_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def held(text: str, markers: Sequence[str]) -> int:
    """The length of the longest end of ``text`` that could still grow into a marker."""
    for size in range(min(len(text), max(map(len, markers)) - 1), 0, -1):
        if any(len(m) > size and m.startswith(text[-size:]) for m in markers):
            return size
    return 0


class Out:
    """The deltas of one feed: content and call entries, one entry per index."""

    def __init__(self, *, merge: bool = True) -> None:
        self.merge = merge
        self.deltas: list[Delta] = []
        self.content: list[str] = []
        self.entries: list[ToolCallDelta] = []

    def text(self, text: str) -> None:
        if text:
            self.content.append(text)

    def entry(self, entry: ToolCallDelta) -> None:
        last = self.entries[-1] if self.entries else None
        if self.merge and last is not None and last.index == entry.index:
            self.entries[-1] = ToolCallDelta(
                last.index, last.id, last.name, last.arguments + entry.arguments
            )
        else:
            self.entries.append(entry)

    def cut(self) -> None:
        delta = Delta("".join(self.content), tuple(self.entries))
        if delta:
            self.deltas.append(delta)
        self.content, self.entries = [], []

    def done(self) -> list[Delta]:
        self.cut()
        return self.deltas


class ToyStream:
    """The correct stream of the toy format."""

    merge = True

    def __init__(self, parser: Parser) -> None:
        self.parser = parser
        self.state = "text"
        self.buffer = ""  # unreleased input: never more than a marker plus whitespace
        self.offset = 0  # output offset of buffer[0]
        self.name = ""
        self.call_start = 0
        self.index = -1
        self.arguments: list[str] = []
        self.started = False
        self._events: list[Event] = []
        self._framing: list[Span] = []

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    @property
    def framing(self) -> tuple[Span, ...]:
        return tuple(self._framing)

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        self.buffer += text
        out = Out(merge=self.merge)
        self.run(out)
        return out.done()

    def finish(self) -> list[Delta]:
        out = Out(merge=self.merge)
        if self.state == "text":
            self.release(out, self.consume(len(self.buffer)))
        elif self.state == "name":
            self.unreadable(out)
        else:
            body = self.buffer.rstrip() if self.started else self.buffer.strip()
            self.emit(out, body)
            self.consume(len(self.buffer))
            self._events.append(Event("truncated", self.index))
            self._framing.append(Span(self.call_start, self.offset))
        return self.last(out)

    def last(self, out: Out) -> list[Delta]:
        return out.done()

    def consume(self, size: int) -> str:
        taken, self.buffer = self.buffer[:size], self.buffer[size:]
        self.offset += size
        return taken

    def run(self, out: Out) -> None:
        while True:
            if self.state == "text":
                starts, ends = self.buffer.find(START), self.buffer.find(END)
                if starts < 0 and ends < 0:
                    self.release(
                        out, self.consume(len(self.buffer) - held(self.buffer, (START, END)))
                    )
                    return
                if ends >= 0 and (starts < 0 or ends < starts):
                    self.release(out, self.consume(ends + len(END)))
                    self._events.append(Event("unparsed-markup", detail="stray end marker"))
                    continue
                self.release(out, self.consume(starts))
                self.call_start = self.offset
                self.consume(len(START))
                self.state, self.name = "name", ""
            elif self.state == "name":
                run = NAME.match(self.buffer)
                assert run is not None
                self.name += self.consume(run.end())
                if not self.buffer:
                    return
                if self.buffer[0] == " " and VALID_NAME.fullmatch(self.name):
                    self.consume(1)
                    self.index += 1
                    self.announce(out)
                    self.state, self.started, self.arguments = "arguments", False, []
                else:
                    self.unreadable(out)
            else:
                if not self.started:
                    self.consume(len(self.buffer) - len(self.buffer.lstrip()))
                at = self.buffer.find(END)
                if at >= 0:
                    self.emit(out, self.buffer[:at].rstrip())
                    self.consume(at + len(END))
                    self.close(out)
                    continue
                body = self.buffer[: len(self.buffer) - held(self.buffer, (END,))].rstrip()
                self.emit(out, body)
                self.consume(len(body))
                return

    def release(self, out: Out, text: str) -> None:
        out.text(text)

    def unreadable(self, out: Out) -> None:
        self.release(out, START + self.name)
        self._events.append(Event("unparsed-markup", detail="no readable name"))
        self.state = "text"

    def announce(self, out: Out) -> None:
        out.entry(ToolCallDelta(self.index, self.parser.new_call_id(), self.name))

    def emit(self, out: Out, arguments: str) -> None:
        if arguments:
            self.started = True
            self.arguments.append(arguments)
            out.entry(ToolCallDelta(self.index, arguments=arguments))

    def close(self, out: Out) -> None:
        self._framing.append(Span(self.call_start, self.offset))
        try:
            value = json.loads("".join(self.arguments))
        except ValueError:
            value = None
        if not isinstance(value, dict):
            self._events.append(Event("malformed-arguments", self.index))
        self.state = "text"


class Toy(Parser):
    name = "toy"
    markers = (START, END)
    stream_class: type[ToyStream] = ToyStream

    def stream(self) -> Stream:
        return self.stream_class(self)


def toy(stream_class: type[ToyStream] = ToyStream) -> Toy:
    parser = Toy()
    parser.stream_class = stream_class
    return parser


# Broken streams, one defect each.


class LeaksMarker(ToyStream):
    """Releases each call's start marker and name as content as well."""

    def announce(self, out: Out) -> None:
        out.text(f"{START}{self.name} ")
        super().announce(out)


class LeaksMarkerStart(ToyStream):
    """Releases what could still grow into a marker, and keeps it to look for the marker."""

    def run(self, out: Out) -> None:
        if self.state == "text" and START not in self.buffer and END not in self.buffer:
            size = held(self.buffer, (START, END))
            out.text(self.consume(len(self.buffer) - size))
            out.text(self.buffer)
            return
        super().run(out)


class SplitsName(ToyStream):
    """Announces the first letter of the name, then the rest in a later entry."""

    def announce(self, out: Out) -> None:
        out.entry(ToolCallDelta(self.index, self.parser.new_call_id(), self.name[:1]))
        out.cut()
        out.entry(ToolCallDelta(self.index, name=self.name[1:]))


class SkipsIndex(ToyStream):
    """Numbers calls 0, 2, 4, ..."""

    def announce(self, out: Out) -> None:
        out.entry(ToolCallDelta(2 * self.index, self.parser.new_call_id(), self.name))

    def emit(self, out: Out, arguments: str) -> None:
        if arguments:
            self.started = True
            self.arguments.append(arguments)
            out.entry(ToolCallDelta(2 * self.index, arguments=arguments))


class DuplicateIndex(ToyStream):
    """Puts the announcement and the first arguments of a call in two entries of one delta."""

    merge = False


class NonJsonArguments(ToyStream):
    """Adds a trailing comma to every call's arguments, and records nothing."""

    def close(self, out: Out) -> None:
        out.entry(ToolCallDelta(self.index, arguments=","))
        self._framing.append(Span(self.call_start, self.offset))
        self.state = "text"


class DropsText(ToyStream):
    """Drops the content after a call (a bug vLLM's built-ins have)."""

    def release(self, out: Out, text: str) -> None:
        if self.index < 0:
            out.text(text)


class HoldsContent(ToyStream):
    """Releases all content at finish()."""

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        self.kept: list[str] = []

    def release(self, out: Out, text: str) -> None:
        self.kept.append(text)

    def last(self, out: Out) -> list[Delta]:
        out.text("".join(self.kept))
        return out.done()


class HoldsCalls(ToyStream):
    """Queues every call entry until finish()."""

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        self.queue: list[ToolCallDelta] = []

    def announce(self, out: Out) -> None:
        self.queue.append(ToolCallDelta(self.index, self.parser.new_call_id(), self.name))

    def emit(self, out: Out, arguments: str) -> None:
        if arguments:
            self.started = True
            self.arguments.append(arguments)
            self.queue.append(ToolCallDelta(self.index, arguments=arguments))

    def last(self, out: Out) -> list[Delta]:
        for entry in self.queue:
            out.entry(entry)
        return out.done()


class Diverges(ToyStream):
    """Re-serialises the arguments when a whole call arrives in one feed (as vLLM's
    non-streaming paths do), streams them raw otherwise."""

    whole = False

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        self.whole = START in text and END in text
        return super().feed(text, token_ids)

    def emit(self, out: Out, arguments: str) -> None:
        if not self.whole:
            super().emit(out, arguments)
        elif arguments:
            self.started = True
            self.arguments.append(arguments)

    def close(self, out: Out) -> None:
        if self.whole:
            raw = "".join(self.arguments)
            with contextlib.suppress(ValueError):
                raw = json.dumps(json.loads(raw))
            out.entry(ToolCallDelta(self.index, arguments=raw))
        super().close(out)


class NoUnparsedEvent(ToyStream):
    """Returns unreadable markup as content but records no event for it."""

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(e for e in self._events if e.name != "unparsed-markup")


class BadFraming(ToyStream):
    """Reports each call's framing one character too long."""

    @property
    def framing(self) -> tuple[Span, ...]:
        return tuple(Span(span.start, span.end + 1) for span in self._framing)


class RescansInPython(ToyStream):
    """Keeps the whole output and walks it character by character at every feed."""

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        self.everything = ""
        self.depth = 0

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        self.everything += text
        depth = 0
        for char in self.everything:
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
        self.depth = depth
        return super().feed(text, token_ids)


class RescansWithRegex(ToyStream):
    """Keeps the whole output and runs a regex over it at every feed (C code)."""

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        self.everything = ""
        self.calls = 0

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        self.everything += text
        self.calls = len(re.findall(r"<call>", self.everything))
        return super().feed(text, token_ids)


def clauses(violations: Sequence[Violation]) -> set[int]:
    return {violation.clause for violation in violations}


def per_char(text: str) -> list[str]:
    return list(text)


TWO_CALLS = 'Let me look. <call>search {"q": "cats", "n": 2}</call> and <call>fetch {}</call> ok.'


# The correct toy passes.


@pytest.mark.parametrize(
    "text",
    [
        TWO_CALLS,
        "no calls at all, a < b and c </ d",
        '<call>f {"a": [1, 2, {"b": null}]}</call>',
        "a <<call>f {}</call>",  # the first "<" is content, the second starts a marker
        "x <call>9lives {}</call> y",  # no readable name: content, unparsed-markup
        "stray </call> end marker",
        '<call>f {"a": </call>',  # malformed arguments, excused by the event
        '<call>f {"a": "trunc',  # cut off: truncated
        "<call>unfinished_name",
    ],
)
def test_correct_toy_passes_every_split(text: str) -> None:
    splits = [
        [text],
        per_char(text),
        [text[:5], text[5:]],
        [text[i : i + 3] for i in range(0, len(text), 3)],
    ]
    assert check_splits(toy(), text, splits) == []


def test_toy_reads_the_format() -> None:
    # Expected values come from the format definition, not from the toy's output.
    parsed, violations = check_stream(toy(), per_char(TWO_CALLS))
    assert violations == []
    assert parsed.content == "Let me look.  and  ok."
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [
        ("search", '{"q": "cats", "n": 2}'),
        ("fetch", "{}"),
    ]


def test_a_lone_less_than_before_a_marker_is_not_a_leak() -> None:
    # Content "a <" is released at step 0 while the output ends "<<": its "<" is the
    # first one, and the marker starts at the second.
    _, violations = check_stream(toy(), ["a <<", "call>f {}</call>"])
    assert violations == []


# Each broken stream is caught, by the clause it breaks.


def test_leaked_marker() -> None:
    _, violations = check_stream(toy(LeaksMarker), per_char(TWO_CALLS))
    assert 4 in clauses(violations)
    assert any("'<call>'" in v.message for v in violations if v.clause == 4)


def test_leaked_start_of_a_marker() -> None:
    _, violations = check_stream(toy(LeaksMarkerStart), ["hi <ca", "ll>f {}</call>"])
    leak = [v for v in violations if v.clause == 4]
    assert leak
    assert "'<ca'" in leak[0].message
    assert leak[0].step == 0


def test_unreadable_markup_without_its_event_is_a_leak() -> None:
    text = "x <call>9lives {}</call> y"
    _, violations = check_stream(toy(NoUnparsedEvent), [text])
    assert clauses(violations) == {4}
    _, violations = check_stream(toy(), [text])
    assert violations == []


def test_split_name() -> None:
    _, violations = check_stream(toy(SplitsName), per_char(TWO_CALLS))
    assert 2 in clauses(violations)
    assert any("name 'earch'" in v.message for v in violations)


def test_skipped_index() -> None:
    _, violations = check_stream(toy(SkipsIndex), [TWO_CALLS])
    assert any(
        v.clause == 2 and "call 2 appears where call 1 was due" in v.message for v in violations
    )


def test_two_entries_for_one_index_in_one_delta() -> None:
    _, violations = check_stream(toy(DuplicateIndex), [TWO_CALLS])
    assert any(v.clause == 2 and "two entries for call 0" in v.message for v in violations)


def test_non_json_arguments() -> None:
    _, violations = check_stream(toy(NonJsonArguments), [TWO_CALLS])
    assert clauses(violations) == {3}
    assert len(violations) == 2  # one per call


def test_dropped_text() -> None:
    _, violations = check_stream(toy(DropsText), [TWO_CALLS])
    lost = [v for v in violations if v.clause == 5]
    assert lost
    assert "('and')" in lost[0].message  # the text after the first call
    assert "lost" in lost[0].message


def test_framing_must_stay_inside_the_output() -> None:
    _, violations = check_stream(toy(BadFraming), ["a <call>f {}</call>"])
    assert any(v.clause == 5 and "is not a range of the output" in v.message for v in violations)


def test_held_content() -> None:
    steps = per_char(TWO_CALLS)
    _, violations = check_stream(toy(HoldsContent), steps)
    assert clauses(violations) == {6}
    # Documented recoveries may hold: the same stream passes without the promptness check.
    assert check_stream(toy(HoldsContent), steps, promptness=False)[1] == []


class HoldsUnparsedMarkup(HoldsContent):
    """Holds content, then says it was markup it could not read (with its span)."""

    covered = (0, None)  # the span of the event: the whole output by default

    def last(self, out: Out) -> list[Delta]:
        start, end = self.covered
        span = Span(start, self.offset if end is None else end)
        self._events.append(Event("unparsed-markup", None, "held, then content", span))
        return super().last(out)


class HoldsUnparsedMarkupElsewhere(HoldsUnparsedMarkup):
    covered = (1, None)


def test_held_unparsed_markup_is_excused_inside_its_span() -> None:
    """Formats without start markers hold candidate markup (a pythonic ``[``, an
    unfinished value) until they know it is content: the span of the
    ``unparsed-markup`` event they record says which text that was."""
    steps = per_char(TWO_CALLS)
    assert check_stream(toy(HoldsUnparsedMarkup), steps)[1] == []
    _, violations = check_stream(toy(HoldsUnparsedMarkupElsewhere), steps)
    assert clauses(violations) == {6}
    assert "from offset 0 " in violations[0].message


def test_held_calls() -> None:
    steps = per_char(TWO_CALLS)
    _, violations = check_stream(toy(HoldsCalls), steps)
    late = [v for v in violations if v.clause == 6]
    assert [v.message.split(" was")[0] for v in late] == ["call 1 ('fetch')", "call 0 ('search')"]
    assert check_stream(toy(HoldsCalls), steps, promptness=False)[1] == []


def test_one_shot_and_streaming_diverge() -> None:
    text = 'go <call>f {"a":   1}</call>'
    assert check_stream(toy(Diverges), [text])[1] == []  # one piece: nothing to compare
    violations = check_splits(toy(Diverges), text, [[text], per_char(text)])
    assert clauses(violations) == {1}
    assert "split 1" in violations[0].message


def test_splits_must_add_up() -> None:
    with pytest.raises(ValueError, match="does not add up"):
        check_splits(toy(), "abc", [["ab"]])


# The incremental checker on its own, as the vLLM bridge runs it.


def test_checker_reports_identity_at_the_step() -> None:
    checker = DeltaChecker(Toy.markers)
    assert checker.observe("<call>f ", [Delta(tool_calls=(ToolCallDelta(0, "id-0", "f"),))]) == []
    wrong = checker.observe(
        "{}</call>", [Delta(tool_calls=(ToolCallDelta(0, "id-0", arguments="{}"),))]
    )
    assert [(v.clause, v.step) for v in wrong] == [(2, 1)]
    with pytest.raises(RuntimeError):
        _ = checker.parsed
    checker.finish([], framing=[Span(0, 17)])
    assert checker.parsed.tool_calls[0].arguments == "{}"
    assert len(checker.violations) == 1
    with pytest.raises(RuntimeError):
        checker.observe("", [])


def test_checker_lists_few_of_one_kind() -> None:
    checker = DeltaChecker(())
    entries = tuple(ToolCallDelta(5, "x", "f") for _ in range(10))
    checker.observe("", [Delta(tool_calls=entries)])
    checker.finish([])
    twice = [v for v in checker.violations if "two entries" in v.message]
    assert len(twice) == 3
    assert any("and 6 more" in v.message for v in checker.violations)


def test_enabled_from_env() -> None:
    assert enabled_from_env({"TOOLCALL_CHECK_CONTRACT": "1"})
    assert not enabled_from_env({"TOOLCALL_CHECK_CONTRACT": "0"})
    assert not enabled_from_env({})


# Cost.


def long_output(n: int) -> list[str]:
    return ["Sure. ", "<call>", "search ", '{"q": "', *(["word "] * n), '"}', "</call>", " Done."]


def test_cost_of_the_correct_toy_is_flat() -> None:
    assert check_cost(toy(), long_output) == []


def test_cost_catches_a_python_rescan() -> None:
    violations = check_cost(toy(RescansInPython), long_output)
    assert any(v.clause == 7 and "Python trace events" in v.message for v in violations)


def test_cost_catches_a_regex_rescan_by_its_copies() -> None:
    # A regex over the whole buffer runs in C: line counting does not see it, the
    # copy of the buffer it needs (``everything += text``) does.
    violations = check_cost(toy(RescansWithRegex), long_output)
    assert [v.message.split(" per")[0] for v in violations] == ["bytes allocated"]


class Tracer:
    """Counts Python trace events (calls, lines, returns) while installed."""

    def __init__(self) -> None:
        self.events = 0

    def __call__(self, frame: FrameType, event: str, arg: object) -> Tracer:
        self.events += 1
        return self


def trace_events(work: Callable[[], object]) -> int:
    tracer, previous = Tracer(), sys.gettrace()
    sys.settrace(tracer)
    try:
        work()
    finally:
        sys.settrace(previous)
    return tracer.events


@pytest.mark.parametrize("stream_class", [ToyStream, HoldsContent, LeaksMarker])
def test_the_checker_itself_is_linear(stream_class: type[ToyStream]) -> None:
    # Four times the output costs the checker (with the parser) four times the work,
    # for a correct stream and for broken ones whose violations repeat at every step.
    def cost(n: int) -> int:
        steps = long_output(n)
        return trace_events(lambda: check_stream(toy(stream_class), steps))

    small, large = cost(500), cost(2000)
    assert large < 4.4 * small


# Properties: the correct toy passes under random splits of random outputs.

ALPHABET = "ab <>/cl\n{}\"'"
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(ALPHABET, max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
OBJECTS = st.dictionaries(st.text(ALPHABET, max_size=4), VALUES, max_size=3)
PADDING = st.sampled_from(["", " ", "\n", "  \n "])
CALLS = st.builds(
    lambda name, args, left, right: (
        f"{START}{name} {left}{json.dumps(args, ensure_ascii=False)}{right}{END}"
    ),
    NAMES,
    OBJECTS,
    PADDING,
    PADDING,
)
DEFECTS = st.sampled_from(
    [
        START,
        END,
        "<ca",
        "</cal",
        "<call>1x {}</call>",
        '<call>f {"a": </call>',
        "<call> {}",
        "<call>f ",
    ]
)
NOISE = st.text(ALPHABET, max_size=12)
PLAIN = st.text(ALPHABET.replace("<", ""), max_size=12)  # cannot start a marker
OUTPUTS = st.lists(st.one_of(NOISE, CALLS, DEFECTS), max_size=6).map("".join)


@st.composite
def split(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=len(text) // 2 + 1)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=300, deadline=None)
@given(st.data(), OUTPUTS)
def test_property_correct_toy_passes_random_splits(data: st.DataObject, text: str) -> None:
    steps = data.draw(split(text))
    _, violations = check_stream(toy(), steps)
    assert violations == []


@settings(max_examples=200, deadline=None)
@given(
    st.data(), st.lists(st.tuples(NOISE.filter(lambda s: "<" not in s), CALLS), max_size=4), NOISE
)
def test_property_toy_output_is_what_was_written(
    data: st.DataObject, pieces: list[tuple[str, str]], end: str
) -> None:
    text = "".join(noise + call for noise, call in pieces) + end
    parsed, violations = check_stream(toy(), data.draw(split(text)))
    assert violations == []
    content = "".join(noise for noise, _ in pieces) + end
    assert parsed.content == (content if content.strip() else None)
    assert [json.loads(call.arguments) for call in parsed.tool_calls] == [
        json.loads(call[call.index(" ") + 1 : -len(END)]) for _, call in pieces
    ]


@settings(max_examples=100, deadline=None)
@given(PLAIN, st.integers(1, len(START) - 1))
def test_property_a_release_inside_a_marker_is_always_caught(before: str, cut: int) -> None:
    text = f"{before}{START}f {{}}{END}"
    cut += len(before)
    _, violations = check_stream(toy(LeaksMarkerStart), [text[:cut], text[cut:]])
    assert 4 in clauses(violations)
