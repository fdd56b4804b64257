"""The Mistral corpus replayed under many seeded random splits, with the delta contract checker.

``TOOLCALL_SPLITS`` sets the total number of splits over the whole corpus (default 2000,
CI-friendly; the ``splits(mistral)`` nox session runs 100,000). Every split must reassemble to
the case's expected parse and keep clauses 1-6 of the delta contract. Half the splits group the
real tokens (1 to 8 per step, as an engine with a stream interval or speculative decoding
releases them); the other half cut the text anywhere, inside tokens and markers included.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from toolcall.contract import check_splits
from toolcall_conformance.cases import load_cases, shipped_case_dirs
from toolcall_conformance.checks import build_parser
from toolcall_conformance.compare import first_difference
from toolcall_mistral import MistralParser

TOTAL = int(os.environ.get("TOOLCALL_SPLITS", "2000"))
BATCH = 500


def corpus() -> list[Any]:
    cases, errors = load_cases(shipped_case_dirs("mistral"))
    assert errors == []
    return cases


CASES = corpus()
PER_CASE = max(1, -(-TOTAL // len(CASES)))


def splits(case: Any, count: int) -> Iterator[Sequence[str]]:
    rng = random.Random(f"mistral-splits:{case.id}")
    tokens = [step.text for step in case.steps]
    text = case.text
    for number in range(count):
        pieces = tokens if number % 2 == 0 else text
        largest = 8 if number % 2 == 0 else 24
        steps, position = [], 0
        while position < len(pieces):
            size = rng.randint(1, largest)
            steps.append("".join(pieces[position : position + size]))
            position += size
        yield steps


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_random_splits_keep_the_contract(case: Any) -> None:
    parser = build_parser(MistralParser, case)
    reference = parser.parse(case.text)
    assert first_difference(case.expected, reference) is None
    promptness = not case.expected.recoveries
    generator = splits(case, PER_CASE)
    checked = 0
    while checked < PER_CASE:
        batch = [next(generator) for _ in range(min(BATCH, PER_CASE - checked))]
        violations = check_splits(parser, case.text, batch, promptness=promptness)
        assert violations == [], "\n".join(str(v) for v in violations[:5])
        checked += len(batch)
    assert checked == PER_CASE
