"""The ``example_tags`` format: ``<call name="NAME">{json arguments}</call>``.

A small format of its own, written the way a third party would write a parser on
``toolcall-core``::

    Let me look.<call name="get_weather">{"city": "Paris"}</call>

What the stream emits, and when (DESIGN §6 asks every family to say so):

* content as soon as it cannot be the start of ``<call name="`` (whitespace around
  calls is framing, see :class:`toolcall.scanning.ContentGate`);
* the call, with its id and name, when ``">`` closes the name: the call is committed;
* the arguments as the model writes them (its own JSON text, never re-serialised);
* ``</call>`` closes the call. Text between the arguments and ``</call>`` is framing.

Defects: a name that is empty, longer than 256 characters, or holds ``<``, ``"`` or a
line break is not a call: ``<call name="`` and what follows are content, verbatim
(event ``unparsed-markup``), and so is a ``</call>`` outside a call. Arguments that are
not a JSON object give ``malformed-arguments``; a JSON value that never closes runs to
``</call>``. At the end of output, a call whose arguments are complete but whose
``</call>`` is missing is kept (recovery ``missing-end``); one cut off inside its
arguments keeps what was emitted (event ``truncated``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from toolcall import Delta, Event, Parser, Span, Stream, ToolCallDelta
from toolcall.scanning import ContentGate, JsonValueScanner, Marker, Markers, MarkerScanner
from toolcall.strictness import Obligation, Plan

__all__ = ["END", "START", "ExampleTagsParser"]

START = '<call name="'
NAME_END = '">'
END = "</call>"
MAX_NAME = 256
_WHITESPACE = " \t\r\n"


class ExampleTagsParser(Parser):
    """``<call name="NAME">{json}</call>``, any number of calls, text around them."""

    name = "example_tags"
    markers = (START, END)
    summary = 'example format: <call name="NAME">{json}</call>'

    def stream(self) -> Stream:
        return _TagStream(self)

    def structural_tag(self, plan: Plan) -> dict[str, Any] | None:
        if not plan.grammar or not plan.tools:
            return None
        tags = [
            {
                "type": "tag",
                "begin": f"{START}{tool_plan.tool.name}{NAME_END}",
                "content": {
                    "type": "json_schema",
                    "json_schema": dict(tool_plan.tool.parameters or {"type": "object"})
                    if tool_plan.pinned
                    else {"type": "object"},
                },
                "end": END,
            }
            for tool_plan in plan.tools
        ]
        return {
            "type": "structural_tag",
            "format": {
                "type": "triggered_tags",
                "triggers": [START],
                "tags": tags,
                "at_least_one": plan.obligation is not Obligation.OPTIONAL,
                "stop_after_first": plan.at_most_one,
            },
        }


class _Out:
    """The deltas of one ``feed``: content and argument pieces, merged where possible."""

    def __init__(self) -> None:
        self.deltas: list[Delta] = []

    def content(self, text: str) -> None:
        if text:
            self.deltas.append(Delta(content=text))

    def call(self, entry: ToolCallDelta) -> None:
        last = self.deltas[-1] if self.deltas else None
        if (
            entry.id is None
            and last is not None
            and not last.content
            and last.tool_calls[-1].index == entry.index
        ):
            previous = last.tool_calls[-1]
            merged = ToolCallDelta(
                previous.index, previous.id, previous.name, previous.arguments + entry.arguments
            )
            self.deltas[-1] = Delta(tool_calls=(*last.tool_calls[:-1], merged))
            return
        self.deltas.append(Delta(tool_calls=(entry,)))


class _TagStream:
    """The incremental parse. States: content, name (after ``<call name="``),
    arguments (inside the JSON value), after (between the value and ``</call>``)."""

    def __init__(self, parser: ExampleTagsParser) -> None:
        self._parser = parser
        self._calls_allowed = parser.request.tool_choice != "none"
        self._markers = Markers([START, END])
        self._end = Markers([END])
        self._scanner = MarkerScanner(self._markers)
        self._scanner_base = 0
        self._gate = ContentGate()
        self._state = "content"
        self._fed = 0  # characters of output fed so far
        self._buffer = ""  # the name so far, or the text after the arguments
        self._call_start = 0
        self._calls = 0
        self._json: JsonValueScanner | None = None
        self._arguments: list[str] = []
        self._events: list[Event] = []
        self._framing: list[Span] = []

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    @property
    def framing(self) -> tuple[Span, ...]:
        return tuple(self._framing)

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        del token_ids  # the format is read from text alone
        self._fed += len(text)
        out = _Out()
        self._process(text, out)
        return out.deltas

    def finish(self) -> list[Delta]:
        out = _Out()
        while self._state == "name":
            self._process(self._unreadable(out), out)
        if self._state == "content":
            for piece in self._scanner.finish():
                out.content(self._gate.text(piece.text))
        elif self._state == "arguments":
            assert self._json is not None
            self._argument(self._json.finish(), out)
            if self._json.done:
                self._close_call(self._fed, recovery="missing-end")
            else:
                self._events.append(Event("truncated", self._calls - 1))
                self._framing.append(Span(self._call_start, self._fed))
        else:
            # Only a prefix of the end marker (or nothing) follows the arguments.
            self._close_call(self._fed, recovery="missing-end")
        self._gate.finish()
        return out.deltas

    # -- states ------------------------------------------------------------------------

    def _process(self, text: str, out: _Out) -> None:
        while text:
            if self._state == "content":
                text = self._content(text, out)
            elif self._state == "name":
                text = self._name(text, out)
            elif self._state == "arguments":
                text = self._in_arguments(text, out)
            else:
                text = self._after(text, out)

    def _content(self, text: str, out: _Out) -> str:
        segments = self._scanner.feed(text)
        for number, segment in enumerate(segments):
            if isinstance(segment, Marker) and segment.marker == START and self._calls_allowed:
                rest = "".join(
                    s.marker if isinstance(s, Marker) else s.text for s in segments[number + 1 :]
                )
                rest += "".join(piece.text for piece in self._scanner.finish())
                self._call_start = self._scanner_base + segment.start
                self._state = "name"
                self._buffer = ""
                return rest
            if isinstance(segment, Marker):
                # An end marker with no call open, or any marker under tool_choice
                # "none": content, verbatim.
                self._events.append(Event("unparsed-markup", detail=segment.marker))
                out.content(self._gate.text(segment.marker))
            else:
                out.content(self._gate.text(segment.text))
        return ""

    def _name(self, text: str, out: _Out) -> str:
        searched = max(len(self._buffer) - 1, 0)
        self._buffer += text
        close = self._buffer.find(NAME_END, searched)
        if close < 0:
            # A trailing '"' may still be the start of '">'.
            name = self._buffer[:-1] if self._buffer.endswith('"') else self._buffer
            if _readable(name, partial=True):
                return ""
            return self._unreadable(out)
        name = self._buffer[:close]
        if not _readable(name, partial=False):
            return self._unreadable(out)
        rest = self._buffer[close + len(NAME_END) :]
        self._buffer = ""
        self._gate.boundary()  # a call: the whitespace before it was framing
        index = self._calls
        self._calls += 1
        out.call(ToolCallDelta(index, id=self._parser.new_call_id(), name=name))
        self._state = "arguments"
        self._json = JsonValueScanner(stop=self._end)
        self._arguments = []
        return rest

    def _unreadable(self, out: _Out) -> str:
        """``<call name="`` did not start a call: it is content, and the text after it
        is read again as content."""
        self._events.append(Event("unparsed-markup", detail=START))
        out.content(self._gate.text(START))
        rest, self._buffer = self._buffer, ""
        self._state = "content"
        self._scanner = MarkerScanner(self._markers)
        self._scanner_base = self._fed - len(rest)
        return rest

    def _in_arguments(self, text: str, out: _Out) -> str:
        assert self._json is not None
        part, rest = self._json.feed(text)
        self._argument(part, out)
        if not self._json.done:
            return ""
        self._state = "after"
        self._buffer = ""
        return rest

    def _argument(self, part: str, out: _Out) -> None:
        if part:
            self._arguments.append(part)
            out.call(ToolCallDelta(self._calls - 1, arguments=part))

    def _after(self, text: str, out: _Out) -> str:
        del out
        # Only whitespace may stand between the arguments and </call>; the buffer keeps
        # what follows that whitespace.
        self._buffer = (self._buffer + text).lstrip(_WHITESPACE)
        if not self._buffer or (END.startswith(self._buffer) and self._buffer != END):
            return ""
        start = self._fed - len(self._buffer)
        if self._buffer.startswith(END):
            rest = self._buffer[len(END) :]
            self._close_call(start + len(END))
            return rest
        # Something else follows the arguments: the call ends without its end marker,
        # and that text is content.
        rest = self._buffer
        self._close_call(start, recovery="missing-end")
        return rest

    def _close_call(self, end: int, recovery: str | None = None) -> None:
        # Nothing is left to emit: the arguments streamed as they came.
        index = self._calls - 1
        if recovery is not None:
            self._events.append(Event(recovery, index))
        text = "".join(self._arguments)
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            self._events.append(Event("malformed-arguments", index))
        self._framing.append(Span(self._call_start, end))
        self._state = "content"
        self._buffer = ""
        self._json = None
        self._scanner = MarkerScanner(self._markers)
        self._scanner_base = end


def _readable(name: str, *, partial: bool) -> bool:
    """Whether ``name`` is (or, ``partial``, may still become) a call's name."""
    if len(name) > MAX_NAME or any(char in name for char in '<"\n\r'):
        return False
    return partial or bool(name)
