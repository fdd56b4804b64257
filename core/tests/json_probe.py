"""A minimal family for core's tests: ``<a>{json}`` is a call to ``f`` whose arguments
are that JSON value, read by a :class:`~toolcall.scanning.JsonValueScanner` that holds
whitespace; other text is content. ``hooks`` counts the calls to ``on_text`` (a delta on
the fast path makes none)."""

from __future__ import annotations

from toolcall import CallStream, Parser
from toolcall.scanning import JsonValueScanner

__all__ = ["JsonProbe", "JsonProbeStream"]


class JsonProbe(Parser):
    name = "json_probe"
    markers = ("<a>",)

    def stream(self) -> JsonProbeStream:
        return JsonProbeStream(self)


class JsonProbeStream(CallStream):
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
