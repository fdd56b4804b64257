"""The ``hf`` stream: a response template's regions, on the call-stream machine.

The output is split into the template's regions (:mod:`.regions`); each region
gives its text a fate as it arrives:

* ``content``: content, through the machine's whitespace policy; its delimiters
  are framing;
* ``thinking``: reasoning, trimmed like transformers trims it (``strip``: blank text
  at the start of a region is framing at once, at the end once the region closes);
* ``tool_calls``: calls, read by the body reader for the field's content and
  transform (:mod:`.bodies`); with tool parsing off (``tool_choice: "none"``) the
  region is content, verbatim with its delimiters (``unparsed-markup``).

The rendered prompt (``ParserContext.prompt``) is read first, as transformers and
vLLM read it: after the last ``start_anchor`` in it, its text opens (and closes)
regions without being output, so that an output that continues a prefilled
``<think>`` is reasoning. A prompt without the anchor is not read (transformers
would read all of it: a stray opener in a system prompt would swallow the output).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

import regex

from toolcall.callstream import CallStream
from toolcall.scanning import string_body_stop
from toolcall.types import WHITESPACE, EventName
from toolcall_hf_response_template.bodies import Body, End, make_body
from toolcall_hf_response_template.regions import Event, Open, RegionScanner, Text
from toolcall_hf_response_template.template import CONTENT, THINKING, Field, Template, markers_of

if TYPE_CHECKING:
    from toolcall_hf_response_template.parser import HfParser

__all__ = ["HfStream", "prompt_prefix"]

#: A string of raw JSON arguments leaves the fast path at its end and at a delimiter's
#: start (core's ``string_body_stop``). The machine keeps back the backslash of an
#: escape that ends a fast delta, and the blanks that end one (if the closer came next,
#: the unclosed string's trailing blanks would be trimmed): the next delta begins with
#: them. What the reader, not the machine, takes as more of the string holds neither
#: a ``"`` after an even run of backslashes nor a ``\`` at its end (an escape may be
#: pending after it).
_QUOTE: Final = r'(?<!\\)(?:\\\\)*"'
_ESCAPE_END: Final = r"\\\Z"


def prompt_prefix(template: Template, prompt: str | None) -> str:
    """The part of the prompt that belongs to the message: after the last
    ``start_anchor`` (nothing if the anchor is not in it)."""
    if not prompt:
        return ""
    anchor = template.start_anchor
    last = -1
    at = 0
    while True:
        found = anchor.find(prompt, at, eos=True)
        if found is None:
            break
        last = found.end
        at = max(found.end, found.start + 1)
    return prompt[last:] if last >= 0 else ""


class _Region:
    """The fate of one region's text (see the module)."""

    def __init__(self, stream: HfStream, field: Field) -> None:
        self.stream = stream
        self.field = field
        #: What a delimiter watched in the region can start at, once asked (``None``: any).
        self.starts: frozenset[str] | None = None
        self.starts_known = False

    def open(self, text: str, start: int, captures: Mapping[str, str]) -> None:
        del captures
        self.stream.frame(start, start + len(text))

    def text(self, text: str, start: int) -> None:
        self.stream.content(text, start)

    def prompt(self, text: str) -> None:
        """Text of the region that the prompt holds (not output): the region goes on."""
        del text

    def close(self, text: str, start: int, how: End) -> None:
        del how
        self.stream.frame(start, start + len(text))

    def fast(self, starts: frozenset[str]) -> None:
        """Take the machine's fast path for the next text if the region's state allows
        (``starts``: the characters a delimiter watched now can start at)."""
        del starts
        self.stream.slow()

    def skip(self, size: int) -> None:
        """``size`` characters of the region's text went by on the fast path."""
        del size


class _Content(_Region):
    def text(self, text: str, start: int) -> None:
        self.stream.content(text, start)

    def fast(self, starts: frozenset[str]) -> None:
        stream = self.stream
        if stream.holding:
            stream.slow()
        else:
            stream.fast_content(stream.stop(starts))


class _Thinking(_Region):
    """Reasoning; with ``strip``, blank text at either end of the region is framing."""

    def __init__(self, stream: HfStream, field: Field) -> None:
        super().__init__(stream, field)
        self.strip = field.strip
        self.started = not self.strip
        self.blank: list[str] = []  # a copy of the blank run held at the end, so far
        self.blank_at = -1

    def text(self, text: str, start: int) -> None:
        stream = self.stream
        if not self.started:
            kept = text.lstrip(WHITESPACE)
            stream.frame(start, start + len(text) - len(kept))
            if not kept:
                return
            start += len(text) - len(kept)
            text = kept
            self.started = True
        if not self.strip:
            stream.reasoning(text, start)
            return
        kept = text.rstrip(WHITESPACE)
        if not kept:
            if self.blank_at < 0:
                self.blank_at = start
            self.blank.append(text)
            stream.hold(text, start)
            return
        if self.blank_at >= 0:
            stream.unhold(self.blank_at)
            stream.reasoning("".join(self.blank), self.blank_at)
            self.blank, self.blank_at = [], -1
        stream.reasoning(kept, start)
        if len(kept) < len(text):
            self.blank_at = start + len(kept)
            self.blank = [text[len(kept) :]]
            stream.hold(self.blank[0], self.blank_at)

    def prompt(self, text: str) -> None:
        # strip trims the region's text as a whole: once the prompt wrote some of it, the
        # output's blanks are inside it, not at its start.
        if text.strip(WHITESPACE):
            self.started = True

    def close(self, text: str, start: int, how: End) -> None:
        if self.blank_at >= 0:
            self.blank, self.blank_at = [], -1
            self.stream.settle(start)
        super().close(text, start, how)


class _Passed(_Content):
    """A tool region while tool parsing is off: content, verbatim with its markup."""

    def open(self, text: str, start: int, captures: Mapping[str, str]) -> None:
        del captures
        if text:
            self.stream.event(EventName.UNPARSED_MARKUP, "tool parsing is off", None)
        self.stream.content(text, start)

    def close(self, text: str, start: int, how: End) -> None:
        del how
        self.stream.content(text, start)


class _Tool(_Region):
    """A tool region: its body reader decides every character."""

    body: Body | None = None
    #: Inside a string: what the reader takes as more of it may not hold, and the fast
    #: path's stop.
    stops: tuple[re.Pattern[str], re.Pattern[str]] | None = None

    def open(self, text: str, start: int, captures: Mapping[str, str]) -> None:
        self.stream.hold(text, start)
        self.body = make_body(self.stream, self.field, captures, start + len(text))

    def text(self, text: str, start: int) -> None:
        assert self.body is not None
        self.body.feed(text, start)

    def close(self, text: str, start: int, how: End) -> None:
        assert self.body is not None
        self.body.close(text, start, how)

    def fast(self, starts: frozenset[str]) -> None:
        stream = self.stream
        blanks = None if self.body is None else self.body.in_string()
        if blanks is None:
            stream.slow()
            return
        if self.stops is None:
            self.stops = (
                stream.stop(starts, _QUOTE, _ESCAPE_END),
                string_body_stop("".join(sorted(starts))),
            )
        stream.string_stop, stop = self.stops
        if not blanks:
            stream.fast_arguments(stop, split_escapes=True, hold_blanks=True)
            return

        def after_blanks(text: str) -> str:
            # The blanks the reader held go out with the first delta that follows them
            # (the machine keeps back a delta's trailing blanks); the rest stand as they are.
            stream.fast_arguments(stop, split_escapes=True, hold_blanks=True)
            return blanks + text

        stream.fast_arguments(stop, after_blanks, split_escapes=True, hold_blanks=True)

    def skip(self, size: int) -> None:
        assert self.body is not None
        self.body.skip_string(size)

    def string_text(self, text: str, start: int) -> None:
        assert self.body is not None
        self.body.string_text(text, start)


class HfStream(CallStream):
    """One output parsed by a response template (see the module)."""

    handles_none = True

    def __init__(self, parser: HfParser) -> None:
        super().__init__(parser)
        template = parser.template
        self.template = template
        self.tools_on = self.request.tool_choice != "none"
        self.scanner = RegionScanner(template, gate=self._inside)
        self.region: _Region | None = None
        self.held_at = -1  # where the scanner's undecided text starts, held by the machine
        markers = markers_of(template)
        #: Finds a delimiter's text in content (markup that was not read), for its event.
        self.markup = regex.compile("|".join(regex.escape(m) for m in markers)) if markers else None
        self.longest = max(map(len, markers), default=1) - 1
        self.content_tail = ""  # the end of the content so far, for markup split across texts
        self.seen = 0  # the output offset just past the text the region scanner got
        self.stops: dict[tuple[frozenset[str], tuple[str, ...]], re.Pattern[str]] = {}
        #: While the fast path stands in a string of raw arguments: what text read as more
        #: of that string may not hold (its stop, and a backslash at the end).
        self.string_stop: re.Pattern[str] | None = None
        prefix = prompt_prefix(template, parser.context.prompt)
        self.prefix = len(prefix)
        if prefix:
            self._apply(self.scanner.feed(prefix))

    # -- the machine's hooks ------------------------------------------------------------

    def on_text(self, text: str, start: int) -> None:
        if start > self.seen:
            self._skip(start - self.seen)
        self.seen = start + len(text)
        string = self.string_stop
        if string is not None and text and string.search(text) is None:
            # More of the string (the blanks the machine kept back, at the end of the
            # output): the reader takes it, not the scanner.
            assert isinstance(self.region, _Tool)
            self.scanner.skip(len(text))
            self.region.string_text(text, start)
            self._choose_path()
            return
        if self.held_at >= 0:
            self.unhold(self.held_at)
            self.held_at = -1
        self._apply(self.scanner.feed(text))
        held, at = self.scanner.held
        at -= self.prefix
        if at < 0:
            held, at = held[-at:], 0
        if held:
            self.held_at = at
            self.hold(held, at)
        self._choose_path()

    def on_end(self) -> None:
        if self.position > self.seen:
            self._skip(self.position - self.seen)
            self.seen = self.position
        if self.held_at >= 0:
            self.unhold(self.held_at)
            self.held_at = -1
        self._apply(self.scanner.finish())

    def content(self, text: str, start: int) -> None:
        """Content; a delimiter's text in it is markup that was not read (a stray closer,
        an opener that did not complete), recorded once as ``unparsed-markup``."""
        if self.markup is not None:
            window = self.content_tail + text
            if self.markup.search(window):
                self.markup = None
                self.event(EventName.UNPARSED_MARKUP, "a delimiter's text in content", None)
            self.content_tail = window[-self.longest :] if self.longest else ""
        super().content(text, start)

    # -- the fast path ----------------------------------------------------------------------

    def _choose_path(self) -> None:
        """After the hooks read a delta: whether the next may skip them (the machine's
        fast path), as the region's state allows. Only when every delimiter starts at
        known characters and the scanner has nothing pending, so that a delta without
        those characters holds no delimiter and changes nothing the scanner decides."""
        self.string_stop = None
        region = self.region
        scanner = self.scanner
        if region is None or not scanner.settled:
            self.slow()
            return
        if not region.starts_known:
            region.starts = scanner.starts() if scanner.skippable else None
            region.starts_known = True
        if region.starts is None:
            self.slow()
        else:
            region.fast(region.starts)

    def _skip(self, size: int) -> None:
        """The fast path took ``size`` characters of the current region's text."""
        assert self.region is not None
        self.scanner.skip(size)
        self.region.skip(size)

    def stop(self, starts: frozenset[str], *ends: str) -> re.Pattern[str]:
        """What ends a fast path: a delimiter's first character, or any of ``ends``."""
        key = (starts, ends)
        found = self.stops.get(key)
        if found is None:
            chars = "".join(f"\\U{ord(char):08x}" for char in sorted(starts))
            parts = [*ends, f"[{chars}]"] if chars else list(ends)
            found = self.stops[key] = re.compile("|".join(parts) or "(?!)")
        return found

    # -- regions ----------------------------------------------------------------------------

    def _inside(self, events: list[Event]) -> bool:
        """The region scanner's gate: the closer of a tool region found after ``events``
        stands inside its value (a JSON string), where it is text."""
        self._apply(events)
        events.clear()
        region = self.region
        return isinstance(region, _Tool) and region.body is not None and region.body.inside()

    def _apply(self, events: list[Event]) -> None:
        for event in events:
            text, start = self._output(event.text, event.start)
            if isinstance(event, Text):
                if event.outside:
                    self._outside(text, start)
                    continue
                assert self.region is not None  # the scanner opens a region before its text
                if event.start < self.prefix:
                    self.region.prompt(event.text[: self.prefix - event.start])
                if text:
                    self.region.text(text, start)
            elif isinstance(event, Open):
                self.region = self._new_region(event.field)
                self.region.open(text, start, event.captures)
            else:
                region = self.region or self._new_region(event.field)
                region.close(text, start, event.how)
                self.region = None

    def _outside(self, text: str, start: int) -> None:
        """Text in no region: the template gives it no field (gpt-oss's
        ``<|start|>assistant`` between channels), so it is framing, as transformers and
        vLLM drop it; not silently (``ignored-text``)."""
        if text.strip(WHITESPACE):
            self.event(EventName.IGNORED_TEXT, f"outside every region: {text.strip()[:40]!r}")
        self.frame(start, start + len(text))

    def _new_region(self, field: Field) -> _Region:
        if field.name == THINKING:
            return _Thinking(self, field)
        if field.name == CONTENT:
            return _Content(self, field)
        if self.tools_on:
            return _Tool(self, field)
        return _Passed(self, field)

    def _output(self, text: str, start: int) -> tuple[str, int]:
        """The part of ``text`` (at an offset of the scanner's input) that is output,
        at its output offset."""
        start -= self.prefix
        if start < 0:
            return text[-start:], 0
        return text, start
