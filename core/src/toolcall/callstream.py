"""The call-stream machine: the one stream every family is built on (DESIGN §3.6).

A family subclasses :class:`CallStream` and describes its format in three hooks,
:meth:`~CallStream.on_text`, :meth:`~CallStream.on_marker` and
:meth:`~CallStream.on_end`; the machine owns everything else, once:

* **scanning**: the output is split at the family's markers (held back only while
  a suffix could still grow into one) and handed to the hooks with offsets;
* **calls**: :meth:`~CallStream.open_call` numbers a call and emits its id and
  complete name together; :meth:`~CallStream.arguments` appends argument text;
  :meth:`~CallStream.close_call` ends it and records ``malformed-arguments`` when
  the arguments of an otherwise sound call are not a strict JSON object;
* **contiguity** (DESIGN §4.2): content met while a call's arguments are open is
  deferred until they end, so no content ever separates two fragments of a call;
* **no marker across a call** (DESIGN §4.4): content released before a call and
  content released after it may join into a marker (``Done</tool`` + a call +
  ``_call>``); the machine records ``unparsed-markup`` when they do;
* **content**: the whitespace policy (:class:`~toolcall.scanning.ContentGate`),
  with every character it drops recorded as framing;
* **framing**: spans of the output read as markup, merged as they grow;
* **held text**: :meth:`~CallStream.hold` keeps text whose fate is not known yet,
  then :meth:`~CallStream.settle` makes it framing or :meth:`~CallStream.release`
  makes it content, verbatim;
* **output**: the pieces of one step, merged into as few deltas as keep their order;
* ``tool_choice: "none"``: every character is content, markup included;
* **never raise**: an internal error of the family records ``internal-error``, is
  logged once, and turns the rest of the output into content (nothing is lost);
* **fast paths**: a family that knows the next text is plain content or plain
  argument text until some character shows up (:meth:`~CallStream.fast_content`,
  :meth:`~CallStream.fast_arguments`) lets the machine skip scanning for it.

A minimal family (``<call>NAME {json}</call>``, an illustration)::

    class MyStream(CallStream):
        def __init__(self, parser):
            super().__init__(parser, markers=("<call>", "</call>"))

        def on_marker(self, marker, start):
            ...  # open a call at "<call>", close it at "</call>"

        def on_text(self, text, start):
            ...  # content outside calls, the name, the arguments inside

        def on_end(self):
            ...  # the output ended: decide what is still open
"""

from __future__ import annotations

import abc
import logging
import re
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar, Final, Protocol

import regex

from toolcall.scanning import (
    UNDECODED,
    ContentGate,
    JsonValueScanner,
    Markers,
    MarkerScanner,
    Text,
    TextParts,
    json_object_problem,
    string_body_stop,
)
from toolcall.types import WHITESPACE, Delta, Event, EventName, Span, ToolCallDelta

if TYPE_CHECKING:
    from toolcall.parser import Parser

__all__ = ["CallStream"]

logger = logging.getLogger("toolcall")

#: The ``index`` of a content piece and of a reasoning piece in the output buffer.
_CONTENT: Final = -1
_REASONING: Final = -2
#: Events after which a call's arguments are not expected to be a JSON object.
_EXCUSED: Final = frozenset({EventName.MALFORMED_ARGUMENTS, EventName.TRUNCATED})
#: What ``event()`` attaches an event to by default: the open call, if any.
_CURRENT: Final = -1


class _Search(Protocol):
    """A compiled pattern (``re`` or ``regex``): what the fast paths search with."""

    def search(self, string: str, /) -> object | None: ...


#: The flags of a ``regex`` pattern compiled without any: such a pattern that ``re`` can
#: compile means the same to ``re`` (which searches a short text in a third of the time).
_REGEX_DEFAULT_FLAGS: Final = regex.compile("").flags


class _Both:
    """Finds something where either pattern does (stops ``re`` cannot join into one)."""

    __slots__ = ("first", "stop")

    def __init__(self, stop: _Search, first: re.Pattern[str]) -> None:
        self.stop = stop
        self.first = first

    def search(self, string: str, /) -> object | None:
        return self.stop.search(string) or self.first.search(string)


def _either(stop: _Search, first: re.Pattern[str] | None) -> _Search:
    return stop if first is None else _Both(stop, first)


def _joined(
    stop: re.Pattern[str] | regex.Pattern[str], first: re.Pattern[str] | None
) -> re.Pattern[str] | None:
    """One ``re`` pattern that finds something in a delta exactly where ``stop`` or
    ``first`` (the characters markers start with) does, if ``re`` can have one."""
    source, flags = stop.pattern, stop.flags
    if isinstance(stop, regex.Pattern):
        if flags != _REGEX_DEFAULT_FLAGS:
            return None
        flags = 0
    try:
        alone = re.compile(source, flags)
        if first is None:
            return alone
        if alone.flags & re.VERBOSE:  # a comment would swallow what follows
            return None
        # One alternation, so that ``re`` merges single-character branches into one set.
        return re.compile(f"{source}|{first.pattern}", flags)
    except re.error:  # syntax only ``regex`` knows
        return None


class _Output:
    """The pieces one step releases, merged into as few deltas as keep their order.

    A piece is ``(index, id, name, text)``: index ``-1`` is content, ``-2`` is
    reasoning, anything else a call's entry. Pieces of one call that follow each
    other become one entry; content or reasoning after call entries starts a new
    delta, so the order of the output survives.
    """

    __slots__ = ("pieces",)

    def __init__(self) -> None:
        self.pieces: list[tuple[int, str | None, str | None, str]] = []

    def take(self) -> list[Delta]:
        pieces = self.pieces
        if not pieces:
            return []
        self.pieces = []
        if len(pieces) == 1:  # the common case: one token, one piece
            index, call_id, name, text = pieces[0]
            if index == _CONTENT:
                return [Delta(text)]
            if index == _REASONING:
                return [Delta(reasoning=text)]
            return [Delta("", (ToolCallDelta(index, call_id, name, text),))]
        deltas: list[Delta] = []
        texts: list[str] = []
        kind = _CONTENT
        # A call's texts are joined once (a one-shot parse gives one call many pieces).
        calls: dict[int, tuple[str | None, str | None, list[str]]] = {}
        for index, call_id, name, text in pieces:
            if index < 0:
                if calls:
                    deltas.append(_calls_delta(calls))
                    calls = {}
                elif texts and index != kind:
                    deltas.append(_text_delta(kind, texts))
                    texts = []
                kind = index
                texts.append(text)
                continue
            if texts:
                deltas.append(_text_delta(kind, texts))
                texts = []
            entry = calls.get(index)
            if entry is None:
                # Without the empty text a call opens with, a one-shot parse's arguments
                # are often one text, which joins without a copy.
                calls[index] = (call_id, name, [text] if text else [])
            elif text:
                entry[2].append(text)
        if texts:
            deltas.append(_text_delta(kind, texts))
        if calls:
            deltas.append(_calls_delta(calls))
        return deltas


def _text_delta(kind: int, texts: list[str]) -> Delta:
    text = "".join(texts)
    return Delta(text) if kind == _CONTENT else Delta(reasoning=text)


def _calls_delta(calls: dict[int, tuple[str | None, str | None, list[str]]]) -> Delta:
    return Delta(
        "",
        tuple(
            ToolCallDelta(index, call_id, name, "".join(texts))
            for index, (call_id, name, texts) in calls.items()
        ),
    )


class CallStream(abc.ABC):
    """The incremental parse of one output; a family subclasses it (see the module).

    ``markers`` are the strings the output is split at before the hooks see it
    (``None``: the family reads the raw text itself in :meth:`on_text`).
    """

    #: Whether the family reads ``tool_choice: "none"`` itself. By default the machine
    #: passes every character through as content without calling the hooks; a family
    #: whose output holds more than calls (reasoning it marks itself) sets this, and then
    #: opens no call under ``"none"`` (:meth:`open_call` raises), returning its call
    #: markup as content.
    handles_none: ClassVar[bool] = False

    def __init__(self, parser: Parser, markers: Markers | Iterable[str] | None = None) -> None:
        self.parser = parser
        self.request = parser.request
        #: Whether the named recoveries of the policy apply (``TOOLCALL_STRICT_PARSING``).
        self.recover = not parser.context.strict_parsing
        if markers is not None and not isinstance(markers, Markers):
            markers = Markers(markers)
        self.__markers = markers
        self.__scanner = MarkerScanner(markers) if markers is not None else None
        joinable = markers
        if joinable is None and any(parser.markers):
            joinable = Markers(parser.markers)
        #: The markers content may not join into across a call (none can if all are
        #: one character long).
        self.__joinable = joinable if joinable is not None and joinable.longest > 1 else None
        self.__tail = ""  # the end of the content released so far, shorter than a marker
        self.__joining = False  # whether a call came after content and the join is open
        self.__since_call = 0  # content released since that call
        #: A delta with a character some marker starts with never takes a fast path.
        self.__marker_first = markers.first if markers is not None else None
        self.__no_calls = self.request.tool_choice == "none"
        self.__none = self.__no_calls and not self.handles_none
        #: Whether :meth:`finish` is running (the hooks see the end of the output).
        self.ending = False
        self.__out = _Output()
        self.__events: list[Event] = []
        #: Framing: the span that grows, and the ones before it, each one's start and
        #: end in turn (an array: a call's few spans as Python lists and ints took more
        #: bytes than the call's text).
        self.__span_start = self.__span_end = -1
        self.__spans = array("q")
        self.__gate = ContentGate()
        self.__gate_spans: list[list[int]] = []  # whitespace the gate holds back
        self.__pending: list[tuple[str, int]] = []
        self.__limbo: list[tuple[str, int]] = []  # held text taken back during this step
        self.__deferred: list[tuple[str, int]] = []
        self.__accounted = 0  # the end of the furthest text given a fate
        self.__position = 0
        self.__calls = 0
        self.__index = -1
        self.__args_open = False
        self.__args = TextParts()
        # The open call's argument text and its value, when one piece that a JSON scanner
        # decoded whole is all of it (close_call need not decode it again).
        self.__decoded: tuple[str, object] | None = None
        self.__call_events: set[str] = set()  # the names of the open call's events
        #: The fast path's search as the family armed it, and as the next delta may use it
        #: (not while the scanner holds a marker's start).
        self.__armed: _Search | None = None
        self.__fast: _Search | None = None
        #: Each fast path's stop joined with the markers' first characters, once a stream.
        self.__fast_searches: dict[re.Pattern[str] | regex.Pattern[str], _Search] = {}
        self.__string_searches: dict[tuple[str, str | None, str], re.Pattern[str]] = {}
        self.__fast_arguments = False
        self.__escape: Callable[[str], str] | None = None
        #: Whether fast argument text is a string body with backslash escapes, and
        #: whether its trailing blanks wait for what follows them.
        self.__split_escapes = False
        self.__hold_blanks = False
        #: The characters that, ending a fast delta, may be kept back for the next one.
        self.__carry_ends = ""
        #: What a fast delta ended in that waits for the next delta (see __keep_back).
        self.__carry = ""
        self.__finished = False
        self.__failed = False

    # -- the Stream protocol ------------------------------------------------------------

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self.__events)

    @property
    def framing(self) -> tuple[Span, ...]:
        spans = list(zip(self.__spans[::2], self.__spans[1::2], strict=True))
        if self.__span_end >= 0:
            spans.append((self.__span_start, self.__span_end))
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        return tuple(Span(start, end) for start, end in merged)

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        """Take the next piece of output; return what can be released now."""
        del token_ids  # every family reads its markers from the text (DESIGN §6)
        if type(text) is not str:
            msg = f"feed() takes the delta text as str, not {type(text).__name__}"
            raise TypeError(msg)
        if self.__finished:
            msg = "feed() after finish(): this stream's output has ended"
            raise RuntimeError(msg)
        start = self.__position
        self.__position = start + len(text)
        carry = self.__carry
        if carry:  # what the last delta ended in comes first
            text = carry + text
            start -= len(carry)
            self.__carry = ""
        fast = self.__fast
        if fast is None or not text or fast.search(text) is not None:
            return self.__step(text, start)
        # A fast path (the scanner holds nothing while one is on: see __step). The
        # scanner does not see this text; it is told how much went by when it next does.
        try:
            if not self.__fast_arguments:
                self.content(text, start)
                return self.__out.take()
            # The hot path: argument text with nothing in it to scan for.
            if text[-1] in self.__carry_ends:
                text = self.__keep_back(text)
                if not text:
                    return []
            # Written before the text is accounted for: if the family's escape fails,
            # the text is still undecided, and content.
            written = text if self.__escape is None else self.__escape(text)
            end = self.__accounted = start + len(text)
            # __add_span and TextParts.append, inline: a call each per token costs more.
            if self.__span_end == start:
                self.__span_end = end
            else:
                self.__add_span(start, end)
            args = self.__args
            parts = args.parts
            parts.append(written)
            if len(parts) >= args.limit:
                args.pack()
            return [Delta("", (ToolCallDelta(self.__index, None, None, written),))]
        except Exception as error:
            kept, self.__carry = self.__carry, ""  # what was kept back failed with it
            self.__fail(error, text + kept, start)
        self.__limbo = []
        return self.__out.take()

    def __step(self, text: str, start: int) -> list[Delta]:
        """A delta the hooks read (or the failed or ``"none"`` stream passes through)."""
        scanner = self.__scanner
        held_start, held = start, ""
        try:
            if self.__failed:
                self.content(text, start)
            else:
                if scanner is not None:
                    self.__catch_up(scanner, start)
                    held_start, held = scanner.position, scanner.held
                if self.__none:
                    self.__pass_through(text, start)
                else:
                    self.__hooks(text, start)
                # While a marker may be starting, the next delta must be scanned.
                self.__fast = None if scanner is not None and scanner.held else self.__armed
        except Exception as error:
            self.__fail(error, held + text, held_start)
        self.__limbo = []
        return self.__out.take()

    @staticmethod
    def __catch_up(scanner: MarkerScanner, offset: int) -> None:
        """Tell the scanner about the text fast paths let go by before ``offset``."""
        if not scanner.held and scanner.position < offset:
            scanner.skip(offset - scanner.position)

    def __hooks(self, text: str, start: int) -> None:
        """Hand ``text`` (from offset ``start``) to the family, split at its markers."""
        scanner = self.__scanner
        if scanner is None or scanner.pass_plain(text):
            self.on_text(text, start)
            return
        for segment in scanner.feed(text):
            if type(segment) is Text:
                self.on_text(segment.text, segment.start)
            else:
                self.on_marker(segment.marker, segment.start)  # type: ignore[union-attr]

    def finish(self) -> list[Delta]:
        """The output has ended: release everything still held back."""
        if self.__finished:
            return []
        self.__finished = True
        self.ending = True
        scanner = self.__scanner
        if not self.__failed and not self.__none:
            held_start, held = self.__position, ""
            try:
                carry, self.__carry = self.__carry, ""
                if scanner is not None:
                    self.__catch_up(scanner, self.__position - len(carry))
                    held_start, held = scanner.position, scanner.held
                if carry:
                    held_start, held = self.__position - len(carry), carry
                    self.__hooks(carry, held_start)
                if scanner is not None:
                    for segment in scanner.finish():
                        self.on_text(segment.text, segment.start)
                self.on_end()
                self.__wind_up()
            except Exception as error:
                self.__fail(error, held, held_start)
        self.__limbo = []
        self.__gate.finish()
        self.__drop_gate_spans()
        return self.__out.take()

    # -- the hooks a family implements --------------------------------------------------

    @abc.abstractmethod
    def on_text(self, text: str, start: int) -> None:
        """Output text (no marker in it) starting at offset ``start``."""

    def on_marker(self, marker: str, start: int) -> None:
        """One of the family's markers at offset ``start``; by default, text."""
        self.on_text(marker, start)

    @abc.abstractmethod
    def on_end(self) -> None:
        """The output ended (every held character has been handed to the hooks).

        Whatever the family leaves open is wound up by the machine: an open call
        is closed, held text is released as content."""

    # -- what a family calls: calls --------------------------------------------------------

    @property
    def index(self) -> int | None:
        """The index of the open call, or ``None``."""
        return self.__index if self.__index >= 0 else None

    @property
    def arguments_open(self) -> bool:
        """Whether the open call may still receive argument text."""
        return self.__args_open

    @property
    def calls(self) -> int:
        """How many calls were opened so far."""
        return self.__calls

    def open_call(self, name: str, arguments: str = "", call_id: str | None = None) -> int:
        """Commit a call: its index, an id (``call_id``, or a fresh one in the parser's
        style) and its complete name, with any argument text already known. Whitespace
        that the content gate held before it was framing. Returns the index."""
        if self.__no_calls:
            msg = 'open_call() under tool_choice "none"'
            raise RuntimeError(msg)
        if self.__index >= 0:
            self.close_call()
        index = self.__calls
        self.__calls = index + 1
        self.__index = index
        self.__args_open = True
        self.__args = TextParts(arguments)
        self.__decoded = None
        self.__call_events = set()
        self.__armed = self.__fast = None
        self.__gate.boundary()
        self.__drop_gate_spans()
        if self.__tail:
            self.__joining = True
            self.__since_call = 0
        identifier = call_id if call_id is not None else self.parser.new_call_id()
        self.__out.pieces.append((index, identifier, name, arguments))
        return index

    def arguments(self, text: str, value: object = UNDECODED) -> None:
        """Append argument text to the open call. ``value``: ``text`` decoded strictly
        already, if a JSON scanner did (:attr:`~toolcall.scanning.JsonValueScanner.value`):
        if ``text`` stays all of the call's arguments, :meth:`close_call` does not decode
        it again."""
        if not text:
            return
        if not self.__args_open:
            msg = "arguments() with no call whose arguments are open"
            raise RuntimeError(msg)
        args = self.__args
        parts = args.parts
        parts.append(text)
        if len(parts) >= args.limit:
            args.pack()
        if value is not UNDECODED and len(parts) == 1:
            self.__decoded = (text, value)
        self.__out.pieces.append((self.__index, None, None, text))

    def arguments_text(self) -> str:
        """The open call's argument text so far."""
        return self.__args.text()

    def end_arguments(self) -> None:
        """The open call gets no more argument text: content deferred while its
        arguments were open is released now, and later content right away."""
        if not self.__args_open:
            return
        self.__args_open = False
        self.__armed = self.__fast = None
        deferred, self.__deferred = self.__deferred, []
        for text, start in deferred:
            self.content(text, start)

    def close_call(self, *, check: bool = True, value: object = UNDECODED) -> None:
        """The open call ends. Unless an event already says its arguments are
        defective (or ``check`` is false), arguments that are not a strict JSON
        object (DESIGN §4.3) record ``malformed-arguments``. ``value``: the
        arguments already decoded strictly, if the family's JSON scanner did
        (:attr:`~toolcall.scanning.JsonValueScanner.value`); they are not decoded
        again."""
        index = self.__index
        if index < 0:
            return
        self.end_arguments()
        if check and not self.__call_events & _EXCUSED:
            args, decoded = self.__args.parts, self.__decoded
            # The same text (not merely equal): nothing was appended to it since.
            if (
                value is UNDECODED
                and decoded is not None
                and len(args) == 1
                and args[0] is decoded[0]
            ):
                value = decoded[1]
            problem = json_object_problem("".join(args), value)
            if problem is not None:
                self.event(EventName.MALFORMED_ARGUMENTS, f"the arguments are {problem}")
        self.__index = -1
        self.__args = TextParts()
        self.__decoded = None

    def event(
        self,
        name: str,
        detail: str = "",
        call: int | None = _CURRENT,
        *,
        span: tuple[int, int] | None = None,
    ) -> None:
        """Record an event, on the open call unless ``call`` says otherwise; ``span``
        is the ``[start, end)`` of the output it is about, if known."""
        if call == _CURRENT:
            call = self.__index if self.__index >= 0 else None
        if call is not None and call == self.__index:
            self.__call_events.add(name)
        self.__events.append(Event(name, call, detail, None if span is None else Span(*span)))

    def has_event(self, name: str, call: int | None = _CURRENT) -> bool:
        """Whether an event of that name was recorded on the call (default: the open one)."""
        if call == _CURRENT:
            call = self.__index if self.__index >= 0 else None
        if call is not None and call == self.__index:
            return name in self.__call_events
        return any(event.name == name and event.call_index == call for event in self.__events)

    # -- what a family calls: content, framing, held text -------------------------------

    def content(self, text: str, start: int) -> None:
        """Content at offset ``start``, through the whitespace policy. While a call's
        arguments are open, it waits until they end (DESIGN §4.2)."""
        if not text:
            return
        end = start + len(text)
        self.__accounted = max(self.__accounted, end)
        if self.__args_open:
            self.__deferred.append((text, start))
            return
        released_before = self.__gate.released
        released = self.__gate.text(text)
        if not released:
            self.__hold_gate_span(start, end)
            return
        kept_end = start + len(text.rstrip(WHITESPACE))
        if released_before:
            self.__gate_spans = []
        else:
            self.__drop_gate_spans()
            self.__add_span(start, kept_end - len(released))
        if kept_end < end:
            self.__gate_spans.append([kept_end, end])
        self.__out.pieces.append((_CONTENT, None, None, released))
        if self.__joinable is not None:
            self.__remember(released)

    def reasoning(self, text: str, start: int) -> None:
        """Text the format itself marks as reasoning (DESIGN §6), verbatim. Like content,
        it is output text outside the framing (the contract checker holds the released
        content and reasoning, in order, against the output outside the framing). Like a
        call, it is a boundary for content: whitespace the gate held before it is framing."""
        if not text:
            return
        self.__accounted = max(self.__accounted, start + len(text))
        self.__gate.boundary()
        self.__drop_gate_spans()
        self.__out.pieces.append((_REASONING, None, None, text))
        if self.__tail:
            self.__joining = True
            self.__since_call = 0

    def frame(self, start: int, end: int) -> None:
        """``[start, end)`` of the output is markup (markers, a call's body)."""
        if end <= start:
            return
        self.__accounted = max(self.__accounted, end)
        self.__add_span(start, end)
        if self.__tail:  # content on both sides of markup must not join into a marker
            self.__joining = True
            self.__since_call = 0

    def hold(self, text: str, start: int) -> None:
        """Text whose fate is not known yet; :meth:`settle` or :meth:`release` decides."""
        if not text:
            return
        end = start + len(text)
        self.__accounted = max(self.__accounted, end)
        self.__pending.append((text, start))

    def unhold(self, start: int) -> None:
        """Take back the held text from offset ``start`` on, undecided: the family kept a
        copy of it (say, a delimiter that may still complete) and gives it a fate again,
        through the calls above, before the hook returns. If the family fails first, it
        is content. Held text before ``start`` stays held."""
        pending = self.__pending
        taken: list[tuple[str, int]] = []
        while pending and pending[-1][1] >= start:
            taken.append(pending.pop())
        if pending:
            text, at = pending[-1]
            if at + len(text) > start:
                pending[-1] = (text[: start - at], at)
                taken.append((text[start - at :], start))
        self.__limbo[:0] = reversed(taken)

    @property
    def position(self) -> int:
        """The offset just past the output fed so far (a fast path's deltas included:
        a family that keeps its own count learns from it how much text it skipped)."""
        return self.__position

    @property
    def held(self) -> str:
        """The text held so far."""
        return "".join(text for text, _ in self.__pending)

    @property
    def holding(self) -> bool:
        return bool(self.__pending)

    @property
    def held_start(self) -> int | None:
        """The offset of the first held character, or ``None``."""
        return self.__pending[0][1] if self.__pending else None

    def settle(self, end: int | None = None) -> None:
        """The held text was framing (only the part before offset ``end``, if given)."""
        pending = self.__take_pending(end)
        for text, start in pending:
            self.__add_span(start, start + len(text))

    def release(self, end: int | None = None) -> None:
        """The held text was content, verbatim (only the part before offset ``end``,
        if given)."""
        pending = self.__take_pending(end)
        if not pending:
            return
        start = reach = pending[0][1]
        run: list[str] = []
        for text, at in pending:
            if at != reach:
                self.content("".join(run), start)
                run, start = [], at
            run.append(text)
            reach = at + len(text)
        self.content("".join(run), start)

    def json_arguments(
        self, scanner: JsonValueScanner, text: str, start: int, delimiters: str = ""
    ) -> str:
        """Argument text of the open call read by a JSON value ``scanner``: what belongs to
        the value is framing and argument text, as it arrives. While the scan stands inside
        a plain string, deltas with none of ``delimiters`` skip the hooks
        (:meth:`fast_string`). Returns what follows the value once it is complete
        (``scanner.done``), else ``""``."""
        part, rest = scanner.feed(text)
        self.frame(start, start + len(text) - len(rest))
        self.arguments(part, scanner.value)
        if scanner.plain_string:
            self.fast_string(delimiters)
        else:
            self.slow()
        return rest

    # -- what a family calls: fast paths ----------------------------------------------------

    def fast_content(self, stop: _Search) -> None:
        """Until :meth:`slow`, a delta in which ``stop`` finds nothing (and with no
        marker prefix held, nor a character a marker starts with) is content as it
        stands: the hooks do not see it."""
        self.__armed = self.__fast = self.__fast_search(stop)
        self.__fast_arguments = False

    def fast_arguments(
        self,
        stop: _Search,
        escape: Callable[[str], str] | None = None,
        *,
        split_escapes: bool = False,
        hold_blanks: bool = False,
    ) -> None:
        """Until :meth:`slow`, a delta in which ``stop`` finds nothing (and with no
        marker prefix held, nor a character a marker starts with) is argument text of
        the open call, and framing: the delta as it stands, or as ``escape`` writes it
        (a format whose string values are not JSON text streams them through
        :meth:`~toolcall.scanning.JsonEmitter.string_chunk`). ``split_escapes``: the
        text is a string body with backslash escapes, ``stop`` finds what it must in a
        delta that begins on an escape boundary, and a delta that ends in the backslash
        of an escape keeps it for the next one (as :meth:`fast_string` does).
        ``hold_blanks``: the blanks that end a delta wait for the next one, which begins
        with them (a format that trims the trailing blanks of a value cut short must
        read them with what follows; a run of indentation stays on the fast path)."""
        self.__fast_path(
            self.__fast_search(stop), escape, split_escapes=split_escapes, hold_blanks=hold_blanks
        )

    def fast_string(
        self,
        delimiters: str = "",
        *,
        escapes: str | None = None,
        quote: str = '"',
        escape: Callable[[str], str] | None = None,
    ) -> None:
        """Until :meth:`slow`, the open call's arguments stand inside a string quoted by
        ``quote`` (a JSON string unless ``escape`` says otherwise), on an escape boundary:
        a delta with no closing quote, none of ``delimiters``, no character a marker
        starts with (escaped or not) and, if ``escapes`` is given, no escape but those, is
        argument text as it stands, or as ``escape`` writes it as JSON string text. A
        delta that ends in the backslash of an escape keeps it back for the next one,
        which begins with it: an escape split between two tokens (``\\`` then ``n``, the
        commonest pair in code) stays on the fast path.
        (:func:`~toolcall.scanning.string_body_stop` is what the delta is searched with.)"""
        key = (delimiters, escapes, quote)
        searches = self.__string_searches
        stop = searches.get(key)
        if stop is None:
            first = self.__markers.first_characters if self.__markers is not None else ""
            wanted = "".join(sorted(set(delimiters + first)))
            stop = searches[key] = string_body_stop(wanted, escapes=escapes, quote=quote)
        self.__fast_path(stop, escape, split_escapes=True)

    def __fast_path(
        self,
        stop: _Search,
        escape: Callable[[str], str] | None,
        *,
        split_escapes: bool,
        hold_blanks: bool = False,
    ) -> None:
        if not self.__args_open:
            msg = "fast_arguments() with no call whose arguments are open"
            raise RuntimeError(msg)
        self.__armed = self.__fast = stop
        self.__fast_arguments = True
        self.__escape = escape
        self.__split_escapes = split_escapes
        self.__hold_blanks = hold_blanks
        self.__carry_ends = ("\\" if split_escapes else "") + (WHITESPACE if hold_blanks else "")

    def __keep_back(self, text: str) -> str:
        """A fast delta's text but the end that waits for the next delta: its trailing
        blanks (``hold_blanks``), and the backslash of an escape it ends in
        (``split_escapes``): the next delta then begins on an escape boundary."""
        kept = text.rstrip(WHITESPACE) if self.__hold_blanks else text
        odd = (len(kept) - len(kept.rstrip("\\"))) % 2 if self.__split_escapes else 0
        kept = kept[: len(kept) - odd]
        self.__carry = text[len(kept) :]
        return kept

    def slow(self) -> None:
        """Every delta goes through the hooks again."""
        self.__armed = self.__fast = None

    # -- internals ------------------------------------------------------------------------

    def __fast_search(self, stop: _Search) -> _Search:
        """What a fast path searches a delta with: where it finds nothing, neither
        ``stop`` nor the markers' first characters do."""
        first = self.__marker_first
        if isinstance(stop, re.Pattern | regex.Pattern):
            searches = self.__fast_searches
            found = searches.get(stop)
            if found is None:
                found = searches[stop] = _joined(stop, first) or _either(stop, first)
            return found
        return _either(stop, first)

    def __take_pending(self, end: int | None) -> list[tuple[str, int]]:
        """The held pieces before offset ``end`` (all of them for ``None``), taken."""
        pending = self.__pending
        if end is None:
            self.__pending = []
            return pending
        count = 0
        while count < len(pending) and pending[count][1] + len(pending[count][0]) <= end:
            count += 1
        taken = pending[:count]
        if count < len(pending) and pending[count][1] < end:
            text, start = pending[count]
            taken.append((text[: end - start], start))
            pending[count] = (text[end - start :], end)
        del pending[:count]
        return taken

    def __pass_through(self, text: str, start: int) -> None:
        """``tool_choice: "none"``: content, verbatim; the scanner only tells whether
        markup stood in it (event ``unparsed-markup``, once)."""
        scanner = self.__scanner
        if (
            scanner is not None
            and not self.__events
            and any(type(segment) is not Text for segment in scanner.feed(text))
        ):
            self.event(EventName.UNPARSED_MARKUP, 'tool_choice "none": markup is content', None)
        self.content(text, start)

    def __wind_up(self) -> None:
        """What the family left open at the end of output."""
        if self.__index >= 0:
            self.close_call()
        self.release()

    def __fail(self, error: Exception, text: str, start: int) -> None:
        """An internal error: ``text`` (from offset ``start``: the step's text with what
        the scanner held before it) failed. What the step had decided stands; held text
        and the part of ``text`` not given a fate yet are content, and so is the rest of
        the output."""
        self.__failed = True
        self.__armed = self.__fast = None
        self.__scanner = None
        self.ending = True
        name = f"{type(error).__name__}: {error}"
        logger.error(
            "toolcall: parser %r failed; the rest of the output is content: %s",
            self.parser.name,
            name,
        )
        try:
            if self.__index >= 0:
                self.end_arguments()
                self.__index = -1
                self.__args = TextParts()
            self.event(EventName.INTERNAL_ERROR, name, None)
            self.release()
            limbo, self.__limbo = self.__limbo, []
            for piece, at in limbo:
                self.content(piece, at)
            skip = max(0, min(self.__accounted - start, len(text)))
            self.content(text[skip:], start + skip)
        except Exception:
            self.__out.pieces.append((_CONTENT, None, None, text))

    def __remember(self, released: str) -> None:
        """Keep the end of the content released so far. After a call, reasoning or
        markup, content released on either side of it must not join into a marker: if
        it does, ``unparsed-markup`` says why content holds one (DESIGN §4.4)."""
        joinable = self.__joinable
        assert joinable is not None
        keep = joinable.longest - 1
        tail = self.__tail
        if self.__joining:
            marker = joinable.across(tail + released[:keep], len(tail))
            self.__since_call += len(released)
            if marker is not None:
                detail = f"content on both sides of a call joins into {marker!r}"
                self.event(EventName.UNPARSED_MARKUP, detail, None)
            if marker is not None or self.__since_call >= keep:
                self.__joining = False
        if len(released) >= keep:
            self.__tail = released[-keep:]
        else:
            self.__tail = (tail + released)[-keep:]

    def __add_span(self, start: int, end: int) -> None:
        """Record framing; spans are merged with the last one when they touch, and
        sorted (once) when read."""
        if end <= start:
            return
        if self.__span_end == start:
            self.__span_end = end
            return
        if self.__span_end >= 0:
            self.__spans.extend((self.__span_start, self.__span_end))
        self.__span_start, self.__span_end = start, end

    def __hold_gate_span(self, start: int, end: int) -> None:
        spans = self.__gate_spans
        if spans and spans[-1][1] == start:
            spans[-1][1] = end
        else:
            spans.append([start, end])

    def __drop_gate_spans(self) -> None:
        """Whitespace the gate held was framing."""
        spans, self.__gate_spans = self.__gate_spans, []
        for start, end in spans:
            self.__add_span(start, end)
