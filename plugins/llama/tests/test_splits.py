"""The Llama corpora replayed under many seeded random splits, with the contract checker.

``TOOLCALL_SPLITS`` sets the number of splits per parser name, over its whole corpus
(default 2000, CI-sized; ``nox -s "splits(llama)"`` runs 100,000 per name), shared
equally by its cases (``toolcall_conformance.splits`` says which kinds).
"""

from __future__ import annotations

import math
import os

import pytest

from toolcall import Parser, ParserContext, Vocabulary
from toolcall.contract import check_splits
from toolcall_conformance.cases import Case, load_cases, shipped_case_dirs
from toolcall_conformance.splits import random_splits
from toolcall_llama import Llama3JsonParser, Llama4JsonParser, Llama4PythonicParser

PARSERS: dict[str, type[Parser]] = {
    "llama3_json": Llama3JsonParser,
    "llama4_json": Llama4JsonParser,
    "llama4_pythonic": Llama4PythonicParser,
}
CORPORA = {name: load_cases(shipped_case_dirs(name))[0] for name in PARSERS}
CASES = [(case, PARSERS[name]) for name, cases in CORPORA.items() for case in cases]
TOTAL = int(os.environ.get("TOOLCALL_SPLITS", "2000"))

pytestmark = pytest.mark.slow


def per_case(parser_class: type[Parser]) -> int:
    return math.ceil(TOTAL / max(len(CORPORA[parser_class.name]), 1))


@pytest.mark.parametrize(("case", "parser_class"), CASES, ids=[case.id for case, _ in CASES])
def test_random_splits_keep_the_contract(case: Case, parser_class: type[Parser]) -> None:
    parser = parser_class(
        ParserContext(
            request=case.request_view(),
            vocabulary=Vocabulary(special_tokens=dict(case.special_tokens)),
        )
    )
    chosen = random_splits(case, per_case(parser_class))
    violations = check_splits(parser, case.text, chosen, promptness=not case.expected.recoveries)
    assert violations == [], "\n".join(map(str, violations[:10]))


@pytest.mark.parametrize("name", list(PARSERS))
def test_each_name_gets_its_total(name: str) -> None:
    assert len(CORPORA[name]) * per_case(PARSERS[name]) >= TOTAL
