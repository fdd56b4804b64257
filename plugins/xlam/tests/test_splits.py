"""The xlam corpus replayed under seeded random splits, with the contract checker.

``TOOLCALL_SPLITS`` sets the total number of splits over the corpus (default 2000). Each
split must reassemble to the one-shot parse, which must be the case's expected parse.
"""

from __future__ import annotations

import math
import os

import pytest

from toolcall import Registry
from toolcall.contract import check_splits
from toolcall_conformance.cases import Case, load_cases, shipped_case_dirs
from toolcall_conformance.checks import build_parser
from toolcall_conformance.compare import first_difference
from toolcall_conformance.splits import random_splits

CASES, _ = load_cases(shipped_case_dirs("xlam"))
TOTAL = int(os.environ.get("TOOLCALL_SPLITS", "2000"))
PER_CASE = math.ceil(TOTAL / max(len(CASES), 1))
XLAM = Registry.load({}).get("xlam")

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_random_splits_keep_the_contract(case: Case) -> None:
    parser = build_parser(XLAM, case)
    assert first_difference(case.expected, parser.parse(case.text)) is None
    chosen = random_splits(case, PER_CASE)
    assert len(chosen) == PER_CASE
    violations = check_splits(parser, case.text, chosen, promptness=not case.expected.recoveries)
    assert violations == [], "\n".join(map(str, violations[:10]))


def test_the_splits_add_up_to_the_total() -> None:
    assert len(CASES) * PER_CASE >= TOTAL
