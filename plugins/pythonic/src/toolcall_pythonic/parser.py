"""The ``pythonic`` and ``olmo3`` formats: tool calls written as Python calls.

``pythonic`` (Llama 3.2 with its pythonic template, ToolACE, and others) writes a
Python list of calls with keyword arguments, at the start of the answer or on a line
of its own after some text::

    [get_weather(city="Paris", days=3), search(query='vllm', filters={"lang": "en"})]

``olmo3`` (Olmo 3) writes one call per line between ``<function_calls>`` and
``</function_calls>``, and may use JSON's ``true``, ``false`` and ``null``::

    <function_calls>get_weather(city="Paris", days=3)
    search(query="vllm", exact=true)</function_calls>

The Python syntax itself is read by core's :class:`toolcall.pycall.PyCallReader`
(the same reader ``llama4_pythonic`` uses); this module says where calls stand.
What the stream emits, and when (DESIGN §6):

* the call, with its id and complete name, at ``NAME(``;
* ``{"KEY": `` (``, "KEY": ``) when ``KEY=`` is complete;
* a string value as JSON-escaped text while it streams, its closing ``"`` once the
  character after the closing quote shows that the string ended;
* any other value, whole, when it is complete (at the character after it);
* ``}`` (``{}`` without arguments) at the call's ``)``.

Where calls stand (``pythonic``): a list at the start of the output (after
whitespace), right after another list (whitespace between), or right after
``<|python_tag|>`` (framing) is read as calls; a list after content is read as calls
only when its ``[`` is the first character of a line and its first call names a
declared tool. A list that is not calls is content,
and so is everything after a list. ``olmo3``: calls stand between the two markers
only; a block whose first line is not a call is content, markers included.
"""

from __future__ import annotations

from typing import Any, ClassVar

import regex

from toolcall import WHITESPACE, CallStream, EventName, Parser
from toolcall.pycall import PyCallReader
from toolcall.strictness import Plan
from toolcall_pythonic.grammar import PYTHON_TAG, olmo3_tag, pythonic_tag

__all__ = [
    "END",
    "PYTHON_TAG",
    "START",
    "Olmo3Parser",
    "Olmo3Stream",
    "PythonicParser",
    "PythonicStream",
]

START = "<function_calls>"
END = "</function_calls>"
#: In content, only a line break (``[`` first on a line) or the tag can lead to a list.
_LIST_MAY_FOLLOW = regex.compile(r"[\n<]")
#: What a call's name is made of (dots for dotted names, dashes for the recovery).
_NAME_RUN = regex.compile(r"[\w.-]*")
#: Outside an olmo3 block, only "<" can start a marker.
_LESS_THAN = regex.compile(r"<")


class PythonicParser(Parser):
    """``[NAME(KEY=VALUE, ...), ...]`` at the start of the output or of a line."""

    name: ClassVar[str] = "pythonic"
    markers: ClassVar[tuple[str, ...]] = (PYTHON_TAG,)
    summary: ClassVar[str] = "Python call lists: [get_weather(city='Paris'), ...]"

    def stream(self) -> PythonicStream:
        return PythonicStream(self)

    def structural_tag(self, plan: Plan) -> dict[str, Any] | None:
        return pythonic_tag(plan)


class Olmo3Parser(Parser):
    """``<function_calls>`` one call per line ``</function_calls>`` (Olmo 3)."""

    name: ClassVar[str] = "olmo3"
    markers: ClassVar[tuple[str, ...]] = (START, END)
    summary: ClassVar[str] = "Olmo 3: <function_calls>NAME(KEY=VALUE)\\n...</function_calls>"

    def stream(self) -> Olmo3Stream:
        return Olmo3Stream(self)

    def structural_tag(self, plan: Plan) -> dict[str, Any] | None:
        return olmo3_tag(plan)


class PythonicStream(CallStream):
    """The incremental parse of one ``pythonic`` output (see the module)."""

    def __init__(self, parser: PythonicParser) -> None:
        super().__init__(parser, markers=(PYTHON_TAG,))
        self._reader: PyCallReader | None = None
        self._tagged = False  # <|python_tag|> was read: a list may follow
        #: A line that may be a call without its list (recovery ``bare-call``): the
        #: start of a declared tool's name, held; ``None`` when no such line is open.
        self._bare: str | None = None
        self._bare_call = -1  # the index of the first call read without its list
        self._names = tuple(tool.name for tool in self.request.tools) if self.recover else ()
        #: A line break after which a list (``[``) or a bare call (a declared name's first
        #: character) may start, or that ends the text: content runs up to there in one piece.
        opens = ("\\[", *sorted({regex.escape(name[0]) for name in self._names if name}))
        self._line_may_open = regex.compile(rf"\n(?={'|'.join(opens)}|\Z)")
        #: Nothing but whitespace since the start of the output or the last list:
        #: a list here needs no declared name.
        self._fresh = True
        #: The last character read was a line break.
        self._line_start = True

    def on_text(self, text: str, start: int) -> None:
        while text:
            reader = self._reader
            if reader is not None:
                taken = reader.feed(text, start)
                if taken:
                    self._line_start = text[taken - 1] == "\n"
                text, start = text[taken:], start + taken
                if reader.accepted and self._bare_call >= 0:
                    self.event(EventName.BARE_CALL, "a call without its list", self._bare_call)
                    self._bare_call = -1
                if reader.done:
                    self._reader = None
                    self._fresh = reader.accepted
                continue
            if self._bare is not None:
                text, start = self._bare_text(text, start)
                continue
            text, start = self._content(text, start)
        if self._reader is None:
            if self._fresh or self._line_start or self._tagged or self._bare is not None:
                self.slow()
            else:
                self.fast_content(_LIST_MAY_FOLLOW)

    def on_marker(self, marker: str, start: int) -> None:
        self.slow()
        if self._reader is not None or self._tagged:
            self._not_tagged(start)
            self.on_text(marker, start)  # text of the list being read, or content
            return
        self.hold(marker, start)
        self._tagged = True

    def on_end(self) -> None:
        if self._reader is not None:
            self._reader.end()
            self._reader = None
        if self._bare is not None:
            self._not_bare(self._end_of_held())
        self._not_tagged(self._end_of_held())

    def _end_of_held(self) -> int:
        start = self.held_start
        return start + len(self.held) if start is not None else 0

    def _not_tagged(self, end: int) -> None:
        """What follows <|python_tag|> is not a list: the tag is content."""
        if not self._tagged:
            return
        self._tagged = False
        start = self.held_start
        if start is not None:
            self.event(
                EventName.UNPARSED_MARKUP,
                f"{PYTHON_TAG} not before a list",
                None,
                span=(start, end),
            )
        self.release()
        self._fresh = self._line_start = False

    def _content(self, text: str, start: int) -> tuple[str, int]:
        """Content up to where a list may start; returns the text from there on."""
        if self._tagged:
            body = text.lstrip(WHITESPACE)
            blank = len(text) - len(body)
            self.hold(text[:blank], start)
            if not body:
                return "", start + len(text)
            if body[0] == "[":
                self._tagged = False
                self._reader = PyCallReader(self)
                return body, start + blank
            self._not_tagged(start + blank)
            return body, start + blank
        if self._fresh:
            body = text.lstrip(WHITESPACE)
            blank = len(text) - len(body)
            self.content(text[:blank], start)
            if not body:
                return "", start + len(text)
            if body[0] == "[":
                self._reader = PyCallReader(self)
                return body, start + blank
            if self._may_be_bare(body[0]):
                self._bare = ""
                return body, start + blank
            self._fresh = False
            text, start = body, start + blank
            self._line_start = False
        if self._line_start:
            if text[0] == "[":
                self._reader = PyCallReader(self, first=self._declared)
                return text, start
            if self._may_be_bare(text[0]):
                self._bare = ""
                return text, start
        found = self._line_may_open.search(text)
        if found is None:
            self.content(text, start)
            self._line_start = False
            return "", start + len(text)
        cut = found.end()
        self.content(text[:cut], start)
        self._line_start = True
        return text[cut:], start + cut

    # -- bare calls (recovery) ------------------------------------------------------------

    def _may_be_bare(self, char: str) -> bool:
        return any(name.startswith(char) for name in self._names)

    def _bare_text(self, text: str, start: int) -> tuple[str, int]:
        """A line that begins like a declared tool's name: a call without its list if
        the whole name and ``(`` follow, content otherwise."""
        held = self._bare or ""
        run = _NAME_RUN.match(text)
        assert run is not None
        end = run.end()
        name = held + text[:end]
        if end:
            self.hold(text[:end], start)
        if any(declared.startswith(name) for declared in self._names):
            if end == len(text):
                self._bare = name
                return "", start + end
            if text[end] == "(" and name in self._names:
                self._bare = None
                self._bare_call = self.calls
                self._reader = PyCallReader(
                    self, lines=True, first=self._declared, every=True, held_name=name
                )
                return text[end:], start + end
        self._not_bare(start + end)
        return text[end:], start + end

    def _not_bare(self, end: int) -> None:
        """The held start of a line was not a call: content (``unparsed-markup``)."""
        self._bare = None
        start = self.held_start
        if start is not None:
            self.event(
                EventName.UNPARSED_MARKUP, "a line that began like a call", None, span=(start, end)
            )
        self.release()
        self._fresh = self._line_start = False

    def _declared(self, name: str) -> bool:
        return self.request.tool(name) is not None


class Olmo3Stream(CallStream):
    """The incremental parse of one ``olmo3`` output (see the module).

    Inside a block, a line that is not a call ends the calls read so far; it is
    content, and so is the rest of its line, and calls may follow on later lines.
    """

    def __init__(self, parser: Olmo3Parser) -> None:
        super().__init__(parser, markers=(START, END))
        self._reader: PyCallReader | None = None
        self._inside = False
        self._accepted = False  # a call was read in this block
        self._line_start = False
        #: Where the reader opened at a line start began (-1: it opened after the marker).
        self._reader_at = -1

    def on_marker(self, marker: str, start: int) -> None:
        self.slow()
        if self._reader is not None and self._reader.in_string:
            self.on_text(marker, start)  # a string's own text, as any other
            return
        if marker == START:
            if self._inside:
                self._close_block(None)
            self.hold(marker, start)
            self._open_reader()
            self._inside = True
            self._accepted = False
            return
        if not self._inside:
            self.event(EventName.UNPARSED_MARKUP, f"{END} outside a block", None)
            self.content(marker, start)
            return
        self._close_block((start, start + len(marker)))

    def on_text(self, text: str, start: int) -> None:
        if not self._inside:
            self.content(text, start)
            self.fast_content(_LESS_THAN)
            return
        while text:
            reader = self._reader
            if reader is not None:
                taken = reader.feed(text, start)
                if taken:
                    self._line_start = text[taken - 1] == "\n"
                text, start = text[taken:], start + taken
                if reader.done:
                    self._accepted = self._accepted or reader.accepted
                    self._reader = None
                    if not taken and self._reader_at == start:
                        # Refused at the line's first character: the line is content.
                        self._line_start = False
                continue
            # Inside a block, after a line that is not a call: content to the line's end.
            if self._line_start:
                self._open_reader()
                self._reader_at = start
                continue
            end = text.find("\n")
            cut = len(text) if end < 0 else end + 1
            self.content(text[:cut], start)
            self._line_start = end >= 0
            text, start = text[cut:], start + cut

    def on_end(self) -> None:
        if not self._inside:
            return
        reader = self._reader
        if reader is not None:
            in_call = reader.in_call
            reader.end()
            self._accepted = self._accepted or reader.accepted
            self._reader = None
            if in_call:
                return
        if self._accepted:
            name = EventName.MISSING_END if self.recover else EventName.TRUNCATED
            self.event(name, f"no {END} at the end of the output", None)

    def _open_reader(self) -> None:
        self._reader = PyCallReader(self, lines=True, json_literals=True)
        self._reader_at = -1

    def _close_block(self, marker: tuple[int, int] | None) -> None:
        """The block ends at ``marker`` (``None``: a new block starts first)."""
        reader = self._reader
        if reader is not None:
            reader.end(marker=True)
            self._accepted = self._accepted or reader.accepted
            self._reader = None
        self._inside = False
        if marker is None:
            if self._accepted:
                self.event(EventName.MISSING_END, f"{START} again before {END}", None)
            return
        start, end = marker
        if self._accepted:
            self.frame(start, end)
        else:
            self.event(EventName.UNPARSED_MARKUP, f"a {START} block with no call", None)
            self.content(END, start)
