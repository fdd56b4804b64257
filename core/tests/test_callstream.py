"""The call-stream machine (toolcall.callstream), through a toy family built on it.

The toy format: ``<c>NAME|ARGS</c>``. The name runs to ``|``; a name with a space is
not a name. The arguments are taken as written, except that ``!...;`` inside them is
an aside: content, not arguments (so that content meets an open call). A name
``boom`` and the text ``BOOM`` inside arguments make the toy raise, standing in for a
bug of a family. Expected values below follow from this description and from the
machine's rules (DESIGN §4 and §6), not from a run.
"""

from __future__ import annotations

import itertools
import json
import logging
import random
import re
from collections.abc import Callable, Sequence

import pytest
import regex

from toolcall import CallStream, Delta, EventName, Parser, ParserContext, Request, ToolCallDelta
from toolcall.contract import check_cost, check_splits, check_stream

START, END = "<c>", "</c>"
_ARGS_STOP = regex.compile(r"[!;<M]")  # M: the end of BOOM must reach the hooks


class ToyParser(Parser):
    name = "toy"
    markers = (START, END)

    def stream(self) -> ToyStream:
        return ToyStream(self)


class ToyStream(CallStream):
    def __init__(self, parser: ToyParser) -> None:
        super().__init__(parser, markers=(START, END))
        self.state = "out"
        self.name: list[str] = []
        self.aside = False
        self.hook_calls = 0

    def on_marker(self, marker: str, start: int) -> None:
        self.hook_calls += 1
        if self.state == "out":
            if marker == START:
                self.hold(marker, start)
                self.name = []
                self.state = "name"
            else:
                self.event(EventName.UNPARSED_MARKUP, "end marker outside a call")
                self.content(marker, start)
        elif self.state == "name":
            self._unreadable()
            self.on_marker(marker, start)
        else:
            self.frame(start, start + len(marker))
            self.close_call()
            self.state = "out"
            if marker == START:
                self.on_marker(marker, start)

    def on_text(self, text: str, start: int) -> None:
        self.hook_calls += 1
        if self.state == "out":
            self.content(text, start)
        elif self.state == "name":
            self._name(text, start)
        else:
            self._args(text, start)

    def on_end(self) -> None:
        if self.state == "name":
            self._unreadable()
        elif self.state == "args":
            self.event(EventName.TRUNCATED, "no end marker")

    def _name(self, text: str, start: int) -> None:
        bar = text.find("|")
        cut = len(text) if bar < 0 else bar + 1
        self.hold(text[:cut], start)
        self.name.append(text[: cut - 1] if bar >= 0 else text)
        name = "".join(self.name)
        if " " in name:
            self._unreadable()
            self.content(text[cut:], start + cut)
            return
        if bar < 0:
            return
        if name == "boom":
            raise RuntimeError("the toy cannot read this name")
        self.settle()
        self.open_call(name)
        self.state = "args"
        self.fast_arguments(_ARGS_STOP)
        if cut < len(text):
            self._args(text[cut:], start + cut)

    def _unreadable(self) -> None:
        self.event(EventName.UNPARSED_MARKUP, "no readable name")
        self.release()
        self.state = "out"

    def _args(self, text: str, start: int) -> None:
        if "BOOM" in self.arguments_text() + text:
            raise RuntimeError("the toy broke inside the arguments")
        pos = 0
        while pos < len(text):
            mark = text.find(";" if self.aside else "!", pos)
            end = len(text) if mark < 0 else mark
            if self.aside:
                self.content(text[pos:end], start + pos)
            else:
                self.frame(start + pos, start + end)
                self.arguments(text[pos:end])
            if mark < 0:
                break
            self.frame(start + mark, start + mark + 1)
            self.aside = not self.aside
            pos = mark + 1
        if self.aside:
            self.slow()
        else:
            self.fast_arguments(_ARGS_STOP)


def toy(**request: object) -> ToyParser:
    body = {"tools": [], "tool_choice": "auto", **request}
    return ToyParser(ParserContext(request=Request.from_openai(body)))


def feed_all(parser: Parser, steps: Sequence[str]) -> list[Delta]:
    stream = parser.stream()
    deltas = [d for step in steps for d in stream.feed(step)]
    return deltas + stream.finish()


def splits(text: str, count: int = 60) -> list[list[str]]:
    rng = random.Random(text)
    out = [list(text), [text]]
    for _ in range(count):
        cuts = sorted({rng.randrange(1, max(2, len(text))) for _ in range(rng.randint(1, 6))})
        bounds = [0, *cuts, len(text)]
        out.append([text[a:b] for a, b in itertools.pairwise(bounds) if b > a])
    return out


CLEAN = [
    'Hi <c>f|{"a": 1}</c> bye',
    '<c>f|{}</c><c>g|{"b": [1, 2]}</c>',
    "  \n  text only  \n ",
    'a</c>b <c>f|{"x": "y"}</c>',
    '<c>f|{"a":!note;1}</c> after',
    '<c>bad name|{"a": 1}</c> tail',
    '<c>f|{"a":',
    "<c>never",
]


@pytest.mark.parametrize("text", CLEAN)
def test_every_split_keeps_the_contract(text: str) -> None:
    assert check_splits(toy(), text, splits(text)) == []


def test_a_call_reads_as_index_id_name_then_arguments() -> None:
    parsed = toy().parse('Hi <c>f|{"a": 1}</c> bye')
    assert parsed.content == "Hi bye"
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("f", '{"a": 1}')]
    assert parsed.tool_calls[0].id.startswith("chatcmpl-tool-")
    assert parsed.events == ()


def test_one_step_merges_its_pieces_in_order() -> None:
    deltas = toy().stream().feed('A <c>f|{"a": 1}</c> B')
    assert len(deltas) == 3
    assert deltas[0] == Delta("A")
    (entry,) = deltas[1].tool_calls
    assert (entry.index, entry.name, entry.arguments) == (0, "f", '{"a": 1}')
    assert entry.id
    assert deltas[2] == Delta(" B")


def test_content_inside_open_arguments_waits_until_they_end() -> None:
    text = '<c>f|{"a":!note;1}</c> after'
    for steps in splits(text):
        deltas = feed_all(toy(), steps)
        kinds = [("content" if d.content else "call") for d in deltas]
        # The aside comes out after every fragment of the call, never between two.
        last_call = max(i for i, kind in enumerate(kinds) if kind == "call")
        first_content = kinds.index("content")
        assert first_content > last_call, steps
        assert "".join(d.content for d in deltas) == "note after"
    parsed = toy().parse(text)
    assert parsed.tool_calls[0].arguments == '{"a":1}'


def test_arguments_that_are_not_a_json_object_are_malformed() -> None:
    parsed = toy().parse('<c>f|{"a": </c><c>g|[1]</c><c>h|{"n": NaN}</c>')
    assert [(e.name, e.call_index) for e in parsed.events] == [
        (EventName.MALFORMED_ARGUMENTS, 0),
        (EventName.MALFORMED_ARGUMENTS, 1),
        (EventName.MALFORMED_ARGUMENTS, 2),
    ]


def test_a_truncated_call_is_not_also_malformed() -> None:
    parsed = toy().parse('<c>f|{"a":')
    assert [c.arguments for c in parsed.tool_calls] == ['{"a":']
    assert [e.name for e in parsed.events] == [EventName.TRUNCATED]


def test_held_text_is_released_verbatim_when_it_is_no_call() -> None:
    parsed = toy().parse("x <c>bad name|rest</c>")
    assert parsed.content == "x <c>bad name|rest</c>"
    assert parsed.tool_calls == ()
    assert toy().parse("<c>never").content == "<c>never"


def test_tool_choice_none_makes_every_character_content() -> None:
    text = 'Sure. <c>f|{"a": 1}</c>'
    parser = toy(tool_choice="none")
    for steps in splits(text):
        deltas = feed_all(parser, steps)
        assert "".join(d.content for d in deltas) == text
        assert not any(d.tool_calls for d in deltas)
    events = parser.parse(text).events
    assert [e.name for e in events] == [EventName.UNPARSED_MARKUP]


def test_an_internal_error_makes_the_rest_content_and_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = 'A <c>boom|{"a": 1}</c> and <c>f|{}</c> more'
    caplog.set_level(logging.ERROR, logger="toolcall")
    parsed = toy().parse(text)
    assert parsed.tool_calls == ()
    assert parsed.content == text
    assert [e.name for e in parsed.events] == [EventName.INTERNAL_ERROR]
    assert len(caplog.records) == 1
    assert "'toy' failed" in caplog.records[0].getMessage()


@pytest.mark.parametrize("size", [1, 3, 100])
def test_an_internal_error_inside_arguments_loses_nothing(size: int) -> None:
    text = '<c>f|{"a": 1, BOOM 2}</c> tail'
    steps = [text[i : i + size] for i in range(0, len(text), size)]
    deltas = feed_all(toy(), steps)
    arguments = "".join(e.arguments for d in deltas for e in d.tool_calls)
    content = "".join(d.content for d in deltas)
    # What was emitted as arguments before the failure, then the rest as content,
    # adds up to the call's text and what follows it.
    assert arguments + content == '{"a": 1, BOOM 2}</c> tail'


def test_feed_after_finish_and_non_text_input_are_clear_errors() -> None:
    stream = toy().stream()
    with pytest.raises(TypeError, match="not bytes"):
        stream.feed(b"x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not NoneType"):
        stream.feed(None)  # type: ignore[arg-type]
    assert stream.feed("x") == [Delta("x")]
    assert stream.finish() == []
    assert stream.finish() == []
    with pytest.raises(RuntimeError, match=r"feed\(\) after finish\(\)"):
        stream.feed("y")


def test_the_fast_path_emits_argument_text_without_the_hooks() -> None:
    stream = toy().stream()
    stream.feed("<c>f|{")
    before = stream.hook_calls
    assert stream.feed('"abc def"') == [Delta("", (ToolCallDelta(0, None, None, '"abc def"'),))]
    assert stream.hook_calls == before
    stream.feed("!")  # the stop pattern sends this step through the hooks
    assert stream.hook_calls == before + 1


class _FindsBang:
    """A stop that is no compiled pattern."""

    def search(self, string: str, /) -> object | None:
        return "!" if "!" in string else None


@pytest.mark.parametrize(
    ("stop", "stops_at_math"),
    [
        (re.compile("!"), False),
        (regex.compile("!"), False),
        (regex.compile(r"\p{Sm}|!"), True),  # syntax re does not know
        (regex.compile("!", regex.IGNORECASE), False),
        (re.compile("! # a comment", re.VERBOSE), False),
        (_FindsBang(), False),
    ],
    ids=["re", "regex", "regex-only", "regex-flags", "re-verbose", "search-object"],
)
@pytest.mark.parametrize("delta", ["abc", "a!c", "a<", "+"])
def test_a_fast_path_takes_what_neither_its_stop_nor_a_marker_start_finds(
    stop: re.Pattern[str] | regex.Pattern[str] | _FindsBang, stops_at_math: bool, delta: str
) -> None:
    stream = toy().stream()
    stream.feed("<c>f|{")
    stream.fast_arguments(stop)
    before = stream.hook_calls
    stream.feed(delta)
    found = "!" in delta or "<" in delta or (delta == "+" and stops_at_math)
    assert stream.hook_calls == before + found


def test_framing_and_content_account_for_every_character() -> None:
    text = " A \n<c>f|{}</c>\n B "
    _, violations = check_stream(toy(), [text])
    assert violations == []
    parsed = toy().parse(text)
    outside = "".join(
        text[a:b]
        for a, b in zip(
            [0, *(s.end for s in parsed.framing)],
            [*(s.start for s in parsed.framing), len(text)],
            strict=True,
        )
    )
    # Leading, trailing and call-adjacent whitespace is framing (the content gate).
    assert outside == parsed.content == "A\n B"


def test_whitespace_only_output_is_null_content_in_both_modes() -> None:
    for text in ["   ", "\n\t\r ", "\u00a0"]:
        streamed = "".join(d.content for d in feed_all(toy(), list(text)))
        parsed = toy().parse(text).content
        assert (streamed or None) == parsed, repr(text)


def test_cost_per_delta_does_not_grow_with_whitespace_or_arguments() -> None:
    assert check_cost(toy(), lambda n: [" "] * n) == []
    assert check_cost(toy(), lambda n: ["x", *[" "] * n]) == []
    assert check_cost(toy(), lambda n: ["<c>f|{", *['"ab", '] * n]) == []
    assert check_cost(toy(), lambda n: ["<c>f|{", *["  "] * n]) == []


def test_many_calls_cost_linear_bookkeeping() -> None:
    text = "".join(f"<c>f{i}|{{}}</c>" for i in range(2000))
    parsed = toy().parse(text)
    assert len(parsed.tool_calls) == 2000
    assert all(json.loads(c.arguments) == {} for c in parsed.tool_calls)


class _ArmsOnce(ToyStream):
    """A family that arms its fast path once per call and counts on it staying armed."""

    armed = False

    def fast_arguments(
        self,
        stop: re.Pattern[str] | regex.Pattern[str] | _FindsBang,
        escape: Callable[[str], str] | None = None,
        *,
        split_escapes: bool = False,
    ) -> None:
        if not self.armed:
            self.armed = True
            super().fast_arguments(stop, escape, split_escapes=split_escapes)


def test_a_fast_path_waits_out_a_marker_start_and_stays_armed() -> None:
    # While the scanner holds what may start a marker the next delta is scanned; once
    # that text is read the fast path is on again, though the family armed it once.
    stream = _ArmsOnce(toy())
    steps = ["<c>f|{", '"x', " <", "b", "c", '"}', "</c>"]
    hooks = []
    deltas = []
    for step in steps:
        before = stream.hook_calls
        deltas += stream.feed(step)
        hooks.append(stream.hook_calls - before)
    deltas += stream.finish()
    assert hooks[1:5] == [0, 1, 1, 0]  # '"x' fast, " <" and "b" scanned, "c" fast again
    arguments = "".join(c.arguments for d in deltas for c in d.tool_calls)
    assert arguments == '{"x <bc"}'


class _ArmedAtStart(ToyStream):
    """A family whose content takes a fast path from the first delta on."""

    def __init__(self, parser: ToyParser) -> None:
        super().__init__(parser)
        self.fast_content(regex.compile("<"))


def test_tool_choice_none_sees_markup_split_between_deltas_with_a_fast_path_armed() -> None:
    # "<" is scanned and held; the deltas after it must reach the scanner too, or the
    # marker they complete goes unseen.
    text = 'Sure <c>f|{"a": 1}</c> done'
    stream = _ArmedAtStart(toy(tool_choice="none"))
    deltas = [d for char in text for d in stream.feed(char)] + stream.finish()
    assert "".join(d.content for d in deltas) == text
    assert [e.name for e in stream.events] == [EventName.UNPARSED_MARKUP]


class _HoldsBlanks(ToyStream):
    """A family whose fast argument text is a string body that keeps back the blanks
    and the escape's backslash a delta ends in (written by ``writes``, if set)."""

    writes: Callable[[str], str] | None = None

    def fast_arguments(
        self,
        stop: re.Pattern[str] | regex.Pattern[str] | _FindsBang,
        escape: Callable[[str], str] | None = None,
        *,
        split_escapes: bool = False,
        hold_blanks: bool = False,
    ) -> None:
        super().fast_arguments(stop, self.writes, split_escapes=True, hold_blanks=True)


def _arguments(deltas: Sequence[Delta]) -> str:
    return "".join(c.arguments for d in deltas for c in d.tool_calls)


def test_blanks_that_end_a_fast_delta_go_out_with_the_next_on_the_fast_path() -> None:
    stream = _HoldsBlanks(toy())
    steps = ['<c>f|{"x', "  ", "\t", " y\\", " ", "z", '"}</c>']
    pieces, hooks = [], []
    for step in steps:
        before = stream.hook_calls
        pieces.append(_arguments(stream.feed(step)))
        hooks.append(stream.hook_calls - before)
    pieces.append(_arguments(stream.finish()))
    assert hooks[1:6] == [0] * 5  # all blank, blank, ending in "\", blank, "z": no hook
    assert pieces[1:6] == ["", "", "  \t y", "", "\\ z"]
    assert "".join(pieces) == '{"x' + "".join(steps[1:-1]) + '"}'


def test_blanks_kept_back_at_the_end_of_the_output_reach_the_hooks() -> None:
    stream = _HoldsBlanks(toy())
    deltas = stream.feed('<c>f|{"x') + stream.feed(" \n")
    assert _arguments(deltas) == '{"x'
    before = stream.hook_calls
    deltas += stream.finish()
    assert stream.hook_calls == before + 1
    assert _arguments(deltas) == '{"x \n'
    assert EventName.TRUNCATED in [e.name for e in stream.events]


def _fails_on_boom(text: str) -> str:
    if "boom" in text:
        raise RuntimeError("the escape cannot write this")
    return text


class _EscapeFails(_HoldsBlanks):
    """A family whose escape of fast argument text fails on "boom"."""

    writes = staticmethod(_fails_on_boom)


def test_an_escape_that_fails_on_the_fast_path_loses_nothing_kept_back() -> None:
    # "boom\" fails in the escape after its backslash was kept back for the next delta:
    # both are content, though the output ends right after.
    stream = _EscapeFails(toy())
    deltas = stream.feed('<c>f|{"x') + stream.feed("boom\\")
    deltas += stream.finish()
    assert _arguments(deltas) == '{"x'
    assert "".join(d.content for d in deltas) == "boom\\"
    assert [e.name for e in stream.events if e.name == EventName.INTERNAL_ERROR] == [
        EventName.INTERNAL_ERROR
    ]
