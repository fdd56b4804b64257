"""The text of a template's delimiters that, found in content, is markup that was not
read (``unparsed-markup``): a literal delimiter's literals, and the literal text a
pattern delimiter consumes (:func:`literal_pieces`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from toolcall_hf_response_template.patterns import (
    Delimiter,
    literal_starts,
    sre_constants,
    sre_parser,
)

__all__ = ["literal_pieces"]

_REPEATS: Final = (
    sre_constants.MAX_REPEAT,
    sre_constants.MIN_REPEAT,
    sre_constants.POSSESSIVE_REPEAT,
)


def literal_pieces(delimiter: Delimiter) -> tuple[str, ...]:
    """The literal texts a delimiter's matches are made of: its literals, or each run of
    literal characters its pattern consumes, wherever it stands (in an alternative, an
    optional group, a repeat; not in a look-around), in the order they appear:
    ``(?:</function>\\s*)?</tool_call>`` gives ``</function>`` and ``</tool_call>``. The
    pattern's literal starts come first (:func:`literal_starts`, which reads an optional
    group of literal text both ways): DeepSeek's opener, whose optional group holds the
    section marker, gives both marker runs whole, then the pieces they are made of."""
    if delimiter.literals is not None:
        return delimiter.literals
    try:
        parsed = sre_parser.parse(delimiter.pattern.pattern, sre_constants.SRE_FLAG_DOTALL)
    except (sre_constants.error, OverflowError, RecursionError):
        return literal_starts(delimiter)
    starts = literal_starts(delimiter)
    found: list[str] = []
    _pieces(list(parsed), found)
    # A piece inside a start that does not begin as the start does is the middle of a
    # marker (the optional group of DeepSeek's opener), not a marker of its own.
    pieces = [
        text
        for text in found
        if text and not any(text in start and not start.startswith(text[0]) for start in starts)
    ]
    return tuple(dict.fromkeys(text for text in (*starts, *pieces) if text))


def _pieces(items: Sequence[tuple[Any, Any]], found: list[str]) -> None:
    run: list[str] = []
    for op, arg in items:
        if op == sre_constants.LITERAL:
            run.append(chr(arg))
            continue
        found.append("".join(run))
        run = []
        if op == sre_constants.SUBPATTERN:
            _pieces(list(arg[3]), found)
        elif op == sre_constants.ATOMIC_GROUP:
            _pieces(list(arg), found)
        elif op == sre_constants.BRANCH:
            for branch in arg[1]:
                _pieces(list(branch), found)
        elif op in _REPEATS:
            _pieces(list(arg[2]), found)
    found.append("".join(run))
