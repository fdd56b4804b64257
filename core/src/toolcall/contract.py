"""The streaming delta contract (DESIGN §4) as executable code.

:class:`DeltaChecker` watches one stream: ``observe`` after every ``feed``,
``finish`` with what ``Stream.finish`` returned and the stream's events and
framing. It checks clauses 2 to 6 and reassembles the parse the deltas add up to.
The vLLM bridge runs it on live streams when ``TOOLCALL_CHECK_CONTRACT=1``
(:func:`enabled_from_env`); :func:`check_stream` and :func:`check_splits` run it
on a parser and add clause 1 (chunking invariance against the one-shot parse);
:func:`check_cost` measures clause 7.

How the clauses are read (every comparison that says "modulo whitespace" removes
all whitespace from both sides first, so the parser's whitespace policy around
calls does not matter):

1. the reassembled stream equals ``parser.parse(whole text)``: content and reasoning
   (whitespace-only is ``None``), call count and order, names and byte-identical
   arguments (ids are random and not compared);
2. indices 0, 1, 2, ... in order; call i's first entry carries a non-empty id and
   its name; later entries carry neither; one entry per index per ``Delta``; a
   call's fragments are contiguous: none after content (or another call) was
   emitted behind them (content in a delta that also carries entries is not
   ordered against them, and does not count);
3. the arguments of every call with no ``malformed-arguments`` or ``truncated``
   event are a JSON object text;
4. content holds no marker unless the stream recorded ``unparsed-markup`` (clause 5
   wins over 4; reasoning may quote markup: a format's reasoning is text it does not
   read); text released at a step, content or reasoning, never ends with the start
   of a marker that the output at that point goes on to complete and that ends up as
   framing (the parser released part of a marker as text);
5. ``Parsed.framing`` is sorted, non-overlapping and inside the output, and the
   output outside it equals the text the stream released, modulo whitespace:
   content and reasoning (text a format marks as reasoning, DESIGN §6), in the
   order of the deltas (within one ``Delta``, reasoning before content);
6. after each ``feed``, that text covers the non-framing output so far, modulo
   whitespace, except for a held-back tail of fewer non-whitespace characters than
   the longest marker, or a tail that starts with a marker or with one of the
   parser's ``unmarked_starts`` (a candidate call that may still turn out to be
   unreadable markup or prose, which may be held until ``finish``), or one that
   starts inside the span of an ``unparsed-markup`` event (markup the stream read
   and returned as content: an unfinished element of a call in formats without
   markers), or content after the last call announced so far while no content
   after that call was released yet (it may wait until the call's arguments end:
   clause 2 wins over 6); a call is announced by the end of the step in which its
   framing ends;
7. see :func:`check_cost`.

Clause 6 needs to know which framing holds which call. Calls are not positioned
in ``Parsed``, so the checker places each call at the last occurrence of its name
inside framing that precedes the place found for the next call. That is never
earlier than the call's real place when the name stands verbatim in its call's
markup (true of every family's format unless the name is escaped), so the check
can miss a late call but does not blame a prompt one.
"""

from __future__ import annotations

import json
import os
import sys
import tracemalloc
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import accumulate
from types import FrameType
from typing import Any

from toolcall.parser import Parser
from toolcall.types import Delta, Event, Parsed, Span, ToolCall, is_blank

__all__ = [
    "CLAUSES",
    "DeltaChecker",
    "Violation",
    "check_cost",
    "check_splits",
    "check_stream",
    "compare_parses",
    "enabled_from_env",
]

CLAUSES: Mapping[int, str] = {
    1: "chunking invariance",
    2: "call identity",
    3: "arguments",
    4: "no leaks",
    5: "nothing lost",
    6: "promptness",
    7: "cost",
}

#: Events that excuse a call whose arguments are not a JSON object (clause 3).
ARGUMENT_DEFECTS = frozenset({"malformed-arguments", "truncated"})
#: The event that lets markers stand in content (clause 5 wins over 4).
UNPARSED = "unparsed-markup"

#: Repeats of one kind of violation listed before the rest are only counted.
_LISTED = 3
_SNIPPET = 40


@dataclass(frozen=True)
class Violation:
    """One breach of the delta contract.

    ``step`` is the index of the ``feed`` call it was seen at; ``len(steps)``
    stands for ``finish()``; ``None`` for a property of the whole stream.
    """

    clause: int
    message: str
    step: int | None = None

    def __str__(self) -> str:
        where = "" if self.step is None else f" (step {self.step})"
        return f"§4.{self.clause} {CLAUSES.get(self.clause, '?')}{where}: {self.message}"


def enabled_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """``TOOLCALL_CHECK_CONTRACT=1``: the vLLM bridge checks every stream at run time."""
    value = (environ if environ is not None else os.environ).get("TOOLCALL_CHECK_CONTRACT", "")
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _visible(text: str) -> int:
    """The number of non-whitespace characters of ``text``."""
    return len(text) - sum(map(str.isspace, text))


def _squeeze(text: str) -> str:
    return "".join(text.split())


def _show(text: str, start: int = 0) -> str:
    """A short quotation of ``text`` from ``start``."""
    piece = text[max(start, 0) : max(start, 0) + _SNIPPET]
    return repr(piece) + ("..." if len(text) > start + _SNIPPET else "")


def _first_difference(a: str, b: str) -> int:
    if a == b:
        return -1
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


@dataclass
class _Call:
    index: int
    id: str
    name: str
    announced: int
    arguments: list[str] = field(default_factory=list)


class DeltaChecker:
    """Checks one stream's deltas against clauses 2-6 as they arrive.

    Use it beside a live stream::

        checker = DeltaChecker(parser.markers, openers=parser.unmarked_starts)
        for text in engine_steps:
            checker.observe(text, stream.feed(text))
        checker.finish(stream.finish(), events=stream.events, framing=stream.framing)
        checker.violations, checker.parsed

    ``observe`` reports what one step decides on its own (clause 2); everything that
    needs the final framing and events is decided by ``finish``. Both return the
    violations they found. The work per step is proportional to the step (plus the
    markers' length); ``finish`` is linear in the output.
    """

    def __init__(
        self, markers: Iterable[str], *, promptness: bool = True, openers: Iterable[str] = ()
    ) -> None:
        self.markers: tuple[str, ...] = tuple(dict.fromkeys(m for m in markers if m))
        #: Strings that may begin a call without a start marker (``Parser.unmarked_starts``).
        self.openers: tuple[str, ...] = tuple(dict.fromkeys(o for o in openers if o))
        self.promptness = promptness
        self._hold = max((len(m) for m in self.markers), default=1) - 1
        self._text: list[str] = []
        self._ends: list[int] = []  # output length after each step (feed steps, then finish)
        self._length = 0
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._said: list[str] = []  # content and reasoning, in the order they were released
        self._shown: list[int] = []  # non-whitespace released characters after each step
        self._visible = 0
        self._tails: list[str] = []  # end of the released text, at steps that released some
        self._tail = ""
        self._calls: dict[int, _Call] = {}
        self._next = 0
        self._last = -1
        self._open = -1  # the call that may still get fragments (none after content)
        self._listed: dict[tuple[int, str], int] = {}
        self._violations: list[Violation] = []
        self._parsed: Parsed | None = None

    @property
    def violations(self) -> tuple[Violation, ...]:
        return tuple(self._violations)

    @property
    def steps(self) -> int:
        """The number of ``observe`` calls so far."""
        return len(self._text)

    @property
    def output(self) -> str:
        return "".join(self._text)

    @property
    def parsed(self) -> Parsed:
        """What the deltas add up to, with the stream's events and framing."""
        if self._parsed is None:
            msg = "the stream has not finished yet"
            raise RuntimeError(msg)
        return self._parsed

    def observe(self, step_text: str, deltas: Sequence[Delta]) -> list[Violation]:
        """Record one ``feed(step_text)`` and the deltas it returned."""
        if self._parsed is not None:
            msg = "observe() after finish()"
            raise RuntimeError(msg)
        self._text.append(step_text)
        self._length += len(step_text)
        return self._take(deltas)

    def finish(
        self,
        final_deltas: Sequence[Delta],
        *,
        events: Sequence[Event] = (),
        framing: Sequence[Span] = (),
    ) -> list[Violation]:
        """Record ``finish()``'s deltas and check everything that needs the whole stream."""
        if self._parsed is not None:
            msg = "finish() called twice"
            raise RuntimeError(msg)
        found = len(self._violations)
        self._take(final_deltas)
        content = "".join(self._content)
        reasoning = "".join(self._reasoning)
        self._parsed = Parsed(
            content=None if is_blank(content) else content,
            tool_calls=tuple(
                ToolCall(call.id, call.name, "".join(call.arguments))
                for _, call in sorted(self._calls.items())
            ),
            events=tuple(events),
            framing=tuple(framing),
            reasoning=None if is_blank(reasoning) else reasoning,
        )
        _Final(self, content, reasoning, "".join(self._said), self._parsed).run()
        for (clause, _), count in self._listed.items():
            if count > _LISTED:
                more = count - _LISTED
                self._violations.append(Violation(clause, f"... and {more} more like the above"))
        return self._violations[found:]

    def report(self, clause: int, kind: str, message: str, step: int | None) -> None:
        """Record a violation; after a few of one kind, only count the rest."""
        key = (clause, kind)
        count = self._listed.get(key, 0) + 1
        self._listed[key] = count
        if count <= _LISTED:
            self._violations.append(Violation(clause, message, step))

    def _take(self, deltas: Sequence[Delta]) -> list[Violation]:
        found = len(self._violations)
        step = len(self._ends)
        released: list[str] = []
        for delta in deltas:
            if (delta.content or delta.reasoning) and not delta.tool_calls:
                # Content ends the open call's fragments. A delta that carries both
                # says nothing of their order, so it is given the benefit of the doubt.
                self._open = -1
            if delta.reasoning:
                self._reasoning.append(delta.reasoning)
                released.append(delta.reasoning)
            if delta.content:
                self._content.append(delta.content)
                released.append(delta.content)
            self._identity(delta, step)
        text = "".join(released)
        self._ends.append(self._length)
        if text:
            self._said.append(text)
            self._visible += _visible(text)
            if self._hold:
                self._tail = (self._tail + text)[-self._hold :]
        self._shown.append(self._visible)
        self._tails.append(self._tail if text else "")
        return self._violations[found:]

    def _identity(self, delta: Delta, step: int) -> None:
        """Clause 2 for the entries of one ``Delta``."""
        seen: set[int] = set()
        for entry in delta.tool_calls:
            index = entry.index
            if index in seen:
                self.report(2, "twice", f"two entries for call {index} in one delta", step)
            seen.add(index)
            call = self._calls.get(index)
            if call is None:
                if index != self._next:
                    self.report(
                        2,
                        "order",
                        f"call {index} appears where call {self._next} was due "
                        "(indices must be 0, 1, 2, ... in order, without gaps)",
                        step,
                    )
                if not entry.id:
                    self.report(2, "id", f"the first entry of call {index} has no id", step)
                if entry.name is None:
                    self.report(
                        2,
                        "name",
                        f"the first entry of call {index} has no name (id and the complete "
                        "name come together)",
                        step,
                    )
                call = _Call(index, entry.id or "", entry.name or "", step)
                self._calls[index] = call
                self._next = max(self._next, index + 1)
            else:
                if entry.id is not None or entry.name is not None:
                    what = " and ".join(
                        f"{key} {value!r}"
                        for key, value in (("id", entry.id), ("name", entry.name))
                        if value is not None
                    )
                    self.report(
                        2,
                        "repeat",
                        f"a later entry of call {index} carries {what} (the name must be "
                        "complete in the first entry; later entries carry only arguments)",
                        step,
                    )
                if index != self._open:
                    after = (
                        f"call {self._open} was announced"
                        if self._open > index
                        else "content was emitted"
                    )
                    self.report(
                        2,
                        "contiguous",
                        f"arguments for call {index} after {after} (a call's fragments are "
                        "contiguous: nothing may come between them)",
                        step,
                    )
            self._last = max(self._last, index)
            self._open = index
            if entry.arguments:
                call.arguments.append(entry.arguments)


class _Final:
    """The checks of :meth:`DeltaChecker.finish`, over the whole output (linear)."""

    def __init__(
        self, checker: DeltaChecker, content: str, reasoning: str, said: str, parsed: Parsed
    ) -> None:
        self.c = checker
        self.content = content
        self.reasoning = reasoning
        self.said = said  # content and reasoning in the order they were released
        self.parsed = parsed
        self.text = checker.output
        self.feeds = len(checker._ends) - 1  # the last entry is finish()
        self.calls = [call for _, call in sorted(checker._calls.items())]

    def run(self) -> None:
        self.arguments()
        self.blocks = self.framing()
        starts = [start for start, _ in self.blocks]
        self.block_starts = starts
        self.block_ends = [end for _, end in self.blocks]
        # Output positions of the non-whitespace characters outside framing.
        self.outside = array(
            "q",
            (i for a, b in self.gaps() for i in range(a, b) if not self.text[i].isspace()),
        )
        self.markers_in_content()
        self.marker_starts()
        self.lost()
        if self.c.promptness:
            self.unparsed = self.unparsed_spans()
            self.placed = self.placements()
            self.prompt_content()
            self.prompt_calls()

    # clause 3
    def arguments(self) -> None:
        excused = {
            event.call_index for event in self.parsed.events if event.name in ARGUMENT_DEFECTS
        }
        for call in self.calls:
            if call.index in excused:
                continue
            arguments = "".join(call.arguments)
            try:
                value: Any = json.loads(arguments)
            except ValueError as error:
                problem = f"are not JSON ({error})"
            else:
                if isinstance(value, dict):
                    continue
                problem = f"are a JSON {type(value).__name__}, not an object"
            self.c.report(
                3,
                "json",
                f"the arguments of call {call.index} ({call.name!r}) {problem}, and no "
                f"malformed-arguments or truncated event excuses it: {_show(arguments)}",
                None,
            )

    # clause 5: the framing itself
    def framing(self) -> list[tuple[int, int]]:
        """Validate the framing; return it clipped and merged into blocks."""
        size = len(self.text)
        spans: list[tuple[int, int]] = []
        previous = 0
        for span in self.parsed.framing:
            if span.start > span.end or span.start < 0 or span.end > size:
                self.c.report(
                    5,
                    "span",
                    f"framing span [{span.start}, {span.end}) is not a range of the "
                    f"output ({size} characters)",
                    None,
                )
            elif span.start < previous:
                self.c.report(
                    5,
                    "span",
                    f"framing span [{span.start}, {span.end}) overlaps or precedes the "
                    "span before it (spans must be sorted and disjoint)",
                    None,
                )
            previous = max(previous, span.end)
            start, end = max(span.start, 0), min(span.end, size)
            if start < end:
                spans.append((start, end))
        spans.sort()
        blocks: list[tuple[int, int]] = []
        for start, end in spans:
            if blocks and start <= blocks[-1][1]:
                blocks[-1] = (blocks[-1][0], max(blocks[-1][1], end))
            else:
                blocks.append((start, end))
        return blocks

    def gaps(self) -> Iterable[tuple[int, int]]:
        position = 0
        for start, end in self.blocks:
            yield position, start
            position = end
        yield position, len(self.text)

    def in_framing(self, start: int, end: int) -> bool:
        """Whether ``[start, end)`` meets framing."""
        block = bisect_right(self.block_ends, start)
        return block < len(self.blocks) and self.blocks[block][0] < end

    def inside_block(self, start: int, end: int) -> int:
        """The block that holds ``[start, end)`` whole, or -1."""
        block = bisect_right(self.block_starts, start) - 1
        if block >= 0 and end <= self.blocks[block][1]:
            return block
        return -1

    # clause 4
    def markers_in_content(self) -> None:
        if any(event.name == UNPARSED for event in self.parsed.events):
            return
        for marker in self.c.markers:
            at = self.content.find(marker)
            if at >= 0:
                self.c.report(
                    4,
                    "marker",
                    f"content contains the marker {marker!r} (at content offset {at}: "
                    f"{_show(self.content, at - 10)}) and the stream recorded no "
                    f"{UNPARSED} event",
                    None,
                )

    def marker_starts(self) -> None:
        """Content released at a step must not end with the start of a framing marker."""
        c = self.c
        for step, tail in enumerate(c._tails):
            if not tail:
                continue
            shown, end = c._shown[step], c._ends[step]
            behind = bisect_left(self.outside, end)
            for marker in c.markers:
                leaked = self.leaked_start(marker, tail, shown, behind, end)
                if leaked:
                    c.report(
                        4,
                        "prefix",
                        f"the stream released {leaked!r} as text, the start of the marker "
                        f"{marker!r} that the output completes and the parser then read as "
                        "framing",
                        step,
                    )
                    break

    def leaked_start(self, marker: str, tail: str, shown: int, behind: int, end: int) -> str:
        for size in range(min(len(marker) - 1, len(tail)), 0, -1):
            start = marker[:size]
            if not tail.endswith(start):
                continue
            if shown <= behind:
                # Content so far matches the output outside framing: it ends right
                # after the output character of its last visible character.
                if shown == 0 or start[-1].isspace():
                    continue
                at = self.outside[shown - 1] + 1 - size
            else:
                # Content ran ahead of the output outside framing: it took framing text,
                # presumably the end of what it had read.
                at = end - size
            if (
                at >= 0
                and self.text.startswith(marker, at)
                and self.in_framing(at, at + len(marker))
            ):
                return start
        return ""

    # clause 5: nothing lost, nothing invented
    def lost(self) -> None:
        expected = _squeeze("".join(self.text[a:b] for a, b in self.gaps()))
        got = _squeeze(self.said)
        at = _first_difference(got, expected)
        if at < 0:
            return
        if at == len(got):
            offset = self.outside[at]
            self.c.report(
                5,
                "lost",
                f"output text from offset {offset} ({self.show_outside(offset)}) is neither "
                "content, reasoning nor framing: it was lost",
                None,
            )
            return
        said_at = [i for i, ch in enumerate(self.said) if not ch.isspace()][at]
        if at == len(expected):
            where = "after the end of the output outside framing"
        else:
            offset = self.outside[at]
            where = f"where the output at offset {offset} has {self.show_outside(offset)}"
        self.c.report(
            5,
            "differs",
            f"the released text (content and reasoning) from offset {said_at} "
            f"({_show(self.said, said_at)}) is not the output outside framing (modulo "
            f"whitespace): it differs {where}",
            None,
        )

    def show_outside(self, offset: int) -> str:
        """A quotation of the output from ``offset`` to the framing after it."""
        block = bisect_right(self.block_starts, offset)
        stop = self.blocks[block][0] if block < len(self.blocks) else len(self.text)
        return _show(self.text[offset:stop].rstrip())

    # clause 6
    def placements(self) -> list[tuple[int, int]]:
        """Each call's framing block and name position (see the module docstring),
        ``(-1, -1)`` where it cannot be placed (nor can the calls before it)."""
        found: list[tuple[int, int]] = [(-1, -1)] * len(self.calls)
        limit = len(self.text)
        for number in range(len(self.calls) - 1, -1, -1):
            block, at = self.place(self.calls[number].name, limit)
            if block < 0:
                break
            found[number] = (block, at)
            limit = at
        return found

    def prompt_content(self) -> None:
        c = self.c
        counts = array("q", accumulate((0 if ch.isspace() else 1 for ch in self.text), initial=0))
        announced = [call.announced for call in self.calls]
        for step in range(self.feeds):
            shown, end = c._shown[step], c._ends[step]
            behind = bisect_left(self.outside, end)
            if shown >= behind:
                continue
            held = self.outside[shown]
            if counts[end] - counts[held] <= c._hold:
                continue  # a possible marker prefix
            if any(self.text.startswith(marker, held) for marker in (*c.markers, *c.openers)):
                continue  # a candidate call, possibly unreadable markup
            if self.in_unparsed(held):
                continue  # markup the stream read, then returned as content
            if self.inside_open_call(step, shown, held, announced):
                continue
            c.report(
                6,
                "content",
                f"after {end} characters of output, content from offset {held} "
                f"({_show(self.text[:end], held)}) is still held back: "
                f"{behind - shown} visible characters, more than a marker prefix "
                f"(at most {c._hold})",
                step,
            )

    def unparsed_spans(self) -> tuple[list[int], list[int]]:
        """The spans of ``unparsed-markup`` events (sorted starts, running maximum of
        the ends): text a stream read as markup and then returned as content."""
        spans = sorted(
            (event.span.start, event.span.end)
            for event in self.parsed.events
            if event.name == UNPARSED and event.span is not None
        )
        starts = [start for start, _ in spans]
        ends = list(accumulate((end for _, end in spans), max))
        return starts, ends

    def in_unparsed(self, offset: int) -> bool:
        starts, ends = self.unparsed
        at = bisect_right(starts, offset) - 1
        return at >= 0 and offset < ends[at]

    def inside_open_call(self, step: int, shown: int, held: int, announced: list[int]) -> bool:
        """Whether the held content may wait for a call's arguments to end (clause 2
        wins over 6): the last call announced by ``step`` stands before it, and no
        content after that call was released yet."""
        latest = bisect_right(announced, step) - 1
        if latest < 0:
            return False
        at = self.placed[latest][1]
        released_before = shown == 0 or self.outside[shown - 1] < at
        return 0 <= at < held and released_before

    def prompt_calls(self) -> None:
        c = self.c
        feed_ends = c._ends[: self.feeds]
        for call, (block, _) in zip(reversed(self.calls), reversed(self.placed), strict=True):
            if block < 0:
                return  # unplaced: no sound bound for this call or the ones before
            ended = bisect_left(feed_ends, self.blocks[block][1])
            if ended < self.feeds and call.announced > ended:
                when = (
                    "at finish()" if call.announced >= self.feeds else f"at step {call.announced}"
                )
                c.report(
                    6,
                    "call",
                    f"call {call.index} ({call.name!r}) was announced only {when}, but its framing "
                    f"ended at offset {self.blocks[block][1]} in step {ended}",
                    ended,
                )

    def place(self, name: str, limit: int) -> tuple[int, int]:
        """The block and position of the last occurrence of ``name`` inside framing
        that ends by ``limit``: as it reads, or else in JSON's ASCII spelling (a name
        the model wrote with escapes, ``"time_\\ud83d\\udd50"``)."""
        if not name:
            return -1, -1
        found = self.place_spelling(name, limit)
        escaped = json.dumps(name)[1:-1]
        if found[0] < 0 and escaped != name:
            found = self.place_spelling(escaped, limit)
        return found

    def place_spelling(self, name: str, limit: int) -> tuple[int, int]:
        while True:
            at = self.text.rfind(name, 0, limit)
            if at < 0:
                return -1, -1
            block = self.inside_block(at, at + len(name))
            if block >= 0:
                return block, at
            limit = at + len(name) - 1


def _normal(content: str | None) -> str | None:
    return None if content is None or is_blank(content) else content


def compare_parses(streamed: Parsed, reference: Parsed) -> list[Violation]:
    """Clause 1: what a stream added up to against the one-shot parse."""
    found: list[Violation] = []
    for what in ("content", "reasoning"):
        mine, theirs = _normal(getattr(streamed, what)), _normal(getattr(reference, what))
        if mine == theirs:
            continue
        if mine is None or theirs is None:
            detail = f"stream {_show(mine or '')}, one-shot {_show(theirs or '')}"
        else:
            at = _first_difference(mine, theirs)
            detail = f"from offset {at}: stream {_show(mine, at)}, one-shot {_show(theirs, at)}"
        found.append(Violation(1, f"{what} differs from the one-shot parse {detail}"))
    if len(streamed.tool_calls) != len(reference.tool_calls):
        found.append(
            Violation(
                1,
                f"the stream has {len(streamed.tool_calls)} calls "
                f"{[call.name for call in streamed.tool_calls]}, the one-shot parse "
                f"{len(reference.tool_calls)} {[call.name for call in reference.tool_calls]}",
            )
        )
    pairs = zip(streamed.tool_calls, reference.tool_calls, strict=False)
    for index, (ours, one_shot) in enumerate(pairs):
        if ours.name != one_shot.name:
            found.append(
                Violation(
                    1,
                    f"call {index} is named {ours.name!r} in the stream, "
                    f"{one_shot.name!r} in the one-shot parse",
                )
            )
        if ours.arguments != one_shot.arguments:
            at = _first_difference(ours.arguments, one_shot.arguments)
            found.append(
                Violation(
                    1,
                    f"the arguments of call {index} differ from the one-shot parse from "
                    f"offset {at}: stream {_show(ours.arguments, at)}, one-shot "
                    f"{_show(one_shot.arguments, at)}",
                )
            )
    return found


def _run(
    parser: Parser,
    steps: Sequence[str],
    token_ids: Sequence[Sequence[int]] | None,
    promptness: bool,
) -> DeltaChecker:
    if token_ids is not None and len(token_ids) != len(steps):
        msg = f"{len(token_ids)} token id lists for {len(steps)} steps"
        raise ValueError(msg)
    stream = parser.stream()
    checker = DeltaChecker(parser.markers, promptness=promptness, openers=parser.unmarked_starts)
    for number, text in enumerate(steps):
        ids = token_ids[number] if token_ids is not None else ()
        checker.observe(text, stream.feed(text, ids))
    checker.finish(stream.finish(), events=stream.events, framing=stream.framing)
    return checker


def check_stream(
    parser: Parser,
    steps: Sequence[str],
    *,
    token_ids: Sequence[Sequence[int]] | None = None,
    promptness: bool = True,
) -> tuple[Parsed, list[Violation]]:
    """Feed a fresh ``parser.stream()`` step by step, finish, and check clauses 1-6.

    Returns what the deltas add up to and the violations. Set ``promptness=False``
    for outputs where a documented recovery needs the whole call (``bare-json``).
    """
    checker = _run(parser, steps, token_ids, promptness)
    violations = list(checker.violations)
    violations += compare_parses(checker.parsed, parser.parse("".join(steps)))
    return checker.parsed, violations


def check_splits(
    parser: Parser,
    text: str,
    splits: Iterable[Sequence[str]],
    *,
    promptness: bool = True,
) -> list[Violation]:
    """:func:`check_stream` for every split of ``text``, each against one one-shot parse.

    Each message names its split; a violation that several splits share in the same
    words is listed once, with the other splits counted.
    """
    reference = parser.parse(text)
    found: dict[tuple[int, str, int | None], tuple[Violation, list[int]]] = {}
    for number, steps in enumerate(splits):
        if "".join(steps) != text:
            msg = f"split {number} does not add up to the text"
            raise ValueError(msg)
        checker = _run(parser, steps, None, promptness)
        for violation in [*checker.violations, *compare_parses(checker.parsed, reference)]:
            key = (violation.clause, violation.message, violation.step)
            found.setdefault(key, (violation, []))[1].append(number)
    result = []
    for violation, numbers in found.values():
        also = f" (also splits {', '.join(map(str, numbers[1:]))})" if len(numbers) > 1 else ""
        message = f"split {numbers[0]}: {violation.message}{also}"
        result.append(Violation(violation.clause, message, violation.step))
    return result


# clause 7


class _LineCounter:
    """A ``sys.settrace`` function that counts the events of every Python frame."""

    def __init__(self) -> None:
        self.events = 0

    def __call__(self, frame: FrameType, event: str, arg: object) -> _LineCounter:
        del frame, event, arg
        self.events += 1
        return self


def _count_lines(work: Callable[[], object]) -> int:
    counter = _LineCounter()
    previous = sys.gettrace()
    sys.settrace(counter)
    try:
        work()
    finally:
        sys.settrace(previous)
    return counter.events


def _count_bytes(work: Callable[[], object]) -> int:
    # A tracer installed around the checker (a coverage tool, a debugger) allocates on
    # every line it sees: that would be counted as the parser's, so it is off meanwhile.
    previous = sys.gettrace()
    sys.settrace(None)
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        work()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        sys.settrace(previous)
    return max(peak - before, 0)


def _unmeasured(work: Callable[[], object]) -> int:
    work()
    return 0


def _per_delta(
    parser: Parser, steps: Sequence[str], meter: Callable[[Callable[[], object]], int]
) -> list[int]:
    stream = parser.stream()
    costs = [meter(partial(stream.feed, text)) for text in steps]
    stream.finish()
    return costs


def _tail_mean(costs: Sequence[int]) -> float:
    tail = costs[len(costs) - max(len(costs) // 4, 1) :]
    return sum(tail) / len(tail) if tail else 0.0


def check_cost(
    parser: Parser,
    make_output: Callable[[int], Sequence[str]],
    *,
    sizes: tuple[int, int] = (250, 1000),
    tolerance: float = 2.0,
) -> list[Violation]:
    """Clause 7: the work per delta must not grow with the text so far.

    ``make_output(n)`` returns the steps of an output of size ``n`` (say ``n`` tokens
    of arguments, one token per step); the steps should look alike at both sizes.
    The method is deterministic, with no clock: each ``feed`` is measured twice, in
    separate runs,

    * in Python trace events (``sys.settrace``: calls, lines, returns), which sees any
      rescan written in Python;
    * in bytes allocated at the peak of the call (``tracemalloc``). Line counting
      cannot see a rescan done by C code (a regex over the buffer, ``str.find``), but
      such a rescan needs the whole buffer as one string, and building that string
      copies it at every delta (``self.buffer += text``, ``"".join(chunks)``, a
      slice): the copy shows up here.

    For each measure it compares the mean over the last quarter of the deltas at the
    larger size with the same at the smaller size and flags growth beyond
    ``tolerance`` (plus a small absolute slack). Blind spot: a C-level scan over a
    buffer grown in place without a copy (a ``bytearray``, a realloc'd local string)
    costs neither lines nor allocations. ``finish()`` is not measured.
    """
    small, large = sizes
    _per_delta(parser, make_output(small), _unmeasured)  # warm caches (regex, imports)
    found: list[Violation] = []
    started = not tracemalloc.is_tracing()
    try:
        for unit, meter, slack in (
            ("Python trace events", _count_lines, 8.0),
            ("bytes allocated", _count_bytes, 512.0),
        ):
            if meter is _count_bytes and started:
                tracemalloc.start()
            before = _tail_mean(_per_delta(parser, make_output(small), meter))
            after = _tail_mean(_per_delta(parser, make_output(large), meter))
            if after > tolerance * before + slack:
                found.append(
                    Violation(
                        7,
                        f"{unit} per delta grow with the text so far: {before:.0f} per delta "
                        f"at the end of output size {small}, {after:.0f} at the end of output "
                        f"size {large} (allowed: {tolerance} times plus {slack:.0f})",
                    )
                )
    finally:
        if started and tracemalloc.is_tracing():
            tracemalloc.stop()
    return found
