"""Seeded random splits of a case's output, for the ``splits(NAME)`` sessions.

:func:`random_splits` cuts a case's output ``count`` ways, each seeded by the case id and
the split's number, so that a failing split can be named and replayed. Three kinds, in
turn:

* the case's real tokens, 1 to 8 per step (an engine with speculative decoding or a
  stream interval releases several at once), with an empty step now and then (vLLM sends
  one while a multi-byte character is incomplete);
* cuts anywhere in the text, 2 to 24 characters apart, inside markers and multi-byte
  characters' tokens too;
* pieces of 1 to 3 characters.

:func:`every_split` cuts a short output every way with up to two cuts, and one character
per step: a test of a few outputs that must hold however they are split.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolcall_conformance.cases import Case

__all__ = ["every_split", "random_splits"]


def random_splits(case: Case, count: int) -> list[list[str]]:
    """``count`` splits of ``case``'s output text (each adds up to it)."""
    tokens = [step.text for step in case.steps]
    text = case.text
    out: list[list[str]] = []
    for number in range(count):
        rng = random.Random(f"{case.id}#split{number}")
        kind = number % 10
        if kind < 5:
            out.append(_token_groups(tokens, rng))
        elif kind < 8:
            out.append(_pieces(text, rng, rng.randint(2, 24)))
        else:
            out.append(_pieces(text, rng, 3))
    return out


def _token_groups(tokens: Sequence[str], rng: random.Random) -> list[str]:
    steps: list[str] = []
    at = 0
    while at < len(tokens):
        size = rng.randint(1, 8)
        steps.append("".join(tokens[at : at + size]))
        at += size
        if rng.random() < 0.05:
            steps.append("")
    return steps


def _pieces(text: str, rng: random.Random, largest: int) -> list[str]:
    steps: list[str] = []
    at = 0
    while at < len(text):
        size = rng.randint(1, largest)
        steps.append(text[at : at + size])
        at += size
    return steps


def every_split(text: str) -> list[list[str]]:
    """``text`` whole, one character per step, and cut at every one and every two of
    its offsets (for a short text: quadratic in its length)."""
    out = [[text], list(text)]
    inner = range(1, len(text))
    for cuts in itertools.chain(itertools.combinations(inner, 1), itertools.combinations(inner, 2)):
        bounds = (0, *cuts, len(text))
        out.append([text[a:b] for a, b in itertools.pairwise(bounds)])
    return out
