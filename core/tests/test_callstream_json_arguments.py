"""``CallStream.json_arguments``: a call's JSON value streamed as the model wrote it, with the
fast path inside plain strings, and what follows the value handed back."""

from __future__ import annotations

from toolcall import CallStream, Parser, ParserContext, assemble
from toolcall.scanning import JsonValueScanner


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
        rest = self.json_arguments(self.scanner, text, start)
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


def _run(steps: list[str]) -> tuple[object, int]:
    stream = _Family(ParserContext()).stream()
    deltas = [delta for step in steps for delta in stream.feed(step)] + stream.finish()
    assert isinstance(stream, _Stream)
    parsed = assemble(deltas, events=stream.events, framing=stream.framing)
    return parsed, stream.hooks


def _seen(parsed: object) -> tuple[object, ...]:
    """A parse without its call ids (fresh for each parse)."""
    calls = [(c.name, c.arguments) for c in parsed.tool_calls]  # type: ignore[attr-defined]
    return (parsed.content, calls, parsed.events, parsed.framing)  # type: ignore[attr-defined]


def test_an_escape_split_between_deltas_stays_on_the_fast_path() -> None:
    # "\" then "n": the commonest pair of tokens in code; '\"' is an escaped quote.
    steps = ['<a>{"k": "a', "\\", "n b\\", '"c', "\\\\", " d", '"} after']
    parsed, hooks = _run(steps)
    calls = [(c.name, c.arguments) for c in parsed.tool_calls]  # type: ignore[attr-defined]
    assert calls == [("f", '{"k": "a\\n b\\"c\\\\ d"}')]
    assert parsed.content == "after"  # type: ignore[attr-defined]
    # Only the first delta (the marker) and the last (the closing quote) need a hook.
    assert hooks == 2


def test_a_delimiter_after_a_backslash_still_stops_the_fast_path() -> None:
    # The marker's first character is found escaped or not: here it starts a marker.
    _, hooks = _run(['<a>{"k": "a', "\\<a", '>"}'])
    assert hooks == 3


def test_streamed_as_characters_or_at_once_the_parse_is_the_same() -> None:
    outputs = [
        '<a>{"k": "x\\\\\\"y\\n"} tail',
        '<a>{"k": "ends in a backslash\\',
        '<a>{"k": "\\u00e9\\\\", "j": "\\<a>"} z',
        "no call \\ here",
    ]
    for output in outputs:
        whole, _ = _run([output])
        for size in (1, 2, 3):
            pieces = [output[i : i + size] for i in range(0, len(output), size)]
            parsed, _ = _run(pieces)
            assert _seen(parsed) == _seen(whole), (output, size)
