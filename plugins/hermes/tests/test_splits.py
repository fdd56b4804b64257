"""The Hermes corpus replayed under many seeded random splits, with the contract checker.

``TOOLCALL_SPLITS`` sets the total number of splits over the whole corpus (default 2000,
CI-sized; ``nox -s splits`` runs 100,000). Each case gets an equal share, drawn from three
kinds of split, all seeded by the case id so that a failure names a split that replays:

* groups of 1 to 8 of the case's real tokens per step (what an engine with speculative
  decoding or ``stream_interval > 1`` hands the parser), with empty steps mixed in (vLLM
  sends those while a multi-byte character is incomplete);
* random character cuts anywhere, also inside a marker or a multi-byte character's token;
* tiny pieces of 1 to 3 characters.
"""

from __future__ import annotations

import math
import os
import random

import pytest

from toolcall import ParserContext, Vocabulary
from toolcall.contract import check_splits
from toolcall_conformance.cases import Case, load_cases, shipped_case_dirs
from toolcall_hermes import HermesParser

CASES, _ = load_cases(shipped_case_dirs("hermes"))
TOTAL = int(os.environ.get("TOOLCALL_SPLITS", "2000"))
PER_CASE = math.ceil(TOTAL / max(len(CASES), 1))

pytestmark = pytest.mark.slow


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


def splits(case: Case, count: int) -> list[list[str]]:
    tokens = [step.text for step in case.steps]
    text = case.text
    out = []
    for number in range(count):
        rng = random.Random(f"{case.id}#split{number}")
        kind = number % 10
        if kind < 5:
            out.append(_token_groups(tokens, rng))
        elif kind < 8:
            out.append(_cuts(text, rng, rng.randint(2, 24)))
        else:
            out.append(_cuts(text, rng, 3))
    return out


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_random_splits_keep_the_contract(case: Case) -> None:
    parser = HermesParser(
        ParserContext(
            request=case.request_view(),
            vocabulary=Vocabulary(special_tokens=dict(case.special_tokens)),
        )
    )
    chosen = splits(case, PER_CASE)
    assert len(chosen) == PER_CASE
    violations = check_splits(parser, case.text, chosen, promptness=not case.expected.recoveries)
    assert violations == [], "\n".join(map(str, violations[:10]))


def test_the_splits_add_up_to_the_total() -> None:
    assert len(CASES) * PER_CASE >= TOTAL
