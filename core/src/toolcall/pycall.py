"""Python call syntax, read as it streams: ``[get_weather(city="Paris", days=3)]``.

The ``pythonic`` family (Llama 3.2, ToolACE), ``olmo3`` and ``llama4_pythonic``
write tool calls as Python calls with keyword arguments whose values are Python
literals. :class:`PyCallReader` reads that language for a
:class:`~toolcall.CallStream` family, one delta at a time, with work proportional
to the delta (no ``ast.parse`` of the text so far), and drives the stream's call
lifecycle itself. The arguments come out as the canonical
``json.dumps(..., ensure_ascii=False)`` text of the keyword arguments (DESIGN
§4.3), emitted as the model writes them:

* the call (index, id, name) at ``NAME(``; dotted names are names;
* ``{"KEY": `` (``, "KEY": `` for later ones) when ``KEY=`` is complete;
* a string value as JSON-escaped fragments while it streams, its closing ``"``
  once what follows the closing quote shows that it closed;
* any other value whole, when it is complete: numbers, ``True``/``False``/``None``,
  lists, dicts, and tuples and sets as lists, nested to any depth;
* ``}`` (``{}`` without arguments) at the ``)`` that closes the call.

The calls come in one of two shapes: a Python list (``[call, call]``, read from its
``[``) or one call per line (``olmo3``: the sequence ends at the first line that
does not start a call, or when the family calls :meth:`PyCallReader.end`).

What the reader decides, by the parsing policy (DESIGN §6):

* **not calls**: until the first call is committed everything is held; if the first
  element is not a call (``[1, 2]``, ``[see the docs](url)``, an empty list), or the
  family's ``first`` predicate refuses its name, the held text is released as
  content and :meth:`~PyCallReader.feed` returns where the reader stopped: the rest
  is the family's, as content. A later element of a list that is not a call is
  content, verbatim (``unparsed-markup``), up to the next ``,`` or ``]``.
* **defects** inside a committed call (a positional argument, an expression, a
  missing comma, an unbalanced bracket, an f-string placeholder, an invalid escape):
  the call keeps the arguments emitted so far (``malformed-arguments``); the
  unfinished element and the rest of the call up to its ``)`` are content, verbatim
  (``unparsed-markup``); the calls after it are read as usual. Bracket and string
  structure (not validity) finds that ``)``.
* **repeated keyword**: the first value is kept; the repeated ``KEY=VALUE`` is content
  (``duplicate-key``, ``unparsed-markup``).
* **the end** (of output, or the family's end marker) inside a call: the call keeps
  what was emitted (``truncated``) and the unfinished element is content. A list
  whose ``]`` never came after complete calls records ``missing-end``.

Named recoveries (events; all off when the stream's ``recover`` is false, i.e.
``TOOLCALL_STRICT_PARSING=1``, where the same text is a defect):

* ``control-character``: a raw line break or NUL inside a one-line string;
* ``reserved-word``: a Python keyword as a keyword argument name (``from=``);
* ``leading-zero``: a decimal integer written with leading zeros (``month=07``);
* ``nested-quote``: an unescaped quote of the string's own kind inside it
  (``cmd='sed -n '1,9p' f.py'``): a quote that Python could not read as the end of
  the string (it is followed by a letter, a digit or other text) is text, and from
  then on only a quote followed by what may follow the value closes the string;
* ``dashed-name``: a call name with ``-`` in it (a tool name that is no identifier);
* ``json-literal``: ``true``, ``false``, ``null`` (native when ``json_literals``).

Cost: every character is looked at a bounded number of times; values are built
with an explicit stack and serialised iteratively, so deep nesting never recurses.
"""

from __future__ import annotations

import enum
import json
import keyword
import math
import re
import unicodedata
from _json import scanstring as _scanstring  # json's C string scanner: (value, end)
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import orjson
import regex

from toolcall.scanning import UNDECODED, JsonEmitter
from toolcall.types import EventName

if TYPE_CHECKING:
    from toolcall.callstream import CallStream

__all__ = ["MAX_DEPTH", "MAX_NAME", "PyCallReader", "dumps"]

#: A call name or keyword longer than this is not one.
MAX_NAME: Final = 256
#: Containers nested deeper than this in a value are a defect (a guard against
#: absurd input; nothing here recurses). A value nested deeper than ``json.loads``
#: reads back (about 1,000 levels) is emitted and, as any arguments that do not
#: read as a JSON object, recorded ``malformed-arguments`` when the call closes.
MAX_DEPTH: Final = 100_000
#: An escape sequence longer than this (``\N{...}``) is invalid.
_MAX_ESCAPE: Final = 100
#: Python whitespace between tokens inside brackets.
_WS = regex.compile(r"[ \t\f\r\n]*")
_NAME_START = regex.compile(r"[^\W\d]")
_WORD = regex.compile(r"\w*")
_NAME_RUN = regex.compile(r"[\w.]*")
_DASHED_NAME_RUN = regex.compile(r"[\w.-]*")
_NAME = regex.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")
_DASHED_NAME = regex.compile(r"[^\W\d][\w-]*(?:\.[^\W\d][\w-]*)*")
_NUMBER_RUN = regex.compile(r"[\w.]*")
_DECIMAL = regex.compile(r"[\d_.eE+-]+")
_LEADING_ZERO = regex.compile(r"0(?:_?\d)+")
#: The escapes a run decodes at once, with ``unicode_escape`` (which reads them as a
#: Python literal does): complete as they stand, and naming a character JSON can
#: hold. The others go through :meth:`PyCallReader._escape`: ``\N{...}``, unknown
#: escapes, one naming a surrogate or no character, an octal escape past ``\377``
#: or that may still go on, a backslash before a carriage return, and any escape
#: cut off by the end of the text.
_DECODED_ESCAPE = (
    r"\\(?:[\\'\"abfnrtv\n]|x[0-9a-fA-F]{2}|u(?![dD][89a-fA-F])[0-9a-fA-F]{4}"
    r"|U(?!0000[dD][89a-fA-F])00(?:0[0-9a-fA-F]|10)[0-9a-fA-F]{4}"
    r"|[0-3][0-7]{2}|[0-7]{1,2}(?=[^0-7]))"
)


def _run_pattern(quote: str, triple: bool, fstring: bool, raw: bool) -> re.Pattern[str]:
    """A string's text up to the first character that needs a look of its own: text
    and complete escapes (in a raw string, a backslash and the character after it)."""
    stops = re.escape(quote) + r"\\\x00" + ("" if triple else r"\n\r") + ("{}" if fstring else "")
    plain = f"[^{stops}]*+"
    escape = rf"\\[^\n\r\x00{'{}' if fstring else ''}]" if raw else _DECODED_ESCAPE
    # Possessive: nothing after the run can fail, and no backtracking state piles up.
    return re.compile(f"{plain}(?:{escape}{plain})*+")


_RUN = {
    (q, triple, fstring, raw): _run_pattern(q, triple, fstring, raw)
    for q in "'\""
    for triple in (False, True)
    for fstring in (False, True)
    for raw in (False, True)
}
#: Long string text whose escapes JSON writes alike (``\'`` aside, in a string
#: quoted with ``'``) goes out as it stands, with its quotes and raw line breaks
#: escaped for JSON, rather than decoded and encoded again; a text no longer than
#: this is read by the run alone.
_LONG: Final = 256
#: How many times a long text switches between runs JSON writes alike and the
#: escapes and control characters between them before the rest is read by the run.
_SWITCHES: Final = 8


def _alike_pattern(quote: str, triple: bool, fstring: bool) -> re.Pattern[str]:
    """String text whose JSON form differs from it only in ``\'``, a raw ``"`` and
    (in a triple-quoted string) raw line breaks and tabs."""
    controls = r"\x00-\x08\x0b\x0c\x0e-\x1f" if triple else r"\x00-\x1f"
    plain = f"[^{re.escape(quote)}\\\\{controls}{'{}' if fstring else ''}]*+"
    return re.compile(rf"{plain}(?:\\[\\{re.escape(quote)}nrtbf]{plain})*+")


def _between_pattern(triple: bool) -> re.Pattern[str]:
    """What stops a run JSON writes alike and a run decodes: escapes, and control
    characters a string may hold."""
    controls = r"\x01-\x08\x0b\x0c\x0e-\x1f" if triple else r"\x01-\x09\x0b\x0c\x0e-\x1f"
    return re.compile(f"(?:{_DECODED_ESCAPE}|[{controls}])*+")


_ALIKE = {
    (q, triple, fstring): _alike_pattern(q, triple, fstring)
    for q in "'\""
    for triple in (False, True)
    for fstring in (False, True)
}
_BETWEEN = {triple: _between_pattern(triple) for triple in (False, True)}


def _as_json(source: str, quote: str) -> str:
    """The JSON text of a run :data:`_ALIKE` matched."""
    if quote == "'":
        source = _quotes_as_json(source)
    for raw, escaped in _JSON_BREAKS:
        if raw in source:
            # A raw line break or tab only follows a backslash that is escaped itself.
            source = source.replace(raw, escaped)
    return source


def _quotes_as_json(source: str) -> str:
    """A run of a string quoted with ``'``, JSON text but for its quotes, as JSON text."""
    if "\\'" in source:
        # Inside the run a ' only follows the backslash that escapes it. (Split and
        # joined: a third faster than replace on a long text with many of them.)
        source = "'".join(source.split("\\'"))
    if '"' in source:
        # ... and a " is the string's own text.
        source = source.replace('"', '\\"')
    return source


#: Text up to a ``'`` that is not plainly escaped (by one backslash after another
#: character): the closing quote, or one after a run of backslashes. Only the quotes
#: are looked at one by one (a class of two characters would cost each character).
_ESCAPED_QUOTES = re.compile(r"(?:[^']*+(?<=[^\\]\\)')*+[^']*+")
_JSON_BREAKS: Final = (("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"))


def _decoded(source: str) -> str:
    """What a run of text and escapes :data:`_RUN` matched means (not raw)."""
    if "\\" not in source:
        return source
    return source.encode("latin-1", "backslashreplace").decode("unicode_escape")


#: The fast path of a raw string (text that goes out as it is): nothing that closes or
#: must be JSON-escaped (a raw string's backslash is text, which JSON escapes).
_RAW_FAST_STOP = {
    fstring: regex.compile(rf"['\"\\\x00-\x1f{braces}]")
    for fstring, braces in ((False, ""), (True, "{}"))
}
#: The fast path of any other string stops at what is not JSON text once its escaped
#: quotes are rewritten (:func:`_as_json`): a control character, a brace of an
#: f-string, or an escape that JSON does not write as Python does.
_CONTROL = "".join(map(chr, range(0x20)))
_FAST_DELIMITERS = {False: _CONTROL, True: _CONTROL + "{}"}
#: The escapes a fast delta may hold: those JSON writes as Python does, and the quote's.
_FAST_ESCAPES: Final = {q: f"\\{q}bfnrt" for q in "'\""}
#: How a fast delta is written as JSON: in a string quoted with ``"`` it is JSON text as it
#: stands (``\\'`` and control characters stop it); with ``'``, but for its quotes.
_AS_JSON: Final = {"'": _quotes_as_json, '"': None}
#: Outside strings, what skipping (content up to the end of an element) looks at.
_SKIP_OUT = regex.compile(r"['\"()\[\]{},]")
_SKIP_IN = {q: regex.compile("[" + regex.escape(q) + r"\\]") for q in "'\""}
_CLOSER = {"[": "]", "(": ")", "{": "}"}
_SIMPLE_ESCAPES = {
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\n": "",
    "\r": "",
}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}
_OCTAL = frozenset("01234567")
_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")
#: Characters after a quote with which Python could go on (so the quote closed), and
#: the punctuation that ends a value anywhere (a bracket of another kind is a defect
#: after the string, not text of it).
_PYTHON_GOES_ON = frozenset(".[(+-*/%<>=!&|^@~#;\\,:)]}")
_STRING_PREFIXES = frozenset({"r", "u", "f", "fr", "rf", "b", "br", "rb"})
_WORDS: Final[dict[str, object]] = {"True": True, "False": False, "None": None}
_JSON_WORDS: Final[dict[str, object]] = {"true": True, "false": False, "null": None}


class _S(enum.Enum):
    """Where the reader stands."""

    OPEN = "open"  # before the list's "["
    ELEMENT = "element"  # before a call (or "]")
    NAME = "name"
    AFTER_NAME = "after-name"  # whitespace before "("
    ARGS = "args"  # before a keyword (or ")")
    KEY = "key"
    AFTER_KEY = "after-key"  # whitespace before "="
    VALUE = "value"  # before a value (or a closing bracket in a container)
    AFTER_VALUE = "after-value"
    WORD = "word"  # True, None, null, a string prefix, ...
    SIGN = "sign"  # "-" or "+" before a number
    NUMBER = "number"
    OPEN_QUOTE = "open-quote"  # one quote seen: '' or '''?
    OPEN_QUOTES = "open-quotes"  # two quotes seen
    STRING = "string"
    ESCAPE = "escape"
    BRACE = "brace"  # "{" or "}" in an f-string
    TRIPLE_END = "triple-end"  # quotes inside a triple-quoted string
    CLOSE = "close"  # a quote that may close the string: what follows decides
    AFTER_CALL = "after-call"
    CALL_END = "call-end"  # a defective call's ")" after its skipped text
    SKIP = "skip"  # content up to the end of an element
    DONE = "done"


_STRING_STATES = frozenset(
    {_S.STRING, _S.ESCAPE, _S.BRACE, _S.TRIPLE_END, _S.OPEN_QUOTE, _S.OPEN_QUOTES}
)


class _Kind(enum.Enum):
    LIST = "["
    TUPLE = "("
    BRACE = "{"  # dict or set, not known yet
    DICT = "dict"
    SET = "set"


class _Frame:
    """A container being read inside a value."""

    __slots__ = ("comma", "items", "key", "kind", "mapping", "value_next")

    def __init__(self, kind: _Kind) -> None:
        self.kind = kind
        self.items: list[Any] = []
        self.mapping: dict[Any, Any] = {}
        self.key: Any = _NO_KEY
        #: A value may come next (after the opening bracket or a ","); otherwise a
        #: separator or the closing bracket.
        self.value_next = True
        self.comma = False  # a tuple with a "," is a tuple, ``(x)`` is ``x``

    @property
    def closer(self) -> str:
        return "]" if self.kind is _Kind.LIST else ")" if self.kind is _Kind.TUPLE else "}"


class _Defect(ValueError):
    """Text that cannot be read as a JSON value (raised and caught inside the reader)."""


#: A dict frame's key slot when no key is pending (``None`` is a key).
_NO_KEY: Final = object()
#: A top-level value whose strict JSON decode the reader does not know.
_UNKNOWN: Final = object()
#: Values that :func:`dumps` writes as JSON text whose strict decode equals them (a
#: container's does not: tuples come back as lists, keys as strings).
_SCALARS: Final = frozenset({bool, int, float})


class PyCallReader:
    """Reads Python calls for a :class:`~toolcall.CallStream` family (see the module).

    ``lines``: one call per line instead of a ``[...]`` list. ``first``: whether the
    name of the first call may start calls (the family's rule for calls that follow
    content); ``None`` accepts any; with ``every``, each call's name must pass it (in
    the lines shape a line whose name does not ends the calls; in a list that element
    is content). ``json_literals``: ``true``/``false``/``null`` are native (``olmo3``)
    rather than the ``json-literal`` recovery. ``held_name`` (lines shape only): the
    start of the first call's name, which the family has already held in the stream
    while deciding that a call may start there; the reader goes on from it.

    Feed it text from its first character (a list's ``[``) with :meth:`feed`, which
    returns how much of the text it took: when :attr:`done`, the rest belongs to the
    family. Call :meth:`end` at the end of the output (or at the family's end marker)
    if it is not done by then.
    """

    def __init__(
        self,
        stream: CallStream,
        *,
        lines: bool = False,
        first: Callable[[str], bool] | None = None,
        json_literals: bool = False,
        every: bool = False,
        held_name: str = "",
    ) -> None:
        if held_name and (not lines or _NAME_RUN.fullmatch(held_name) is None):
            msg = "held_name is the start of a name, in the lines shape"
            raise ValueError(msg)
        self._s = stream
        self._recover = stream.recover
        self._lines = lines
        self._first = first
        self._every = every
        self._json_native = json_literals
        self._state = _S.ELEMENT if lines else _S.OPEN
        self._token: list[str] = []  # the text of the token being read (bounded)
        self._calls = 0  # calls committed by this reader
        self._index: int | None = None  # the stream's index of the open call
        self._last: int | None = None  # ... of the last call
        self._keys: set[str] = set()
        self._emitter = JsonEmitter()
        self._frames: list[_Frame] = []
        self._newline = False  # a line break after the last call (lines)
        # The string being read.
        self._quote = ""
        self._triple = False
        self._raw = False
        self._fstring = False
        self._broken = False  # a nested quote was read as text
        self._continued = False  # a later literal of implicitly joined strings
        self._parts: list[str] = []  # decoded text of a string inside a container
        self._close_nested = True  # the closing quote may turn out to be text
        #: What the open call's arguments decode to, while every value is known exactly
        #: (:meth:`_close_call` spares the stream decoding them again); ``None``: not known.
        self._values: dict[str, object] | None = None
        self._value_key = ""
        #: The top-level string's value, while it was read whole by :meth:`_json_text`.
        self._whole: str | None = None
        #: The output offset up to which :meth:`_single_quoted` found it cannot read the
        #: string's text (a slower read goes over it, which never brings it back there).
        self._quoted_to = 0
        # Skipping.
        self._skip: list[str] = []  # closers expected above the stop level
        self._skip_stop = ""
        self._skip_outer = ""
        self._skip_quote = ""
        self._skip_escape = False
        self._skip_then = _S.AFTER_CALL
        self._skip_from = 0  # where the unreadable markup being skipped starts
        self._skip_detail = ""
        self._skip_call: int | None = None
        self._base = 0  # the output offset of the text being read
        self._end = 0  # the output offset after the last text read
        self._accepted = False
        self._done = False
        if held_name:
            self._token = [held_name]
            self._state = _S.NAME

    # -- what the family reads ------------------------------------------------------------

    @property
    def done(self) -> bool:
        """Whether the calls have ended; the rest of the text is the family's."""
        return self._done

    @property
    def accepted(self) -> bool:
        """Whether a call was committed (otherwise the text was content)."""
        return self._accepted

    @property
    def in_string(self) -> bool:
        """Whether the reader stands inside a string literal."""
        return self._state in _STRING_STATES or (self._state is _S.SKIP and bool(self._skip_quote))

    @property
    def in_call(self) -> bool:
        """Whether a call is open (committed, its ``)`` not read yet)."""
        return self._index is not None

    def feed(self, text: str, start: int) -> int:
        """Read ``text`` (at output offset ``start``); return how many characters of
        it the calls took (all of them unless :attr:`done`)."""
        i, n = 0, len(text)
        self._base = start
        self._end = start + n
        handlers = self._handlers
        while i < n and not self._done:
            i = handlers[self._state](self, text, i, start)
        self._fast_path()
        return i

    def end(self, *, marker: bool = False) -> None:
        """The text has ended: the output, or (``marker``) the family's end marker,
        which makes a call still open ``malformed-arguments`` rather than ``truncated``."""
        if self._done:
            return
        s = self._s
        state = self._state
        self._done = True
        s.slow()
        held = s.held_start
        if held is not None:  # the family held its opening marker and no text came after it
            self._end = max(self._end, held + len(s.held))
        if not self._accepted:
            self._unreadable(self._end, "the text is not a call")
            s.release()
            return
        if state is _S.SKIP:
            self._skip_done(self._end)
        if state is _S.AFTER_CALL:
            s.settle()  # whitespace after the last call
        if self._index is not None and state is not _S.CALL_END:
            if marker:
                s.event(EventName.MALFORMED_ARGUMENTS, "the end marker came before the call's )")
            else:
                s.event(EventName.TRUNCATED, "the output ended inside the call")
            index = self._index
            s.close_call()
            self._index = None
            self._unreadable(self._end, "the unfinished element is content", call=index)
            s.release()
            return
        if s.holding:  # an unfinished element after complete calls
            self._unreadable(self._end, "an unfinished element after the calls")
            s.release()
        if not self._lines and state is not _S.DONE:
            if self._recover:
                s.event(EventName.MISSING_END, "the list has no closing ]", self._last)
            else:
                s.event(EventName.TRUNCATED, "the list has no closing ]", self._last)

    # -- the list and the calls -----------------------------------------------------------

    def _open(self, text: str, i: int, base: int) -> int:
        if text[i] != "[":
            return self._reject(i)
        self._hold("[", base + i)
        self._state = _S.ELEMENT
        return i + 1

    def _element(self, text: str, i: int, base: int) -> int:
        i = self._whitespace(text, i, base, hold=not self._accepted)
        if i == len(text):
            return i
        c = text[i]
        if _NAME_START.match(c):
            self._token = []
            self._state = _S.NAME
            return i
        if c == "]" and not self._lines and self._accepted:
            self._s.frame(base + i, base + i + 1)
            self._finish()
            return i + 1
        return self._not_a_call(i)

    def _name(self, text: str, i: int, base: int) -> int:
        end = self._token_run(_DASHED_NAME_RUN if self._recover else _NAME_RUN, text, i, base)
        size = sum(map(len, self._token))
        if size > MAX_NAME:
            return self._not_a_call(end)
        if end == len(text):
            return end
        self._state = _S.AFTER_NAME
        return end

    def _after_name(self, text: str, i: int, base: int) -> int:
        i = self._whitespace(text, i, base, hold=True)
        if i == len(text):
            return i
        name = "".join(self._token)
        pattern = _DASHED_NAME if self._recover else _NAME
        if text[i] != "(" or not pattern.fullmatch(name):
            return self._not_a_call(i)
        if self._first is not None and (self._calls == 0 or self._every) and not self._first(name):
            return self._reject(i) if self._calls == 0 else self._not_a_call(i)
        s = self._s
        self._hold("(", base + i)
        s.settle()
        self._index = s.open_call(name)
        self._last = self._index
        self._accepted = True
        self._calls += 1
        if "-" in name:
            s.event(EventName.DASHED_NAME, f"{name!r} is no Python identifier")
        self._keys = set()
        self._values = {}
        self._emitter = JsonEmitter()
        self._state = _S.ARGS
        return i + 1

    def _not_a_call(self, i: int) -> int:
        """The element at ``i`` (with what is held) is not a call."""
        if not self._accepted:
            return self._reject(i)
        if self._lines:
            self._unreadable(self._base + i, "a line that is not a call ends the calls")
            self._s.release()
            self._finish()
            return i
        held = self._s.held_start
        origin = self._base + i if held is None else held
        self._s.release()
        self._start_skip([], stop=",]", outer="", quote="", then=_S.AFTER_CALL)
        self._skipped(origin, "a list element that is not a call is content", None)
        return i

    def _reject(self, i: int) -> int:
        """The text is not calls: what was held is content; the rest is the family's."""
        self._unreadable(self._base + i, "the text is not a call")
        self._s.release()
        self._done = True
        self._state = _S.DONE
        return i

    def _finish(self) -> None:
        self._done = True
        self._state = _S.DONE

    def _after_call(self, text: str, i: int, base: int) -> int:
        n = len(text)
        run = _WS.match(text, i)
        assert run is not None
        if run.end() > i:
            if self._lines:  # framing between calls, content before text that ends them
                self._hold(text[i : run.end()], base + i)
            else:
                self._s.frame(base + i, base + run.end())
            if "\n" in text[i : run.end()]:
                self._newline = True
            i = run.end()
            if i == n:
                return i
        c = text[i]
        if self._lines:
            if self._newline and _NAME_START.match(c):
                self._state = _S.ELEMENT
                return i
            self._s.release()
            self._finish()
            return i
        if c == ",":
            self._s.frame(base + i, base + i + 1)
            self._state = _S.ELEMENT
            return i + 1
        if c == "]":
            self._s.frame(base + i, base + i + 1)
            self._finish()
            return i + 1
        # Another element without a "," before it: content up to the next one.
        self._start_skip([], stop=",]", outer="", quote="", then=_S.AFTER_CALL)
        self._skipped(base + i, "an element without a , before it is content", None)
        return i

    def _call_end(self, text: str, i: int, base: int) -> int:
        self._state = _S.AFTER_CALL
        self._newline = False
        if text[i] == ")":
            self._s.frame(base + i, base + i + 1)
            return i + 1
        return i

    def _close_call(self, i: int, base: int) -> int:
        s = self._s
        s.frame(base + i, base + i + 1)
        s.arguments(self._emitter.close() if self._keys else "{}")
        s.close_call(value=UNDECODED if self._values is None else self._values)
        self._index = None
        self._newline = False
        self._state = _S.AFTER_CALL
        return i + 1

    # -- keyword arguments ----------------------------------------------------------------

    def _args(self, text: str, i: int, base: int) -> int:
        i = self._whitespace(text, i, base, hold=False)
        if i == len(text):
            return i
        c = text[i]
        if c == ")":
            return self._close_call(i, base)
        if _NAME_START.match(c):
            self._token = []
            self._state = _S.KEY
            return i
        detail = "*args or **kwargs" if c == "*" else f"{c!r} where a keyword argument starts"
        return self._defect(detail, i)

    def _key(self, text: str, i: int, base: int) -> int:
        end = self._token_run(_WORD, text, i, base)
        if sum(map(len, self._token)) > MAX_NAME:
            return self._defect("a keyword longer than any name", end)
        if end < len(text):
            self._state = _S.AFTER_KEY
        return end

    def _after_key(self, text: str, i: int, base: int) -> int:
        i = self._whitespace(text, i, base, hold=True)
        if i == len(text):
            return i
        if text[i] != "=":
            return self._defect("a positional argument", i)
        self._hold("=", base + i)
        return self._key_done(i + 1)

    def _key_done(self, i: int) -> int:
        """``KEY=`` is complete; ``i`` is where the value starts."""
        key = "".join(self._token)
        s = self._s
        if keyword.iskeyword(key):
            if not self._recover:
                return self._defect(f"the keyword {key!r} as an argument name", i)
            s.event(EventName.RESERVED_WORD, f"{key}= read as a keyword argument")
        if key in self._keys:
            s.event(EventName.DUPLICATE_KEY, f"{key!r} again: the first value is kept")
            held = s.held_start
            origin = self._base + i if held is None else held
            s.release()
            self._start_skip([], stop=",)", outer="" if self._lines else "]", quote="")
            self._skip_then = _S.AFTER_VALUE
            self._skipped(origin, "the repeated keyword argument is content", self._index)
            return i
        opening = "" if self._keys else self._emitter.open()
        self._keys.add(key)
        self._value_key = key
        s.settle()
        s.arguments(opening + self._emitter.key(key))
        self._state = _S.VALUE
        return i

    # -- values ---------------------------------------------------------------------------

    def _value(self, text: str, i: int, base: int) -> int:
        nested = bool(self._frames)
        i = self._whitespace(text, i, base, hold=nested)
        if i == len(text):
            return i
        c = text[i]
        if c in "'\"":
            self._raw = self._fstring = self._broken = self._continued = False
            return self._open_string(c, i, base)
        if _NAME_START.match(c):
            self._token = []
            self._state = _S.WORD
            return i
        if c in _DIGITS or c == ".":
            self._token = []
            self._state = _S.NUMBER
            return i
        if c in "-+":
            self._hold(c, base + i)
            self._token = [c]
            self._state = _S.SIGN
            return i + 1
        if c in "[({":
            if len(self._frames) >= MAX_DEPTH:
                return self._defect(f"a value nested deeper than {MAX_DEPTH} levels", i)
            self._hold(c, base + i)
            kind = _Kind.LIST if c == "[" else _Kind.TUPLE if c == "(" else _Kind.BRACE
            self._frames.append(_Frame(kind))
            return i + 1
        if nested and c in "])}":
            frame = self._frames[-1]
            if c == frame.closer and frame.value_next:
                if frame.kind is _Kind.DICT and frame.key is not _NO_KEY:
                    return self._defect("a dict key without a value", i)
                self._hold(c, base + i)
                return self._close_container(i + 1)
        return self._defect(f"{c!r} where a value starts", i)

    def _after_value(self, text: str, i: int, base: int) -> int:
        nested = bool(self._frames)
        i = self._whitespace(text, i, base, hold=nested)
        if i == len(text):
            return i
        c = text[i]
        if not nested:
            if c == ",":
                self._s.frame(base + i, base + i + 1)
                self._state = _S.ARGS
                return i + 1
            if c == ")":
                return self._close_call(i, base)
            return self._defect(f"{c!r} after a value", i)
        frame = self._frames[-1]
        kind = frame.kind
        if c == ":" and kind is _Kind.BRACE:
            frame.kind = _Kind.DICT
            frame.key = frame.items.pop()
            try:
                hash(frame.key)
            except TypeError:
                return self._defect("an unhashable dict key", i)
        elif c == ":" and kind is _Kind.DICT and frame.key is not _NO_KEY and not frame.value_next:
            pass
        elif c == ",":
            if kind is _Kind.BRACE:
                frame.kind = _Kind.SET
            elif kind is _Kind.DICT and frame.key is not _NO_KEY:
                return self._defect("a dict key without a value", i)
            frame.comma = True
        elif c == frame.closer:
            if kind is _Kind.BRACE:
                frame.kind = _Kind.SET
            elif kind is _Kind.DICT and frame.key is not _NO_KEY:
                return self._defect("a dict key without a value", i)
            self._hold(c, base + i)
            return self._close_container(i + 1)
        else:
            return self._defect(f"{c!r} after a value", i)
        self._hold(c, base + i)
        frame.value_next = True
        self._state = _S.VALUE
        return i + 1

    def _close_container(self, i: int) -> int:
        frame = self._frames.pop()
        kind = frame.kind
        value: Any
        if kind is _Kind.LIST:
            value = frame.items
        elif kind is _Kind.TUPLE:
            items = frame.items
            value = items[0] if len(items) == 1 and not frame.comma else tuple(items)
        elif kind is _Kind.SET:
            try:
                value = list(dict.fromkeys(frame.items))
            except TypeError:
                return self._defect("a set of unhashable values", i)
        else:
            value = frame.mapping
        return self._complete(value, i)

    def _complete(self, value: Any, i: int) -> int:
        """A value is complete; ``i`` is where reading goes on."""
        if not self._frames:
            try:
                out = dumps(value)
            except _Defect as error:
                return self._defect(str(error), i)
            self._s.settle()
            self._s.arguments(out)
            self._known(value if value is None or type(value) in _SCALARS else _UNKNOWN)
            self._state = _S.AFTER_VALUE
            return i
        frame = self._frames[-1]
        frame.value_next = False
        self._state = _S.AFTER_VALUE
        if frame.kind is not _Kind.DICT:
            frame.items.append(value)
            return i
        if frame.key is _NO_KEY:
            try:
                hash(value)
            except TypeError:
                return self._defect("an unhashable dict key", i)
            frame.key = value
            return i
        try:
            frame.mapping[frame.key] = value
        except TypeError:
            return self._defect("an unhashable dict key", i)
        frame.key = _NO_KEY
        return i

    def _known(self, value: object) -> None:
        """The top-level value just written decodes (strictly) to ``value``."""
        if self._values is not None:
            if value is _UNKNOWN:
                self._values = None
            else:
                self._values[self._value_key] = value

    def _word(self, text: str, i: int, base: int) -> int:
        end = self._token_run(_WORD, text, i, base)
        word = "".join(self._token)
        if len(word) > 8:
            return self._defect("a name where a value should be", end)
        if end == len(text):
            return end
        c = text[end]
        if c in "'\"" and word.lower() in _STRING_PREFIXES:
            prefix = word.lower()
            if "b" in prefix:
                return self._defect("bytes are not a JSON value", end)
            self._raw = "r" in prefix
            self._fstring = "f" in prefix
            self._broken = self._continued = False
            return self._open_string(c, end, base)
        if word in _WORDS:
            return self._complete(_WORDS[word], end)
        if word in _JSON_WORDS:
            if not self._json_native:
                if not self._recover:
                    return self._defect(f"{word} is not Python", end)
                self._s.event(EventName.JSON_LITERAL, f"{word} read as a Python literal")
            return self._complete(_JSON_WORDS[word], end)
        return self._defect(f"the name {word!r} where a value should be", end)

    def _sign(self, text: str, i: int, base: int) -> int:
        run = _WS.match(text, i)
        assert run is not None
        if run.end() > i:
            self._hold(text[i : run.end()], base + i)
            i = run.end()
            if i == len(text):
                return i
        c = text[i]
        if c in _DIGITS or c == ".":
            self._state = _S.NUMBER
            return i
        return self._defect(f"{c!r} after a sign", i)

    def _number(self, text: str, i: int, base: int) -> int:
        n = len(text)
        token = self._token
        while True:
            end = self._token_run(_NUMBER_RUN, text, i, base)
            last = token[-1][-1] if token and token[-1] else ""
            if (
                end < n
                and text[end] in "+-"
                and last in "eE"
                and not "".join(token).lstrip("+- ").lower().startswith(("0x", "0b", "0o"))
            ):
                self._hold(text[end], base + end)
                token.append(text[end])
                i = end + 1
                continue
            break
        if end == n:
            return end
        literal = "".join(token)
        try:
            value = self._number_value(literal)
        except _Defect as error:
            return self._defect(str(error), end)
        return self._complete(value, end)

    def _number_value(self, literal: str) -> int | float:
        sign = literal[0] if literal[0] in "+-" else ""
        digits = literal.lstrip("+- \t\f\r\n")
        value: int | float
        if not digits.isascii():
            msg = f"{digits!r} is not a number"
            raise _Defect(msg)
        try:
            value = int(digits, 0)
        except ValueError:
            if _LEADING_ZERO.fullmatch(digits) and digits.strip("0_"):
                if not self._recover:
                    msg = f"the integer {digits} has leading zeros"
                    raise _Defect(msg) from None
                self._s.event(EventName.LEADING_ZERO, f"{digits} read as {int(digits)}")
                value = int(digits.replace("_", ""))
            elif _DECIMAL.fullmatch(digits):
                try:
                    value = float(digits)
                except ValueError:
                    msg = f"{digits!r} is not a number"
                    raise _Defect(msg) from None
                if not math.isfinite(value):
                    msg = f"{digits} is out of a float's range"
                    raise _Defect(msg) from None
            else:
                msg = f"{digits!r} is not a JSON number"
                raise _Defect(msg) from None
        return -value if sign == "-" else value

    # -- strings --------------------------------------------------------------------------

    def _open_string(self, quote: str, i: int, base: int) -> int:
        """The opening quote of a string literal at ``i``."""
        self._quote = quote
        self._triple = False
        if self._frames:
            self._hold(quote, base + i)
            if not self._continued:
                self._parts = []
        else:
            self._s.settle()
            self._s.frame(base + i, base + i + 1)
            if not self._continued:
                self._s.arguments(JsonEmitter.string_start())
                self._whole = ""
        self._state = _S.OPEN_QUOTE
        return i + 1

    def _open_quote(self, text: str, i: int, base: int) -> int:
        if text[i] == self._quote:
            self._hold(text[i], base + i)
            self._state = _S.OPEN_QUOTES
            return i + 1
        self._state = _S.STRING
        return i

    def _open_quotes(self, text: str, i: int, base: int) -> int:
        if text[i] == self._quote:  # a triple-quoted string
            self._hold(text[i], base + i)
            if not self._frames:
                self._s.settle()
            self._triple = True
            self._state = _S.STRING
            return i + 1
        # '' : an empty string, and its second quote may close it
        self._token = [self._quote]
        self._close_nested = True
        self._state = _S.CLOSE
        return i

    def _string(self, text: str, i: int, base: int) -> int:
        unknown = False  # an escape JSON does not know stopped _json_text
        if len(text) - i > _LONG and not self._raw and not self._frames:
            if not self._triple and not self._fstring:
                if self._quote == '"':
                    i = self._json_text(text, i, base)
                    unknown = text[i] == "\\"
                elif base + i >= self._quoted_to:
                    i = self._single_quoted(text, i, base)
            if not unknown:
                i = self._alike(text, i, base)
        if unknown:
            j = i  # the escape is read on its own, and JSON's scanner goes on after it
        else:
            run = _RUN[self._quote, self._triple, self._fstring, self._raw].match(text, i)
            assert run is not None
            j = run.end()
        if j > i:
            source = text[i:j]
            self._text(source if self._raw else _decoded(source), source, base + i, base + j)
        if j == len(text):
            return j
        c = text[j]
        s = self._s
        if c == "\\":
            self._hold(c, base + j)
            self._token = [c]
            self._state = _S.ESCAPE
            return j + 1
        if c == self._quote:
            self._hold(c, base + j)
            self._token = [c]
            if self._triple:
                self._state = _S.TRIPLE_END
            else:
                self._close_nested = True
                self._state = _S.CLOSE
            return j + 1
        if c in "{}":
            self._hold(c, base + j)
            self._token = [c]
            self._state = _S.BRACE
            return j + 1
        # a raw line break or NUL
        if not self._recover:
            return self._defect(f"a raw {c!r} inside a string", j)
        if not s.has_event(EventName.CONTROL_CHARACTER):
            s.event(EventName.CONTROL_CHARACTER, f"a raw {c!r} inside a string")
        self._text(c, c, base + j, base + j + 1)
        return j + 1

    def _json_text(self, text: str, i: int, base: int) -> int:
        """Long text of a one-line ``"`` string that is JSON string text, which Python
        reads alike but for ``\\/`` and ``\\u`` (surrogate pairs): read by JSON's own
        string scanner up to its closing quote, or its first escape JSON does not know;
        returns where the rest goes on."""
        try:
            value, end = _scanstring(text, i, True)
            stop = end - 1
        except ValueError as error:
            stop = int(getattr(error, "pos", i))
            value = None
            if stop <= i or text[stop] != "\\":
                return i  # not closed in this text, or a raw control character
        source = text[i:stop]
        if _json_only_escape(source):
            return i
        s = self._s
        s.settle()
        s.frame(base + i, base + stop)
        if source:
            s.arguments(source)
        self._whole = value if value is not None and self._whole == "" else None
        return stop

    def _single_quoted(self, text: str, i: int, base: int) -> int:
        """Long text of a one-line ``'`` string up to its closing quote, read whole
        (:func:`_read_latin1`, else :func:`_read_as_json`); returns the closing quote's
        offset. Otherwise ``i``, and the run reads the text (this text is not looked at
        again: see ``_quoted_to``)."""
        end = _closing_quote(text, i)
        if end <= i:
            self._quoted_to = base + (len(text) if end < 0 else end)
            return i
        source = text[i:end]
        read = _read_latin1(source) or _read_as_json(source)
        if read is None:
            self._quoted_to = base + end
            return i
        value, written = read
        s = self._s
        s.settle()
        s.frame(base + i, base + end)
        s.arguments(written)
        self._whole = value if self._whole == "" else None
        return end

    def _alike(self, text: str, i: int, base: int) -> int:
        """Runs JSON writes alike, and what lies between them (see :data:`_LONG`), from
        ``i`` on; returns where the run goes on."""
        quote = self._quote
        alike = _ALIKE[quote, self._triple, self._fstring]
        between = _BETWEEN[self._triple]
        s = self._s
        for _ in range(_SWITCHES):
            run = alike.match(text, i)
            assert run is not None
            j = run.end()
            if j > i:
                s.settle()
                s.frame(base + i, base + j)
                s.arguments(_as_json(text[i:j], quote))
                self._whole = None
            run = between.match(text, j)
            assert run is not None
            i = run.end()
            if i == j:
                break
            self._text(_decoded(text[j:i]), text[j:i], base + j, base + i)
        return i

    def _text(self, decoded: str, source: str, start: int, end: int) -> None:
        """String text: ``source`` at ``[start, end)`` of the output means ``decoded``.
        Held source text (an escape, quotes) is settled with it."""
        s = self._s
        if self._frames:
            self._hold(source, start)
            self._parts.append(decoded)
            return
        s.settle()
        s.frame(start, end)
        if decoded:
            self._whole = None
            s.arguments(JsonEmitter.string_chunk(decoded))

    def _held_text(self, decoded: str) -> None:
        """Held string source (an escape, quotes) turned out to mean ``decoded``."""
        if self._frames:
            self._parts.append(decoded)
            return
        self._s.settle()
        if decoded:
            self._whole = None
            self._s.arguments(JsonEmitter.string_chunk(decoded))

    def _escape(self, text: str, i: int, base: int) -> int:
        token = self._token
        n = len(text)
        while True:
            escape = "".join(token)
            decoded = self._escape_end(escape)
            if decoded is None and i < n:
                takes = self._escape_takes(escape, text[i])
                if takes is True:
                    self._hold(text[i], base + i)
                    token.append(text[i])
                    i += 1
                    continue
                decoded = takes or _code_point(int(escape[1:], 8))  # octal, ended early
            if decoded is None:
                return i
            if isinstance(decoded, _Defect):
                return self._defect(str(decoded), i)
            self._held_text(decoded)
            self._state = _S.STRING
            return i

    def _escape_end(self, escape: str) -> str | _Defect | None:
        """What ``escape`` (from its backslash) decodes to if it is complete as it
        stands; ``None`` if it may go on."""
        if len(escape) == 1:
            return None
        kind = escape[1]
        if self._raw:
            return escape  # a raw string keeps the backslash and what follows it
        if kind in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[kind]
        if kind in _OCTAL:
            return _code_point(int(escape[1:], 8)) if len(escape) == 4 else None
        if kind in _HEX_DIGITS:
            if len(escape) < _HEX_DIGITS[kind] + 2:
                return None
            return _code_point(int(escape[2:], 16))
        if kind == "N":
            if len(escape) > 3 and escape.endswith("}"):
                try:
                    return unicodedata.lookup(escape[3:-1])
                except KeyError:
                    return _Defect(f"no character is called {escape[3:-1]!r}")
            if len(escape) > _MAX_ESCAPE:
                return _Defect("an unfinished \\N{...} escape")
            return None
        return escape  # an unknown escape keeps its backslash, as Python does

    def _escape_takes(self, escape: str, char: str) -> bool | _Defect | None:
        """Whether ``char`` goes on the unfinished ``escape``; ``None``: the escape
        (octal) ended before it."""
        if len(escape) == 1:
            return True
        kind = escape[1]
        if kind in _OCTAL:
            return True if char in _OCTAL else None
        if kind in _HEX_DIGITS:
            return True if char in _HEX else _Defect(f"the escape {escape!r} is cut short")
        if len(escape) == 2:  # \N
            return True if char == "{" else _Defect("\\N without {name}")
        if char in "\n\r'\"":
            return _Defect("an unfinished \\N{...} escape")
        return True

    def _brace(self, text: str, i: int, base: int) -> int:
        brace = self._token[0]
        if text[i] != brace:
            what = "a placeholder" if brace == "{" else "a single }"
            return self._defect(f"an f-string with {what}", i)
        self._hold(text[i], base + i)
        self._held_text(brace)
        self._state = _S.STRING
        return i + 1

    def _triple_end(self, text: str, i: int, base: int) -> int:
        token = self._token
        n = len(text)
        while i < n and text[i] == self._quote and len(token) < 3:
            self._hold(text[i], base + i)
            token.append(text[i])
            i += 1
        if len(token) == 3:
            self._token = []
            self._close_nested = False
            self._state = _S.CLOSE
            return i
        if i == n:
            return i
        self._held_text("".join(token))
        self._state = _S.STRING
        return i

    def _close(self, text: str, i: int, base: int) -> int:
        """After a quote that may close the string (held with the whitespace after it):
        the next character decides."""
        run = _WS.match(text, i)
        assert run is not None
        if run.end() > i:
            self._hold(text[i : run.end()], base + i)
            self._token.append(text[i : run.end()])
            i = run.end()
            if i == len(text):
                return i
        c = text[i]
        if c in self._closers():
            return self._close_string(i)
        nested_ok = self._close_nested and self._recover
        if self._broken and nested_ok:
            return self._nested_quote(i)
        if c in "'\"":
            return self._join(c, i, base)
        if not nested_ok or c in _PYTHON_GOES_ON:
            return self._close_string(i)
        return self._nested_quote(i)

    def _closers(self) -> str:
        if not self._frames:
            return ",)"
        frame = self._frames[-1]
        kind = frame.kind
        if kind is _Kind.LIST:
            return ",]"
        if kind is _Kind.TUPLE:
            return ",)"
        if kind is _Kind.BRACE:
            return ":,}"
        if kind is _Kind.DICT:
            return ":" if frame.key is _NO_KEY else ",}"
        return ",}"

    def _nested_quote(self, i: int) -> int:
        """The held quote (and what followed it) is text of the string."""
        s = self._s
        if not self._broken and not s.has_event(EventName.NESTED_QUOTE):
            s.event(EventName.NESTED_QUOTE, "a quote inside a string read as its text")
        self._broken = True
        self._held_text("".join(self._token))
        self._token = []
        self._state = _S.STRING
        return i

    def _join(self, quote: str, i: int, base: int) -> int:
        """``'a' 'b'``: implicitly joined literals are one string."""
        self._token = []
        self._raw = self._fstring = False
        self._continued = True
        return self._open_string(quote, i, base)

    def _close_string(self, i: int) -> int:
        """The string ended at the held quote; ``i`` is where reading goes on."""
        self._token = []
        if not self._frames:
            self._s.settle()
            self._s.arguments(JsonEmitter.string_end())
            self._known(_UNKNOWN if self._whole is None else self._whole)
            self._state = _S.AFTER_VALUE
            return i
        value = "".join(self._parts)
        self._parts = []
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return self._defect("a lone surrogate in a string", i)
        return self._complete(value, i)

    # -- defects and skipping -------------------------------------------------------------

    def _defect(self, detail: str, i: int) -> int:
        """A defect at ``i`` inside the open call: it keeps what was emitted; what is
        held and the rest of the call are content."""
        s = self._s
        closers = [frame.closer for frame in self._frames]
        quote = self._quote if self._state in _STRING_STATES else ""
        if self._state is _S.CLOSE:
            quote = ""
        s.event(EventName.MALFORMED_ARGUMENTS, detail)
        s.slow()
        index = self._index
        held = s.held_start
        origin = self._base + i if held is None else held
        s.close_call()
        self._index = None
        s.release()
        self._frames = []
        self._token = []
        self._parts = []
        self._start_skip(closers, stop=")", outer="" if self._lines else "]", quote=quote)
        self._skipped(origin, "the rest of the call is content", index)
        return i

    def _start_skip(
        self, closers: list[str], *, stop: str, outer: str, quote: str, then: _S = _S.CALL_END
    ) -> None:
        self._skip = closers
        self._skip_stop = stop
        self._skip_outer = outer
        self._skip_quote = quote
        self._skip_escape = False
        self._skip_then = then
        self._state = _S.SKIP

    def _skipping(self, text: str, i: int, base: int) -> int:
        """Content up to the end of the element: bracket and string structure only."""
        n = len(text)
        start = i
        stack = self._skip
        while i < n:
            if self._skip_escape:
                self._skip_escape = False
                i += 1
                continue
            quote = self._skip_quote
            if quote:
                found = _SKIP_IN[quote].search(text, i)
                if found is None:
                    i = n
                    break
                i = found.start() + 1
                if text[found.start()] == "\\":
                    self._skip_escape = True
                else:
                    self._skip_quote = ""
                continue
            found = _SKIP_OUT.search(text, i)
            if found is None:
                i = n
                break
            j = found.start()
            c = text[j]
            i = j + 1
            if c in "'\"":
                self._skip_quote = c
            elif c in "([{":
                stack.append(_CLOSER[c])
            elif c in ")]}":
                if c in stack:
                    while stack.pop() != c:
                        pass
                elif c in self._skip_stop or c in self._skip_outer:
                    # The element's own closer ends it, whatever is left open in it.
                    return self._skip_end(text, start, j, base)
            elif c == "," and not stack and c in self._skip_stop:
                return self._skip_end(text, start, j, base)
        if i > start:
            self._s.content(text[start:i], base + start)
        return i

    def _skip_end(self, text: str, start: int, j: int, base: int) -> int:
        if j > start:
            self._s.content(text[start:j], base + start)
        self._skip_done(base + j)
        self._state = self._skip_then
        return j

    def _skipped(self, origin: int, detail: str, call: int | None) -> None:
        """What is being skipped (from ``origin``) is unreadable markup."""
        self._skip_from = origin
        self._skip_detail = detail
        self._skip_call = call

    def _skip_done(self, end: int) -> None:
        self._unreadable(end, self._skip_detail, self._skip_from, self._skip_call)

    def _unreadable(
        self, end: int, detail: str, origin: int | None = None, call: int | None = None
    ) -> None:
        """``[origin, end)`` (by default: from the held text) was read as possible
        markup and is content: ``unparsed-markup``, with its span."""
        if origin is None:
            held = self._s.held_start
            origin = end if held is None else held
        if end > origin:
            self._s.event(EventName.UNPARSED_MARKUP, detail, call, span=(origin, end))

    # -- shared ---------------------------------------------------------------------------

    def _token_run(self, pattern: regex.Pattern[str], text: str, i: int, base: int) -> int:
        """Hold the run of ``pattern`` at ``i`` as token text; return its end."""
        run = pattern.match(text, i)
        assert run is not None
        end = run.end()
        if end > i:
            self._hold(text[i:end], base + i)
            self._token.append(text[i:end])
        return end

    def _hold(self, text: str, start: int) -> None:
        """Text whose fate is not decided yet (the stream holds it)."""
        self._s.hold(text, start)

    def _whitespace(self, text: str, i: int, base: int, *, hold: bool) -> int:
        run = _WS.match(text, i)
        assert run is not None
        end = run.end()
        if end > i:
            if hold:
                self._hold(text[i:end], base + i)
            else:
                self._s.frame(base + i, base + end)
        return end

    def _fast_path(self) -> None:
        """Between deltas: plain string text may skip the reader."""
        s = self._s
        if self._state is _S.STRING and not self._frames and not s.holding and not self._done:
            if self._raw:
                s.fast_arguments(_RAW_FAST_STOP[self._fstring])
            else:
                s.fast_string(
                    _FAST_DELIMITERS[self._fstring],
                    escapes=_FAST_ESCAPES[self._quote],
                    quote=self._quote,
                    escape=_AS_JSON[self._quote],
                )
        else:
            s.slow()

    _handlers: Final[dict[_S, Callable[[PyCallReader, str, int, int], int]]] = {
        _S.OPEN: _open,
        _S.ELEMENT: _element,
        _S.NAME: _name,
        _S.AFTER_NAME: _after_name,
        _S.ARGS: _args,
        _S.KEY: _key,
        _S.AFTER_KEY: _after_key,
        _S.VALUE: _value,
        _S.AFTER_VALUE: _after_value,
        _S.WORD: _word,
        _S.SIGN: _sign,
        _S.NUMBER: _number,
        _S.OPEN_QUOTE: _open_quote,
        _S.OPEN_QUOTES: _open_quotes,
        _S.STRING: _string,
        _S.ESCAPE: _escape,
        _S.BRACE: _brace,
        _S.TRIPLE_END: _triple_end,
        _S.CLOSE: _close,
        _S.AFTER_CALL: _after_call,
        _S.CALL_END: _call_end,
        _S.SKIP: _skipping,
    }


def _json_only_escape(source: str) -> bool:
    """Whether JSON string text has an escape Python reads otherwise (``\\u``, ``\\/``)."""
    for found in _JSON_ONLY_ESCAPE.finditer(source):
        k = run = found.start()
        while run > 0 and source[run - 1] == "\\":
            run -= 1
        if (k - run) % 2 == 0:  # the backslash starts an escape
            return True
    return False


#: One search for both (the two found apart take twice as long on a long text).
_JSON_ONLY_ESCAPE = re.compile(r"\\[u/]")


def _read_latin1(source: str) -> tuple[str, str] | None:
    """What the text of a one-line string means, and its JSON text, for Latin-1 text:
    read by Python's own decoder (``unicode_escape`` reads every escape as a literal
    does) and written by orjson (as ``json.dumps(..., ensure_ascii=False)`` writes a
    string). ``None`` for other text (the decoder reads bytes), a raw line break or
    NUL, an escape Python cannot read or one naming a surrogate (the run's defects),
    and an unknown escape (``\\d``) where warnings are errors: the decoder warns of it.
    """
    if "\n" in source or "\r" in source or "\x00" in source:
        return None
    try:
        value = source.encode("latin-1").decode("unicode_escape")
        return value, orjson.dumps(value)[1:-1].decode()
    except (UnicodeError, Warning, orjson.JSONEncodeError):
        return None


def _read_as_json(source: str) -> tuple[str, str] | None:
    """The same for any text whose escapes JSON writes as Python does (``\\'`` aside)
    and that holds no raw control character: rewritten as JSON text
    (:func:`_quotes_as_json`) and read by JSON's string scanner."""
    if _json_only_escape(source):  # see _json_text
        return None
    written = _quotes_as_json(source)
    try:
        value, stop = _scanstring(written + '"', 0, True)
    except ValueError:  # an escape JSON does not know, or a raw control character
        return None
    # An escaped " in the source ends the text early: the rewrite escaped it twice.
    return (value, written) if stop == len(written) + 1 else None


def _closing_quote(text: str, i: int) -> int:
    """The offset of the first ``'`` from ``i`` on that no backslash after ``i``
    escapes, or -1."""
    start, n = i, len(text)
    while True:
        run = _ESCAPED_QUOTES.match(text, i)
        assert run is not None
        j = run.end()
        if j == n:
            return -1
        k = j
        while k > start and text[k - 1] == "\\":
            k -= 1
        if (j - k) % 2 == 0:
            return j
        i = j + 1


def _code_point(value: int) -> str | _Defect:
    if value > 0x10FFFF:
        return _Defect(f"the escape names no character (U+{value:X})")
    if 0xD800 <= value <= 0xDFFF:
        return _Defect(f"a lone surrogate escape (U+{value:X}) is not JSON")
    return chr(value)


def dumps(value: object) -> str:
    """``json.dumps(value, ensure_ascii=False)`` with tuples as lists, written with an
    explicit stack (no recursion, however deep the value). Raises ``ValueError`` for
    what strict JSON cannot hold (NaN, infinities, lone surrogates, keys of other
    types than str, int, float, bool and None)."""
    out: list[str] = []
    todo: list[object] = [value]
    while todo:
        item = todo.pop()
        if type(item) is _Raw:
            out.append(item.text)
        elif isinstance(item, str):
            out.append(_string(item))
        elif item is None:
            out.append("null")
        elif item is True:
            out.append("true")
        elif item is False:
            out.append("false")
        elif isinstance(item, int):
            out.append(int.__repr__(item))
        elif isinstance(item, float):
            out.append(_float(item))
        elif isinstance(item, list | tuple):
            if not item:
                out.append("[]")
                continue
            out.append("[")
            todo.append(_CLOSE_LIST)
            for position, element in enumerate(reversed(item)):
                if position:
                    todo.append(_COMMA)
                todo.append(element)
        elif isinstance(item, dict):
            if not item:
                out.append("{}")
                continue
            out.append("{")
            todo.append(_CLOSE_DICT)
            for position, (key, element) in enumerate(reversed(item.items())):
                if position:
                    todo.append(_COMMA)
                todo.append(element)
                todo.append(_Raw(_key(key) + ": "))
        else:
            msg = f"a {type(item).__name__} is not a JSON value"
            raise _Defect(msg)
    return "".join(out)


class _Raw:
    """Text that :func:`dumps` writes as it is."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_COMMA: Final = _Raw(", ")
_CLOSE_LIST: Final = _Raw("]")
_CLOSE_DICT: Final = _Raw("}")


def _string(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        msg = "a lone surrogate in a string"
        raise _Defect(msg) from None
    return json.dumps(text, ensure_ascii=False)


def _float(value: float) -> str:
    if not math.isfinite(value):
        msg = f"{value} is not a JSON number"
        raise _Defect(msg)
    return float.__repr__(value)


def _key(key: object) -> str:
    """A dict key as ``json.dumps`` writes it."""
    if isinstance(key, str):
        return _string(key)
    if key is True:
        return '"true"'
    if key is False:
        return '"false"'
    if key is None:
        return '"null"'
    if isinstance(key, int):
        return '"' + int.__repr__(key) + '"'
    if isinstance(key, float):
        return '"' + _float(key) + '"'
    msg = f"a {type(key).__name__} as a dict key is not JSON"
    raise _Defect(msg)
