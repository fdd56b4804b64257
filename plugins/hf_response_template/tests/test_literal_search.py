"""A literal delimiter in a long text is looked for with ``re`` first: it finds what the
``regex`` module's partial search of the alternation finds (the oracle here), complete or
pending, wherever the match stands, at the end of the output or not."""

from __future__ import annotations

import random

import pytest
import regex

from toolcall_hf_response_template.patterns import Delimiter, Found

_ALPHABET = "ab<>/"


def _oracle(literals: list[str], text: str, pos: int, *, eos: bool) -> Found | None:
    """What the alternation, longest literal first, matches from ``pos`` (``regex``'s
    partial search: a match cut off by the end of the text is pending)."""
    ordered = sorted(dict.fromkeys(literals), key=len, reverse=True)
    pattern = regex.compile("|".join(regex.escape(s) for s in ordered))
    match = pattern.search(text, pos, partial=not eos)
    if match is None:
        return None
    start, end = match.span()
    if match.partial:
        return Found(start, end, pending=True) if start < len(text) else None
    extends = any(a != b and a.startswith(b) for a in ordered for b in ordered)
    return Found(start, end, pending=not eos and extends and end == len(text))


@pytest.mark.parametrize("seed", range(4))
def test_a_long_text_is_searched_as_the_alternation_reads_it(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        literals = [
            "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 6)))
            for _ in range(rng.randint(1, 3))
        ]
        delimiter = Delimiter(literals=literals)
        for _ in range(4):
            if rng.random() < 0.3:
                text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1000, 1100)))
            else:  # the match, if any, near the end, or cut off by it
                tail = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 12)))
                text = "a" * rng.randint(1020, 1100) + tail
            pos = rng.randint(0, 60)
            for eos in (False, True):
                expected = _oracle(literals, text, pos, eos=eos)
                assert delimiter.find(text, pos, eos=eos) == expected, (literals, text[-12:])


@pytest.mark.parametrize("eos", [False, True])
@pytest.mark.parametrize(
    ("literals", "end"),
    [
        (["</a>", "</a>>"], "</a>>"),  # the longest ends the text: a longer one could not
        (["</a>", "</a>>"], "</a>"),  # a shorter one ends it: it may grow (pending)
        (["</a>", "</a>>"], "</a"),  # cut off: pending unless the text ended
        (["</a>"], "</a>x"),
    ],
)
def test_a_match_at_the_end_of_a_long_text(literals: list[str], end: str, *, eos: bool) -> None:
    text = "x" * 2000 + end
    assert Delimiter(literals=literals).find(text, 0, eos=eos) == _oracle(
        literals, text, 0, eos=eos
    )
