"""Llama's JSON tool calls (``llama3_json``, ``llama4_json``), parsed as a stream.

Llama 3.1, 3.2 and 3.3 (JSON tool calling) and Llama 4 (the same on its own
vocabulary) write each call as one JSON object naming the function and giving its
arguments under ``parameters`` (the chat templates' key) or ``arguments``::

    <|python_tag|>{"name": "weather", "parameters": {"city": "Oslo"}}; {"name": "now"}
    {"type": "function", "name": "get_weather", "parameters": {"city": "Paris"}}
    Let me check.{"name": "get_weather", "parameters": {"city": "Paris"}}

The format, as this parser reads it:

* **calls** come in runs. A run starts at ``<|python_tag|>`` (Llama 3) or
  ``<|python_start|>`` (Llama 4), anywhere; or, with no marker, at a ``{`` at the
  start of the output (after whitespace); or at a ``{`` after content that begins a
  line and whose call names a declared tool. ``llama4_json`` also reads such a call
  directly after the text (its chat template writes calls right after the message's
  content, with nothing between);
* in a run, calls are separated by ``;`` (vLLM's and Meta's separator), by
  whitespace, or by nothing at all (the Llama 4 template writes ``}{``); the ``;``,
  the whitespace and the markers are framing. ``<|python_end|>`` ends a run;
  anything else after a call ends the run and is content;
* a **call object** has ``name`` (a string) and its arguments under
  ``parameters`` or ``arguments`` (both native), in either order; every other member
  is ignored and recorded (``"type": "function"`` is one: ``ignored-member``);
* a call without a marker must look like one from its first member on: the members
  before its name may only be ``type``, ``function``, ``parameters`` or
  ``arguments``, and after content the name must be (while it is being read, may
  still become) a declared tool's. Anything else is content, released as soon as it
  cannot be a call.

What the stream emits, and when (the family's part of DESIGN §6):

* content as soon as it cannot begin a call: text is held only from a ``{`` that may
  start a call (or a marker) until the call is decided;
* a call is committed when its name string closes; its first delta carries the id
  and the name, with any argument text that came before the name;
* the arguments are the model's own text of the value, streamed as it arrives
  (whitespace outside strings is held until the next character of the value, so
  that it can be trimmed before a marker); a call object with no arguments gets
  ``{}`` when it closes;
* the run's framing is released as framing when the next call, marker or content
  decides it.

Defects and recoveries are in the README; the named recoveries (``python-literal``,
``arguments-string``, ``function-envelope``, ``missing-end``) are switched off by
``TOOLCALL_STRICT_PARSING=1``.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import regex

from toolcall import CallStream, EventName, Parser
from toolcall.jsoncall import CallObjectReader, Item, ItemKind, ReaderState

if TYPE_CHECKING:
    from toolcall.strictness import Plan

__all__ = [
    "ARGUMENT_KEYS",
    "PYTHON_END",
    "PYTHON_START",
    "PYTHON_TAG",
    "JsonCallStream",
    "Llama3JsonParser",
    "Llama4JsonParser",
]

#: Llama 3's tool-call token (128010), before a call run.
PYTHON_TAG = "<|python_tag|>"
#: Llama 4's tokens around a call run (200016, 200017).
PYTHON_START = "<|python_start|>"
PYTHON_END = "<|python_end|>"
MARKERS = (PYTHON_TAG, PYTHON_START, PYTHON_END)
STARTS = frozenset({PYTHON_TAG, PYTHON_START})
#: The keys of a call's arguments: ``parameters`` in every Llama template, ``arguments``
#: in OpenAI's shape; both are native.
ARGUMENT_KEYS = ("parameters", "arguments")
SEPARATOR = ";"
#: The call-list recovery: ``[{...}, {...}]``.
LIST_SEPARATOR = ","
LIST_END = "]"
_MARKUP = "<|python_"
#: Members that may come before the name of a call that has no marker.
HEAD_KEYS = frozenset({"type", "function", *ARGUMENT_KEYS})

#: Content: a ``{`` that begins a line (with only spaces or tabs before it).
_LINE_BRACE = regex.compile(r"\n[ \t\r]*\{")
_LEADING_BRACE = regex.compile(r"[ \t\r]*\{")
_BRACE = regex.compile(r"\{")
#: With the call-list recovery, a "[" may open a run too.
_LINE_CALL_OR_LIST = regex.compile(r"\n[ \t\r]*[{\[]")
_LEADING_CALL_OR_LIST = regex.compile(r"[ \t\r]*[{\[]")
_CALL_OR_LIST = regex.compile(r"[{\[]")
_LINE_END = regex.compile(r"\n[ \t\r]*\Z")
_BLANK_LINE_PART = regex.compile(r"[ \t\r]*\Z")
_NON_WHITESPACE = regex.compile(r"[^ \t\r\n]")
#: Fast paths: what content must be scanned for (a brace, a marker, a line break).
_CONTENT_STOP = regex.compile(r"[{\[<\n]")
_CONTENT_STOP_AFTER_TEXT = regex.compile(r"[{\[<]")
#: What an argument string must be scanned for: its end, an escape, a marker.
_STRING_STOP = regex.compile(r"[\"'\\<]")
#: In a double-quoted string a JSON escape stands as it is: the escapes that need no scan.
_JSON_ESCAPES = '"\\/bfnrtu'


class Llama3JsonParser(Parser):
    """Llama 3.x JSON tool calls: ``<|python_tag|>{"name": ..., "parameters": ...}``."""

    name: ClassVar[str] = "llama3_json"
    markers: ClassVar[tuple[str, ...]] = MARKERS
    #: A call (or, as a recovery, a list of calls) may start without a marker.
    unmarked_starts: ClassVar[tuple[str, ...]] = ("{", "[")
    summary: ClassVar[str] = (
        'Llama 3.1 / 3.2 / 3.3 JSON: [<|python_tag|>]{"name": ..., "parameters": ...}; ...'
    )
    #: Whether a call may follow content directly (not only at the start of a line).
    calls_after_text: ClassVar[bool] = False
    #: The markers of a run in this vocabulary: its start, and its end (if any).
    run_markers: ClassVar[tuple[str, str]] = (PYTHON_TAG, "")

    def stream(self) -> JsonCallStream:
        return JsonCallStream(self)

    @classmethod
    def example_output(cls, content: str, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """A turn of this format (the benchmark's hook): the content, then the calls on a
        line of their own, as Llama 3 writes them after a sentence."""
        run = "; ".join(_call_text(name, arguments) for name, arguments in calls)
        return f"{content}\n{run}" if content else run

    def structural_tag(self, plan: Plan) -> dict[str, Any] | None:
        from toolcall_llama.grammar import json_structural_tag  # noqa: PLC0415

        start, end = self.run_markers
        return json_structural_tag(plan, start=start, end=end)


class Llama4JsonParser(Llama3JsonParser):
    """Llama 4 JSON tool calls: the Llama 3 format on the Llama 4 vocabulary, where the
    chat template writes calls directly after the message's text."""

    name: ClassVar[str] = "llama4_json"
    summary: ClassVar[str] = (
        'Llama 4 JSON: [<|python_start|>]{"name": ..., "parameters": ...}[<|python_end|>]'
    )
    calls_after_text: ClassVar[bool] = True
    run_markers: ClassVar[tuple[str, str]] = (PYTHON_START, PYTHON_END)

    @classmethod
    def example_output(cls, content: str, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """The turn as vLLM's Llama 4 JSON template writes it: the calls directly after
        the content, with nothing between them."""
        return content + "".join(_call_text(name, arguments) for name, arguments in calls)


def _call_text(name: str, arguments: Mapping[str, Any]) -> str:
    """One call as the Llama JSON templates write it (``tojson``: transformers' filter)."""
    return (
        '{"name": "' + name + '", "parameters": ' + json.dumps(arguments, ensure_ascii=False) + "}"
    )


class _State(enum.Enum):
    CONTENT = "content"
    OPENED = "opened"  # after a start marker, before the run's first "{"
    OBJECT = "object"  # inside a call object (or a candidate for one)
    LISTED = "listed"  # after a "[" that may open a list of calls
    AFTER = "after"  # after a call object: a separator, a call, a marker, or content
    SEPARATED = "separated"  # after a ";" in a run (a "," in a list)


class _Head(enum.Enum):
    """What an object without a marker must show to be read as a call."""

    FREE = "free"  # after a marker: any object is a call attempt
    CALL = "call"  # its members before the name are call members
    DECLARED = "declared"  # that, and it names a declared tool


class JsonCallStream(CallStream):
    """The incremental parse of one output (see the module docstring)."""

    def __init__(self, parser: Llama3JsonParser) -> None:
        super().__init__(parser, markers=MARKERS)
        self._after_text = parser.calls_after_text
        self._names = [json.dumps(t.name, ensure_ascii=False)[1:-1] for t in self.request.tools]
        self._declared = frozenset(t.name for t in self.request.tools)
        self._state = _State.CONTENT
        self._at_start = True  # nothing but whitespace so far
        self._line_start = True  # the next character begins a line
        self._reader: CallObjectReader | None = None
        self._head = _Head.FREE
        self._committed = False
        self._rejected = False  # the object is content (it is read on to find its end)
        #: A committed call's member is read up to its value: its key is held, and is
        #: content if the call ends before the value starts.
        self._member_held = False
        self._marker_held = False  # a start marker is held with the object
        self._early_arguments: list[str] = []  # argument text before the name
        self._early_events: list[tuple[str, str]] = []
        self._noted: set[str] = set()  # recoveries recorded on the open call
        self._in_list = False  # the run is a JSON list of calls (call-list)
        self._list_head = _Head.FREE
        self._list_noted = False
        if self.recover:
            self._line_call = _LINE_CALL_OR_LIST
            self._leading_call = _LEADING_CALL_OR_LIST
            self._call_start = _CALL_OR_LIST
        else:
            self._line_call = _LINE_BRACE
            self._leading_call = _LEADING_BRACE
            self._call_start = _BRACE

    # -- the hooks ----------------------------------------------------------------------

    def on_marker(self, marker: str, start: int) -> None:
        state = self._state
        reader = self._reader
        if state is _State.OBJECT and reader is not None and reader.in_string:
            self._object_text(marker, start)  # a marker inside a JSON string is its text
            return
        in_run = state in (_State.AFTER, _State.SEPARATED)
        if state is _State.OBJECT:
            in_run = self._cut_object()
        elif in_run:
            self.settle()
        elif state is _State.OPENED:
            self._unreadable_run()
        elif state is _State.LISTED:
            self._release_held()
        if self._in_list and in_run:
            self._list_unclosed()
        self._to_content()
        if marker in STARTS:
            self.hold(marker, start)
            self._marker_held = True
            self._state = _State.OPENED
            self.slow()
        elif in_run:
            self.frame(start, start + len(marker))  # <|python_end|> closes the run
            self._line_start = False
        else:
            self.event(EventName.UNPARSED_MARKUP, f"{marker} outside a call run", None)
            self._content(marker, start)

    def on_text(self, text: str, start: int) -> None:
        pos = 0
        size = len(text)
        while pos < size:
            state = self._state
            if state is _State.CONTENT:
                pos = self._content_text(text, pos, start)
            elif state is _State.OBJECT:
                pos += self._object_text(text[pos:] if pos else text, start + pos)
            else:
                pos = self._between(text, pos, start)

    def on_end(self) -> None:
        state = self._state
        if state is _State.OPENED:
            self._unreadable_run()
        elif state is _State.OBJECT:
            self._end_object()
        elif state in (_State.AFTER, _State.SEPARATED):
            self.settle()  # a trailing separator is framing, like the whitespace
            if self._in_list:
                self._list_unclosed()
        elif state is _State.LISTED:
            self._release_held()

    # -- content --------------------------------------------------------------------------

    def _content_text(self, text: str, pos: int, start: int) -> int:
        """Content from ``pos``, up to a ``{`` that may begin a call."""
        brace = self._candidate(text, pos)
        if brace < 0:
            self._content(text[pos:], start + pos)
            self._content_path()
            return len(text)
        self._content(text[pos:brace], start + pos)
        head = _Head.CALL if self._at_start else _Head.DECLARED
        if text[brace] == "[":
            self._open_list(head, text, brace, start)
            return brace + 1
        self._begin_object(head)
        return brace

    def _candidate(self, text: str, pos: int) -> int:
        """The offset of the first ``{`` from ``pos`` that may begin a call, or -1."""
        if self._at_start:
            first = _NON_WHITESPACE.search(text, pos)
            if first is None:
                return -1
            if self._call_start.match(text, first.start()):
                return first.start()
            self._at_start = False
        if self._after_text:
            found = self._call_start.search(text, pos)
            return -1 if found is None else found.start()
        if self._line_start:
            match = self._leading_call.match(text, pos)
            if match is not None:
                return match.end() - 1
        match = self._line_call.search(text, pos)
        return -1 if match is None else match.end() - 1

    def _content(self, text: str, start: int) -> None:
        if not text:
            return
        self._note_markup(text)
        if _NON_WHITESPACE.search(text) is not None:
            self._at_start = False
        if "\n" in text:
            self._line_start = _LINE_END.search(text) is not None
        elif _BLANK_LINE_PART.match(text) is None:
            self._line_start = False
        self.content(text, start)

    def _note_markup(self, text: str) -> None:
        """A marker read as text (inside a string of what turned out not to be a call) is
        content: say why content holds one."""
        if _MARKUP in text and any(marker in text for marker in MARKERS):
            self.event(EventName.UNPARSED_MARKUP, "a marker inside text that is content", None)

    def _content_path(self) -> None:
        """Content that cannot hold a call start goes by unscanned."""
        if self._at_start or (self._line_start and not self._after_text):
            self.slow()
        else:
            self.fast_content(_CONTENT_STOP_AFTER_TEXT if self._after_text else _CONTENT_STOP)

    # -- between calls of a run ---------------------------------------------------------

    def _between(self, text: str, pos: int, start: int) -> int:
        """After a start marker, a call or a separator: whitespace is held; a ``{`` is
        the next call; anything else ends the run."""
        found = _NON_WHITESPACE.search(text, pos)
        if found is None:
            self.hold(text[pos:], start + pos)
            return len(text)
        at = found.start()
        self.hold(text[pos:at], start + pos)
        char = text[at]
        state = self._state
        if char == "{":
            # What is held (a marker, whitespace, a separator) goes with the object.
            if state is _State.LISTED:
                self._in_list = True
                self._begin_object(self._list_head)
            else:
                self._begin_object(_Head.FREE if state is _State.OPENED else _Head.CALL)
            return at
        if char == "[" and state is _State.OPENED and self.recover:
            self._open_list(_Head.FREE, text, at, start)
            return at + 1
        separator = LIST_SEPARATOR if self._in_list else SEPARATOR
        if char == separator and state is _State.AFTER:
            self.hold(char, start + at)
            self._state = _State.SEPARATED
            return at + 1
        if char == LIST_END and self._in_list and state is not _State.LISTED:
            self.hold(char, start + at)
            self.settle()  # the list's end (after a trailing comma too) is framing
            self._in_list = False
            self._state = _State.AFTER
            return at + 1
        if state is _State.OPENED:
            self._unreadable_run()
        else:
            if self._in_list and state is not _State.LISTED:
                self._list_unclosed()
            self._release_held()  # a separator not followed by a call is content
        self._to_content()
        return at

    def _open_list(self, head: _Head, text: str, at: int, start: int) -> None:
        """A ``[`` that may open a JSON list of calls (the ``call-list`` recovery): held
        until a ``{`` shows it does."""
        self.hold(text[at], start + at)
        self._list_head = head
        self._list_noted = False
        self._state = _State.LISTED
        self.slow()

    def _list_unclosed(self) -> None:
        """The list of calls ends without its ``]``."""
        self._in_list = False
        if self.calls:
            name = EventName.MISSING_END if self.recover else EventName.TRUNCATED
            self.event(name, "the list of calls has no closing ]", self.calls - 1)

    def _to_content(self) -> None:
        self._state = _State.CONTENT
        self._in_list = False

    def _unreadable_run(self) -> None:
        """A start marker not followed by a call object: it is content, verbatim."""
        self._release_held("a start marker with no call object")
        self._to_content()

    def _release_held(
        self, why: str = "a start marker with no call after it", *, said: bool = False
    ) -> None:
        """What is held was content after all, verbatim (a held start marker too: then
        ``unparsed-markup`` says why content holds it; with ``said``, in any case)."""
        held = self.held
        if self._marker_held or said:
            self.event(EventName.UNPARSED_MARKUP, why, None)
        else:
            self._note_markup(held)
        self._marker_held = False
        self.release()
        if _NON_WHITESPACE.search(held) is not None:
            self._at_start = False
            self._line_start = _LINE_END.search(held) is not None
        elif "\n" in held:
            self._line_start = True

    # -- call objects -------------------------------------------------------------------

    def _begin_object(self, head: _Head) -> None:
        self._state = _State.OBJECT
        self._reader = CallObjectReader(ARGUMENT_KEYS, recover=self.recover)
        self._head = head
        self._committed = False
        self._rejected = False
        self._member_held = False
        self._early_arguments = []
        self._early_events = []
        self.slow()

    def _object_text(self, text: str, start: int) -> int:
        """Object text from offset ``start``; returns how much of it the object took."""
        reader = self._reader
        assert reader is not None
        cursor = 0
        for item in reader.feed(text):
            self._take(text[cursor : item.end], start + cursor)
            cursor = max(cursor, item.end)
            self._item(item)
            if self._state is not _State.OBJECT:
                return cursor
        self._take(text[cursor:], start + cursor)
        if not self._committed and not self._rejected:
            self._check_partial_name()
        if self._committed and reader.plain_arguments and self.arguments_open:
            if reader.plain_escapes:
                self.fast_string("<", escapes=_JSON_ESCAPES)
            else:
                self.fast_arguments(_STRING_STOP)
        else:
            self.slow()
        return len(text)

    def _take(self, text: str, start: int) -> None:
        """Text of the object: framing of a call, content of a rejected object, held
        while undecided."""
        if not text:
            return
        if self._committed and not self._member_held:
            self.frame(start, start + len(text))
        elif self._rejected:
            self._content(text, start)
        else:
            self.hold(text, start)

    def _item(self, item: Item) -> None:
        kind = item.kind
        if self._rejected:
            if kind in (ItemKind.CLOSE, ItemKind.BREAK):
                self._to_content()
            return
        if kind is ItemKind.MEMBER:
            self._member_held = self._committed
        elif kind is ItemKind.VALUE:
            if self._member_held:
                self._member_held = False
                self.settle()
        elif kind is ItemKind.ARGUMENTS:
            if self._committed:
                self.arguments(item.value, item.decoded)
            else:
                self._early_arguments.append(item.value)
        elif kind is ItemKind.EVENT:
            self._note(item.value, item.detail)
        elif kind is ItemKind.KEY:
            if (
                self._head is not _Head.FREE
                and not self._committed
                and item.value != "name"
                and item.value not in HEAD_KEYS
            ):
                self._reject()
        elif kind is ItemKind.NAME:
            if self._head is _Head.DECLARED and item.value not in self._declared:
                self._reject()
            else:
                self._commit(item.value)
        elif kind is ItemKind.CLOSE:
            self._close_object()
        else:
            self._break_object(item.detail)

    def _note(self, name: str, detail: str) -> None:
        if not self._committed:
            self._early_events.append((name, detail))
        elif name in self._noted and name == EventName.PYTHON_LITERAL:
            return
        else:
            self._noted.add(name)
            self.event(name, detail)

    def _commit(self, name: str) -> None:
        self.settle()
        self._marker_held = False
        self._at_start = False
        self.open_call(name, "".join(self._early_arguments))
        self._committed = True
        self._noted = set()
        if self._in_list and not self._list_noted:
            self._list_noted = True
            self.event(EventName.CALL_LIST, "the calls are written as a JSON list")
        for event, detail in self._early_events:
            self._note(event, detail)
        self._early_arguments = []
        self._early_events = []

    def _reject(self) -> None:
        """The object cannot be a call: it is content, read on to its end."""
        self._rejected = True
        self._release_held()

    def _check_partial_name(self) -> None:
        """After content, a name that cannot become a declared tool's is not a call."""
        reader = self._reader
        if self._head is not _Head.DECLARED or reader is None:
            return
        partial = reader.partial_name
        if partial is None:
            return
        prefix = partial[1:]
        if not any(name.startswith(prefix) for name in self._names):
            self._reject()

    def _close_object(self) -> None:
        reader = self._reader
        assert reader is not None
        if self._member_held:  # a key alone (an ignored member) before the "}"
            self._member_held = False
            self.settle()
        if not self._committed:
            self._unreadable_object("a JSON object with no name")
            return
        if not reader.arguments_seen:
            self.arguments("{}")
        self.close_call()
        self._committed = False
        self._state = _State.AFTER

    def _break_object(self, unreadable_name: str) -> None:
        """The object cannot be read from here on: that text is content (a committed
        call keeps what it has). ``unreadable_name``: why the name string that closed
        is no name (``toolcall.scanning.name_problem``), if that is the break."""
        if self._committed:
            self._release_member()
            self.close_call()
            self._committed = False
            self._to_content()
            self._line_start = False
            return
        if unreadable_name and self._head is not _Head.DECLARED:
            # A call object with no readable name is content, and says so, marked or not
            # (after content only a declared name makes one: the others are plain text).
            self._unreadable_object(unreadable_name, said=True)
            return
        self._unreadable_object("a JSON object that breaks off before its name")

    def _unreadable_object(self, why: str, *, said: bool = False) -> None:
        self._release_held(why, said=said)
        self._to_content()

    def _cut_object(self) -> bool:
        """A marker outside any string ends the object here. Returns whether it ended a
        call (so that the marker belongs to the run)."""
        reader = self._reader
        assert reader is not None
        if self._rejected:
            return False
        if not self._committed:
            self._unreadable_object("a call object cut off by a marker")
            return False
        self._release_member()
        for item in reader.cut():
            self.arguments(item.value)
        if reader.arguments_seen and not reader.arguments_done:
            self.event(EventName.MALFORMED_ARGUMENTS, "the arguments never close")
        elif not reader.arguments_seen and reader.state is ReaderState.NEXT:
            self.arguments("{}")  # the name was the last member
        self.close_call()
        self._committed = False
        return True

    def _release_member(self) -> None:
        """The call ends inside a member's key: the key read so far is content."""
        if self._member_held:
            self._member_held = False
            self._release_held()

    def _end_object(self) -> None:
        """The output ended inside an object."""
        reader = self._reader
        assert reader is not None
        if self._rejected:
            return
        items = reader.finish()
        if not self._committed:
            self._unreadable_object("a call object cut off by the end of the output")
            return
        self._release_member()
        for item in items:
            self.arguments(item.value)
        if reader.arguments_done:
            if self.recover:
                self.event(EventName.MISSING_END, "the call object never closes")
            else:
                self.event(EventName.TRUNCATED, "the call object never closes")
        else:
            self.event(EventName.TRUNCATED, "the output ended inside the call")
        self.close_call()
        self._committed = False
