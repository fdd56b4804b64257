"""Splitting the text into the regions of a template, incrementally.

The rules are transformers' (``ResponseParser._process``): the text starts in the
implicit field's region (the field without an opener); there, every explicit
field's opener is watched, and the implicit field's closer; inside an explicit
region only its own closer is, so nothing opens inside it, and a region without a
closer runs to the end of the output. Of the delimiters found, the earliest wins,
then the longest, then an opener before a closer, then the field name's order. A
delimiter that may still complete (a partial match, or a pattern match that reaches
the end of the text and could grow) holds back everything from its start.

:class:`RegionScanner` applies them to a growing text with work proportional to
what is fed (each delimiter's last search is reused until the text passes it), and
keeps only the undecided end of the text (plus a little context for ``^`` and
look-behinds).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from toolcall_hf_response_template.patterns import Delimiter, Found
from toolcall_hf_response_template.template import Field, Template

__all__ = ["Close", "Open", "RegionScanner", "Text"]

#: Characters kept before the undecided text, for look-behinds and ``^``.
_CONTEXT: Final = 64


@dataclass(frozen=True, slots=True)
class Text:
    """Text of the current region at absolute offset ``start``; ``outside``: no region
    takes it (the template has no field without an opener)."""

    text: str
    start: int
    outside: bool = False


@dataclass(frozen=True, slots=True)
class Open:
    """``field``'s region opens; its opener is ``text`` at ``start`` (may be empty)."""

    field: Field
    text: str
    start: int
    captures: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Close:
    """The current region (of ``field``) closes; its closer is ``text`` at ``start``.

    ``how``: ``"close"`` (its closer), ``"open"`` (another region's opener; ``text``
    is empty) or ``"eos"`` (the end of the output; ``text`` is empty)."""

    field: Field
    text: str
    start: int
    how: Literal["close", "open", "eos"] = "close"


Event = Text | Open | Close


@dataclass(slots=True)
class _Cached:
    """A delimiter's last search: from ``start``, over a text of ``size`` characters."""

    start: int
    size: int
    found: Found | None


class RegionScanner:
    """The region events of a text fed in pieces (offsets count from its start)."""

    def __init__(self, template: Template) -> None:
        self.template = template
        self._implicit = template.fields[template.implicit] if template.implicit else None
        self._current: Field | None = self._implicit
        self._opened = False  # whether the current region has opened (implicit: lazily)
        self._buffer = ""
        self._base = 0  # absolute offset of _buffer[0]
        self._pos = 0  # absolute offset of the first undecided character
        self._cache: dict[int, _Cached] = {}
        self._watch_key: tuple[object, ...] = ()
        delimiters = [
            delimiter
            for field in template.fields.values()
            for delimiter in (field.open, field.close)
            if delimiter is not None
        ]
        #: Whether text can be skipped (:meth:`skip`): every delimiter starts at known
        #: characters and none looks back at the text before it.
        self.skippable = all(delimiter.starts is not None for delimiter in delimiters)

    @property
    def current(self) -> Field | None:
        """The field whose region the text is in."""
        return self._current

    @property
    def held(self) -> tuple[str, int]:
        """The undecided end of the text (a delimiter that may still complete), and its
        absolute offset."""
        return self._buffer[self._pos - self._base :], self._pos

    @property
    def settled(self) -> bool:
        """Whether all the text fed so far is decided (no delimiter is pending)."""
        return self._pos == self._base + len(self._buffer)

    def starts(self) -> frozenset[str] | None:
        """The characters a delimiter watched now can start at (``None``: any)."""
        out: frozenset[str] = frozenset()
        for _, _, delimiter in self._watch():
            if delimiter.starts is None:
                return None
            out |= delimiter.starts
        return out

    def skip(self, size: int) -> None:
        """``size`` more characters of the current region's text, taken by the caller
        without the scanner: the text is :attr:`skippable`, all of it fed so far was
        :attr:`settled`, the region has opened, and the skipped text holds none of
        :meth:`starts` (so it holds no delimiter, nor the start of one)."""
        assert self.skippable
        assert self.settled
        assert self._opened
        self._pos += size
        self._base = self._pos
        self._buffer = ""
        self._cache.clear()

    def feed(self, text: str) -> list[Event]:
        self._buffer += text
        events: list[Event] = []
        self._run(events, eos=False)
        self._trim()
        return events

    def finish(self) -> list[Event]:
        """The text ended: decide everything, and close the open region."""
        events: list[Event] = []
        self._run(events, eos=True)
        return events

    # -- the loop ---------------------------------------------------------------------------

    def _watch(self) -> list[tuple[bool, Field, Delimiter]]:
        current = self._current
        if current is not None and current is not self._implicit:
            return [(False, current, current.close)] if current.close is not None else []
        watch = [
            (True, field, field.open)
            for field in self.template.fields.values()
            if field.open is not None
        ]
        if self._implicit is not None and self._implicit.close is not None:
            watch.append((False, self._implicit, self._implicit.close))
        return watch

    def _run(self, events: list[Event], *, eos: bool) -> None:
        while True:
            best: tuple[tuple[int, int, int, str], bool, Field, Found] | None = None
            hold = self._base + len(self._buffer)
            for opener, field, delimiter in self._watch():
                found = self._find(delimiter, eos=eos)
                if found is None:
                    continue
                if found.pending:
                    hold = min(hold, found.start)
                    continue
                key = (found.start, found.start - found.end, 0 if opener else 1, field.name)
                if best is None or key < best[0]:
                    best = (key, opener, field, found)
            if best is not None and best[3].start < hold:
                _, opener, field, found = best
                if found.start > self._pos:
                    self._text(events, found.start)
                text = self._slice(found.start, found.end)
                self._pos = found.end
                if opener:
                    self._close(events, "", found.start, "open")
                    self._current = field
                    self._opened = True
                    events.append(Open(field, text, found.start, found.groups or {}))
                    continue
                had_text = self._opened
                self._close(events, text, found.start, "close")
                if not had_text and found.start == found.end:
                    break  # an empty close of an empty region: wait for more text
                continue
            if eos:
                end = self._base + len(self._buffer)
                if end > self._pos:
                    self._text(events, end)
                self._close(events, "", self._pos, "eos")
                return
            if hold > self._pos:
                self._text(events, hold)
            return

    def _find(self, delimiter: Delimiter, *, eos: bool) -> Found | None:
        """The delimiter's leftmost match from the current position, reusing the last
        search where the text since cannot change it."""
        size = self._base + len(self._buffer)
        cached = self._cache.get(id(delimiter))
        pos = self._pos
        start = pos
        if cached is not None and not eos and cached.start <= pos:
            found = cached.found
            if found is not None and not found.pending and found.start >= pos:
                return found
            if found is None:
                # Nothing matched up to the old end; only a match that the new text
                # completes can start before it, and no delimiter is longer than this.
                start = max(pos, cached.size - delimiter.longest)
            elif found.start >= pos:
                start = found.start
        local = delimiter.find(self._buffer, start - self._base, eos=eos)
        found = None
        if local is not None:
            found = Found(
                local.start + self._base,
                local.end + self._base,
                pending=local.pending,
                groups=local.groups,
            )
        self._cache[id(delimiter)] = _Cached(pos, size, found)
        return found

    def _slice(self, start: int, end: int) -> str:
        return self._buffer[start - self._base : end - self._base]

    def _text(self, events: list[Event], end: int) -> None:
        text = self._slice(self._pos, end)
        start, self._pos = self._pos, end
        if not text:
            return
        if self._current is None:
            events.append(Text(text, start, outside=True))
            return
        if not self._opened:
            self._opened = True
            events.append(Open(self._current, "", start, {}))
        events.append(Text(text, start))

    def _close(
        self, events: list[Event], text: str, start: int, how: Literal["close", "open", "eos"]
    ) -> None:
        current = self._current
        if current is not None and self._opened:
            events.append(Close(current, text, start, how))
        self._current = self._implicit
        self._opened = False

    def _trim(self) -> None:
        cut = self._pos - self._base - _CONTEXT
        if cut > 0:
            self._buffer = self._buffer[cut:]
            self._base += cut
