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

import enum
import json
from collections.abc import Mapping, Sequence
from typing import Any

import regex

from toolcall import WHITESPACE, CallStream, EventName, Parser
from toolcall.scanning import JsonValueScanner
from toolcall.strictness import Obligation, Plan

__all__ = ["END", "START", "ExampleTagsParser"]

START = '<call name="'
NAME_END = '">'
END = "</call>"
MAX_NAME = 256
_NOT_IN_NAMES = regex.compile(r'[<"\n\r]')


class ExampleTagsParser(Parser):
    """``<call name="NAME">{json}</call>``, any number of calls, text around them."""

    name = "example_tags"
    markers = (START, END)
    summary = 'example_tags: <call name="NAME">{json}</call>'

    def stream(self) -> TagStream:
        return TagStream(self)

    @classmethod
    def example_output(cls, content: str, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """What a model of this format writes for ``content`` and ``calls`` (the
        benchmark renders its outputs with it)."""
        rendered = (
            f"{START}{name}{NAME_END}{json.dumps(arguments, ensure_ascii=False)}{END}"
            for name, arguments in calls
        )
        return content + "".join(rendered)

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


class _State(enum.Enum):
    CONTENT = "content"
    NAME = "name"  # after <call name="
    ARGUMENTS = "arguments"  # inside the JSON value
    AFTER = "after"  # between the value and </call>


class TagStream(CallStream):
    """The incremental parse of one output (see the module docstring)."""

    def __init__(self, parser: ExampleTagsParser) -> None:
        super().__init__(parser, markers=(START, END))
        self._state = _State.CONTENT
        self._name: list[str] = []
        self._json = JsonValueScanner(hold_whitespace=True)

    def on_marker(self, marker: str, start: int) -> None:
        state = self._state
        if state is _State.ARGUMENTS and self._json.in_string:
            self.on_text(marker, start)  # a marker inside a JSON string is its text
        elif marker == START:
            self._end(start)
            self.hold(marker, start)
            self._name = []
            self._state = _State.NAME
        elif state is _State.CONTENT:
            self.event(EventName.UNPARSED_MARKUP, f"{END} outside a call")
            self.content(marker, start)
        elif state is _State.NAME:
            self._unreadable()
            self.on_marker(marker, start)
        else:  # </call> closes the call
            if state is _State.ARGUMENTS:
                self._arguments_end()
            self.settle()
            self.frame(start, start + len(marker))
            self.close_call()
            self._state = _State.CONTENT

    def on_text(self, text: str, start: int) -> None:
        state = self._state
        if state is _State.CONTENT:
            self.content(text, start)
        elif state is _State.NAME:
            self._name_text(text, start)
        elif state is _State.ARGUMENTS:
            self._arguments_text(text, start)
        elif self.ending and END.startswith(text.strip(WHITESPACE)):
            # Whitespace and the start of </call>, cut off by the end of output.
            self.hold(text, start)
        elif not text.strip(WHITESPACE):
            self.hold(text, start)  # framing if </call> follows
        else:
            # Something else follows the arguments: the call ends without </call>.
            self.settle()
            self.event(EventName.MISSING_END, "text after the arguments")
            self.close_call()
            self._state = _State.CONTENT
            self.content(text, start)

    def on_end(self) -> None:
        state = self._state
        if state is _State.NAME:
            self._unreadable()
        elif state is _State.ARGUMENTS:
            self.arguments(self._json.finish())
            if self._json.done:
                self.event(EventName.MISSING_END, "no </call> at the end of the output")
            else:
                self.event(EventName.TRUNCATED, "the output ended inside the arguments")
        elif state is _State.AFTER:
            self.settle()
            self.event(EventName.MISSING_END, "no </call> at the end of the output")

    # -- the name: from <call name=" to "> ----------------------------------------

    def _name_text(self, text: str, start: int) -> None:
        seen = sum(map(len, self._name))
        name = "".join(self._name) + text  # bounded: a longer name is not a name
        close = name.find(NAME_END, max(seen - 1, 0))
        if close < 0:
            self.hold(text, start)
            self._name.append(text)
            candidate = name[:-1] if name.endswith('"') else name  # '"' may become '">'
            if len(candidate) > MAX_NAME or _NOT_IN_NAMES.search(candidate):
                self._unreadable()
            return
        cut = close + len(NAME_END) - seen  # just after '">' in this chunk
        self.hold(text[:cut], start)
        name = name[:close]
        if not name or len(name) > MAX_NAME or _NOT_IN_NAMES.search(name):
            self._unreadable()
            self.content(text[cut:], start + cut)
            return
        self.settle()
        self.open_call(name)
        self._json = JsonValueScanner(hold_whitespace=True)
        self._state = _State.ARGUMENTS
        if cut < len(text):
            self._arguments_text(text[cut:], start + cut)

    def _unreadable(self) -> None:
        """``<call name="`` did not start a call: it and its text are content."""
        self.event(EventName.UNPARSED_MARKUP, f"{START} with no readable name", None)
        self.release()
        self._state = _State.CONTENT

    # -- the arguments --------------------------------------------------------------

    def _arguments_text(self, text: str, start: int) -> None:
        rest = self.json_arguments(self._json, text, start)
        if self._json.done:
            self.end_arguments()
            self._state = _State.AFTER
            if rest:
                self.on_text(rest, start + len(text) - len(rest))

    def _arguments_end(self) -> None:
        """``</call>`` met outside a string: the value ends here, trailing whitespace
        trimmed."""
        self.arguments(self._json.finish().rstrip(WHITESPACE))

    def _end(self, start: int) -> None:
        """A new ``<call name="`` at ``start`` ends whatever was open."""
        state = self._state
        if state is _State.NAME:
            self._unreadable()
        elif state is _State.ARGUMENTS:
            self._arguments_end()
            self.close_call()
        elif state is _State.AFTER:
            self.settle()
            self.event(EventName.MISSING_END, f"{START} before </call>")
            self.close_call()
        del start
