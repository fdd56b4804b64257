"""An incremental JSON tokenizer with the dialect of a template's ``json`` content.

Tokens carry their offsets in the output, so that a reader can tell which text is
a call's arguments, which is framing and which is left over. Strings come whole
(with their decoded value); between tokens, :attr:`JsonTokens.in_string` and
:attr:`JsonTokens.position` say how far the scan got, so raw argument text can be
streamed before a long string ends.

The dialect (``content_args`` of a ``json`` field, as transformers reads them):

* ``string_delims``: ``[[open, close], ...]``: text between the two markers is a
  string, verbatim (no escapes), such as Gemma 4's ``<|"|>Paris<|"|>``;
* ``unquoted_keys``: a bare word is a token of its own (:data:`SCALAR`), which a
  reader takes as a key where a key is expected.

Nothing is ever refused: a character JSON does not allow becomes part of a
:data:`SCALAR` token, and the reader decides what a token sequence means.

Tokens come as the reader takes them, so that between two it may take the container
a ``{`` or ``[`` opens whole (:meth:`JsonTokens.whole`), decoded once by the json
module, instead of its tokens.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

import regex

from toolcall.scanning import decode_container, decode_whole, json_string_end

__all__ = ["PUNCTUATION", "SCALAR", "STRING", "JsonTokens", "Token"]

STRING: Final = "string"
SCALAR: Final = "scalar"
PUNCTUATION: Final = frozenset("{}[],:")

_NOT_BLANK: Final = regex.compile(r"[^ \t\r\n]")


@dataclass(frozen=True, slots=True)
class Token:
    """One token: ``kind`` is a punctuation character, :data:`STRING` or :data:`SCALAR`.

    ``value`` is a string's decoded value (``None`` when its escapes are not JSON)
    or a scalar's text; ``raw`` the token's text in the output.
    """

    kind: str
    start: int
    end: int
    raw: str
    value: str | None = None


class JsonTokens:
    """Tokens of a JSON text fed in pieces (offsets as given to :meth:`feed`)."""

    def __init__(self, delims: Sequence[Sequence[str]] = (), start: int = 0) -> None:
        self._delims = tuple((pair[0], pair[1]) for pair in delims)
        self._scalar_end = regex.compile(
            "|".join([r'[ \t\r\n,:\[\]{}"]', *(regex.escape(d[0]) for d in self._delims)])
        )
        self._openers = (
            regex.compile("|".join(regex.escape(d[0]) for d in self._delims))
            if self._delims
            else None
        )
        self._longest_opener = max((len(d[0]) for d in self._delims), default=0)
        self._held = ""  # text not tokenized yet: a token in progress, or a marker prefix
        self._held_start = start
        self._string: list[str] | None = None  # the raw parts of a "..." string in progress
        self._escape = False
        self._skipped = False  # whether text of the string in progress was skipped
        self._delim: tuple[str, str] | None = None  # the markers of a delimited string
        self._delim_parts: list[str] = []
        self._token_start = start
        # While a scan runs: its text and offset, and where a container taken whole ends.
        self._buffer = ""
        self._base = start
        self._jump = -1

    @property
    def position(self) -> int:
        """The offset up to which the text has been read: tokens end there, or a
        string (or a marker prefix, or a scalar) is in progress from there."""
        return self._held_start

    @property
    def in_string(self) -> bool:
        """Whether the scan stands inside a string (its text is value text)."""
        return self._string is not None or self._delim is not None

    @property
    def plain_string(self) -> bool:
        """Whether the scan stands inside a ``"..."`` string, no escape pending."""
        return self._string is not None and not self._escape

    def skip(self, size: int) -> None:
        """``size`` more characters of the :attr:`plain_string` in progress, read by the
        caller: they hold no unescaped ``"`` and end outside an escape. The scan moves
        past them without their text: the string's token comes with the ``raw`` text the
        scan saw, and ``value`` ``None`` (a caller that skips does not read them)."""
        assert self.plain_string
        assert not self._held
        self._held_start += size
        self._skipped = True

    @property
    def token_start(self) -> int:
        """Where the token in progress (if any) starts."""
        return self._token_start if self.in_string else self._held_start

    def feed(self, text: str) -> Iterator[Token]:
        """The tokens of ``text``, as the caller takes them (it takes all of them: the
        scan's state moves on once the last is taken)."""
        return self._scan(self._held + text, self._held_start, end=False)

    def finish(self) -> Iterator[Token]:
        """The text ended: a scalar in progress is a token; an unclosed string is not."""
        return self._scan(self._held, self._held_start, end=True)

    def whole(self, token: Token) -> tuple[object, int] | None:
        """The container that ``token``, the ``{`` or ``[`` just taken, opens, decoded
        whole if the text fed holds all of it (core's rule for a one-shot parse,
        :func:`~toolcall.scanning.decode_container`): its value and the offset where it
        ends, where the tokens go on. ``None``: its tokens follow."""
        at = token.start - self._base
        decoded = decode_container(self._buffer, at) if self._jump < 0 else None
        if decoded is None:
            return None
        value, end = decoded
        self._jump = end
        return value, self._base + end

    @property
    def unfinished(self) -> str:
        """Text of a token that never ended (an unclosed string), after :meth:`finish`."""
        if self._string is not None:
            return "".join(self._string) + self._held
        if self._delim is not None:
            return self._delim[0] + "".join(self._delim_parts) + self._held
        return self._held

    def _scan(self, buffer: str, base: int, *, end: bool) -> Generator[Token, None, None]:
        self._buffer, self._base = buffer, base
        at = 0
        size = len(buffer)
        while at < size:
            if self._string is not None:
                at, token = self._in_string(buffer, base, at)
                if token is None:
                    break
                yield token
                continue
            if self._delim is not None:
                at, token = self._in_delim(buffer, base, at, end=end)
                if token is None:
                    break
                yield token
                continue
            blank = _NOT_BLANK.search(buffer, at)
            if blank is None:
                at = size
                break
            at = blank.start()
            char = buffer[at]
            opened = self._delim_at(buffer, base, at, end=end)
            if opened is None:
                break  # a marker prefix at the end: wait
            if opened:
                at += opened
                continue
            if char in PUNCTUATION:
                yield Token(char, base + at, base + at + 1, char)
                at += 1
                if self._jump >= 0:  # the caller took the container whole
                    at, self._jump = self._jump, -1
            elif char == '"':
                self._string = ['"']
                self._token_start = base + at
                at += 1
            else:
                stop = self._scalar_end.search(buffer, at + 1)
                if not end and (stop is None or self._opener_pending(buffer, at, stop.start())):
                    break  # the scalar may go on
                cut = size if stop is None else stop.start()
                raw = buffer[at:cut]
                yield Token(SCALAR, base + at, base + cut, raw, raw)
                at = cut
        self._buffer = ""
        self._held = buffer[at:]
        self._held_start = base + at

    def _opener_pending(self, buffer: str, at: int, stop: int) -> bool:
        """Whether a delimited string's opener may still complete after the scalar at
        ``at`` and no later than ``stop``, where the scan would end it (``x<|"``: ``<|"|>``
        may follow, and it ends the scalar before ``"`` does)."""
        if self._openers is None:
            return False
        start = max(at + 1, len(buffer) - self._longest_opener + 1)
        found = self._openers.search(buffer, start, partial=True)
        return found is not None and found.partial and found.start() <= stop

    def _delim_at(self, buffer: str, base: int, at: int, *, end: bool) -> int | None:
        """The length of the opener of a delimited string at ``at`` (0: none; ``None``:
        cannot tell yet)."""
        for pair in self._delims:
            opener = pair[0]
            if buffer.startswith(opener, at):
                self._delim = pair
                self._delim_parts = []
                self._token_start = base + at
                return len(opener)
            if not end and len(buffer) - at < len(opener) and opener.startswith(buffer[at:]):
                return None
        return 0

    def _in_string(self, buffer: str, base: int, at: int) -> tuple[int, Token | None]:
        """Where the string the scan stands in ends, and its token (``None``: it goes
        on past ``buffer``)."""
        parts = self._string
        assert parts is not None
        start = at
        if parts == ['"'] and not self._skipped and at and buffer[at - 1] == '"':
            # The whole string may be here: decoded where it stands, in one pass.
            whole = decode_whole(buffer, at - 1)
            value, end = whole if whole is not None else (None, -1)
            if isinstance(value, str):
                self._string = None
                return end, Token(
                    STRING, self._token_start, base + end, buffer[at - 1 : end], value
                )
        if self._escape:
            self._escape = False
            at += 1  # the escaped character
        end = json_string_end(buffer, at)
        if end < 0:
            self._escape = end == -2
            parts.append(buffer[start:])
            return len(buffer), None
        parts.append(buffer[start:end])
        raw = "".join(parts)
        self._string = None
        value = None if self._skipped else _decode(raw)
        self._skipped = False
        return end, Token(STRING, self._token_start, base + end, raw, value)

    def _in_delim(self, buffer: str, base: int, at: int, *, end: bool) -> tuple[int, Token | None]:
        pair = self._delim
        assert pair is not None
        opener, closer = pair
        stop = buffer.find(closer, at)
        if stop < 0:
            keep = 0 if end else min(len(closer) - 1, len(buffer) - at)
            self._delim_parts.append(buffer[at : len(buffer) - keep])
            return len(buffer) - keep, None
        self._delim_parts.append(buffer[at:stop])
        value = "".join(self._delim_parts)
        stop += len(closer)
        self._delim = None
        return stop, Token(STRING, self._token_start, base + stop, opener + value + closer, value)


def _decode(raw: str) -> str | None:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, str) else None
