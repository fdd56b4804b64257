"""The Hermes / Qwen ``<tool_call>`` JSON format, parsed as a stream.

One call per tag, as Hermes 2 Pro, Hermes 3, Qwen2.5, QwQ and Qwen3 write it::

    Let me check.<tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

What the stream emits, and when (the family's part of DESIGN §6):

* content outside calls goes through the core's :class:`ContentGate`; text that
  could still become ``<tool_call>`` is held back, nothing else;
* a call is committed when its ``name`` string closes, wherever the key stands;
  its first delta carries the id and the name, together with any argument text
  that came before the name (``arguments``-first order);
* the arguments are the model's own text of the ``arguments`` value, streamed as
  it arrives (whitespace outside strings is held until the next non-blank
  character, so that whitespace before an end marker can be trimmed);
* a call object with no ``arguments`` key gets ``{}`` when it closes;
* a call that cannot be read (no name) is content, verbatim with its markup,
  once its end marker (or the next start marker, or the end of output) arrives.

The named recoveries of the policy (``python-literal``, ``parameters-key``,
``arguments-string``, ``missing-end``, ``bare-json``) are recorded as events and
switched off by ``ParserContext.strict_parsing``; ``python-literal``,
``arguments-string`` and ``bare-json`` emit the recovered call (or arguments)
whole, when it closes.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import regex

from toolcall.parser import Parser
from toolcall.scanning import JsonValueScanner, Marker, Markers, MarkerScanner, Text
from toolcall.types import Delta, Event, Span, ToolCallDelta
from toolcall_hermes._output import Content, Deltas, Framing
from toolcall_hermes.grammar import END, START, structural_tag

if TYPE_CHECKING:
    from toolcall.strictness import Plan

__all__ = ["END", "START", "HermesParser", "HermesStream", "Qwen3JsonParser"]

_WHITESPACE = " \t\r\n"
_NON_WHITESPACE = re.compile(r"[^ \t\r\n]")
_MARKERS = Markers([START, END])

# The states of a call, from its start marker on.
_OPEN = 0  # before the object's "{"
_KEY = 1  # a key (or "}") is expected
_KEY_STRING = 2  # reading a key string
_COLON = 3
_VALUE = 4  # a value is expected: dispatched on the key
_NAME = 5  # reading the name string
_ARGUMENTS = 6  # reading the arguments value
_SKIP = 7  # reading the value of a key we ignore
_NEXT = 8  # after a member: "," or "}" is expected
_AFTER = 9  # the object has closed: the end marker is expected
_BROKEN = 10  # the object cannot be read any further

# How a call ended.
_BY_END = 0  # its end marker
_BY_START = 1  # the next call's start marker
_BY_EOF = 2  # the end of output

# Keys of the call object.
_NAME_KEY = "name"
_ARGUMENTS_KEY = "arguments"
_PARAMETERS_KEY = "parameters"

#: Events of a call that the policy still accepts as a bare JSON call.
_BARE_OK = frozenset({"parameters-key", "arguments-string"})


class HermesParser(Parser):
    """``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, one call per tag."""

    name: ClassVar[str] = "hermes"
    markers: ClassVar[tuple[str, ...]] = (START, END)
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


class _Call:
    """The state of the call being read."""

    __slots__ = (
        "args_done",
        "args_parts",
        "args_seen",
        "frame_from",
        "held_string",
        "index",
        "key",
        "notes",
        "params_ignored",
        "raw",
        "scanner",
        "start",
        "state",
        "string_parts",
    )

    def __init__(self, start: int) -> None:
        self.start = start
        #: first offset of the call's region not yet recorded as framing or content
        self.frame_from = start
        self.state = _OPEN
        #: the call's index once committed, else -1
        self.index = -1
        #: the markup so far, while the call is not committed
        self.raw: list[str] = [START]
        self.scanner: JsonValueScanner | None = None
        self.key = ""
        self.string_parts: list[str] = []  # raw text of the key or name string
        self.args_seen = False
        self.args_done = False
        #: argument text read so far (emitted, or buffered before the name)
        self.args_parts: list[str] = []
        #: the arguments value is a JSON string held for ``arguments-string``
        self.held_string = False
        self.params_ignored = False
        #: events noted before the call had an index
        self.notes: list[tuple[str, str]] = []


class _Bare:
    """A possible ``bare-json`` call: the output so far is one JSON object."""

    __slots__ = ("checking", "head", "parts", "scanner", "start")

    def __init__(self, start: int) -> None:
        self.start = start
        self.parts: list[str] = []
        self.head = ""  # its first characters, up to ``_BARE_HEAD_LIMIT``
        self.scanner = JsonValueScanner()
        #: whether its head is still being checked (see ``HermesStream._bare_head``)
        self.checking = True


class HermesStream:
    """The incremental parse of one Hermes output (see the module docstring)."""

    def __init__(self, parser: HermesParser, *, allow_bare: bool = True) -> None:
        self._parser = parser
        self._recover = not parser.context.strict_parsing
        self._scanner = MarkerScanner(_MARKERS)
        self._deltas = Deltas()
        self._framing = Framing()
        self._content = Content(self._deltas, self._framing)
        self._events: list[Event] = []
        self._call: _Call | None = None
        self._calls = 0
        self._bare: _Bare | None = None
        self._bare_possible = allow_bare and self._recover and bool(parser.request.tools)
        self._tool_names = [
            json.dumps(tool.name, ensure_ascii=False)[1:-1] for tool in parser.request.tools
        ]
        self._position = 0  # characters fed so far
        self._progress = 0  # where the text being read stands (for a failure)
        self._failed = False
        self._finished = False

    # -- the Stream protocol -----------------------------------------------------

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    @property
    def framing(self) -> tuple[Span, ...]:
        return self._framing.spans()

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        del token_ids  # the markers are plain text in every tokenizer's output
        if self._finished:
            return []
        start = self._position
        self._position += len(text)
        segments: list[Text | Marker] = []
        done = 0
        offset = start
        try:
            call = self._call
            if self._failed:
                self._content.text(text, start)
                return self._deltas.take()
            if call is None:
                if self._bare is None and not self._bare_possible and self._plain(text):
                    self._content.text(text, start)  # nothing in it can start a marker
                    return self._deltas.take()
            elif call.state == _ARGUMENTS and call.index >= 0 and not call.held_string:
                fast = self._string_arguments(call, text)
                if fast is not None:
                    return fast
            # Offsets are counted here: the scanner's segments start at what it held.
            held = len(self._scanner.held)
            segments = self._scanner.feed(text)
            offset = start - held
            for segment in segments:
                if type(segment) is Text:
                    self._text(segment.text, offset)
                    offset += len(segment.text)
                else:
                    assert isinstance(segment, Marker)
                    self._marker(segment.marker, offset)
                    offset += len(segment.marker)
                done += 1
            bare = self._bare
            if bare is not None and bare.checking and not self._bare_head(bare, self._scanner.held):
                self._abandon_bare(bare)
        except Exception as exc:
            rest = [s.text if isinstance(s, Text) else s.marker for s in segments[done:]]
            self._fail(exc, "".join(rest) if segments else text, offset)
        return self._deltas.take()

    def _plain(self, text: str) -> bool:
        return "<" not in text and not self._scanner.held

    def _string_arguments(self, call: _Call, text: str) -> list[Delta] | None:
        """The hot path: a piece of a string inside the arguments, with nothing in it
        that the scanners would act on (no quote, backslash or ``<``). It is argument
        text as it stands, so both scanners can be skipped; ``None`` if it is not."""
        scanner = call.scanner
        if (
            scanner is None
            or not scanner.in_string
            or self._scanner.held
            or not text
            or '"' in text
            or "\\" in text
            or "<" in text
            or not call.args_parts
            or call.args_parts[-1].endswith("\\")  # an escape may be pending
        ):
            return None
        call.args_parts.append(text)
        return [Delta("", (ToolCallDelta(call.index, None, None, text),))]

    def finish(self) -> list[Delta]:
        if self._finished:
            return []
        self._finished = True
        if self._failed:
            self._content.finish()
            return self._deltas.take()
        try:
            offset = self._position - len(self._scanner.held)
            for tail in self._scanner.finish():
                call = self._call
                if (
                    call is not None
                    and call.index >= 0
                    and call.state == _AFTER
                    and END.startswith(tail.text)
                ):
                    # The start of the call's end marker, cut off: framing, like the marker.
                    continue
                self._text(tail.text, offset)
            if self._bare is not None:
                self._finish_bare(self._bare)
            elif self._call is not None:
                self._end_call(self._call, _BY_EOF, self._position)
                self._call = None
            self._content.finish()
        except Exception as exc:
            self._fail(exc, "", self._position)
            self._content.finish()
        return self._deltas.take()

    # -- dispatch ------------------------------------------------------------------

    def _text(self, text: str, start: int) -> None:
        call = self._call
        if call is not None:
            self._call_text(call, text, start)
        elif self._bare is not None:
            self._bare_text(self._bare, text)
        elif self._bare_possible:
            self._outside_text(text, start)
        else:
            self._content.text(text, start)

    def _marker(self, marker: str, start: int) -> None:
        call = self._call
        if call is not None:
            scanner = call.scanner
            if scanner is not None and scanner.in_string and call.state in _SCANNING:
                # A marker inside a JSON string is string text.
                self._call_text(call, marker, start)
                return
            if marker == END:
                self._end_call(call, _BY_END, start + len(END))
                self._call = None
            else:
                self._end_call(call, _BY_START, start)
                self._call = _Call(start)
            return
        if self._bare is not None:
            bare = self._bare
            if (
                not bare.scanner.done
                and bare.scanner.in_string
                and (not bare.checking or self._bare_head(bare, marker))
            ):
                self._bare_text(bare, marker)
                return
            self._abandon_bare(bare)
        self._bare_possible = False
        if marker == START:
            self._call = _Call(start)
        else:
            # An end marker with no call open: content, verbatim.
            self._content.text(marker, start)
            self._events.append(Event("unparsed-markup", None, "end marker outside a call"))

    # -- outside calls: content, and the bare-json candidate ---------------------------

    def _outside_text(self, text: str, start: int) -> None:
        first = _NON_WHITESPACE.search(text)
        if first is None:
            self._content.text(text, start)
            return
        self._bare_possible = False
        cut = first.start()
        if text[cut] != "{":
            self._content.text(text, start)
            return
        self._content.text(text[:cut], start)
        self._bare = _Bare(start + cut)
        self._bare_text(self._bare, text[cut:])

    def _bare_text(self, bare: _Bare, text: str) -> None:
        bare.parts.append(text)
        if len(bare.head) < _BARE_HEAD_LIMIT:
            bare.head = (bare.head + text)[:_BARE_HEAD_LIMIT]
        if bare.checking and not self._bare_head(bare):
            self._abandon_bare(bare)
            return
        scanner = bare.scanner
        if scanner.done:
            rest = text
        else:
            _, rest = scanner.feed(text)
            if not scanner.done:
                return
        if rest.strip(_WHITESPACE):
            self._abandon_bare(bare)

    def _bare_head(self, bare: _Bare, held: str = "") -> bool:
        """Whether the object can still be a call to a declared tool, judged from its
        head (the first key, and the name when it comes first), so that JSON content
        is released as soon as it cannot be a call. ``held`` is text the marker scanner
        holds after it. Decided on a bounded prefix of the output, and monotone in it
        (a prefix that fails fails for every continuation), so every split decides alike."""
        head = (bare.head + held)[:_BARE_HEAD_LIMIT]
        verdict = _bare_verdict(head, self._tool_names)
        if verdict is None:
            bare.checking = len(bare.head) < _BARE_HEAD_LIMIT
            return True
        bare.checking = False
        return verdict

    def _abandon_bare(self, bare: _Bare) -> None:
        """Text other than whitespace follows the object: it was content."""
        self._bare = None
        self._content.text("".join(bare.parts), bare.start)

    def _finish_bare(self, bare: _Bare) -> None:
        self._bare = None
        text = "".join(bare.parts)
        call = self._read_bare(text.rstrip(_WHITESPACE)) if bare.scanner.done else None
        if call is None:
            self._content.text(text, bare.start)
            return
        name, arguments, events = call
        index = self._next_index()
        self._content.boundary()
        self._deltas.head(index, self._parser.new_call_id(), name, arguments)
        self._events.append(Event("bare-json", index, "a JSON call object with no markers"))
        self._events.extend(Event(event.name, index, event.detail) for event in events)
        self._framing.add(bare.start, bare.start + len(text))

    def _read_bare(self, text: str) -> tuple[str, str, tuple[Event, ...]] | None:
        """Read ``text`` as the body of one tagged call; keep it only if it names a
        declared tool and reads cleanly (up to the recoveries that fit a bare call)."""
        inner = HermesStream(self._parser, allow_bare=False)
        deltas = inner.feed(START + text + END) + inner.finish()
        entries = [entry for delta in deltas for entry in delta.tool_calls]
        if any(delta.content for delta in deltas) or not entries:
            return None
        if any(entry.index != 0 for entry in entries):
            return None
        name = entries[0].name
        if name is None or self._parser.request.tool(name) is None:
            return None
        if any(event.name not in _BARE_OK for event in inner.events):
            return None
        arguments = "".join(entry.arguments for entry in entries)
        if not _is_object(arguments):
            return None
        return name, arguments, inner.events

    # -- inside a call ---------------------------------------------------------------

    def _call_text(self, call: _Call, text: str, start: int) -> None:
        if call.index < 0:
            call.raw.append(text)
        pos = 0
        size = len(text)
        while pos < size:
            self._progress = start + pos
            state = call.state
            if state == _ARGUMENTS:
                pos = self._arguments_text(call, text, pos)
            elif state in (_KEY_STRING, _NAME, _SKIP):
                pos = self._value_text(call, text, pos)
            elif state in (_AFTER, _BROKEN):
                if call.index >= 0:
                    self._call_content(call, text[pos:], start + pos)
                return
            else:
                found = _NON_WHITESPACE.search(text, pos)
                if found is None:
                    return
                pos = found.start()
                pos = self._structure(call, text, pos)

    def _structure(self, call: _Call, text: str, pos: int) -> int:
        """One structural character of the call object at ``text[pos]``."""
        char = text[pos]
        state = call.state
        if state == _OPEN:
            if char == "{":
                call.state = _KEY
                return pos + 1
        elif state == _KEY:
            if char == '"':
                call.state = _KEY_STRING
                call.scanner = JsonValueScanner()
                call.string_parts = []
                return pos
            if char == "}":  # an empty object, or a trailing comma
                self._object_closed(call)
                return pos + 1
        elif state == _COLON:
            if char == ":":
                call.state = _VALUE
                return pos + 1
        elif state == _VALUE:
            return self._value_start(call, char, pos)
        elif state == _NEXT:
            if char == ",":
                call.state = _KEY
                return pos + 1
            if char == "}":
                self._object_closed(call)
                return pos + 1
        self._break(call)
        return pos

    def _value_start(self, call: _Call, char: str, pos: int) -> int:
        key = call.key
        if key == _NAME_KEY and call.index < 0:
            if char != '"':
                call.state = _BROKEN  # a name that is not a string: not a call
                return pos
            call.state = _NAME
            call.scanner = JsonValueScanner()
            call.string_parts = []
            return pos
        stripped = key.strip(_WHITESPACE)
        if stripped in (_ARGUMENTS_KEY, _PARAMETERS_KEY):
            if call.args_seen:
                pass  # a second arguments value: ignored
            elif key == _ARGUMENTS_KEY or self._recover:
                if key != _ARGUMENTS_KEY:
                    self._note(call, "parameters-key", f'{json.dumps(key)} read as "arguments"')
                call.args_seen = True
                call.state = _ARGUMENTS
                call.scanner = JsonValueScanner(_MARKERS)
                if char == '"' and self._recover:
                    call.held_string = True
                return pos
            else:
                call.params_ignored = True
        call.state = _SKIP
        call.scanner = JsonValueScanner(_MARKERS)
        return pos

    def _value_text(self, call: _Call, text: str, pos: int) -> int:
        """Key strings, the name string and ignored values."""
        scanner = call.scanner
        assert scanner is not None
        part, rest = scanner.feed(text[pos:] if pos else text)
        state = call.state
        if state != _SKIP:
            call.string_parts.append(part)
        if not scanner.done:
            return len(text)
        end = len(text) - len(rest)
        if state == _SKIP:
            call.state = _NEXT
            return end
        try:
            value = json.loads("".join(call.string_parts))
        except ValueError:
            value = None
        if not isinstance(value, str) or (state == _NAME and not value):
            self._break(call)
            return end
        if state == _KEY_STRING:
            call.key = value
            call.state = _COLON
        else:
            self._commit(call, value)
            call.state = _NEXT
        return end

    def _arguments_text(self, call: _Call, text: str, pos: int) -> int:
        scanner = call.scanner
        assert scanner is not None
        part, rest = scanner.feed(text[pos:] if pos else text)
        if part:
            self._arguments(call, part)
        if not scanner.done:
            return len(text)
        self._arguments_complete(call)
        call.state = _NEXT
        return len(text) - len(rest)

    def _arguments(self, call: _Call, part: str) -> None:
        call.args_parts.append(part)
        if call.index >= 0 and not call.held_string:
            self._deltas.arguments(call.index, part)

    def _arguments_complete(self, call: _Call) -> None:
        call.args_done = True
        text = "".join(call.args_parts)
        if call.held_string:
            call.held_string = False
            decoded = _decode_string_arguments(text)
            if decoded is not None:
                text = decoded
                call.args_parts = [decoded]
                self._note(call, "arguments-string", "arguments given as a JSON string")
            if call.index >= 0:
                self._deltas.arguments(call.index, text)
            if decoded is not None:
                return
        if not _is_object(text):
            self._note(call, "malformed-arguments", "the arguments are not a JSON object")

    def _object_closed(self, call: _Call) -> None:
        call.state = _AFTER
        if call.index >= 0 and not call.args_seen:
            self._missing_arguments(call)

    def _missing_arguments(self, call: _Call) -> None:
        """The call object closed without an ``arguments`` key: no arguments."""
        if call.params_ignored:
            detail = 'no "arguments" key; a variant of it is ignored under strict parsing'
            self._note(call, "malformed-arguments", detail)
            return
        call.args_parts.append("{}")
        self._deltas.arguments(call.index, "{}")

    def _break(self, call: _Call) -> None:
        """The call object cannot be read any further. Before the name, its raw
        markup is kept (it becomes content, or a Python literal); after it, the
        rest of the tag is content."""
        call.state = _BROKEN
        if call.index >= 0 and not call.args_done:
            self._note(call, "malformed-arguments", "the call object breaks off")

    def _call_content(self, call: _Call, text: str, start: int) -> None:
        """Text inside a committed call's tag but outside its object: content."""
        if not text:
            return
        self._framing.add(call.frame_from, start)
        self._content.text(text, start)
        call.frame_from = start + len(text)

    def _commit(self, call: _Call, name: str) -> None:
        call.index = self._next_index()
        call.raw = []
        self._content.boundary()
        arguments = "" if call.held_string else "".join(call.args_parts)
        self._deltas.head(call.index, self._parser.new_call_id(), name, arguments)
        for event, detail in call.notes:
            self._events.append(Event(event, call.index, detail))
        call.notes = []

    def _next_index(self) -> int:
        index = self._calls
        self._calls += 1
        return index

    def _note(self, call: _Call, event: str, detail: str) -> None:
        if call.index >= 0:
            self._events.append(Event(event, call.index, detail))
        else:
            call.notes.append((event, detail))

    def _end_call(self, call: _Call, how: int, at: int) -> None:
        """The call's region ends at offset ``at`` (after its end marker, at the
        next start marker, or at the end of output)."""
        if call.index < 0:
            self._end_uncommitted(call, how, at)
            return
        state = call.state
        if state == _ARGUMENTS:
            scanner = call.scanner
            assert scanner is not None
            tail = scanner.finish()
            if how == _BY_EOF:
                if tail:
                    self._arguments(call, tail)
                if call.held_string:
                    self._deltas.arguments(call.index, "".join(call.args_parts))
                if scanner.done:
                    self._arguments_complete(call)
                else:
                    self._note(call, "truncated", "the output ended inside the arguments")
            else:
                tail = tail.rstrip(_WHITESPACE)
                if tail:
                    self._arguments(call, tail)
                if scanner.done:  # a bare scalar, complete at the marker
                    self._arguments_complete(call)
                else:
                    self._note(call, "malformed-arguments", "the arguments never close")
        elif state == _AFTER:
            if how != _BY_END:
                if self._recover:
                    self._note(call, "missing-end", "no </tool_call> after the call")
                else:
                    self._note(call, "truncated", "no </tool_call> after the call")
        elif state != _BROKEN:
            if how != _BY_END:
                self._note(call, "truncated", "the call object was cut off")
            elif state == _NEXT and not call.args_seen:
                self._missing_arguments(call)
            elif not call.args_done:
                self._note(call, "malformed-arguments", "the call object was cut off")
        if how == _BY_END:
            self._content.boundary()  # whitespace before the end marker is the call's
        self._framing.add(call.frame_from, at)

    def _end_uncommitted(self, call: _Call, how: int, at: int) -> None:
        raw = "".join(call.raw)
        if self._recover:
            literal = _python_call(raw[len(START) :])
            if literal is not None:
                name, arguments, parameters = literal
                call.args_parts = []
                call.held_string = False
                call.notes = []
                self._commit(call, name)
                self._deltas.arguments(call.index, arguments)
                self._note(call, "python-literal", "the call is a Python literal")
                if parameters:
                    self._note(call, "parameters-key", '"parameters" read as "arguments"')
                if how != _BY_END:
                    self._note(call, "missing-end", "no </tool_call> after the call")
                self._framing.add(call.start, at)
                return
        if how == _BY_END:
            raw += END
        self._content.text(raw, call.start)
        self._events.append(Event("unparsed-markup", None, "a <tool_call> with no readable name"))

    # -- failure -------------------------------------------------------------------

    def _fail(self, exc: Exception, rest: str, at: int) -> None:
        """An internal error: what is still pending, the rest of this feed (``rest``,
        from offset ``at``) and everything after it are content (best effort: the
        parser never raises)."""
        self._failed = True
        self._events.append(Event("internal-error", None, f"{type(exc).__name__}: {exc}"))
        call, bare = self._call, self._bare
        self._call = self._bare = None
        pending, start = "", at
        if call is not None and call.index < 0:
            pending, start = "".join(call.raw), call.start
        elif bare is not None:
            pending, start = "".join(bare.parts), bare.start
        elif call is not None:
            # Inside a committed call, what was read before the failing step is the call's.
            skip = max(0, min(self._progress - at, len(rest)))
            rest, at, start = rest[skip:], at + skip, at + skip
        # The pending text may already hold the beginning of ``rest``.
        overlap = max(0, min(start + len(pending) - at, len(rest)))
        self._content.text(pending + rest[overlap:] + self._scanner.held, start)


_SCANNING = frozenset({_KEY_STRING, _NAME, _ARGUMENTS, _SKIP})

# The head of a bare-json candidate: its first key, then its name if that comes first.
_BARE_HEAD_LIMIT = 512
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
    if found.group(1) != _NAME_KEY:
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


def _reject_constant(name: str) -> Any:
    msg = f"{name} is not JSON"
    raise ValueError(msg)


def _is_object(text: str) -> bool:
    """Whether ``text`` is a JSON object (strict JSON: no NaN or Infinity)."""
    try:
        return isinstance(json.loads(text, parse_constant=_reject_constant), dict)
    except (ValueError, RecursionError):
        return False


def _decode_string_arguments(text: str) -> str | None:
    """The object text inside a JSON string value, for ``arguments-string``."""
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(decoded, str):
        return None
    decoded = decoded.strip(_WHITESPACE)
    return decoded if _is_object(decoded) else None


def _python_call(body: str) -> tuple[str, str, bool] | None:
    """Read a call body written as a Python dict (``python-literal``): the name,
    the canonical JSON arguments, and whether they came under ``parameters``."""
    text = body.strip(_WHITESPACE)
    if not text.startswith("{"):
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    name = value.get(_NAME_KEY)
    if not isinstance(name, str) or not name:
        return None
    parameters = _ARGUMENTS_KEY not in value and _PARAMETERS_KEY in value
    arguments = value.get(_PARAMETERS_KEY if parameters else _ARGUMENTS_KEY, {})
    if not isinstance(arguments, dict):
        return None
    try:
        return name, json.dumps(arguments, ensure_ascii=False, allow_nan=False), parameters
    except (TypeError, ValueError, RecursionError):
        return None
