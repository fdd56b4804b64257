"""What a stream hands back: deltas, framing spans and content under the gate.

Three small accumulators the Hermes stream writes to while it scans, so that the
state machine in :mod:`toolcall_hermes.parser` only decides *what* each piece of
the output is.
"""

from __future__ import annotations

from toolcall.scanning import ContentGate
from toolcall.types import Delta, Span, ToolCallDelta

__all__ = ["Content", "Deltas", "Framing"]

_WHITESPACE = " \t\r\n"


class _Entry:
    """One call's entry in the delta being built (mutable while it is built)."""

    __slots__ = ("arguments", "call_id", "index", "name")

    def __init__(self, index: int, call_id: str | None, name: str | None, arguments: str) -> None:
        self.index = index
        self.call_id = call_id
        self.name = name
        self.arguments = arguments


class Deltas:
    """Collects one feed's output as deltas.

    Content and call pieces are kept in output order: content that follows a
    call piece starts a new delta, and pieces of one call that arrive together
    are merged into one entry (the contract allows one entry per index per delta).
    """

    def __init__(self) -> None:
        self._ready: list[Delta] = []
        self._content: list[str] = []
        self._calls: list[_Entry] = []

    def content(self, text: str) -> None:
        if self._calls:
            self._close()
        self._content.append(text)

    def head(self, index: int, call_id: str, name: str, arguments: str) -> None:
        self._calls.append(_Entry(index, call_id, name, arguments))

    def arguments(self, index: int, text: str) -> None:
        calls = self._calls
        if calls and calls[-1].index == index:
            calls[-1].arguments += text
        else:
            calls.append(_Entry(index, None, None, text))

    def take(self) -> list[Delta]:
        if self._content or self._calls:
            self._close()
        ready, self._ready = self._ready, []
        return ready

    def _close(self) -> None:
        entries = tuple(
            ToolCallDelta(entry.index, entry.call_id, entry.name, entry.arguments)
            for entry in self._calls
        )
        self._ready.append(Delta("".join(self._content), entries))
        self._content = []
        self._calls = []


class Framing:
    """The spans of the output read as markup; adjacent spans are merged."""

    def __init__(self) -> None:
        self._spans: list[list[int]] = []

    def add(self, start: int, end: int) -> None:
        if end <= start:
            return
        spans = self._spans
        if spans and spans[-1][1] == start:
            spans[-1][1] = end
        else:
            spans.append([start, end])

    def spans(self) -> tuple[Span, ...]:
        merged: list[list[int]] = []
        for start, end in sorted(self._spans):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        return tuple(Span(start, end) for start, end in merged)


class Content:
    """Content text through the core's :class:`ContentGate`, with positions.

    The gate decides which whitespace is framing; this wrapper knows where each
    piece came from, so that what the gate drops is recorded as framing.
    """

    def __init__(self, deltas: Deltas, framing: Framing) -> None:
        self._gate = ContentGate()
        self._deltas = deltas
        self._framing = framing
        self._held: list[list[int]] = []  # spans the gate holds back

    def text(self, text: str, start: int) -> None:
        if not text:
            return
        released = self._gate.text(text)
        end = start + len(text)
        if not released:
            self._hold(start, end)
            return
        kept_end = start + len(text.rstrip(_WHITESPACE))
        # The gate released a suffix of (held + text[:kept]): the rest was dropped.
        dropped = sum(e - s for s, e in self._held) + (kept_end - start) - len(released)
        for span in self._held:
            if dropped <= 0:
                break
            cut = min(span[1], span[0] + dropped)
            self._framing.add(span[0], cut)
            dropped -= cut - span[0]
        if dropped > 0:
            self._framing.add(start, start + dropped)
        self._held = []
        if kept_end < end:
            self._held.append([kept_end, end])
        self._deltas.content(released)

    def boundary(self) -> None:
        """A call starts: held whitespace was framing."""
        self._gate.boundary()
        self._drop()

    def finish(self) -> None:
        self._gate.finish()
        self._drop()

    def _hold(self, start: int, end: int) -> None:
        if self._held and self._held[-1][1] == start:
            self._held[-1][1] = end
        else:
            self._held.append([start, end])

    def _drop(self) -> None:
        for start, end in self._held:
            self._framing.add(start, end)
        self._held = []
