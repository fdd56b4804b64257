"""The hf corpus replayed under many seeded random splits, with the contract checker.

``TOOLCALL_SPLITS`` sets the total number of splits over the whole corpus (default 2000,
CI-sized; ``nox -s "splits(hf_response_template)"`` runs 100,000). Each case gets an equal
share of the kit's seeded random splits (:func:`toolcall_conformance.splits.random_splits`): token
groups with empty steps, character cuts anywhere, tiny pieces. Each split must reassemble to
the one-shot parse, which must be the case's expected parse, under the contract checker.
"""

from __future__ import annotations

import math
import os

import pytest

from toolcall.contract import check_splits
from toolcall_conformance.cases import Case, load_cases, shipped_case_dirs
from toolcall_conformance.checks import build_parser
from toolcall_conformance.compare import first_difference
from toolcall_conformance.splits import random_splits
from toolcall_hf_response_template import HfParser

CASES, _ = load_cases(shipped_case_dirs("hf"))
TOTAL = int(os.environ.get("TOOLCALL_SPLITS", "2000"))
PER_CASE = math.ceil(TOTAL / max(len(CASES), 1))

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_random_splits_keep_the_contract(case: Case) -> None:
    parser = build_parser(HfParser, case)
    assert first_difference(case.expected, parser.parse(case.text)) is None
    chosen = random_splits(case, PER_CASE)
    assert len(chosen) == PER_CASE
    violations = check_splits(parser, case.text, chosen, promptness=not case.expected.recoveries)
    assert violations == [], "\n".join(map(str, violations[:10]))


def test_the_splits_add_up_to_the_total() -> None:
    assert len(CASES) * PER_CASE >= TOTAL
