"""A literal delimiter in a long text is looked for with ``re`` first: it finds what the
definition says (the oracle here, a brute-force reading of the literals), complete or
pending, wherever the match stands, at the end of the output or not."""

from __future__ import annotations

import random

import pytest

from toolcall_hf_response_template.patterns import Delimiter, Found

_ALPHABET = "ab<>/"


def _oracle(literals: list[str], text: str, pos: int, *, eos: bool) -> Found | None:
    """The leftmost literal from ``pos``, the longest where several start there; before
    the end of the output (``eos`` false), pending from the first place where a literal
    is cut off by the end of the text and would win with more text (it starts further
    left, or is longer than the one complete there)."""
    ordered = sorted(dict.fromkeys(literals), key=len, reverse=True)
    longest = len(ordered[0])
    for start in range(pos, len(text)):
        rest = len(text) - start
        if not eos and rest < longest:
            cut = [s for s in ordered if len(s) > rest and s.startswith(text[start:])]
            if cut:
                return Found(start, len(text), pending=True)
        whole = [s for s in ordered if text.startswith(s, start)]
        if whole:
            return Found(start, start + len(whole[0]))
    return None


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
        # a complete one, and a longer one from further left cut off by the end: pending
        (["a>/<ab", ">"], "a>"),
        (["<ab>", "b"], "<ab"),
    ],
)
def test_a_match_at_the_end_of_a_long_text(literals: list[str], end: str, *, eos: bool) -> None:
    text = "x" * 2000 + end
    assert Delimiter(literals=literals).find(text, 0, eos=eos) == _oracle(
        literals, text, 0, eos=eos
    )
