"""The Hermes / Qwen ``<tool_call>`` JSON format, parsed as a stream.

One call per tag, as Hermes 2 Pro, Hermes 3, Qwen2.5, QwQ and Qwen3 write it::

    Let me check.
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

The format, as read here:

* ``<tool_call>`` opens a tag, ``</tool_call>`` closes it; inside a JSON string
  either marker is string text. A tag holds one JSON object, read member by member:
  ``"name"`` (a non-empty string) and ``"arguments"`` (a JSON object, the model's
  own text), in either order. Any other member is ignored (event ``ignored-member``);
  a key given again is ignored, the first value is kept (``duplicate-key``).
* Whitespace between calls, around a tag (the templates' newline before
  ``<tool_call>``) and inside a tag around the object and its members is framing.

What the stream emits, and when (the family's part of DESIGN §6):

* content outside calls as soon as it cannot be the start of a marker (the
  machine's content gate decides which whitespace is framing);
* a call is committed when its ``name`` string closes, wherever the key stands;
  its first delta carries the id and the name, with any argument text that came
  before the name (``arguments``-first order);
* the arguments are the model's own text of the ``arguments`` value, streamed as
  it arrives (whitespace outside strings waits for the next character of the
  value, so that whitespace before an end marker can be trimmed);
* a call object with no ``arguments`` key gets ``{}`` when it closes;
* text of a tag that is not read as a member (what follows a member the object
  breaks at, text after the object's ``}``) is content, verbatim: after a
  committed name at once, and from the member where the object broke on;
* a tag that cannot be read as a call (no name) is content, verbatim with its
  markup, once its end marker (or the next start marker, or the end of output)
  arrives.

The named recoveries of the policy (``python-literal``, ``parameters-key``,
``arguments-string``, ``missing-end``, ``bare-json``) are recorded as events and
switched off by ``ParserContext.strict_parsing``; ``python-literal``,
``arguments-string`` and ``bare-json`` emit the recovered call (or arguments)
whole, when it closes. A Python literal reads its keys as the JSON object does.
"""

from __future__ import annotations

import ast
import enum
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final

import regex

from toolcall import WHITESPACE, CallStream, Event, EventName, Parser, is_blank
from toolcall.scanning import (
    UNDECODED,
    JsonValueScanner,
    Markers,
    json_object_problem,
    name_problem,
)
from toolcall_hermes.grammar import END, START, structural_tag

if TYPE_CHECKING:
    from toolcall.strictness import Plan

__all__ = ["END", "START", "HermesParser", "HermesStream", "Qwen3JsonParser"]


class HermesParser(Parser):
    """``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, one call per tag."""

    name: ClassVar[str] = "hermes"
    markers: ClassVar[tuple[str, ...]] = (START, END)
    #: A ``bare-json`` call is the whole output, a JSON object: ``{`` after whitespace.
    unmarked_starts: ClassVar[tuple[str, ...]] = ("{",)
    summary: ClassVar[str] = (
        "Hermes 2 Pro / Hermes 3, Qwen2.5, QwQ, Qwen3: <tool_call>{json}</tool_call>"
    )

    def stream(self) -> HermesStream:
        return HermesStream(self)

    def structural_tag(self, plan: Plan) -> dict[str, Any] | None:
        return structural_tag(plan)


class Qwen3JsonParser(HermesParser):
    """Qwen3's JSON tool calls: the Hermes format, with the template's newlines as framing."""

    name: ClassVar[str] = "qwen3_json"
    corpus: ClassVar[str] = "hermes"
    summary: ClassVar[str] = "Qwen3 (JSON mode): <tool_call>{json}</tool_call>"


class _Part(enum.Enum):
    """Where the reading of the output stands."""

    OUTSIDE = "outside a tag"
    OPEN = "before the object's {"
    KEY = "a key (or }) is expected"
    KEY_STRING = "in a key string"
    COLON = "a : is expected"
    VALUE = "a value is expected"
    NAME = "in the name string"
    ARGUMENTS = "in the arguments value"
    SKIP = "in a value that is ignored"
    NEXT = "a , or } is expected"
    AFTER = "the object has closed"
    BROKEN = "the object cannot be read any further"


#: The parts whose text is a JSON value read by a scanner (a marker there may be string text).
_VALUES: Final = frozenset({_Part.KEY_STRING, _Part.NAME, _Part.ARGUMENTS, _Part.SKIP})
#: The characters that carry the object on from a part between its members (a key's
#: opening quote and a value's first character are read apart).
_STRUCTURE: Final = {_Part.OPEN: "{", _Part.KEY: "}", _Part.COLON: ":", _Part.NEXT: ",}"}


class _Role(enum.Enum):
    """What a key of the call object is read as."""

    NAME = "the name"
    ARGUMENTS = "the arguments"
    VARIANT = 'a variant of "arguments" (recovery parameters-key)'
    STRICT_VARIANT = 'a variant of "arguments", ignored under strict parsing'
    OTHER = "ignored"


def _role(key: str, recover: bool) -> _Role:
    """How both readings of a call object (JSON and Python literal) read a key."""
    if key == "name":
        return _Role.NAME
    if key == "arguments":
        return _Role.ARGUMENTS
    if key.strip(WHITESPACE) in {"arguments", "parameters"}:
        return _Role.VARIANT if recover else _Role.STRICT_VARIANT
    return _Role.OTHER


class _End(enum.Enum):
    """What ends a tag."""

    END = "its end marker"
    START = "the next start marker"
    EOF = "the end of output"


_MARKERS = Markers((START, END))
_NOT_WHITESPACE = re.compile(r"[^ \t\r\n]")
#: Content needs scanning only where a marker may start.
_MARKUP = re.compile("<")


class HermesStream(CallStream):
    """The incremental parse of one Hermes output (see the module docstring)."""

    def __init__(self, parser: Parser, *, bare: bool = True) -> None:
        super().__init__(parser, markers=_MARKERS)
        self._tool_names = tuple(
            json.dumps(tool.name, ensure_ascii=False)[1:-1] for tool in self.request.tools
        )
        #: Whether the output may still turn out to be one bare JSON call.
        self._bare_possible = bare and self.recover and bool(self._tool_names)
        self._bare: _Bare | None = None
        self._part = _Part.OUTSIDE
        self._json = JsonValueScanner()
        self._key = ""
        self._string: list[str] = []  # the raw text of the key or name string
        self._committed = False
        self._args_seen = False
        self._args_done = False
        self._held_string = False  # the arguments are a JSON string (arguments-string)
        self._unsent: list[str] = []  # argument text read, not emitted yet
        self._decoded: object = UNDECODED  # the arguments' value, if the scanner decoded it
        self._variant_ignored = False
        self._skipping = (EventName.IGNORED_MEMBER, "")  # why a value is skipped
        self._notes: list[tuple[EventName, str]] = []  # events before the call has an index
        self._string_markers = False  # whether a marker was read as string text and held
        if not self._bare_possible:
            self.fast_content(_MARKUP)

    # -- the hooks --------------------------------------------------------------------------

    def on_marker(self, marker: str, start: int) -> None:
        part = self._part
        if part in _VALUES and self._json.in_string:
            self._string_markers = True
            self.on_text(marker, start)  # a marker inside a JSON string is string text
            return
        bare = self._bare
        if bare is not None:
            if bare.scanner.in_string:
                self._string_markers = True
                self._bare_text(marker, start)
                return
            self._abandon_bare()
        self._bare_possible = False
        if marker == START:
            if part is not _Part.OUTSIDE:
                self._end_tag(_End.START, start)
            self._open_tag(start)
        elif part is not _Part.OUTSIDE:
            self._end_tag(_End.END, start)
        else:
            self.event(EventName.UNPARSED_MARKUP, f"{END} outside a call", None)
            self.content(marker, start)

    def on_text(self, text: str, start: int) -> None:
        part = self._part
        if part is _Part.ARGUMENTS:  # the common case, read at once
            if self._committed and not self._held_string and self._json.string_text(text):
                self._string_arguments(text, start)
                return
            end = self._arguments_text(text, 0, start)
            if end < len(text):
                self._tag_text(text[end:], start + end)
        elif part is not _Part.OUTSIDE:
            self._tag_text(text, start)
        elif self._bare is not None:
            self._bare_text(text, start)
        elif self._bare_possible:
            self._outside_text(text, start)
        else:
            self.content(text, start)

    def on_end(self) -> None:
        if self._bare is not None:
            self._finish_bare()
        elif self._part is not _Part.OUTSIDE:
            self._end_tag(_End.EOF, None)

    # -- a tag ------------------------------------------------------------------------------

    def _open_tag(self, start: int) -> None:
        self.slow()
        self.hold(START, start)
        self._part = _Part.OPEN
        self._committed = self._args_seen = self._args_done = False
        self._held_string = self._variant_ignored = self._string_markers = False
        self._unsent = []
        self._decoded = UNDECODED
        self._notes = []

    def _tag_text(self, text: str, start: int) -> None:
        """Text inside a tag. Before the name, all of it is held (the tag may be
        content); after it, what lies between members is held until the next member
        is read (framing) or the object breaks (content)."""
        if self.ending and self._part not in _VALUES and END.startswith(text):
            # The end marker, cut off by the end of output: the call's framing.
            if self._committed:
                self.frame(start, start + len(text))
            else:
                self.hold(text, start)
            return
        pos, size = 0, len(text)
        while pos < size:
            part = self._part
            if part is _Part.ARGUMENTS:
                pos = self._arguments_text(text, pos, start)
            elif part in _VALUES:
                pos = self._value_text(text, pos, start)
            elif part is _Part.AFTER or part is _Part.BROKEN:
                self._rest_of_tag(text[pos:], start + pos)
                return
            else:
                found = _NOT_WHITESPACE.search(text, pos)
                at = size if found is None else found.start()
                self.hold(text[pos:at], start + pos)
                if found is None:
                    return
                pos = self._structure(text, at, start)

    def _structure(self, text: str, at: int, start: int) -> int:
        """One structural character of the call object at ``text[at]``; returns where
        reading goes on."""
        char = text[at]
        part = self._part
        if part is _Part.VALUE:
            self._value_start(char)
            return at
        if part is _Part.KEY and char == '"':
            self._part = _Part.KEY_STRING
            self._json = JsonValueScanner()
            self._string = []
            return at
        if char not in _STRUCTURE[part]:
            self._break()
            return at
        self.hold(char, start + at)
        if char in "{,":
            self._part = _Part.KEY
        elif char == ":":
            self._part = _Part.VALUE
        else:  # "}" (after a member, or after a trailing comma)
            self._object_closed()
        return at + 1

    def _value_start(self, char: str) -> None:
        """The first character of a member's value: what the member is decides how
        the value is read."""
        key = self._key
        role = _role(key, self.recover)
        shown = json.dumps(key, ensure_ascii=False)
        if role is _Role.NAME and not self._committed:
            if char != '"':
                self._break()  # a name that is not a string: not a call
                return
            self._part = _Part.NAME
            self._json = JsonValueScanner()
            self._string = []
            return
        if role is _Role.NAME or (role in {_Role.ARGUMENTS, _Role.VARIANT} and self._args_seen):
            self._skip(EventName.DUPLICATE_KEY, f"{shown} given again: the first value is kept")
            return
        if role is _Role.STRICT_VARIANT:
            self._variant_ignored = True
            self._skip(EventName.IGNORED_MEMBER, f'{shown} is not "arguments" (strict parsing)')
            return
        if role is _Role.OTHER:
            self._skip(EventName.IGNORED_MEMBER, f"the member {shown} is not name or arguments")
            return
        if role is _Role.VARIANT:
            self._note(EventName.PARAMETERS_KEY, f'{shown} read as "arguments"')
        if self._committed:
            self.settle()  # the member's key is framing
        self._args_seen = True
        self._part = _Part.ARGUMENTS
        self._json = JsonValueScanner(hold_whitespace=True)
        self._held_string = char == '"' and self.recover
        self._unsent = []

    def _skip(self, event: EventName, detail: str) -> None:
        self._part = _Part.SKIP
        self._json = JsonValueScanner()
        self._skipping = (event, detail)

    def _value_text(self, text: str, pos: int, start: int) -> int:
        """A key string, the name string or a value that is ignored."""
        scanner = self._json
        value, rest = scanner.feed(text[pos:] if pos else text)
        end = len(text) - len(rest)
        self.hold(text[pos:end], start + pos)
        part = self._part
        if part is not _Part.SKIP:
            self._string.append(value)
        if not scanner.done:
            return end
        if part is _Part.SKIP:
            self._member_read()
            return end
        string = _string_value("".join(self._string))
        if string is None or (part is _Part.NAME and name_problem(string) is not None):
            self._break()  # no readable name (empty, a lone surrogate): not a call
        elif part is _Part.KEY_STRING:
            self._key = string
            self._part = _Part.COLON
        else:
            self._part = _Part.NEXT
            self._commit(string)
        return end

    def _member_read(self) -> None:
        """A member that is ignored has been read whole."""
        self._note(*self._skipping)
        if self._committed:
            self.settle()
        self._part = _Part.NEXT

    def _commit(self, name: str) -> None:
        """The name string has closed: the tag is a call, and what it held is framing."""
        self.settle()
        arguments = "".join(self._unsent)
        self._unsent = []
        self.open_call(name, arguments)
        self._committed = True
        for event, detail in self._notes:
            self.event(event, detail)
        self._notes = []
        if self._args_done:
            self.end_arguments()

    def _note(self, event: EventName, detail: str) -> None:
        if self._committed:
            self.event(event, detail)
        else:
            self._notes.append((event, detail))

    # -- the arguments ------------------------------------------------------------------------

    def _arguments_text(self, text: str, pos: int, start: int) -> int:
        scanner = self._json
        value, rest = scanner.feed(text[pos:] if pos else text)
        end = len(text) - len(rest)
        if self._committed and not self._held_string:
            self.frame(start + pos, start + end)
            self.arguments(value)
            if scanner.plain_string:
                self.fast_string()
            else:
                self.slow()
        else:
            self.hold(text[pos:end], start + pos)
            self._unsent.append(value)
        if scanner.done:
            self._arguments_done()
        return end

    def _string_arguments(self, text: str, start: int) -> None:
        """Text inside a string of the arguments that does not end it: argument text."""
        self.frame(start, start + len(text))
        self.arguments(text)
        if self._json.plain_string:
            self.fast_string()
        else:
            self.slow()

    def _arguments_done(self) -> None:
        """The arguments value has closed."""
        self._args_done = True
        self._part = _Part.NEXT
        self._decoded = self._json.value
        if self._held_string:
            self._held_string = False
            text = "".join(self._unsent)
            decoded = _object_in_string(text)
            if decoded is not None:
                self._note(EventName.ARGUMENTS_STRING, "arguments given as a JSON string")
                text = decoded
            if self._committed:
                self.settle()
                self.arguments(text)
            else:
                self._unsent = [text]
        if self._committed:
            self.end_arguments()

    def _no_arguments(self) -> None:
        """The call object ended without an arguments member."""
        if self._variant_ignored:
            detail = 'no "arguments" key; a variant of it is ignored under strict parsing'
            self.event(EventName.MALFORMED_ARGUMENTS, detail)
        else:
            self.arguments("{}")

    # -- the end of the object, and of the tag --------------------------------------------------

    def _object_closed(self) -> None:
        self._part = _Part.AFTER
        if self._committed:
            self.settle()
            if not self._args_seen:
                self._no_arguments()
            self.end_arguments()

    def _break(self) -> None:
        """The call object cannot be read any further. Before the name the tag is
        held whole (content, or a Python literal); after it, the held text and the
        rest of the tag are content."""
        self._part = _Part.BROKEN
        if self._committed:
            if not self._args_done:
                self.event(EventName.MALFORMED_ARGUMENTS, "the call object breaks off")
            self.end_arguments()
            self._give_back()

    def _give_back(self) -> None:
        """The held text is content, verbatim. A marker read in it as string text is
        markup in content now, and ``unparsed-markup`` says so (DESIGN §4.4)."""
        if self._string_markers and any(marker in self.held for marker in (START, END)):
            detail = "a marker read as JSON string text is content"
            self.event(EventName.UNPARSED_MARKUP, detail, None)
        self._string_markers = False
        self.release()

    def _rest_of_tag(self, text: str, start: int) -> None:
        """Text of a committed call's tag after its object: content, whitespace held
        (framing if the end marker follows)."""
        if not self._committed:
            self.hold(text, start)
            return
        body = text.rstrip(WHITESPACE)
        if body:
            self.release()
            self.content(body, start)
        self.hold(text[len(body) :], start + len(body))

    def _end_tag(self, how: _End, at: int | None) -> None:
        """The tag ends at ``at`` (its end marker's or the next start marker's
        offset; ``None`` at the end of output)."""
        if not self._committed:
            self._end_unread(how, at)
        else:
            part = self._part
            if part is _Part.ARGUMENTS:
                self._arguments_cut(how)
            elif part is _Part.SKIP:
                self._json.finish()
                if self._json.done:  # a scalar value, ended where the tag ends
                    self._member_read()
                    part = _Part.NEXT
            if part is _Part.AFTER or part is _Part.BROKEN:
                self.settle()
                if part is _Part.AFTER and how is not _End.END:
                    if self.recover:
                        self.event(EventName.MISSING_END, f"no {END} after the call")
                    else:
                        self.event(EventName.TRUNCATED, f"no {END} after the call")
            elif part is not _Part.ARGUMENTS:
                self._end_between_members(how, part)
            if how is _End.END and at is not None:
                self.frame(at, at + len(END))
            self.close_call(value=self._decoded)
        self._part = _Part.OUTSIDE
        self.fast_content(_MARKUP)

    def _arguments_cut(self, how: _End) -> None:
        """The tag ends inside the arguments value."""
        scanner = self._json
        tail = scanner.finish()
        if self._held_string:  # only the end of output ends a string
            self.settle()
            self._held_string = False
            self.arguments("".join(self._unsent) + tail)
        else:
            self.arguments(tail if how is _End.EOF else tail.rstrip(WHITESPACE))
        if scanner.done:  # a scalar, complete where the tag ends
            self._arguments_done()
        elif how is _End.EOF:
            self.event(EventName.TRUNCATED, "the output ended inside the arguments")
        else:
            self.event(EventName.MALFORMED_ARGUMENTS, "the arguments never close")

    def _end_between_members(self, how: _End, part: _Part) -> None:
        """The tag ends before the object closed: held whitespace is framing, a
        member not read whole is content."""
        if is_blank(self.held):
            self.settle()
        else:
            self._give_back()
        if how is not _End.END:
            self.event(EventName.TRUNCATED, "the call object was cut off")
        elif part is _Part.NEXT and not self._args_seen:
            self._no_arguments()
        elif not self._args_done:
            self.event(EventName.MALFORMED_ARGUMENTS, "the call object was cut off")

    def _end_unread(self, how: _End, at: int | None) -> None:
        """A tag that never got a name: a Python literal (recovery), or content."""
        literal = _python_call(self.held[len(START) :], how is _End.EOF) if self.recover else None
        if literal is None:
            self.event(EventName.UNPARSED_MARKUP, f"a {START} with no readable name", None)
            self.release()
            if how is _End.END and at is not None:
                self.content(END, at)
            return
        self.settle()
        self.open_call(literal.name, literal.arguments)
        self.event(EventName.PYTHON_LITERAL, "the call is a Python literal")
        for event, detail in literal.events:
            self.event(event, detail)
        if how is not _End.END:
            self.event(EventName.MISSING_END, f"no {END} after the call")
        elif at is not None:
            self.frame(at, at + len(END))
        self.close_call()

    # -- bare-json: the whole output is one call object, no markers -----------------------------

    def _outside_text(self, text: str, start: int) -> None:
        found = _NOT_WHITESPACE.search(text)
        if found is None:
            self.content(text, start)
            return
        self._bare_possible = False
        at = found.start()
        if text[at] != "{":
            self.content(text, start)
            self.fast_content(_MARKUP)
            return
        self.content(text[:at], start)
        self._bare = _Bare()
        self._bare_text(text[at:], start + at)

    def _bare_text(self, text: str, start: int) -> None:
        bare = self._bare
        assert bare is not None
        self.hold(text, start)
        if bare.checking and not self._bare_head(bare, text):
            self._abandon_bare()
            return
        scanner = bare.scanner
        rest = text
        if not scanner.done:
            _, rest = scanner.feed(text)
        if scanner.done and not is_blank(rest):
            self._abandon_bare()

    def _bare_head(self, bare: _Bare, text: str) -> bool:
        """Whether the object can still be a call to a declared tool, judged from its
        head (the first key, and the name when it comes first), so that JSON content
        is released as soon as it cannot be a call. Decided on a bounded prefix of
        the output, and monotone in it, so every split decides alike."""
        bare.head = (bare.head + text)[:_BARE_HEAD_LIMIT]
        verdict = _bare_verdict(bare.head, self._tool_names)
        bare.checking = verdict is None and len(bare.head) < _BARE_HEAD_LIMIT
        return verdict is not False

    def _abandon_bare(self) -> None:
        """The output is not one bare call: what was held is content."""
        self._bare = None
        self._give_back()
        self.fast_content(_MARKUP)

    def _finish_bare(self) -> None:
        bare = self._bare
        assert bare is not None
        self._bare = None
        call = _read_bare(self.parser, self.held.rstrip(WHITESPACE)) if bare.scanner.done else None
        if call is None:
            self._give_back()
            return
        name, arguments, events = call
        self.settle()
        self.open_call(name, arguments)
        self.event(EventName.BARE_JSON, "a JSON call object with no markers")
        for event in events:
            self.event(event.name, event.detail)
        self.close_call()


class _Bare:
    """A possible ``bare-json`` call: the output so far is one JSON object."""

    __slots__ = ("checking", "head", "scanner")

    def __init__(self) -> None:
        self.head = ""  # its first characters, up to ``_BARE_HEAD_LIMIT``
        self.scanner = JsonValueScanner()
        self.checking = True  # whether its head still decides (``HermesStream._bare_head``)


#: Events of the call that still let a JSON object be read as a bare call.
_BARE_OK: Final = frozenset(
    {
        EventName.PARAMETERS_KEY,
        EventName.ARGUMENTS_STRING,
        EventName.IGNORED_MEMBER,
        EventName.DUPLICATE_KEY,
    }
)
_BARE_HEAD_LIMIT: Final = 512
_BARE_KEY = regex.compile(r'\{[ \t\r\n]*"(name|arguments|parameters)"[ \t\r\n]*:[ \t\r\n]*')
_STRING_BODY = re.compile(r'(?:[^"\\]|\\.)*')


def _bare_verdict(head: str, names: Sequence[str]) -> bool | None:
    """``False`` if ``head`` cannot begin a call object naming one of ``names`` (their
    JSON-escaped forms), ``True`` once it certainly can, ``None`` while undecided."""
    found = _BARE_KEY.match(head, partial=True)
    if found is None:
        return False
    if found.partial:
        return None
    if found.group(1) != "name":
        return True  # arguments first: the name comes at the end
    pos = found.end()
    if pos == len(head):
        return None
    if head[pos] != '"':
        return False
    body = _STRING_BODY.match(head, pos + 1)
    assert body is not None
    text = body.group()
    if body.end() < len(head) and head[body.end()] == '"':
        return text in names
    return None if any(name.startswith(text) for name in names) else False


def _read_bare(parser: Parser, text: str) -> tuple[str, str, tuple[Event, ...]] | None:
    """Read ``text`` as the body of one tag; keep it only if it names a declared tool
    and reads cleanly (up to the events that fit a bare call)."""
    inner = HermesStream(parser, bare=False)
    deltas = inner.feed(START + text + END) + inner.finish()
    entries = [entry for delta in deltas for entry in delta.tool_calls]
    if any(delta.content for delta in deltas) or not entries:
        return None
    if any(entry.index != 0 for entry in entries):
        return None
    name = entries[0].name
    if name is None or parser.request.tool(name) is None:
        return None
    if any(event.name not in _BARE_OK for event in inner.events):
        return None
    arguments = "".join(entry.arguments for entry in entries)
    if json_object_problem(arguments) is not None:
        return None
    return name, arguments, inner.events


def _string_value(text: str) -> str | None:
    """The value of a JSON string's text, or ``None`` if it is not one."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _object_in_string(text: str) -> str | None:
    """The object text inside a JSON string value, for ``arguments-string``."""
    decoded = _string_value(text)
    if decoded is None:
        return None
    decoded = decoded.strip(WHITESPACE)
    return decoded if json_object_problem(decoded) is None else None


@dataclass(frozen=True)
class _Literal:
    """A call body written as a Python dict (``python-literal``)."""

    name: str
    arguments: str  # canonical JSON
    events: tuple[tuple[EventName, str], ...]


def _python_call(body: str, cut: bool) -> _Literal | None:
    """Read a call body written as a Python dict, its keys read as the JSON object's
    are (:func:`_role`: the first of a repeated key is kept). With ``cut`` (the
    output ended in the tag), a cut-off end marker after the body is framing."""
    text = body.strip(WHITESPACE)
    if cut and not text.endswith("}") and "<" in text:
        marker = text.rindex("<")
        if END.startswith(text[marker:]):
            text = text[:marker].rstrip(WHITESPACE)
    if not text.startswith("{"):
        return None
    try:
        tree = ast.parse(text, mode="eval")
        ast.literal_eval(tree)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(tree.body, ast.Dict):
        return None
    name: object = None
    arguments: object = {}
    seen: set[_Role] = set()
    events: list[tuple[EventName, str]] = []
    for key_node, value_node in zip(tree.body.keys, tree.body.values, strict=True):
        key = ast.literal_eval(key_node) if key_node is not None else None
        role = _role(key, recover=True) if isinstance(key, str) else _Role.OTHER
        read_as = _Role.ARGUMENTS if role is _Role.VARIANT else role
        if role is _Role.OTHER:
            detail = f"the member {key!r} is not name or arguments"
            events.append((EventName.IGNORED_MEMBER, detail))
        elif read_as in seen:
            events.append((EventName.DUPLICATE_KEY, f"{key!r} given again: the first is kept"))
        elif role is _Role.NAME:
            name = ast.literal_eval(value_node)
        else:
            arguments = ast.literal_eval(value_node)
            if role is _Role.VARIANT:
                events.append((EventName.PARAMETERS_KEY, f'{key!r} read as "arguments"'))
        seen.add(read_as)
    if not isinstance(name, str) or name_problem(name) or not isinstance(arguments, dict):
        return None
    try:
        text = json.dumps(arguments, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    return _Literal(name, text, tuple(events))
