"""Streaming machinery that every family reuses (DESIGN §3.6).

Each piece does work proportional to the text it is given (plus the length of a
marker), never to the text seen so far:

* :class:`Markers` finds marker strings in a buffer, reporting a possible marker
  prefix at the end of the buffer (``regex`` partial matching), and
  :class:`MarkerScanner` turns a stream of chunks into text and marker segments,
  holding back only a suffix that could still grow into a marker;
* :class:`JsonValueScanner` streams the raw text of one JSON value and knows when
  it is complete (strings with escapes, nested brackets), optionally stopping at a
  marker met outside a string;
* :class:`JsonEmitter` writes the canonical ``json.dumps(..., ensure_ascii=False)``
  text of an object piece by piece, for formats whose arguments are not JSON;
* :class:`ContentGate` applies the content whitespace policy shared by all families;
* :class:`TextParts` keeps text that arrives in small parts (a call's arguments, a
  held whitespace run) in about as many bytes as it has characters.
"""

from __future__ import annotations

import json
import re
from _json import scanstring as _scanstring  # the json module's C string scanner
from collections.abc import Iterable
from dataclasses import dataclass
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any, Final

import regex

from toolcall.types import WHITESPACE


class _Undecoded:
    """The type of :data:`UNDECODED`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNDECODED"


#: Stands for a JSON value that was not decoded.
UNDECODED: Final = _Undecoded()
#: A container at least this long, met whole in one chunk, is decoded by the json
#: module (its C decoder finds the end faster than any scan written here).
DECODE_AT: Final = 4096
#: A :class:`TextParts` joins its parts into one chunk every this many parts.
JOIN_EVERY: Final = 1024

__all__ = [
    "DECODE_AT",
    "JOIN_EVERY",
    "UNDECODED",
    "ContentGate",
    "Found",
    "JsonEmitter",
    "JsonValueScanner",
    "Marker",
    "MarkerScanner",
    "Markers",
    "Text",
    "TextParts",
    "decode_container",
    "decode_whole",
    "json_object_problem",
    "json_string_end",
    "name_problem",
    "string_body_stop",
]


class TextParts:
    """Text that arrives in parts (a delta's worth each) and is wanted whole later.

    A str object and a list slot per part cost about 65 bytes for a part of 8
    characters; kept until the text ends (a call's arguments, megabytes long), they
    fault in fresh memory for every byte parsed. So every :data:`JOIN_EVERY` parts
    are joined into one chunk: only the parts since the last join, never the text so
    far (that would cost quadratic time). ``parts`` is then the chunks followed by at
    most ``JOIN_EVERY`` parts; ``"".join(parts)`` is the text.
    """

    __slots__ = ("limit", "parts")

    def __init__(self, text: str = "") -> None:
        self.parts: list[str] = [text] if text else []
        #: The length of ``parts`` at which they are joined: a hot path appends to
        #: ``parts`` itself and calls :meth:`pack` when it reaches this.
        self.limit = JOIN_EVERY

    def append(self, text: str) -> None:
        parts = self.parts
        parts.append(text)
        if len(parts) >= self.limit:
            self.pack()

    def pack(self) -> None:
        """Join the parts since the last join into one chunk."""
        parts = self.parts
        chunks = self.limit - JOIN_EVERY
        parts[chunks:] = ["".join(parts[chunks:])]
        self.limit = chunks + 1 + JOIN_EVERY

    def text(self) -> str:
        """The text so far, joined (and kept as one part from now on)."""
        parts = self.parts
        if len(parts) == 1:
            return parts[0]
        text = "".join(parts)
        self.parts = [text] if text else []
        self.limit = len(self.parts) + JOIN_EVERY  # the text is a chunk: not joined again
        return text

    def clear(self) -> None:
        self.parts = []
        self.limit = JOIN_EVERY


@dataclass(frozen=True)
class Found:
    """A marker found in a buffer at ``[start, end)``.

    ``marker`` is ``None`` for a partial match: ``buffer[start:]`` is a proper
    prefix of some marker and may still grow into it.
    """

    start: int
    end: int
    marker: str | None

    @property
    def partial(self) -> bool:
        return self.marker is None


class Markers:
    """A fixed set of marker strings, searched with partial matching."""

    def __init__(self, markers: Iterable[str]) -> None:
        unique = sorted({m for m in markers if m}, key=lambda m: (-len(m), m))
        if not unique:
            msg = "Markers needs at least one non-empty marker"
            raise ValueError(msg)
        self.markers: tuple[str, ...] = tuple(unique)
        self.longest = len(unique[0])
        self._pattern = regex.compile("|".join(regex.escape(m) for m in unique))
        #: The same alternation for ``re``, which finds a complete marker in a long text
        #: many times faster than ``regex`` does with partial matching.
        self._whole = re.compile("|".join(re.escape(m) for m in unique))
        #: Matches a character that some marker starts with: text without one holds
        #: no marker and no marker prefix. (``re``: a character class needs no partial
        #: matching, and ``re`` searches a short text in a third of ``regex``'s time.)
        self.first = re.compile("[" + "".join(sorted({re.escape(m[0]) for m in unique})) + "]")
        #: The characters markers start with.
        self.first_characters = "".join(sorted({m[0] for m in unique}))

    def find(self, buffer: str, pos: int = 0, end: int | None = None) -> Found | None:
        """The first marker, or marker prefix reaching the end, in ``buffer[pos:end]``."""
        stop = len(buffer) if end is None else end
        # ``regex`` prefers the leftmost complete match to any partial one, and a
        # partial match only reaches the end from within a marker's length of it.
        whole = self._whole.search(buffer, pos, stop)
        if whole is not None:
            return Found(whole.start(), whole.end(), whole.group())
        tail = max(pos, stop - self.longest + 1)
        match = self._pattern.search(buffer, tail, stop, partial=True)
        if match is None:
            return None
        if match.partial:
            # An empty partial match at the end only says "a marker could start here".
            return Found(match.start(), stop, None) if match.start() < stop else None
        return Found(match.start(), match.end(), match.group())

    def across(self, text: str, cut: int) -> str | None:
        """A marker that stands in ``text`` across offset ``cut`` (starting before it and
        ending after it), or ``None``: what two pieces of text join into. Looks at no
        more than a marker's length on either side of ``cut``."""
        low = max(0, cut - self.longest + 1)
        high = min(len(text), cut + self.longest - 1)
        for match in self._pattern.finditer(text, low, high, overlapped=True):
            if match.start() < cut < match.end():
                return str(match.group())
        return None

    def __contains__(self, text: object) -> bool:
        return text in self.markers


@dataclass(frozen=True)
class Text:
    """Plain text of the output, starting at offset ``start``."""

    text: str
    start: int

    @property
    def end(self) -> int:
        return self.start + len(self.text)


@dataclass(frozen=True)
class Marker:
    """A marker of the output, starting at offset ``start``."""

    marker: str
    start: int

    @property
    def end(self) -> int:
        return self.start + len(self.marker)


class MarkerScanner:
    """Splits a stream of chunks into :class:`Text` and :class:`Marker` segments.

    Only a suffix that could still grow into a marker is held back; offsets count
    characters from the start of the stream.
    """

    def __init__(self, markers: Markers | Iterable[str]) -> None:
        self._markers = markers if isinstance(markers, Markers) else Markers(markers)
        self._held = ""
        self._held_start = 0

    @property
    def held(self) -> str:
        """The suffix held back because it may be the start of a marker."""
        return self._held

    @property
    def position(self) -> int:
        """Offset of the first character not yet released (the held suffix's start)."""
        return self._held_start

    def feed(self, text: str) -> list[Text | Marker]:
        if not self._held and self._markers.first.search(text) is None:
            start = self._held_start
            self._held_start = start + len(text)
            return [Text(text, start)] if text else []
        buffer = self._held + text
        base = self._held_start
        segments: list[Text | Marker] = []
        pos = 0
        while True:
            found = self._markers.find(buffer, pos)
            cut = len(buffer) if found is None else found.start
            if cut > pos:
                segments.append(Text(buffer[pos:cut], base + pos))
            if found is None or found.marker is None:
                break
            segments.append(Marker(found.marker, base + found.start))
            pos = found.end
        self._held = buffer[cut:]
        self._held_start = base + cut
        return segments

    def pass_plain(self, text: str) -> bool:
        """Let ``text`` go by unscanned if it holds no marker and no marker prefix and
        nothing is held (it is one :class:`Text` segment); whether it did."""
        if self._held or self._markers.first.search(text) is not None:
            return False
        self._held_start += len(text)
        return True

    def skip(self, size: int) -> None:
        """``size`` characters went by unscanned (nothing may be held)."""
        if self._held:
            msg = "skip() while a marker prefix is held"
            raise RuntimeError(msg)
        self._held_start += size

    def finish(self) -> list[Text]:
        """The stream has ended: the held suffix was not a marker after all."""
        held, start = self._held, self._held_start
        self._held = ""
        self._held_start = start + len(held)
        return [Text(held, start)] if held else []


_WHITESPACE = WHITESPACE
#: The body of a JSON string up to its closing quote (or the end of the text, or a
#: backslash that ends the text), escapes stepped over whole; possessive, so it never
#: backtracks. ``re``: it runs this faster than ``regex``.
_STRING_BODY = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+', re.DOTALL)
# Plain searches use ``re``, which runs them faster than ``regex`` (that is for the
# partial matching of markers).
_IN_CONTAINER = re.compile(r'[\[\]{}"]')
_SCALAR_END = re.compile(r"[ \t\r\n,\]}]")
_NOT_WHITESPACE = re.compile(r"[^ \t\r\n]")


class JsonValueScanner:
    """Streams the raw text of one JSON value and knows when it is complete.

    :meth:`feed` returns ``(part, rest)``: the characters of ``text`` that belong
    to the value, and what follows once the value is complete (``""`` until then).
    Leading whitespace is skipped. Structure is tracked, not validated: brackets
    of either kind count as depth, so a malformed value still ends where its
    brackets balance. A scalar (number, literal, or garbage) ends at whitespace,
    ``,``, ``]`` or ``}``; at the end of output call :meth:`finish`.

    With ``stop``, a marker met outside a string ends the value early
    (:attr:`stopped`); ``rest`` then starts with the marker. A possible prefix of a
    stop marker at the end of a chunk is held back until the next chunk.

    With ``stop``, or ``hold_whitespace`` (for a family whose markers the
    call-stream machine splits out before the value's text arrives), whitespace
    outside strings at the end of a chunk is held back until something else
    follows, so that the value can end at a marker with its trailing whitespace
    trimmed, however the text is split (:meth:`finish` returns it).

    An object or array met whole in one chunk of at least :data:`DECODE_AT`
    characters (a one-shot parse) is found by the json module's decoder instead,
    strictly (DESIGN §4.3): then :attr:`value` is its decoded value, which
    :func:`json_object_problem` can take instead of decoding the text again.
    """

    def __init__(self, stop: Markers | None = None, *, hold_whitespace: bool = False) -> None:
        self._stop = stop
        self._hold_whitespace = hold_whitespace or stop is not None
        # What may not belong to the value yet: whitespace (``_held_blank``), or a
        # possible stop-marker prefix and the whitespace before it. Kept in parts so
        # that a long whitespace run costs linear time and memory; ``None``: nothing held.
        self._held: TextParts | None = None
        self._held_blank = False
        self.started = False
        self.done = False
        self.stopped = False
        self.in_string = False
        self.depth = 0
        self._escape = False
        self._scalar = False
        self._string_value = False
        #: The decoded value, if the value was decoded whole; else :data:`UNDECODED`.
        self.value: object = UNDECODED

    @property
    def plain_string(self) -> bool:
        """Whether the scan stands inside a string with no escape pending and nothing
        held: text without ``"`` or ``\\`` leaves it there, so it may go by unscanned."""
        return self.in_string and not self._escape and not self._held

    def string_text(self, text: str) -> bool:
        """Take ``text`` if it goes on with the string the scan stands in without
        ending it (nothing held): the scan stays in the string, with an escape pending
        if ``text`` ends inside one. ``False``: nothing was taken, :meth:`feed` the
        text. The common case of a stream inside a string, at a fraction of the cost."""
        if not self.in_string or self._held:
            return False
        end = json_string_end(text, 1 if self._escape and text else 0)
        if end >= 0:
            return False
        self._escape = end == -2
        return True

    @property
    def is_string(self) -> bool:
        """Whether the value is a JSON string (known once it has started)."""
        return self._string_value

    def feed(self, text: str) -> tuple[str, str]:
        if self.done:
            return "", text
        held = self._held
        if held is not None:
            if self._held_blank and _NOT_WHITESPACE.search(text) is None:
                held.append(text)
                return "", ""
            buffer = held.text() + text
            self._held = None
        else:
            buffer = text
        pos = 0
        if not self.started:
            first = _NOT_WHITESPACE.search(buffer)
            if first is None:
                return "", ""
            pos = first.start()
            if self._at_stop(buffer, pos):
                return self._stop_or_hold(buffer, pos, pos)
            self._start(buffer[pos])
            if self.depth:
                whole = self._decode(buffer, pos)
                if whole >= 0:
                    return buffer[pos:whole], buffer[whole:]
            start, pos = pos, pos + 1
            if self._scalar:
                pos -= 1
        else:
            start = 0
        end = self._advance(buffer, pos)
        if end is None:
            return self._maybe_hold(buffer, start)
        if self.stopped:
            return buffer[start:end].rstrip(_WHITESPACE), buffer[end:]
        return buffer[start:end], buffer[end:]

    def _decode(self, buffer: str, pos: int) -> int:
        """Decode the container that starts at ``pos`` whole: where it ends, or -1 if
        it does not (see :func:`decode_container`)."""
        decoded = decode_container(buffer, pos)
        if decoded is None:
            return -1
        self.value, end = decoded
        self.depth = 0
        self.done = True
        return end

    def finish(self) -> str:
        """The output ended: release a held stop-marker prefix as value text."""
        held = "" if self._held is None else self._held.text()
        self._held = None
        if self._scalar and self.started:
            self.done = True
        return held

    def _start(self, char: str) -> None:
        self.started = True
        if char in "{[":
            self.depth = 1
        elif char == '"':
            self.in_string = True
            self._string_value = True
        else:
            self._scalar = True

    def _at_stop(self, buffer: str, pos: int) -> bool:
        if self._stop is None:
            return False
        found = self._stop.find(buffer, pos, pos + self._stop.longest)
        return found is not None and found.start == pos

    def _stop_or_hold(self, buffer: str, pos: int, start: int) -> tuple[str, str]:
        assert self._stop is not None
        found = self._stop.find(buffer, pos, pos + self._stop.longest)
        assert found is not None
        if found.partial:
            self._hold(buffer[pos:])
            return buffer[start:pos], ""
        self.done = self.stopped = True
        return buffer[start:pos].rstrip(_WHITESPACE), buffer[pos:]

    def _maybe_hold(self, buffer: str, start: int) -> tuple[str, str]:
        """Nothing completed in this chunk. With stop markers, hold back what may
        not belong to the value: a possible marker prefix at the end, and the
        whitespace before it (trimmed if a marker does follow), so that every
        split of the text gives the same value."""
        if not self._hold_whitespace or self.in_string or self._escape:
            return buffer[start:], ""
        cut = len(buffer)
        if self._stop is not None:
            found = self._stop.find(buffer, max(start, cut - self._stop.longest))
            if found is not None and found.partial:
                cut = found.start
        cut = max(start, len(buffer[:cut].rstrip(_WHITESPACE)))
        self._hold(buffer[cut:])
        return buffer[start:cut], ""

    def _hold(self, text: str) -> None:
        self._held = TextParts(text) if text else None
        self._held_blank = _NOT_WHITESPACE.search(text) is None

    def _advance(self, buffer: str, pos: int) -> int | None:
        """Scan from ``pos``; return the offset just past the value's end (or the
        offset of a stop marker), or ``None`` if the value continues."""
        size = len(buffer)
        while pos < size:
            if self._escape:
                self._escape = False
                pos += 1
                continue
            if self.in_string:
                end = json_string_end(buffer, pos)
                if end < 0:
                    self._escape = end == -2
                    return None
                pos = end
                self.in_string = False
                if self.depth == 0:
                    self.done = True
                    return pos
                continue
            if self._scalar:
                match = _SCALAR_END.search(buffer, pos)
                stop = self._find_stop(buffer, pos, match.start() if match else size)
                if stop is not None:
                    return stop
                if match is None:
                    return None
                self.done = True
                return match.start()
            match = _IN_CONTAINER.search(buffer, pos)
            stop = self._find_stop(buffer, pos, match.start() if match else size)
            if stop is not None:
                return stop
            if match is None:
                return None
            char = match.group()
            pos = match.start() + 1
            if char == '"':
                self.in_string = True
            elif char in "{[":
                self.depth += 1
            else:
                self.depth -= 1
                if self.depth == 0:
                    self.done = True
                    return pos
        return None

    def _find_stop(self, buffer: str, pos: int, end: int) -> int | None:
        """Offset of a complete stop marker in ``buffer[pos:end]`` (outside strings)."""
        if self._stop is None:
            return None
        found = self._stop.find(buffer, pos, end)
        if found is None or found.partial:
            return None
        self.done = self.stopped = True
        return found.start


def json_string_end(buffer: str, pos: int) -> int:
    """From ``pos`` inside a JSON string (no escape pending): the offset just past its
    closing quote; ``-1`` if it does not close in ``buffer``, ``-2`` if ``buffer`` ends
    inside an escape. A quote closes the string unless an odd run of backslashes
    stands before it. The first few quotes are looked at one by one; past them the
    json module's string scanner (C, stepping over escapes) finds the closing one."""
    quote = buffer.find('"', pos)
    if quote < 0 and not buffer.endswith("\\"):
        return -1  # the common case: text inside the string, no escape pending
    looked = 0
    while quote >= 0:
        if _backslashes_before(buffer, pos, quote) % 2 == 0:
            return quote + 1
        looked += 1
        if looked == _QUOTES_BY_HAND:
            try:
                return _scanstring(buffer, quote + 1, False)[1]
            except ValueError:  # an escape JSON does not know, or no closing quote
                end = _STRING_BODY.match(buffer, quote + 1).end()  # type: ignore[union-attr]
                if end == len(buffer):
                    return -1
                return -2 if buffer[end] == "\\" else end + 1
        quote = buffer.find('"', quote + 1)
    return -2 if _backslashes_before(buffer, pos, len(buffer)) % 2 else -1


def decode_whole(buffer: str, pos: int) -> tuple[object, int] | None:
    """The strict JSON value (DESIGN §4.3) that starts at ``pos`` and where it ends, if
    ``buffer`` holds all of it; ``None`` if it is incomplete, not strict JSON, or nested
    too deeply (a piecewise scan reads it then). A value found here is strict JSON, so
    its text is the same whatever reading of the policy's recoveries a scan applies."""
    try:
        value, end = _STRICT.raw_decode(buffer, pos)
    except (ValueError, RecursionError):
        return None
    return value, int(end)


def decode_container(buffer: str, pos: int) -> tuple[object, int] | None:
    """The object or array that starts at ``pos``, decoded whole (:func:`decode_whole`),
    if ``buffer`` holds at least :data:`DECODE_AT` characters from there (a one-shot
    parse): its value and where it ends. ``None`` otherwise, and for a shorter text (a
    stream's delta), where a piecewise scan costs less than a decode that may fail."""
    if len(buffer) - pos < DECODE_AT:
        return None
    return decode_whole(buffer, pos)


def _backslashes_before(buffer: str, pos: int, at: int) -> int:
    """The length of the run of backslashes that ends at ``at`` (not before ``pos``)."""
    start = at
    while start > pos and buffer[start - 1] == "\\":
        start -= 1
    return at - start


#: Quotes looked at one by one before the json module's string scanner takes over.
_QUOTES_BY_HAND: Final = 8


class JsonEmitter:
    """Writes ``json.dumps(obj, ensure_ascii=False)`` of an object, piece by piece.

    Concatenating the pieces of ``open``, then per member ``key`` and either
    ``value`` or ``string_start``/``string_chunk``.../``string_end``, then
    ``close``, gives exactly the canonical text of the object.
    """

    def __init__(self) -> None:
        self._members = 0

    @staticmethod
    def open() -> str:
        return "{"

    def key(self, key: str) -> str:
        separator = ", " if self._members else ""
        self._members += 1
        return separator + encode_basestring(key) + ": "

    @staticmethod
    def string_start() -> str:
        return '"'

    @staticmethod
    def string_chunk(text: str) -> str:
        # What json.dumps(text, ensure_ascii=False) writes, without building an encoder.
        # For ASCII text without DEL (the one ASCII character only ensure_ascii escapes)
        # the ASCII encoder writes the same, in about half the time.
        if text.isascii() and "\x7f" not in text:
            return encode_basestring_ascii(text)[1:-1]
        return encode_basestring(text)[1:-1]

    @staticmethod
    def string_end() -> str:
        return '"'

    @staticmethod
    def value(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    @staticmethod
    def close() -> str:
        return "}"


def _reject_constant(name: str) -> Any:
    msg = f"{name} is not JSON"
    raise ValueError(msg)


def string_body_stop(
    delimiters: str = "", *, escapes: str | None = None, quote: str = '"'
) -> re.Pattern[str]:
    """What a fast path inside a string with backslash escapes stops at
    (:meth:`~toolcall.callstream.CallStream.fast_string`): the string's closing
    ``quote``, a character of ``delimiters`` anywhere (escaped or not), and, if
    ``escapes`` is given, an escape whose letter is not one of them. It reads a delta
    that begins on an escape boundary from its start, an escape at a time: an escaped
    quote goes by, and so does a backslash that ends the delta. A plain delta costs
    one scan."""
    plain = rf"[^{re.escape(quote)}\\{re.escape(delimiters)}]*+"
    if escapes is not None:
        letter = f"[{re.escape(escapes)}]"
    elif delimiters:
        letter = f"[^{re.escape(delimiters)}]"
    else:
        letter = r"[\s\S]"
    stops = re.escape(quote + delimiters)
    return re.compile(rf"\A{plain}(?:\\{letter}{plain})*+(?:[{stops}]|\\(?!\Z))")


def json_object_problem(text: str, value: object = UNDECODED) -> str | None:
    """Why ``text`` is not a strict RFC 8259 JSON object (DESIGN §4.3), or ``None``.

    Strict: no ``NaN`` or ``Infinity`` (nor a number too large for a float, which
    Python would read as one), and every string encodable as UTF-8 (a lone
    surrogate, raw or escaped, is a defect). ``value``, when given, is ``text``
    decoded strictly already (:attr:`JsonValueScanner.value`): it is not decoded again.
    """
    if value is UNDECODED:
        try:
            value = _STRICT.decode(text)
        except RecursionError:
            return "nested too deeply to read"
        except ValueError as error:
            return f"not JSON ({error})"
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not an object"
    if not text.isascii():  # (known without a look at the text)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "a lone surrogate in the text"
        if "\\u" not in text:  # a quick look: encoding its strings takes longer
            return None
    # The text is UTF-8: a lone surrogate in the value came from an escape. A few
    # strings are looked at faster than the text (one of 1 MB, say) is searched, and
    # an ASCII one (every one, in an ASCII text with no \\u escape) at no cost.
    lone = _has_lone_surrogate(value, _WALK)
    if lone is None:
        lone = "\\u" in text and _ESCAPED_SURROGATE.search(text) is not None
        lone = lone and bool(_has_lone_surrogate(value))
    return "a lone surrogate escape in a string" if lone else None


def name_problem(name: object) -> str | None:
    """Why ``name``, the decoded name of a call, is no readable name, or ``None``.

    DESIGN §6 commits a call once its name is complete, and a name is only complete if
    it can be read: a non-empty string that UTF-8 can write. A lone surrogate (the JSON
    escape ``\\ud800`` with no partner) cannot be written, so vLLM could not send the
    call: it is no call, and its text is content with ``unparsed-markup``. A surrogate
    pair escape (``\\ud83d\\ude00``) decodes to one character and is a name's. Every
    family reads the names it decodes through this one rule.
    """
    if not isinstance(name, str):
        return "a name that is not a string"
    if not name:
        return "an empty name"
    if not name.isascii():
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            return "a name with a lone surrogate, which UTF-8 cannot write"
    return None


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        msg = f"{text} is out of a float's range"
        raise ValueError(msg)
    return value


#: Decodes strict JSON only (DESIGN §4.3): no NaN or Infinity, no float out of range.
_STRICT = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


#: How many items of a value json_object_problem looks at before it searches the text.
_WALK: Final = 64


def _has_lone_surrogate(value: object, budget: int | None = None) -> bool | None:
    """Whether a string anywhere in ``value`` holds a lone surrogate (iterative);
    ``None`` if ``value`` has more than ``budget`` items."""
    stack = [value]
    while stack:
        if budget is not None:
            budget -= 1
            if budget < 0:
                return None
        item = stack.pop()
        if isinstance(item, str):
            if item.isascii():
                continue
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class ContentGate:
    """The content whitespace policy shared by every family.

    Content is the text outside calls, except that whitespace which only
    separates content from a call, or which leads or trails the whole content, is
    framing. So a whitespace run is held until non-whitespace text follows it
    (then released verbatim, unless nothing has been released yet) and dropped
    when a call starts or the output ends. ``"A\\n<call/>\\nB"`` gives ``"A\\nB"``;
    whitespace-only content is never released. Whitespace is
    :data:`~toolcall.types.WHITESPACE`, in streaming and one-shot parsing alike.
    """

    __slots__ = ("_held", "_released")

    def __init__(self) -> None:
        self._held: TextParts | None = None  # a whitespace run (None: nothing held)
        self._released = False

    @property
    def holding(self) -> bool:
        """Whether a whitespace run is held back."""
        return self._held is not None

    @property
    def released(self) -> bool:
        """Whether any content was released yet."""
        return self._released

    def text(self, text: str) -> str:
        """Content text arrived; return what may be released now."""
        stripped = text.rstrip(_WHITESPACE)
        if not stripped:
            if text:
                held = self._held
                if held is None:
                    self._held = TextParts(text)
                else:
                    held.append(text)
            return ""
        if self._released:
            out = stripped if self._held is None else self._held.text() + stripped
        else:
            out = stripped.lstrip(_WHITESPACE)
        trail = text[len(stripped) :]
        self._held = TextParts(trail) if trail else None
        self._released = self._released or bool(out)
        return out

    def boundary(self) -> None:
        """A call starts here: held whitespace was framing."""
        self._held = None

    def finish(self) -> None:
        """The output ended: held trailing whitespace was framing."""
        self._held = None
