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
  as it arrives, ``"`` at ``</arg_value>``; if the type admits null too, the text
  is held while it may still be ``null`` and streams from there on; any other
  value whole at ``</arg_value>``;
* the final ``}`` (``{}`` for a call without arguments) at ``</tool_call>``.

Defects (a stray marker or text inside a call, a missing marker) end the call
where they are met: the call keeps the arguments emitted so far (event
``malformed-arguments``) and the rest of its text, up to ``</tool_call>``, is
content, verbatim. A ``<tool_call>`` always starts a new call. Text that never
became a call (no readable name) is content, markup included. A repeated key:
the first occurrence wins; the repeated pair is content (event ``duplicate-key``),
released when the call's arguments end, so that no content comes between two
fragments of a call.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final

from toolcall import WHITESPACE, CallStream, EventName, Parser, ParserContext, is_blank
from toolcall.scanning import UNDECODED, JsonEmitter, Markers, decode_whole
from toolcall.schema_types import ANY, NullWatch, ParameterTypes, ValueType, replace_surrogates
from toolcall.types import StrictLevel
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
_MARKERS: Final = Markers(MARKERS)

_LEADING_WS: Final = re.compile(r"[ \t\r\n]*")
_FIRST_NON_WS: Final = re.compile(r"[^ \t\r\n]")
#: Characters a function name may hold: anything but whitespace, brackets, quotes,
#: the punctuation of JSON, XML and call syntax, and surrogates (no UTF-8 form).
_NAME_CHARS: Final = re.compile(r"[^\s<>{}\[\]()\"'`,;=\\\ud800-\udfff]*")
_NAME_TRAIL: Final = re.compile(r"[ \t\r]*")
#: Characters no parameter name holds: they end a key as a defect at once (rather
#: than holding the text until a </arg_key> that may never come).
_NOT_IN_KEYS: Final = re.compile(r'[<>{}\[\]"\\\ud800-\udfff]')
#: What a streaming string value's text must be looked at for: a marker's start and
#: a surrogate. Text without either is argument text once JSON-escaped (the
#: machine's fast path).
_STRING_STOP: Final = re.compile(r"[<\ud800-\udfff]")
#: Text without a marker's first character is content as it stands (outside calls).
_CONTENT_STOP: Final = re.compile(r"<")

_NO_TYPES: Final = ParameterTypes({})


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


class _Value(enum.Enum):
    HELD = 0  # emitted whole at </arg_value>
    STREAMING = 1  # a string: emitted as it arrives
    MAYBE_NULL = 2  # a string unless it is `null`: held while it may be
    REPEATED = 3  # the value of a repeated key: content


class GlmStream(CallStream):
    """The incremental parse of one GLM output (see the module docstring)."""

    def __init__(self, parser: Glm45Parser) -> None:
        super().__init__(parser, markers=_MARKERS)
        self._types_of = parser.types_of
        self._state = _State.OUT
        # The current call.
        self._name: list[str] = []
        self._name_phase = _NamePhase.LEAD
        self._types = _NO_TYPES
        self._emitter = JsonEmitter()
        self._keys: set[str] = set()
        # The current key/value pair.
        self._key: list[str] = []
        self._repeated = False
        self._type: ValueType = ANY
        self._value = _Value.HELD
        self._text: list[str] = []  # a held value's text (also held by the machine)
        self._null = NullWatch()
        self._replaced = False  # a surrogate of this value was replaced
        # The value of the arguments written so far, when every piece of them is known
        # (``None`` once one is not): close_call then need not decode them again.
        self._object: dict[str, object] | None = None
        self._chunks: list[str] = []  # a streaming string's value, as written
        self._reach = 0  # where the value's text read so far ends (past it, a fast path's)
        self.fast_content(_CONTENT_STOP)

    # -- the format ---------------------------------------------------------------------

    def on_text(self, text: str, start: int) -> None:
        state = self._state
        if state is _State.VALUE:
            self._value_text(text, start)
        elif state is _State.OUT:
            self.content(text, start)
        elif state is _State.DEFECT:
            # Whitespace before the call's </tool_call> is framing, as in a sound call.
            kept = text.rstrip(WHITESPACE)
            if kept:
                self.release()
                self.content(kept, start)
            self.hold(text[len(kept) :], start + len(kept))
        elif state is _State.NAME:
            self._name_text(text, start)
        elif state is _State.KEY:
            bad = _NOT_IN_KEYS.search(text)
            if bad is None:
                self.hold(text, start)
                self._key.append(text)
            else:
                self._defect_at(text, start, bad.start(), f"{bad.group()!r} in a key")
        else:
            first = _FIRST_NON_WS.search(text)
            if first is None:
                self.hold(text, start)  # framing if the next element follows
            elif state is _State.AFTER_KEY and self.recover:
                cut = first.start()
                self.hold(text[:cut], start)
                self.event(EventName.MISSING_VALUE_OPEN, f"value of {self._key_text()!r}")
                self._open_value(None, start + cut)
                self._value_text(text[cut:], start + cut)
            else:
                where = "after an argument" if state is _State.BODY else "instead of <arg_value>"
                self._defect_at(text, start, first.start(), f"text {where}")

    def on_marker(self, marker: str, start: int) -> None:
        state = self._state
        end = start + len(marker)
        if state is _State.OUT:
            if marker == CALL_START:
                self._begin_call(start)
            else:
                self.event(EventName.UNPARSED_MARKUP, f"{marker} outside a call", None)
                self.content(marker, start)
        elif state is _State.DEFECT:
            if marker == CALL_START:
                self.settle()
                self._begin_call(start)
            elif marker == CALL_END:
                self.settle()
                self.frame(start, end)
                self._outside()
            else:
                self.release()
                self.content(marker, start)
        elif state is _State.NAME:
            if marker == KEY_START and self._name_phase is not _NamePhase.LEAD:
                # The marker that completes the name is framing with it, whatever
                # becomes of the key it opens.
                self.hold(marker, start)
                self._commit()
                self._key = []
                self._state = _State.KEY
            elif marker == CALL_END and self._name_phase is not _NamePhase.LEAD:
                self._commit()
                self.on_marker(marker, start)
            else:
                self._unreadable(f"{marker} before a function name")
                self.on_marker(marker, start)
        elif state is _State.BODY and marker == KEY_START:
            self.settle()
            self.hold(marker, start)
            self._key = []
            self._state = _State.KEY
        elif state is _State.BODY and marker == CALL_END:
            self.settle()
            self.frame(start, end)
            self.arguments(self._emitter.close() if self._keys else "{}")
            self._close_arguments()
            self._outside()
        elif state is _State.KEY and marker == KEY_END:
            self.hold(marker, start)
            self._end_key()
        elif state is _State.AFTER_KEY and marker == VALUE_START:
            self._open_value(marker, start)
        elif state is _State.AFTER_KEY and marker == VALUE_END and self.recover:
            self.event(EventName.MISSING_VALUE_OPEN, f"empty value of {self._key_text()!r}")
            self._open_value(None, start)
            self._close_value(marker, start)
        elif state is _State.VALUE and marker == VALUE_END:
            self._close_value(marker, start)
        else:
            if marker not in (CALL_START, CALL_END):
                self.hold(marker, start)
            self._defect(f"{marker} in {state.value}")
            if marker in (CALL_START, CALL_END):
                self.on_marker(marker, start)

    def on_end(self) -> None:
        state = self._state
        if state is _State.NAME:
            self._unreadable("the output ended before the name was complete")
        elif state is _State.BODY and self.recover:
            self.event(EventName.MISSING_END, "no </tool_call> at the end of the output")
            self.settle()
            self.arguments(self._emitter.close() if self._keys else "{}")
            self._close_arguments()
        elif state not in (_State.OUT, _State.DEFECT):
            self.event(EventName.TRUNCATED, f"the output ended in {state.value}")
            if not is_blank(self.held):
                self.event(EventName.UNPARSED_MARKUP, "the unfinished element is content")
            self.close_call()
            self.release()
        self._state = _State.OUT

    # -- calls ----------------------------------------------------------------------------

    def _begin_call(self, start: int) -> None:
        self.slow()
        self.hold(CALL_START, start)
        self._name = []
        self._name_phase = _NamePhase.LEAD
        self._state = _State.NAME

    def _name_text(self, text: str, start: int) -> None:
        """Read name text; the name is complete at the first newline after it."""
        pos, size = 0, len(text)
        if self._name_phase is _NamePhase.LEAD:
            pos = _LEADING_WS.match(text).end()  # type: ignore[union-attr]
            if pos == size:
                self.hold(text, start)
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
            self.hold(text, start)
            return
        if text[pos] == "\n" and any(self._name):
            self.hold(text[: pos + 1], start)
            self._commit()
            if pos + 1 < size:
                self.on_text(text[pos + 1 :], start + pos + 1)
            return
        self.hold(text, start)
        self._unreadable(f"{text[pos]!r} in a function name")

    def _commit(self) -> None:
        """The name is complete: the call is committed, its markup so far framing."""
        name = "".join(self._name)
        self.settle()
        self.open_call(name)
        self._types = self._types_of(name)
        self._emitter = JsonEmitter()
        self._keys = set()
        self._object = {}
        self._state = _State.BODY

    def _close_arguments(self) -> None:
        """The call's arguments are complete: closed with their value, if known."""
        value = self._object
        self._object = None
        self.close_call(value=UNDECODED if value is None else value)

    def _unreadable(self, detail: str) -> None:
        """``<tool_call>`` did not start a call: it and its text are content."""
        self.event(EventName.UNPARSED_MARKUP, f"no readable function name: {detail}", None)
        self.release()
        self._outside()

    def _defect(self, detail: str) -> None:
        """The call ends here; the rest of its text, up to ``</tool_call>``, is content."""
        self.event(EventName.MALFORMED_ARGUMENTS, detail)
        self.event(
            EventName.UNPARSED_MARKUP, "the rest of the call, up to </tool_call>, is content"
        )
        self.close_call()
        self.release()
        self._state = _State.DEFECT

    def _defect_at(self, text: str, start: int, cut: int, detail: str) -> None:
        """A defect at ``text[cut]``: what precedes it was held, the rest is read as
        the rest of a defective call."""
        self.hold(text[:cut], start)
        self._defect(detail)
        self.on_text(text[cut:], start + cut)

    def _outside(self) -> None:
        self._state = _State.OUT
        self.fast_content(_CONTENT_STOP)

    # -- keys and values --------------------------------------------------------------

    def _key_text(self) -> str:
        return "".join(self._key).strip(WHITESPACE)

    def _end_key(self) -> None:
        key = self._key_text()
        self._repeated = key in self._keys
        if self._repeated:
            self.event(EventName.DUPLICATE_KEY, f"{key!r} again: the first value is kept")
            self.event(EventName.UNPARSED_MARKUP, "the repeated key and its value are content")
            self.release()  # content once the call's arguments end
        else:
            self.settle()
            opening = "" if self._keys else self._emitter.open()
            self._keys.add(key)
            self.arguments(opening + self._emitter.key(key))
        self._type = self._types.of(key)
        self._state = _State.AFTER_KEY

    def _open_value(self, marker: str | None, start: int) -> None:
        """A value starts at ``start``, with its ``<arg_value>`` or (recovered) without."""
        self._state = _State.VALUE
        self._text = []
        self._chunks = []
        self._reach = start if marker is None else start + len(marker)
        self._replaced = False
        if self._repeated:
            self.release()
            self._value = _Value.REPEATED
            if marker is not None:
                self.content(marker, start)
            return
        self.settle()
        if marker is not None:
            self.hold(marker, start)
        if not self._type.streams:
            self._value = _Value.HELD
        elif self._type.nullable:
            self._value = _Value.MAYBE_NULL
            self._null = NullWatch()
        else:
            self._stream("")

    def _stream(self, text: str) -> None:
        """The value is a string: from here on it streams."""
        self._value = _Value.STREAMING
        self.settle()
        self.arguments(self._emitter.string_start() + self._string_text(text))
        self.fast_arguments(_STRING_STOP, self._emitter.string_chunk)

    def _value_text(self, text: str, start: int) -> None:
        if start != self._reach:  # a fast path let the text before ``start`` go by
            self._object = None
        self._reach = start + len(text)
        value = self._value
        if value is _Value.STREAMING:
            self.frame(start, start + len(text))
            self.arguments(self._string_text(text))
        elif value is _Value.REPEATED:
            self.content(text, start)
        else:
            self._text.append(text)
            self.hold(text, start)
            if value is _Value.MAYBE_NULL and not self._null.feed(text):
                self._stream("".join(self._text))

    def _string_text(self, text: str) -> str:
        """A string value's text as JSON string text, surrogates replaced by U+FFFD."""
        text, replaced = replace_surrogates(text)
        if replaced and not self._replaced:
            self._replaced = True
            self.event(
                EventName.UNREPRESENTABLE_VALUE,
                f"{self._key_text()!r}: a surrogate code point replaced by U+FFFD",
            )
        if self._object is not None:
            self._chunks.append(text)
        return self._emitter.string_chunk(text)

    def _close_value(self, marker: str, start: int) -> None:
        value = self._value
        if value is _Value.REPEATED:
            self.content(marker, start)
            self._repeated = False
        elif value is _Value.STREAMING:
            self.slow()
            self.frame(start, start + len(marker))
            self.arguments(self._emitter.string_end())
            if start != self._reach:  # a fast path wrote the end of the string
                self._object = None
            elif self._object is not None:
                self._known("".join(self._chunks))
        else:
            typed = self._type.read("".join(self._text))
            if typed.problem is not None:
                self.event(
                    EventName.UNREPRESENTABLE_VALUE, f"{self._key_text()!r}: {typed.problem}"
                )
            self.hold(marker, start)
            self.settle()
            written = self._emitter.value(typed.value)
            self.arguments(written)
            if self._object is not None:
                # What strict JSON reads in the text written (``Infinity`` it does not).
                decoded = decode_whole(written, 0)
                if decoded is not None and decoded[1] == len(written):
                    self._known(decoded[0])
                else:
                    self._object = None
        self._text = []
        self._chunks = []
        self._state = _State.BODY

    def _known(self, value: object) -> None:
        """The value written for the current key (while the arguments' value is known)."""
        assert self._object is not None
        self._object[self._key_text()] = value


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

    def stream(self) -> GlmStream:
        return GlmStream(self)

    def structural_tag(self, plan: Plan) -> dict[str, Any] | None:
        return structural_tag(plan)


class Glm47Parser(Glm45Parser):
    """GLM-4.7 tool calls (``--tool-call-parser glm47``); reads the 4.5 framing too."""

    name: ClassVar[str] = "glm47"
