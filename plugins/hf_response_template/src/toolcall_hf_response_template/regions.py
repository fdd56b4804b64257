"""Splitting the text into the regions of a template, incrementally.

The rules are transformers' (``ResponseParser._process``): the text starts in the
implicit field's region (the field without an opener); there, every explicit
field's opener is watched, and the implicit field's closer; inside an explicit
region only its own closer is, so nothing opens inside it, and a region without a
closer runs to the end of the output. Of the delimiters found, the earliest wins,
then the longest, then an opener before a closer, then the field name's order. A
delimiter that may still complete (a partial match, or a pattern match that reaches
the end of the text and could grow) holds back everything from its start.

Two rules read the text around a delimiter. A region's closer may stand inside the
region's value, where it is text (a JSON string of a ``json`` region holds
``</tool_call>``): the scanner's *gate* is asked at each closer it finds, after the
text before it has gone to the region, and a closer the gate says is inside is a
character of text (the search goes on from the next one). And a name capture that
ends the opener's match is whole only where a name cannot go on (:data:`NAME_CHAR`):
``call:(?P<name>\\w+)`` matching ``call:get`` of ``call:get-weather`` cut the name
short, so the region opens without the capture (it gives no name, and no call).

:class:`RegionScanner` applies them to a growing text with work proportional to
what is fed (each delimiter's last search is reused until the text passes it), and
keeps only the undecided end of the text (plus a little context for ``^`` and
look-behinds).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

import regex

from toolcall_hf_response_template.patterns import Delimiter, Found
from toolcall_hf_response_template.template import Field, Template

__all__ = ["NAME_CHAR", "Close", "Gate", "Open", "RegionScanner", "Text"]

#: Characters kept before the undecided text, for look-behinds and ``^``.
_CONTEXT: Final = 64
#: What a tool name is made of (OpenAI's ``[A-Za-z0-9_-]``, any script's letters and
#: digits, and the ``.`` of namespaced names): a name capture followed by one of these
#: where the opener's match ends was cut short by the pattern.
NAME_CHAR: Final = regex.compile(r"[\w.\-]")


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
#: Asked when the current region's closer is found: ``events`` (the scanner's events
#: before it, which the gate takes: it applies them and empties the list) bring the
#: region's text up to the closer; ``True`` if the closer stands inside the region's
#: value, where it is text.
Gate = Callable[[list[Event]], bool]


@dataclass(slots=True)
class _Cached:
    """A delimiter's last search: from ``start``, over a text of ``size`` characters."""

    start: int
    size: int
    found: Found | None


class RegionScanner:
    """The region events of a text fed in pieces (offsets count from its start)."""

    def __init__(self, template: Template, gate: Gate | None = None) -> None:
        self.template = template
        self.gate = gate
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
            size = self._base + len(self._buffer)
            hold = size
            for opener, field, delimiter in self._watch():
                found = self._find(delimiter, eos=eos)
                if found is None:
                    continue
                if found.pending or (opener and self._name_cut(field, found, eos=eos) is None):
                    hold = min(hold, found.start)
                    continue
                key = (found.start, found.start - found.end, 0 if opener else 1, field.name)
                if best is None or key < best[0]:
                    best = (key, opener, field, found)
            at = best[3].start if best is not None and best[3].start < hold else hold
            if self._gated(at < size or best is not None):
                # A closer (or the start of one) of the current region: not one if the gate
                # finds it inside the region's value, after the text before it.
                if at > self._pos:
                    self._text(events, at)
                assert self.gate is not None
                if self.gate(events):
                    if at < size:
                        self._text(events, at + 1)
                        continue
                    best, hold = None, size
            if best is not None and best[3].start < hold:
                _, opener, field, found = best
                if found.start > self._pos:
                    self._text(events, found.start)
                text = self._slice(found.start, found.end)
                self._pos = found.end
                if opener:
                    captures = found.groups or {}
                    if self._name_cut(field, found, eos=eos):
                        name = _name_group(field)
                        captures = {key: value for key, value in captures.items() if key != name}
                    self._close(events, "", found.start, "open")
                    self._current = field
                    self._opened = True
                    events.append(Open(field, text, found.start, captures))
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

    def _gated(self, found: bool) -> bool:
        """Whether a closer ``found`` of the current region is for the gate to judge."""
        current = self._current
        return (
            found
            and self.gate is not None
            and current is not None
            and current is not self._implicit
        )

    def _name_cut(self, field: Field, found: Found, *, eos: bool) -> bool | None:
        """Whether the opener ``found`` of ``field`` cut its name capture short: the capture
        ends the match and a name character follows, or the output ends there (the name may
        have gone on, as a JSON name cut off in its string); ``None``: the text so far ends
        there, and what follows is not known yet."""
        name = _name_group(field)
        if name is None or name not in found.ending:
            return False
        at = found.end - self._base
        if at >= len(self._buffer):
            return True if eos else None
        return NAME_CHAR.match(self._buffer, at) is not None

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
                ending=local.ending,
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


def _name_group(field: Field) -> str | None:
    """The opener's group that gives the name of ``field``'s calls, if one does."""
    shape = field.shape
    return shape.name.name if shape is not None and shape.name.kind == "capture" else None
