"""The GLM-4.5 / 4.6 / 4.7 tool-call parser.

Format (each marker is one added token of the GLM-4.5 tokenizer)::

    <tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n</tool_call>   (4.5, 4.6)
    <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>         (4.7)

Both parsers read both framings: whitespace between the elements of a call is
framing. Values are raw (a string verbatim, anything else as JSON text) and are
typed by the tool's schema (:mod:`toolcall.schema_types`). Arguments are the
canonical ``json.dumps(..., ensure_ascii=False)`` of the parsed object, emitted
as the call streams (DESIGN §6):

* the call (index, id, name) when the name is complete: at the first newline
  after it, at ``<arg_key>`` or at ``</tool_call>``;
* ``{"KEY": `` (then ``, "KEY": ``) at ``</arg_key>``;
* a value whose type is string: ``"`` at ``<arg_value>``, its JSON-escaped text
  as it arrives, ``"`` at ``</arg_value>``; any other value whole at ``</arg_value>``;
* the final ``}`` (``{}`` for a call without arguments) at ``</tool_call>``.

Defects (a stray marker or text inside a call, a missing marker) end the call
where they are met: the call keeps the arguments emitted so far (event
``malformed-arguments``) and the rest of its text, up to ``</tool_call>``, is
content, verbatim. A ``<tool_call>`` always starts a new call. Text that never
became a call (no readable name) is content, markup included. A repeated key:
the first occurrence wins; the repeated pair is content (event ``duplicate-key``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import regex

from toolcall.parser import Parser, ParserContext, Stream
from toolcall.scanning import ContentGate, JsonEmitter, Marker, MarkerScanner, Text
from toolcall.schema_types import ParameterTypes, ValueType
from toolcall.types import Delta, Event, Span, StrictLevel, ToolCallDelta
from toolcall_glm.grammar import structural_tag

if TYPE_CHECKING:
    from toolcall.strictness import Plan

__all__ = ["MARKERS", "Glm45Parser", "Glm47Parser", "GlmStream"]

CALL_START = "<tool_call>"
CALL_END = "</tool_call>"
KEY_START = "<arg_key>"
KEY_END = "</arg_key>"
VALUE_START = "<arg_value>"
VALUE_END = "</arg_value>"
MARKERS = (CALL_START, CALL_END, KEY_START, KEY_END, VALUE_START, VALUE_END)

_WS = " \t\r\n"
_LEADING_WS = regex.compile(r"[ \t\r\n]*")
_FIRST_NON_WS = regex.compile(r"[^ \t\r\n]")
#: Characters a function name may hold: anything but whitespace, brackets,
#: quotes and the punctuation of JSON, XML and call syntax.
_NAME_CHARS = regex.compile(r"[^\s<>{}\[\]()\"'`,;=\\]*")
_NAME_TRAIL = regex.compile(r"[ \t\r]*")
#: Characters no parameter name holds: they end a key as a defect at once (rather
#: than holding the text until a </arg_key> that may never come).
_NOT_IN_KEYS = regex.compile(r'[<>{}\[\]"\\]')
#: What json.dumps(..., ensure_ascii=False) escapes in a string.
_NEEDS_ESCAPE = regex.compile(r'["\\\x00-\x1f]')


_NO_TYPES = ParameterTypes({})


class _State(enum.Enum):
    OUT = "content"
    NAME = "name"
    BODY = "between arguments"
    KEY = "key"
    AFTER_KEY = "after a key"
    VALUE = "value"
    DEFECT = "rest of a defective call"


class _NamePhase(enum.Enum):
    LEAD = 0  # whitespace before the name
    NAME = 1
    TRAIL = 2  # horizontal whitespace after the name, before its newline


class _Deltas:
    """The pieces one ``feed`` releases, merged into as few deltas as keep their order.

    A piece is ``(index, id, name, text)``; index -1 is content."""

    __slots__ = ("pieces",)

    def __init__(self) -> None:
        self.pieces: list[tuple[int, str | None, str | None, str]] = []

    def done(self) -> list[Delta]:
        pieces = self.pieces
        if len(pieces) == 1:  # the common case: one token, one piece
            index, call_id, name, text = pieces[0]
            if index < 0:
                return [Delta(content=text)]
            return [Delta(tool_calls=(ToolCallDelta(index, call_id, name, text),))]
        deltas: list[Delta] = []
        content: list[str] = []
        calls: dict[int, list[Any]] = {}
        for index, call_id, name, text in pieces:
            if index < 0:
                if calls:
                    deltas.append(_calls_delta(calls))
                    calls = {}
                content.append(text)
                continue
            if content:
                deltas.append(Delta(content="".join(content)))
                content = []
            entry = calls.get(index)
            if entry is None:
                calls[index] = [call_id, name, [text]]
            else:
                entry[2].append(text)
        if content:
            deltas.append(Delta(content="".join(content)))
        if calls:
            deltas.append(_calls_delta(calls))
        return deltas


def _calls_delta(calls: dict[int, list[Any]]) -> Delta:
    return Delta(
        tool_calls=tuple(
            ToolCallDelta(index, entry[0], entry[1], "".join(entry[2]))
            for index, entry in calls.items()
        )
    )


class GlmStream:
    """The incremental parse of one GLM output (see the module docstring)."""

    def __init__(self, parser: Glm45Parser) -> None:
        self._parser = parser
        self._strict = parser.context.strict_parsing
        self._passthrough = parser.request.tool_choice == "none"
        self._scanner = MarkerScanner(MARKERS)
        self._gate = ContentGate()
        self._state = _State.OUT
        self._events: list[Event] = []
        self._spans: list[list[int]] = []  # merged [start, end) ranges of framing
        self._out = _Deltas()
        self._position = 0  # offset of the next character fed (passthrough)
        self._failed = False
        # The open content run: [cursor, end) is content the gate holds back.
        self._run_open = False
        self._run_cursor = 0
        self._run_end = 0
        # Text consumed since the last emission: framing once the next element is
        # read, content if a defect is met first.
        self._unemitted: list[str] = []
        self._unemitted_start = 0
        # The current call.
        self._calls = 0
        self._index = -1
        self._name: list[str] = []
        self._name_phase = _NamePhase.LEAD
        self._emitter = JsonEmitter()
        self._members = 0
        self._keys: set[str] = set()
        self._types = _NO_TYPES
        # The current key/value pair.
        self._key: list[str] = []
        self._skip = False  # a repeated key: the pair is content
        self._value_type = ValueType()
        self._value: list[str] = []
        self._streaming = False  # a string value is streaming (not skipped)

    # -- the Stream protocol ------------------------------------------------------

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    @property
    def framing(self) -> tuple[Span, ...]:
        return tuple(Span(start, end) for start, end in self._spans)

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        del token_ids
        if not text:
            return []
        self._out = _Deltas()
        try:
            if self._failed:
                self._content(text, self._position)
            else:
                for segment in self._scanner.feed(text):
                    self._segment(segment)
        except Exception as error:  # nothing may escape a stream
            self._fail(error, text)
        self._position += len(text)
        return self._out.done()

    def finish(self) -> list[Delta]:
        self._out = _Deltas()
        try:
            if not self._failed:
                for segment in self._scanner.finish():
                    self._segment(segment)
                self._end_of_output()
            self._close_run(final=True)
        except Exception as error:  # nothing may escape a stream
            self._fail(error, "")
        return self._out.done()

    def _fail(self, error: Exception, text: str) -> None:
        """A bug of ours: report it, and pass the rest of the output through as content.

        What this step had produced is dropped and its text released as content
        instead; text held back before it (a pending call) cannot be told apart any
        more and is not repeated."""
        self._events.append(Event("internal-error", None, f"{type(error).__name__}: {error}"))
        self._failed = True
        self._out = _Deltas()
        self._gate = ContentGate()
        self._run_open = False
        self._unemitted = []
        if text:
            try:
                self._content(text, self._position)
            except Exception:  # the gate itself: give the text as it is
                self._out.pieces.append((-1, None, None, text))

    # -- content, framing and emission ----------------------------------------------

    def _span(self, start: int, end: int) -> None:
        if end <= start:
            return
        spans = self._spans
        if spans and spans[-1][1] == start:
            spans[-1][1] = end
        else:
            spans.append([start, end])

    def _content(self, text: str, start: int) -> None:
        """Content text at ``start``, through the shared whitespace policy.

        The gate releases a contiguous stretch of the run ending at the last
        non-whitespace character; what it skipped is framing."""
        if not text:
            return
        if not self._run_open:
            self._run_open = True
            self._run_cursor = start
        self._run_end = start + len(text)
        released = self._gate.text(text)
        if released:
            released_end = start + len(text.rstrip(_WS))
            self._span(self._run_cursor, released_end - len(released))
            self._run_cursor = released_end
            self._out.pieces.append((-1, None, None, released))

    def _close_run(self, *, final: bool = False) -> None:
        """Framing follows (or the output ended): held whitespace was framing."""
        if not self._run_open:
            return
        if final:
            self._gate.finish()
        else:
            self._gate.boundary()
        self._span(self._run_cursor, self._run_end)
        self._run_open = False

    def _frame(self, start: int, end: int) -> None:
        if self._run_open:
            self._close_run()
        self._span(start, end)

    def _hold(self, text: str, start: int) -> None:
        if not self._unemitted:
            self._unemitted_start = start
        self._unemitted.append(text)

    def _settle(self) -> None:
        """The held text was framing (or, in a repeated pair, content)."""
        if not self._unemitted:
            return
        text = "".join(self._unemitted)
        self._unemitted = []
        if self._skip:
            self._content(text, self._unemitted_start)
        else:
            self._frame(self._unemitted_start, self._unemitted_start + len(text))

    def _release_held(self) -> None:
        """The held text never made it into the arguments: it is content."""
        if self._unemitted:
            self._content("".join(self._unemitted), self._unemitted_start)
            self._unemitted = []

    def _args(self, text: str) -> None:
        self._out.pieces.append((self._index, None, None, text))

    def _event(self, name: str, detail: str = "", *, call: bool = True) -> None:
        self._events.append(Event(name, self._index if call else None, detail))

    # -- the state machine ------------------------------------------------------------

    def _segment(self, segment: Text | Marker) -> None:
        if self._passthrough:
            # tool_choice "none": the whole output is content, markup included.
            if isinstance(segment, Marker):
                if not self._events:
                    self._event(
                        "unparsed-markup", 'tool_choice "none": markup is content', call=False
                    )
                self._content(segment.marker, segment.start)
            else:
                self._content(segment.text, segment.start)
        elif isinstance(segment, Marker):
            self._marker(segment.marker, segment.start)
        else:
            self._text(segment.text, segment.start)

    def _text(self, text: str, start: int) -> None:
        state = self._state
        if state is _State.VALUE:
            self._value_text(text, start)
        elif state is _State.OUT or state is _State.DEFECT:
            self._content(text, start)
        elif state is _State.NAME:
            self._name_text(text, start)
        elif state is _State.KEY:
            self._hold(text, start)
            bad = _NOT_IN_KEYS.search(text)
            if bad is None:
                self._key.append(text)
            else:
                self._defect(f"{bad.group()!r} in a key")
        else:
            first = _FIRST_NON_WS.search(text)
            if first is None:
                self._hold(text, start)
            elif state is _State.AFTER_KEY and not self._strict:
                cut = first.start()
                self._hold(text[:cut], start)
                self._event("missing-value-open", f"value of {self._key_text()!r}")
                self._settle()
                self._open_value(None, start + cut)
                self._value_text(text[cut:], start + cut)
            else:
                self._hold(text, start)
                where = "after an argument" if state is _State.BODY else "instead of <arg_value>"
                self._defect(f"text {where}")

    def _marker(self, marker: str, start: int) -> None:
        state = self._state
        if state is _State.OUT:
            if marker == CALL_START:
                self._begin_call(start)
            else:
                self._event("unparsed-markup", f"{marker} outside a call", call=False)
                self._content(marker, start)
        elif state is _State.DEFECT:
            if marker == CALL_START:
                self._begin_call(start)
            elif marker == CALL_END:
                self._frame(start, start + len(marker))
                self._state = _State.OUT
            else:
                self._content(marker, start)
        elif state is _State.NAME:
            if marker == KEY_START and self._name_phase is not _NamePhase.LEAD:
                # The marker that completes the name is framing with it, whatever
                # becomes of the key it opens.
                self._hold(marker, start)
                self._commit()
                self._key = []
                self._state = _State.KEY
            elif marker == CALL_END and self._name_phase is not _NamePhase.LEAD:
                self._commit()
                self._marker(marker, start)
            else:
                self._uncommit(f"{marker} before a function name")
                self._marker(marker, start)
        elif state is _State.BODY and marker == KEY_START:
            self._settle()
            self._key = []
            self._hold(marker, start)
            self._state = _State.KEY
        elif state is _State.BODY and marker == CALL_END:
            self._settle()
            self._frame(start, start + len(marker))
            self._args(self._emitter.close() if self._members else "{}")
            self._state = _State.OUT
        elif state is _State.KEY and marker == KEY_END:
            self._hold(marker, start)
            self._end_key()
        elif state is _State.AFTER_KEY and marker == VALUE_START:
            self._settle()
            self._open_value(marker, start)
        elif state is _State.AFTER_KEY and marker == VALUE_END and not self._strict:
            self._event("missing-value-open", f"empty value of {self._key_text()!r}")
            self._settle()
            self._open_value(None, start)
            self._close_value(marker, start)
        elif state is _State.VALUE and marker == VALUE_END:
            self._close_value(marker, start)
        else:
            if marker not in (CALL_START, CALL_END):
                self._hold(marker, start)
            self._defect(f"{marker} in {state.value}")
            if marker in (CALL_START, CALL_END):
                self._marker(marker, start)

    # -- calls ----------------------------------------------------------------------

    def _begin_call(self, start: int) -> None:
        self._state = _State.NAME
        self._name = []
        self._name_phase = _NamePhase.LEAD
        self._unemitted = []
        self._hold(CALL_START, start)

    def _name_text(self, text: str, start: int) -> None:
        """Read name text; the name is complete at the first newline after it."""
        pos, size = 0, len(text)
        if self._name_phase is _NamePhase.LEAD:
            pos = _LEADING_WS.match(text).end()  # type: ignore[union-attr]
            if pos == size:
                self._hold(text, start)
                return
            self._name_phase = _NamePhase.NAME
        if self._name_phase is _NamePhase.NAME:
            end = _NAME_CHARS.match(text, pos).end()  # type: ignore[union-attr]
            self._name.append(text[pos:end])
            pos = end
            if pos < size and text[pos] in " \t\r":
                self._name_phase = _NamePhase.TRAIL
        if self._name_phase is _NamePhase.TRAIL:
            pos = _NAME_TRAIL.match(text, pos).end()  # type: ignore[union-attr]
        if pos == size:
            self._hold(text, start)
            return
        if text[pos] == "\n" and "".join(self._name):
            self._hold(text[: pos + 1], start)
            self._commit()
            if pos + 1 < size:
                self._text(text[pos + 1 :], start + pos + 1)
            return
        self._hold(text, start)
        self._uncommit(f"{text[pos]!r} in a function name")

    def _commit(self) -> None:
        name = "".join(self._name)
        self._index = self._calls
        self._calls += 1
        self._out.pieces.append((self._index, self._parser.new_call_id(), name, ""))
        self._skip = False
        self._settle()
        self._emitter = JsonEmitter()
        self._members = 0
        self._keys = set()
        self._types = self._parser.types_of(name)
        self._state = _State.BODY

    def _uncommit(self, detail: str) -> None:
        self._event("unparsed-markup", f"no readable function name: {detail}", call=False)
        self._release_held()
        self._state = _State.OUT

    def _defect(self, detail: str) -> None:
        self._event("malformed-arguments", detail)
        self._event("unparsed-markup", "the rest of the call, up to </tool_call>, is content")
        self._skip = self._streaming = False
        self._release_held()
        self._state = _State.DEFECT

    def _key_text(self) -> str:
        return "".join(self._key).strip(_WS)

    def _end_key(self) -> None:
        key = self._key_text()
        self._skip = key in self._keys
        if self._skip:
            self._event("duplicate-key", f"{key!r} again: the first value is kept")
            self._event("unparsed-markup", "the repeated key and its value are content")
            self._settle()
        else:
            self._keys.add(key)
            self._settle()
            opening = "" if self._members else self._emitter.open()
            self._members += 1
            self._args(opening + self._emitter.key(key))
        self._value_type = self._types.of(key)
        self._state = _State.AFTER_KEY

    def _open_value(self, marker: str | None, start: int) -> None:
        """A value starts at ``start`` (with its ``<arg_value>``, or recovered without)."""
        self._value = []
        self._state = _State.VALUE
        self._streaming = self._value_type.streams and not self._skip
        if marker is None:
            if self._value_type.streams and not self._skip:
                self._args(self._emitter.string_start())
            return
        if self._skip:
            self._content(marker, start)
        elif self._value_type.streams:
            self._frame(start, start + len(marker))
            self._args(self._emitter.string_start())
        else:
            self._hold(marker, start)

    def _value_text(self, text: str, start: int) -> None:
        if self._streaming:  # the hot path: a string value streaming
            if self._run_open:
                self._close_run()
            self._span(start, start + len(text))
            if _NEEDS_ESCAPE.search(text) is not None:
                text = self._emitter.string_chunk(text)
            self._out.pieces.append((self._index, None, None, text))
        elif self._skip:
            self._content(text, start)
        else:
            self._value.append(text)
            self._hold(text, start)

    def _close_value(self, marker: str, start: int) -> None:
        end = start + len(marker)
        if self._skip:
            self._content(marker, start)
            self._skip = False
        elif self._value_type.streams:
            self._frame(start, end)
            self._args(self._emitter.string_end())
        else:
            value = self._value_type.read("".join(self._value)).value
            self._hold(marker, start)
            self._settle()
            self._args(self._emitter.value(value))
        self._value = []
        self._streaming = False
        self._state = _State.BODY

    def _end_of_output(self) -> None:
        state = self._state
        if state is _State.NAME:
            self._uncommit("the output ended before the name was complete")
        elif state is _State.BODY and not self._strict:
            self._event("missing-end", "no </tool_call> at the end of the output")
            self._settle()
            self._args(self._emitter.close() if self._members else "{}")
        elif state not in (_State.OUT, _State.DEFECT):
            self._event("truncated", f"the output ended in {state.value}")
            if any(part.strip(_WS) for part in self._unemitted):
                self._event("unparsed-markup", "the unfinished element is content")
            self._skip = False
            self._release_held()
        self._state = _State.OUT


class Glm45Parser(Parser):
    """GLM-4.5 / GLM-4.6 tool calls (``--tool-call-parser glm45``); reads the 4.7 framing too."""

    name: ClassVar[str] = "glm45"
    markers: ClassVar[tuple[str, ...]] = MARKERS
    default_strict_level: ClassVar[StrictLevel] = StrictLevel.FUNCTION
    summary: ClassVar[str] = (
        "GLM-4.5/4.6/4.7 <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>"
    )

    def __init__(self, context: ParserContext | None = None) -> None:
        super().__init__(context)
        self._tool_types: Mapping[str, ParameterTypes] = {
            tool.name: ParameterTypes.from_parameters(tool.parameters)
            for tool in self.request.tools
        }

    def types_of(self, name: str) -> ParameterTypes:
        """The parameter types of the tool called ``name`` (none for an unknown tool)."""
        return self._tool_types.get(name, _NO_TYPES)

    def stream(self) -> Stream:
        return GlmStream(self)

    def structural_tag(self, plan: Plan) -> dict[str, Any] | None:
        return structural_tag(plan)


class Glm47Parser(Glm45Parser):
    """GLM-4.7 tool calls (``--tool-call-parser glm47``); reads the 4.5 framing too."""

    name: ClassVar[str] = "glm47"
