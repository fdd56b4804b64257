"""Llama 4's Python tool calls (``llama4_pythonic``), parsed as a stream.

Llama 4 Scout and Maverick, with vLLM's pythonic chat template, write their calls as a
Python list of calls with keyword arguments, directly after the message's text, and
sometimes between Llama 4's python tokens::

    [get_weather(city="Paris", days=3), get_time(tz='CET')]
    Let me check.[get_weather(city="Paris")]
    <|python_start|>[get_weather(city="Paris")]<|python_end|>
    <|python_start|>get_weather(city="Paris")<|python_end|>

The format, as this parser reads it:

* a **list of calls** starts at a ``[`` at the start of the output (after whitespace),
  or after ``<|python_start|>`` (200016); after content, at any ``[`` whose first call
  names a declared tool (the chat template writes the list right after the text, so
  that is where the model writes it too);
* after ``<|python_start|>`` the calls may also come without a list, one per line;
* ``<|python_end|>`` (200017) ends the calls; it is optional, as in Meta's own Llama 4
  decoder, which drops it where it stands;
* after a list, whitespace and another list continue the calls; anything else is
  content;
* the calls themselves are read by the core's :class:`toolcall.pycall.PyCallReader`
  (the language the ``pythonic`` family shares): the call is committed at ``NAME(``,
  its arguments are the canonical JSON of the keyword arguments, strings streamed as
  JSON-escaped fragments, other values whole when complete.

What the stream emits, and when: content as soon as it cannot begin a list (a ``[``
is held until its first element shows whether it is a call, a marker prefix until it
is one or not); everything else as :mod:`toolcall.pycall` says. Defects, recoveries and
the text-level readings are in the README.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import regex

from toolcall import CallStream, EventName, Parser
from toolcall.pycall import PyCallReader

if TYPE_CHECKING:
    from toolcall.strictness import Plan

__all__ = ["PYTHON_END", "PYTHON_START", "Llama4PythonicParser", "PythonicCallStream"]

PYTHON_START = "<|python_start|>"
PYTHON_END = "<|python_end|>"
MARKERS = (PYTHON_START, PYTHON_END)

_NON_WHITESPACE = regex.compile(r"[^ \t\r\n]")
#: Fast path: content that holds no "[" and no marker start goes by unscanned.
_CONTENT_STOP = regex.compile(r"[\[<]")
#: What may start a call written without a list (after <|python_start|>).
_NAME_START = regex.compile(r"[^\W\d]")


class Llama4PythonicParser(Parser):
    """Llama 4 pythonic tool calls: ``[<|python_start|>][f(a=1), g(b="x")][<|python_end|>]``."""

    name: ClassVar[str] = "llama4_pythonic"
    markers: ClassVar[tuple[str, ...]] = MARKERS
    #: A list of calls may start without a marker.
    unmarked_starts: ClassVar[tuple[str, ...]] = ("[",)
    summary: ClassVar[str] = (
        'Llama 4 pythonic: [<|python_start|>][get_weather(city="Paris"), ...][<|python_end|>]'
    )

    def stream(self) -> PythonicCallStream:
        return PythonicCallStream(self)

    def structural_tag(self, plan: Plan) -> dict[str, Any] | None:
        from toolcall_llama.grammar import python_structural_tag  # noqa: PLC0415

        return python_structural_tag(plan, start=PYTHON_START, end=PYTHON_END)

    @classmethod
    def example_output(cls, content: str, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """The turn as vLLM's Llama 4 pythonic template writes it: the content, then the
        list, every value as a Python literal (the benchmark's hook)."""
        body = ", ".join(
            f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"
            for name, arguments in calls
        )
        return f"{content}[{body}]"


class _State(enum.Enum):
    CONTENT = "content"
    OPENED = "opened"  # after <|python_start|>, before the calls
    CALLS = "calls"  # the reader is reading
    AFTER = "after"  # after a list: another list, the end marker, or content


class PythonicCallStream(CallStream):
    """The incremental parse of one output (see the module docstring)."""

    def __init__(self, parser: Llama4PythonicParser) -> None:
        super().__init__(parser, markers=MARKERS)
        self._state = _State.CONTENT
        self._at_start = True  # nothing but whitespace so far
        self._reader: PyCallReader | None = None
        self._marker_held = False

    # -- the hooks ----------------------------------------------------------------------

    def on_marker(self, marker: str, start: int) -> None:
        state = self._state
        reader = self._reader
        if state is _State.CALLS and reader is not None and reader.in_string:
            self._read(marker, start)  # a marker inside a string is its text
            return
        in_calls = state is _State.AFTER
        if state is _State.CALLS and reader is not None:
            reader.end(marker=True)  # a call still open is cut by the marker: malformed
            in_calls = reader.accepted
            self._reader = None
        elif state is _State.AFTER:
            self.settle()
        elif state is _State.OPENED:
            self._unreadable()
        self._state = _State.CONTENT
        if marker == PYTHON_START:
            self.hold(marker, start)
            self._marker_held = True
            self._state = _State.OPENED
            self.slow()
        elif in_calls:
            self.frame(start, start + len(marker))  # <|python_end|> ends the calls
        else:
            self.event(EventName.UNPARSED_MARKUP, f"{marker} outside the calls", None)
            self._content(marker, start)

    def on_text(self, text: str, start: int) -> None:
        pos = 0
        size = len(text)
        while pos < size:
            state = self._state
            if state is _State.CALLS:
                pos += self._read(text[pos:] if pos else text, start + pos)
            elif state is _State.CONTENT:
                pos = self._content_text(text, pos, start)
            else:
                pos = self._between(text, pos, start)
        if self._state is _State.CONTENT and not self._at_start:
            self.fast_content(_CONTENT_STOP)

    def on_end(self) -> None:
        state = self._state
        if state is _State.CALLS and self._reader is not None:
            self._reader.end()
            self._reader = None
        elif state is _State.OPENED:
            self._unreadable()
        elif state is _State.AFTER:
            self.settle()

    # -- content ------------------------------------------------------------------------

    def _content_text(self, text: str, pos: int, start: int) -> int:
        if self._at_start:
            first = _NON_WHITESPACE.search(text, pos)
            if first is None:
                self._content(text[pos:], start + pos)
                return len(text)
            at = first.start()
            self._content(text[pos:at], start + pos)
            if text[at] == "[":
                self._begin(first_name=None)
                return at
            self._at_start = False
            pos = at
        bracket = text.find("[", pos)
        if bracket < 0:
            self._content(text[pos:], start + pos)
            return len(text)
        self._content(text[pos:bracket], start + pos)
        self._begin(first_name=self._declared)
        return bracket

    def _content(self, text: str, start: int) -> None:
        if text and _NON_WHITESPACE.search(text) is not None:
            self._at_start = False
        self.content(text, start)

    def _declared(self, name: str) -> bool:
        return self.request.tool(name) is not None

    # -- the calls ----------------------------------------------------------------------

    def _begin(self, *, first_name: Any, lines: bool = False) -> None:
        self._reader = PyCallReader(self, lines=lines, first=first_name)
        self._state = _State.CALLS
        self.slow()

    def _read(self, text: str, start: int) -> int:
        """Text for the reader; returns how much of it the calls took."""
        reader = self._reader
        assert reader is not None
        taken = reader.feed(text, start)
        if reader.done:
            self._reader = None
            self._marker_held = False
            if reader.accepted:
                self._at_start = False
                self._state = _State.AFTER
            else:
                self._state = _State.CONTENT
                self._at_start = False
        return taken

    def _between(self, text: str, pos: int, start: int) -> int:
        """After ``<|python_start|>`` or a list: whitespace is held; a ``[`` starts a
        list; after the marker a name starts calls one per line; anything else is
        content."""
        found = _NON_WHITESPACE.search(text, pos)
        if found is None:
            self.hold(text[pos:], start + pos)
            return len(text)
        at = found.start()
        self.hold(text[pos:at], start + pos)
        char = text[at]
        opened = self._state is _State.OPENED
        if char == "[":
            if not opened:
                self.settle()
            self._begin(first_name=None)
            return at
        if opened and _NAME_START.match(char):
            self._begin(first_name=None, lines=True)
            return at
        if opened:
            self._unreadable()
        else:
            self.release()
        self._state = _State.CONTENT
        return at

    def _unreadable(self) -> None:
        """``<|python_start|>`` and no call after it: content, verbatim."""
        self.event(EventName.UNPARSED_MARKUP, f"{PYTHON_START} with no call after it", None)
        self._marker_held = False
        self.release()
        self._at_start = False
        self._state = _State.CONTENT
