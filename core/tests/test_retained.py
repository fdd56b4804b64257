"""What a stream keeps of a long output: about one byte per byte, however small the deltas
(issue 16). A str object and a list slot per 8-character delta cost ~65 bytes; kept until
a call closes, they fault in fresh memory for every byte parsed.

The bounds are structural: :class:`~toolcall.scanning.TextParts` keeps at most one chunk
per :data:`~toolcall.scanning.JOIN_EVERY` parts plus the parts since the last join, and a
stream's traced memory (tracemalloc: allocations, not time) stays under the text once
plus a fixed allowance for those unjoined parts."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator

import pytest
from json_probe import JsonProbe

from toolcall import ParserContext, assemble
from toolcall.scanning import JOIN_EVERY, TextParts

DELTA = 8
#: Characters streamed: large enough that a per-delta cost (~65 bytes per 8) dwarfs the
#: allowance below, small enough to trace in a second.
SIZE = 256_000
#: What the parts since the last join may take, and the stream's fixed state: JOIN_EVERY
#: parts of a str object (~57 bytes) and a list slot each, with room to spare.
ALLOWANCE = JOIN_EVERY * 128


def test_text_parts_join_every_so_many_parts_and_keep_the_text() -> None:
    parts = TextParts("head")
    pieces = [f"{i:07d}," for i in range(10 * JOIN_EVERY + 3)]
    for count, piece in enumerate(pieces, 1):
        parts.append(piece)
        assert len(parts.parts) <= (count + 1) // JOIN_EVERY + JOIN_EVERY
    assert len(parts.parts) < 2 * JOIN_EVERY
    assert "".join(parts.parts) == "head" + "".join(pieces)
    assert parts.text() == "head" + "".join(pieces)
    assert len(parts.parts) == 1


def test_text_parts_never_join_a_chunk_again() -> None:
    # Joining the text so far at every join would copy it over and over (quadratic time):
    # a chunk, once made, is the same object until text() is asked for.
    parts = TextParts()
    for _ in range(JOIN_EVERY):
        parts.append("x")
    first = parts.parts[0]
    assert first == "x" * JOIN_EVERY
    for _ in range(3 * JOIN_EVERY):
        parts.append("y")
    assert parts.parts[0] is first
    assert parts.parts[1:] == ["y" * JOIN_EVERY] * 3
    whole = parts.text()
    for _ in range(JOIN_EVERY):
        parts.append("z")
    assert parts.parts[0] is whole
    assert parts.text() == "x" * JOIN_EVERY + "y" * (3 * JOIN_EVERY) + "z" * JOIN_EVERY


def test_text_parts_clear_and_empty() -> None:
    parts = TextParts("")
    assert parts.parts == []
    assert parts.text() == ""
    parts.append("a")
    parts.clear()
    assert parts.text() == ""


def _deltas(text: str) -> Iterator[str]:
    return (text[cut : cut + DELTA] for cut in range(0, len(text), DELTA))


#: (what comes before the long part, the long part, what ends it): the long part is fed
#: in deltas and what the stream holds is traced while it is open.
SHAPES = {
    # argument text of an open call, on the fast path inside a string
    "string argument": ('<a>{"k": "', "abcdefg " * (SIZE // 8), '"} done'),
    # argument text of an open call, each delta through the hooks
    "deep nesting": ('<a>{"k": ', "[" * SIZE, "]" * SIZE + "} done"),
    # whitespace the content gate holds until text follows it
    "content whitespace": ("Yes", " \n\t" * (SIZE // 3), "done"),
    # whitespace the JSON value scanner holds until something follows it
    "argument whitespace": ('<a>{"k": 1', " \n\t" * (SIZE // 3), "} done"),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_a_long_output_is_kept_in_about_a_byte_per_byte(shape: str) -> None:
    head, body, _ = SHAPES[shape]
    stream = JsonProbe(ParserContext()).stream()
    stream.feed(head)
    tracemalloc.start()
    try:
        for delta in _deltas(body):
            stream.feed(delta)  # what it releases is let go, as a server sends it on
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= len(body) + ALLOWANCE, f"{peak / len(body):.2f} bytes per byte"


@pytest.mark.parametrize("shape", SHAPES)
def test_a_long_output_kept_in_chunks_is_the_same_text(shape: str) -> None:
    head, body, tail = SHAPES[shape]
    stream = JsonProbe(ParserContext()).stream()
    out = [delta for text in (head, *_deltas(body + tail)) for delta in stream.feed(text)]
    out += stream.finish()
    parsed = assemble(out, events=stream.events, framing=stream.framing)
    if head.startswith("<a>"):
        value = head[3:] + body + tail[: tail.index("}") + 1]
        assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("f", value)]
        assert parsed.content == "done"
    else:
        assert parsed.content == head + body + tail
