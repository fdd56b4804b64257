"""The Python-call corpus under many seeded random splits, checked by the contract checker.

``TOOLCALL_SPLITS`` is the number of splits over the whole corpus (default 2000; the
``splits(pythonic)`` nox session runs 100,000), shared equally by the cases. A split is
one of three shapes, chosen and seeded per split from the case id:

* the case's real tokens in runs of 1 to 6 (an engine with speculative decoding), with an
  empty step now and then (vLLM sends those while a character is incomplete);
* cuts anywhere in the text, 1 to 16 characters apart (inside a marker, an escape, a
  number);
* single characters.

Every split must add up to the case's expected parse and keep clauses 1 to 6.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Iterator

import pytest

from toolcall.contract import check_splits
from toolcall_conformance.cases import Case, load_cases, shipped_case_dirs
from toolcall_conformance.checks import build_parser
from toolcall_conformance.compare import first_difference
from toolcall_pythonic import Olmo3Parser, PythonicParser

PARSERS = {"pythonic": PythonicParser, "olmo3": Olmo3Parser}
CASES, ERRORS = load_cases(shipped_case_dirs("pythonic") + shipped_case_dirs("olmo3"))
TOTAL = int(os.environ.get("TOOLCALL_SPLITS", "2000"))
EACH = math.ceil(TOTAL / max(len(CASES), 1))
CHUNK = 400  # splits checked per call of the checker (bounded memory)


def one_split(case: Case, number: int) -> list[str]:
    rng = random.Random(f"pythonic-splits/{case.id}/{number}")
    shape = rng.randrange(3)
    if shape == 2:
        return list(case.text)
    pieces: list[str] = []
    if shape == 0:
        tokens = [step.text for step in case.steps]
        while tokens:
            take = rng.randint(1, 6)
            pieces.append("".join(tokens[:take]))
            del tokens[:take]
            if rng.random() < 0.05:
                pieces.append("")
        return pieces
    text = case.text
    while text:
        take = rng.randint(1, 16)
        pieces.append(text[:take])
        text = text[take:]
    return pieces


def batches(case: Case) -> Iterator[list[list[str]]]:
    for first in range(0, EACH, CHUNK):
        yield [one_split(case, number) for number in range(first, min(EACH, first + CHUNK))]


def test_the_corpus_loads() -> None:
    assert ERRORS == []
    assert CASES


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_splits_keep_the_contract(case: Case) -> None:
    parser = build_parser(PARSERS[case.parser], case)
    assert first_difference(case.expected, parser.parse(case.text)) is None
    promptness = not case.expected.recoveries
    checked = 0
    for batch in batches(case):
        violations = check_splits(parser, case.text, batch, promptness=promptness)
        assert violations == [], "\n".join(map(str, violations[:5]))
        checked += len(batch)
    assert checked == EACH
