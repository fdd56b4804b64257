"""The Mistral tool-call formats, parsed as a stream.

Every generation of Mistral's tokenizer starts a call with the control token
``[TOOL_CALLS]``; what follows it says which form the call takes::

    v11+ (tekken)     [TOOL_CALLS]NAME[ARGS]{json}[TOOL_CALLS]NAME[ARGS]{json}
    with an id        [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{json}
    fallback          [TOOL_CALLS]NAME{json}
    before v11        [TOOL_CALLS] [{"name": NAME, "arguments": {json}, "id": ID}, ...]
    one object        [TOOL_CALLS] {"name": NAME, "arguments": {json}}
    reasoning         [THINK]...[/THINK] before any of the above (Magistral)

The form is read from the text after ``[TOOL_CALLS]``, never from the tokenizer's
version: ``[`` opens a call list, ``{`` a single call object, anything else a name.
vLLM 0.33's Mistral detokenizer releases text for ``[TOOL_CALLS]``, ``[ARGS]``,
``[THINK]`` and ``[/THINK]`` only: a v11 ``[CALL_ID]`` arrives as nothing, so the
parser sees ``NAMEID[ARGS]``. Where that text is a declared tool's name followed by
exactly nine letters and digits, it is that name and the model's id (DESIGN §6); a
``[CALL_ID]`` written as text (a Hugging Face tokenizer that keeps it) is read too.

What the stream emits, and when (the family's part of DESIGN §6):

* content outside calls through the core's content gate, as soon as it cannot be
  the start of a marker;
* v11: the call, with its id and name, at ``[ARGS]`` (or the ``{`` of the
  fallback); the model's own argument text as it arrives; the call ends where its
  JSON value ends, and text after it is content;
* before v11: each call of the list whole, when its object closes (Mistral writes
  the ``"id"`` last, and the first delta must carry it); the arguments are the
  model's own text of the ``"arguments"`` value;
* a model-written id is kept when it has Mistral's shape (nine letters and digits);
  otherwise the call gets a fresh one and the written id is an ``ignored-member``;
* ``[THINK]...[/THINK]`` is reasoning (only seen without vLLM's ``--reasoning-parser
  mistral``, which takes it out first); ``[TOOL_CALLS]`` ends an unclosed one.

Framing: the markers, whitespace around a name or an id, whitespace between
``[TOOL_CALLS]`` and its list or object (the pre-v11 templates write
``[TOOL_CALLS] [``), the list's brackets and commas, whitespace between calls, and a
``[TOOL_CALLS]`` repeated with nothing but whitespace after it.

Defects: a ``[TOOL_CALLS]`` whose body is no call (nothing after it, no name, a
name with a space or one of ``[]{}()<>"',;`` in it, a list element that is no call
object) is content, verbatim with its markup (event ``unparsed-markup``), and so is
a stray ``[ARGS]``, ``[CALL_ID]`` or ``[/THINK]``. A call whose arguments are not a
JSON object keeps them as written (``malformed-arguments``); one cut off by the end
of output keeps what was written (``truncated``). Named recoveries (switched off by
``TOOLCALL_STRICT_PARSING=1``): ``python-literal`` (an object whose first key is in
single quotes, read as a Python literal), ``parameters-key``, ``arguments-string``,
``missing-end`` (a list without its closing ``]``); the recovered call or arguments
are emitted whole.
"""

from __future__ import annotations

import ast
import enum
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import regex

from toolcall import WHITESPACE, CallStream, EventName, Parser
from toolcall.scanning import JsonValueScanner, json_object_problem, name_problem
from toolcall.strictness import Plan
from toolcall_mistral.grammar import structural_tag

__all__ = [
    "ARGS",
    "CALL_ID",
    "END_THINK",
    "MARKERS",
    "THINK",
    "TOOL_CALLS",
    "MistralParser",
    "MistralStream",
]

TOOL_CALLS = "[TOOL_CALLS]"
ARGS = "[ARGS]"
CALL_ID = "[CALL_ID]"
THINK = "[THINK]"
END_THINK = "[/THINK]"
MARKERS = (TOOL_CALLS, ARGS, CALL_ID, THINK, END_THINK)

#: The longest name (and, separately, id) read before the text is judged no name.
MAX_NAME = 256
MAX_ID = 64
#: Mistral's tool-call id: what mistral-common and Mistral's chat templates accept.
ID_SHAPE = regex.compile(r"[A-Za-z0-9]{9}")
#: A name (or id) so far: optional whitespace, then no whitespace or punctuation
#: inside, then only whitespace.
_NAME_SO_FAR = regex.compile(r"[ \t\r\n]*[^ \t\r\n\[\]{}()<>\"',;]*[ \t\r\n]*")
_NOT_WHITESPACE = regex.compile(r"[^ \t\r\n]")
#: Content needs the hooks only where a marker may start.
_MARKER_START = regex.compile(r"\[")


class MistralParser(Parser):
    """``[TOOL_CALLS]`` calls of every Mistral generation (see the module)."""

    name: ClassVar[str] = "mistral"
    markers: ClassVar[tuple[str, ...]] = MARKERS
    id_style = "mistral"
    summary: ClassVar[str] = (
        "Mistral, Mixtral, Ministral, Codestral, Devstral, Magistral: "
        "[TOOL_CALLS]NAME[ARGS]{json} and [TOOL_CALLS] [{json}, ...]"
    )

    def stream(self) -> MistralStream:
        return MistralStream(self)

    def structural_tag(self, plan: Plan) -> dict[str, Any] | None:
        return structural_tag(plan, self.context.vocabulary)


class _State(enum.Enum):
    CONTENT = "content"
    REASONING = "reasoning"  # after [THINK]
    BODY = "body"  # after [TOOL_CALLS], only whitespace so far
    NAME = "name"  # v11: the name, up to [ARGS], [CALL_ID] or "{"
    ID = "id"  # v11: after [CALL_ID], up to [ARGS] or "{"
    VALUE = "value"  # v11: [ARGS] read, the value not started (or not decided)
    ARGUMENTS = "arguments"  # v11: inside the JSON value, streamed
    HELD = "held"  # v11: inside a value held for a recovery
    LIST = "list"  # before v11: between the elements of the call list
    ELEMENT = "element"  # before v11: inside a list element, or the single object


class _Expect(enum.Enum):
    """What a pre-v11 list expects between its elements."""

    FIRST = "first"  # after "[": an element or "]"
    NEXT = "next"  # after ",": an element or "]"
    AFTER = "after"  # after an element: "," or "]"


@dataclass
class _Reading:
    """What a complete (or cut off) call object says."""

    name: str | None = None
    arguments: str = ""
    call_id: str | None = None
    events: list[tuple[str, str]] = field(default_factory=list)
    unreadable: str = ""  # why the name is no name, when there is no call


class MistralStream(CallStream):
    """The incremental parse of one Mistral output (see the module)."""

    def __init__(self, parser: MistralParser) -> None:
        super().__init__(parser, markers=MARKERS)
        self._state = _State.CONTENT
        self._name: list[str] = []  # the name (or id) text so far, a copy of held text
        self._call_name = ""
        self._notes: list[tuple[str, str]] = []  # events of the call about to open
        self._json = JsonValueScanner(hold_whitespace=True)
        self._literal: _LiteralScanner | None = None
        self._held_kind = ""  # "literal" or "string", for _State.HELD
        self._held_value: list[str] = []
        # the pre-v11 call list
        self._in_list = False
        self._expect = _Expect.FIRST
        self._list_calls = 0  # calls committed from this list (or single object)
        self._last_element = False  # the last element was a complete call
        self._element: list[str] = []  # a copy of the element's text the hooks saw
        self._element_literal = False
        #: A marker in the element's text (read inside a string) was recorded as markup.
        self._element_markup = False
        self._decided = False
        self._extent: JsonValueScanner | _LiteralScanner | None = None  # the element's extent
        self._object: _Object | None = None  # its members, when it is a JSON object
        self.fast_content(_MARKER_START)

    # -- the hooks ----------------------------------------------------------------

    def on_marker(self, marker: str, start: int) -> None:
        state = self._state
        if self._in_string():
            self.on_text(marker, start)  # a marker inside a string is its text
        elif marker == TOOL_CALLS:
            if state is _State.BODY:
                self.settle()  # a repeated [TOOL_CALLS]: framing
                self._state = _State.CONTENT
            else:
                self._end(cut=True)
            self.hold(marker, start)
            self._state = _State.BODY
            self.slow()
        elif state is _State.REASONING:
            if marker == END_THINK:
                self.frame(start, start + len(marker))
                self._state = _State.CONTENT
                self.fast_content(_MARKER_START)
            elif marker == THINK:
                self.frame(start, start + len(marker))  # repeated: absorbed, as vLLM does
            else:
                self.reasoning(marker, start)
        elif marker == ARGS and state in (_State.NAME, _State.ID):
            self._header_end(start, marker)
        elif marker == CALL_ID and state is _State.NAME:
            self._name_end_at_call_id(start)
        else:
            self._end(cut=True)
            if marker == THINK:
                self.frame(start, start + len(marker))
                self._state = _State.REASONING
                self.slow()
            else:
                self.event(EventName.UNPARSED_MARKUP, f"{marker} outside a call", None)
                self.content(marker, start)

    def on_text(self, text: str, start: int) -> None:
        state = self._state
        if state is _State.CONTENT:
            self.content(text, start)
        elif state is _State.REASONING:
            self.reasoning(text, start)
        elif state is _State.BODY:
            self._body_text(text, start)
        elif state in (_State.NAME, _State.ID):
            self._header_text(text, start)
        elif state is _State.VALUE:
            self._value_text(text, start)
        elif state is _State.ARGUMENTS:
            self._arguments_text(text, start)
        elif state is _State.HELD:
            self._held_text(text, start)
        elif state is _State.LIST or self._in_list:
            self._list_text(text, start)
        else:
            self._element_text(text, start)

    def on_end(self) -> None:
        self._end(cut=False)

    def _in_string(self) -> bool:
        state = self._state
        if state is _State.ARGUMENTS:
            return self._json.in_string
        if state is _State.HELD:
            scanner = self._literal if self._held_kind == "literal" else self._json
            return scanner is not None and scanner.in_string
        if state is _State.ELEMENT:
            reader = self._object
            if reader is not None and self._decided and not reader.broken:
                return reader.in_string
            return self._extent is not None and self._extent.in_string
        return False

    def _end(self, *, cut: bool) -> None:
        """Whatever is open ends here: at a marker that does not continue it
        (``cut``), or at the end of the output."""
        state = self._state
        if state is _State.BODY:
            self._not_a_call("[TOOL_CALLS] with nothing after it")
        elif state is _State.NAME:
            self._not_a_call("[TOOL_CALLS] with a name but no [ARGS]")
        elif state is _State.ID:
            call_id = self._id_text()
            self.settle()
            self._open(self._call_name, call_id)
            self._arguments_missing(cut)
        elif state is _State.VALUE:
            written = self.held.strip(WHITESPACE)
            self.settle()
            self.arguments(written)
            self._arguments_missing(cut)
        elif state is _State.ARGUMENTS:
            tail = self._json.finish()
            self.arguments(tail.rstrip(WHITESPACE) if cut else tail)
            if not cut and not self._json.done:
                self.event(EventName.TRUNCATED, "the output ended inside the arguments")
            self.close_call()
        elif state is _State.HELD:
            self._held_end(cut)
        elif state is _State.ELEMENT:
            self._element_end(complete=False, cut=cut)
            self._list_end(closed=False)
        elif state is _State.LIST:
            self._list_end(closed=False)
        if state not in (_State.CONTENT, _State.REASONING):
            self._state = _State.CONTENT
            self.fast_content(_MARKER_START)

    def _not_a_call(self, detail: str) -> None:
        """The body of a ``[TOOL_CALLS]`` is no call: it is content, verbatim."""
        self.event(EventName.UNPARSED_MARKUP, detail, None)
        self.release()
        self._state = _State.CONTENT
        self.fast_content(_MARKER_START)

    # -- after [TOOL_CALLS]: which form ------------------------------------------------

    def _body_text(self, text: str, start: int) -> None:
        first = _NOT_WHITESPACE.search(text)
        if first is None:
            self.hold(text, start)
            return
        cut = first.start()
        self.hold(text[:cut], start)
        char = text[cut]
        rest, at = text[cut:], start + cut
        if char == "[":
            self.hold(char, at)
            self._in_list = True
            self._expect = _Expect.FIRST
            self._list_calls = 0
            self._state = _State.LIST
            self._list_text(rest[1:], at + 1)
        elif char == "{":
            self._in_list = False
            self._list_calls = 0
            self._element_begin(rest)
            self._element_text(rest, at)
        else:
            self._name = []
            self._state = _State.NAME
            self._header_text(rest, at)

    # -- v11: NAME [CALL_ID] ID [ARGS] ---------------------------------------------------

    def _header_text(self, text: str, start: int) -> None:
        """Name (or id) text: held until [ARGS], [CALL_ID] or "{" completes it."""
        brace = text.find("{")
        part = text if brace < 0 else text[:brace]
        seen = "".join(self._name) + part
        if self._state is _State.NAME:
            if _NAME_SO_FAR.fullmatch(seen) is None or len(seen.strip(WHITESPACE)) > MAX_NAME:
                self._not_a_call("[TOOL_CALLS] with no readable name")
                self.content(text, start)
                return
        elif len(seen) > MAX_ID:
            self._id_overrun(text, start)
            return
        self.hold(part, start)
        self._name.append(part)
        if brace >= 0:
            self._header_end(start + brace, "{")
            if self._state is _State.VALUE:
                self._value_text(text[brace:], start + brace)
            else:
                self.content(text[brace:], start + brace)

    def _id_overrun(self, text: str, start: int) -> None:
        """More text after [CALL_ID] than an id: the call (committed at [CALL_ID]) has no
        arguments, and the text from here on is content."""
        room = MAX_ID - sum(map(len, self._name))
        self.hold(text[:room], start)
        self._name.append(text[:room])
        call_id = self._id_text()
        self.settle()
        self._open(self._call_name, call_id)
        self.event(EventName.MALFORMED_ARGUMENTS, "no [ARGS] after [CALL_ID] and an id")
        self.close_call()
        self._state = _State.CONTENT
        self.fast_content(_MARKER_START)
        self.content(text[room:], start + room)

    def _name_end_at_call_id(self, start: int) -> None:
        name = "".join(self._name).strip(WHITESPACE)
        if not name:
            self._not_a_call("[TOOL_CALLS] with no name before [CALL_ID]")
            self.event(EventName.UNPARSED_MARKUP, f"{CALL_ID} outside a call", None)
            self.content(CALL_ID, start)
            return
        self._call_name = name
        self.hold(CALL_ID, start)
        self.settle()  # the name is complete: the header so far is framing
        self._name = []
        self._state = _State.ID

    def _header_end(self, start: int, marker: str) -> None:
        """``[ARGS]`` (or the ``{`` of the fallback) completes the name or the id."""
        written = "".join(self._name).strip(WHITESPACE)
        if self._state is _State.NAME:
            if not written:
                self._not_a_call(f"[TOOL_CALLS] with no name before {marker}")
                if marker == ARGS:
                    self.event(EventName.UNPARSED_MARKUP, f"{ARGS} outside a call", None)
                    self.content(marker, start)
                return
            name, call_id = self._split_id(written)
        else:
            name, call_id = self._call_name, self._id_text()
        if marker == ARGS:
            self.hold(marker, start)
        self.settle()
        self._open(name, call_id)
        self._json = JsonValueScanner(hold_whitespace=True)
        self._state = _State.VALUE

    def _id_text(self) -> str | None:
        """The id written after ``[CALL_ID]``: kept if it has Mistral's shape."""
        written = "".join(self._name).strip(WHITESPACE)
        if ID_SHAPE.fullmatch(written):
            return written
        self._notes.append((EventName.IGNORED_MEMBER, f"[CALL_ID] {written!r} is not a Mistral id"))
        return None

    def _split_id(self, written: str) -> tuple[str, str | None]:
        """``NAMEID`` as vLLM's detokenizer hands it over (``[CALL_ID]`` releases no
        text): a declared tool's name and nine letters and digits (DESIGN §6)."""
        if self.request.tool(written) is not None or len(written) <= 9:
            return written, None
        name, call_id = written[:-9], written[-9:]
        if self.request.tool(name) is not None and ID_SHAPE.fullmatch(call_id):
            return name, call_id
        return written, None

    def _open(self, name: str, call_id: str | None) -> None:
        self.open_call(name, call_id=call_id)
        for event, detail in self._notes:
            self.event(event, detail)
        self._notes.clear()

    def _arguments_missing(self, cut: bool) -> None:
        if not cut:
            self.event(EventName.TRUNCATED, "the output ended before the arguments")
        self.close_call()

    # -- v11: the arguments -----------------------------------------------------------

    def _value_text(self, text: str, start: int) -> None:
        """The start of the value: decides whether it streams or is held."""
        prior = self.held
        buffer = prior + text
        origin = start - len(prior)
        first = _NOT_WHITESPACE.search(buffer)
        if first is None:
            self.hold(text, start)
            return
        char = buffer[first.start()]
        kind = ""
        if self.recover and char == '"':
            kind = "string"
        elif self.recover and char == "{":
            second = _NOT_WHITESPACE.search(buffer, first.start() + 1)
            if second is None:
                self.hold(text, start)
                return
            if buffer[second.start()] == "'":
                kind = "literal"
        self.settle()
        if kind:
            self._state = _State.HELD
            self._held_kind = kind
            self._held_value = []
            self._literal = _LiteralScanner() if kind == "literal" else None
            self._json = JsonValueScanner()
            self._held_text(buffer[first.start() :], origin + first.start())
        else:
            self._state = _State.ARGUMENTS
            self._arguments_text(buffer, origin)

    def _arguments_text(self, text: str, start: int) -> None:
        rest = self.json_arguments(self._json, text, start)
        if self._json.done:
            self.close_call()  # the call ends with its value; what follows is content
            self._state = _State.CONTENT
            self.fast_content(_MARKER_START)
            if rest:
                self.content(rest, start + len(text) - len(rest))

    def _held_text(self, text: str, start: int) -> None:
        scanner = self._literal if self._literal is not None else self._json
        part, rest = scanner.feed(text)
        self.hold(part, start)
        self._held_value.append(part)
        if scanner.done:
            self._held_end(cut=False, done=True)
            if rest:
                self.content(rest, start + len(text) - len(rest))

    def _held_end(self, cut: bool, *, done: bool = False) -> None:
        """A held value ends: recovered if it reads, else its text as written."""
        raw = "".join(self._held_value)
        self.settle()
        recovered = None
        if done and self._held_kind == "literal":
            value = _python_literal(raw)
            if isinstance(value, dict):
                recovered = _dumps(value)
                if recovered is not None:
                    self.event(EventName.PYTHON_LITERAL, "the arguments are a Python literal")
        elif done:
            recovered = _string_arguments(raw)
            if recovered is not None:
                self.event(EventName.ARGUMENTS_STRING, "the arguments are a JSON string")
        self.arguments(recovered if recovered is not None else raw.rstrip(WHITESPACE))
        if not done and not cut:
            self.event(EventName.TRUNCATED, "the output ended inside the arguments")
        self.close_call()
        self._literal = None
        self._state = _State.CONTENT
        self.fast_content(_MARKER_START)

    # -- before v11: the call list ----------------------------------------------------

    def _list_text(self, text: str, start: int) -> None:
        """Text of a call list: separators and elements, in a loop (a list may hold
        thousands of calls in one piece of text)."""
        pos = 0
        size = len(text)
        while pos < size:
            if self._state is _State.ELEMENT:
                pos += self._element_text(text[pos:], start + pos)
                continue
            found = _NOT_WHITESPACE.search(text, pos)
            if found is None:
                self._separator(text[pos:], start + pos)
                return
            if found.start() > pos:
                self._separator(text[pos : found.start()], start + pos)
            pos = found.start()
            char = text[pos]
            if char == "]":
                self._separator(char, start + pos)
                self._list_end(closed=True)
                self._state = _State.CONTENT
                self.fast_content(_MARKER_START)
                self.content(text[pos + 1 :], start + pos + 1)
                return
            if char == ",":  # an empty element before it is tolerated silently
                self._separator(char, start + pos)
                self._expect = _Expect.NEXT
                pos += 1
                continue
            if self._expect is _Expect.AFTER:
                # Neither "," nor "]" after an element: the list ended without its "]".
                self._list_end(closed=False)
                self._state = _State.CONTENT
                self.fast_content(_MARKER_START)
                self.content(text[pos:], start + pos)
                return
            self._element_begin(text[pos:])

    def _separator(self, text: str, start: int) -> None:
        """Brackets, commas and whitespace of the list: framing once the list has a
        call; until then they are held with the rest of the list."""
        if self._list_calls:
            self.frame(start, start + len(text))
        else:
            self.hold(text, start)

    def _element_begin(self, text: str) -> None:
        """An element starts with ``text``; its text is fed next."""
        self._state = _State.ELEMENT
        self._element = []
        self._element_literal = False
        self._element_markup = False
        self._decided = False  # whether the first key's quote is known
        self._extent = None
        self._object = _Object(recover=self.recover) if text.startswith("{") else None

    def _element_text(self, text: str, start: int) -> int:
        """Text of an element; returns how much of ``text`` it took (all of it, unless
        the element ends in a list). A JSON object is read by its reader alone, which
        knows where it closes; an element it cannot read (no object, a Python literal,
        an object that broke off) is scanned for its extent."""
        if not self._decided and not self._decide(text, start):
            return len(text)
        reader = self._object
        taken = 0
        if reader is not None and not reader.broken:
            for piece, at, kind in reader.feed(text, start):
                self._object_piece(reader, piece, at, kind)
                taken = at + len(piece) - start
            if reader.state == "closed":
                return self._element_complete(text, taken, start)
            if reader.state != "broken":
                self._element.append(text)
                self._element_fast_path(reader)
                return len(text)
            if not self._broken_extent(text[:taken]):
                self._element_part("", start + taken)  # what the break recorded
                return self._element_complete(text, taken, start)
        extent = self._extent
        assert extent is not None
        part, rest = extent.feed(text[taken:] if taken else text)
        self._element_part(part, start + taken)
        if not extent.done:
            self.slow()
            return len(text)
        return self._element_complete(text, len(text) - len(rest), start)

    def _broken_extent(self, text: str) -> bool:
        """The object broke off after ``text``: the rest of the element runs to where its
        brackets balance, counted from the element's start (a value the reader read as
        a scalar may hold brackets and quotes). Returns ``False`` if they balanced
        before the break: the element ends there."""
        seen = "".join(self._element) + text
        self._element = []
        extent = self._extent = JsonValueScanner()
        extent.feed(seen)
        return not extent.done

    def _decide(self, text: str, start: int) -> bool:
        """Whether the element is a Python literal is decided by its first key's quote:
        until that shows, its text is held. Returns whether it is decided."""
        seen = "".join(self._element) + text
        decided = self._object is None or not self.recover
        if not decided:
            second = _NOT_WHITESPACE.search(seen, 1)
            decided = second is not None
            self._element_literal = second is not None and seen[second.start()] == "'"
        if not decided:
            self.hold(text, start)
            self._element.append(text)
            return False
        self._decided = True
        held = "".join(self._element)  # "{" and whitespace, already held
        if self._element_literal:
            self._object = None  # a Python literal is read whole, when it closes
            self._extent = _LiteralScanner()
        elif self._object is None:
            self._extent = JsonValueScanner()
        if held:
            if self._object is not None:
                for _ in self._object.feed(held, start - len(held)):
                    pass
            elif self._extent is not None:
                self._extent.feed(held)
        return True

    def _element_complete(self, text: str, end: int, start: int) -> int:
        """The element ended at offset ``end`` of ``text``: the list goes on after it,
        or the single object's output is content from there."""
        self._element_end(complete=True, cut=False)
        if self._in_list:
            self._state = _State.LIST
            self._expect = _Expect.AFTER
            return end
        self._list_end(closed=True)
        self._state = _State.CONTENT
        self.fast_content(_MARKER_START)
        self.content(text[end:], start + end)
        return len(text)

    def _element_fast_path(self, reader: _Object) -> None:
        """Inside a committed call's argument string that the scan reads as plain text,
        a delta without a stop is argument text: it would leave the scan where it stands."""
        if (
            reader.committed
            and not reader.held_string
            and reader.state == "value"
            and reader.kind == "arguments"
            and reader.scanner.plain_string
            and self.arguments_open
        ):
            self.fast_string()
        else:
            self.slow()

    def _element_part(self, part: str, start: int) -> None:
        """Element text found by the extent scan: a broken object's rest, or held."""
        reader = self._object
        if reader is None:
            if not self._element_literal:
                # Not an object: never a call, so what the list held so far is not the
                # framing of one either (the element's end would release it all the same).
                self._release_element()
                self._element_content(part, start)
                return
            self.hold(part, start)
            self._element.append(part)
            return
        self._object_piece(reader, part, start, "broken")

    def _object_piece(self, reader: _Object, piece: str, at: int, kind: str) -> None:
        """One piece of a call object: structure, a member's value, or broken text."""
        committed = reader.committed
        if kind == "name" and not committed:
            self.hold(piece, at)
            if reader.name is not None:
                self._commit(reader)
            return
        if not committed or kind == "key":
            # Before the name all is held; after it, a member's key is held until its
            # value starts (framing then), and is content if the call ends first.
            self.hold(piece, at)
            return
        if kind == "broken":
            self.end_arguments()
            self._release_element()
            self._element_content(piece, at)
        else:
            self.settle()
            self.frame(at, at + len(piece))
            if kind == "arguments" and not reader.held_string:
                self.arguments(piece, reader.scanner.value)
        if kind in ("arguments", "string") and reader.arguments_done and reader.held_string:
            reader.held_string = False
            self._string_done(reader)
        for event, detail in reader.take_events():
            self.event(event, detail)

    def _commit(self, reader: _Object) -> None:
        """The name string closed: the call is committed (DESIGN §6)."""
        self.settle()
        self._list_calls += 1
        reader.committed = True
        arguments = "" if reader.held_string else reader.arguments_text
        self.open_call(reader.name or "", arguments, call_id=reader.call_id)
        for event, detail in reader.take_events():
            self.event(event, detail)
        if reader.arguments_done and reader.held_string:
            reader.held_string = False
            self._string_done(reader)

    def _string_done(self, reader: _Object) -> None:
        """``arguments-string``: a JSON string value that holds the object's text."""
        raw = reader.arguments_text
        decoded = _string_arguments(raw)
        if decoded is not None:
            self.event(EventName.ARGUMENTS_STRING, "the arguments are a JSON string")
        self.arguments(decoded if decoded is not None else raw)

    def _element_end(self, *, complete: bool, cut: bool) -> None:
        """A list element (or the single object) ends: a call, or content."""
        reader, self._object = self._object, None
        extent, self._extent = self._extent, None
        if reader is not None and reader.committed:
            if not reader.arguments_seen and complete and not reader.broken:
                self.arguments("{}")
            elif reader.held_string:
                self.arguments(reader.arguments_text)
            cut_value = not complete and reader.state == "value"
            # (a repeated key is blanked: it was recorded when its value started)
            if cut_value and reader.kind in ("skip", "id") and reader.key:
                detail = f"{reader.key!r} ignored, its value cut off"
                self.event(EventName.IGNORED_MEMBER, detail)
            if not complete and not cut:
                self.event(EventName.TRUNCATED, "the call object was cut off")
            self._release_element()  # the key of a member the call ended in
            self._last_element = complete
            self.close_call()
            return
        unreadable = reader.unreadable if reader is not None else ""
        if self._element_literal and complete:
            reading = _read_literal_call("".join(self._element))
            unreadable = reading.unreadable
            if reading.name is not None:
                self.settle()
                self._list_calls += 1
                self.open_call(reading.name, reading.arguments, call_id=reading.call_id)
                for event, detail in reading.events:
                    self.event(event, detail)
                self._last_element = True
                self.close_call()
                return
        if isinstance(extent, JsonValueScanner) and not complete:
            extent.finish()
        self._last_element = False
        if not self._list_calls:
            detail = unreadable or "[TOOL_CALLS] with no call object"
            self.event(EventName.UNPARSED_MARKUP, detail, None)
            self.release()
        else:
            if unreadable:  # an element that names no readable name is markup in content
                self.event(EventName.UNPARSED_MARKUP, unreadable, None)
            self._release_element()

    def _element_content(self, text: str, start: int) -> None:
        """Text of an element that is not a call (or of the rest of one that broke off):
        content, where a marker read as a string's text is unparsed markup."""
        self._markup_in(text)
        self.content(text, start)

    def _release_element(self) -> None:
        """The held text of an element that is not a call is content (see above)."""
        if self.holding:
            self._markup_in(self.held)
        self.release()

    def _markup_in(self, text: str) -> None:
        if self._element_markup:
            return
        marker = next((marker for marker in MARKERS if marker in text), None)
        if marker is not None:
            self._element_markup = True
            detail = f"{marker} inside a list element that is not a call"
            self.event(EventName.UNPARSED_MARKUP, detail, None)

    def _list_end(self, *, closed: bool) -> None:
        """The list (or single object) ends: at its "]" (``closed``), or elsewhere."""
        was_list, self._in_list = self._in_list, False
        if not self._list_calls:
            if self.holding:
                self.event(EventName.UNPARSED_MARKUP, "[TOOL_CALLS] with no call object", None)
            self.release()
            return
        self.settle()
        if was_list and not closed and self._last_element:
            name = EventName.MISSING_END if self.recover else EventName.TRUNCATED
            self.event(name, "the call list has no closing ]", self.calls - 1)


# -- reading a call object ---------------------------------------------------------------


def _read_literal_call(text: str) -> _Reading:
    """``python-literal``: the call object written as a Python dict."""
    value = _python_literal(text)
    if not isinstance(value, dict):
        return _Reading()
    name = value.get("name")
    if not isinstance(name, str) or name_problem(name) is not None:
        return _Reading(unreadable=name_problem(name) or "")
    reading = _Reading(name=name)
    reading.events.append((EventName.PYTHON_LITERAL, "the call object is a Python literal"))
    key = "arguments"
    if "arguments" not in value and "parameters" in value:
        key = "parameters"
        reading.events.append((EventName.PARAMETERS_KEY, '"parameters" read as "arguments"'))
    arguments = value.get(key, {})
    dumped = _dumps(arguments)
    reading.arguments = dumped if dumped is not None else repr(arguments)
    written = value.get("id")
    if isinstance(written, str) and ID_SHAPE.fullmatch(written):
        reading.call_id = written
    elif "id" in value:
        reading.events.append((EventName.IGNORED_MEMBER, f"'id' {written!r} is not a Mistral id"))
    for other in value:
        if other not in ("name", "arguments", "parameters", "id") or (
            other == "parameters" and key == "arguments"
        ):
            reading.events.append((EventName.IGNORED_MEMBER, f"{other!r} ignored"))
    return reading


class _Object:
    """The members of one JSON call object, read as its text streams: ``name``,
    ``arguments`` (or ``parameters``), Mistral's ``id``; any other member is ignored.

    :meth:`feed` yields the object's text in pieces ``(text, offset, kind)``, each after
    its effect on the reading: ``"name"`` (the name string; :attr:`name` is set once it
    closes), ``"arguments"`` (the arguments value, the model's own text) and
    ``"structure"`` (keys, punctuation, whitespace, other values). It stops at the
    object's ``}`` and where the object stops being readable (:attr:`broken`): the
    text from there is the caller's.
    """

    def __init__(self, *, recover: bool) -> None:
        self.recover = recover
        self.state = "open"
        self.key = ""
        self.kind = ""  # what the value being read is: name, arguments, id, skip
        self.scanner = JsonValueScanner()
        self.parts: list[str] = []  # the key or value being read (not the arguments)
        self.name: str | None = None
        self.call_id: str | None = None
        self.committed = False
        self.broken = False
        self.arguments_seen = False
        self.arguments_done = False
        self.held_string = False
        self.unreadable = ""  # why the name string that closed is no name
        self._arguments: list[str] = []
        self._events: list[tuple[str, str]] = []

    @property
    def arguments_text(self) -> str:
        return "".join(self._arguments)

    @property
    def in_string(self) -> bool:
        """Whether the reader stands inside a string (where markers are text)."""
        return self.state in ("key_string", "value") and self.scanner.in_string

    def take_events(self) -> list[tuple[str, str]]:
        events, self._events = self._events, []
        return events

    def feed(self, text: str, start: int) -> Iterator[tuple[str, int, str]]:
        pos, size = 0, len(text)
        while pos < size:
            state = self.state
            if state in {"broken", "closed"}:
                return  # the element's own scan goes on from here
            if state in ("key_string", "value"):
                part, rest = self.scanner.feed(text[pos:])
                end = size - len(rest)
                kind = "key" if state == "key_string" else "structure"
                if state == "value" and self.kind in ("name", "arguments"):
                    kind = self.kind
                if self.kind == "arguments" and state == "value":
                    self._arguments.append(part)
                else:
                    self.parts.append(part)
                if self.scanner.done:
                    self._complete()
                yield text[pos:end], start + pos, kind
                pos = end
                continue
            # A member's key, up to its value, is "key" text: its fate waits on the value.
            between = "key" if state in _KEY_STATES else "structure"
            found = _NOT_WHITESPACE.search(text, pos)
            if found is None:
                yield text[pos:], start + pos, between
                return
            at = found.start()
            if at > pos:
                yield text[pos:at], start + pos, between
            pos = at
            char = text[pos]
            if state == "value_start":
                self._value_start(char)
                continue
            expected = {"open": "{", "key": '"}', "colon": ":", "next": ",}"}[state]
            if char not in expected:
                self._break("the call object breaks off")
                continue
            if state == "open":
                self.state = "key"
            elif state == "key" and char == '"':
                self.state, self.scanner, self.parts = "key_string", JsonValueScanner(), []
                continue
            elif state == "colon":
                self.state = "value_start"
            elif char == ",":
                self.state = "key"
            else:
                self.state = "closed"
            yield char, start + pos, between
            pos += 1

    def _value_start(self, char: str) -> None:
        key = self.key
        self.state, self.scanner, self.parts = "value", JsonValueScanner(), []
        if key == "name" and self.name is None:
            self.kind = "name"
        elif key in ("arguments", "parameters") and not self.arguments_seen:
            if key == "parameters" and not self.recover:
                self.kind = "skip"
                return
            if key == "parameters":
                self._events.append((EventName.PARAMETERS_KEY, '"parameters" read as "arguments"'))
            self.kind = "arguments"
            self.arguments_seen = True
            self.held_string = char == '"' and self.recover
        elif key in ("name", "arguments", "parameters", "id") and (
            key != "id" or self.call_id is not None
        ):
            self.kind = "skip"
            self._events.append((EventName.DUPLICATE_KEY, f"{key!r} given again: ignored"))
            self.key = ""
        else:
            self.kind = "id" if key == "id" else "skip"

    def _complete(self) -> None:
        """The key or value being read is complete."""
        text = "".join(self.parts)
        if self.state == "key_string":
            key = _json_string(text)
            if key is None:
                self._break("a key that is not a string")
                return
            self.key, self.state = key, "colon"
            return
        self.state = "next"
        kind = self.kind
        if kind == "name":
            name = _json_string(text)
            problem = name_problem(name)
            if name is not None and problem is None:
                self.name = name
            else:
                self.unreadable = problem or ""
                self._break(self.unreadable)
        elif kind == "arguments":
            self.arguments_done = True
        elif kind == "id":
            written = _json_string(text)
            if written is not None and ID_SHAPE.fullmatch(written) and not self.committed:
                self.call_id = written
            else:
                why = "after the name" if self.committed else "not a Mistral id"
                self._events.append((EventName.IGNORED_MEMBER, f'"id" {text.strip()}: {why}'))
        elif self.key:
            self._events.append((EventName.IGNORED_MEMBER, f"{self.key!r} ignored"))

    def _break(self, detail: str) -> None:
        self.state = "broken"
        self.broken = True
        if self.committed and not self.arguments_done:
            self._events.append((EventName.MALFORMED_ARGUMENTS, detail))


#: The reader's states from a member's key to its value.
_KEY_STATES = frozenset({"key_string", "colon", "value_start"})


def _json_string(text: str) -> str | None:
    stripped = text.strip(WHITESPACE)
    if not stripped.startswith('"'):
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, str) else None


def _string_arguments(text: str) -> str | None:
    """``arguments-string``: the object text inside a JSON string value."""
    decoded = _json_string(text)
    if decoded is None:
        return None
    decoded = decoded.strip(WHITESPACE)
    return decoded if json_object_problem(decoded) is None else None


def _python_literal(text: str) -> object:
    try:
        return ast.literal_eval(text.strip(WHITESPACE))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _dumps(value: object) -> str | None:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None


_FIRST_KEY = regex.compile(r"\{[ \t\r\n]*'")


def _single_quoted_first_key(text: str) -> bool:
    """Whether an object's text starts with a key in single quotes (Python)."""
    return _FIRST_KEY.match(text.lstrip(WHITESPACE)) is not None


class _LiteralScanner:
    """The extent of a Python literal container (``{...}``): strings in either quote
    with backslash escapes, brackets of every kind as depth. The protocol of
    :class:`~toolcall.scanning.JsonValueScanner`'s ``feed``: ``(part, rest)``."""

    _SCAN: ClassVar[regex.Pattern[str]] = regex.compile(r"[\[\]{}()\"']")
    _IN: ClassVar[dict[str, regex.Pattern[str]]] = {
        "'": regex.compile(r"[\\']"),
        '"': regex.compile(r'[\\"]'),
    }

    def __init__(self) -> None:
        self.depth = 0
        self.quote = ""
        self.escape = False
        self.done = False

    @property
    def in_string(self) -> bool:
        return bool(self.quote)

    def feed(self, text: str) -> tuple[str, str]:
        if self.done:
            return "", text
        pos = 0
        size = len(text)
        while pos < size:
            if self.escape:
                self.escape = False
                pos += 1
            elif self.quote:
                match = self._IN[self.quote].search(text, pos)
                if match is None:
                    return text, ""
                pos = match.end()
                if match.group() == "\\":
                    self.escape = True
                else:
                    self.quote = ""
            else:
                match = self._SCAN.search(text, pos)
                if match is None:
                    return text, ""
                char = match.group()
                pos = match.end()
                if char in "\"'":
                    self.quote = char
                elif char in "[{(":
                    self.depth += 1
                else:
                    self.depth -= 1
                    if self.depth <= 0:
                        self.done = True
                        return text[:pos], text[pos:]
        return text, ""
