"""Seeded random splits of a case's output, for a family's ``splits`` session.

:func:`seeded_splits` draws ``count`` splits of a case's output, each seeded by the case id
and its number (a failure names a split that replays), of three kinds:

* groups of 1 to 8 of the case's real tokens per step (what an engine with speculative
  decoding or ``stream_interval > 1`` hands the parser), with empty steps mixed in (vLLM
  sends those while a multi-byte character is incomplete);
* random character cuts anywhere, also inside a marker or a multi-byte character's token;
* tiny pieces of 1 to 3 characters.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolcall_conformance.cases import Case

__all__ = ["seeded_splits"]


def _token_groups(tokens: list[str], rng: random.Random) -> list[str]:
    steps, at = [], 0
    while at < len(tokens):
        size = rng.randint(1, 8)
        steps.append("".join(tokens[at : at + size]))
        at += size
        if rng.random() < 0.05:
            steps.append("")
    return steps


def _cuts(text: str, rng: random.Random, largest: int) -> list[str]:
    steps, at = [], 0
    while at < len(text):
        size = rng.randint(1, largest)
        steps.append(text[at : at + size])
        at += size
    return steps


def seeded_splits(case: Case, count: int) -> list[list[str]]:
    """``count`` splits of ``case``'s output (half token groups, half character cuts)."""
    tokens = [step.text for step in case.steps]
    out = []
    for number in range(count):
        rng = random.Random(f"{case.id}#split{number}")
        kind = number % 10
        if kind < 5:
            out.append(_token_groups(tokens, rng))
        elif kind < 8:
            out.append(_cuts(case.text, rng, rng.randint(2, 24)))
        else:
            out.append(_cuts(case.text, rng, 3))
    return out
