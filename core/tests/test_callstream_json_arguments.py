"""``CallStream.json_arguments``: a call's JSON value streamed as the model wrote it, with the
fast path inside plain strings, and what follows the value handed back."""

from __future__ import annotations

import regex

from toolcall import CallStream, Parser, ParserContext, assemble
from toolcall.scanning import JsonValueScanner

STOP = regex.compile(r'["\\<]')


class _Family(Parser):
    name = "json_arguments_probe"
    markers = ("<a>",)

    def stream(self) -> _Stream:
        return _Stream(self)


class _Stream(CallStream):
    """``<a>{json}`` opens call "f" with that value; text after it is content."""

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser, markers=("<a>",))
        self.hooks = 0
        self.scanner: JsonValueScanner | None = None

    def on_marker(self, marker: str, start: int) -> None:
        self.frame(start, start + len(marker))
        self.open_call("f")
        self.scanner = JsonValueScanner(hold_whitespace=True)

    def on_text(self, text: str, start: int) -> None:
        self.hooks += 1
        if self.scanner is None:
            self.content(text, start)
            return
        rest = self.json_arguments(self.scanner, text, start, STOP)
        if self.scanner.done:
            self.scanner = None
            self.close_call()
            self.content(rest, start + len(text) - len(rest))

    def on_end(self) -> None:
        pass


def test_the_value_streams_and_what_follows_is_content() -> None:
    stream = _Family(ParserContext()).stream()
    steps = ['Hi <a>{"k": "', "long ", "string ", "body", '"} ', "and after"]
    deltas = [delta for step in steps for delta in stream.feed(step)] + stream.finish()
    parsed = assemble(deltas, events=stream.events, framing=stream.framing)
    assert parsed.content == "Hi and after"
    calls = [(c.name, c.arguments) for c in parsed.tool_calls]
    assert calls == [("f", '{"k": "long string body"}')]
    # Inside the plain string, "long ", "string " and "body" needed no hook.
    assert isinstance(stream, _Stream)
    assert stream.hooks == len(steps) - 2
