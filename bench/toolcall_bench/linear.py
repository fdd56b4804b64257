"""Linear cost on every input shape (DESIGN §4.7): µs per byte from 64 kB to 8 MB.

    python -m toolcall_bench.linear [--smoke] [--parser NAME ...] [--no-readme]

(``nox -s linear`` runs it.) For every installed parser (one name per parser class
and format) and each shape below, an output of each size is fed to the core
stream (``stream().feed`` in deltas of :data:`DELTA` characters, then ``finish``)
and timed in CPU time, every timed run parsing at least :data:`SAMPLE` bytes (a
smaller output several times over, in fresh streams); the table gives µs per byte at
each size and the growth, µs per byte at the largest size over the smallest. A parse
that costs linear time has growth near 1; the target is ≤ 1.2 on every row.

Shapes, each rendered in the parser's own format by the benchmark's renderer
(``example_output`` on the parser class, see :mod:`toolcall_bench.outputs`):

* ``arguments``: one call whose string argument is real source code;
* ``content``: prose and no call;
* ``whitespace``: a whitespace run between two words of content;
* ``partial markers``: content made of the starts of the format's markers (or of
  its unmarked call starts), each left unfinished;
* ``deep nesting``: one call whose argument is a list nested as deep as the size
  allows (``[[[...]]]``);
* ``many calls``: as many small calls as fit;
* ``cut calls``: a line break and the start of a call cut inside its name
  (``\n[write_``, ``\n<tool_call>\n{"name": "write_``), over and over: no call completes;
* ``line braces``: ``\n{`` over and over (a JSON call that never starts);
* ``newlines before a call``: a run of line breaks, then one call;
* ``argument whitespace``: one call whose arguments hold a whitespace run after a value.

Each shape is measured twice: streamed (``stream``) and parsed whole (``one-shot``,
``Parser.parse``), since the two take different paths through a family's reader.

Tables go into ``bench/README.md`` only from a quiet machine: a run whose load
average exceeds the CPU count prints its table and says to rerun.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolcall.parser import Parser, ParserContext
from toolcall.registry import Registry
from toolcall.types import Request, Vocabulary
from toolcall_bench.outputs import (
    CONTENT,
    REQUEST,
    TOOL_NAME,
    Render,
    kept_content,
    metadata_for,
    renderers_of,
)

__all__ = [
    "MODES",
    "SHAPES",
    "context_for",
    "distinct_parsers",
    "main",
    "measure_row",
    "shape_output",
    "unmeasured",
]

#: Characters per delta: about two tokens of prose.
DELTA = 8
FULL_SIZES = (64_000, 512_000, 2_000_000, 8_000_000)
SMOKE_SIZES = (4_000, 16_000)
#: Bytes a timed run parses at the least (capped at the largest size): a smaller output
#: is parsed several times over in one run.
SAMPLE = 512_000
SHAPES = (
    "arguments",
    "content",
    "whitespace",
    "partial markers",
    "deep nesting",
    "many calls",
    "cut calls",
    "line braces",
    "newlines before a call",
    "argument whitespace",
)
MODES = ("stream", "one-shot")
README = Path(__file__).resolve().parents[1] / "README.md"
BEGIN, END = "<!-- linear-cost table: begin -->", "<!-- linear-cost table: end -->"

_PLACEHOLDER = "@@nested@@"
_PROSE = (
    "The parser reads what the model writes, one delta at a time; nothing it holds "
    "back may grow with the output. "
)


def context_for(parser_class: type[Parser]) -> ParserContext:
    """The context every shape is parsed in: the benchmark's request, and the tokenizer
    metadata the parser needs (:func:`~toolcall_bench.outputs.metadata_for`)."""
    vocabulary = Vocabulary(metadata=metadata_for(parser_class))
    return ParserContext(request=Request.from_openai(REQUEST), vocabulary=vocabulary)


def shape_output(shape: str, render: Render, parser_class: type[Parser], size: int) -> str:
    """An output of about ``size`` characters of ``shape`` in the parser's format."""
    if shape == "arguments":
        filler = (_PROSE * (size // len(_PROSE) + 1))[:size]
        return render(CONTENT, [(TOOL_NAME, {"path": "notes.txt", "content": filler})])
    if shape == "content":
        return (_PROSE * (size // len(_PROSE) + 1))[:size]
    if shape == "whitespace":
        return "Yes" + (" \n\t" * (size // 3)) + "done."
    if shape == "partial markers":
        parser = parser_class(context_for(parser_class))  # hf's markers come from its template
        starts = [m[: max(1, len(m) - 1)] for m in (*parser.markers, *parser.unmarked_starts)]
        unit = " ".join(starts or ["<"]) + " "
        return (unit * (size // len(unit) + 1))[:size]
    if shape == "deep nesting":
        text = render(CONTENT, [(TOOL_NAME, {"path": "deep.json", "content": _PLACEHOLDER})])
        depth = max(1, (size - len(text)) // 2)
        nested = "[" * depth + "]" * depth
        quoted = json.dumps(_PLACEHOLDER)
        for written in (quoted, f"'{_PLACEHOLDER}'", _PLACEHOLDER):
            if written in text:
                return text.replace(written, nested, 1)
        msg = f"the renderer of {parser_class.name!r} does not write the argument value"
        raise ValueError(msg)
    if shape == "cut calls":
        written = render("", [(TOOL_NAME, {"path": "a.txt", "content": "x"})])
        unit = "\n" + written[: written.index(TOOL_NAME) + len(TOOL_NAME) // 2]
        return "Start." + unit * (size // len(unit) + 1)
    if shape == "line braces":
        return "Start." + "\n{" * (size // 2)
    if shape == "newlines before a call":
        one = [(TOOL_NAME, {"path": "a.txt", "content": "x"})]
        call = render("", one)
        # A format whose calls stand alone (xLAM) has no content before them: the run of
        # line breaks opens the message.
        head = kept_content(render)
        return head + "\n" * max(1, size - len(call) - len(head)) + call
    if shape == "argument whitespace":
        text = render(CONTENT, [(TOOL_NAME, {"path": "a.txt", "content": _PLACEHOLDER})])
        run = " \n\t" * max(1, (size - len(text)) // 3)
        for written in (json.dumps(_PLACEHOLDER), f"'{_PLACEHOLDER}'"):
            if written in text:
                return text.replace(written, written.replace(_PLACEHOLDER, "x") + run, 1)
        # A format whose values are raw text: the run is inside the value.
        return text.replace(_PLACEHOLDER, "x" + run, 1)
    if shape == "many calls":
        call = (TOOL_NAME, {"path": "a.txt", "content": "x"})
        # What one more call costs (a format may wrap all calls once, as olmo3 does).
        one = len(render("", [call, call])) - len(render("", [call]))
        count = max(1, size // max(1, one))
        calls = [(TOOL_NAME, {"path": f"{i}.txt", "content": "x"}) for i in range(count)]
        return render(CONTENT, calls)
    msg = f"unknown shape {shape!r}"
    raise ValueError(msg)


@dataclass(frozen=True)
class Row:
    parser: str
    shape: str
    sizes: tuple[int, ...]
    us_per_byte: tuple[float, ...]
    mode: str = "stream"

    @property
    def growth(self) -> float:
        return self.us_per_byte[-1] / self.us_per_byte[0] if self.us_per_byte[0] else 0.0


def measure_row(
    name: str,
    parser_class: type[Parser],
    shape: str,
    sizes: Sequence[int],
    render: Render,
    *,
    mode: str = "stream",
) -> Row:
    context = context_for(parser_class)
    costs = []
    for size in sizes:
        text = shape_output(shape, render, parser_class, size)
        # Deltas are cut as they are fed, as a server hands them over one at a time: a list
        # of a million of them, made first, would put the memory they take in the timing.
        cuts = range(0, len(text), DELTA)
        # Every timed run parses about as many bytes at every size (one output after
        # another, each in a fresh stream): the best of three 30 ms runs is luckier on a
        # shared machine than the best of three 0.3 s runs, and compared with them it
        # showed a growth the parse does not have (issue 16).
        streams = -(-min(SAMPLE, max(sizes)) // len(text))
        best = float("inf")
        for _ in range(3 if size <= 512_000 else 2):
            parsers = [parser_class(context) for _ in range(streams)]
            fresh = [parser.stream() for parser in parsers] if mode == "stream" else []
            # As timeit does: a cyclic collection of the bench's own garbage is no cost of
            # the parse, and it lands in one run or another at random.
            gc.collect()
            gc.disable()
            try:
                started = time.process_time()
                if mode == "stream":
                    for stream in fresh:
                        feed = stream.feed
                        for cut in cuts:
                            feed(text[cut : cut + DELTA])
                        stream.finish()
                else:
                    for parser in parsers:
                        parser.parse(text)
                best = min(best, time.process_time() - started)
            finally:
                gc.enable()
        costs.append(best * 1e6 / (streams * len(text.encode("utf-8"))))
    return Row(name, shape, tuple(sizes), tuple(costs), mode)


def unmeasured(parser_class: type[Parser]) -> str | None:
    """Why ``parser_class`` cannot be measured here, if it cannot: it refuses tools with
    the benchmark's vocabulary (``auto`` derives its format from a model's chat template,
    and then is the hf engine, measured on its own row)."""
    return parser_class.tools_refused(context_for(parser_class).vocabulary)


def distinct_parsers(registry: Registry, only: Sequence[str] = ()) -> dict[str, type[Parser]]:
    """One name per parser class and corpus: an alias costs what its class costs. A
    parser that cannot be measured (:func:`unmeasured`) is left out."""
    chosen: dict[tuple[str, object], str] = {}
    for name in registry.names():
        if only and name not in only:
            continue
        parser_class = registry.get(name)
        if unmeasured(parser_class) is not None:
            continue
        chosen.setdefault((parser_class.corpus or parser_class.name, parser_class.stream), name)
    return {name: registry.get(name) for name in sorted(chosen.values())}


def table(rows: Sequence[Row]) -> str:
    sizes = rows[0].sizes
    head = ["parser", "shape", "mode", *(_size(s) for s in sizes), "growth"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        costs = [f"{c:.3f}" for c in row.us_per_byte]
        cells = [row.parser, row.shape, row.mode, *costs, f"{row.growth:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _size(size: int) -> str:
    return f"{size / 1_000_000:g} MB" if size >= 1_000_000 else f"{size // 1000} kB"


def load_is_quiet() -> tuple[bool, float, int]:
    """Whether the 1-minute load average is at most the CPU count (and both)."""
    load = os.getloadavg()[0]
    cpus = os.cpu_count() or 1
    return load <= cpus, load, cpus


def write_readme(text: str, path: Path = README) -> None:
    current = path.read_text(encoding="utf-8")
    start, end = current.find(BEGIN), current.find(END)
    if start < 0 or end < 0:
        msg = f"{path} has no {BEGIN} ... {END} block"
        raise ValueError(msg)
    path.write_text(current[: start + len(BEGIN)] + "\n" + text + "\n" + current[end:], "utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolcall_bench.linear", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, no README")
    parser.add_argument("-p", "--parser", action="append", default=[], help="only this parser")
    parser.add_argument("--no-readme", action="store_true", help="leave bench/README.md alone")
    parser.add_argument("-s", "--shape", action="append", default=[], help="only this shape")
    parser.add_argument("--mode", action="append", default=[], choices=MODES, help="only this")
    args = parser.parse_args(argv)
    sizes = SMOKE_SIZES if args.smoke else FULL_SIZES
    quiet_before, load_before, cpus = load_is_quiet()
    registry = Registry.load()
    rows: list[Row] = []
    for name in registry.names():
        if (not args.parser or name in args.parser) and (why := unmeasured(registry.get(name))):
            print(f"not measured: {name}: {why}", file=sys.stderr)
    for name, parser_class in distinct_parsers(registry, args.parser).items():
        for label, render, _ in renderers_of(name, parser_class):
            for shape in args.shape or SHAPES:
                # The smoke run streams only: CI parses every shape one-shot in its tests.
                for mode in args.mode or (MODES[:1] if args.smoke else MODES):
                    row = measure_row(label, parser_class, shape, sizes, render, mode=mode)
                    rows.append(row)
                    print(
                        f"{label:>16} {shape:>22} {mode:>8}: growth {row.growth:.2f}",
                        file=sys.stderr,
                    )
    quiet_after, load_after, _ = load_is_quiet()
    command = os.environ.get("TOOLCALL_BENCH_COMMAND", "python -m toolcall_bench.linear")
    stamp = time.strftime("%Y-%m-%d")
    text = (
        f"Made by `{command}` on {stamp}: µs of CPU per byte, deltas of {DELTA} characters, "
        f"load average {load_before:.2f} before and {load_after:.2f} after on {cpus} CPUs.\n\n"
        + table(rows)
    )
    print(text)
    worst = max(rows, key=lambda row: row.growth)
    print(
        f"\nworst growth: {worst.parser} / {worst.shape} / {worst.mode}: {worst.growth:.2f} "
        "(target ≤ 1.2)"
    )
    if args.smoke or args.no_readme or args.shape or args.mode or args.parser:
        return 0
    if not (quiet_before and quiet_after):
        print(
            f"not written to {README}: the load average ({load_before:.2f}, {load_after:.2f}) "
            f"exceeded the CPU count ({cpus}); rerun on a quiet machine",
            file=sys.stderr,
        )
        return 0
    write_readme(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
