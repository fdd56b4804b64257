"""Reading a JSON call object as it streams: ``{"name": ..., "arguments": {...}}``.

Several families write a call as one JSON object holding the function's name and
its arguments (Llama's ``{"name": ..., "parameters": ...}``, Hermes'
``{"name": ..., "arguments": ...}``, Mistral's pre-v11 list). This module reads
such an object from its ``{`` on, a chunk at a time, in work proportional to the
chunk, and says what it met, in order (:class:`Item`): each key, the name once
its string closes, the arguments' text as it arrives, the ignored members, and
where the object closes or breaks off. It decides nothing about the output around
the object; the family does (see :mod:`toolcall.callstream`).

* :class:`ValueScanner` streams the text of one JSON value and knows where it
  ends. With ``python=True`` it also reads Python literal tokens and writes them
  as JSON as they pass (the ``python-literal`` recovery): ``'single quoted'``
  strings become JSON strings, ``True``/``False``/``None`` become
  ``true``/``false``/``null``; everything else is the model's own text.
* :class:`CallObjectReader` reads the object's members: the name (a string), the
  arguments under any of the family's keys (the first one wins, a repeat is a
  ``duplicate-key``), every other member ignored (``ignored-member``). With
  recoveries on it also reads keys and strings in single quotes, arguments given
  as a JSON string holding an object (``arguments-string``), and the object wrapped
  in OpenAI's ``{"type": "function", "function": {...}}`` envelope
  (``function-envelope``).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Collection
from dataclasses import dataclass

import regex

from toolcall.scanning import UNDECODED, decode_container, json_object_problem, name_problem
from toolcall.types import WHITESPACE, EventName

__all__ = ["CallObjectReader", "Item", "ItemKind", "ReaderState", "ValueScanner"]

_NOT_WHITESPACE = regex.compile(r"[^ \t\r\n]")
#: Outside strings: what ends a stretch of plain value text.
_JSON_STRUCTURE = regex.compile(r'[\[\]{}"]')
_PYTHON_STRUCTURE = regex.compile(r"[\[\]{}\"'A-Za-z_]")
_WORD = regex.compile(r"[A-Za-z0-9_]*")
_SCALAR_END = regex.compile(r"[ \t\r\n,\]}]")
#: Inside a string: what ends a stretch of plain string text.
_DOUBLE_STOP = regex.compile(r'["\\]')
_SINGLE_STOP = regex.compile(r"['\"\\]")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")

#: Python's words for JSON's literals.
_PYTHON_WORDS = {"True": "true", "False": "false", "None": "null"}
#: Escapes a JSON string allows after a backslash (``u`` is followed by hex digits).
_JSON_ESCAPES = frozenset('"\\/bfnrtu')


class ValueScanner:
    """Streams the text of one JSON value and knows when it is complete.

    :meth:`feed` returns ``(part, rest)``: the value's text in this chunk, and what
    follows the value once it is complete (``""`` until then). Leading whitespace is
    skipped. Structure is tracked, not validated: brackets of either kind count as
    depth, so a malformed value still ends where its brackets balance; a scalar
    (number, literal, garbage) ends at whitespace, ``,``, ``]`` or ``}``. Inside a
    container, whitespace outside strings at the end of a chunk is held back until
    something else follows, so that a family may end the value at a marker with its
    trailing whitespace trimmed, however the text is split; :meth:`finish` returns
    what is held at the end of output.

    ``python=True`` reads Python literals too and writes them as JSON (see the
    module); :attr:`translated` says whether it had to.

    A container met whole in one chunk of at least :data:`~toolcall.scanning.DECODE_AT`
    characters (a one-shot parse) is found by the json module's decoder instead, when
    it is strict JSON: its text is then the value's text as it stands (nothing to
    translate), and :attr:`value` its decoded value.
    """

    __slots__ = (
        "_escape",
        "_held",
        "_held_kind",
        "_python",
        "_quote",
        "_scalar",
        "depth",
        "done",
        "is_string",
        "started",
        "translated",
        "value",
    )

    def __init__(self, *, python: bool = False) -> None:
        self._python = python
        self.started = False
        self.done = False
        self.depth = 0
        self.is_string = False
        self.translated = False
        #: The decoded value, if the value was decoded whole; else ``UNDECODED``.
        self.value: object = UNDECODED
        self._quote = ""  # the open string's quote character, if any
        self._escape = ""  # a backslash escape read in part
        self._scalar = False
        # Text held back at the end of a chunk: whitespace (kind " ") or a word that
        # may grow (kind "w"). In parts, so that a long whitespace run costs linear
        # time.
        self._held: list[str] = []
        self._held_kind = ""

    @property
    def in_string(self) -> bool:
        return bool(self._quote)

    @property
    def in_double_quotes(self) -> bool:
        return self._quote == '"'

    @property
    def plain_string(self) -> bool:
        """Whether the scan stands inside a string with nothing pending: text without a
        quote or a backslash leaves it there, and is the value's text as it stands."""
        return bool(self._quote) and not self._escape

    def feed(self, text: str) -> tuple[str, str]:
        if self.done:
            return "", text
        if self._held:
            if self._held_kind == " " and _NOT_WHITESPACE.search(text) is None:
                self._held.append(text)
                return "", ""
            buffer = "".join(self._held) + text
            self._held = []
            self._held_kind = ""
        else:
            buffer = text
        out: list[str] = []
        pos = 0
        if not self.started:
            first = _NOT_WHITESPACE.search(buffer)
            if first is None:
                return "", ""
            pos = first.start()
            self._start(buffer[pos], out)
            if self.depth:
                decoded = decode_container(buffer, pos)
                if decoded is not None:
                    self.value, whole = decoded
                    self.depth = 0
                    self.done = True
                    return buffer[pos:whole], buffer[whole:]
            if not self._scalar:
                pos += 1
        end = self._advance(buffer, pos, out)
        if end is None:
            part = "".join(out)
            if not self._held and not self._quote and not self._scalar and self.depth:
                # Whitespace at the end may come before a marker: hold it.
                kept = part.rstrip(WHITESPACE)
                if len(kept) < len(part):
                    self._held = [part[len(kept) :]]
                    self._held_kind = " "
                    part = kept
            return part, ""
        return "".join(out), buffer[end:]

    def finish(self) -> str:
        """The output ended: what was held, as value text."""
        held = "".join(self._held)
        kind = self._held_kind
        self._held = []
        self._held_kind = ""
        if kind == "w":
            held = self._word(held)
        held += self._escape
        self._escape = ""
        if self._scalar and self.started:
            self.done = True
        return held

    # -- the scan -------------------------------------------------------------------

    def _start(self, char: str, out: list[str]) -> None:
        self.started = True
        if char in "{[":
            self.depth = 1
            out.append(char)
        elif char == '"' or (char == "'" and self._python):
            self.is_string = True
            self._open(char, out)
        else:
            self._scalar = True

    def _open(self, quote: str, out: list[str]) -> None:
        self._quote = quote
        if quote == "'":
            self.translated = True
        out.append('"')

    def _advance(self, buffer: str, pos: int, out: list[str]) -> int | None:
        """Scan from ``pos``, writing the value's text to ``out``; return the offset
        just past the value's end, or ``None`` if it continues (anything that may
        still change meaning is held)."""
        size = len(buffer)
        structure = _PYTHON_STRUCTURE if self._python else _JSON_STRUCTURE
        while pos < size:
            if self._escape:
                pos = self._escaped(buffer, pos, out)
                continue
            quote = self._quote
            if quote:
                match = (_SINGLE_STOP if quote == "'" else _DOUBLE_STOP).search(buffer, pos)
                if match is None:
                    out.append(buffer[pos:])
                    return None
                at = match.start()
                out.append(buffer[pos:at])
                char = buffer[at]
                pos = at + 1
                if char == "\\":
                    self._escape = "\\"
                elif char != quote:  # a double quote inside a single-quoted string
                    out.append('\\"')
                else:
                    out.append('"')
                    self._quote = ""
                    if self.depth == 0:
                        self.done = True
                        return pos
                continue
            if self._scalar:
                match = _SCALAR_END.search(buffer, pos)
                if match is None:
                    out.append(buffer[pos:])
                    return None
                out.append(buffer[pos : match.start()])
                self.done = True
                return match.start()
            match = structure.search(buffer, pos)
            if match is None:
                out.append(buffer[pos:])
                return None
            at = match.start()
            out.append(buffer[pos:at])
            char = buffer[at]
            if char in "\"'":
                self._open(char, out)
                pos = at + 1
            elif char in "{[":
                self.depth += 1
                out.append(char)
                pos = at + 1
            elif char in "]}":
                self.depth -= 1
                out.append(char)
                pos = at + 1
                if self.depth == 0:
                    self.done = True
                    return pos
            else:  # a word (python only): True, False, None are Python's literals
                word = _WORD.match(buffer, at)
                assert word is not None
                if word.end() == size:
                    self._held = [word.group()]
                    self._held_kind = "w"
                    return None
                out.append(self._word(word.group()))
                pos = word.end()
        return None

    def _word(self, word: str) -> str:
        json_word = _PYTHON_WORDS.get(word)
        if json_word is None:
            return word
        self.translated = True
        return json_word

    def _escaped(self, buffer: str, pos: int, out: list[str]) -> int:
        """The character at ``pos``, after a backslash inside a string. Returns where
        the scan goes on (``pos`` itself when that character is to be read again)."""
        escape = self._escape
        char = buffer[pos]
        if len(escape) == 1:  # just the backslash
            self._escape = ""
            if not self._python:
                out.append("\\" + char)
            elif char == "x":
                self._escape = "\\x"  # Python's \xHH: two hex digits follow
            elif char == "'":
                self.translated = True
                out.append("'")
            elif char == "\n":
                self.translated = True  # a line continuation: nothing
            elif char in _JSON_ESCAPES:
                out.append("\\" + char)
            else:
                self.translated = True
                out.append("\\\\" + char)  # Python keeps an unknown escape's backslash
            return pos + 1
        self.translated = True
        if char in _HEX_DIGITS:
            if len(escape) == 3:
                self._escape = ""
                out.append("\\u00" + escape[2] + char)
            else:
                self._escape = escape + char
            return pos + 1
        # Not a hex escape after all: a backslash and what followed it, as text.
        self._escape = ""
        out.append("\\\\" + escape[1:])
        return pos


class ItemKind(enum.Enum):
    MEMBER = "member"  # a member's key starts here
    KEY = "key"  # a member's key (``value``), before its value
    VALUE = "value"  # a member's value starts here
    NAME = "name"  # the name string closed (``value``: the name)
    ARGUMENTS = "arguments"  # argument text (``value``)
    EVENT = "event"  # ``value``: the event name, ``detail``
    CLOSE = "close"  # the object closed
    BREAK = "break"  # the object cannot be read from here on


@dataclass(frozen=True, slots=True)
class Item:
    """Something the reader met. ``end`` is the offset in the fed chunk just past it
    (for ``BREAK``: where the unreadable text starts; for ``MEMBER`` and ``VALUE``:
    where the key or the value starts). A ``BREAK`` at a name string that closed but
    is no readable name (:func:`~toolcall.scanning.name_problem`) says why in
    ``detail``. ``decoded``: for ``ARGUMENTS`` text that is
    the whole arguments value, decoded whole by the json module, its value (else
    ``UNDECODED``): :meth:`~toolcall.callstream.CallStream.arguments` takes it."""

    kind: ItemKind
    end: int
    value: str = ""
    detail: str = ""
    decoded: object = UNDECODED


class ReaderState(enum.Enum):
    OPEN = "open"  # before the "{"
    KEY = "key"  # a key or "}" is expected
    KEY_STRING = "key-string"
    COLON = "colon"
    VALUE = "value"  # a value is expected
    NAME = "name"  # reading the name string
    ARGUMENTS = "arguments"  # reading the arguments value
    SKIP = "skip"  # reading the value of an ignored member
    NEXT = "next"  # "," or "}" is expected
    CLOSED = "closed"
    BROKEN = "broken"


_READING = frozenset({ReaderState.KEY_STRING, ReaderState.NAME, ReaderState.ARGUMENTS})


class CallObjectReader:
    """Reads one call object, from its ``{``, a chunk at a time (see the module).

    ``argument_keys`` are the keys whose value is the arguments, all native (a
    family that reads a variant key as a recovery renames it before, or checks
    :attr:`arguments_key`). ``recover`` switches the named recoveries on.
    """

    __slots__ = (
        "_argument_keys",
        "_envelopes",
        "_key",
        "_recover",
        "_string",
        "_value",
        "arguments_done",
        "arguments_key",
        "arguments_seen",
        "held_string",
        "name",
        "state",
    )

    def __init__(self, argument_keys: Collection[str], *, recover: bool) -> None:
        self._argument_keys = frozenset(argument_keys)
        self._recover = recover
        self.state = ReaderState.OPEN
        self.name: str | None = None
        self.arguments_key = ""
        self.arguments_seen = False
        self.arguments_done = False
        #: Whether the arguments are a string held for ``arguments-string``.
        self.held_string = False
        self._key = ""
        self._envelopes = 0  # how many function envelopes are open
        self._value = ValueScanner(python=recover)
        self._string: list[str] = []  # a key or name string (JSON text) in parts

    @property
    def partial_name(self) -> str | None:
        """The name string's JSON text read so far, while it is being read."""
        if self.state is not ReaderState.NAME:
            return None
        return "".join(self._string)

    @property
    def in_string(self) -> bool:
        """Whether the reader stands inside a string (where markers are text)."""
        return self.state in _READING_STRINGS and self._value.in_string

    @property
    def plain_arguments(self) -> bool:
        """Whether argument text without a quote or a backslash is argument text as it
        stands (the reader is inside an argument string with nothing pending)."""
        return (
            self.state is ReaderState.ARGUMENTS
            and not self.held_string
            and self._value.plain_string
        )

    @property
    def plain_escapes(self) -> bool:
        """Whether, besides, a complete JSON escape (a backslash and one of ``"\\/bfnrtu``)
        is argument text as it stands: the argument string is double-quoted."""
        return self.plain_arguments and self._value.in_double_quotes

    @property
    def done(self) -> bool:
        return self.state in (ReaderState.CLOSED, ReaderState.BROKEN)

    def feed(self, text: str) -> list[Item]:
        items: list[Item] = []
        pos = 0
        size = len(text)
        while pos < size and not self.done:
            state = self.state
            if state in _VALUES:
                pos = self._value_text(text, pos, items)
                continue
            found = _NOT_WHITESPACE.search(text, pos)
            if found is None:
                break
            pos = self._structure(text, found.start(), items)
        return items

    def finish(self) -> list[Item]:
        """The output ended: the argument text held back (the value is complete if it
        was a scalar)."""
        items = self._flush(trim=False)
        if self.state is ReaderState.ARGUMENTS and self._value.done:
            self.state = ReaderState.NEXT
        return items

    def cut(self) -> list[Item]:
        """A marker ends the object here: the argument text held back, less the
        whitespace held at its end."""
        return self._flush(trim=True)

    def _flush(self, *, trim: bool) -> list[Item]:
        if self.state is not ReaderState.ARGUMENTS:
            return []
        tail = self._value.finish()
        if trim:
            tail = tail.rstrip(WHITESPACE)
        if self.held_string:
            # An arguments string that never closed is given as it stands.
            self.held_string = False
            tail = "".join(self._string) + tail
        self.arguments_done = self._value.done
        return [Item(ItemKind.ARGUMENTS, 0, tail)] if tail else []

    # -- structure ------------------------------------------------------------------

    def _structure(self, text: str, pos: int, items: list[Item]) -> int:
        char = text[pos]
        state = self.state
        if state is ReaderState.OPEN:
            if char == "{":
                self.state = ReaderState.KEY
                return pos + 1
        elif state is ReaderState.KEY:
            if char == '"' or (char == "'" and self._recover):
                items.append(Item(ItemKind.MEMBER, pos))
                self._begin_string(ReaderState.KEY_STRING)
                return pos
            if char == "}":  # an empty object, or a trailing comma
                return self._close(pos + 1, items)
        elif state is ReaderState.COLON:
            if char == ":":
                self.state = ReaderState.VALUE
                return pos + 1
            if self.name is not None and char in ",}":
                # A key with no value, after the name: the call stands, the key is
                # skipped like any member it does not read.
                items.append(_event(EventName.IGNORED_MEMBER, pos, f"a key {self._key!r} alone"))
                self.state = ReaderState.NEXT
                return pos
        elif state is ReaderState.VALUE:
            return self._value_start(char, pos, items)
        elif state is ReaderState.NEXT:
            if char == ",":
                self.state = ReaderState.KEY
                return pos + 1
            if char == "}":
                return self._close(pos + 1, items)
        self.state = ReaderState.BROKEN
        items.append(Item(ItemKind.BREAK, pos))
        return pos

    def _close(self, end: int, items: list[Item]) -> int:
        if self._envelopes:
            self._envelopes -= 1
            self.state = ReaderState.NEXT
            return end
        self.state = ReaderState.CLOSED
        items.append(Item(ItemKind.CLOSE, end))
        return end

    def _begin_string(self, state: ReaderState) -> None:
        self.state = state
        self._value = ValueScanner(python=self._recover)
        self._string = []

    def _value_start(self, char: str, pos: int, items: list[Item]) -> int:
        items.append(Item(ItemKind.VALUE, pos))
        key = self._key
        if key == "name" and self.name is None:
            if char == '"' or (char == "'" and self._recover):
                self._begin_string(ReaderState.NAME)
                return pos
            # A name that is not a string: not a call object.
            self.state = ReaderState.BROKEN
            items.append(Item(ItemKind.BREAK, pos))
            return pos
        if key in self._argument_keys:
            if self.arguments_seen:
                items.append(
                    _event(EventName.DUPLICATE_KEY, pos, f"a second arguments key {key!r}")
                )
            else:
                self.arguments_seen = True
                self.arguments_key = key
                self.state = ReaderState.ARGUMENTS
                self._value = ValueScanner(python=self._recover)
                self._string = []
                self.held_string = self._recover and char in "\"'"
                return pos
        elif key == "function" and char == "{" and self.name is None and self._recover:
            self._envelopes += 1
            self.state = ReaderState.KEY
            items.append(
                _event(EventName.FUNCTION_ENVELOPE, pos, 'the call is inside {"function": ...}')
            )
            return pos + 1
        elif key == "name":
            items.append(_event(EventName.DUPLICATE_KEY, pos, "a second name"))
        else:
            items.append(_event(EventName.IGNORED_MEMBER, pos, f"the member {key!r}"))
        self.state = ReaderState.SKIP
        self._value = ValueScanner(python=self._recover)
        return pos

    # -- values ---------------------------------------------------------------------

    def _value_text(self, text: str, pos: int, items: list[Item]) -> int:
        scanner = self._value
        part, rest = scanner.feed(text[pos:] if pos else text)
        state = self.state
        end = len(text) - len(rest)
        if state is ReaderState.ARGUMENTS:
            if self.held_string:
                self._string.append(part)
            elif part:
                items.append(Item(ItemKind.ARGUMENTS, end, part, decoded=scanner.value))
        elif state is not ReaderState.SKIP:
            self._string.append(part)
        if not scanner.done:
            return len(text)
        if scanner.translated:
            items.append(_event(EventName.PYTHON_LITERAL, end, "Python literal syntax"))
        if state is ReaderState.SKIP:
            self.state = ReaderState.NEXT
        elif state is ReaderState.ARGUMENTS:
            self.arguments_done = True
            self.state = ReaderState.NEXT
            if self.held_string:
                self._string_arguments(end, items)
        else:
            self._string_done(state, end, items)
        return end

    def _string_done(self, state: ReaderState, end: int, items: list[Item]) -> None:
        try:
            value = json.loads("".join(self._string))
        except ValueError:
            value = None
        if state is ReaderState.KEY_STRING and not isinstance(value, str) and self.name is not None:
            # A key that is no JSON string, after the name: its member is skipped.
            items.append(_event(EventName.IGNORED_MEMBER, end, "a key that is not a JSON string"))
            value = "\x00"  # no member's name: the value is skipped as well
        if not isinstance(value, str):
            self.state = ReaderState.BROKEN
            items.append(Item(ItemKind.BREAK, end))
            return
        problem = name_problem(value) if state is ReaderState.NAME else None
        if problem is not None:
            # No readable name (empty, or a lone surrogate): not a call object.
            self.state = ReaderState.BROKEN
            items.append(Item(ItemKind.BREAK, end, detail=problem))
            return
        if state is ReaderState.KEY_STRING:
            self._key = value
            self.state = ReaderState.COLON
            items.append(Item(ItemKind.KEY, end, value))
        else:
            self.name = value
            self.state = ReaderState.NEXT
            items.append(Item(ItemKind.NAME, end, value))

    def _string_arguments(self, end: int, items: list[Item]) -> None:
        """The arguments were a string: the object it holds (``arguments-string``), or
        the string's text as it stands."""
        self.held_string = False
        text = "".join(self._string)
        try:
            decoded = json.loads(text)
        except ValueError:
            decoded = None
        if isinstance(decoded, str) and json_object_problem(decoded.strip(WHITESPACE)) is None:
            items.append(Item(ItemKind.ARGUMENTS, end, decoded.strip(WHITESPACE)))
            items.append(
                _event(EventName.ARGUMENTS_STRING, end, "arguments given as a JSON string")
            )
            return
        items.append(Item(ItemKind.ARGUMENTS, end, text))


_VALUES = frozenset(
    {ReaderState.KEY_STRING, ReaderState.NAME, ReaderState.ARGUMENTS, ReaderState.SKIP}
)
_READING_STRINGS = _VALUES


def _event(name: EventName, end: int, detail: str) -> Item:
    return Item(ItemKind.EVENT, end, name.value, detail)
